package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
)

// MessageKey is the place of a message in a user's history across sessions, which orders by
// creation time, then session id, then seq. The messages of one turn share their creation time
// (the transaction's), so seq keeps them in the order given, unless a service gave their times
// (an imported history), which then place them.
type MessageKey struct {
	CreatedAt time.Time
	SessionID uuid.UUID
	Seq       int64
}

// UserHistoryParams asks for one page of a user's messages across every session.
type UserHistoryParams struct {
	// Scope.Agent, when set, reads that agent's messages only.
	Scope memory.Scope
	// Newest pages from the latest message backwards; otherwise from the first forwards.
	Newest bool
	Limit  int
	// After, when set, continues after that message (exclusive).
	After *MessageKey
	// Since, when set, keeps only messages created at or after it.
	Since *time.Time
	// AnswersOnly pages through the answers alone (memory.AnswersOnly), and counts them alone.
	AnswersOnly bool
	// Offset, when above 0 (and After is nil), skips that many messages first (see offset.go).
	Offset int
	// IncludeArchived also reads the messages the history cap archived (see history_archive.go).
	IncludeArchived bool
}

// UserHistoryPage is one page of a user's messages across sessions.
type UserHistoryPage struct {
	// Messages carry their SessionID.
	Messages []memory.Message
	// Next continues the history; nil when no further message existed.
	Next *MessageKey
	// Total counts the messages the history pages through (unexpired, of the agent, since).
	Total int64
}

// UserHistory reads one page of the user's unexpired messages across every session (of one
// agent when Scope.Agent is set), each carrying its SessionID, and counts them all in Total.
// The page, the count and the row-level security check are one round trip.
//
// Both statements read messages_owner_created_idx: the page is a range of the index from the
// cursor on, in index order (backwards for Newest), stopped after Limit rows, so a deep page
// costs what the first does; the agent is a scan key of the index; the count is an index-only
// scan (expires_at is included).
func (s *Store) UserHistory(ctx context.Context, p UserHistoryParams) (UserHistoryPage, error) {
	var out UserHistoryPage
	sc := p.Scope
	if p.Offset > 0 {
		after, err := s.userHistorySkip(ctx, p)
		if err != nil {
			return UserHistoryPage{}, err
		}
		p.After = after
	}
	page, count, args := userHistoryStatements(p)
	page, count = answersOnlySQL(page, p.AnswersOnly), answersOnlySQL(count, p.AnswersOnly)
	if p.IncludeArchived {
		page, count = userHistoryWithArchive(page, p.Newest), countWithArchive(count)
	}
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(page, args...).Query(func(rows pgx.Rows) error {
			var err error
			out.Messages, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (memory.Message, error) {
				var sid uuid.UUID
				m, err := scanMessage(withTrailing{row, []any{&sid}})
				m.SessionID = &sid
				return m, err
			})
			if err != nil {
				return fmt.Errorf("select user history: %w", err)
			}
			return nil
		})
		b.Queue(count, countArgs(p)...).QueryRow(func(row pgx.Row) error {
			if err := row.Scan(&out.Total); err != nil {
				return fmt.Errorf("count user messages: %w", err)
			}
			return nil
		})
	})
	if err != nil {
		return UserHistoryPage{}, err
	}
	out.Messages, out.Next = pageOf(out.Messages, p.Limit, func(m memory.Message) MessageKey {
		return MessageKey{CreatedAt: m.CreatedAt, SessionID: *m.SessionID, Seq: m.Seq}
	})
	if p.AnswersOnly {
		out.Messages = memory.AnswersOnly(out.Messages)
	}
	if out.Messages == nil {
		out.Messages = []memory.Message{}
	}
	return out, nil
}

// userHistorySQL reads a page of a user's messages in the order of messages_owner_created_idx
// (user_id, tenant_id, created_at, session_id, seq, agent): $3 is since, ($4, $5, $6) the
// cursor (exclusive), $7 the limit. The %s are the agent condition ($8), the cursor's
// comparison and the direction. session_id comes last, after the columns scanMessage reads.
const userHistorySQL = `
	select ` + messageColumns + `, session_id
	from agentmem.messages
	where user_id = $1 and tenant_id = $2 and expires_at > now() %[1]s
	  and ($3::timestamptz is null or created_at >= $3::timestamptz)
	  and ($4::timestamptz is null
	       or (created_at, session_id, seq) %[2]s ($4::timestamptz, $5::uuid, $6::bigint))
	order by created_at %[3]s, session_id %[3]s, seq %[3]s
	limit $7`

// countUserMessagesSQL counts what userHistorySQL pages through; %s is the agent condition ($4).
const countUserMessagesSQL = `
	select count(*) from agentmem.messages
	where user_id = $1 and tenant_id = $2 and expires_at > now() %s
	  and ($3::timestamptz is null or created_at >= $3::timestamptz)`

var (
	userHistoryOldestSQL      = fmt.Sprintf(userHistorySQL, "", ">", "asc")
	userHistoryNewestSQL      = fmt.Sprintf(userHistorySQL, "", "<", "desc")
	userHistoryAgentOldestSQL = fmt.Sprintf(userHistorySQL, "and agent = $8", ">", "asc")
	userHistoryAgentNewestSQL = fmt.Sprintf(userHistorySQL, "and agent = $8", "<", "desc")
	countUserMessagesAllSQL   = fmt.Sprintf(countUserMessagesSQL, "")
	countUserMessagesAgentSQL = fmt.Sprintf(countUserMessagesSQL, "and agent = $4")
)

// userHistoryStatements picks the page and count statements of p and the page's arguments.
func userHistoryStatements(p UserHistoryParams) (page, count string, args []any) {
	sc := p.Scope
	var at *time.Time
	var sid *uuid.UUID
	var seq *int64
	if p.After != nil {
		at, sid, seq = &p.After.CreatedAt, &p.After.SessionID, &p.After.Seq
	}
	args = []any{sc.UserID, sc.TenantID, p.Since, at, sid, seq, p.Limit + 1}
	switch {
	case sc.Agent == "" && p.Newest:
		page, count = userHistoryNewestSQL, countUserMessagesAllSQL
	case sc.Agent == "":
		page, count = userHistoryOldestSQL, countUserMessagesAllSQL
	case p.Newest:
		page, count = userHistoryAgentNewestSQL, countUserMessagesAgentSQL
	default:
		page, count = userHistoryAgentOldestSQL, countUserMessagesAgentSQL
	}
	if sc.Agent != "" {
		args = append(args, sc.Agent)
	}
	return page, count, args
}

func countArgs(p UserHistoryParams) []any {
	args := []any{p.Scope.UserID, p.Scope.TenantID, p.Since}
	if p.Scope.Agent != "" {
		args = append(args, p.Scope.Agent)
	}
	return args
}

// withTrailing is a row whose last columns are scanned into extra, after the destinations its
// reader names: it lets a statement add columns behind those a shared scanner reads.
type withTrailing struct {
	pgx.CollectableRow
	extra []any
}

func (r withTrailing) Scan(dest ...any) error {
	return r.CollectableRow.Scan(append(dest, r.extra...)...)
}

// clearMessagesSQL deletes every message of a user (of one agent, $3, when not empty) and
// counts the unexpired ones; the expired ones were invisible already. The sessions stay, with
// their seq counters. One statement, one snapshot: a turn committed concurrently is either
// wholly in it (deleted) or wholly after it (kept), never half.
const clearMessagesSQL = `
	with gone as (
	  delete from agentmem.messages
	  where user_id = $1 and tenant_id = $2 %s
	  returning expires_at)
	select count(*) filter (where expires_at > now()) from gone`

var (
	clearMessagesAllSQL   = fmt.Sprintf(clearMessagesSQL, "")
	clearMessagesAgentSQL = fmt.Sprintf(clearMessagesSQL, "and agent = $3")
)

// ClearMessages deletes every message of the scope's user (of Scope.Agent's sessions only when
// it is set) and keeps everything else: the sessions (so active-session resolves to the same
// one, and a later commit to a session goes on numbering after its deleted messages), memories,
// key/value memory, state, notes and idempotency records (a retry of a turn committed before
// the clear answers as it did, and does not store the turn again). It returns how many
// unexpired messages it deleted.
func (s *Store) ClearMessages(ctx context.Context, sc memory.Scope) (int64, error) {
	var n int64
	q, args := clearMessagesAllSQL, []any{sc.UserID, sc.TenantID}
	if sc.Agent != "" {
		q, args = clearMessagesAgentSQL, append(args, sc.Agent)
	}
	clearArchiveSQL := strings.Replace(q, "agentmem.messages", "agentmem.messages_archive", 1)
	var jobs []any
	if s.outboxOn() {
		// The adapters learn of it, in the same implicit transaction.
		var err error
		if jobs, _, err = s.enqueueArgs(change{intent: adapter.MessagesCleared, sc: sc}); err != nil {
			return 0, err
		}
	}
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(q, args...).QueryRow(func(row pgx.Row) error {
			if err := row.Scan(&n); err != nil {
				return fmt.Errorf("clear messages: %w", err)
			}
			return nil
		})
		// The archived messages go too, in a statement of their own: its snapshot sees those
		// the history cap moved while the deletion above waited for them.
		b.Queue(clearArchiveSQL, args...).QueryRow(func(row pgx.Row) error {
			var archived int64
			if err := row.Scan(&archived); err != nil {
				return fmt.Errorf("clear archived messages: %w", err)
			}
			n += archived
			return nil
		})
		// The summaries of the sessions go too, in a statement of their own: its snapshot
		// sees a summary saved while the messages' deletion waited for it (see SaveSummary).
		b.Queue(`delete from agentmem.session_summaries where user_id = $1 and tenant_id = $2
			and ($3::text = '' or agent = $3::text)`, sc.UserID, sc.TenantID, sc.Agent)
		if jobs != nil {
			b.Queue(enqueueSQL, jobs...)
		}
	})
	return n, err
}
