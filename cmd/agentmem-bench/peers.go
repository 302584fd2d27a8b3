package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
)

// The peer harness (a Node project outside this repository) runs other systems on the same
// workloads: see docs/benchmarks.md. The bench runs it from a copy in a cache directory, with
// its locked dependencies installed there by `npm ci`, never from inside the harness directory.

// peerScripts are the harness's scripts per peer.
var peerScripts = map[string]string{
	bench.PeerChatHistory:  "p1_langchain_history.mjs",
	bench.PeerStore:        "p2_langgraph_store.mjs",
	bench.PeerCheckpointer: "p4_langgraph_checkpointer.mjs",
}

// allPeers are the peers the bench knows, in the order they run.
var allPeers = []string{bench.PeerChatHistory, bench.PeerStore, bench.PeerCheckpointer}

// DefaultPeers are the peers run when none are named: those the targets compare with (the
// checkpointer takes several minutes a run at full size).
var DefaultPeers = []string{bench.PeerChatHistory, bench.PeerStore}

// The harness connects to this server (PG in its lib/common.mjs), as user postgres with the
// password of $PGPASSWORD.
const (
	harnessHost = "127.0.0.1"
	harnessPort = "54322"
	harnessUser = "postgres"
)

// markerPrefix starts the comment a loaded peer database carries, for -peers-reuse.
const markerPrefix = "agentmem-bench peer load "

// PeersConfig is the side-by-side part of a run.
type PeersConfig struct {
	// Dir is the harness directory; empty runs no peer.
	Dir string
	// Set are the peers to run (bench.PeerChatHistory, ...).
	Set []string
	// Reuse keeps the peers' databases after the run and reuses one loaded earlier with the
	// same harness and sizes instead of loading it again.
	Reuse bool
	// CacheDir holds the harness copies with their node_modules.
	CacheDir string
}

// DefaultPeerCacheDir is where harness copies go by default: the user's cache directory.
func DefaultPeerCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "agentmem-bench")
	}
	return filepath.Join(os.TempDir(), "agentmem-bench-cache")
}

// harness is a prepared copy of the peer harness.
type harness struct {
	cfg      Config
	dir      string // the directory given
	copy     string // where it runs from
	hash     string
	node     string
	password string
	out      string // cfg.OutDir/peers: the harness's JSON and logs
	peers    []string
	info     map[string]*bench.PeerInfo
}

// peersFor are the peers of set that the run's workloads compare with.
func peersFor(cfg Config) []string {
	var out []string
	for _, p := range cfg.Peers.Set {
		switch p {
		case bench.PeerChatHistory, bench.PeerCheckpointer:
			if cfg.runs("w1") || cfg.runs("w2") || cfg.runs("w2growth") {
				out = append(out, p)
			}
		case bench.PeerStore:
			if cfg.runs("w3") {
				out = append(out, p)
			}
		}
	}
	return out
}

// prepareHarness checks the harness, the tools and the server, copies the harness into the
// cache (once per version of its files) and installs its dependencies there.
func prepareHarness(ctx context.Context, cfg Config) (*harness, error) {
	dir, err := filepath.Abs(cfg.Peers.Dir)
	if err != nil {
		return nil, err
	}
	// The scripts run in the copy: the paths they are given must not be relative.
	out, err := filepath.Abs(filepath.Join(cfg.OutDir, "peers"))
	if err != nil {
		return nil, err
	}
	h := &harness{cfg: cfg, dir: dir, out: out, peers: peersFor(cfg), info: map[string]*bench.PeerInfo{}}
	for _, f := range []string{"package.json", "package-lock.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("-peers %s: no %s: not the peer harness", cfg.Peers.Dir, f)
		}
	}
	for _, p := range h.peers {
		if _, err := os.Stat(filepath.Join(dir, peerScripts[p])); err != nil {
			return nil, fmt.Errorf("-peers %s: no %s for peer %s", cfg.Peers.Dir, peerScripts[p], p)
		}
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("-peers needs %s on PATH (Node.js 20 or later): %w", tool, err)
		}
	}
	version, err := exec.CommandContext(ctx, "node", "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("node --version: %w", err)
	}
	h.node = strings.TrimSpace(string(version))
	if h.password, err = harnessPassword(cfg.ServerURL); err != nil {
		return nil, err
	}
	if h.hash, err = hashTree(dir); err != nil {
		return nil, fmt.Errorf("read the harness: %w", err)
	}
	if h.copy, err = installHarness(ctx, cfg, dir, h.hash); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(h.out, 0o755); err != nil {
		return nil, err
	}
	return h, nil
}

// harnessPassword checks that serverURL names the server the harness connects to, and returns
// its password for $PGPASSWORD.
func harnessPassword(serverURL string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", fmt.Errorf("-database-url: %w", err)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "5432"
	}
	if (host != harnessHost && host != "localhost") || port != harnessPort || u.User.Username() != harnessUser {
		return "", fmt.Errorf("the peer harness connects to %s@%s:%s (PG in its lib/common.mjs); the bench's server is %s: run both against the same server",
			harnessUser, harnessHost, harnessPort, redact(serverURL))
	}
	pw, _ := u.User.Password()
	return pw, nil
}

// hashTree hashes the harness's files (not node_modules or results), so that a changed
// harness gets a fresh copy.
func hashTree(dir string) (string, error) {
	sum := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if rel == "node_modules" || rel == "results" || rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(sum, "%s\x00%d\x00", filepath.ToSlash(rel), len(b))
		sum.Write(b)
		return nil
	})
	return hex.EncodeToString(sum.Sum(nil)), err
}

// installHarness returns the cached copy of the harness with this hash, making it first when
// missing: the files are copied (without node_modules and results) into a new directory,
// `npm ci` installs the locked dependencies, and the directory is renamed into place.
func installHarness(ctx context.Context, cfg Config, dir, hash string) (string, error) {
	dst := filepath.Join(cfg.Peers.CacheDir, "peers-"+hash[:16])
	if _, err := os.Stat(filepath.Join(dst, "node_modules", ".package-lock.json")); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(cfg.Peers.CacheDir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cfg.Peers.CacheDir, "peers-install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if rel == "node_modules" || rel == "results" || rel == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(tmp, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, rel), b, 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("copy the harness: %w", err)
	}
	cfg.logf("peers: npm ci in %s", tmp)
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = tmp
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm ci in the harness copy: %w\n%s", err, tail(log.String(), 2000))
	}
	if err := os.Rename(tmp, dst); err != nil {
		// Another run installed it meanwhile.
		if _, statErr := os.Stat(filepath.Join(dst, "node_modules", ".package-lock.json")); statErr == nil {
			return dst, nil
		}
		return "", err
	}
	return dst, nil
}

// peerDatabase is the database a peer's script uses for this run (the harness wants names
// starting with peer_): one per peer and bench database, so that runs with different -db do
// not share.
func peerDatabase(peer, benchDB string) string {
	return "peer_" + peer + "_" + notNameChar.ReplaceAllString(strings.ToLower(benchDB), "_")
}

// notNameChar is what the harness does not take in a database name.
var notNameChar = regexp.MustCompile(`[^a-z0-9_]`)

// loadArgs are a peer's arguments that define its data; sizeArgs are its measured sizes.
func loadArgs(peer string, sz bench.Sizes) []string {
	switch peer {
	case bench.PeerStore:
		return []string{"--users", strconv.Itoa(sz.Users), "--per-user", strconv.Itoa(sz.MemoriesPerUser)}
	case bench.PeerChatHistory:
		return []string{"--sessions", strconv.Itoa(sz.Sessions), "--msgs", strconv.Itoa(sz.MessagesPerSession), "--variants", "index"}
	}
	return []string{"--sessions", strconv.Itoa(sz.Sessions), "--msgs", strconv.Itoa(sz.MessagesPerSession)}
}

func sizeArgs(peer string, sz bench.Sizes) []string {
	if peer == bench.PeerStore {
		return []string{"--queries", strconv.Itoa(sz.Queries), "--warmup", strconv.Itoa(sz.WarmupQueries)}
	}
	return []string{"--turns", strconv.Itoa(sz.Turns), "--reads", strconv.Itoa(sz.Reads),
		"--growth-reads", strconv.Itoa(sz.GrowthReads), "--warmup", strconv.Itoa(sz.Warmup)}
}

// emptyArgs measure as little as the script allows, for a load on its own (P2 plans its first
// query, so it asks one).
func emptyArgs(peer string) []string {
	if peer == bench.PeerStore {
		return []string{"--queries", "1", "--warmup", "0"}
	}
	return []string{"--turns", "0", "--reads", "0", "--growth-reads", "0", "--warmup", "0"}
}

// marker is the comment on a loaded peer database.
type marker struct {
	Harness string   `json:"harness"`
	Args    []string `json:"args"`
	Runs    int      `json:"runs"`
}

func (h *harness) marker(ctx context.Context, db string) (*marker, error) {
	c, err := pgx.Connect(ctx, h.cfg.ServerURL)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	var comment *string
	err = c.QueryRow(ctx, "select shobj_description(oid, 'pg_database') from pg_database where datname = $1", db).Scan(&comment)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if comment == nil || !strings.HasPrefix(*comment, markerPrefix) {
		return nil, nil
	}
	var m marker
	if err := json.Unmarshal([]byte(strings.TrimPrefix(*comment, markerPrefix)), &m); err != nil {
		return nil, nil
	}
	return &m, nil
}

func (h *harness) setMarker(ctx context.Context, db string, m marker) error {
	c, err := pgx.Connect(ctx, h.cfg.ServerURL)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	b, _ := json.Marshal(m)
	_, err = c.Exec(ctx, "comment on database "+pgx.Identifier{db}.Sanitize()+" is "+quoteLiteral(markerPrefix+string(b)))
	return err
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// load loads every peer's database with the harness (or reuses one already loaded with the
// same harness and sizes, with -peers-reuse), then checkpoints, so that no load's writes are
// still being flushed while anything is measured.
func (h *harness) load(ctx context.Context) error {
	sz := h.cfg.Sizes
	for _, p := range h.peers {
		db := peerDatabase(p, h.cfg.Database)
		info := &bench.PeerInfo{ID: p, Name: bench.PeerNames[p], Script: peerScripts[p], Database: db}
		h.info[p] = info
		args := loadArgs(p, sz)
		if h.cfg.Peers.Reuse {
			m, err := h.marker(ctx, db)
			if err != nil {
				return err
			}
			if m != nil && m.Harness == h.hash && slices.Equal(m.Args, args) {
				info.Reused, info.RunsBefore = true, m.Runs
				h.cfg.logf("peers: %s reuses database %s (loaded earlier, %d runs since)", p, db, m.Runs)
				continue
			}
		}
		h.cfg.logf("peers: %s loads database %s", p, db)
		t := time.Now()
		doc, err := h.script(ctx, p, "load", slices.Concat(args, emptyArgs(p), []string{"--conc", strconv.Itoa(sz.Clients)}))
		if err != nil {
			return err
		}
		info.LoadSeconds = time.Since(t).Seconds()
		info.Versions = doc.Versions
		if err := h.setMarker(ctx, db, marker{Harness: h.hash, Args: args}); err != nil {
			return fmt.Errorf("mark %s as loaded: %w", db, err)
		}
		h.cfg.logf("peers: %s loaded in %.1fs", p, info.LoadSeconds)
	}
	c, err := pgx.Connect(ctx, h.cfg.ServerURL)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "checkpoint")
	return err
}

// measure runs every peer's workloads on its loaded database, for run number run (from 1).
func (h *harness) measure(ctx context.Context, run int) (bench.PeerRun, []string) {
	var pr bench.PeerRun
	var notes []string
	sz := h.cfg.Sizes
	for _, p := range h.peers {
		h.cfg.logf("peers: %s, run %d", p, run)
		args := slices.Concat(loadArgs(p, sz), sizeArgs(p, sz), []string{"--conc", strconv.Itoa(sz.Clients), "--skip-load"})
		doc, err := h.script(ctx, p, fmt.Sprintf("run%d", run), args)
		if err != nil {
			notes = append(notes, fmt.Sprintf("peer %s, run %d: %v", p, run, err))
			h.cfg.logf("peers: %s, run %d: %v", p, run, err)
			continue
		}
		if info := h.info[p]; info.Versions == nil {
			info.Versions = doc.Versions
		}
		switch p {
		case bench.PeerChatHistory:
			pr.P1, err = doc.chat("index")
		case bench.PeerCheckpointer:
			pr.P4, err = doc.chat("default")
		case bench.PeerStore:
			pr.P2, err = doc.recall()
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("peer %s, run %d: %v", p, run, err))
			continue
		}
		db := peerDatabase(p, h.cfg.Database)
		if m, err := h.marker(ctx, db); err == nil && m != nil {
			m.Runs++
			if err := h.setMarker(ctx, db, *m); err != nil {
				h.cfg.logf("peers: mark %s: %v", db, err)
			}
		}
	}
	return pr, notes
}

// script runs one harness script from the copy; its JSON and log go to the run's peers/
// directory as <peer>-<tag>.json and .log.
func (h *harness) script(ctx context.Context, peer, tag string, args []string) (*harnessDoc, error) {
	db := peerDatabase(peer, h.cfg.Database)
	out := filepath.Join(h.out, peer+"-"+tag+".json")
	logPath := filepath.Join(h.out, peer+"-"+tag+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	full := append([]string{peerScripts[peer]}, args...)
	full = append(full, "--db", db, "--out", out)
	fmt.Fprintf(logf, "$ node %s\n", strings.Join(full, " "))
	cmd := exec.CommandContext(ctx, "node", full...)
	cmd.Dir = h.copy
	cmd.Env = append(os.Environ(), "PGPASSWORD="+h.password)
	// The chat peers' W1 with concurrent clients (warm-up and measured turns) runs between
	// their lines "W1 seq" and "W1 conc"; its CPU is read there.
	cpu := newCPUSampler(h.cfg.serverCPU.For(db), "W1 seq", "W1 conc")
	cmd.Stdout, cmd.Stderr = io.MultiWriter(logf, cpu), logf
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Start()
	if err == nil {
		cpu.Start(cmd.Process.Pid, 50*time.Millisecond)
		err = cmd.Wait()
		cpu.Stop()
	}
	if err != nil {
		b, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("node %s (%s): %w\n%s", peerScripts[peer], tag, err, tail(string(b), 1500))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	var doc harnessDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("read %s: %w", out, err)
	}
	if peer != bench.PeerStore {
		doc.w1ConcurrentCPU = cpu.Between("W1 seq", "W1 conc", h.cfg.Sizes.Warmup+h.cfg.Sizes.Turns)
	}
	return &doc, nil
}

// drop drops the peers' databases, unless they are kept (-keep) or reused (-peers-reuse).
func (h *harness) drop() {
	if h.cfg.Keep || h.cfg.Peers.Reuse {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, h.cfg.ServerURL)
	if err != nil {
		h.cfg.logf("peers: drop databases: %v", err)
		return
	}
	defer c.Close(ctx)
	for _, p := range h.peers {
		if _, err := c.Exec(ctx, "drop database if exists "+pgx.Identifier{peerDatabase(p, h.cfg.Database)}.Sanitize()+" with (force)"); err != nil {
			h.cfg.logf("peers: drop database of %s: %v", p, err)
		}
	}
}

func (h *harness) results(runs []bench.PeerRun) *bench.Peers {
	pe := &bench.Peers{Harness: h.dir, Copy: h.copy, Node: h.node, Runs: runs}
	for _, p := range h.peers {
		pe.Peers = append(pe.Peers, *h.info[p])
	}
	return pe
}

// harnessDoc is the JSON a harness script writes (the parts the bench reads).
type harnessDoc struct {
	Peer     string                     `json:"peer"`
	Versions map[string]string          `json:"versions"`
	Results  map[string]json.RawMessage `json:"results"`
	// w1ConcurrentCPU is what the chat peer's concurrent W1 cost, read while it ran.
	w1ConcurrentCPU *bench.CPUCost
}

// harnessSummary is the harness's summary of a phase (NaN percentiles are written as null).
type harnessSummary struct {
	N         int      `json:"n"`
	OpsPerSec *float64 `json:"opsPerSec"`
	P50       *float64 `json:"p50"`
	P90       *float64 `json:"p90"`
	P99       *float64 `json:"p99"`
	Mean      *float64 `json:"mean"`
	Max       *float64 `json:"max"`
}

func (s harnessSummary) summary(what string) (bench.PeerSummary, error) {
	if s.N == 0 || s.OpsPerSec == nil || s.P50 == nil || s.P90 == nil || s.P99 == nil {
		return bench.PeerSummary{}, fmt.Errorf("the harness measured no %s", what)
	}
	v := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	return bench.PeerSummary{N: s.N, OpsPerSec: *s.OpsPerSec, P50MS: *s.P50, P90MS: *s.P90, P99MS: *s.P99, MeanMS: v(s.Mean), MaxMS: v(s.Max)}, nil
}

func (d *harnessDoc) chat(variant string) (*bench.PeerChat, error) {
	raw, ok := d.Results[variant]
	if !ok {
		return nil, fmt.Errorf("no results.%s in the harness's output", variant)
	}
	var v struct {
		W1Seq  harnessSummary            `json:"w1_seq"`
		W1Conc harnessSummary            `json:"w1_conc"`
		W2     harnessSummary            `json:"w2"`
		Growth map[string]harnessSummary `json:"w2_growth"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	var c bench.PeerChat
	var err error
	if c.W1Sequential, err = v.W1Seq.summary("W1 sequential phase"); err != nil {
		return nil, err
	}
	if c.W1Concurrent, err = v.W1Conc.summary("W1 concurrent phase"); err != nil {
		return nil, err
	}
	c.W1ConcurrentCPU = d.w1ConcurrentCPU
	if c.W2, err = v.W2.summary("W2"); err != nil {
		return nil, err
	}
	for k, s := range v.Growth {
		n, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("W2-growth length %q", k)
		}
		ps, err := s.summary("W2-growth at " + k)
		if err != nil {
			return nil, err
		}
		c.Growth = append(c.Growth, bench.PeerGrowthPoint{Length: n, Phase: ps})
	}
	slices.SortFunc(c.Growth, func(a, b bench.PeerGrowthPoint) int { return a.Length - b.Length })
	return &c, nil
}

func (d *harnessDoc) recall() (*bench.PeerRecall, error) {
	var r bench.PeerRecall
	var seq, conc harnessSummary
	for key, dst := range map[string]any{"w3_seq": &seq, "w3_conc": &conc, "recallAt10": &r.RecallAt10, "hnswUsed": &r.HNSWUsed} {
		raw, ok := d.Results[key]
		if !ok {
			return nil, fmt.Errorf("no results.%s in the harness's output", key)
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return nil, fmt.Errorf("results.%s: %w", key, err)
		}
	}
	var err error
	if r.Sequential, err = seq.summary("W3 sequential phase"); err != nil {
		return nil, err
	}
	if r.Concurrent, err = conc.summary("W3 concurrent phase"); err != nil {
		return nil, err
	}
	return &r, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
