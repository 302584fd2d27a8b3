package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Peer identifiers, as the peer harness names its scripts (p1_..., p2_..., p4_...).
const (
	PeerChatHistory  = "p1" // LangChain.js PostgresChatMessageHistory (+ an index on session_id)
	PeerStore        = "p2" // LangGraph.js PostgresStore with a vector index, as shipped
	PeerCheckpointer = "p4" // LangGraph.js StateGraph(MessagesAnnotation) with PostgresSaver
)

// PeerNames are the peers' readable names.
var PeerNames = map[string]string{
	PeerChatHistory:  "LangChain.js PostgresChatMessageHistory (+ session_id index)",
	PeerStore:        "LangGraph.js PostgresStore (vector index, as shipped)",
	PeerCheckpointer: "LangGraph.js checkpointer (PostgresSaver, MessagesAnnotation graph)",
}

// Targets of the side-by-side comparison: agentmem's store against the peers, on the medians
// of the runs. Ratios are agentmem's figure over the peer's.
const (
	TargetW1SeqRatio      = 1.3  // W1 turns/s, 1 client, at least this times P1's
	TargetW1ConcRatio     = 1.5  // W1 turns/s, 8 clients, at least this times P1's
	TargetW1ConcP99MS     = 10.0 // W1 p99 with 8 clients, at most (ms)
	TargetGrowthFirstRate = 0.8  // W2-growth p50 at the shortest length, at most this times P1's
	TargetGrowthRatio     = 1.0  // W2-growth p50 at every length, below P1's
	TargetRecallP50MS     = 1.0  // W3 p50, 1 client, at most (ms)
	TargetRecallQPS       = 1500 // W3 queries/s with 8 clients, at least
	TargetRecallAt10      = 1.0  // W3 recall@10, still exact
	TargetHTTPContextP50  = 1.0  // W2 get-context p50 through HTTP, at most (ms)
)

// PeerSummary is the peer harness's summary of one measured phase. Its percentiles take the
// nearest rank (agentmem's interpolate between ranks); at 100 operations or more the two
// differ by less than the gap between neighbouring samples.
type PeerSummary struct {
	N         int     `json:"n"`
	OpsPerSec float64 `json:"ops_per_sec"`
	P50MS     float64 `json:"p50_ms"`
	P90MS     float64 `json:"p90_ms"`
	P99MS     float64 `json:"p99_ms"`
	MeanMS    float64 `json:"mean_ms"`
	MaxMS     float64 `json:"max_ms"`
}

// PeerGrowthPoint is a chat peer's W2-growth at one session length.
type PeerGrowthPoint struct {
	Length int         `json:"length"`
	Phase  PeerSummary `json:"phase"`
}

// PeerChat is a chat-memory peer's W1, W2 and W2-growth in one run.
type PeerChat struct {
	W1Sequential PeerSummary `json:"w1_sequential"`
	W1Concurrent PeerSummary `json:"w1_concurrent"`
	// W1ConcurrentCPU is what W1 with concurrent clients cost in CPU (its warm-up included,
	// read between the harness' lines that end each phase), when the server runs on this machine.
	W1ConcurrentCPU *CPUCost          `json:"w1_concurrent_cpu,omitempty"`
	W2              PeerSummary       `json:"w2"`
	Growth          []PeerGrowthPoint `json:"w2_growth"`
}

// PeerRecall is a memory-store peer's W3 in one run.
type PeerRecall struct {
	Sequential PeerSummary `json:"sequential"`
	Concurrent PeerSummary `json:"concurrent"`
	RecallAt10 float64     `json:"recall_at_10"`
	// HNSWUsed says whether the plan of the peer's search used its HNSW index.
	HNSWUsed bool `json:"hnsw_used"`
}

// PeerRun is what the peers measured in one run, right after agentmem's workloads of that run.
type PeerRun struct {
	P1 *PeerChat   `json:"p1,omitempty"`
	P2 *PeerRecall `json:"p2,omitempty"`
	P4 *PeerChat   `json:"p4,omitempty"`
}

// PeerInfo describes one peer of the run.
type PeerInfo struct {
	ID       string            `json:"id"`
	Name     string            `json:"name"`
	Script   string            `json:"script"`
	Database string            `json:"database"`
	Versions map[string]string `json:"versions"`
	// LoadSeconds is the harness's own load of the peer's database in this invocation (0 when
	// a database loaded by an earlier invocation was reused).
	LoadSeconds float64 `json:"load_seconds"`
	// Reused says the database was loaded by an earlier invocation (-peers-reuse), which had
	// measured on it RunsBefore times: each run adds its turns to the sessions.
	Reused     bool `json:"reused"`
	RunsBefore int  `json:"runs_before"`
}

// Peers is the side-by-side part of a run: the peer harness run against the same server,
// after agentmem's workloads in every run.
type Peers struct {
	// Harness is the harness directory given, Copy the copy it ran from (with its node_modules).
	Harness string     `json:"harness"`
	Copy    string     `json:"copy"`
	Node    string     `json:"node"`
	Peers   []PeerInfo `json:"peers"`
	Runs    []PeerRun  `json:"runs"`
}

// CompareRow is one figure of agentmem's store next to a peer's, per run and as medians.
type CompareRow struct {
	Figure string `json:"figure"`
	Unit   string `json:"unit"`
	// Lower is true when a smaller figure is better (latency).
	Lower bool   `json:"lower_is_better"`
	Peer  string `json:"peer"`
	// Agentmem, PeerValues and Ratios hold one value per run; a ratio is agentmem / peer.
	Agentmem   []float64 `json:"agentmem"`
	PeerValues []float64 `json:"peer_values"`
	Ratios     []float64 `json:"ratios"`
	// The medians over the runs; RatioMedian is the median of the per-run ratios.
	AgentmemMedian float64 `json:"agentmem_median"`
	PeerMedian     float64 `json:"peer_median"`
	RatioMedian    float64 `json:"ratio_median"`
}

// Comparison is the side-by-side report: rows per figure and the targets, on medians of runs.
type Comparison struct {
	Runs    int          `json:"runs"`
	Rows    []CompareRow `json:"rows"`
	Targets []Goal       `json:"targets"`
}

// runWorkloads returns the workloads of every run: the first run's, then the repeats.
func runWorkloads(r *Results) []Workloads {
	return append([]Workloads{r.Workloads}, r.Repeats...)
}

// chatCPU reads a chat peer's W1 CPU cost with get, when it was measured.
func chatCPU(peer string, get func(*CPUCost) float64) func(PeerRun) (float64, bool) {
	return func(p PeerRun) (float64, bool) {
		pc := p.P1
		if peer == PeerCheckpointer {
			pc = p.P4
		}
		if pc == nil || pc.W1ConcurrentCPU == nil {
			return 0, false
		}
		return get(pc.W1ConcurrentCPU), true
	}
}

// EvaluateComparison computes the side-by-side rows and targets from the runs' figures:
// agentmem's store level against the peer measured right after it in the same run. It is nil
// when there is nothing to compare (no peers and a single run).
func EvaluateComparison(r *Results) *Comparison {
	runs := runWorkloads(r)
	if len(runs) < 2 && r.Peers == nil {
		return nil
	}
	var peerRuns []PeerRun
	if r.Peers != nil {
		peerRuns = r.Peers.Runs
	}
	c := &Comparison{Runs: len(runs), Rows: []CompareRow{}, Targets: []Goal{}}
	// row collects one figure over the runs; ours or theirs may be missing in a run (NaN).
	row := func(figure, unit string, lower bool, peer string, ours func(Workloads) (float64, bool), theirs func(PeerRun) (float64, bool)) *CompareRow {
		cr := CompareRow{Figure: figure, Unit: unit, Lower: lower, Peer: peer}
		seen := false
		for i, w := range runs {
			a, okA := ours(w)
			p, okP := math.NaN(), false
			if theirs != nil && i < len(peerRuns) {
				p, okP = theirs(peerRuns[i])
			}
			if !okA {
				continue
			}
			seen = true
			cr.Agentmem = append(cr.Agentmem, a)
			if okP && p > 0 {
				cr.PeerValues = append(cr.PeerValues, p)
				cr.Ratios = append(cr.Ratios, a/p)
			}
		}
		if !seen || (theirs != nil && len(cr.Ratios) == 0) {
			return nil
		}
		cr.AgentmemMedian = Median(cr.Agentmem)
		if len(cr.Ratios) > 0 {
			cr.PeerMedian = Median(cr.PeerValues)
			cr.RatioMedian = Median(cr.Ratios)
		}
		c.Rows = append(c.Rows, cr)
		return &c.Rows[len(c.Rows)-1]
	}

	w1 := func(get func(*W1) float64) func(Workloads) (float64, bool) {
		return func(w Workloads) (float64, bool) {
			if w.W1 == nil || w.W1.Store == nil {
				return 0, false
			}
			return get(w.W1.Store), true
		}
	}
	chat := func(peer string, get func(*PeerChat) float64) func(PeerRun) (float64, bool) {
		return func(p PeerRun) (float64, bool) {
			pc := p.P1
			if peer == PeerCheckpointer {
				pc = p.P4
			}
			if pc == nil {
				return 0, false
			}
			return get(pc), true
		}
	}
	clients := 8
	if r.Sizes.Clients > 0 {
		clients = r.Sizes.Clients
	}
	hasPeer := func(id string) bool {
		for _, pr := range peerRuns {
			switch {
			case id == PeerChatHistory && pr.P1 != nil, id == PeerStore && pr.P2 != nil, id == PeerCheckpointer && pr.P4 != nil:
				return true
			}
		}
		return false
	}
	chatPeers := []string{}
	for _, id := range []string{PeerChatHistory, PeerCheckpointer} {
		if hasPeer(id) {
			chatPeers = append(chatPeers, id)
		}
	}
	if len(chatPeers) == 0 {
		chatPeers = []string{""}
	}
	theirsOr := func(peer string, f func(PeerRun) (float64, bool)) func(PeerRun) (float64, bool) {
		if peer == "" {
			return nil
		}
		return f
	}
	rows := map[string]*CompareRow{}
	key := func(figure, peer string) string { return figure + "|" + peer }
	for _, peer := range chatPeers {
		for _, f := range []struct {
			figure, unit string
			lower        bool
			ours         func(Workloads) (float64, bool)
			theirs       func(PeerRun) (float64, bool)
		}{
			{"W1 commit, 1 client, turns/s", "turns/s", false, w1(func(v *W1) float64 { return v.Sequential.OpsPerSec }),
				chat(peer, func(p *PeerChat) float64 { return p.W1Sequential.OpsPerSec })},
			{fmt.Sprintf("W1 commit, %d clients, turns/s", clients), "turns/s", false, w1(func(v *W1) float64 { return v.Concurrent.OpsPerSec }),
				chat(peer, func(p *PeerChat) float64 { return p.W1Concurrent.OpsPerSec })},
			{fmt.Sprintf("W1 commit, %d clients, p99", clients), "ms", true, w1(func(v *W1) float64 { return v.Concurrent.Latency.P99MS }),
				chat(peer, func(p *PeerChat) float64 { return p.W1Concurrent.P99MS })},
			{"W2 get-context p50", "ms", true, func(w Workloads) (float64, bool) {
				if w.W2 == nil || w.W2.Store == nil {
					return 0, false
				}
				return w.W2.Store.Sequential.Latency.P50MS, true
			}, chat(peer, func(p *PeerChat) float64 { return p.W2.P50MS })},
		} {
			rows[key(f.figure, peer)] = row(f.figure, f.unit, f.lower, peer, f.ours, theirsOr(peer, f.theirs))
		}
		// The CPU a turn costs, each side's process and the server's, in W1 with concurrent
		// clients: with both sides on the same cores, the figure that bounds turns/s.
		for _, f := range []struct {
			what string
			get  func(*CPUCost) float64
		}{
			{"process + server", func(c *CPUCost) float64 { return c.TotalSecondsPer1000 }},
			{"process", func(c *CPUCost) float64 { return c.ProcessSecondsPer1000 }},
			{"server", func(c *CPUCost) float64 { return c.ServerSecondsPer1000 }},
		} {
			figure := fmt.Sprintf("W1 commit, %d clients, CPU s per 1,000 turns, %s", clients, f.what)
			rows[key(figure, peer)] = row(figure, "s", true, peer, func(w Workloads) (float64, bool) {
				if w.W1 == nil || w.W1.Store == nil || w.W1.Store.ConcurrentCPU == nil {
					return 0, false
				}
				return f.get(w.W1.Store.ConcurrentCPU), true
			}, theirsOr(peer, chatCPU(peer, f.get)))
		}
		for _, length := range growthLengths(runs) {
			figure := fmt.Sprintf("W2-growth p50, %d messages", length)
			rows[key(figure, peer)] = row(figure, "ms", true, peer, func(w Workloads) (float64, bool) {
				if w.W2Growth == nil || w.W2Growth.Store == nil {
					return 0, false
				}
				for _, pt := range w.W2Growth.Store.Points {
					if pt.Length == length {
						return pt.Phase.Latency.P50MS, true
					}
				}
				return 0, false
			}, theirsOr(peer, func(p PeerRun) (float64, bool) {
				pc := p.P1
				if peer == PeerCheckpointer {
					pc = p.P4
				}
				if pc == nil {
					return 0, false
				}
				for _, pt := range pc.Growth {
					if pt.Length == length {
						return pt.Phase.P50MS, true
					}
				}
				return 0, false
			}))
		}
	}
	recallPeer := ""
	if hasPeer(PeerStore) {
		recallPeer = PeerStore
	}
	w3 := func(get func(*W3) float64) func(Workloads) (float64, bool) {
		return func(w Workloads) (float64, bool) {
			if w.W3 == nil || w.W3.Store == nil {
				return 0, false
			}
			return get(w.W3.Store), true
		}
	}
	store := func(get func(*PeerRecall) float64) func(PeerRun) (float64, bool) {
		return theirsOr(recallPeer, func(p PeerRun) (float64, bool) {
			if p.P2 == nil {
				return 0, false
			}
			return get(p.P2), true
		})
	}
	w3p50 := row("W3 recall p50, 1 client", "ms", true, recallPeer, w3(func(v *W3) float64 { return v.Sequential.Latency.P50MS }),
		store(func(p *PeerRecall) float64 { return p.Sequential.P50MS }))
	w3qps := row(fmt.Sprintf("W3 recall, %d clients, queries/s", clients), "queries/s", false, recallPeer,
		w3(func(v *W3) float64 { return v.Concurrent.OpsPerSec }), store(func(p *PeerRecall) float64 { return p.Concurrent.OpsPerSec }))
	w3rec := row("W3 recall@10", "", false, recallPeer, w3(func(v *W3) float64 { return v.RecallAt10 }),
		store(func(p *PeerRecall) float64 { return p.RecallAt10 }))
	httpCtx := row("W2 get-context p50 through HTTP", "ms", true, "", func(w Workloads) (float64, bool) {
		if w.W2 == nil || w.W2.HTTP == nil {
			return 0, false
		}
		return w.W2.HTTP.Sequential.Latency.P50MS, true
	}, nil)

	// The targets, checked against the medians.
	p1 := func(figure string) *CompareRow { return rows[key(figure, PeerChatHistory)] }
	ratioTarget := func(cr *CompareRow, name string, atLeast bool, bound float64, strict bool) {
		if cr == nil || len(cr.Ratios) == 0 {
			return
		}
		g := Goal{Name: name, Value: cr.RatioMedian, Unit: "x"}
		switch {
		case atLeast:
			g.Target, g.Met = fmt.Sprintf(">= %.1fx P1", bound), cr.RatioMedian >= bound
		case strict:
			g.Target, g.Met = fmt.Sprintf("< %.1fx P1", bound), cr.RatioMedian < bound
		default:
			g.Target, g.Met = fmt.Sprintf("<= %.1fx P1", bound), cr.RatioMedian <= bound
		}
		c.Targets = append(c.Targets, g)
	}
	absTarget := func(cr *CompareRow, name string, atLeast bool, bound float64, unit string) {
		if cr == nil {
			return
		}
		g := Goal{Name: name, Value: cr.AgentmemMedian, Unit: unit}
		if atLeast {
			g.Target, g.Met = fmt.Sprintf(">= %s %s", trimNum(bound), unit), cr.AgentmemMedian >= bound
		} else {
			g.Target, g.Met = fmt.Sprintf("<= %s %s", trimNum(bound), unit), cr.AgentmemMedian <= bound
		}
		c.Targets = append(c.Targets, g)
	}
	ratioTarget(p1("W1 commit, 1 client, turns/s"), "W1 turns/s, 1 client, agentmem / P1", true, TargetW1SeqRatio, false)
	ratioTarget(p1(fmt.Sprintf("W1 commit, %d clients, turns/s", clients)), fmt.Sprintf("W1 turns/s, %d clients, agentmem / P1", clients), true, TargetW1ConcRatio, false)
	// agentmem's own figures are the same in every row of a figure, whichever the peer.
	anyRow := func(figure string) *CompareRow {
		for _, peer := range chatPeers {
			if cr := rows[key(figure, peer)]; cr != nil {
				return cr
			}
		}
		return nil
	}
	absTarget(anyRow(fmt.Sprintf("W1 commit, %d clients, p99", clients)), fmt.Sprintf("W1 p99, %d clients (store)", clients), false, TargetW1ConcP99MS, "ms")
	for i, length := range growthLengths(runs) {
		cr := p1(fmt.Sprintf("W2-growth p50, %d messages", length))
		if i == 0 {
			ratioTarget(cr, fmt.Sprintf("W2-growth p50 at %d messages, agentmem / P1", length), false, TargetGrowthFirstRate, false)
			continue
		}
		ratioTarget(cr, fmt.Sprintf("W2-growth p50 at %d messages, agentmem / P1, below the peer", length), false, TargetGrowthRatio, true)
	}
	absTarget(w3p50, "W3 recall p50, 1 client (store)", false, TargetRecallP50MS, "ms")
	absTarget(w3qps, fmt.Sprintf("W3 recall, %d clients (store)", clients), true, TargetRecallQPS, "queries/s")
	if w3rec != nil {
		c.Targets = append(c.Targets, Goal{Name: "W3 recall@10 (store)", Target: fmt.Sprintf(">= %.3f", TargetRecallAt10),
			Value: w3rec.AgentmemMedian, Met: w3rec.AgentmemMedian >= TargetRecallAt10-1e-9})
	}
	absTarget(httpCtx, "W2 get-context p50 through HTTP (JWT + RLS)", false, TargetHTTPContextP50, "ms")
	return c
}

// growthLengths are the W2-growth lengths of the first run that measured them.
func growthLengths(runs []Workloads) []int {
	for _, w := range runs {
		if w.W2Growth != nil && w.W2Growth.Store != nil {
			var ls []int
			for _, pt := range w.W2Growth.Store.Points {
				ls = append(ls, pt.Length)
			}
			return ls
		}
	}
	return nil
}

func trimNum(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", v)
}

// Speedup is how many times faster agentmem is than the peer on a row's median ratio: the
// ratio itself for a throughput, its inverse for a latency.
func (cr CompareRow) Speedup() float64 {
	if cr.RatioMedian <= 0 {
		return 0
	}
	if cr.Lower {
		return 1 / cr.RatioMedian
	}
	return cr.RatioMedian
}

// peerRows are the rows with a peer, in their order.
func peerRows(c *Comparison) []CompareRow {
	if c == nil {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(c.Rows), func(cr CompareRow) bool { return cr.Peer == "" || cr.Unit == "" })
}

// comparisonMarkdown renders the side-by-side section.
func comparisonMarkdown(p func(string, ...any), r *Results) {
	c := r.Comparison
	if c == nil {
		return
	}
	val := func(v float64, unit string) string {
		switch unit {
		case "ms":
			return ms(v) + " ms"
		case "":
			return fmt.Sprintf("%.3f", v)
		}
		return num(v) + " " + unit
	}
	list := func(xs []float64, f func(float64) string) string {
		s := ""
		for i, x := range xs {
			if i > 0 {
				s += ", "
			}
			s += f(x)
		}
		return s
	}
	if r.Peers != nil {
		p("## Side by side with the peers (%s)\n\n", mediansOf(c.Runs))
		p("Every run measured agentmem's workloads, then each peer harness script on the same PostgreSQL server, back to back. ")
		p("A ratio is agentmem's figure over the peer's in the same run; the median ratio is the median of the runs' ratios (the medians of the figures are beside it). ")
		p("agentmem is its store called directly; the peers are their libraries called from Node. ")
		p("For turns/s and queries/s a ratio above 1 is agentmem ahead, for milliseconds a ratio below 1.\n\n")
	} else {
		p("## Medians of %d runs\n\n", c.Runs)
	}
	if len(r.RunLoadAvg) > 0 {
		p("Load average (1 minute) at the end of each run: %s.\n\n", list(r.RunLoadAvg, func(x float64) string { return fmt.Sprintf("%.2f", x) }))
	}
	p("| Figure | Peer | agentmem | peer | agentmem / peer | ratio (or figure) per run |\n|---|---|---|---|---|---|\n")
	for _, cr := range c.Rows {
		if cr.Peer == "" {
			p("| %s | | %s | | | %s |\n", cr.Figure, val(cr.AgentmemMedian, cr.Unit), list(cr.Agentmem, func(x float64) string { return val(x, cr.Unit) }))
			continue
		}
		p("| %s | %s | %s | %s | **%s** | %s |\n", cr.Figure, strings.ToUpper(cr.Peer), val(cr.AgentmemMedian, cr.Unit),
			val(cr.PeerMedian, cr.Unit), ratio(cr.RatioMedian), list(cr.Ratios, ratio))
	}
	p("\n")
	if len(c.Targets) > 0 {
		p("| Target (%s) | Target | Median | Met |\n|---|---|---|---|\n", mediansOf(c.Runs))
		for _, g := range c.Targets {
			v := num(g.Value) + " " + g.Unit
			switch g.Unit {
			case "x":
				v = ratio(g.Value)
			case "ms":
				v = ms(g.Value) + " ms"
			case "":
				v = fmt.Sprintf("%.3f", g.Value)
			}
			p("| %s | %s | %s | %s |\n", g.Name, g.Target, v, yesNo(g.Met))
		}
		p("\n")
	}
	if pe := r.Peers; pe != nil {
		p("Peers (harness %s, run from %s, Node %s):\n\n", pe.Harness, pe.Copy, pe.Node)
		for _, pi := range pe.Peers {
			keys := make([]string, 0, len(pi.Versions))
			for k := range pi.Versions {
				if k != "node" {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			vs := make([]string, len(keys))
			for i, k := range keys {
				vs[i] = k + " " + pi.Versions[k]
			}
			load := fmt.Sprintf("loaded in %.1f s", pi.LoadSeconds)
			if pi.Reused {
				load = fmt.Sprintf("loaded by an earlier invocation, reused after %d measured runs", pi.RunsBefore)
			}
			p("- %s: %s (`%s`; %s), database `%s` %s.\n", strings.ToUpper(pi.ID), pi.Name, pi.Script, strings.Join(vs, ", "), pi.Database, load)
		}
		for i, run := range pe.Runs {
			if run.P2 != nil {
				p("- P2 run %d: recall@10 %.3f, HNSW index in the plan: %s.\n", i+1, run.P2.RecallAt10, yesNo(run.P2.HNSWUsed))
			}
		}
		p("\n")
	}
}

// ratio formats agentmem / peer with two significant figures below 0.1.
func ratio(x float64) string {
	if x < 0.1 {
		return fmt.Sprintf("%.2gx", x)
	}
	return fmt.Sprintf("%.2fx", x)
}

func mediansOf(runs int) string {
	if runs == 1 {
		return "one run"
	}
	return fmt.Sprintf("medians of %d runs", runs)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
