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

// histRow is a message as the superuser reads it: where it is and when it was made.
type histRow struct {
	session uuid.UUID
	seq     int64
	agent   string
	content string
	created time.Time
}

// histRows reads the unexpired messages of (tenant, user) as the superuser, in the order a
// user-wide history promises (creation time, then session, then seq), oldest first.
func histRows(t *testing.T, exec func(func(*pgx.Conn)), tenant string, user string) []histRow {
	t.Helper()
	var out []histRow
	exec(func(conn *pgx.Conn) {
		rows, err := conn.Query(context.Background(), `
			select session_id, seq, agent, content, created_at from agentmem.messages
			where user_id = $1 and tenant_id = $2 and expires_at > now()
			order by created_at, session_id, seq`, user, tenant)
		if err != nil {
			t.Fatal(err)
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (histRow, error) {
			var h histRow
			err := r.Scan(&h.session, &h.seq, &h.agent, &h.content, &h.created)
			return h, err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	return out
}

// historyEnv is a store over a database of its own, and a way to act on it as the superuser.
func historyEnv(t *testing.T) (*store.Store, func(func(*pgx.Conn))) {
	t.Helper()
	e := storetest.New(t, storetest.MaxConns(8))
	return e.Store, adminExec(t, e.DB.URL)
}

func adminExec(t *testing.T, url string) func(func(*pgx.Conn)) {
	return func(fn func(*pgx.Conn)) {
		t.Helper()
		conn := storetest.Admin(t, url)
		fn(conn)
	}
}

// pageAll reads a user-wide history page by page, following the cursor, and checks that every
// page but the last is full and that each message carries its session.
func pageAll(t *testing.T, st *store.Store, p store.UserHistoryParams) ([]memory.Message, int64) {
	t.Helper()
	var all []memory.Message
	var total int64 = -1
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		page, err := st.UserHistory(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if total >= 0 && page.Total != total {
			t.Fatalf("total changed between pages: %d, then %d", total, page.Total)
		}
		total = page.Total
		for _, m := range page.Messages {
			if m.SessionID == nil {
				t.Fatalf("message %s has no session_id", m.ID)
			}
		}
		all = append(all, page.Messages...)
		if page.Next == nil {
			return all, total
		}
		if len(page.Messages) != p.Limit {
			t.Fatalf("page of %d messages before the end, limit %d", len(page.Messages), p.Limit)
		}
		p.After = page.Next
	}
}

func keysOf(msgs []memory.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = fmt.Sprintf("%s/%d", m.SessionID, m.Seq)
	}
	return out
}

func keysOfRows(rows []histRow, keep func(histRow) bool) []string {
	var out []string
	for _, r := range rows {
		if keep == nil || keep(r) {
			out = append(out, fmt.Sprintf("%s/%d", r.session, r.seq))
		}
	}
	return out
}

// A user's history across sessions: every unexpired message of the user and tenant once, in
// creation order (ties, such as the messages of one turn or of two turns committed in the same
// instant, broken by session and seq), forwards and backwards, by agent, since a time; nothing
// of another user or tenant, nothing expired.
func TestUserHistoryAcrossSessions(t *testing.T) {
	t.Parallel()
	st, admin := historyEnv(t)
	ctx := context.Background()
	user := uuid.New()
	other := uuid.New()
	sessions := []uuid.UUID{uuid.New(), uuid.New(), uuid.New(), uuid.New()}
	agentOf := func(i int) string { return []string{"alpha", "beta"}[i%2] }
	commit := func(tenant string, u uuid.UUID, agent string, sid uuid.UUID, contents ...string) {
		t.Helper()
		msgs := make([]memory.NewMessage, len(contents))
		for i, c := range contents {
			msgs[i] = memory.NewMessage{Role: memory.RoleUser, Content: c}
		}
		if _, _, err := commitTurn(st, ctx, store.CommitParams{Scope: memory.Scope{TenantID: tenant, UserID: u.String(), Agent: agent},
			SessionID: sid, TTL: time.Hour, Messages: msgs}); err != nil {
			t.Fatal(err)
		}
	}
	for round := 0; round < 5; round++ {
		for i, sid := range sessions {
			commit("t1", user, agentOf(i), sid, fmt.Sprintf("r%d s%d a", round, i), fmt.Sprintf("r%d s%d b", round, i))
		}
	}
	// The same user in another tenant, and another user: never in the history.
	commit("t2", user, "alpha", uuid.New(), "other tenant")
	commit("t1", other, "alpha", uuid.New(), "other user")
	// Creation times the test chooses: rounds ten seconds apart, and sessions 0 and 1 of each
	// round at the same instant, so ties between sessions occur; round 0 two days back.
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	admin(func(conn *pgx.Conn) {
		for i, sid := range sessions {
			off := i
			if i == 1 {
				off = 0
			}
			if _, err := conn.Exec(ctx, `
				update agentmem.messages set created_at = $2::timestamptz
				  + make_interval(secs => ((seq - 1) / 2) * 10 + $3::int)
				where session_id = $1`, sid, base, off); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := conn.Exec(ctx, `update agentmem.messages set created_at = now() - interval '2 days'
			where session_id = $1 and seq <= 2`, sessions[2]); err != nil {
			t.Fatal(err)
		}
		// One expired message: never shown, never counted.
		if _, err := conn.Exec(ctx, `update agentmem.messages set expires_at = now() - interval '1 second'
			where session_id = $1 and seq = 3`, sessions[3]); err != nil {
			t.Fatal(err)
		}
	})
	rows := histRows(t, admin, "t1", user.String())
	if len(rows) != 39 {
		t.Fatalf("fixture: %d unexpired messages, want 39", len(rows))
	}
	sc := memory.Scope{TenantID: "t1", UserID: user.String()}
	reversed := func(k []string) []string { k = slices.Clone(k); slices.Reverse(k); return k }

	for _, limit := range []int{1, 4, 39, 200} {
		got, total := pageAll(t, st, store.UserHistoryParams{Scope: sc, Limit: limit})
		if want := keysOfRows(rows, nil); !slices.Equal(keysOf(got), want) || total != 39 {
			t.Errorf("oldest first, limit %d: total %d\n%v\nwant\n%v", limit, total, keysOf(got), want)
		}
		got, total = pageAll(t, st, store.UserHistoryParams{Scope: sc, Limit: limit, Newest: true})
		if want := reversed(keysOfRows(rows, nil)); !slices.Equal(keysOf(got), want) || total != 39 {
			t.Errorf("newest first, limit %d: total %d\n%v\nwant\n%v", limit, total, keysOf(got), want)
		}
	}
	// Messages come whole: content, role, session.
	got, _ := pageAll(t, st, store.UserHistoryParams{Scope: sc, Limit: 200})
	for i, m := range got {
		if m.Content != rows[i].content || *m.SessionID != rows[i].session || !m.CreatedAt.Equal(rows[i].created) {
			t.Fatalf("message %d: %+v, want %+v", i, m, rows[i])
		}
	}

	// One agent.
	for _, agent := range []string{"alpha", "beta", "gamma"} {
		a := sc
		a.Agent = agent
		got, total := pageAll(t, st, store.UserHistoryParams{Scope: a, Limit: 3, Newest: true})
		want := reversed(keysOfRows(rows, func(r histRow) bool { return r.agent == agent }))
		if !slices.Equal(keysOf(got), want) || total != int64(len(want)) {
			t.Errorf("agent %s: total %d\n%v\nwant\n%v", agent, total, keysOf(got), want)
		}
	}

	// Since: at or after the instant, to the microsecond.
	since := base.Add(20 * time.Second)
	got, total := pageAll(t, st, store.UserHistoryParams{Scope: sc, Limit: 5, Since: &since})
	want := keysOfRows(rows, func(r histRow) bool { return !r.created.Before(since) })
	if !slices.Equal(keysOf(got), want) || total != int64(len(want)) || len(want) == 0 || len(want) == len(rows) {
		t.Errorf("since %s: total %d\n%v\nwant\n%v", since, total, keysOf(got), want)
	}
	justAfter := since.Add(time.Microsecond)
	if _, total := pageAll(t, st, store.UserHistoryParams{Scope: sc, Limit: 5, Since: &justAfter}); total >= int64(len(want)) {
		t.Errorf("since a microsecond later: total %d, want fewer than %d", total, len(want))
	}

	// Another tenant of the same user, and the other user, see only their own.
	if got, total := pageAll(t, st, store.UserHistoryParams{Scope: memory.Scope{TenantID: "t2", UserID: user.String()}, Limit: 10}); total != 1 ||
		len(got) != 1 || got[0].Content != "other tenant" {
		t.Errorf("tenant t2: %d messages, total %d", len(got), total)
	}
	if got, total := pageAll(t, st, store.UserHistoryParams{Scope: memory.Scope{TenantID: "t1", UserID: other.String()}, Limit: 10}); total != 1 ||
		len(got) != 1 || got[0].Content != "other user" {
		t.Errorf("other user: %d messages, total %d", len(got), total)
	}
	if _, total := pageAll(t, st, store.UserHistoryParams{Scope: memory.Scope{TenantID: "t1", UserID: uuid.NewString()}, Limit: 10}); total != 0 {
		t.Errorf("a user with nothing: total %d", total)
	}
}

// Newest-first pages continue below the cursor while messages arrive: the new ones are on a
// fresh first page, and the pages already begun neither repeat nor skip a message.
func TestUserHistoryWhileMessagesArrive(t *testing.T) {
	t.Parallel()
	st, _, _ := commitEnv(t)
	ctx := context.Background()
	sc := memory.Scope{UserID: uuid.NewString(), Agent: "default"}
	var sent []string
	commit := func(sid uuid.UUID, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			c := fmt.Sprintf("m%d", len(sent))
			if _, _, err := commitTurn(st, ctx, store.CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour,
				Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: c}}}); err != nil {
				t.Fatal(err)
			}
			sent = append(sent, c)
		}
	}
	s1, s2 := uuid.New(), uuid.New()
	commit(s1, 4)
	commit(s2, 4)
	all := memory.Scope{UserID: sc.UserID}
	var seen []string
	p := store.UserHistoryParams{Scope: all, Limit: 3, Newest: true}
	for i := 0; ; i++ {
		page, err := st.UserHistory(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.Messages {
			seen = append(seen, m.Content)
		}
		if page.Next == nil {
			break
		}
		p.After = page.Next
		commit([]uuid.UUID{s1, s2}[i%2], 2)
	}
	want := []string{"m7", "m6", "m5", "m4", "m3", "m2", "m1", "m0"}
	if !slices.Equal(seen, want) {
		t.Errorf("newest pages while messages arrived: %v, want %v", seen, want)
	}
	first, err := st.UserHistory(ctx, store.UserHistoryParams{Scope: all, Limit: 1, Newest: true})
	if err != nil {
		t.Fatal(err)
	}
	if first.Messages[0].Content != sent[len(sent)-1] || first.Total != int64(len(sent)) {
		t.Errorf("fresh first page: %q, total %d; want %q, %d", first.Messages[0].Content, first.Total, sent[len(sent)-1], len(sent))
	}
}

// Per-session history takes since too: the page and the total count only what was created at
// or after it.
func TestSessionHistorySince(t *testing.T) {
	t.Parallel()
	st, _, exec := commitEnv(t)
	ctx := context.Background()
	sc := memory.Scope{UserID: uuid.NewString(), Agent: "default"}
	sid := uuid.New()
	for i := 0; i < 6; i++ {
		if _, _, err := commitTurn(st, ctx, store.CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour,
			Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: fmt.Sprintf("m%d", i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	exec(`update agentmem.messages set created_at = now() - make_interval(hours => 7 - seq::int) where session_id = $1`, sid)
	since := time.Now().Add(-3*time.Hour - 30*time.Minute)
	for _, newest := range []bool{false, true} {
		page, err := st.SessionHistory(ctx, store.HistoryParams{Scope: sc, SessionID: sid, Newest: newest, Limit: 2, Since: &since})
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, m := range page.Messages {
			seqs = append(seqs, m.Seq)
		}
		want := []int64{4, 5}
		if newest {
			want = []int64{6, 5}
		}
		if page.Total != 3 || !slices.Equal(seqs, want) || page.Next == nil {
			t.Errorf("newest %v: total %d, seqs %v, next %v; want 3, %v and a cursor", newest, page.Total, seqs, page.Next, want)
		}
	}
}

// tableCounts counts the rows of (tenant, user) in every table that holds a user's rows but
// messages, as the superuser.
func tableCounts(t *testing.T, admin func(func(*pgx.Conn)), tenant string, user uuid.UUID) map[string]int {
	t.Helper()
	out := map[string]int{}
	admin(func(conn *pgx.Conn) {
		for _, tb := range []string{"sessions", "active_sessions", "memories", "user_memory", "user_state", "notes", "idempotency_keys"} {
			var n int
			if err := conn.QueryRow(context.Background(), "select count(*) from agentmem."+tb+
				" where user_id = $1 and tenant_id = $2", user, tenant).Scan(&n); err != nil {
				t.Fatal(err)
			}
			out[tb] = n
		}
	})
	return out
}

// Clearing deletes the user's messages (of one agent, when named) and nothing else: sessions
// keep their seq counters, so a later commit numbers on after the deleted messages; the
// active session stays; memories, key/value memory, state, notes and idempotency records stay,
// and a retry of a turn committed before the clear answers as before without storing it again;
// get-context then shows no message but still recalls. Another user's or tenant's messages
// are untouched.
func TestClearMessagesKeepsEverythingElse(t *testing.T) {
	t.Parallel()
	st, admin := historyEnv(t)
	ctx := context.Background()
	user, tenant := uuid.New(), "t1"
	alpha := memory.Scope{TenantID: tenant, UserID: user.String(), Agent: "alpha"}
	beta := memory.Scope{TenantID: tenant, UserID: user.String(), Agent: "beta"}
	active, err := st.ActiveSession(ctx, store.ActiveSessionParams{Scope: alpha, Mode: store.ModeResolve, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	sa, sb := active.SessionID, uuid.New()
	key := &store.Idempotency{CallerRole: "authenticated", Function: "commit-turn", Key: "turn-1", RequestHash: []byte("h1")}
	first := store.CommitParams{Scope: alpha, SessionID: sa, TTL: time.Hour, Idempotency: key,
		Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: "I prefer metric units"}, {Role: memory.RoleAssistant, Content: "Noted"}},
		Memories: []memory.NewMemory{{Content: "Prefers metric units"}}}
	firstRes, _, err := commitTurn(st, ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		for _, p := range []store.CommitParams{
			{Scope: alpha, SessionID: sa, TTL: time.Hour, Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: fmt.Sprintf("alpha %d", i)}}},
			{Scope: beta, SessionID: sb, TTL: time.Hour, Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: fmt.Sprintf("beta %d", i)}}},
		} {
			if _, _, err := commitTurn(st, ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	// An expired message is deleted too, but not counted: it was invisible already.
	admin(func(conn *pgx.Conn) {
		if _, err := conn.Exec(ctx, `update agentmem.messages set expires_at = now() - interval '1 second'
			where session_id = $1 and seq = 3`, sa); err != nil {
			t.Fatal(err)
		}
		for _, tb := range []string{"user_memory", "user_state", "notes"} {
			if _, err := conn.Exec(ctx, rlsFixtures[tb], tenant, user); err != nil {
				t.Fatal(err)
			}
		}
	})
	// Bystanders: the same user in another tenant, another user of the tenant.
	otherTenant := memory.Scope{TenantID: "t2", UserID: user.String(), Agent: "alpha"}
	otherUser := memory.Scope{TenantID: tenant, UserID: uuid.NewString(), Agent: "alpha"}
	for _, sc := range []memory.Scope{otherTenant, otherUser} {
		if _, _, err := commitTurn(st, ctx, store.CommitParams{Scope: sc, SessionID: uuid.New(), TTL: time.Hour,
			Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: "bystander"}}}); err != nil {
			t.Fatal(err)
		}
	}
	before := tableCounts(t, admin, tenant, user)

	// One agent first: beta's three messages go, alpha's four (and one expired) stay.
	n, err := st.ClearMessages(ctx, memory.Scope{TenantID: tenant, UserID: user.String(), Agent: "beta"})
	if err != nil || n != 3 {
		t.Fatalf("clear beta: %d, %v; want 3", n, err)
	}
	left := histRows(t, admin, tenant, user.String())
	if len(left) != 4 || slices.ContainsFunc(left, func(r histRow) bool { return r.agent != "alpha" }) {
		t.Fatalf("after clearing beta: %+v", left)
	}
	// Then every agent.
	if n, err = st.ClearMessages(ctx, memory.Scope{TenantID: tenant, UserID: user.String()}); err != nil || n != 4 {
		t.Fatalf("clear all: %d, %v; want 4", n, err)
	}
	admin(func(conn *pgx.Conn) {
		var n int
		if err := conn.QueryRow(ctx, `select count(*) from agentmem.messages where user_id = $1 and tenant_id = $2`,
			user, tenant).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%d messages left (expired ones included), %v", n, err)
		}
	})
	if n, err = st.ClearMessages(ctx, memory.Scope{TenantID: tenant, UserID: user.String()}); err != nil || n != 0 {
		t.Fatalf("clear again: %d, %v; want 0", n, err)
	}
	if after := tableCounts(t, admin, tenant, user); !mapsEqual(after, before) {
		t.Errorf("clear changed other tables: %v, before %v", after, before)
	}
	for _, sc := range []memory.Scope{otherTenant, otherUser} {
		if rows := histRows(t, admin, sc.TenantID, sc.UserID); len(rows) != 1 {
			t.Errorf("bystander %v lost messages: %d left", sc, len(rows))
		}
	}

	// A retry of the turn committed before the clear answers as it did and stores nothing.
	replay, replayed, err := commitTurn(st, ctx, first)
	if err != nil || !replayed || replay.Messages[0].ID != firstRes.Messages[0].ID {
		t.Fatalf("replay after clear: replayed %v, %v", replayed, err)
	}
	if rows := histRows(t, admin, tenant, user.String()); len(rows) != 0 {
		t.Fatalf("the replay stored the turn again: %d messages", len(rows))
	}
	// The next commit numbers on after the deleted messages, on both commit paths.
	res, _, err := commitTurn(st, ctx, store.CommitParams{Scope: alpha, SessionID: sa, TTL: time.Hour,
		Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: "after"}, {Role: memory.RoleAssistant, Content: "clear"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Messages[0].Seq != 6 || res.Messages[1].Seq != 7 {
		t.Errorf("seqs after the clear: %d, %d; want 6, 7", res.Messages[0].Seq, res.Messages[1].Seq)
	}
	id := uuid.NewString()
	res, _, err = commitTurn(st, ctx, store.CommitParams{Scope: beta, SessionID: sb, TTL: time.Hour,
		Messages: []memory.NewMessage{{ID: &id, Role: memory.RoleUser, Content: "with a client id"}}})
	if err != nil || res.Messages[0].Seq != 4 {
		t.Errorf("seq after the clear with a client id: %+v, %v; want 4", res.Messages, err)
	}
	// The active session is the same; get-context shows the new messages only, and recalls.
	again, err := st.ActiveSession(ctx, store.ActiveSessionParams{Scope: alpha, Mode: store.ModeResolve, TTL: time.Hour})
	if err != nil || again.SessionID != sa || again.Created {
		t.Errorf("active session after clear: %+v, %v", again, err)
	}
	c, err := getContext(st, ctx, store.ContextParams{Scope: alpha, SessionID: sa, MaxMessages: 20, Query: "metric units", RecallK: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 2 || c.Messages[0].Content != "after" || len(c.Memories) != 1 {
		t.Errorf("get-context after clear: %d messages, %d memories", len(c.Messages), len(c.Memories))
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A clear racing with commits deletes whole turns: every session keeps, of the turns committed
// meanwhile, only complete ones, numbered strictly in order, and later commits number on.
func TestClearMessagesRacingCommits(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: races a clear against rounds of concurrent commits")
	}
	st, admin := historyEnv(t)
	ctx := context.Background()
	sc := memory.Scope{UserID: uuid.NewString(), Agent: "default"}
	sessions := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	const turns = 40
	errs := make(chan error, len(sessions)+1)
	for _, sid := range sessions {
		go func() {
			for i := 0; i < turns; i++ {
				if _, _, err := commitTurn(st, ctx, store.CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour,
					Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: fmt.Sprintf("q%d", i)},
						{Role: memory.RoleAssistant, Content: fmt.Sprintf("a%d", i)}}}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	go func() {
		for i := 0; i < 10; i++ {
			if _, err := st.ClearMessages(ctx, memory.Scope{UserID: sc.UserID}); err != nil {
				errs <- err
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		errs <- nil
	}()
	for range len(sessions) + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	rows := histRows(t, admin, "", sc.UserID)
	bySession := map[uuid.UUID][]histRow{}
	for _, r := range rows {
		bySession[r.session] = append(bySession[r.session], r)
	}
	for sid, rs := range bySession {
		slices.SortFunc(rs, func(a, b histRow) int { return int(a.seq - b.seq) })
		if len(rs)%2 != 0 {
			t.Errorf("session %s kept half a turn: %d messages", sid, len(rs))
			continue
		}
		for i := 0; i < len(rs); i += 2 {
			q, a := rs[i], rs[i+1]
			if q.seq%2 != 1 || a.seq != q.seq+1 || q.content[1:] != a.content[1:] || q.content[0] != 'q' {
				t.Errorf("session %s: turn of seqs %d, %d holds %q, %q", sid, q.seq, a.seq, q.content, a.content)
			}
		}
	}
	for _, sid := range sessions {
		res, _, err := commitTurn(st, ctx, store.CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour,
			Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: "last"}}})
		if err != nil || res.Messages[0].Seq != 2*turns+1 {
			t.Errorf("session %s: the last commit got %+v, %v; want seq %d", sid, res.Messages, err, 2*turns+1)
		}
	}
}
