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
	for i, step := range sweepSteps {
		for {
			if time.Now().After(p.Deadline) {
				// More only when something is left: a sweep of nothing must not ask for another.
				err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
					for _, rest := range sweepSteps[i:] {
						b.Queue("select exists (select 1 from " + rest.expired + ")").QueryRow(func(row pgx.Row) error {
							var left bool
							err := row.Scan(&left)
							res.More = res.More || left
							return err
						})
					}
				})
				if err != nil {
					return res, fmt.Errorf("look for expired rows: %w", err)
				}
				return res, nil
			}
			var deleted int64
			err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
				b.Queue(step.del, p.BatchSize).Exec(func(tag pgconn.CommandTag) error {
					deleted = tag.RowsAffected()
					return nil
				})
			})
			if err != nil {
				return res, fmt.Errorf("sweep: %w", err)
			}
			res.Batches++
			*step.count(&res.Deleted) += deleted
			if deleted < int64(p.BatchSize) {
				break
			}
		}
	}
	more, err := s.capHistories(ctx, p, &res)
	res.More = res.More || more
	if err != nil {
		return res, err
	}
	return res, s.foldMessageWords(ctx, p)
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
