package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
)

// The outbox: every change an adapter must learn of writes one job per enabled adapter
// (Config.Adapters) into agentmem.jobs, in the transaction of the change itself, so a change
// is acknowledged with its jobs or not at all. A job holds references (see the migration
// create_jobs_outbox); process-jobs reads the content when it delivers. With no adapter
// enabled nothing is written and no statement is added.

// Adapters are the names of the enabled adapters, in the order of Config.Adapters.
func (s *Store) Adapters() []string { return s.adapters }

// outboxOn reports whether changes write jobs.
func (s *Store) outboxOn() bool { return len(s.adapters) > 0 }

// change is one change adapters must learn of.
type change struct {
	intent string
	// sc is whose change it is; sc.Agent "" for a change of the user as a whole.
	sc      memory.Scope
	session *uuid.UUID
	// refs says what changed (marshalled to the job's refs); nil is {}.
	refs any
}

// enqueueSQL writes one job per adapter ($8 names, $9 job ids) for a change.
const enqueueSQL = `
insert into agentmem.jobs (id, event_id, tenant_id, user_id, agent, session_id, intent, adapter, refs)
select a.id, $1, $2, $3, $4, $5, $6, a.name, $7::jsonb
from unnest($8::text[], $9::uuid[]) as a(name, id)`

// jobIDs makes one job id per enabled adapter: time-ordered (UUIDv7), so the primary key grows
// at its right edge as jobs are written, as the indexes on times do.
func (s *Store) jobIDs() []uuid.UUID { return newJobIDs(len(s.adapters)) }

// newJobIDs makes n job ids (see jobIDs).
func newJobIDs(n int) []uuid.UUID {
	ids := make([]uuid.UUID, n)
	for i := range ids {
		id, err := uuid.NewV7()
		if err != nil {
			id = uuid.New()
		}
		ids[i] = id
	}
	return ids
}

// newJobs names the jobs of one change: its event id and one job per enabled adapter.
type newJobs struct {
	event    uuid.UUID
	adapters []string
	ids      []uuid.UUID
}

func (s *Store) newJobs() newJobs {
	return newJobs{event: uuid.New(), adapters: s.adapters, ids: s.jobIDs()}
}

// refs are the jobs' answer: each adapter's job, pending.
func (n newJobs) refs() []memory.JobRef {
	jobs := make([]memory.JobRef, len(n.ids))
	for i, id := range n.ids {
		jobs[i] = memory.JobRef{ID: id, Adapter: n.adapters[i], Status: JobPending}
	}
	return jobs
}

// enqueueArgs are enqueueSQL's arguments for c, with the jobs they write.
func (s *Store) enqueueArgs(c change) ([]any, newJobs, error) {
	return enqueueArgsOf(c, s.newJobs())
}

// enqueueArgsOf are enqueueSQL's arguments for c, writing the jobs n.
func enqueueArgsOf(c change, n newJobs) ([]any, newJobs, error) {
	refs := []byte("{}")
	if c.refs != nil {
		var err error
		if refs, err = json.Marshal(c.refs); err != nil {
			return nil, newJobs{}, fmt.Errorf("encode job refs: %w", err)
		}
	}
	return []any{n.event, c.sc.TenantID, c.sc.UserID, c.sc.Agent, c.session, c.intent, string(refs),
		n.adapters, n.ids}, n, nil
}

// enqueue writes c's jobs in tx, as whatever role tx runs (a user's own change under
// CallerRole, whose policy lets it insert its own jobs only), and returns the change's event
// id and its jobs. Nothing without adapters.
func (s *Store) enqueue(ctx context.Context, tx pgx.Tx, c change) (uuid.UUID, []memory.JobRef, error) {
	if !s.outboxOn() {
		return uuid.New(), []memory.JobRef{}, nil
	}
	args, n, err := s.enqueueArgs(c)
	if err != nil {
		return uuid.Nil, nil, err
	}
	if _, err := tx.Exec(ctx, enqueueSQL, args...); err != nil {
		return uuid.Nil, nil, fmt.Errorf("write jobs: %w", err)
	}
	return n.event, n.refs(), nil
}

// userDataAdapters are the enabled adapters that cache the user's key/value memory, state and
// notes (adapter.CachesUserData); nil when none is.
func (s *Store) userDataAdapters() []string {
	var out []string
	for _, n := range s.adapters {
		if adapter.CachesUserData(n) {
			out = append(out, n)
		}
	}
	return out
}

// userDataJobArgs are enqueueSQL's arguments for a change of sc's key/value memory, state or
// notes: an adapter.UserDataChanged job for each adapter that caches them; nil when none is
// enabled (nothing is written).
func (s *Store) userDataJobArgs(sc memory.Scope) []any {
	names := s.userDataAdapters()
	if len(names) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(names))
	for i := range ids {
		id, err := uuid.NewV7()
		if err != nil {
			id = uuid.New()
		}
		ids[i] = id
	}
	return []any{uuid.New(), sc.TenantID, sc.UserID, sc.Agent, (*uuid.UUID)(nil), adapter.UserDataChanged, "{}", names, ids}
}

// queueUserDataJobs adds the jobs of a change of sc's key/value memory, state or notes to b,
// after the change's own statement (one implicit transaction).
func (s *Store) queueUserDataJobs(b *pgx.Batch, sc memory.Scope) {
	if args := s.userDataJobArgs(sc); args != nil {
		b.Queue(enqueueSQL, args...)
	}
}

// The refs of a job, by intent. Each names what changed; none holds content. Their JSON tags
// are a stored format, the jsonb column agentmem.jobs.refs (read back by jobRefs), not the
// API's: no client reads them.
type (
	// memoryRefs: onMemoryCreated, onMemoryUpdated, onMemoryDeleted.
	memoryRefs struct {
		MemoryID uuid.UUID `json:"memory_id"`
	}
	// seqRefs: onSessionReset (every message up to SeqTo went), backfillSession (the messages
	// up to SeqTo when it was asked for).
	seqRefs struct {
		SeqTo int64 `json:"seq_to"`
	}
	// messageRefs: onMessageDeleted.
	messageRefs struct {
		MessageID string `json:"message_id"`
		Seq       *int64 `json:"seq"`
	}
	// userRefs: onUserForgotten.
	userRefs struct {
		AllTenants bool `json:"all_tenants"`
	}
)

// turnJobsSQL writes the jobs of a committed turn, in the turn's transaction after its
// messages and facts: agentmem.write_turn_jobs (migration create_jobs_outbox), whose plans
// PL/pgSQL keeps for the connection's life. It writes nothing when the session is not this
// agent's, as the turn's own statements then store nothing.
const turnJobsSQL = `select agentmem.write_turn_jobs(p_event_id => $1::uuid, p_session_id => $2::uuid,
  p_user_id => $3::text, p_tenant_id => $4::text, p_agent => $5::text, p_new_messages => $6::integer,
  p_memory_keys => $7::text[], p_adapters => $8::text[], p_job_ids => $9::uuid[])`

// turnJobs is the arguments of turnJobsSQL for a turn that stored newMessages new messages
// and the facts of keys; nil when the turn changed nothing or no job is to be written. Beside
// the adapters' jobs, a turn with new messages writes the internal work enabled for it (see
// turnJobNames), through the same statement: no further round trip, one more row each.
func (s *Store) turnJobs(p CommitParams, newMessages int, keys []string) []any {
	if newMessages == 0 && len(keys) == 0 {
		return nil
	}
	names := s.turnJobNames(p, newMessages)
	if len(names) == 0 {
		return nil
	}
	if keys == nil {
		keys = []string{}
	}
	sc := p.Scope
	return []any{uuid.New(), p.SessionID, sc.UserID, sc.TenantID, sc.Agent, newMessages, keys, names, newJobIDs(len(names))}
}

// turnJobNames names the jobs of a turn that stored newMessages new messages: one per enabled
// adapter, then adapter.Extract (when enabled and not opted out) and adapter.Summarize (when
// enabled), which only new messages call for.
func (s *Store) turnJobNames(p CommitParams, newMessages int) []string {
	names := s.adapters
	if newMessages > 0 && ((s.extract && !p.NoExtract) || s.summarize) {
		names = slices.Clone(names)
		if s.extract && !p.NoExtract {
			names = append(names, adapter.Extract)
		}
		if s.summarize {
			names = append(names, adapter.Summarize)
		}
	}
	return names
}

// IntentParams asks adapters to act on a session (the intents function).
type IntentParams struct {
	// Scope is whose session it is; Scope.Agent is ignored (the session's own is used).
	Scope     memory.Scope
	SessionID uuid.UUID
	// Intent is adapter.SyncSession or adapter.BackfillSession.
	Intent string
}

// IntentResult is the answer of CreateIntent.
type IntentResult struct {
	// IntentID is the event id every job of the intent delivers under: the new one, or, when
	// Coalesced, the one of the earlier request whose jobs answer for it.
	IntentID uuid.UUID
	Jobs     []memory.JobRef
	// Coalesced reports a backfill that wrote no job: every adapter's backfill of the session
	// was still pending from an earlier request, and answers for this one.
	Coalesced bool
}

// CreateIntent writes one job per enabled adapter for an intent on one of the user's sessions;
// a session that is missing, expired or (row-level security hides it) someone else's is not
// found. Without adapters it checks the session and writes nothing. A backfill coalesces (see
// coalesceBackfill).
func (s *Store) CreateIntent(ctx context.Context, p IntentParams) (IntentResult, error) {
	var out IntentResult
	sc := p.Scope
	backfill := p.Intent == adapter.BackfillSession && s.outboxOn()
	q := `select agent, last_seq from agentmem.sessions
		where id = $1 and user_id = $2 and tenant_id = $3 and expires_at > now()`
	if backfill {
		// The session's row, locked as a commit locks it, serialises the session's backfills:
		// each sees the jobs the one before it wrote.
		q += ` for no key update`
	}
	err := s.inScope(ctx, sc, func(tx pgx.Tx) error {
		var agent string
		var lastSeq int64
		err := tx.QueryRow(ctx, q, p.SessionID, sc.UserID, sc.TenantID).Scan(&agent, &lastSeq)
		if err = notFoundAs(err, sessionNotFound); err != nil {
			return fmt.Errorf("select session: %w", err)
		}
		c := change{intent: p.Intent, sc: memory.Scope{TenantID: sc.TenantID, UserID: sc.UserID, Agent: agent},
			session: &p.SessionID}
		if backfill {
			c.refs = seqRefs{SeqTo: lastSeq}
			out, err = s.coalesceBackfill(ctx, tx, c)
			return err
		}
		out.IntentID, out.Jobs, err = s.enqueue(ctx, tx, c)
		return err
	})
	return out, err
}

// pendingBackfillsSQL reads the backfills of a session ($1, of user $2 in tenant $3) that wait,
// the oldest first (through jobs_pending_backfill_idx).
const pendingBackfillsSQL = `
	select id, adapter, event_id from agentmem.jobs
	where session_id = $1 and intent = '` + adapter.BackfillSession + `' and status = 'pending'
	  and user_id = $2 and tenant_id = $3
	order by created_at, id`

// coalesceBackfill writes c, a backfill of a session whose row tx holds locked, for every
// adapter that has no backfill of that session pending yet; an adapter that has one answers
// with it, and a burst of backfills of one session sends its messages to each adapter once.
// The pending job covers the messages up to the session's last seq when it was written, and
// every message committed since went to the same adapter with its turn's own job, so it
// answers for this request whole; it is left as it is (a job retried after some of its pages
// got through must send the same pages again, which receivers drop by their ids). The jobs are
// read and written as service_role (the user's role may only insert jobs), filtered by the
// session and its owner, which the caller's own statement found under row-level security.
func (s *Store) coalesceBackfill(ctx context.Context, tx pgx.Tx, c change) (IntentResult, error) {
	if _, err := tx.Exec(ctx, setServiceRoleSQL, statementTimeout(ctx)); err != nil {
		return IntentResult{}, fmt.Errorf("set role: %w", err)
	}
	rows, err := tx.Query(ctx, pendingBackfillsSQL, *c.session, c.sc.UserID, c.sc.TenantID)
	if err != nil {
		return IntentResult{}, fmt.Errorf("select pending backfills: %w", err)
	}
	type pending struct {
		id, event uuid.UUID
	}
	waiting := map[string]pending{}
	var id, event uuid.UUID
	var name string
	if _, err := pgx.ForEachRow(rows, []any{&id, &name, &event}, func() error {
		if _, ok := waiting[name]; !ok {
			waiting[name] = pending{id, event}
		}
		return nil
	}); err != nil {
		return IntentResult{}, fmt.Errorf("select pending backfills: %w", err)
	}
	out := IntentResult{Jobs: make([]memory.JobRef, len(s.adapters))}
	var fresh []string
	for i, name := range s.adapters {
		if w, ok := waiting[name]; ok {
			out.Jobs[i] = memory.JobRef{ID: w.id, Adapter: name, Status: JobPending}
			if out.IntentID == uuid.Nil {
				out.IntentID = w.event
			}
			continue
		}
		fresh = append(fresh, name)
	}
	if len(fresh) == 0 {
		out.Coalesced = true
		return out, nil
	}
	args, n, err := enqueueArgsOf(c, newJobs{event: uuid.New(), adapters: fresh, ids: newJobIDs(len(fresh))})
	if err != nil {
		return IntentResult{}, err
	}
	if _, err := tx.Exec(ctx, enqueueSQL, args...); err != nil {
		return IntentResult{}, fmt.Errorf("write jobs: %w", err)
	}
	out.IntentID = n.event
	for _, j := range n.refs() {
		out.Jobs[slices.Index(s.adapters, j.Adapter)] = j
	}
	return out, nil
}

// sessionChange is the change of a session of the caller's: the session's agent and last seq,
// read in tx (nothing when no adapter is enabled).
func (s *Store) sessionChange(ctx context.Context, tx pgx.Tx, sc memory.Scope, id uuid.UUID, intent string) (change, int64, error) {
	var agent string
	var lastSeq int64
	if err := tx.QueryRow(ctx, `select agent, last_seq from agentmem.sessions where id = $1 and user_id = $2 and tenant_id = $3`,
		id, sc.UserID, sc.TenantID).Scan(&agent, &lastSeq); err != nil {
		return change{}, 0, fmt.Errorf("select session: %w", err)
	}
	return change{intent: intent, sc: memory.Scope{TenantID: sc.TenantID, UserID: sc.UserID, Agent: agent}, session: &id},
		lastSeq, nil
}
