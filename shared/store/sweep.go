package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SweepParams bounds one sweep.
type SweepParams struct {
	// DryRun counts what is expired and deletes nothing.
	DryRun bool
	// BatchSize is the most rows one statement deletes.
	BatchSize int
	// Deadline is when the sweep stops starting batches.
	Deadline time.Time
	// History is the history cap, applied after the expired rows are deleted; its zero value
	// caps only the sessions that have a cap of their own. A dry run caps nothing.
	History memory.HistoryCap
	// DefaultRetention, when set, is the deployment's default retention: before deleting, the
	// sweep re-stamps the rows stamped with another default (see retention.go). A dry run
	// re-stamps nothing.
	DefaultRetention time.Duration
}

// sweepSteps delete expired rows in batches. Each batch is its own short transaction that
// skips rows a live request has locked (but for rate counters, see there), so the sweep never makes a commit or a read wait.
// Sessions go after their messages: only sessions left empty are deleted.
var sweepSteps = []struct {
	count func(*memory.SweepCounts) *int64
	del   string
	// expired is the FROM clause of the rows a dry run counts and a sweep out of time
	// looks for.
	expired string
}{
	{
		func(c *memory.SweepCounts) *int64 { return &c.Messages },
		`with doomed as (
		   select tableoid, ctid from agentmem.messages where expires_at <= now() limit $1 for update skip locked)
		 delete from agentmem.messages m using doomed where m.tableoid = doomed.tableoid and m.ctid = doomed.ctid`,
		`agentmem.messages where expires_at <= now()`,
	},
	{
		func(c *memory.SweepCounts) *int64 { return &c.ArchivedMessages },
		`with doomed as (
		   select tableoid, ctid from agentmem.messages_archive where expires_at <= now() limit $1 for update skip locked)
		 delete from agentmem.messages_archive m using doomed where m.tableoid = doomed.tableoid and m.ctid = doomed.ctid`,
		`agentmem.messages_archive where expires_at <= now()`,
	},
	{
		func(c *memory.SweepCounts) *int64 { return &c.Memories },
		`with doomed as (
		   select user_id, id from agentmem.memories where expires_at <= now() limit $1 for update skip locked)
		 delete from agentmem.memories m using doomed where m.user_id = doomed.user_id and m.id = doomed.id`,
		`agentmem.memories where expires_at <= now()`,
	},
	{
		func(c *memory.SweepCounts) *int64 { return &c.Sessions },
		`with doomed as (
		   select s.user_id, s.id from agentmem.sessions s
		   where s.expires_at <= now()
		     and not exists (select 1 from agentmem.messages m where m.user_id = s.user_id and m.session_id = s.id)
		     and not exists (select 1 from agentmem.messages_archive a where a.user_id = s.user_id and a.session_id = s.id)
		   limit $1 for update of s skip locked)
		 delete from agentmem.sessions s using doomed where s.user_id = doomed.user_id and s.id = doomed.id`,
		`agentmem.sessions s where s.expires_at <= now()
		   and not exists (select 1 from agentmem.messages m where m.user_id = s.user_id and m.session_id = s.id
		                   and m.expires_at > now())
		   and not exists (select 1 from agentmem.messages_archive a where a.user_id = s.user_id and a.session_id = s.id
		                   and a.expires_at > now())`,
	},
	{
		func(c *memory.SweepCounts) *int64 { return &c.IdempotencyKeys },
		`with doomed as (
		   select tableoid, ctid from agentmem.idempotency_keys where expires_at <= now() limit $1 for update skip locked)
		 delete from agentmem.idempotency_keys k using doomed where k.tableoid = doomed.tableoid and k.ctid = doomed.ctid`,
		`agentmem.idempotency_keys where expires_at <= now()`,
	},
	{
		func(c *memory.SweepCounts) *int64 { return &c.RequestRates },
		// service_role may not update counters, so may not lock them (for update) either: a
		// counter a request holds is waited for (microseconds), and kept when the request
		// moved it to the future meanwhile (the condition is checked again on the new row).
		`with doomed as (
		   select tenant_id, user_id, bucket from agentmem.request_rates where tat <= now() limit $1)
		 delete from agentmem.request_rates r using doomed
		 where r.tenant_id = doomed.tenant_id and r.user_id = doomed.user_id and r.bucket = doomed.bucket
		   and r.tat <= now()`,
		`agentmem.request_rates where tat <= now()`,
	},
}

// Sweep deletes expired rows of every user. Each statement runs as service_role, which bypasses
// row-level security whatever login the service connects as (see batchAsServiceRole): it is for
// trusted callers only.
//
// When ctx has a deadline after p.Deadline (a Lambda invocation's), a batch still running then
// is cut short half-way through the time left between the two, so that the answer still comes
// in time: the batch, its own transaction, is rolled back, and the sweep answers what the
// batches before it did, with More set. A dry run cut short fails: its counts would be partial.
func (s *Store) Sweep(ctx context.Context, p SweepParams) (memory.SweepResult, error) {
	bctx := ctx
	if end, ok := ctx.Deadline(); ok && end.After(p.Deadline) {
		var cancel context.CancelFunc
		bctx, cancel = context.WithDeadline(ctx, p.Deadline.Add(end.Sub(p.Deadline)/2))
		defer cancel()
	}
	res, err := s.sweep(bctx, p)
	if err != nil && !p.DryRun && bctx != ctx && ctx.Err() == nil && ranOutOfTime(err) {
		res.More = true
		return res, nil
	}
	return res, err
}

func (s *Store) sweep(ctx context.Context, p SweepParams) (memory.SweepResult, error) {
	var res memory.SweepResult
	if p.DryRun {
		err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
			for _, step := range sweepSteps {
				b.Queue("select count(*) from " + step.expired).QueryRow(func(row pgx.Row) error {
					return row.Scan(step.count(&res.Deleted))
				})
			}
		})
		if err != nil {
			return res, fmt.Errorf("count expired: %w", err)
		}
		return res, nil
	}
	if p.DefaultRetention > 0 {
		more, err := s.restamp(ctx, p, &res)
		if err != nil {
			return res, err
		}
		res.More = more
	}
	more, done, err := s.inBatches(ctx, p, &res, len(sweepSteps),
		func(i int) (string, []any, *int64) {
			return sweepSteps[i].del, []any{p.BatchSize}, sweepSteps[i].count(&res.Deleted)
		},
		func(i int) (string, []any) { return "select exists (select 1 from " + sweepSteps[i].expired + ")", nil })
	res.More = res.More || more
	if err != nil {
		return res, fmt.Errorf("sweep: %w", err)
	}
	if !done {
		return res, nil
	}
	more, err = s.capHistories(ctx, p, &res)
	res.More = res.More || more
	if err != nil {
		return res, err
	}
	return res, s.foldMessageWords(ctx, p)
}

// inBatches runs n steps in order, each a statement (step(i): its SQL, arguments and the
// count its changed rows add to) run in batches, each batch its own transaction, until a batch
// changes fewer than p.BatchSize rows. When p.Deadline passes first it starts no other batch and
// asks, in one round trip, whether the steps not finished have rows left (left(i): a query of
// one boolean): more says so, and done is false. More only when something is left, so that a
// sweep of nothing never asks for another.
func (s *Store) inBatches(ctx context.Context, p SweepParams, res *memory.SweepResult, n int,
	step func(i int) (string, []any, *int64), left func(i int) (string, []any)) (more, done bool, err error) {
	for i := range n {
		q, args, count := step(i)
		for {
			if time.Now().After(p.Deadline) {
				err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
					for j := i; j < n; j++ {
						lq, largs := left(j)
						b.Queue(lq, largs...).QueryRow(func(row pgx.Row) error {
							var l bool
							err := row.Scan(&l)
							more = more || l
							return err
						})
					}
				})
				if err != nil {
					return false, false, fmt.Errorf("look for rows left: %w", err)
				}
				return more, false, nil
			}
			var changed int64
			err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
				b.Queue(q, args...).Exec(func(tag pgconn.CommandTag) error {
					changed = tag.RowsAffected()
					return nil
				})
			})
			if err != nil {
				return false, false, fmt.Errorf("batch: %w", err)
			}
			res.Batches++
			*count += changed
			if changed < int64(p.BatchSize) {
				break
			}
		}
	}
	return false, true, nil
}

// foldMessageWords counts the messages not yet counted for BM25 (those of scopes that hold
// fewer than the threshold at which a commit counts them), in batches, until none is left or
// the deadline passes.
func (s *Store) foldMessageWords(ctx context.Context, p SweepParams) error {
	for time.Now().Before(p.Deadline) {
		var folded int
		err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
			b.Queue("select agentmem.fold_message_words(null, null, null, $1)", p.BatchSize).QueryRow(func(row pgx.Row) error {
				return row.Scan(&folded)
			})
		})
		if err != nil {
			return fmt.Errorf("count message words: %w", err)
		}
		if folded < p.BatchSize {
			return nil
		}
	}
	return nil
}
