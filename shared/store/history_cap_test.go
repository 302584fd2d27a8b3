package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// capEnv is a store over a database of its own (the sweep caps every session of it) and an
// admin connection.
type capEnv struct {
	st   *store.Store
	conn *pgx.Conn
}

func newCapEnv(t *testing.T, summaries bool) *capEnv {
	t.Helper()
	e := storetest.New(t, storetest.MaxConns(4), storetest.Config(func(c *store.Config) { c.Summaries = summaries }))
	return &capEnv{st: e.Store, conn: e.Admin(t)}
}

// chat is n messages of alternating user and assistant text.
func chat(n int, prefix string) []memory.NewMessage { return storetest.Messages(n, prefix) }

// toolChat is groups of four messages: a user's question, an assistant's tool call, the tool's
// result and the assistant's answer; two of each four are what answers_only keeps.
func toolChat(groups int) []memory.NewMessage {
	var out []memory.NewMessage
	for g := range groups {
		id := fmt.Sprintf("call_%d", g)
		out = append(out,
			memory.NewMessage{Role: memory.RoleUser, Content: fmt.Sprintf("question %d", g)},
			memory.NewMessage{Role: memory.RoleAssistant, ToolCalls: []memory.ToolCall{{ID: id, Type: "function",
				Function: memory.FunctionCall{Name: "lookup", Arguments: "{}"}}}},
			memory.NewMessage{Role: memory.RoleTool, ToolCallID: &id, Content: fmt.Sprintf("result %d", g)},
			memory.NewMessage{Role: memory.RoleAssistant, Content: fmt.Sprintf("answer %d", g)})
	}
	return out
}

// commitAll commits msgs to a session in turns of 100.
func (e *capEnv) commitAll(t *testing.T, sc memory.Scope, sid uuid.UUID, msgs []memory.NewMessage) {
	t.Helper()
	for i := 0; i < len(msgs); i += 100 {
		storetest.Commit(t, e.st, sc, sid, msgs[i:min(i+100, len(msgs))])
	}
}

func (e *capEnv) sweep(t *testing.T, h memory.HistoryCap) memory.SweepResult {
	t.Helper()
	res, err := e.st.Sweep(context.Background(), store.SweepParams{BatchSize: 5000, Deadline: time.Now().Add(time.Minute), History: h})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// seqs are the seqs of a session's rows in table, in order.
func (e *capEnv) seqs(t *testing.T, table string, sid uuid.UUID) []int64 {
	t.Helper()
	rows, err := e.conn.Query(context.Background(), "select seq from agentmem."+table+" where session_id = $1 order by seq", sid)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func seqSpan(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// windows are the ids of every get-context window a caller may ask of the session: the largest
// (500), with answers_only, and a small one.
func (e *capEnv) windows(t *testing.T, sc memory.Scope, sid uuid.UUID) [][]string {
	t.Helper()
	var out [][]string
	for _, p := range []store.ContextParams{
		{MaxMessages: memory.MaxContextMessages},
		{MaxMessages: memory.MaxContextMessages, AnswersOnly: true},
		{MaxMessages: 20},
	} {
		p.Scope, p.SessionID = sc, sid
		c, err := e.st.GetContext(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range c.Messages {
			ids = append(ids, m.ID)
		}
		out = append(out, ids)
	}
	return out
}

func (e *capEnv) noWordDrift(t *testing.T) {
	t.Helper()
	var n int
	if err := e.conn.QueryRow(context.Background(), messageWordsDriftSQL).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d word counts differ from the stored messages'", n)
	}
}

// The cap keeps the newest keep messages of a session live and moves the older ones, as they
// were, to the archive: get-context's windows do not change, nor does the order of the
// session's history (the archive and the live table together), nor the numbering of the next
// turn; the word counts BM25 reads follow; a second sweep has nothing to do until the session
// has 100 messages more.
func TestHistoryCapArchivesWhatNoWindowReads(t *testing.T) {
	t.Parallel()
	e := newCapEnv(t, false)
	ctx := context.Background()
	sc := storetest.Scope("bot")
	sid, small := uuid.New(), uuid.New()
	e.commitAll(t, sc, sid, chat(1100, "turn"))
	e.commitAll(t, sc, small, chat(300, "short"))
	before := e.windows(t, sc, sid)
	all, err := e.st.SessionHistory(ctx, store.HistoryParams{Scope: sc, SessionID: sid, Limit: 2000})
	if err != nil {
		t.Fatal(err)
	}

	res := e.sweep(t, memory.HistoryCap{Keep: 500})
	if res.Capped.Archived != 600 || res.Capped.Deleted != 0 || res.Capped.Sessions != 2 {
		t.Fatalf("capped %+v, want 600 archived of one session, two looked at", res.Capped)
	}
	if got := e.seqs(t, "messages", sid); !slices.Equal(got, seqSpan(601, 1100)) {
		t.Fatalf("live seqs %d..%d (%d)", got[0], got[len(got)-1], len(got))
	}
	if got := e.seqs(t, "messages_archive", sid); !slices.Equal(got, seqSpan(1, 600)) {
		t.Fatalf("archived seqs %v", got)
	}
	if got := e.seqs(t, "messages", small); len(got) != 300 {
		t.Errorf("a session under the cap lost messages: %d live", len(got))
	}
	if after := e.windows(t, sc, sid); !slices.EqualFunc(before, after, slices.Equal[[]string]) {
		t.Error("a get-context window changed")
	}
	e.noWordDrift(t)
	// The archive holds the messages as they were, and the history with it is the history.
	withArchive, err := e.st.SessionHistory(ctx, store.HistoryParams{Scope: sc, SessionID: sid, Limit: 2000, IncludeArchived: true})
	if err != nil {
		t.Fatal(err)
	}
	if withArchive.Total != 1100 || len(withArchive.Messages) != 1100 {
		t.Fatalf("history with the archive: %d of %d", len(withArchive.Messages), withArchive.Total)
	}
	for i, m := range withArchive.Messages {
		w := all.Messages[i]
		if m.ID != w.ID || m.Seq != w.Seq || m.Content != w.Content || m.Role != w.Role || !m.CreatedAt.Equal(w.CreatedAt) {
			t.Fatalf("message %d: %+v, want %+v", i, m, w)
		}
	}
	live, err := e.st.SessionHistory(ctx, store.HistoryParams{Scope: sc, SessionID: sid, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if live.Total != 500 {
		t.Errorf("history without the archive counts %d", live.Total)
	}

	// Nothing more until 100 more messages came; the next turn numbers on.
	if res := e.sweep(t, memory.HistoryCap{Keep: 500}); res.Capped != (memory.CapCounts{}) {
		t.Errorf("a second sweep capped %+v", res.Capped)
	}
	r := storetest.Commit(t, e.st, sc, sid, chat(99, "more"))
	if r.Messages[0].Seq != 1101 {
		t.Errorf("the next turn begins at seq %d", r.Messages[0].Seq)
	}
	if res := e.sweep(t, memory.HistoryCap{Keep: 500}); res.Capped.Sessions != 0 {
		t.Errorf("99 messages later the sweep looked at %d sessions", res.Capped.Sessions)
	}
	storetest.Commit(t, e.st, sc, sid, chat(1, "one more"))
	if res := e.sweep(t, memory.HistoryCap{Keep: 500}); res.Capped.Archived != 100 {
		t.Errorf("100 messages later the sweep archived %d", res.Capped.Archived)
	}
	e.noWordDrift(t)
}

// get-context's answers_only window reads the 500 newest messages that are not tool traffic,
// which in a session of tool calls reach further back than 500 messages: the cap keeps all
// of them live.
func TestHistoryCapKeepsTheAnswersOnlyWindow(t *testing.T) {
	t.Parallel()
	e := newCapEnv(t, false)
	sc := storetest.Scope("bot")
	sid := uuid.New()
	e.commitAll(t, sc, sid, toolChat(300)) // 1200 messages, 600 answers
	before := e.windows(t, sc, sid)
	res := e.sweep(t, memory.HistoryCap{Keep: 500})
	// The 500 newest answers begin with the question of group 50 (0-based), seq 201.
	if res.Capped.Archived != 200 {
		t.Fatalf("archived %d, want the 200 messages before seq 201", res.Capped.Archived)
	}
	if got := e.seqs(t, "messages", sid); got[0] != 201 || len(got) != 1000 {
		t.Fatalf("live from seq %d, %d messages", got[0], len(got))
	}
	if after := e.windows(t, sc, sid); !slices.EqualFunc(before, after, slices.Equal[[]string]) {
		t.Error("a get-context window changed")
	}
	// The history's answers_only holds for the archive too, with an offset as with a cursor.
	ctx := context.Background()
	h, err := e.st.SessionHistory(ctx, store.HistoryParams{Scope: sc, SessionID: sid, Limit: 200,
		IncludeArchived: true, AnswersOnly: true, Offset: 10})
	if err != nil {
		t.Fatal(err)
	}
	if h.Total != 600 || len(h.Messages) != 200 || h.Messages[0].Content != "question 5" {
		t.Fatalf("answers with the archive, from offset 10: total %d, %d messages, first %q", h.Total, len(h.Messages), h.Messages[0].Content)
	}
	for _, m := range h.Messages {
		if m.Role == memory.RoleTool || len(m.ToolCalls) > 0 {
			t.Fatalf("answers_only with the archive returns %+v", m)
		}
	}
}

// With rolling summaries made by the deployment, only what a session's summary covers moves:
// nothing while it has none, then up to its through_seq; the summary and the window answer
// as before.
func TestHistoryCapWaitsForTheSummary(t *testing.T) {
	t.Parallel()
	e := newCapEnv(t, true)
	ctx := context.Background()
	sc := storetest.Scope("bot")
	sid := uuid.New()
	e.commitAll(t, sc, sid, chat(1100, "turn"))
	if res := e.sweep(t, memory.HistoryCap{Keep: 500}); res.Capped.Archived != 0 || res.Capped.Sessions != 1 {
		t.Fatalf("without a summary the sweep capped %+v", res.Capped)
	}
	if _, err := e.conn.Exec(ctx, `update agentmem.sessions set history_checked_seq = 0 where id = $1`, sid); err != nil {
		t.Fatal(err)
	}
	if _, err := e.conn.Exec(ctx, `insert into agentmem.session_summaries (session_id, tenant_id, user_id, agent, content,
		through_seq, prompt, model) values ($1, '', $2, 'bot', 'what came before', 250, 'summarise.v1', 'test')`, sid, sc.UserID); err != nil {
		t.Fatal(err)
	}
	before := e.windows(t, sc, sid)
	in, err := e.st.SummaryInput(ctx, sc, sid)
	if err != nil {
		t.Fatal(err)
	}
	if res := e.sweep(t, memory.HistoryCap{Keep: 500}); res.Capped.Archived != 250 {
		t.Fatalf("with a summary through 250 the sweep archived %d", res.Capped.Archived)
	}
	if after := e.windows(t, sc, sid); !slices.EqualFunc(before, after, slices.Equal[[]string]) {
		t.Error("a get-context window changed")
	}
	after, err := e.st.SummaryInput(ctx, sc, sid)
	if err != nil {
		t.Fatal(err)
	}
	if after.Summary == nil || after.Summary.ThroughSeq != 250 || len(after.Messages) != len(in.Messages) || after.Messages[0].Seq != 251 {
		t.Errorf("the summary job reads something else after the cap: %d messages from %d", len(after.Messages), after.Messages[0].Seq)
	}
}

// A message that would outlive a message kept live (a turn committed with a longer ttl) stays
// live: when the newer one expires, the window reaches it again.
func TestHistoryCapKeepsWhatOutlivesTheKept(t *testing.T) {
	t.Parallel()
	e := newCapEnv(t, false)
	ctx := context.Background()
	sc := storetest.Scope("bot")
	sid := uuid.New()
	e.commitAll(t, sc, sid, chat(600, "turn"))
	if _, err := e.conn.Exec(ctx, `update agentmem.messages set expires_at = now() + interval '10 years'
		where session_id = $1 and seq = 50`, sid); err != nil {
		t.Fatal(err)
	}
	if res := e.sweep(t, memory.HistoryCap{Keep: 500}); res.Capped.Archived != 99 {
		t.Fatalf("archived %d, want the 100 oldest but seq 50", res.Capped.Archived)
	}
	if got := e.seqs(t, "messages", sid); got[0] != 50 || got[1] != 101 {
		t.Errorf("live seqs begin %v", got[:2])
	}
}

// HISTORY_OVERFLOW=delete deletes what the cap would archive; a session's own keep_messages
// (set by a service's commit) caps it when the deployment caps nothing, and 0 exempts it when
// the deployment caps every session.
func TestHistoryCapDeletesAndFollowsTheSessionsOwnCap(t *testing.T) {
	t.Parallel()
	e := newCapEnv(t, false)
	ctx := context.Background()
	sc := storetest.Scope("bot")
	own, plain, exempt := uuid.New(), uuid.New(), uuid.New()
	for _, s := range []uuid.UUID{own, plain, exempt} {
		e.commitAll(t, sc, s, chat(700, "turn"))
	}
	for s, keep := range map[uuid.UUID]int{own: 600, exempt: 0} {
		if _, _, err := e.st.CommitTurn(ctx, store.CommitParams{Scope: sc, SessionID: s, TTL: time.Hour,
			Messages: chat(1, "set the cap"), KeepMessages: &keep}); err != nil {
			t.Fatal(err)
		}
	}
	res := e.sweep(t, memory.HistoryCap{Delete: true})
	if res.Capped.Deleted != 101 || res.Capped.Archived != 0 {
		t.Fatalf("with no deployment cap: %+v, want the 101 oldest of the session capped at 600 deleted", res.Capped)
	}
	if n := len(e.seqs(t, "messages", own)); n != 600 {
		t.Errorf("the session capped at 600 keeps %d", n)
	}
	if n := len(e.seqs(t, "messages_archive", own)); n != 0 {
		t.Errorf("delete archived %d", n)
	}
	if n := len(e.seqs(t, "messages", plain)); n != 700 {
		t.Errorf("a session without a cap keeps %d", n)
	}
	e.noWordDrift(t)
	if _, err := e.conn.Exec(ctx, `update agentmem.sessions set history_checked_seq = 0`); err != nil {
		t.Fatal(err)
	}
	res = e.sweep(t, memory.HistoryCap{Keep: 500})
	if res.Capped.Archived != 200 {
		t.Fatalf("with the deployment's cap of 500: %+v, want the plain session's 200 oldest", res.Capped)
	}
	if n := len(e.seqs(t, "messages", exempt)); n != 701 {
		t.Errorf("the session exempted with 0 keeps %d", n)
	}
	if n := len(e.seqs(t, "messages", own)); n != 600 {
		t.Errorf("the session's own cap gave way to the deployment's: %d live", n)
	}
}

// A message a live request holds is skipped, never waited for, and the session stays to be
// looked at: the next sweep moves it.
func TestHistoryCapSkipsHeldMessages(t *testing.T) {
	t.Parallel()
	e := newCapEnv(t, false)
	ctx := context.Background()
	sc := storetest.Scope("bot")
	sid := uuid.New()
	e.commitAll(t, sc, sid, chat(600, "turn"))
	tx, err := e.conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `select 1 from agentmem.messages where session_id = $1 and seq = 7 for update`, sid); err != nil {
		t.Fatal(err)
	}
	res := e.sweep(t, memory.HistoryCap{Keep: 500})
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if res.Capped.Archived != 99 || res.Capped.Sessions != 0 || !res.More {
		t.Fatalf("with seq 7 held: %+v, more %v", res.Capped, res.More)
	}
	if res := e.sweep(t, memory.HistoryCap{Keep: 500}); res.Capped.Archived != 1 || res.Capped.Sessions != 1 || res.More {
		t.Fatalf("once released: %+v, more %v", res.Capped, res.More)
	}
	if got := e.seqs(t, "messages_archive", sid); !slices.Equal(got, seqSpan(1, 100)) {
		t.Errorf("archived %v", got)
	}
}

// The archive is guarded as the messages are, in PostgreSQL itself: an attacker signed in to
// the same project (role authenticated with their own claims, as PostgREST runs their request)
// reads none of a victim's archived messages and changes none, and the functions' role under
// the attacker's claims reads and deletes none either.
func TestHistoryArchiveRefusesOtherUsers(t *testing.T) {
	t.Parallel()
	e := newCapEnv(t, false)
	ctx := context.Background()
	victim := memory.Scope{TenantID: "t1", UserID: "auth0|victim", Agent: "bot"}
	sid := uuid.New()
	e.commitAll(t, victim, sid, chat(600, "secret"))
	e.sweep(t, memory.HistoryCap{Keep: 500})
	for _, attacker := range []owner{{"t1", "auth0|attacker"}, {"t2", victim.UserID}, {"", victim.UserID}} {
		for _, role := range []string{"authenticated", store.CallerRole} {
			var seen int
			err := asRole(t, e.conn, role, userClaims(attacker), func(tx pgx.Tx) error {
				return tx.QueryRow(ctx, `select count(*) from agentmem.messages_archive where session_id = $1 or user_id = $2`,
					sid, victim.UserID).Scan(&seen)
			})
			if err != nil || seen != 0 {
				t.Errorf("%s as %v reads %d archived messages of the victim (%v)", role, attacker, seen, err)
			}
			for _, q := range []string{
				`delete from agentmem.messages_archive where session_id = $1`,
				`update agentmem.messages_archive set content = 'x' where session_id = $1`,
				`insert into agentmem.messages_archive (session_id, seq, id, tenant_id, user_id, agent, role, content,
				   token_estimate, created_at, expires_at)
				 values ($1, 0, 'forged', 't1', 'auth0|victim', 'bot', 'user', 'forged', 1, now(), now() + interval '1 day')`,
			} {
				var n int64
				err := asRole(t, e.conn, role, userClaims(attacker), func(tx pgx.Tx) error {
					tag, err := tx.Exec(ctx, q, sid)
					n = tag.RowsAffected()
					if err == nil && n > 0 {
						return tx.Commit(ctx)
					}
					return err
				})
				if n != 0 || err != nil && pgCode(err) != "42501" {
					t.Errorf("%s as %v: %q changed %d rows (%v)", role, attacker, q[:30], n, err)
				}
			}
		}
	}
	if got := e.seqs(t, "messages_archive", sid); !slices.Equal(got, seqSpan(1, 100)) {
		t.Errorf("the victim's archive changed: %d rows", len(got))
	}
	// The victim's own request reads them, under the same policies.
	var mine int
	if err := asRole(t, e.conn, "authenticated", userClaims(owner{"t1", victim.UserID}), func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `select count(*) from agentmem.messages_archive`).Scan(&mine)
	}); err != nil || mine != 100 {
		t.Errorf("the victim reads %d of their archived messages (%v)", mine, err)
	}
}
