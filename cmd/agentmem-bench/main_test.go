package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/testdb"
)

// TestRunTiny runs every workload at the smallest sizes, through the same code as make bench,
// and checks that results.json holds every figure: present, finite, not negative (the quality
// scores are shares, at most 1). The compared workloads run twice (-runs 2), so the medians are
// reported too. It checks no timing: the machine is shared.
func TestRunTiny(t *testing.T) {
	cfg := tinyConfig(t, testdb.ServerURL(t), 2)
	out, sizes := cfg.OutDir, cfg.Sizes
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	doc := readResults(t, out)

	phase := []string{"clients", "ops", "errors", "seconds", "ops_per_sec", "latency.n", "latency.p50_ms", "latency.p90_ms", "latency.p99_ms"}
	var want []string
	for _, w := range []string{"w1_commit.store", "w1_commit.http"} {
		for _, ph := range []string{"sequential", "concurrent"} {
			for _, f := range phase {
				want = append(want, w+"."+ph+"."+f)
			}
		}
	}
	for _, w := range []string{"w2_context.store", "w2_context.http"} {
		for _, f := range phase {
			want = append(want, w+".sequential."+f)
		}
	}
	for _, w := range []string{"w3_recall.store", "w3_recall.http"} {
		want = append(want, w+".recall_at_10", w+".memories", w+".load_seconds")
		for _, ph := range []string{"sequential", "concurrent"} {
			for _, f := range phase {
				want = append(want, w+"."+ph+"."+f)
			}
		}
	}
	for _, ws := range []string{"w3_sources", "w3_sources_clustered"} {
		for _, mode := range []string{"vector", "hybrid"} {
			for _, src := range []string{"memories", "messages", "all"} {
				for _, f := range phase {
					want = append(want, ws+"."+mode+"."+src+"."+f)
				}
			}
		}
		want = append(want, ws+".vectors", ws+".rows", ws+".other_memories", ws+".other_messages",
			ws+".load_seconds", ws+".recall_at_10_memories", ws+".recall_at_10_messages",
			ws+".recall_queries", ws+".messages_to_memories_p50_ratio", ws+".commits.latency.p50_ms")
	}
	// The CPU of W1's phases: the test's server runs on this machine.
	for _, ph := range []string{"sequential_cpu", "concurrent_cpu"} {
		for _, f := range []string{"ops", "process_seconds_per_1000", "server_seconds_per_1000", "total_seconds_per_1000"} {
			want = append(want, "w1_commit.store."+ph+"."+f)
		}
	}
	want = append(want, "w3_recall.store.hybrid.latency.p50_ms",
		"floor.select_1.latency.p50_ms", "floor.transaction.latency.p50_ms",
		"w2_growth.store.p50_ratio_longest_to_shortest", "w2_growth.http.p50_ratio_longest_to_shortest",
		"w4_sweep.rows_deleted", "w4_sweep.rows_deleted_per_sec", "w4_sweep.batches", "w4_sweep.sweep_errors",
		"w4_sweep.deleted.messages", "w4_sweep.deleted.sessions", "w4_sweep.commit_p99_ratio",
		"w4_sweep.commits_without_sweep.errors", "w4_sweep.commits_without_sweep.latency.p99_ms",
		"w4_sweep.commits_during_sweep.errors", "w4_sweep.commits_during_sweep.latency.p99_ms",
		"w5_end_to_end.requests", "w5_end_to_end.errors", "w5_end_to_end.requests_per_sec",
		"w5_end_to_end.latency.p50_ms", "w5_end_to_end.latency.p99_ms",
		"w5_end_to_end.get_context.p50_ms", "w5_end_to_end.commit_turn.p50_ms", "w5_end_to_end.errors_by_status",
		"w6_startup.server.start_ms", "w6_startup.server.peak_rss_kib", "w6_startup.server.binary_bytes", "w6_startup.server.errors",
		"outbox.commit.no_adapter.latency.p50_ms", "outbox.commit.one_adapter.latency.p50_ms", "outbox.commit.added_p50_ms",
		"outbox.commit.no_adapter.errors", "outbox.commit.one_adapter.errors", "outbox.commit.paired_median_added_ms",
		"outbox.commit_no_flush_wait.added_p50_ms", "outbox.commit_no_flush_wait.one_adapter.latency.p50_ms",
		"outbox.extraction.off.latency.p50_ms", "outbox.extraction.on.latency.p50_ms", "outbox.extraction.added_p50_ms",
		"outbox.extraction.paired_median_added_ms", "outbox.extraction_no_flush_wait.added_p50_ms",
		"outbox.delivery.delay.p50_ms", "outbox.delivery.delay.p99_ms", "outbox.delivery.delivered", "outbox.delivery.failed_share",
		"outbox.outage.jobs", "outbox.outage.delivered", "outbox.outage.lost", "outbox.outage.duplicates", "outbox.outage.drain_seconds",
		"outbox.mem0_delivery.delay.p50_ms", "outbox.mem0_delivery.delivered", "outbox.mem0_delivery.failed_share",
	)
	for _, lv := range []string{"history.store", "history.http"} {
		for _, ph := range []string{"first_page", "deep_page", "agent_page", "since_page"} {
			for _, f := range phase {
				want = append(want, lv+"."+ph+"."+f)
			}
		}
		want = append(want, lv+".messages", lv+".walk_seconds", lv+".walk_pages", lv+".clear_deleted", lv+".clear_seconds")
	}
	workloads := doc["workloads"].(map[string]any)
	if v, _ := lookup(workloads, "w1_commit.store.concurrent_cpu.process_seconds_per_1000"); v == nil || v.(float64) <= 0 {
		t.Errorf("w1_commit.store.concurrent_cpu.process_seconds_per_1000 = %v, want the CPU the turns cost", v)
	}
	// The cache workload: both windows read without errors, every cached read a hit.
	if cw, _ := lookup(workloads, "cache.windows"); cw == nil || len(cw.([]any)) != 2 {
		t.Errorf("cache.windows = %v, want two windows", cw)
	} else {
		for _, w := range cw.([]any) {
			m := w.(map[string]any)
			for _, f := range []string{"database.latency.p50_ms", "cached.latency.p50_ms", "p50_speedup"} {
				if v, ok := lookup(m, f); !ok || v.(float64) <= 0 {
					t.Errorf("cache window %v: %s = %v", m["messages"], f, v)
				}
			}
			for _, f := range []string{"database.errors", "cached.errors"} {
				if v, ok := lookup(m, f); !ok || v.(float64) != 0 {
					t.Errorf("cache window %v: %s = %v, want 0", m["messages"], f, v)
				}
			}
		}
	}
	for _, path := range want {
		if _, ok := lookup(workloads, path); !ok {
			t.Errorf("results.json has no workloads.%s", path)
		}
	}
	for _, path := range []string{"go", "postgresql", "pgvector", "commit", "machine.cores", "machine.memory_bytes",
		"machine.cpu_model", "pg_settings.shared_buffers", "pg_settings.work_mem", "pg_settings.synchronous_commit",
		"pg_settings.max_connections"} {
		if _, ok := lookup(doc["env"].(map[string]any), path); !ok {
			t.Errorf("results.json has no env.%s", path)
		}
	}
	growth, _ := lookup(workloads, "w2_growth.store.points")
	if pts, _ := growth.([]any); len(pts) != len(sizes.GrowthLengths) {
		t.Errorf("w2_growth.store has %d points, want one per length (%d)", len(pts), len(sizes.GrowthLengths))
	}
	lambda, _ := lookup(workloads, "w6_startup.lambda")
	if fns, _ := lambda.([]any); len(fns) != len(sizes.W6Functions) {
		t.Errorf("w6_startup.lambda has %d functions, want %d", len(fns), len(sizes.W6Functions))
	} else {
		for _, f := range fns {
			for _, k := range []string{"start_ms", "init_ms", "peak_rss_kib", "binary_bytes", "errors", "status"} {
				if _, ok := f.(map[string]any)[k]; !ok {
					t.Errorf("a w6_startup.lambda entry has no %s", k)
				}
			}
		}
	}
	for _, mode := range []string{"text", "vector", "hybrid"} {
		n, ok := lookup(workloads, "quality."+mode+".questions")
		if q, _ := n.(float64); !ok || q <= 0 {
			t.Errorf("workloads.quality.%s.questions = %v: want questions asked", mode, n)
		}
		for _, f := range []string{"hit_at_1", "hit_at_5", "mrr"} {
			v, ok := lookup(workloads, "quality."+mode+"."+f)
			if x, isNum := v.(float64); !ok || !isNum || x < 0 || x > 1 {
				t.Errorf("workloads.quality.%s.%s = %v: want a share in [0, 1]", mode, f, v)
			}
		}
	}
	checkConversationQuality(t, workloads, sizes)
	if goals, _ := doc["goals"].([]any); len(goals) != 32 {
		t.Errorf("results.json has %d goals, want 32", len(goals))
	}

	// The second run of the compared workloads, and their medians over both runs.
	if reps, _ := doc["repeats"].([]any); len(reps) != 1 {
		t.Errorf("results.json has %d repeats, want 1", len(reps))
	} else {
		for _, path := range []string{"w1_commit.store.concurrent.ops_per_sec", "w2_context.http.sequential.latency.p50_ms",
			"w2_growth.store.points", "w3_recall.store.concurrent.ops_per_sec"} {
			if _, ok := lookup(reps[0].(map[string]any), path); !ok {
				t.Errorf("results.json has no repeats[0].%s", path)
			}
		}
	}
	if _, ok := doc["peers"]; ok {
		t.Error("results.json has peers, but none ran")
	}
	rows, _ := lookup(doc, "comparison.rows")
	if rs, _ := rows.([]any); len(rs) < 8 {
		t.Errorf("comparison has %d rows, want each compared figure", len(rs))
	} else {
		for _, row := range rs {
			if vals, _ := row.(map[string]any)["agentmem"].([]any); len(vals) != 2 {
				t.Errorf("comparison row %v has %d values, want one per run", row.(map[string]any)["figure"], len(vals))
			}
		}
	}

	md, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, lv := range []string{"store", "http"} {
		errs, _ := lookup(workloads, "history."+lv+".deep_page.errors")
		deleted, _ := lookup(workloads, "history."+lv+".clear_deleted")
		if errs != 0.0 || deleted == 0.0 {
			t.Errorf("history at %s: %v errors in deep pages, %v messages cleared", lv, errs, deleted)
		}
	}
	for _, s := range []string{"## Medians of 2 runs", "## Goals", "## W1", "## W2 ", "## W2-growth", "## W3", "## W3-sources (random texts)", "## W3-sources (clustered texts)", "## W4", "## W5", "## W6", "## Retrieval quality",
		"## History across sessions", "## Outbox", "## get-context cache (Redis)", "## Recall over conversations"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("results.md has no section %q", s)
		}
	}
	for _, png := range []string{bench.ChartGrowth, bench.ChartHTTP, bench.ChartSweep} {
		b, err := os.ReadFile(filepath.Join(out, png))
		if err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
			t.Errorf("%s is not a PNG: %v", png, err)
		}
	}
}

// checkConversationQuality checks the conversation part of the quality workload in
// results.json: the conversations of the run's size stored whole, every question scored by
// each mode and baseline, over all questions and by kind, each figure a share.
func checkConversationQuality(t *testing.T, workloads map[string]any, sizes bench.Sizes) {
	t.Helper()
	convs := bench.Conversations()[:sizes.QualityConversations]
	turns, questions := 0.0, 0.0
	kinds := map[string]float64{}
	for _, c := range convs {
		for _, s := range c.Sessions {
			turns += float64(len(s.Turns))
		}
		for _, q := range c.Questions {
			questions++
			kinds[q.Kind]++
		}
	}
	for path, want := range map[string]any{"conversations": float64(len(convs)), "turns": turns, "questions": questions,
		"set_id": bench.ConversationSetID()} {
		if got, _ := lookup(workloads, "quality.conversations."+path); got != want {
			t.Errorf("workloads.quality.conversations.%s = %v, want %v", path, got, want)
		}
	}
	raw, _ := lookup(workloads, "quality.conversations.systems")
	systems, _ := raw.([]any)
	var names []string
	for _, sys := range systems {
		m := sys.(map[string]any)
		name, _ := m["name"].(string)
		names = append(names, name)
		parts := map[string]float64{"all": questions}
		for k, n := range kinds {
			parts["by_kind."+k] = n
		}
		for part, n := range parts {
			if got, _ := lookup(m, part+".questions"); got != n {
				t.Errorf("conversations %s %s: %v questions, want %v", name, part, got, n)
			}
			for _, f := range []string{"hit_at_1", "hit_at_5", "hit_at_10", "hit_at_25", "recall_at_10", "mrr", "hit_at_10_neighbour"} {
				if v, ok := lookup(m, part+"."+f); !ok || v.(float64) < 0 || v.(float64) > 1 {
					t.Errorf("conversations %s %s.%s = %v: want a share in [0, 1]", name, part, f, v)
				}
			}
		}
		if p, _ := lookup(m, "paraphrase.questions"); p.(float64)+m["lexical"].(map[string]any)["questions"].(float64) != questions {
			t.Errorf("conversations %s: paraphrase and lexical questions do not add up to %v", name, questions)
		}
	}
	if want := []string{"text", "vector", "hybrid", systemBM25, systemLastMessages}; !slices.Equal(names, want) {
		t.Errorf("conversation systems %v, want %v", names, want)
	}
}

// checkNumbers fails on any number of v that is not finite or is negative (but a difference,
// which may be either).
func checkNumbers(t *testing.T, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || (x < 0 && !strings.HasSuffix(path, "added_p50_ms") && !strings.HasSuffix(path, "added_ms")) {
			t.Errorf("%s = %v: want a finite number >= 0", path, x)
		}
	case map[string]any:
		// A goal on a difference ("added by one adapter") may be below 0 on a noisy run.
		name, _ := x["name"].(string)
		for k, e := range x {
			if v, ok := e.(float64); ok && k == "value" && strings.Contains(name, "added by") && !math.IsNaN(v) && !math.IsInf(v, 0) {
				continue
			}
			checkNumbers(t, path+"."+k, e)
		}
	case []any:
		for i, e := range x {
			checkNumbers(t, fmt.Sprintf("%s[%d]", path, i), e)
		}
	}
}

func lookup(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[k]; !ok || cur == nil {
			return nil, false
		}
	}
	return cur, true
}

type testWriter struct{ t *testing.T }

// readResults reads the results.json a run wrote into dir, checking its numbers
// (checkNumbers).
func readResults(t *testing.T, dir string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	checkNumbers(t, "", doc)
	return doc
}

// tinyConfig is a run of the tiny sizes against server, runs times, on a database of its own,
// into a temporary directory, logging to t.
func tinyConfig(t *testing.T, server string, runs int) Config {
	t.Helper()
	repo, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	sizes, err := SizesFor("tiny")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	rand.Read(b) //nolint:errcheck
	return Config{Mode: "tiny", ServerURL: server, Database: "agentmem_bench_test_" + hex.EncodeToString(b),
		OutDir: t.TempDir(), Repo: repo, Sizes: sizes, Log: testWriter{t}, Runs: runs}
}

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestRunPeers runs the compared workloads and the peer harness side by side at the smallest
// sizes, twice, as `make bench PEERS=dir RUNS=2` does. The harness lives outside the repository
// and needs Node and npm: the test runs when AGENTMEM_BENCH_PEERS names the harness directory
// (AGENTMEM_BENCH_PEER_SET picks the peers, default p1,p2).
func TestRunPeers(t *testing.T) {
	dir := os.Getenv("AGENTMEM_BENCH_PEERS")
	if dir == "" {
		t.Skip("AGENTMEM_BENCH_PEERS is not set: no peer harness to run")
	}
	set := DefaultPeers
	if s := os.Getenv("AGENTMEM_BENCH_PEER_SET"); s != "" {
		set = strings.Split(s, ",")
	}
	cfg := tinyConfig(t, testdb.ServerURL(t), 2)
	out, sizes := cfg.OutDir, cfg.Sizes
	cfg.Only = map[string]bool{"w1": true, "w2": true, "w2growth": true, "w3": true}
	cfg.Peers = PeersConfig{Dir: dir, Set: set, CacheDir: DefaultPeerCacheDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) > 0 {
		t.Errorf("notes: %v", res.Notes)
	}
	if res.Peers == nil || len(res.Peers.Runs) != 2 || len(res.Peers.Peers) != len(set) {
		t.Fatalf("peers = %+v, want %d peers measured in 2 runs", res.Peers, len(set))
	}
	for _, p := range res.Peers.Peers {
		if p.Versions["pg"] == "" || p.LoadSeconds <= 0 || p.Reused {
			t.Errorf("peer %s: %+v, want its versions and a load of its own", p.ID, p)
		}
	}
	for i, pr := range res.Peers.Runs {
		if contains(set, "p1") && (pr.P1 == nil || pr.P1.W1Sequential.N != sizes.Turns || pr.P1.W2.N != sizes.Reads || len(pr.P1.Growth) == 0) {
			t.Errorf("run %d: P1 = %+v, want W1 and W2 at the run's sizes and W2-growth", i+1, pr.P1)
		}
		if contains(set, "p2") && (pr.P2 == nil || pr.P2.Sequential.N != sizes.Queries || pr.P2.Concurrent.N != sizes.Queries || pr.P2.RecallAt10 <= 0) {
			t.Errorf("run %d: P2 = %+v, want W3 at the run's sizes", i+1, pr.P2)
		}
	}
	figures := map[string]bool{}
	for _, cr := range res.Comparison.Rows {
		if cr.Peer == "" {
			continue
		}
		figures[cr.Figure+"|"+cr.Peer] = true
		if len(cr.Ratios) != 2 {
			t.Errorf("%s vs %s: %d ratios, want one per run", cr.Figure, cr.Peer, len(cr.Ratios))
		}
		for _, v := range append(append(slices.Clone(cr.Ratios), cr.Agentmem...), cr.PeerValues...) {
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				t.Errorf("%s vs %s: value %v, want a positive number", cr.Figure, cr.Peer, v)
			}
		}
	}
	want := []string{}
	if contains(set, "p1") {
		want = append(want, "W1 commit, 1 client, turns/s|p1", "W1 commit, 8 clients, turns/s|p1", "W1 commit, 8 clients, p99|p1",
			"W2 get-context p50|p1", "W2-growth p50, 20 messages|p1", "W2-growth p50, 200 messages|p1")
	}
	if contains(set, "p2") {
		want = append(want, "W3 recall p50, 1 client|p2", "W3 recall, 8 clients, queries/s|p2")
	}
	for _, f := range want {
		if !figures[f] {
			t.Errorf("no comparison row %s", f)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "## Side by side with the peers (medians of 2 runs)") {
		t.Error("results.md has no side-by-side section")
	}
	for _, f := range []string{bench.ChartPeersSpeedup, "peers/p1-run2.json", "peers/p1-run2.log"} {
		if f != bench.ChartPeersSpeedup && !contains(set, "p1") {
			continue
		}
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	// The peers' databases are dropped after the run (neither -keep nor -peers-reuse).
	c, err := pgx.Connect(ctx, cfg.ServerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, "select count(*) from pg_database where datname like 'peer\\_%' || $1", cfg.Database).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d peer databases of the run are left", n)
	}
}

// TestHarnessPassword checks that the peers run only against the server the harness connects to.
func TestHarnessPassword(t *testing.T) {
	for _, c := range []struct {
		url, pw string
		ok      bool
	}{
		{"postgresql://postgres:secret@127.0.0.1:54322/postgres", "secret", true},
		{"postgres://postgres:postgres@localhost:54322/x?sslmode=disable", "postgres", true},
		{"postgresql://postgres:postgres@127.0.0.1:5432/postgres", "", false},
		{"postgresql://postgres:postgres@db.example.com:54322/postgres", "", false},
		{"postgresql://other:postgres@127.0.0.1:54322/postgres", "", false},
	} {
		t.Run(c.url, func(t *testing.T) {
			pw, err := harnessPassword(c.url)
			if (err == nil) != c.ok || pw != c.pw {
				t.Errorf("harnessPassword(%s) = %q, %v; want %q, ok %v", c.url, pw, err, c.pw, c.ok)
			}
		})
	}
}
