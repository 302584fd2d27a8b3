package main

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// The history workload's user and sessions, apart from every other workload's.
var historyUserID = uuid.MustParse("00000000-0000-4000-a100-000000000001")

func historySessionID(s int) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("00000000-0000-4000-a100-%012d", s+1000))
}

// historyAgents is how many agents the history user's sessions belong to: session s is agent
// "a<s % historyAgents>".
const historyAgents = 4

func historyAgent(s int) string { return fmt.Sprintf("a%d", s%historyAgents) }

// historyPageSize is the page a client shows; historyWalkPage the page of a walk through the
// whole history (the API's largest).
const (
	historyPageSize = 50
	historyWalkPage = 200
)

// loadHistory loads the history user with COPY: sz.HistorySessions sessions of
// sz.HistoryMessages / sz.HistorySessions messages each (texts from the history stream),
// stored session after session as a table fills, their creation times interleaved across
// sessions (message m of session s is the (m * sessions + s)-th oldest): each page of the
// history thus draws on many sessions, the harder case for reading it. It answers the creation
// time of the middle message.
func loadHistory(ctx context.Context, db *benchDB, sz bench.Sizes) (time.Time, error) {
	c, err := db.admin(ctx)
	if err != nil {
		return time.Time{}, err
	}
	defer c.Close(ctx)
	sessions, per := sz.HistorySessions, sz.HistoryMessages/sz.HistorySessions
	total := sessions * per
	now := time.Now()
	expires := now.Add(retention)
	at := func(s, m int) time.Time { return now.Add(-time.Duration(total-(m*sessions+s)) * time.Second) }
	rows := make([][]any, sessions)
	for s := range rows {
		rows[s] = []any{historySessionID(s), "", historyUserID.String(), historyAgent(s), int64(per), at(s, 0), at(s, per-1), expires}
	}
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"agentmem", "sessions"},
		[]string{"id", "tenant_id", "user_id", "agent", "last_seq", "created_at", "last_active_at", "expires_at"},
		pgx.CopyFromRows(rows)); err != nil {
		return time.Time{}, fmt.Errorf("copy history sessions: %w", err)
	}
	r := bench.Stream(bench.StreamHistory)
	s, m := 0, 0
	_, err = c.CopyFrom(ctx, pgx.Identifier{"agentmem", "messages"},
		[]string{"session_id", "seq", "id", "tenant_id", "user_id", "agent", "role", "content", "token_estimate", "created_at", "expires_at"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if s == sessions {
				return nil, nil
			}
			text := bench.Text(r, bench.MessageWords)
			row := []any{historySessionID(s), int64(m + 1), uuid.New(), "", historyUserID.String(), historyAgent(s), bench.Role(m), text,
				int32(memory.EstimateTokens(text, nil, nil, nil)), at(s, m), expires}
			if m++; m == per {
				s, m = s+1, 0
			}
			return row, nil
		}))
	if err != nil {
		return time.Time{}, fmt.Errorf("copy history messages: %w", err)
	}
	if err := settle(ctx, c, "agentmem.sessions, agentmem.messages"); err != nil {
		return time.Time{}, err
	}
	return at(sessions/2, per/2), prewarm(ctx, c, "agentmem.messages_owner_created_idx")
}

// historyLevel reads and clears the history user's messages at one level. A cursor is opaque
// to the workload: a *store.MessageKey at the store, the API's string through HTTP.
type historyLevel interface {
	level() string
	// page reads a page: newest first unless oldest; of one agent when agent is not empty;
	// since a time when since is not nil. It answers the messages read, the next cursor (nil
	// on the last page) and the total.
	page(ctx context.Context, p historyPage) (n int, next any, total int64, err error)
	clear(ctx context.Context, agent string) (int64, error)
}

type historyPage struct {
	agent  string
	oldest bool
	limit  int
	cursor any
	since  *time.Time
}

type storeHistory struct{ st *store.Store }

func (h storeHistory) level() string { return "store" }

func (h storeHistory) page(ctx context.Context, p historyPage) (int, any, int64, error) {
	q := store.UserHistoryParams{Scope: memory.Scope{UserID: historyUserID.String(), Agent: p.agent}, Newest: !p.oldest,
		Limit: p.limit, Since: p.since}
	if p.cursor != nil {
		q.After = p.cursor.(*store.MessageKey)
	}
	page, err := h.st.UserHistory(ctx, q)
	if err != nil || page.Next == nil {
		return len(page.Messages), nil, page.Total, err
	}
	return len(page.Messages), page.Next, page.Total, nil
}

func (h storeHistory) clear(ctx context.Context, agent string) (int64, error) {
	return h.st.ClearMessages(ctx, memory.Scope{UserID: historyUserID.String(), Agent: agent})
}

type httpHistory struct{ t *httpTarget }

func (h httpHistory) level() string { return "http" }

func (h httpHistory) page(ctx context.Context, p historyPage) (int, any, int64, error) {
	body := map[string]any{"op": "history", "limit": p.limit}
	if p.agent != "" {
		body["agent"] = p.agent
	}
	if p.oldest {
		body["order"] = "oldest"
	}
	if p.cursor != nil {
		body["cursor"] = p.cursor
	}
	if p.since != nil {
		body["since"] = p.since.UTC().Format(time.RFC3339Nano)
	}
	var out struct {
		Messages   []struct{} `json:"messages"`
		NextCursor *string    `json:"next_cursor"`
		Total      int64      `json:"total"`
	}
	if err := h.t.post(ctx, "sessions", historyUserID, body, &out); err != nil {
		return 0, nil, 0, err
	}
	if out.NextCursor == nil {
		return len(out.Messages), nil, out.Total, nil
	}
	return len(out.Messages), *out.NextCursor, out.Total, nil
}

func (h httpHistory) clear(ctx context.Context, agent string) (int64, error) {
	body := map[string]any{"op": "clear"}
	if agent != "" {
		body["agent"] = agent
	}
	var out struct {
		Deleted int64 `json:"deleted"`
	}
	err := h.t.post(ctx, "sessions", historyUserID, body, &out)
	return out.Deleted, err
}

// runHistoryReads walks the whole history in pages of historyWalkPage (checking it sees every
// message once and the total), then reads sz.HistoryReads pages of each kind, sequentially:
// the newest page, a page from a cursor of the walk in the older half, the newest page of agent
// a1, and the oldest page since mid. The reads are checked too: a page short of 50 messages is
// an error.
func runHistoryReads(ctx context.Context, h historyLevel, sz bench.Sizes, mid time.Time) (bench.History, error) {
	r := bench.History{Messages: sz.HistoryMessages / sz.HistorySessions * sz.HistorySessions, Sessions: sz.HistorySessions,
		Agents: historyAgents}
	// The walk: cursors newest first, every page but the last full.
	var cursors []any
	var cursor any
	seen := 0
	t0 := time.Now()
	for {
		n, next, total, err := h.page(ctx, historyPage{limit: historyWalkPage, cursor: cursor})
		if err != nil {
			return r, fmt.Errorf("history walk: %w", err)
		}
		if total != int64(r.Messages) {
			return r, fmt.Errorf("history walk: total %d, want %d", total, r.Messages)
		}
		seen += n
		r.WalkPages++
		if next == nil {
			break
		}
		cursors = append(cursors, next)
		cursor = next
	}
	r.WalkSeconds = time.Since(t0).Seconds()
	if seen != r.Messages {
		return r, fmt.Errorf("history walk saw %d messages, want %d", seen, r.Messages)
	}
	if len(cursors) < 2 {
		return r, fmt.Errorf("history walk: %d pages, too few for deep reads", r.WalkPages)
	}
	older := cursors[len(cursors)/2:]
	draws := bench.Stream(bench.StreamHistory)
	deep := make([]any, sz.HistoryReads)
	for i := range deep {
		deep[i] = older[draws.Int(len(older))]
	}
	read := func(p func(i int) historyPage) func(context.Context, int) error {
		return func(ctx context.Context, i int) error {
			n, _, _, err := h.page(ctx, p(i))
			if err == nil && n != historyPageSize {
				err = fmt.Errorf("a page of %d messages, want %d", n, historyPageSize)
			}
			return err
		}
	}
	first := read(func(int) historyPage { return historyPage{limit: historyPageSize} })
	measure(ctx, 1, max(sz.HistoryReads/10, 4), first) // warm-up
	r.FirstPage = measure(ctx, 1, sz.HistoryReads, first)
	r.DeepPage = measure(ctx, 1, sz.HistoryReads, read(func(i int) historyPage {
		return historyPage{limit: historyPageSize, cursor: deep[i]}
	}))
	r.AgentPage = measure(ctx, 1, sz.HistoryReads, read(func(int) historyPage {
		return historyPage{limit: historyPageSize, agent: historyAgent(1)}
	}))
	r.SincePage = measure(ctx, 1, sz.HistoryReads, read(func(int) historyPage {
		return historyPage{limit: historyPageSize, oldest: true, since: &mid}
	}))
	return r, nil
}

// timeClear clears once (agent a0, or everything left when agent is empty) and records it.
func timeClear(ctx context.Context, h historyLevel, agent string, r *bench.History) error {
	r.ClearScope = "all"
	if agent != "" {
		r.ClearScope = "agent " + agent
	}
	t0 := time.Now()
	n, err := h.clear(ctx, agent)
	r.ClearSeconds = time.Since(t0).Seconds()
	r.ClearDeleted = n
	return err
}

// runHistory loads the history user, reads at both levels, then clears agent a0's messages
// through HTTP and the rest at the store, and vacuums what the clears left.
func runHistory(ctx context.Context, cfg Config, db *benchDB, levels []historyLevel) (*bench.Levels[bench.History], error) {
	sz := cfg.Sizes
	t0 := time.Now()
	mid, err := loadHistory(ctx, db, sz)
	if err != nil {
		return nil, err
	}
	load := time.Since(t0).Seconds()
	cfg.logf("history: loaded %d messages in %d sessions in %.1fs", sz.HistoryMessages, sz.HistorySessions, load)
	out := &bench.Levels[bench.History]{}
	results := map[string]*bench.History{}
	for _, h := range levels {
		cfg.logf("history reads, %s", h.level())
		r, err := runHistoryReads(ctx, h, sz, mid)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h.level(), err)
		}
		r.LoadSeconds = load
		results[h.level()] = &r
		setLevel(out, h.level(), &r)
	}
	// Clears: one agent through HTTP first, then what is left at the store.
	for _, lv := range []struct{ level, agent string }{{"http", historyAgent(0)}, {"store", ""}} {
		for _, h := range levels {
			if h.level() != lv.level {
				continue
			}
			cfg.logf("history clear %q, %s", lv.agent, h.level())
			if err := timeClear(ctx, h, lv.agent, results[h.level()]); err != nil {
				return nil, fmt.Errorf("%s clear: %w", h.level(), err)
			}
		}
	}
	c, err := db.admin(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	return out, settle(ctx, c, "agentmem.sessions, agentmem.messages")
}
