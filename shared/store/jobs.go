package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentmem/agentmem/shared/memory"
)

// The statuses of a job.
const (
	JobPending = "pending"
	JobRunning = "running"
	JobDone    = "done"
	JobDead    = "dead"
)

const jobColumns = `id, intent, adapter, status, attempts, next_attempt_at, last_error, created_at, updated_at,
	session_id, user_id`

func scanJob(r pgx.CollectableRow) (memory.Job, error) {
	var j memory.Job
	err := r.Scan(&j.ID, &j.Intent, &j.Adapter, &j.Status, &j.Attempts, &j.NextAttemptAt, &j.LastError,
		&j.CreatedAt, &j.UpdatedAt, &j.SessionID, &j.UserID)
	j.NextAttemptAt, j.CreatedAt, j.UpdatedAt = j.NextAttemptAt.UTC(), j.CreatedAt.UTC(), j.UpdatedAt.UTC()
	return j, err
}

// JobKey is the place of a job in a listing, which orders by creation time, then id, both
// descending.
type JobKey struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// ListJobsParams asks for one page of jobs.
type ListJobsParams struct {
	// Status and Adapter filter when not "".
	Status, Adapter string
	Limit           int
	// After, when set, continues after that job.
	After *JobKey
}

// JobPage is one page of jobs.
type JobPage struct {
	Jobs []memory.Job
	// Next continues the listing; nil on the last page.
	Next *JobKey
}

// ListJobs reads a page of every user's jobs, the newest first (service callers).
func (s *Store) ListJobs(ctx context.Context, p ListJobsParams) (JobPage, error) {
	out := JobPage{Jobs: []memory.Job{}}
	afterAt, afterID := afterArgs(p.After, func(k JobKey) (time.Time, uuid.UUID) { return k.CreatedAt, k.ID })
	// With a status, the listing reads jobs_status_created_idx in order: the condition is
	// written out rather than made optional in SQL, which would hide it from the planner.
	status := `$1::text = ''`
	if p.Status != "" {
		status = `status = $1::text`
	}
	err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		b.Queue(`
			select `+jobColumns+` from agentmem.jobs
			where `+status+` and ($2::text = '' or adapter = $2::text)
			  and ($3::timestamptz is null or (created_at, id) < ($3::timestamptz, $4::uuid))
			order by created_at desc, id desc
			limit $5`, p.Status, p.Adapter, afterAt, afterID, p.Limit+1).Query(func(rows pgx.Rows) error {
			var err error
			if out.Jobs, err = pgx.CollectRows(rows, scanJob); err != nil {
				return fmt.Errorf("list jobs: %w", err)
			}
			return nil
		})
	})
	if err != nil {
		return JobPage{}, err
	}
	out.Jobs, out.Next = pageOf(out.Jobs, p.Limit, func(j memory.Job) JobKey { return JobKey{CreatedAt: j.CreatedAt, ID: j.ID} })
	return out, nil
}

// GetJob reads one job.
func (s *Store) GetJob(ctx context.Context, id uuid.UUID) (memory.Job, error) {
	var out memory.Job
	err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		b.Queue(`select `+jobColumns+` from agentmem.jobs where id = $1`, id).Query(func(rows pgx.Rows) error {
			var err error
			out, err = pgx.CollectExactlyOneRow(rows, scanJob)
			return notFoundAs(err, "job not found")
		})
	})
	return out, err
}

// RetryJob makes a dead job pending again, due now, with its attempts counted afresh; any
// other status is a conflict.
func (s *Store) RetryJob(ctx context.Context, id uuid.UUID) (memory.Job, error) {
	var out memory.Job
	err := s.asServiceRole(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			update agentmem.jobs set status = 'pending', attempts = 0, next_attempt_at = now(), updated_at = now()
			where id = $1 and status = 'dead'
			returning `+jobColumns, id)
		if err != nil {
			return fmt.Errorf("retry job: %w", err)
		}
		out, err = pgx.CollectExactlyOneRow(rows, scanJob)
		if !isNotFound(err) {
			return err
		}
		var status string
		err = tx.QueryRow(ctx, `select status from agentmem.jobs where id = $1`, id).Scan(&status)
		if err = notFoundAs(err, "job not found"); err != nil {
			return fmt.Errorf("retry job: %w", err)
		}
		return conflictf("job is %s; only a dead job can be retried", status)
	})
	return out, err
}

// PurgeJobsParams says which finished jobs PurgeJobs deletes.
type PurgeJobsParams struct {
	// Status is JobDone or JobDead.
	Status string
	// OlderThan is how long ago a job must have finished (updated_at).
	OlderThan time.Duration
	// Limit is the most jobs deleted.
	Limit int
	// KeepAdapters' jobs must have finished KeepFor ago at least, whatever OlderThan says.
	KeepAdapters []string
	KeepFor      time.Duration
}

// PurgeJobs deletes finished jobs as p says, the oldest first (through jobs_finished_idx: no
// sort, however many jobs are kept), and says how many it deleted.
func (s *Store) PurgeJobs(ctx context.Context, p PurgeJobsParams) (int64, error) {
	var n int64
	err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		b.Queue(`
			with doomed as (
			  select tableoid, ctid from agentmem.jobs
			  where status = $1 and status in ('done', 'dead') and updated_at <= now() - make_interval(secs => $2::float8)
			    and not (coalesce(adapter = any($4::text[]), false) and updated_at > now() - make_interval(secs => $5::float8))
			  order by updated_at limit $3
			  for update skip locked)
			delete from agentmem.jobs j using doomed where j.tableoid = doomed.tableoid and j.ctid = doomed.ctid`,
			p.Status, p.OlderThan.Seconds(), p.Limit, p.KeepAdapters, p.KeepFor.Seconds()).Exec(func(tag pgconn.CommandTag) error {
			n = tag.RowsAffected()
			return nil
		})
	})
	return n, err
}

// ClaimedJob is a job a worker claimed: everything needed to deliver it.
type ClaimedJob struct {
	memory.Job
	EventID  uuid.UUID
	TenantID string
	// Agent is "" for a change of the user as a whole.
	Agent string
	Refs  json.RawMessage
}

// ClaimJobsParams bounds one claim.
type ClaimJobsParams struct {
	Limit int
	// Lease is how long the claimed jobs stay the worker's: past it, a job not recorded is
	// claimed again (its worker died).
	Lease time.Duration
	// MaxAttempts is the attempt cap: a job whose lease passed after its last allowed attempt
	// goes dead instead of being claimed again.
	MaxAttempts int
}

// claimSQL claims up to $1 due jobs, in one short transaction: pending jobs whose time has
// come and running jobs whose lease has passed, locked with skip locked so concurrent workers
// take different jobs and never wait for each other. A claimed job is running until now() +
// $2 seconds, with one more attempt counted; one whose lease passed after the last allowed
// attempt ($3) goes dead instead.
const claimSQL = `
with due as (
  select user_id, id from agentmem.jobs
  where status in ('pending', 'running') and next_attempt_at <= now()
  order by next_attempt_at
  limit $1
  for update skip locked)
update agentmem.jobs j set
  status = case when j.status = 'running' and j.attempts >= $3 then 'dead' else 'running' end,
  attempts = case when j.status = 'running' and j.attempts >= $3 then j.attempts else j.attempts + 1 end,
  last_error = case when j.status = 'running' and j.attempts >= $3
                    then 'the last attempt did not finish within its lease (the worker stopped)' else j.last_error end,
  next_attempt_at = case when j.status = 'running' and j.attempts >= $3 then now()
                         else now() + make_interval(secs => $2::float8) end,
  updated_at = now()
from due
where j.user_id = due.user_id and j.id = due.id
returning j.id, j.intent, j.adapter, j.status, j.attempts, j.next_attempt_at, j.last_error, j.created_at,
  j.updated_at, j.session_id, j.user_id, j.event_id, j.tenant_id, j.agent, j.refs`

// ClaimJobs claims due jobs for delivery (see claimSQL). It returns the jobs to deliver, and
// the jobs it found dead instead.
func (s *Store) ClaimJobs(ctx context.Context, p ClaimJobsParams) (claimed, dead []ClaimedJob, err error) {
	err = s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		b.Queue(claimSQL, p.Limit, p.Lease.Seconds(), p.MaxAttempts).Query(func(rows pgx.Rows) error {
			var err error
			claimed, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ClaimedJob, error) {
				var c ClaimedJob
				err := r.Scan(&c.ID, &c.Intent, &c.Adapter, &c.Status, &c.Attempts, &c.NextAttemptAt, &c.LastError,
					&c.CreatedAt, &c.UpdatedAt, &c.SessionID, &c.UserID, &c.EventID, &c.TenantID, &c.Agent, &c.Refs)
				c.CreatedAt, c.UpdatedAt, c.NextAttemptAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC(), c.NextAttemptAt.UTC()
				return c, err
			})
			if err != nil {
				return fmt.Errorf("claim jobs: %w", err)
			}
			return nil
		})
	})
	if err != nil {
		return nil, nil, err
	}
	var live []ClaimedJob
	for _, c := range claimed {
		if c.Status == JobDead {
			dead = append(dead, c)
			continue
		}
		live = append(live, c)
	}
	return live, dead, nil
}

// JobResult is the outcome of one claimed job's delivery.
type JobResult struct {
	ID uuid.UUID
	// UserID is the job's user: the job is found by (UserID, ID), its key.
	UserID string
	// Attempts is the job's attempts as claimed: a result is recorded only while the job is
	// still that claim's (a worker whose lease passed and whose job was claimed again records
	// nothing).
	Attempts int
	// Status is JobDone, JobPending (retry after Delay) or JobDead.
	Status string
	Delay  time.Duration
	// Error is the failure, without content; nil when done.
	Error *string
}

// lockSyncSQL takes, in a consistent order, a lock of each session that the adapter jobs $1
// ($2 the enabled adapters' names: the internal work does not count) belong to, for the rest of the transaction: a worker recording a
// session's jobs waits for another recording jobs of the same session, and so reads its outcomes
// when it decides whether the session is in sync (syncSessionsSQL). Without it, two workers
// recording the last two jobs of a change at once would each see the other's as running.
const lockSyncSQL = `
	select count(pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended(x.session_id::text, 7215)))
	from (select distinct session_id from agentmem.jobs
	      where id = any($1::uuid[]) and session_id is not null and adapter = any($2::text[])
	      order by session_id) x`

// syncSessionsSQL sets last_synced_at of the sessions whose adapters have caught up with them,
// as the jobs $1 (of the adapters $2) were recorded done: a session is in sync when none of its
// adapter jobs is pending or running, nor dead for the change of a job just done or a later one
// (a later change supersedes a change an adapter never got). The jobs it looks for are read
// through jobs_undelivered_owner_idx. The time only moves forward.
const syncSessionsSQL = `
	update agentmem.sessions s set last_synced_at = greatest(s.last_synced_at, now())
	where (s.user_id, s.id) in (
	  select d.user_id, d.session_id from agentmem.jobs d
	  where d.id = any($1::uuid[]) and d.status = 'done' and d.session_id is not null
	    and d.adapter = any($2::text[])
	    and not exists (
	      select 1 from agentmem.jobs o
	      where o.user_id = d.user_id and o.adapter = any($2::text[]) and o.status <> 'done'
	        and o.session_id = d.session_id
	        and (o.status <> 'dead' or o.created_at >= d.created_at)))`

// RecordJobs records the outcomes of delivered jobs in one statement, and says how many were
// still the worker's to record. A session whose adapters caught up with it, as these outcomes
// say, gets its last_synced_at (syncSessionsSQL), in the same transaction.
func (s *Store) RecordJobs(ctx context.Context, results []JobResult) (int64, error) {
	if len(results) == 0 {
		return 0, nil
	}
	ids := make([]uuid.UUID, len(results))
	users := make([]string, len(results))
	attempts := make([]int32, len(results))
	statuses := make([]string, len(results))
	errs := make([]*string, len(results))
	delays := make([]float64, len(results))
	var done []uuid.UUID
	for i, r := range results {
		ids[i], users[i], attempts[i], statuses[i], errs[i], delays[i] = r.ID, r.UserID, int32(r.Attempts), r.Status, r.Error, r.Delay.Seconds()
		if r.Status == JobDone && s.outboxOn() {
			done = append(done, r.ID)
		}
	}
	adapters := s.adapters
	var n int64
	err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		if done != nil {
			b.Queue(lockSyncSQL, done, adapters)
		}
		b.Queue(`
			update agentmem.jobs j set status = r.status, last_error = r.err,
			  next_attempt_at = now() + make_interval(secs => r.delay), updated_at = now()
			from unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::float8[], $6::text[]) as r(id, attempts, status, err, delay, user_id)
			where j.user_id = r.user_id and j.id = r.id and j.status = 'running' and j.attempts = r.attempts`,
			ids, attempts, statuses, errs, delays, users).Exec(func(tag pgconn.CommandTag) error {
			n = tag.RowsAffected()
			return nil
		})
		if done != nil {
			b.Queue(syncSessionsSQL, done, adapters)
		}
	})
	return n, err
}

// ErrNoAdapters fails ExpandFanout in a process whose ADAPTERS names none.
var ErrNoAdapters = errors.New("no adapter is enabled in this process (ADAPTERS): the fan-out waits for a process with them")

// ExpandFanout turns a claimed fan-out job (adapter.Fanout) into one job per enabled adapter,
// each with the fan-out's event, scope, intent and refs, in the statement that marks it done:
// a fan-out is expanded once, however often it is claimed. The fan-out is then no longer
// running, so its RecordJobs result records nothing. A store without adapters would expand it
// into no job at all: it refuses (ErrNoAdapters), and the fan-out waits, retried as any
// adapter's job is, for a process with the deployment's adapters.
func (s *Store) ExpandFanout(ctx context.Context, j ClaimedJob) error {
	if !s.outboxOn() {
		return ErrNoAdapters
	}
	return s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		b.Queue(`
			with f as (
			  update agentmem.jobs set status = 'done', last_error = null, updated_at = now()
			  where user_id = $5 and id = $1 and status = 'running' and attempts = $2
			  returning event_id, tenant_id, user_id, agent, session_id, intent, refs)
			insert into agentmem.jobs (id, event_id, tenant_id, user_id, agent, session_id, intent, adapter, refs)
			select a.id, f.event_id, f.tenant_id, f.user_id, f.agent, f.session_id, f.intent, a.adapter, f.refs
			from f cross join unnest($3::text[], $4::uuid[]) as a(adapter, id)`,
			j.ID, int32(j.Attempts), s.adapters, s.jobIDs(), j.UserID)
	})
}

// HasDueJobs reports whether a job is due now.
func (s *Store) HasDueJobs(ctx context.Context) (bool, error) {
	var due bool
	err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		b.Queue(`select exists (select 1 from agentmem.jobs
			where status in ('pending', 'running') and next_attempt_at <= now())`).QueryRow(func(row pgx.Row) error {
			return row.Scan(&due)
		})
	})
	return due, err
}
