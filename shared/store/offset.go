package store

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Offset pagination (sessions history and list's offset) turns the offset into the key of the
// last item it skips, read by the first page's own statement limited to the offset, and then
// pages on from that key as a cursor does. The items skipped are read (by the index the page
// reads), so a deep offset costs what skipping costs; the filters of the page (expiry, since,
// agent) are the page's own, since its statement is. It is a second round trip, not a
// snapshot: an item committed or deleted between the two shifts the page by one, as with any
// offset pagination.

// historySkipSQL is the key of the last message an offset skips: the statement of a history's
// first page, its limit the offset, and the last key of what it reads in the history's order.
func historySkipSQL(p HistoryParams) string {
	q, last := historyOldestSQL, "max"
	if p.Newest {
		q, last = historyNewestSQL, "min"
	}
	q = answersOnlySQL(q, p.AnswersOnly)
	if p.IncludeArchived {
		q = historyWithArchive(q, p.Newest)
	}
	return `select ` + last + `(seq) from (` + q + `) p`
}

// historyArgs are the arguments of a page of a session's history (historySQL) reading limit rows.
func historyArgs(p HistoryParams, limit int) []any {
	sc := p.Scope
	return []any{p.SessionID, sc.UserID, sc.TenantID, p.After, limit, p.Since}
}

// historySkip is the cursor after the p.Offset messages an offset skips in a session's history;
// when fewer exist, a cursor past every message.
func (s *Store) historySkip(ctx context.Context, p HistoryParams) (*int64, error) {
	q := historySkipSQL(p)
	p.After = nil
	var last *int64
	err := s.batchInScope(ctx, p.Scope, func(b *pgx.Batch) {
		b.Queue(q, historyArgs(p, p.Offset)...).QueryRow(func(row pgx.Row) error {
			if err := row.Scan(&last); err != nil {
				return fmt.Errorf("skip history: %w", err)
			}
			return nil
		})
	})
	if err != nil || last != nil {
		return last, err
	}
	past := int64(math.MaxInt64) // nothing to skip: no seq is above it, nor (newest) below 0
	if p.Newest {
		past = 0
	}
	return &past, nil
}

// The key of the last message an offset skips in a user's history (userHistorySQL's
// statements, $7 the offset), the last in the page's order.
const userHistorySkipSQL = `select created_at, session_id, seq from (%s) p order by created_at %[2]s, session_id %[2]s, seq %[2]s limit 1`

// userHistorySkip is the key after the p.Offset messages an offset skips in a user's history;
// when fewer exist, a key past every message.
func (s *Store) userHistorySkip(ctx context.Context, p UserHistoryParams) (*MessageKey, error) {
	p.After, p.Limit = nil, p.Offset-1 // userHistoryStatements reads Limit + 1
	page, _, args := userHistoryStatements(p)
	page = answersOnlySQL(page, p.AnswersOnly)
	if p.IncludeArchived {
		page = userHistoryWithArchive(page, p.Newest)
	}
	dir := "desc"
	if p.Newest {
		dir = "asc"
	}
	var k MessageKey
	found := true
	err := s.batchInScope(ctx, p.Scope, func(b *pgx.Batch) {
		b.Queue(fmt.Sprintf(userHistorySkipSQL, page, dir), args...).QueryRow(func(row pgx.Row) error {
			err := row.Scan(&k.CreatedAt, &k.SessionID, &k.Seq)
			found = true // set afresh: a read a replica failed runs again on the primary
			if isNotFound(err) {
				found = false
				return nil
			}
			if err != nil {
				return fmt.Errorf("skip user history: %w", err)
			}
			return nil
		})
	})
	if err != nil || found {
		return &k, err
	}
	if p.Newest {
		return &MessageKey{CreatedAt: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), SessionID: uuid.Nil, Seq: 0}, nil
	}
	return &MessageKey{CreatedAt: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), SessionID: uuid.Max, Seq: math.MaxInt64}, nil
}

// listSessionsSkipSQL is the key of the last session an offset skips ($3 the offset less one):
// the listing's own order and filters (listSessionsSQL's inner query), %s the agent condition.
const listSessionsSkipSQL = `
	select s.last_active_at, s.id from agentmem.sessions s
	where s.user_id = $1 and s.tenant_id = $2 and s.expires_at > now() %s
	order by s.last_active_at desc, s.id desc
	offset $3 limit 1`

var (
	listSessionsSkipAllSQL   = fmt.Sprintf(listSessionsSkipSQL, "")
	listSessionsSkipAgentSQL = fmt.Sprintf(listSessionsSkipSQL, "and s.agent = $4")
)

// listSkip is the key after the p.Offset sessions an offset skips; when fewer exist, a key past
// every session.
func (s *Store) listSkip(ctx context.Context, p ListSessionsParams) (*SessionKey, error) {
	sc := p.Scope
	q, args := listSessionsSkipAllSQL, []any{sc.UserID, sc.TenantID, p.Offset - 1}
	if sc.Agent != "" {
		q, args = listSessionsSkipAgentSQL, append(args, sc.Agent)
	}
	none := SessionKey{LastActiveAt: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)}
	k := none
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(q, args...).QueryRow(func(row pgx.Row) error {
			k = none // set afresh: a read a replica failed runs again on the primary
			err := row.Scan(&k.LastActiveAt, &k.ID)
			if err != nil && !isNotFound(err) {
				return fmt.Errorf("skip sessions: %w", err)
			}
			return nil
		})
	})
	return &k, err
}
