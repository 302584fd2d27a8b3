package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
)

// SessionKey is the place of a session in a listing, which orders by last activity, then id,
// both descending.
type SessionKey struct {
	LastActiveAt time.Time
	ID           uuid.UUID
}

// ListSessionsParams asks for one page of a user's sessions.
type ListSessionsParams struct {
	// Scope.Agent, when set, lists that agent's sessions only.
	Scope memory.Scope
	Limit int
	// After, when set, continues after that session.
	After *SessionKey
	// Offset, when above 0 (and After is nil), skips that many sessions first (see offset.go).
	Offset int
}

// SessionPage is one page of sessions.
type SessionPage struct {
	Sessions []memory.SessionSummary
	// Next continues the listing; nil on the last page.
	Next *SessionKey
}

// listSessionsSQL reads one page in index order (sessions_owner_activity_idx, or
// sessions_owner_idx for one agent) and only then counts the messages of the rows on the page,
// each through the messages' primary key. The cursor comparison is a row comparison, which the
// index serves as a range bound. %s is the agent condition.
const listSessionsSQL = `
select p.id, p.agent, p.title,
       (select count(*) from agentmem.messages m
         where m.user_id = $1 and m.session_id = p.id and m.expires_at > now()) as message_count,
       p.created_at, p.last_active_at, p.metadata, p.last_synced_at
from (
  select s.id, s.agent, s.title, s.created_at, s.last_active_at, s.metadata, s.last_synced_at
  from agentmem.sessions s
  where s.user_id = $1 and s.tenant_id = $2 and s.expires_at > now() %s
    and ($3::timestamptz is null or (s.last_active_at, s.id) < ($3::timestamptz, $4::uuid))
  order by s.last_active_at desc, s.id desc
  limit $5
) p
order by p.last_active_at desc, p.id desc`

var (
	listSessionsAllSQL   = fmt.Sprintf(listSessionsSQL, "")
	listSessionsAgentSQL = fmt.Sprintf(listSessionsSQL, "and s.agent = $6")
)

// ListSessions reads a page of the user's unexpired sessions, the most recently active first.
func (s *Store) ListSessions(ctx context.Context, p ListSessionsParams) (SessionPage, error) {
	out := SessionPage{Sessions: []memory.SessionSummary{}}
	sc := p.Scope
	if p.Offset > 0 {
		after, err := s.listSkip(ctx, p)
		if err != nil {
			return SessionPage{}, err
		}
		p.After = after
	}
	afterAt, afterID := afterArgs(p.After, func(k SessionKey) (time.Time, uuid.UUID) { return k.LastActiveAt, k.ID })
	q, args := listSessionsAllSQL, []any{sc.UserID, sc.TenantID, afterAt, afterID, p.Limit + 1}
	if sc.Agent != "" {
		q, args = listSessionsAgentSQL, append(args, sc.Agent)
	}
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(q, args...).Query(func(rows pgx.Rows) error {
			var err error
			out.Sessions, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (memory.SessionSummary, error) {
				var v memory.SessionSummary
				err := r.Scan(&v.SessionID, &v.Agent, &v.Title, &v.MessageCount, &v.CreatedAt, &v.LastActiveAt,
					&v.Metadata, &v.LastSyncedAt)
				v.CreatedAt, v.LastActiveAt, v.LastSyncedAt = v.CreatedAt.UTC(), v.LastActiveAt.UTC(), utcOrNil(v.LastSyncedAt)
				return v, err
			})
			if err != nil {
				return fmt.Errorf("list sessions: %w", err)
			}
			return nil
		})
	})
	if err != nil {
		return SessionPage{}, err
	}
	out.Sessions, out.Next = pageOf(out.Sessions, p.Limit, func(s memory.SessionSummary) SessionKey {
		return SessionKey{LastActiveAt: s.LastActiveAt, ID: s.SessionID}
	})
	return out, nil
}

// HistoryParams asks for one page of a session's messages.
type HistoryParams struct {
	// Scope.Agent, when set, must be the session's agent.
	Scope     memory.Scope
	SessionID uuid.UUID
	// Newest pages from the latest message backwards; otherwise from the first forwards.
	Newest bool
	Limit  int
	// After, when set, continues after the message with this seq (exclusive).
	After *int64
	// Since, when set, keeps only messages created at or after it.
	Since *time.Time
	// AnswersOnly pages through the answers alone (memory.AnswersOnly), and counts them alone.
	AnswersOnly bool
	// Offset, when above 0 (and After is nil), skips that many messages first (see offset.go).
	Offset int
	// IncludeArchived also reads the messages the history cap archived (see history_archive.go).
	IncludeArchived bool
}

// HistoryPage is one page of a session's messages.
type HistoryPage struct {
	Messages []memory.Message
	// Next is the seq to continue after; nil when no further message existed.
	Next *int64
	// Total counts the session's unexpired messages (created since Since, when set).
	Total int64
}

// historySQL reads a page of a session's messages in primary-key order, created at or after $6
// when it is not null; %s is the cursor's condition on $4 and %s the direction. The page runs
// its generic plan (see SessionHistory), so the cursor has a statement of its own: in a
// generic plan "$4 is null or seq > $4" could not bound the primary key's range, and a deep page
// would read the session from its start.
const historySQL = `
	select ` + messageColumns + `
	from agentmem.messages
	where session_id = $1 and user_id = $2 and tenant_id = $3 and expires_at > now()
	  and %s
	  and ($6::timestamptz is null or created_at >= $6::timestamptz)
	order by seq %s
	limit $5`

var (
	// The first page (no cursor: $4 is null).
	historyOldestSQL = fmt.Sprintf(historySQL, "$4::bigint is null", "asc")
	historyNewestSQL = fmt.Sprintf(historySQL, "$4::bigint is null", "desc")
	// The pages after the cursor $4 (exclusive).
	historyOldestAfterSQL = fmt.Sprintf(historySQL, "seq > $4::bigint", "asc")
	historyNewestAfterSQL = fmt.Sprintf(historySQL, "seq < $4::bigint", "desc")
)

// answersOnlySQL is statement q (of agentmem.messages, with the condition "expires_at > now()")
// keeping the rows memory.AnswersOnly keeps, when on: no tool messages, no assistant messages
// without text. Their tool calls are left out after the read.
func answersOnlySQL(q string, on bool) string {
	if !on {
		return q
	}
	return strings.Replace(q, "expires_at > now()", "expires_at > now() and "+answerSQL, 1)
}

// historyCountSQL counts a session's unexpired messages; historyCountSinceSQL those created at
// or after $4.
const (
	historyCountSQL = `
	select count(*) from agentmem.messages
	where session_id = $1 and user_id = $2 and tenant_id = $3 and expires_at > now()`
	historyCountSinceSQL = historyCountSQL + `
	  and created_at >= $4::timestamptz`
)

// SessionHistory pages through a session's unexpired messages by seq. Seqs only grow and a
// session's commits become visible in seq order, so a page continued from a cursor neither
// skips nor repeats a message, however many are committed between pages. A session that does
// not exist, has expired or is not the caller's is not found.
func (s *Store) SessionHistory(ctx context.Context, p HistoryParams) (HistoryPage, error) {
	var out HistoryPage
	sc := p.Scope
	if p.Offset > 0 {
		after, err := s.historySkip(ctx, p)
		if err != nil {
			return HistoryPage{}, err
		}
		p.After = after
	}
	q := historyOldestSQL
	switch {
	case p.Newest && p.After != nil:
		q = historyNewestAfterSQL
	case p.Newest:
		q = historyNewestSQL
	case p.After != nil:
		q = historyOldestAfterSQL
	}
	// The page, the check and the count only read, so nothing waits on the check: all three go
	// in one round trip, and a session the check does not find answers not found, whatever
	// the other two read. Without Since, the page is a range of the primary key whatever the
	// values, so it runs its generic plan (see batchInScopeGeneric): PostgreSQL would otherwise
	// plan it again at every call. The check and the count after it keep plans for their values:
	// a generic count may choose messages_owner_created_idx, and read every message of the user.
	count, countArgs := historyCountSQL, []any{p.SessionID, sc.UserID, sc.TenantID}
	if p.Since != nil {
		count, countArgs = historyCountSinceSQL, append(countArgs, p.Since)
	}
	q, count = answersOnlySQL(q, p.AnswersOnly), answersOnlySQL(count, p.AnswersOnly)
	if p.IncludeArchived {
		q, count = historyWithArchive(q, p.Newest), countWithArchive(count)
	}
	err := s.batchInScopeGeneric(ctx, sc, p.Since == nil, func(b *pgx.Batch, generic bool) {
		b.Queue(q, historyArgs(p, p.Limit+1)...).Query(func(rows pgx.Rows) error {
			var err error
			if out.Messages, err = pgx.CollectRows(rows, scanMessage); err != nil {
				return fmt.Errorf("select history: %w", err)
			}
			return nil
		})
		if generic {
			queueResetPlans(b)
		}
		b.Queue(selectSessionSQL, p.SessionID, sc.UserID, sc.TenantID, sc.Agent).
			QueryRow(oneRow("select session", sessionNotFound))
		b.Queue(count, countArgs...).QueryRow(func(row pgx.Row) error {
			if err := row.Scan(&out.Total); err != nil {
				return fmt.Errorf("count messages: %w", err)
			}
			return nil
		})
	})
	if err != nil {
		return HistoryPage{}, err
	}
	out.Messages, out.Next = pageOf(out.Messages, p.Limit, func(m memory.Message) int64 { return m.Seq })
	if p.AnswersOnly {
		out.Messages = memory.AnswersOnly(out.Messages)
	}
	if out.Messages == nil {
		out.Messages = []memory.Message{}
	}
	return out, nil
}

// ResetSession deletes every message of a session and keeps the session with its seq counter,
// so later messages go on numbering after the deleted ones. It waits for a commit in progress
// on the session and so deletes whole turns. It returns how many unexpired messages it deleted.
func (s *Store) ResetSession(ctx context.Context, sc memory.Scope, id uuid.UUID) (int64, error) {
	var n int64
	err := s.inScope(ctx, sc, func(tx pgx.Tx) error {
		if err := findSession(ctx, tx, sc, id, true); err != nil {
			return err
		}
		// The archived messages go too (the session's lock keeps the sweep from moving any
		// meanwhile).
		err := tx.QueryRow(ctx, `
			with gone as (
			  delete from agentmem.messages
			  where session_id = $1 and user_id = $2 and tenant_id = $3
			  returning expires_at),
			gone_archived as (
			  delete from agentmem.messages_archive
			  where session_id = $1 and user_id = $2 and tenant_id = $3
			  returning expires_at)
			select count(*) filter (where expires_at > now())
			from (select expires_at from gone union all select expires_at from gone_archived) g`,
			id, sc.UserID, sc.TenantID).Scan(&n)
		if err != nil {
			return fmt.Errorf("delete messages: %w", err)
		}
		if _, err := tx.Exec(ctx, deleteSummarySQL, sc.UserID, id, 0); err != nil {
			return fmt.Errorf("delete summary: %w", err)
		}
		if !s.outboxOn() {
			return nil
		}
		c, lastSeq, err := s.sessionChange(ctx, tx, sc, id, adapter.SessionReset)
		if err != nil {
			return err
		}
		c.refs = seqRefs{SeqTo: lastSeq}
		_, _, err = s.enqueue(ctx, tx, c)
		return err
	})
	return n, err
}

// DeleteSession deletes a session; its messages and any active-session pointer to it go with
// it (foreign keys cascade).
func (s *Store) DeleteSession(ctx context.Context, sc memory.Scope, id uuid.UUID) error {
	return s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		if s.outboxOn() {
			n := s.newJobs()
			b.Queue(deleteSessionWithJobsSQL, id, sc.UserID, sc.TenantID, sc.Agent, n.event, n.adapters, n.ids).
				QueryRow(oneRow("delete session", sessionNotFound))
			return
		}
		b.Queue(`
			delete from agentmem.sessions
			where id = $1 and user_id = $2 and tenant_id = $3 and ($4::text = '' or agent = $4::text)
			  and expires_at > now()
			returning true`, id, sc.UserID, sc.TenantID, sc.Agent).QueryRow(oneRow("delete session", sessionNotFound))
	})
}

// deleteSessionWithJobsSQL is DeleteSession's statement when adapters are enabled: it also
// writes the jobs of the deletion ($5 the event id, $6 adapters, $7 job ids), only when it
// deleted the session.
const deleteSessionWithJobsSQL = `
with gone as (
  delete from agentmem.sessions
  where id = $1 and user_id = $2 and tenant_id = $3 and ($4::text = '' or agent = $4::text)
    and expires_at > now()
  returning id, tenant_id, user_id, agent),
jobs as (
  insert into agentmem.jobs (id, event_id, tenant_id, user_id, agent, session_id, intent, adapter, refs)
  select a.id, $5, g.tenant_id, g.user_id, g.agent, g.id, '` + adapter.SessionDeleted + `', a.name, '{}'::jsonb
  from gone g, unnest($6::text[], $7::uuid[]) as a(name, id))
select true from gone`

// findMessageSQL finds the sessions of the caller ($1, $2) that hold an unexpired message of
// id $3 (of agent $4 when not empty), live or archived: two at most, enough to tell one from
// several.
const findMessageSQL = `
	select session_id from agentmem.messages
	where user_id = $1 and tenant_id = $2 and id = $3 and ($4::text = '' or agent = $4::text)
	  and expires_at > now()
	union
	select session_id from agentmem.messages_archive
	where user_id = $1 and tenant_id = $2 and id = $3 and ($4::text = '' or agent = $4::text)
	  and expires_at > now()
	limit 2`

// messageSession finds the one session of the caller that holds message id: not found when
// none does, a conflict when several do (a client's id is unique within its session only).
func messageSession(ctx context.Context, tx pgx.Tx, sc memory.Scope, id string) (uuid.UUID, error) {
	rows, err := tx.Query(ctx, findMessageSQL, sc.UserID, sc.TenantID, id, sc.Agent)
	if err != nil {
		return uuid.Nil, fmt.Errorf("find message: %w", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return uuid.Nil, fmt.Errorf("find message: %w", err)
	}
	switch len(found) {
	case 0:
		return uuid.Nil, notFound("message not found")
	case 1:
		return found[0], nil
	}
	return uuid.Nil, conflict("several of your sessions hold a message of this id; name the session with session_id")
}

// deleteMessageSQL deletes message $2 of session $1 of the caller ($3, $4) when unexpired.
const deleteMessageSQL = `
	delete from agentmem.messages
	where session_id = $1 and id = $2 and user_id = $3 and tenant_id = $4 and expires_at > now()
	returning seq`

// DeleteMessage deletes one unexpired message of a session, live or archived, or, with sessionID nil, the
// caller's message of that id in whichever of the caller's sessions (of Scope.Agent's, when
// set) holds it.
func (s *Store) DeleteMessage(ctx context.Context, sc memory.Scope, session *uuid.UUID, messageID string) error {
	return s.inScope(ctx, sc, func(tx pgx.Tx) error {
		var sessionID uuid.UUID
		if session != nil {
			sessionID = *session
		} else {
			var err error
			if sessionID, err = messageSession(ctx, tx, sc, messageID); err != nil {
				return err
			}
		}
		if err := findSession(ctx, tx, sc, sessionID, false); err != nil {
			return err
		}
		var seq *int64
		if s.outboxOn() {
			// The deleted message's place, for the adapters.
			if err := tx.QueryRow(ctx, `select seq from agentmem.messages where user_id = $1 and session_id = $2 and id = $3`,
				sc.UserID, sessionID, messageID).Scan(&seq); err != nil && !isNotFound(err) {
				return fmt.Errorf("select message: %w", err)
			}
		}
		var deleted int64
		err := interpret(tx.QueryRow(ctx, deleteMessageSQL, sessionID, messageID, sc.UserID, sc.TenantID).Scan(&deleted))
		if errors.Is(err, ErrNotFound) {
			// Archived by the history cap (perhaps while the statement above waited for it).
			err = tx.QueryRow(ctx, strings.Replace(deleteMessageSQL, "agentmem.messages", "agentmem.messages_archive", 1),
				sessionID, messageID, sc.UserID, sc.TenantID).Scan(&deleted)
			if err == nil {
				seq = &deleted
			}
		}
		if err = notFoundAs(err, "message not found in this session"); err != nil {
			return fmt.Errorf("delete message: %w", err)
		}
		// A summary that tells of the message goes with it (the next one is made afresh).
		if _, err := tx.Exec(ctx, deleteSummarySQL, sc.UserID, sessionID, deleted); err != nil {
			return fmt.Errorf("delete summary: %w", err)
		}
		if !s.outboxOn() {
			return nil
		}
		c, _, err := s.sessionChange(ctx, tx, sc, sessionID, adapter.MessageDeleted)
		if err != nil {
			return err
		}
		c.refs = messageRefs{MessageID: messageID, Seq: seq}
		_, _, err = s.enqueue(ctx, tx, c)
		return err
	})
}

// SetSessionTitle sets a session's title; nil clears it.
func (s *Store) SetSessionTitle(ctx context.Context, sc memory.Scope, id uuid.UUID, title *string) error {
	return s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`
			update agentmem.sessions set title = $5
			where id = $1 and user_id = $2 and tenant_id = $3 and ($4::text = '' or agent = $4::text)
			  and expires_at > now()
			returning true`, id, sc.UserID, sc.TenantID, sc.Agent, title).QueryRow(oneRow("set session title", sessionNotFound))
	})
}

// SetSessionMetadata replaces a session's metadata with md, a JSON object.
func (s *Store) SetSessionMetadata(ctx context.Context, sc memory.Scope, id uuid.UUID, md json.RawMessage) error {
	return s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`
			update agentmem.sessions set metadata = $5::jsonb
			where id = $1 and user_id = $2 and tenant_id = $3 and ($4::text = '' or agent = $4::text)
			  and expires_at > now()
			returning true`, id, sc.UserID, sc.TenantID, sc.Agent, string(md)).QueryRow(oneRow("set session metadata", sessionNotFound))
	})
}

// oneRow reads the row a statement returns when it found what it reads or changes: no row is
// a not-found error that says detail; what names the statement in other errors.
func oneRow(what, detail string) func(pgx.Row) error {
	return func(row pgx.Row) error {
		var found bool
		if err := notFoundAs(row.Scan(&found), detail); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
}

// sessionNotFound is the answer for a session that is missing, expired, another agent's or
// (row-level security hides it) another user's: the caller cannot tell them apart.
const sessionNotFound = "session not found"

// selectSessionSQL finds a session of the caller ($2, $3) that is unexpired and, when $4 is
// not empty, belongs to that agent.
const selectSessionSQL = `select true from agentmem.sessions
	where id = $1 and user_id = $2 and tenant_id = $3 and ($4::text = '' or agent = $4::text)
	  and expires_at > now()`

// findSession checks that a session exists for the caller, is unexpired and, when sc.Agent is
// set, belongs to that agent; with lock it also takes the row lock commits take.
func findSession(ctx context.Context, tx pgx.Tx, sc memory.Scope, id uuid.UUID, lock bool) error {
	q := selectSessionSQL
	if lock {
		q += ` for update`
	}
	return oneRow("select session", sessionNotFound)(tx.QueryRow(ctx, q, id, sc.UserID, sc.TenantID, sc.Agent))
}
