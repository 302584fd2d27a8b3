// Command agentmem-bench measures agentmem on the standard workloads of shared/WORKLOADS.md
// (W1 commit, W2 context and its growth variant, W3 recall, W4 sweep, W5 end to end, W6
// start-up), and recall by source for a user with many memories and messages (W3-sources),
// against a PostgreSQL server, scores recall's ranking on labelled questions about memories
// and about long conversations, beside a BM25 baseline (quality), pages and clears one user's history across sessions (history),
// reads through a streaming read replica when given one (replica, with -replica-url), and
// writes bench-results/<timestamp>/results.json, results.md and PNG
// charts.
//
//	agentmem-bench [-quick] [-large] [-only w1,w2,...] [-database-url URL] [-replica-url URL]
//	               [-out DIR] [-keep] [-runs N] [-peers DIR [-peer-set p1,p2,p4] [-peers-reuse]]
//
// With -peers it also runs the peer harness (a Node project outside this repository that runs
// other systems on the same workloads) against the same server, after agentmem's workloads in
// every run, and reports agentmem / peer ratios; with -runs N the compared workloads (W1, W2,
// W2-growth, W3) run N times and the ratios are medians.
//
// It creates its own database (default agentmem_bench) on the server named by -database-url
// (default: $DATABASE_URL, else the local stack's postgresql://postgres:postgres@127.0.0.1:54322),
// which must be a superuser URL: the data is bulk-loaded with COPY. The database is dropped at
// the end unless -keep is given.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/schema"
)

// The workloads, as -only names them.
var allWorkloads = []string{"w1", "w2", "w2growth", "w3", "w3sources", "words", "w4", "w5", "w6", "quality", "history", "outbox", "cache", "replica"}

// Config is one benchmark run.
type Config struct {
	// Mode names the sizes: "full", "quick" or "tiny" (the test's).
	Mode string
	// ServerURL is a superuser URL of the server; its database part is replaced by Database.
	ServerURL string
	// Database is the name of the bench database; it is dropped and created again.
	Database string
	// Keep leaves the database in place after the run.
	Keep bool
	// OutDir receives results.json, results.md and the charts.
	OutDir string
	// Only runs these workloads (allWorkloads names); empty runs them all.
	Only map[string]bool
	// Large also runs W3 at Sizes.LargeUsers users.
	Large bool
	// Repo is the repository root, where W6 builds the binaries.
	Repo string
	// DeployBuild builds W6's binaries with the flags of a deployment (-tags
	// lambda.norpc,grpcnotrace -trimpath -ldflags=-s -w, CGO_ENABLED=0); otherwise plain go
	// build, which reuses the test build cache.
	DeployBuild bool
	// Partitions is the number of partitions of each user-owned table (agentmem.partition_by_user);
	// 1, the default, leaves them as the migrations make them.
	Partitions int
	// Runs is how many times the compared workloads (W1, W2, W2-growth, W3) run, with the
	// peers after each; the other workloads run once.
	Runs int
	// Peers is the side-by-side part (off when Peers.Dir is empty).
	Peers PeersConfig
	// serverCPU reads the database server's CPU time when it runs on this machine.
	serverCPU *serverCPU
	// SourcesVectors are the kinds of texts W3-sources runs with, in turn (bench.VectorsRandom,
	// bench.VectorsClustered).
	SourcesVectors []string
	// ReplicaURL is a superuser URL of a streaming replica of ServerURL's server, for the
	// replica workload (which runs only with it); its database part is replaced by Database.
	ReplicaURL string
	// Log receives progress lines.
	Log   io.Writer
	Sizes bench.Sizes

	started time.Time
}

func (c Config) runs(w string) bool { return len(c.Only) == 0 || c.Only[w] }

// runsReplica reports whether the replica workload runs: asked for, with a replica to read.
func (c Config) runsReplica() bool { return c.runs("replica") && c.ReplicaURL != "" }

func (c Config) logf(format string, a ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "bench: [%5.1fs] %s\n", time.Since(c.started).Seconds(), fmt.Sprintf(format, a...))
	}
}

// SizesFor returns the sizes of a mode.
func SizesFor(mode string) (bench.Sizes, error) {
	switch mode {
	case "full":
		return bench.Sizes{
			Sessions: 2000, MessagesPerSession: 200,
			GrowthLengths: []int{20, 200, 2000, 10000}, GrowthPerLength: 3, GrowthReads: 100,
			Users: 1000, MemoriesPerUser: 100, LargeUsers: 10000, Queries: 500, WarmupQueries: 50,
			Turns: 2000, Reads: 2000, Warmup: 50, Clients: 8,
			SweepExpired: 1_000_000, SweepLive: 1_000_000, SweepBatch: 5000, SweepBaseline: 2000,
			W5Clients: 16, W5Seconds: 30, W6Runs: 5, QualityCopies: 10, QualityConversations: len(bench.Conversations()), SourcesRows: 100_000, SourcesQueries: 200, WordsMessages: 6000, OutageSeconds: 60,
			HistoryMessages: 100_000, HistorySessions: 1000, HistoryReads: 500,
		}, nil
	case "quick":
		return bench.Sizes{
			Sessions: 50, MessagesPerSession: 200,
			GrowthLengths: []int{20, 200, 2000, 10000}, GrowthPerLength: 3, GrowthReads: 100,
			Users: 50, MemoriesPerUser: 100, LargeUsers: 500, Queries: 500, WarmupQueries: 50,
			Turns: 200, Reads: 200, Warmup: 20, Clients: 8,
			SweepExpired: 50_000, SweepLive: 50_000, SweepBatch: 5000, SweepBaseline: 1000,
			W5Clients: 16, W5Seconds: 5, W6Functions: []string{"commit-turn", "get-context"}, W6Runs: 3,
			QualityCopies: 5, QualityConversations: len(bench.Conversations()), SourcesRows: 5000, SourcesQueries: 100, WordsMessages: 6000, OutageSeconds: 5,
			HistoryMessages: 20_000, HistorySessions: 200, HistoryReads: 100,
		}, nil
	case "tiny":
		return bench.Sizes{
			Sessions: 10, MessagesPerSession: 20,
			GrowthLengths: []int{20, 200}, GrowthPerLength: 3, GrowthReads: 12,
			Users: 10, MemoriesPerUser: 100, LargeUsers: 20, Queries: 20, WarmupQueries: 5,
			Turns: 24, Reads: 24, Warmup: 4, Clients: 8,
			SweepExpired: 3000, SweepLive: 1000, SweepBatch: 500, SweepBaseline: 24,
			W5Clients: 16, W5Seconds: 1, W6Functions: []string{"get-context"}, W6Runs: 1,
			QualityCopies: 2, QualityConversations: 1, SourcesRows: 1000, SourcesQueries: 20, WordsMessages: 300, OutageSeconds: 1,
			HistoryMessages: 2000, HistorySessions: 20, HistoryReads: 24,
		}, nil
	}
	return bench.Sizes{}, fmt.Errorf("unknown mode %q: full, quick or tiny", mode)
}

func main() {
	quick := flag.Bool("quick", false, "small sizes: a smoke run in under two minutes")
	mode := flag.String("mode", "", "sizes: full (default), quick or tiny")
	large := flag.Bool("large", false, "also run W3 at 1,000,000 memories (10,000 users; slow to load)")
	only := flag.String("only", "", "comma-separated workloads to run: "+strings.Join(allWorkloads, ","))
	dbURL := flag.String("database-url", "", "superuser URL of the PostgreSQL server (default $DATABASE_URL, else the local stack)")
	replicaURL := flag.String("replica-url", "", "superuser URL of a streaming replica of that server, for the replica workload (scripts/replica.sh bench starts a pair)")
	dbName := flag.String("db", "agentmem_bench", "name of the database to create for the run (dropped first)")
	keep := flag.Bool("keep", false, "keep the bench database after the run")
	out := flag.String("out", "bench-results", "where to write <timestamp>/results.{json,md} and the charts")
	functions := flag.String("functions", "", "comma-separated functions for W6 (default: all; quick: two)")
	runs := flag.Int("w6-runs", 0, "start-ups per binary in W6 (default 5; quick 3)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	render := flag.String("render", "", "write results.md and the charts again from DIR/results.json, and run nothing")
	plainBuild := flag.Bool("plain-build", false, "build W6's binaries with plain go build rather than the deployment's flags")
	partitions := flag.Int("partitions", 1, "partition each user-owned table by user into this many partitions (USER_PARTITIONS; 1: one table each)")
	nRuns := flag.Int("runs", 1, "run W1, W2, W2-growth and W3 (and the peers) this many times; ratios and targets use the medians")
	peers := flag.String("peers", "", "directory of the peer harness (Node): run it against the same server after agentmem in every run and report agentmem / peer ratios")
	peerSet := flag.String("peer-set", strings.Join(DefaultPeers, ","), "comma-separated peers to run with -peers: "+strings.Join(allPeers, ","))
	peersReuse := flag.Bool("peers-reuse", false, "keep the peers' databases and reuse one loaded earlier with the same harness and sizes")
	sourcesVectors := flag.String("sources-vectors", bench.VectorsRandom+","+bench.VectorsClustered,
		"comma-separated kinds of texts W3-sources runs with: random (nearly orthogonal vectors, the worst case) and clustered (topics and near-duplicates, like a real model's)")
	peersCache := flag.String("peers-cache", DefaultPeerCacheDir(), "where copies of the peer harness and their node_modules go")
	flag.Parse()

	if *render != "" {
		if err := rerender(*render); err != nil {
			fail(err)
		}
		return
	}
	cfg := Config{Mode: "full", Database: *dbName, Keep: *keep, Large: *large, Log: os.Stderr, DeployBuild: !*plainBuild, Runs: *nRuns}
	if cfg.Runs < 1 {
		fail(fmt.Errorf("-runs %d: at least 1", cfg.Runs))
	}
	cfg.Partitions = *partitions
	if cfg.Partitions < 1 || cfg.Partitions > schema.MaxUserPartitions {
		fail(fmt.Errorf("-partitions %d: from 1 to %d", cfg.Partitions, schema.MaxUserPartitions))
	}
	if *peers != "" {
		cfg.Peers = PeersConfig{Dir: *peers, Reuse: *peersReuse, CacheDir: *peersCache}
		for _, p := range strings.Split(*peerSet, ",") {
			p = strings.ToLower(strings.TrimSpace(p))
			if !contains(allPeers, p) {
				fail(fmt.Errorf("-peer-set: unknown peer %q; known: %s", p, strings.Join(allPeers, ",")))
			}
			if !contains(cfg.Peers.Set, p) {
				cfg.Peers.Set = append(cfg.Peers.Set, p)
			}
		}
	}
	for _, v := range strings.Split(*sourcesVectors, ",") {
		v = strings.ToLower(strings.TrimSpace(v))
		if v != bench.VectorsRandom && v != bench.VectorsClustered {
			fail(fmt.Errorf("-sources-vectors: unknown kind %q; known: %s,%s", v, bench.VectorsRandom, bench.VectorsClustered))
		}
		if !contains(cfg.SourcesVectors, v) {
			cfg.SourcesVectors = append(cfg.SourcesVectors, v)
		}
	}
	if *quick {
		cfg.Mode = "quick"
	}
	if *mode != "" {
		cfg.Mode = *mode
	}
	sizes, err := SizesFor(cfg.Mode)
	if err != nil {
		fail(err)
	}
	cfg.Sizes = sizes
	if *functions != "" {
		cfg.Sizes.W6Functions = strings.Split(*functions, ",")
	}
	if *runs > 0 {
		cfg.Sizes.W6Runs = *runs
	}
	if *only != "" {
		cfg.Only = map[string]bool{}
		for _, w := range strings.Split(*only, ",") {
			w = strings.ToLower(strings.TrimSpace(w))
			if !contains(allWorkloads, w) {
				fail(fmt.Errorf("-only: unknown workload %q; known: %s", w, strings.Join(allWorkloads, ",")))
			}
			cfg.Only[w] = true
		}
	}
	cfg.ReplicaURL = *replicaURL
	if cfg.Only["replica"] && cfg.ReplicaURL == "" {
		fail(fmt.Errorf("-only replica needs -replica-url, a streaming replica of the server (scripts/replica.sh bench starts a primary and a replica)"))
	}
	cfg.ServerURL = *dbURL
	if cfg.ServerURL == "" {
		cfg.ServerURL = os.Getenv("DATABASE_URL")
	}
	if cfg.ServerURL == "" {
		cfg.ServerURL = config.LocalDatabaseURL
	}
	if cfg.Repo, err = repoRoot(); err != nil {
		fail(err)
	}
	cfg.OutDir = filepath.Join(*out, time.Now().UTC().Format("20060102T150405Z"))

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := Run(ctx, cfg)
	if err != nil {
		pprof.StopCPUProfile()
		fail(err)
	}
	fmt.Printf("%s", bench.Markdown(res, nil))
	fmt.Fprintf(os.Stderr, "bench: results in %s\n", cfg.OutDir)
}

// rerender writes the report and charts of dir again from its results.json, with the goals
// checked again (the list of goals may have grown since the run).
func rerender(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return err
	}
	var res bench.Results
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("read %s: %w", filepath.Join(dir, "results.json"), err)
	}
	res.Goals = bench.EvaluateGoals(&res)
	res.Comparison = bench.EvaluateComparison(&res)
	return bench.Write(dir, &res)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "agentmem-bench: %v\n", err)
	os.Exit(1)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// repoRoot finds the module's root from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/agentmem/agentmem\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("run from inside the agentmem repository (no go.mod of github.com/agentmem/agentmem above %s)", dir)
		}
		dir = parent
	}
}
