package main

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/memory"
)

// opsData are the operations of W1, W2 and W5 drawn from the ops stream (in that order), and
// the warm-ups drawn from the warmup stream. Each warm-up starts the warmup stream afresh, so
// the W3 warm-up queries are exactly the specification's.
type opsData struct {
	warmTurns []bench.Turn
	warmReads []int
	seqTurns  []bench.Turn
	concTurns []bench.Turn
	reads     []int

	mu   sync.Mutex
	rest *bench.Rand // the ops stream after W2's draws, for W5
}

func newOps(sz bench.Sizes) *opsData {
	r := bench.Stream(bench.StreamOps)
	o := &opsData{}
	o.seqTurns = bench.GenerateTurns(r, sz.Turns, sz.Sessions)
	o.concTurns = bench.GenerateTurns(r, sz.Turns, sz.Sessions)
	o.reads = bench.GenerateReads(r, sz.Reads, sz.Sessions)
	o.rest = r
	o.warmTurns = bench.GenerateTurns(bench.Stream(bench.StreamWarmup), sz.Warmup, sz.Sessions)
	o.warmReads = bench.GenerateReads(bench.Stream(bench.StreamWarmup), sz.Warmup, sz.Sessions)
	return o
}

// measure runs op(i) for i in [0, n) on clients concurrent clients, each taking the next i.
// Latencies count successful operations only; failures are counted, and the first is kept.
func measure(ctx context.Context, clients, n int, op func(ctx context.Context, i int) error) bench.Phase {
	var next atomic.Int64
	lat := make([][]time.Duration, clients)
	var mu sync.Mutex
	errs := 0
	first := ""
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				t0 := time.Now()
				err := op(ctx, i)
				d := time.Since(t0)
				if err != nil {
					mu.Lock()
					errs++
					if first == "" {
						first = err.Error()
					}
					mu.Unlock()
					continue
				}
				lat[w] = append(lat[w], d)
			}
		}()
	}
	wg.Wait()
	return phase(clients, n, errs, first, time.Since(start), slices.Concat(lat...))
}

func phase(clients, ops, errs int, first string, elapsed time.Duration, lat []time.Duration) bench.Phase {
	p := bench.Phase{Clients: clients, Ops: ops, Errors: errs, Seconds: elapsed.Seconds(),
		Latency: bench.Summarize(lat), FirstError: first}
	if p.Seconds > 0 {
		p.OpsPerSec = float64(len(lat)) / p.Seconds
	}
	return p
}

// warmups is the number of warm-up operations for clients clients: at least four each, so that
// every client's connection is open and used before the measurement.
func warmups(n, clients int) int { return max(n, 4*clients) }

func turnOp(t target, turns []bench.Turn) func(context.Context, int) error {
	return func(ctx context.Context, i int) error {
		tr := turns[i%len(turns)]
		return t.commit(ctx, bench.SessionID(tr.Session), tr.User, tr.Assistant)
	}
}

// runW1 commits the W1 turns: first sequentially, then the next ones with sz.Clients clients.
// The CPU each phase costs, this process' and the server's, is read when the server is on
// this machine (server not nil).
func runW1(ctx context.Context, t target, ops *opsData, sz bench.Sizes, server *serverCPU) bench.W1 {
	measure(ctx, 1, len(ops.warmTurns), turnOp(t, ops.warmTurns))
	var r bench.W1
	cpu := startCPU(server)
	r.Sequential = measure(ctx, 1, len(ops.seqTurns), turnOp(t, ops.seqTurns))
	r.SequentialCPU = cpu.per1000(len(ops.seqTurns))
	// Every client's connection is open before the clock starts.
	measure(ctx, sz.Clients, warmups(len(ops.warmTurns), sz.Clients), turnOp(t, ops.warmTurns))
	cpu = startCPU(server)
	r.Concurrent = measure(ctx, sz.Clients, len(ops.concTurns), turnOp(t, ops.concTurns))
	r.ConcurrentCPU = cpu.per1000(len(ops.concTurns))
	return r
}

// runW2 reads the last 12 messages of the W2 sessions, sequentially.
func runW2(ctx context.Context, t target, ops *opsData, _ bench.Sizes) bench.W2 {
	read := func(sessions []int) func(context.Context, int) error {
		return func(ctx context.Context, i int) error { return t.context(ctx, bench.SessionID(sessions[i])) }
	}
	measure(ctx, 1, len(ops.warmReads), read(ops.warmReads))
	return bench.W2{Sequential: measure(ctx, 1, len(ops.reads), read(ops.reads))}
}

// runGrowth reads the growth sessions of each length round-robin, sequentially.
func runGrowth(ctx context.Context, t target, sz bench.Sizes) bench.W2Growth {
	var r bench.W2Growth
	for li, n := range sz.GrowthLengths {
		first := li * sz.GrowthPerLength
		read := func(ctx context.Context, i int) error {
			return t.context(ctx, bench.GrowthSessionID(first+i%sz.GrowthPerLength))
		}
		measure(ctx, 1, sz.GrowthPerLength, read) // warm-up: each session once
		r.Points = append(r.Points, bench.GrowthPoint{Length: n, Phase: measure(ctx, 1, sz.GrowthReads, read)})
	}
	if len(r.Points) > 1 && r.Points[0].Phase.Latency.P50MS > 0 {
		r.P50Ratio = r.Points[len(r.Points)-1].Phase.Latency.P50MS / r.Points[0].Phase.Latency.P50MS
	}
	return r
}

// runW3 asks every query for the top 10 of its user, sequentially then concurrently, and
// scores the sequential answers against an exact search.
func runW3(ctx context.Context, t target, corpus *bench.Corpus, sz bench.Sizes, hybrid bool) bench.W3 {
	queries := bench.GenerateQueries(bench.Stream(bench.StreamQueries), sz.Queries, corpus)
	warm := bench.GenerateQueries(bench.Stream(bench.StreamWarmup), sz.WarmupQueries, corpus)
	results := make([][]string, len(queries))
	ask := func(qs []bench.Query, mode string, keep bool) func(context.Context, int) error {
		return func(ctx context.Context, i int) error {
			got, err := t.recall(ctx, bench.UserID(qs[i].User), qs[i].Text, mode)
			if keep {
				results[i] = got
			}
			return err
		}
	}
	measure(ctx, 1, len(warm), ask(warm, memory.ModeVector, false))
	r := bench.W3{Memories: corpus.Users * corpus.PerUser, Users: corpus.Users, Mode: memory.ModeVector}
	r.Sequential = measure(ctx, 1, len(queries), ask(queries, memory.ModeVector, true))
	r.RecallAt10 = recallAt10(corpus, queries, results)
	measure(ctx, sz.Clients, warmups(len(warm), sz.Clients), func(ctx context.Context, i int) error {
		return ask(warm, memory.ModeVector, false)(ctx, i%len(warm))
	})
	r.Concurrent = measure(ctx, sz.Clients, len(queries), ask(queries, memory.ModeVector, false))
	if hybrid {
		measure(ctx, 1, len(warm), ask(warm, memory.ModeHybrid, false))
		h := measure(ctx, 1, len(queries), ask(queries, memory.ModeHybrid, false))
		r.Hybrid = &h
	}
	return r
}

// recallAt10 is the mean share of each query's answer that belongs to the exact top 10 of
// its user's memories by cosine distance (within 1e-6 of the 10th distance, or closer).
func recallAt10(corpus *bench.Corpus, queries []bench.Query, results [][]string) float64 {
	if len(queries) == 0 {
		return 0
	}
	var emb bench.Embedder
	k := min(recallK, corpus.PerUser)
	var total float64
	for i, q := range queries {
		qv := emb.Vector(q.Text)
		ds := make([]float64, corpus.PerUser)
		for m := range ds {
			ds[m] = bench.CosineDistance(qv, emb.Vector(corpus.Text(q.User, m)))
		}
		slices.Sort(ds)
		tenth := ds[k-1]
		hits := 0
		for j, c := range results[i] {
			if j >= k {
				break
			}
			if bench.CosineDistance(qv, emb.Vector(c)) <= tenth+1e-6 {
				hits++
			}
		}
		total += float64(hits) / float64(k)
	}
	return total / float64(len(queries))
}

// runW5 runs sz.W5Clients clients against the HTTP server for sz.W5Seconds: 80% get-context,
// 20% commit-turn, the operations drawn from the ops stream after W2's.
func runW5(ctx context.Context, h *httpTarget, ops *opsData, sz bench.Sizes) bench.W5 {
	type draw struct {
		read            bool
		session         int
		user, assistant string
	}
	next := func() draw {
		ops.mu.Lock()
		defer ops.mu.Unlock()
		d := draw{read: ops.rest.Float() < 0.8, session: ops.rest.Int(sz.Sessions)}
		if !d.read {
			d.user = bench.Text(ops.rest, bench.MessageWords)
			d.assistant = bench.Text(ops.rest, bench.MessageWords)
		}
		return d
	}
	// Warm-up: every client's connection open and used.
	measure(ctx, sz.W5Clients, warmups(len(ops.warmReads), sz.W5Clients), func(ctx context.Context, i int) error {
		return h.context(ctx, bench.SessionID(ops.warmReads[i%len(ops.warmReads)]))
	})
	var mu sync.Mutex
	var reads, commits []time.Duration
	byStatus := map[string]int{}
	errs := 0
	first := ""
	dur := time.Duration(sz.W5Seconds * float64(time.Second))
	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for w := 0; w < sz.W5Clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var myReads, myCommits []time.Duration
			for ctx.Err() == nil && time.Now().Before(deadline) {
				d := next()
				t0 := time.Now()
				var err error
				if d.read {
					err = h.context(ctx, bench.SessionID(d.session))
				} else {
					err = h.commit(ctx, bench.SessionID(d.session), d.user, d.assistant)
				}
				el := time.Since(t0)
				if err != nil {
					key := "other"
					var se *statusError
					if errors.As(err, &se) {
						key = strconv.Itoa(se.status)
					}
					mu.Lock()
					errs++
					byStatus[key]++
					if first == "" {
						first = err.Error()
					}
					mu.Unlock()
					continue
				}
				if d.read {
					myReads = append(myReads, el)
				} else {
					myCommits = append(myCommits, el)
				}
			}
			mu.Lock()
			reads = append(reads, myReads...)
			commits = append(commits, myCommits...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	ok := len(reads) + len(commits)
	r := bench.W5{
		Clients: sz.W5Clients, Seconds: elapsed, Requests: ok + errs, Errors: errs,
		Latency: bench.Summarize(slices.Concat(reads, commits)), GetContext: bench.Summarize(reads),
		CommitTurn: bench.Summarize(commits), ErrorsByStatus: byStatus, FirstError: first,
	}
	if elapsed > 0 {
		r.RequestsPerSec = float64(r.Requests) / elapsed
	}
	return r
}
