package bench

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run builds the compared workloads of one run with the figures given.
func run(w1Seq, w1Conc, w1P99, w2, g20, g200, w3P50, w3QPS, httpW2 float64) Workloads {
	phase := func(ops, p50, p99 float64) Phase {
		return Phase{Clients: 1, OpsPerSec: ops, Latency: Latency{N: 100, P50MS: p50, P99MS: p99}}
	}
	conc := phase(w1Conc, 1, w1P99)
	conc.Clients = 8
	w3c := phase(w3QPS, 1, 1)
	w3c.Clients = 8
	return Workloads{
		W1: &Levels[W1]{Store: &W1{Sequential: phase(w1Seq, 1, 1), Concurrent: conc}},
		W2: &Levels[W2]{Store: &W2{Sequential: phase(0, w2, 1)}, HTTP: &W2{Sequential: phase(0, httpW2, 1)}},
		W2Growth: &Levels[W2Growth]{Store: &W2Growth{Points: []GrowthPoint{
			{Length: 20, Phase: phase(0, g20, 1)}, {Length: 200, Phase: phase(0, g200, 1)}}}},
		W3: &Levels[W3]{Store: &W3{Sequential: phase(0, w3P50, 1), Concurrent: w3c, RecallAt10: 1}},
	}
}

func peerChat(w1Seq, w1Conc, w1P99, w2, g20, g200 float64) *PeerChat {
	return &PeerChat{
		W1Sequential: PeerSummary{N: 100, OpsPerSec: w1Seq}, W1Concurrent: PeerSummary{N: 100, OpsPerSec: w1Conc, P99MS: w1P99},
		W2: PeerSummary{N: 100, P50MS: w2},
		Growth: []PeerGrowthPoint{{Length: 20, Phase: PeerSummary{N: 100, P50MS: g20}},
			{Length: 200, Phase: PeerSummary{N: 100, P50MS: g200}}, {Length: 2000, Phase: PeerSummary{N: 100, P50MS: 5}}},
	}
}

// TestEvaluateComparison checks the ratios (agentmem / peer within each run), their medians over
// three runs, and the targets checked against the medians.
func TestEvaluateComparison(t *testing.T) {
	r := &Results{Sizes: Sizes{Clients: 8}}
	r.Workloads = run(1000, 3000, 9, 0.5, 0.2, 0.5, 0.9, 1600, 0.9)
	r.Repeats = []Workloads{
		run(900, 2000, 12, 0.6, 0.3, 0.5, 1.1, 1400, 1.1),
		run(1100, 2600, 8, 0.4, 0.25, 0.5, 0.8, 1700, 0.8),
	}
	r.Peers = &Peers{Runs: []PeerRun{
		{P1: peerChat(500, 2000, 10, 1, 0.4, 1), P2: &PeerRecall{Sequential: PeerSummary{N: 100, P50MS: 9}, Concurrent: PeerSummary{N: 100, OpsPerSec: 100}, RecallAt10: 1}},
		{P1: peerChat(1000, 1000, 10, 1, 0.3, 1), P2: &PeerRecall{Sequential: PeerSummary{N: 100, P50MS: 11}, Concurrent: PeerSummary{N: 100, OpsPerSec: 200}, RecallAt10: 1}},
		{P1: peerChat(1000, 2000, 10, 1, 0.5, 1), P2: &PeerRecall{Sequential: PeerSummary{N: 100, P50MS: 8}, Concurrent: PeerSummary{N: 100, OpsPerSec: 100}, RecallAt10: 1}},
	}}
	c := EvaluateComparison(r)
	if c == nil || c.Runs != 3 {
		t.Fatalf("comparison = %+v, want 3 runs", c)
	}
	rows := map[string]CompareRow{}
	for _, cr := range c.Rows {
		rows[cr.Figure+"|"+cr.Peer] = cr
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, w := range []struct {
		key                 string
		ratio, ours, theirs float64
		ratios              []float64
		lower               bool
	}{
		// ratios 2, 0.9, 1.1: median 1.1; the figures' medians are 1000 and 1000.
		{"W1 commit, 1 client, turns/s|p1", 1.1, 1000, 1000, []float64{2, 0.9, 1.1}, false},
		{"W1 commit, 8 clients, turns/s|p1", 1.5, 2600, 2000, []float64{1.5, 2, 1.3}, false},
		{"W1 commit, 8 clients, p99|p1", 0.9, 9, 10, []float64{0.9, 1.2, 0.8}, true},
		{"W2-growth p50, 20 messages|p1", 0.5, 0.25, 0.4, []float64{0.5, 1, 0.5}, true},
		{"W3 recall p50, 1 client|p2", 0.1, 0.9, 9, []float64{0.1, 0.1, 0.1}, true},
	} {
		t.Run(w.key, func(t *testing.T) {
			cr, ok := rows[w.key]
			if !ok {
				t.Errorf("no row %q", w.key)
				return
			}
			if !near(cr.RatioMedian, w.ratio) || !near(cr.AgentmemMedian, w.ours) || !near(cr.PeerMedian, w.theirs) || cr.Lower != w.lower {
				t.Errorf("%s: ratio %v, medians %v / %v, lower %v; want %v, %v / %v, %v", w.key, cr.RatioMedian, cr.AgentmemMedian, cr.PeerMedian, cr.Lower, w.ratio, w.ours, w.theirs, w.lower)
			}
			for i := range w.ratios {
				if len(cr.Ratios) != 3 || !near(cr.Ratios[i], w.ratios[i]) {
					t.Errorf("%s: per-run ratios %v, want %v", w.key, cr.Ratios, w.ratios)
					break
				}
			}
		})
	}
	// The peer measured a length agentmem did not (2,000): no row for it.
	if _, ok := rows["W2-growth p50, 2000 messages|p1"]; ok {
		t.Error("a growth length only the peer measured has a row")
	}
	if cr := rows["W2 get-context p50 through HTTP|"]; !near(cr.AgentmemMedian, 0.9) || len(cr.Ratios) != 0 {
		t.Errorf("HTTP get-context row = %+v, want the median 0.9 and no peer", cr)
	}
	met := map[string]bool{}
	for _, g := range c.Targets {
		met[g.Name] = g.Met
	}
	for name, want := range map[string]bool{
		"W1 turns/s, 1 client, agentmem / P1":                          false, // 1.1 < 1.3
		"W1 turns/s, 8 clients, agentmem / P1":                         true,  // 1.5 >= 1.5
		"W1 p99, 8 clients (store)":                                    true,  // median 9 <= 10
		"W2-growth p50 at 20 messages, agentmem / P1":                  true,  // 0.5 <= 0.8
		"W2-growth p50 at 200 messages, agentmem / P1, below the peer": true,  // 0.5 < 1
		"W3 recall p50, 1 client (store)":                              true,  // 0.9 <= 1
		"W3 recall, 8 clients (store)":                                 true,  // 1600 >= 1500
		"W3 recall@10 (store)":                                         true,
		"W2 get-context p50 through HTTP (JWT + RLS)":                  true, // 0.9 <= 1
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := met[name]
			if !ok || got != want {
				t.Errorf("target %q: met %v (present %v), want %v", name, got, ok, want)
			}
		})
	}

	// The report and the charts render.
	dir := t.TempDir()
	r.Comparison = c
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "## Side by side with the peers (medians of 3 runs)") || !strings.Contains(string(md), "| W1 commit, 8 clients, turns/s | P1 | 2600 turns/s | 2000 turns/s | **1.50x** |") {
		t.Errorf("results.md has no side-by-side table:\n%s", md)
	}
	for _, png := range []string{ChartPeersGrowth, ChartPeersSpeedup} {
		if b, err := os.ReadFile(filepath.Join(dir, png)); err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
			t.Errorf("%s is not a PNG: %v", png, err)
		}
	}

	// One run and no peers: nothing to compare.
	if c := EvaluateComparison(&Results{Workloads: run(1, 1, 1, 1, 1, 1, 1, 1, 1)}); c != nil {
		t.Errorf("a single run without peers gave a comparison: %+v", c)
	}
}
