package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/mem0"
	"github.com/agentmem/agentmem/shared/adapter/mem0/mem0test"
	"github.com/agentmem/agentmem/shared/adapter/webhook"
	"github.com/agentmem/agentmem/shared/adapter/webhook/webhooktest"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	piiredact "github.com/agentmem/agentmem/shared/redact"
	"github.com/agentmem/agentmem/shared/store"
)

// outageJobs configures delivery during the outage: retries every few seconds at most, so the
// backlog drains soon after the receiver is back.
var outageJobs = app.JobsConfig{MaxAttempts: 100, BackoffBase: 250 * time.Millisecond, BackoffMax: 4 * time.Second}

// runOutbox measures the orchestrator: what the outbox adds to a commit, how soon a commit
// reaches a webhook receiver, and what an outage of the receiver loses.
func runOutbox(ctx context.Context, cfg Config, db *benchDB, ops *opsData) (*bench.Outbox, error) {
	sz := cfg.Sizes
	out := &bench.Outbox{}
	on, err := store.Open(ctx, store.Config{DatabaseURL: db.url, MaxConns: poolSize,
		Adapters: []string{adapter.Webhook}})
	if err != nil {
		return nil, err
	}
	defer on.Close()

	// 1. The cost of the outbox: W1's sequential commits, with no adapter and with one; then
	// the same without waiting for the WAL to reach the disk, which leaves the work the
	// outbox's statement adds without the disk's noise.
	for _, v := range []struct {
		what string
		url  string
		to   *bench.OutboxCost
	}{
		{"as configured", db.url, &out.Commit},
		{"with synchronous_commit off", withParam(db.url, "synchronous_commit", "off"), &out.CommitNoFlushWait},
	} {
		cfg.logf("outbox: commit-turn with 0 and 1 adapter %s, %d turns each, alternating", v.what, len(ops.seqTurns))
		c, err := commitCost(ctx, store.Config{DatabaseURL: v.url},
			store.Config{DatabaseURL: v.url, Adapters: []string{adapter.Webhook}}, ops)
		if err != nil {
			return nil, err
		}
		*v.to = c
		if err := clearJobs(ctx, db); err != nil {
			return nil, err
		}
	}

	// 1b. What fact extraction adds: its job, written in the commit's transaction; again
	// without the wait for the disk.
	for _, v := range []struct {
		what string
		url  string
		to   *bench.ExtractionCost
	}{
		{"as configured", db.url, &out.Extraction},
		{"with synchronous_commit off", withParam(db.url, "synchronous_commit", "off"), &out.ExtractionNoFlushWait},
	} {
		cfg.logf("outbox: commit-turn with fact extraction off and on %s, %d turns each, alternating", v.what, len(ops.seqTurns))
		x, err := commitCost(ctx, store.Config{DatabaseURL: v.url}, store.Config{DatabaseURL: v.url, ExtractFacts: true}, ops)
		if err != nil {
			return nil, err
		}
		*v.to = bench.ExtractionCost{Off: x.NoAdapter, On: x.OneAdapter, AddedP50MS: x.AddedP50MS,
			PairedMedianMS: x.PairedMedianMS}
		if err := clearJobs(ctx, db); err != nil {
			return nil, err
		}
	}

	// 2. From commit to the receiver, with delivery started by the commit.
	d, err := runDelivery(ctx, cfg, db, on, ops)
	if err != nil {
		return nil, err
	}
	out.Delivery = d
	if err := clearJobs(ctx, db); err != nil {
		return nil, err
	}

	// 2b. The same to Mem0's API: a store writing the Mem0 adapter's jobs.
	m, err := runMem0Delivery(ctx, cfg, db, ops)
	if err != nil {
		return nil, err
	}
	out.Mem0Delivery = &m
	if err := clearJobs(ctx, db); err != nil {
		return nil, err
	}

	// 3. The receiver down under W1 load, then back.
	o, err := runOutage(ctx, cfg, db, on, ops, sz)
	if err != nil {
		return nil, err
	}
	out.Outage = o
	return out, clearJobs(ctx, db)
}

// withParam is a database URL with one more query parameter, which pgx sends as a run-time
// parameter of every connection.
func withParam(raw, key, value string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// commitCost commits W1's sequential turns through a store configured as offCfg (no adapter)
// and one configured as onCfg (the webhook adapter, or fact extraction), turn by turn, each
// first every other time, so that a slow moment of the shared machine falls on both alike.
func commitCost(ctx context.Context, offCfg, onCfg store.Config, ops *opsData) (bench.OutboxCost, error) {
	var c bench.OutboxCost
	offCfg.MaxConns, onCfg.MaxConns = poolSize, poolSize
	off, err := store.Open(ctx, offCfg)
	if err != nil {
		return c, err
	}
	defer off.Close()
	on, err := store.Open(ctx, onCfg)
	if err != nil {
		return c, err
	}
	defer on.Close()
	tOff, tOn := newStoreTarget(off), newStoreTarget(on)
	measure(ctx, 1, len(ops.warmTurns), turnOp(tOff, ops.warmTurns))
	measure(ctx, 1, len(ops.warmTurns), turnOp(tOn, ops.warmTurns))
	var latOff, latOn, diffs []time.Duration
	var errOff, errOn int
	firstErr := ""
	start := time.Now()
	for i, tr := range ops.seqTurns {
		variants := []struct {
			t    *storeTarget
			lat  *[]time.Duration
			errs *int
		}{{tOff, &latOff, &errOff}, {tOn, &latOn, &errOn}}
		if i%2 == 1 {
			variants[0], variants[1] = variants[1], variants[0]
		}
		took := map[*storeTarget]time.Duration{}
		for _, v := range variants {
			t0 := time.Now()
			if err := v.t.commit(ctx, bench.SessionID(tr.Session), tr.User, tr.Assistant); err != nil {
				*v.errs++
				if firstErr == "" {
					firstErr = err.Error()
				}
				continue
			}
			took[v.t] = time.Since(t0)
			*v.lat = append(*v.lat, took[v.t])
		}
		if len(took) == 2 {
			diffs = append(diffs, took[tOn]-took[tOff])
		}
	}
	elapsed := time.Since(start) / 2
	c.NoAdapter = phase(1, len(ops.seqTurns), errOff, firstErr, elapsed, latOff)
	c.OneAdapter = phase(1, len(ops.seqTurns), errOn, firstErr, elapsed, latOn)
	c.AddedP50MS = c.OneAdapter.Latency.P50MS - c.NoAdapter.Latency.P50MS
	if len(diffs) > 0 {
		slices.Sort(diffs)
		c.PairedMedianMS = float64(diffs[len(diffs)/2]) / float64(time.Millisecond)
	}
	return c, nil
}

// clearJobs empties the outbox between the parts.
func clearJobs(ctx context.Context, db *benchDB) error {
	c, err := db.admin(ctx)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "truncate agentmem.jobs")
	return err
}

// deliveryRig is an app that commits with the webhook adapter enabled and delivers in a loop
// of its own, started by each commit, to a local receiver.
type deliveryRig struct {
	app    *app.App
	rec    *webhooktest.Receiver
	stop   func()
	commit func(ctx context.Context, tr bench.Turn) (int64, error)
}

func newDeliveryRig(st *store.Store, jc app.JobsConfig) (*deliveryRig, error) {
	secret := webhooktest.NewSecret()
	rec, err := webhooktest.NewReceiver(secret)
	if err != nil {
		return nil, err
	}
	wh, err := webhook.New(webhook.Config{URL: rec.URL, Secret: secret})
	if err != nil {
		rec.Close()
		return nil, err
	}
	rig, err := newAdapterRig(st, jc, wh)
	if err != nil {
		rec.Close()
		return nil, err
	}
	rig.rec = rec
	stop := rig.stop
	rig.stop = func() { stop(); rec.Close() }
	return rig, nil
}

// newAdapterRig is a deliveryRig delivering to ad, without a receiver of its own.
func newAdapterRig(st *store.Store, jc app.JobsConfig, ad adapter.Adapter) (*deliveryRig, error) {
	kick := app.NewKick()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	r, err := piiredact.New("agentmem-bench-salt-" + uuid.NewString())
	if err != nil {
		return nil, err
	}
	a := app.New(st, log, app.Config{Embedder: bench.Embedder{}, Jobs: jc, Adapters: map[string]adapter.Adapter{ad.Name(): ad}, Notifier: kick,
		Redactor: r})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.DeliveryLoop(ctx, kick, 100*time.Millisecond) }()
	user := auth.Principal{Role: auth.RoleUser, UserID: bench.ChatUserID.String()}
	agent := benchAgent
	return &deliveryRig{app: a, stop: func() { cancel(); <-done },
		commit: func(ctx context.Context, tr bench.Turn) (int64, error) {
			sid := bench.SessionID(tr.Session).String()
			u, _ := json.Marshal(tr.User)
			as, _ := json.Marshal(tr.Assistant)
			ur, ar := "user", "assistant"
			res, err := a.CommitTurn(ctx, user, app.CommitTurnInput{SessionID: &sid, Agent: &agent,
				Messages: []app.MessageInput{{Role: &ur, Content: u}, {Role: &ar, Content: as}}})
			if err != nil {
				return 0, err
			}
			return res.Messages[0].Seq, nil
		}}, nil
}

// runDelivery commits turns one after the other, a few milliseconds apart, and times each from
// the commit's answer to the receiver's receipt of its event.
func runDelivery(ctx context.Context, cfg Config, db *benchDB, st *store.Store, ops *opsData) (bench.Delivery, error) {
	rig, err := newDeliveryRig(st, app.JobsConfig{})
	if err != nil {
		return bench.Delivery{}, err
	}
	defer rig.stop()
	turns := ops.warmTurns
	if n := max(cfg.Sizes.Reads/2, 20); len(ops.concTurns) >= n {
		turns = ops.concTurns[:n]
	}
	cfg.logf("outbox: delivery delay, %d commits 5 ms apart", len(turns))
	type key struct {
		session uuid.UUID
		seq     int64
	}
	acked := map[key]time.Time{}
	errs := 0
	for _, tr := range turns {
		seq, err := rig.commit(ctx, tr)
		if err != nil {
			errs++
			continue
		}
		acked[key{bench.SessionID(tr.Session), seq}] = time.Now()
		time.Sleep(5 * time.Millisecond)
	}
	rig.rec.WaitFor(len(acked), 30*time.Second)
	var delays []time.Duration
	for _, ev := range rig.rec.Events() {
		if ev.SessionID == nil || ev.SeqFrom == nil {
			continue
		}
		at, ok := acked[key{*ev.SessionID, *ev.SeqFrom}]
		if !ok {
			continue
		}
		_, got, _ := rig.rec.Event(ev.ID)
		delays = append(delays, max(got.Sub(at), 0))
	}
	d := bench.Delivery{Commits: len(turns), CommitErrors: errs, Delivered: len(delays), Delay: bench.Summarize(delays)}
	err = countAttempts(ctx, db, &d)
	return d, err
}

// countAttempts sets d's delivery attempts and failures from the jobs table, once no job is
// in its first attempt any more.
func countAttempts(ctx context.Context, db *benchDB, d *bench.Delivery) error {
	c, err := db.admin(ctx)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	// A delivery's receipt comes before its job is recorded done: wait (a little) for the
	// last ones, so that one still being recorded does not count as failed.
	var attempts, done, open int64
	for until := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := c.QueryRow(ctx, `select coalesce(sum(attempts), 0), count(*) filter (where status = 'done'),
			count(*) filter (where status = 'running' or (status = 'pending' and attempts = 0)) from agentmem.jobs`).
			Scan(&attempts, &done, &open); err != nil {
			return err
		}
		if open == 0 || time.Now().After(until) {
			break
		}
	}
	d.Attempts, d.FailedAttempts = int(attempts), int(attempts-done)
	if attempts > 0 {
		d.FailedShare = float64(attempts-done) / float64(attempts)
	}
	return nil
}

// runMem0Delivery is runDelivery to a local server speaking Mem0's API, through a store that
// writes the Mem0 adapter's jobs: from the commit's answer to the arrival of its add-memories
// request (claim, read, redact, POST with Token auth).
func runMem0Delivery(ctx context.Context, cfg Config, db *benchDB, ops *opsData) (bench.Delivery, error) {
	st, err := store.Open(ctx, store.Config{DatabaseURL: db.url, MaxConns: poolSize,
		Adapters: []string{adapter.Mem0}})
	if err != nil {
		return bench.Delivery{}, err
	}
	defer st.Close()
	fake := mem0test.New("m0-bench-key")
	defer fake.Close()
	m, err := mem0.New(mem0.Config{APIKey: "m0-bench-key", URL: fake.URL})
	if err != nil {
		return bench.Delivery{}, err
	}
	rig, err := newAdapterRig(st, app.JobsConfig{}, m)
	if err != nil {
		return bench.Delivery{}, err
	}
	defer rig.stop()
	turns := ops.warmTurns
	if n := max(cfg.Sizes.Reads/2, 20); len(ops.concTurns) >= n {
		turns = ops.concTurns[:n]
	}
	cfg.logf("outbox: delivery delay to Mem0's API, %d commits 5 ms apart", len(turns))
	acked := map[string]time.Time{} // run_id/seq
	errs := 0
	for _, tr := range turns {
		seq, err := rig.commit(ctx, tr)
		if err != nil {
			errs++
			continue
		}
		acked[fmt.Sprintf("%s/%d", bench.SessionID(tr.Session), seq)] = time.Now()
		time.Sleep(5 * time.Millisecond)
	}
	var delays []time.Duration
	for wait := time.Now().Add(30 * time.Second); time.Now().Before(wait); time.Sleep(50 * time.Millisecond) {
		delays = delays[:0]
		for _, r := range fake.Requests() {
			var add mem0.AddRequest
			if r.Path != "/v1/memories/" || r.Status != 200 || json.Unmarshal(r.Body, &add) != nil {
				continue
			}
			from, _ := add.Metadata["agentmem_seq_from"].(float64)
			if at, ok := acked[fmt.Sprintf("%s/%d", add.RunID, int64(from))]; ok {
				delays = append(delays, max(r.At.Sub(at), 0))
			}
		}
		if len(delays) >= len(acked) {
			break
		}
	}
	d := bench.Delivery{Commits: len(turns), CommitErrors: errs, Delivered: len(delays), Delay: bench.Summarize(delays)}
	err = countAttempts(ctx, db, &d)
	return d, err
}

// runOutage takes the receiver down, commits W1's concurrent turns meanwhile (sz.Clients
// clients), keeps it down for the outage's length, brings it back, and waits until every job
// is done; then checks each change's event against what the receiver kept.
func runOutage(ctx context.Context, cfg Config, db *benchDB, st *store.Store, ops *opsData, sz bench.Sizes) (bench.Outage, error) {
	down := time.Duration(sz.OutageSeconds * float64(time.Second))
	rig, err := newDeliveryRig(st, outageJobs)
	if err != nil {
		return bench.Outage{}, err
	}
	defer rig.stop()
	o := bench.Outage{DownSeconds: down.Seconds(), Clients: sz.Clients, Turns: len(ops.concTurns)}
	cfg.logf("outbox: receiver down for %.0f s while %d clients commit %d turns", down.Seconds(), sz.Clients, len(ops.concTurns))
	rig.rec.Down(true)
	wentDown := time.Now()
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range sz.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ops.concTurns) || ctx.Err() != nil {
					return
				}
				if _, err := rig.commit(ctx, ops.concTurns[i]); err != nil {
					mu.Lock()
					o.CommitErrors++
					if o.FirstError == "" {
						o.FirstError = err.Error()
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-time.After(time.Until(wentDown.Add(down))):
	case <-ctx.Done():
		return o, ctx.Err()
	}
	requests, _, _ := rig.rec.Stats()
	o.RefusedWhileDown = requests
	rig.rec.Down(false)
	back := time.Now()

	c, err := db.admin(ctx)
	if err != nil {
		return o, err
	}
	defer c.Close(ctx)
	for {
		var open int
		if err := c.QueryRow(ctx, `select count(*) from agentmem.jobs where status in ('pending', 'running')`).Scan(&open); err != nil {
			return o, err
		}
		if open == 0 {
			break
		}
		if time.Since(back) > 5*time.Minute {
			return o, fmt.Errorf("outage: %d jobs still open 5 minutes after the receiver came back", open)
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return o, ctx.Err()
		}
	}
	o.DrainSeconds = time.Since(back).Seconds()
	rows, err := c.Query(ctx, `select event_id, status from agentmem.jobs`)
	if err != nil {
		return o, err
	}
	want := map[uuid.UUID]bool{}
	var id uuid.UUID
	var status string
	if _, err := pgx.ForEachRow(rows, []any{&id, &status}, func() error {
		want[id] = true
		o.Jobs++
		if status == store.JobDead {
			o.Dead++
		}
		return nil
	}); err != nil {
		return o, err
	}
	got := rig.rec.Events()
	for _, ev := range got {
		if want[ev.ID] {
			delete(want, ev.ID)
			o.Delivered++
		}
	}
	o.Lost = len(want)
	_, o.Rejected, o.Duplicates = rig.rec.Stats()
	return o, nil
}
