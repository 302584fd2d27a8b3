package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// sweepSessionSize is the number of messages of each W4 session.
const sweepSessionSize = 100

// W4's rows belong to sessions and users of their own, apart from the chat data.
const (
	sweepUser        = "00000000-0000-4000-a000-000000000001"
	sweepExpiredPfx  = "00000000-0000-4000-a000-"
	sweepLivePfx     = "00000000-0000-4000-b000-"
	sweepInsertChunk = 100_000
)

// loadSweep inserts W4's expired and live messages (and their sessions) server-side with
// generate_series, as the superuser. Expired rows come first, as old rows do in a real table.
// Their content is a 160-character filler: the specification leaves it open, and the sweep
// never reads it.
func loadSweep(ctx context.Context, db *benchDB, expired, live int) error {
	c, err := db.admin(ctx)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	for _, part := range []struct {
		prefix  string
		rows    int
		expires string
	}{
		{sweepExpiredPfx, expired, "now() - interval '1 hour'"},
		{sweepLivePfx, live, "now() + interval '30 days'"},
	} {
		if part.rows == 0 {
			continue
		}
		sessions := (part.rows + sweepSessionSize - 1) / sweepSessionSize
		_, err := c.Exec(ctx, fmt.Sprintf(`
			insert into agentmem.sessions (id, tenant_id, user_id, agent, last_seq, created_at, last_active_at, expires_at)
			select ($1 || lpad(s::text, 12, '0'))::uuid, '', $2::uuid, $3, %d, now() - interval '31 days',
			       now() - interval '2 hours', %s
			from generate_series(0, $4::int - 1) s`, sweepSessionSize, part.expires),
			part.prefix, sweepUser, benchAgent, sessions)
		if err != nil {
			return fmt.Errorf("insert sweep sessions: %w", err)
		}
		for lo := 0; lo < part.rows; lo += sweepInsertChunk {
			hi := min(lo+sweepInsertChunk, part.rows) - 1
			_, err := c.Exec(ctx, fmt.Sprintf(`
				insert into agentmem.messages (session_id, seq, id, tenant_id, user_id, agent, role, content,
				  token_estimate, created_at, expires_at)
				select ($1 || lpad((i / %[1]d)::text, 12, '0'))::uuid, i %% %[1]d + 1, gen_random_uuid(), '', $2::uuid, $3,
				       case when i %% 2 = 0 then 'user' else 'assistant' end, repeat(md5(i::text), 5), 44,
				       now() - interval '31 days', %[2]s
				from generate_series($4::int, $5::int) i`, sweepSessionSize, part.expires),
				part.prefix, sweepUser, benchAgent, lo, hi)
			if err != nil {
				return fmt.Errorf("insert sweep messages: %w", err)
			}
		}
	}
	return settle(ctx, c, "agentmem.sessions, agentmem.messages")
}

// runW4 loads the sweep data, measures W1-style commits by sz.Clients clients without a sweep,
// then sweeps to completion while the same clients keep committing.
func runW4(ctx context.Context, cfg Config, db *benchDB, st *store.Store, ops *opsData, sz bench.Sizes) (*bench.W4, error) {
	t0 := time.Now()
	if err := loadSweep(ctx, db, sz.SweepExpired, sz.SweepLive); err != nil {
		return nil, err
	}
	r := &bench.W4{ExpiredRows: sz.SweepExpired, LiveRows: sz.SweepLive, LoadSeconds: time.Since(t0).Seconds(), BatchSize: sz.SweepBatch}
	cfg.logf("W4: loaded in %.1fs; commits without a sweep", r.LoadSeconds)
	t := newStoreTarget(st)
	turns := ops.concTurns
	r.CommitsWithout = measure(ctx, sz.Clients, max(sz.SweepBaseline, 1), turnOp(t, turns))

	cfg.logf("W4: sweeping while %d clients commit", sz.Clients)
	var done atomic.Bool
	var sweepRes memory.SweepResult
	var sweepErr error
	var sweepTime time.Duration
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		s0 := time.Now()
		sweepRes, sweepErr = st.Sweep(ctx, store.SweepParams{BatchSize: sz.SweepBatch, Deadline: time.Now().Add(2 * time.Hour)})
		sweepTime = time.Since(s0)
	}()
	lat := make([][]time.Duration, sz.Clients)
	var mu sync.Mutex
	errs, ops2 := 0, 0
	first := ""
	var next atomic.Int64
	start := time.Now()
	var cw sync.WaitGroup
	for w := 0; w < sz.Clients; w++ {
		cw.Add(1)
		go func() {
			defer cw.Done()
			op := turnOp(t, turns)
			for !done.Load() && ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				c0 := time.Now()
				err := op(ctx, i)
				d := time.Since(c0)
				mu.Lock()
				ops2++
				if err != nil {
					errs++
					if first == "" {
						first = err.Error()
					}
				}
				mu.Unlock()
				if err == nil {
					lat[w] = append(lat[w], d)
				}
			}
		}()
	}
	wg.Wait()
	cw.Wait()
	r.CommitsDuring = phase(sz.Clients, ops2, errs, first, time.Since(start), slices.Concat(lat...))
	if sweepErr != nil {
		r.SweepErrors = 1
		cfg.logf("W4: sweep failed: %v", sweepErr)
	}
	r.SweepSeconds = sweepTime.Seconds()
	d := sweepRes.Deleted
	r.Deleted = bench.SweepCounts{Messages: d.Messages, Memories: d.Memories, Sessions: d.Sessions, IdempotencyKeys: d.IdempotencyKeys}
	r.RowsDeleted = d.Messages + d.Memories + d.Sessions + d.IdempotencyKeys
	r.Batches = sweepRes.Batches
	if r.SweepSeconds > 0 {
		r.RowsPerSec = float64(r.RowsDeleted) / r.SweepSeconds
	}
	if r.CommitsWithout.Latency.P99MS > 0 {
		r.P99Ratio = r.CommitsDuring.Latency.P99MS / r.CommitsWithout.Latency.P99MS
	}
	return r, nil
}
