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
	on, err := store.Open(ctx, store.Config{DatabaseURL: db.url, MaxConns: poolSize, Embedder: bench.Embedder{},
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
	offCfg.MaxConns, offCfg.Embedder = poolSize, bench.Embedder{}
	onCfg.MaxConns, onCfg.Embedder = poolSize, bench.Embedder{}
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
	kick := app.NewKick()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	r, err := piiredact.New("agentmem-bench-salt-" + uuid.NewString())
	if err != nil {
		rec.Close()
		return nil, err
	}
	a := app.New(st, log, app.Config{Jobs: jc, Adapters: map[string]adapter.Adapter{adapter.Webhook: wh}, Notifier: kick,
		Redactor: r})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.DeliveryLoop(ctx, kick, 100*time.Millisecond) }()
	user := auth.Principal{Role: auth.RoleUser, UserID: bench.ChatUserID}
	agent := benchAgent
	return &deliveryRig{app: a, rec: rec, stop: func() { cancel(); <-done; rec.Close() },
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
	c, err := db.admin(ctx)
	if err != nil {
		return d, err
	}
	defer c.Close(ctx)
	var attempts, done int64
	if err := c.QueryRow(ctx, `select coalesce(sum(attempts), 0), count(*) filter (where status = 'done') from agentmem.jobs`).
		Scan(&attempts, &done); err != nil {
		return d, err
	}
	d.Attempts, d.FailedAttempts = int(attempts), int(attempts-done)
	if attempts > 0 {
		d.FailedShare = float64(attempts-done) / float64(attempts)
	}
	return d, nil
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
