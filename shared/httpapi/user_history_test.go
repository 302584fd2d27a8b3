package httpapi_test

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// uhPage pages through a user's history with fields kv (op history, no session_id) and returns
// every message and the totals of the pages.
func uhPage(e *env, token string, limit int, kv ...any) ([]map[string]any, []float64) {
	e.t.Helper()
	var msgs []map[string]any
	var totals []float64
	var cursor any
	for page := 1; ; page++ {
		if page > 1000 {
			e.t.Fatal("paging does not end")
		}
		r := smOp(e, token, "sessions", "history", append([]any{"limit", limit, "cursor", cursor}, kv...)...).must(e.t, http.StatusOK)
		for _, m := range list(r.body["messages"]) {
			msgs = append(msgs, obj(m))
		}
		totals = append(totals, r.body["total"].(float64))
		if r.body["next_cursor"] == nil {
			return msgs, totals
		}
		cursor = r.body["next_cursor"]
	}
}

func uhContents(msgs []map[string]any) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = str(m["content"])
	}
	return out
}

// A user's history across sessions: every message of every agent's sessions, newest or oldest
// first by creation, each as the session's history renders it plus its session_id, paged with
// cursors, with the total; of one agent when named; since a time. Nothing of another user or
// tenant; a service names the user.
func TestSessionsUserHistory(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("t1")
	b := e.newUser("t1")
	uOtherTenant := smToken(t, u.id, "t2")
	s1, s2, s3 := uuid.New(), uuid.New(), uuid.New()
	var order []string // contents in commit order
	commit := func(token string, sid uuid.UUID, agent string, contents ...string) {
		t.Helper()
		smCommit(e, token, sid, agent, contents...)
		if token == u.token {
			order = append(order, contents...)
		}
	}
	commit(u.token, s1, "", "s1 first", "s1 second")
	commit(u.token, s2, "bot", "s2 first")
	commit(b.token, uuid.New(), "", "b's secret")
	commit(uOtherTenant, uuid.New(), "", "other tenant's secret")
	commit(u.token, s1, "", "s1 third")
	commit(u.token, s3, "bot", "s3 first", "s3 second")
	commit(u.token, s2, "bot", "s2 second")

	newest := slices.Clone(order)
	slices.Reverse(newest)
	for _, limit := range []int{1, 2, 50} {
		got, totals := uhPage(e, u.token, limit)
		if !slices.Equal(uhContents(got), newest) {
			t.Errorf("newest first, limit %d: %v, want %v", limit, uhContents(got), newest)
		}
		for _, tot := range totals {
			if tot != float64(len(order)) {
				t.Errorf("total %v, want %d", tot, len(order))
			}
		}
		got, _ = uhPage(e, u.token, limit, "order", "oldest")
		if !slices.Equal(uhContents(got), order) {
			t.Errorf("oldest first, limit %d: %v, want %v", limit, uhContents(got), order)
		}
	}

	// Each message is the session history's message, plus its session_id.
	all, _ := uhPage(e, u.token, 200, "order", "oldest")
	for _, sid := range []uuid.UUID{s1, s2, s3} {
		per := smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest").must(t, http.StatusOK)
		for _, pm := range list(per.body["messages"]) {
			pm := obj(pm)
			if _, has := pm["session_id"]; has {
				t.Errorf("a session's history carries session_id: %v", pm)
			}
			i := slices.IndexFunc(all, func(m map[string]any) bool { return m["id"] == pm["id"] })
			if i < 0 {
				t.Fatalf("message %v of session %s missing from the user's history", pm["id"], sid)
			}
			um := map[string]any{}
			for k, v := range all[i] {
				um[k] = v
			}
			if um["session_id"] != sid.String() {
				t.Errorf("message %v: session_id %v, want %s", pm["id"], um["session_id"], sid)
			}
			delete(um, "session_id")
			if !reflect.DeepEqual(um, pm) {
				t.Errorf("user history renders\n%v\nthe session's history\n%v", um, pm)
			}
		}
	}

	// One agent.
	got, totals := uhPage(e, u.token, 2, "agent", "bot")
	if want := []string{"s2 second", "s3 second", "s3 first", "s2 first"}; !slices.Equal(uhContents(got), want) || totals[0] != 4 {
		t.Errorf("agent bot: %v (total %v), want %v", uhContents(got), totals, want)
	}
	if got, totals := uhPage(e, u.token, 2, "agent", "nobody"); len(got) != 0 || totals[0] != 0 {
		t.Errorf("an agent without sessions: %v", got)
	}

	// Since: messages created at or after it, on the user's history and a session's.
	e.exec(`update agentmem.messages set created_at = now() - interval '3 days' where session_id = $1`, s1)
	since := time.Now().Add(-24 * time.Hour).UTC().Format(time.RFC3339)
	got, totals = uhPage(e, u.token, 2, "since", since, "order", "oldest")
	if want := []string{"s2 first", "s3 first", "s3 second", "s2 second"}; !slices.Equal(uhContents(got), want) || totals[0] != 4 {
		t.Errorf("since %s: %v (total %v), want %v", since, uhContents(got), totals, want)
	}
	r := smOp(e, u.token, "sessions", "history", "session_id", s1, "since", since).must(t, http.StatusOK)
	if len(list(r.body["messages"])) != 0 || r.body["total"] != float64(0) {
		t.Errorf("session s1 since %s: %s", since, r.raw)
	}
	r = smOp(e, u.token, "sessions", "history", "session_id", s2, "since", since).must(t, http.StatusOK)
	if r.body["total"] != float64(2) {
		t.Errorf("session s2 since %s: %s", since, r.raw)
	}
	// A null since is no since.
	if _, totals := uhPage(e, u.token, 50, "since", nil); totals[0] != float64(len(order)) {
		t.Errorf("since null: total %v", totals)
	}

	// Other users and tenants see only their own; a service acts for the user it names.
	for name, tok := range map[string]string{"another user": b.token, "another tenant": uOtherTenant} {
		t.Run(name, func(t *testing.T) {
			got, _ := uhPage(e, tok, 50)
			if len(got) != 1 || !strings.Contains(str(got[0]["content"]), "secret") {
				t.Errorf("%s's history: %v", name, uhContents(got))
			}
		})
	}
	svc := e.serviceToken()
	got, _ = uhPage(e, svc, 50, "user_id", u.id, "tenant_id", "t1")
	if len(got) != len(order) {
		t.Errorf("service for the user: %d messages, want %d", len(got), len(order))
	}
	r = smOp(e, svc, "sessions", "history").must(t, http.StatusBadRequest)
	if !namesField(r, "user_id") {
		t.Errorf("service without user_id: %s", r.raw)
	}
	smOp(e, b.token, "sessions", "history", "user_id", u.id).must(t, http.StatusForbidden)
}

// Oldest-first pages of a user's history reach messages committed while paging, and newest
// pages continue below the cursor; neither repeats nor skips.
func TestSessionsUserHistoryWhileMessagesArrive(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sessions := []uuid.UUID{uuid.New(), uuid.New()}
	n := 0
	next := func() string { n++; return fmt.Sprintf("m%02d", n) }
	for i := 0; i < 4; i++ {
		smCommit(e, u.token, sessions[i%2], "", next(), next())
	}
	var seen []string
	var cursor any
	for page := 0; ; page++ {
		r := smOp(e, u.token, "sessions", "history", "order", "oldest", "limit", 3, "cursor", cursor).must(t, http.StatusOK)
		for _, m := range list(r.body["messages"]) {
			seen = append(seen, str(obj(m)["content"]))
		}
		if r.body["next_cursor"] == nil {
			break
		}
		cursor = r.body["next_cursor"]
		if page < 3 {
			smCommit(e, u.token, sessions[page%2], "", next())
		}
	}
	var want []string
	for i := 1; i <= n; i++ {
		want = append(want, fmt.Sprintf("m%02d", i))
	}
	if !slices.Equal(seen, want) {
		t.Errorf("oldest pages while messages arrived: %v, want %v", seen, want)
	}
}

// clear deletes the caller's messages (of one agent when named) and keeps everything else:
// the sessions (listed with no messages), the active session, memories, key/value memory, state
// and notes. A retry of a turn committed before answers as before without storing it again; a
// later commit numbers on after the deleted messages; get-context shows no message but recalls.
// Another user's messages stay. Bad input stores nothing.
func TestSessionsClear(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	b := e.newUser("")
	act := e.call(u.token, "active-session", map[string]any{}).must(t, http.StatusCreated)
	sid := uuid.MustParse(str(act.body["session_id"]))
	botSession := uuid.New()
	turn := map[string]any{"session_id": sid, "messages": []any{
		map[string]any{"role": "user", "content": "I prefer metric units"},
		map[string]any{"role": "assistant", "content": "Noted"}},
		"memories": []any{map[string]any{"content": "Prefers metric units"}}}
	first := e.call(u.token, "commit-turn", turn, "Idempotency-Key", "turn-1").must(t, http.StatusCreated)
	smCommit(e, u.token, sid, "", "and more")
	smCommit(e, u.token, botSession, "bot", "bot one", "bot two")
	smCommit(e, b.token, uuid.New(), "", "b keeps this")
	e.call(u.token, "user-memory", map[string]any{"op": "set", "key": "prefs", "value": map[string]any{"units": "metric"}}).must(t, http.StatusCreated)
	e.call(u.token, "user-state", map[string]any{"op": "set", "mode": "active"}).must(t, http.StatusCreated)
	e.call(u.token, "notes", map[string]any{"op": "append", "content": "- likes metric"}).must(t, http.StatusCreated)
	memories := smOp(e, u.token, "memories", "list").must(t, http.StatusOK).raw
	notes := smOp(e, u.token, "notes", "read").must(t, http.StatusOK).raw
	kv := smOp(e, u.token, "user-memory", "list").must(t, http.StatusOK).raw
	state := smOp(e, u.token, "user-state", "get").must(t, http.StatusOK).raw

	// Bad input, and other callers, clear nothing.
	for _, c := range []struct {
		token, body string
		status      int
		field       string
	}{
		{u.token, fmt.Sprintf(`{"op":"clear","session_id":%q}`, sid), 400, "session_id"},
		{u.token, `{"op":"clear","agent":"no spaces"}`, 400, "agent"},
		{u.token, `{"op":"clear","agent":""}`, 400, "agent"},
		{u.token, `{"op":"clear","limit":10}`, 400, "limit"},
		{e.serviceToken(), `{"op":"clear"}`, 400, "user_id"},
		{b.token, fmt.Sprintf(`{"op":"clear","user_id":%q}`, u.id), 403, ""},
		{"", `{"op":"clear"}`, 401, ""},
	} {
		t.Run(c.body, func(t *testing.T) {
			r := e.call(c.token, "sessions", c.body)
			if r.status != c.status || (c.field != "" && !namesField(r, c.field)) {
				t.Errorf("%s: %d %s, want %d naming %q", c.body, r.status, r.raw, c.status, c.field)
			}
		})
	}
	if n := e.count("messages", "user_id = $1", u.id); n != 5 {
		t.Fatalf("refused clears deleted messages: %d left", n)
	}

	r := smOp(e, u.token, "sessions", "clear", "agent", "bot").must(t, http.StatusOK)
	if string(r.raw) != "{\"deleted\":2}\n" {
		t.Errorf("clear bot: %s", r.raw)
	}
	if got, _ := uhPage(e, u.token, 50); len(got) != 3 {
		t.Errorf("after clearing bot: %v", uhContents(got))
	}
	r = smOp(e, u.token, "sessions", "clear").must(t, http.StatusOK)
	if string(r.raw) != "{\"deleted\":3}\n" {
		t.Errorf("clear: %s", r.raw)
	}
	if got, totals := uhPage(e, u.token, 50); len(got) != 0 || totals[0] != 0 {
		t.Errorf("after clear: %v", uhContents(got))
	}
	if n := e.count("messages", "user_id = $1", b.id); n != 1 {
		t.Errorf("another user's messages: %d left, want 1", n)
	}

	// Sessions stay, empty; the rest is untouched.
	listed := smOp(e, u.token, "sessions", "list").must(t, http.StatusOK)
	if len(list(listed.body["sessions"])) != 2 {
		t.Errorf("sessions after clear: %s", listed.raw)
	}
	for _, s := range list(listed.body["sessions"]) {
		if obj(s)["message_count"] != float64(0) {
			t.Errorf("session after clear: %v", s)
		}
	}
	for what, before := range map[string][]byte{
		"memories":    memories,
		"notes":       notes,
		"user-memory": kv,
		"user-state":  state,
	} {
		op := map[string]string{"memories": "list", "notes": "read", "user-memory": "list", "user-state": "get"}[what]
		if after := smOp(e, u.token, what, op).must(t, http.StatusOK).raw; string(after) != string(before) {
			t.Errorf("%s changed by clear:\n%s\nwas\n%s", what, after, before)
		}
	}
	act2 := e.call(u.token, "active-session", map[string]any{"session_id": sid}).must(t, http.StatusOK)
	if act2.body["session_id"] != sid.String() || act2.body["matched"] != true {
		t.Errorf("active session after clear: %s", act2.raw)
	}

	// The retry answers as before and stores nothing; the next turn numbers on.
	replay := e.call(u.token, "commit-turn", turn, "Idempotency-Key", "turn-1").must(t, http.StatusCreated)
	if replay.header.Get("Idempotent-Replayed") != "true" || string(replay.raw) != string(first.raw) {
		t.Errorf("retry after clear: %v %s, want the first answer %s", replay.header, replay.raw, first.raw)
	}
	if n := e.count("messages", "user_id = $1", u.id); n != 0 {
		t.Errorf("the retry stored the cleared turn again: %d messages", n)
	}
	c := smCommit(e, u.token, sid, "", "after the clear")
	if seq := obj(list(c.body["messages"])[0])["seq"]; seq != float64(4) {
		t.Errorf("seq after the clear: %v, want 4", seq)
	}
	ctx := e.call(u.token, "get-context", map[string]any{"session_id": sid, "query": "metric units"}).must(t, http.StatusOK)
	if msgs := list(ctx.body["messages"]); len(msgs) != 1 || obj(msgs[0])["content"] != "after the clear" || len(list(ctx.body["memories"])) != 1 {
		t.Errorf("get-context after clear: %s", ctx.raw)
	}

	// A service clears for the user it names.
	r = smOp(e, e.serviceToken(), "sessions", "clear", "user_id", u.id).must(t, http.StatusOK)
	if string(r.raw) != "{\"deleted\":1}\n" {
		t.Errorf("service clear: %s", r.raw)
	}
}

// A user's history gives each message's content as it was committed, content parts included.
func TestSessionsUserHistoryKeepsContentParts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	parts := []any{
		map[string]any{"type": "text", "text": "What is on this receipt?"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/receipt.jpg"}},
	}
	e.call(u.token, "commit-turn", map[string]any{"session_id": sid, "messages": []any{
		map[string]any{"role": "user", "content": parts},
		map[string]any{"role": "assistant", "content": "A coffee."},
	}}).must(t, http.StatusCreated)
	got, _ := uhPage(e, u.token, 50, "order", "oldest")
	if len(got) != 2 || !reflect.DeepEqual(got[0]["content"], parts) || got[1]["content"] != "A coffee." || got[0]["session_id"] != sid.String() {
		t.Errorf("user history: %v", got)
	}
}
