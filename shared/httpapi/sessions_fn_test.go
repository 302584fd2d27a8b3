package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/auth"
)

// smOp calls an operation of a function: fields plus "op".
func smOp(e *env, token, fn, op string, kv ...any) response {
	e.t.Helper()
	body := map[string]any{"op": op}
	for i := 0; i+1 < len(kv); i += 2 {
		body[kv[i].(string)] = kv[i+1]
	}
	return e.call(token, fn, body)
}

// smCommit commits user messages with the given contents to a session (agent "" = default).
func smCommit(e *env, token string, sid uuid.UUID, agent string, contents ...string) response {
	e.t.Helper()
	msgs := make([]map[string]any, len(contents))
	for i, c := range contents {
		msgs[i] = map[string]any{"role": "user", "content": c}
	}
	body := map[string]any{"session_id": sid, "messages": msgs}
	if agent != "" {
		body["agent"] = agent
	}
	return e.call(token, "commit-turn", body).must(e.t, http.StatusCreated)
}

// smToken mints a user token for a subject and tenant.
func smToken(t *testing.T, id uuid.UUID, tenant string) string {
	t.Helper()
	tok, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleUser, Subject: id.String(), TenantID: tenant})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// smSnapshot renders every row of a user (any tenant) in the tables these functions change, as
// the superuser: equal snapshots mean nothing changed.
func smSnapshot(e *env, userID uuid.UUID) string {
	e.t.Helper()
	e.app.WaitEmbedded() // the messages committed so far have their vectors: nothing changes after
	conn := e.adminConn()
	defer conn.Close(context.Background())
	var out []string
	for _, table := range []string{"sessions", "messages", "active_sessions", "memories"} {
		var s *string
		err := conn.QueryRow(context.Background(), fmt.Sprintf(
			`select string_agg(x::text, E'\n' order by x::text) from agentmem.%s x where user_id = $1`, table),
			userID).Scan(&s)
		if err != nil {
			e.t.Fatal(err)
		}
		if s != nil {
			out = append(out, table+":\n"+*s)
		}
	}
	return strings.Join(out, "\n")
}

// smIDs lists the ids of SQL rows, as the superuser.
func smIDs(e *env, q string, args ...any) []string {
	e.t.Helper()
	conn := e.adminConn()
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), q, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, id.String())
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// smSeqs are the seqs of a history page's messages.
func smSeqs(r response) []int {
	var out []int
	for _, m := range list(r.body["messages"]) {
		out = append(out, int(obj(m)["seq"].(float64)))
	}
	return out
}

// smPageAll pages through a listing with limit per page, returning every item and the page
// count; between calls it runs between(page).
func smPageAll(e *env, token, fn string, itemsKey string, limit int, between func(page int), kv ...any) ([]map[string]any, int) {
	e.t.Helper()
	var items []map[string]any
	var cursor any
	for page := 1; ; page++ {
		if page > 1000 {
			e.t.Fatal("paging does not end")
		}
		args := append([]any{"limit", limit, "cursor", cursor}, kv...)
		r := smOp(e, token, fn, "list", args...).must(e.t, http.StatusOK)
		got := list(r.body[itemsKey])
		if len(got) > limit {
			e.t.Fatalf("page %d has %d items, over the limit %d", page, len(got), limit)
		}
		for _, it := range got {
			items = append(items, obj(it))
		}
		next, present := r.body["next_cursor"]
		if !present {
			e.t.Fatalf("page %d lacks next_cursor: %s", page, r.raw)
		}
		if next == nil {
			return items, page
		}
		if len(got) != limit {
			e.t.Fatalf("page %d has %d items but a next_cursor", page, len(got))
		}
		cursor = next
		if between != nil {
			between(page)
		}
	}
}

func TestSessionsListPagesThroughThousandSessions(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: pages through a thousand sessions")
	}
	e := newEnv(t, false)
	u := e.newUser("acme")
	other := e.newUser("acme")
	// 1,000 sessions of two agents whose activity times tie in threes, so the id decides.
	e.exec(`insert into agentmem.sessions (id, tenant_id, user_id, agent, created_at, last_active_at, expires_at)
		select gen_random_uuid(), 'acme', $1, case when g % 2 = 0 then 'a' else 'b' end,
		       now() - interval '30 days', now() - interval '1 day' + make_interval(secs => g / 3),
		       now() + interval '1 day'
		from generate_series(1, 1000) g`, u.id)
	// Expired sessions, the same user's sessions in another tenant, another user's: never listed.
	e.exec(`insert into agentmem.sessions (id, tenant_id, user_id, agent, last_active_at, expires_at)
		select gen_random_uuid(), t.tenant, t.owner, 'a', now(), t.expires
		from generate_series(1, 5) g,
		     (values ('acme', $1::uuid, now() - interval '1 second'),
		             ('other', $1::uuid, now() + interval '1 day'),
		             ('acme', $2::uuid, now() + interval '1 day')) as t(tenant, owner, expires)`, u.id, other.id)
	// One session with messages, the most recently active: one of its messages has expired.
	sid := uuid.New()
	smCommit(e, u.token, sid, "a", "one", "two", "three")
	e.exec(`update agentmem.messages set expires_at = now() - interval '1 second' where session_id = $1 and seq = 2`, sid)

	want := smIDs(e, `select id from agentmem.sessions where user_id = $1 and tenant_id = 'acme' and expires_at > now()
		order by last_active_at desc, id desc`, u.id)
	if len(want) != 1001 {
		t.Fatalf("fixture has %d sessions, want 1001", len(want))
	}
	items, pages := smPageAll(e, u.token, "sessions", "sessions", 100, nil)
	if pages != 11 {
		t.Errorf("%d pages, want 11", pages)
	}
	got := make([]string, len(items))
	for i, it := range items {
		got[i] = str(it["session_id"])
	}
	if !slices.Equal(got, want) {
		t.Fatalf("listing differs from (last_active_at desc, id desc): %d items, want %d", len(got), len(want))
	}
	first := items[0]
	if first["session_id"] != sid.String() || first["message_count"] != float64(2) || first["agent"] != "a" {
		t.Errorf("first session %v, want %s with 2 unexpired messages", first, sid)
	}
	for _, it := range items[1:] {
		if it["message_count"] != float64(0) {
			t.Fatalf("session without messages counts %v", it["message_count"])
		}
	}
	var prev time.Time
	for i, it := range items {
		at, err := time.Parse(time.RFC3339Nano, str(it["last_active_at"]))
		if err != nil || !strings.HasSuffix(str(it["last_active_at"]), "Z") {
			t.Fatalf("last_active_at %q is not RFC 3339 UTC", it["last_active_at"])
		}
		if i > 0 && at.After(prev) {
			t.Fatalf("item %d is more recent than the one before it", i)
		}
		prev = at
	}

	// One agent: every session of agent a exactly once, in the same order.
	items, _ = smPageAll(e, u.token, "sessions", "sessions", 100, nil, "agent", "a")
	wantA := smIDs(e, `select id from agentmem.sessions where user_id = $1 and tenant_id = 'acme' and agent = 'a'
		and expires_at > now() order by last_active_at desc, id desc`, u.id)
	got = got[:0]
	for _, it := range items {
		if it["agent"] != "a" {
			t.Fatalf("agent a listing holds %v", it)
		}
		got = append(got, str(it["session_id"]))
	}
	if len(wantA) != 501 || !slices.Equal(got, wantA) {
		t.Fatalf("agent a listing: %d items, want the %d of agent a in order", len(got), len(wantA))
	}
}

func TestSessionsListFieldsAndDefaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	r := smOp(e, u.token, "sessions", "list").must(t, http.StatusOK)
	if string(r.raw) != "{\"sessions\":[],\"next_cursor\":null}\n" {
		t.Errorf("empty listing %s", r.raw)
	}
	s1, s2 := uuid.New(), uuid.New()
	smCommit(e, u.token, s1, "", "hello", "again")
	smCommit(e, u.token, s2, "bot", "hi")
	smOp(e, u.token, "sessions", "set_title", "session_id", s1, "title", "Trip to Oslo").must(t, http.StatusOK)

	r = smOp(e, u.token, "sessions", "list").must(t, http.StatusOK)
	got := list(r.body["sessions"])
	if len(got) != 2 || r.body["next_cursor"] != nil {
		t.Fatalf("listing %s", r.raw)
	}
	newest, older := obj(got[0]), obj(got[1])
	keys := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	if want := []string{"agent", "created_at", "last_active_at", "last_synced_at", "message_count", "metadata", "session_id", "title"}; !slices.Equal(keys(newest), want) {
		t.Errorf("session fields %v, want %v", keys(newest), want)
	}
	if newest["session_id"] != s2.String() || newest["agent"] != "bot" || newest["title"] != nil || newest["message_count"] != float64(1) ||
		len(obj(newest["metadata"])) != 0 || newest["metadata"] == nil || newest["last_synced_at"] != nil {
		t.Errorf("newest %v", newest)
	}
	if older["session_id"] != s1.String() || older["agent"] != "default" || older["title"] != "Trip to Oslo" || older["message_count"] != float64(2) {
		t.Errorf("older %v", older)
	}
	r = smOp(e, u.token, "sessions", "list", "agent", "default").must(t, http.StatusOK)
	if got := list(r.body["sessions"]); len(got) != 1 || obj(got[0])["session_id"] != s1.String() {
		t.Errorf("agent default lists %s", r.raw)
	}
	r = smOp(e, u.token, "sessions", "list", "agent", "nobody").must(t, http.StatusOK)
	if len(list(r.body["sessions"])) != 0 {
		t.Errorf("agent nobody lists %s", r.raw)
	}

	// The default page holds 20.
	e.exec(`insert into agentmem.sessions (id, user_id, agent, last_active_at, expires_at)
		select gen_random_uuid(), $1, 'default', now() - interval '1 hour', now() + interval '1 day'
		from generate_series(1, 25)`, u.id)
	r = smOp(e, u.token, "sessions", "list").must(t, http.StatusOK)
	if n := len(list(r.body["sessions"])); n != 20 || r.body["next_cursor"] == nil {
		t.Errorf("default page: %d sessions, next_cursor %v", n, r.body["next_cursor"])
	}
	r = smOp(e, u.token, "sessions", "list", "cursor", r.body["next_cursor"]).must(t, http.StatusOK)
	if n := len(list(r.body["sessions"])); n != 7 || r.body["next_cursor"] != nil {
		t.Errorf("second page: %d sessions, next_cursor %v", n, r.body["next_cursor"])
	}
}

func TestSessionsHistoryOldestWhileMessagesArrive(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	var contents []string
	for i := 1; i <= 10; i++ {
		contents = append(contents, fmt.Sprintf("m%d", i))
	}
	smCommit(e, u.token, sid, "", contents...)
	next := 11
	var seqs []int
	var texts []string
	var cursor any
	var last response
	for page := 1; ; page++ {
		if page > 100 {
			t.Fatal("paging does not end")
		}
		last = smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest", "limit", 3, "cursor", cursor).must(t, http.StatusOK)
		seqs = append(seqs, smSeqs(last)...)
		for _, m := range list(last.body["messages"]) {
			texts = append(texts, str(obj(m)["content"]))
		}
		if last.body["next_cursor"] == nil {
			break
		}
		cursor = last.body["next_cursor"]
		if page <= 5 {
			// Two more arrive between pages.
			smCommit(e, u.token, sid, "", fmt.Sprintf("m%d", next), fmt.Sprintf("m%d", next+1))
			next += 2
		}
	}
	total := next - 1
	if len(seqs) != total {
		t.Fatalf("saw %d messages (%v), want all %d", len(seqs), seqs, total)
	}
	for i, s := range seqs {
		if s != i+1 || texts[i] != fmt.Sprintf("m%d", i+1) {
			t.Fatalf("message %d is seq %d %q: skipped or repeated (%v)", i, s, texts[i], seqs)
		}
	}
	if last.body["total"] != float64(total) {
		t.Errorf("total %v, want %d", last.body["total"], total)
	}
}

func TestSessionsHistoryNewestWhileMessagesArrive(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	smCommit(e, u.token, sid, "", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10")
	var seqs []int
	var cursor any
	for page := 1; ; page++ {
		if page > 100 {
			t.Fatal("paging does not end")
		}
		r := smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "newest", "limit", 3, "cursor", cursor).must(t, http.StatusOK)
		seqs = append(seqs, smSeqs(r)...)
		if want := float64(10 + 2*(page-1)); r.body["total"] != want {
			t.Errorf("page %d: total %v, want %v", page, r.body["total"], want)
		}
		if r.body["next_cursor"] == nil {
			break
		}
		cursor = r.body["next_cursor"]
		smCommit(e, u.token, sid, "", "later", "later still")
	}
	if want := []int{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}; !slices.Equal(seqs, want) {
		t.Fatalf("newest pages gave seqs %v, want %v", seqs, want)
	}
	// Without a cursor the newest page starts at the latest message.
	r := smOp(e, u.token, "sessions", "history", "session_id", sid, "limit", 2).must(t, http.StatusOK)
	if got := smSeqs(r); !slices.Equal(got, []int{16, 15}) {
		t.Errorf("default order gave %v, want newest first [16 15]", got)
	}
}

func TestSessionsHistoryRendersMessagesLikeGetContext(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	e.call(u.token, "commit-turn", map[string]any{"session_id": sid, "messages": []any{
		map[string]any{"role": "system", "content": "Be brief."},
		map[string]any{"role": "user", "content": "Units?", "name": "ada", "metadata": map[string]any{"lang": "en"}},
		map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
			"id": "call_1", "type": "function", "function": map[string]any{"name": "lookup", "arguments": `{"q":"units"}`}}}},
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": `{"ok":true}`},
		map[string]any{"role": "assistant", "content": "Metric.", "metadata": map[string]any{"tokens": 3}},
	}}).must(t, http.StatusCreated)

	ctx := e.call(u.token, "get-context", map[string]any{"session_id": sid, "max_messages": 500}).must(t, http.StatusOK)
	oldest := smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest", "limit", 200).must(t, http.StatusOK)
	if !reflect.DeepEqual(oldest.body["messages"], ctx.body["messages"]) {
		t.Errorf("history oldest\n%v\ndiffers from get-context raw\n%v", oldest.body["messages"], ctx.body["messages"])
	}
	if oldest.body["total"] != float64(5) || oldest.body["next_cursor"] != nil {
		t.Errorf("total %v next_cursor %v", oldest.body["total"], oldest.body["next_cursor"])
	}
	newest := smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "newest").must(t, http.StatusOK)
	rev := slices.Clone(list(newest.body["messages"]))
	slices.Reverse(rev)
	if !reflect.DeepEqual(rev, list(oldest.body["messages"])) {
		t.Errorf("newest is not oldest reversed")
	}

	// An expired message is neither shown nor counted.
	e.exec(`update agentmem.messages set expires_at = now() - interval '1 second' where session_id = $1 and seq = 1`, sid)
	r := smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest").must(t, http.StatusOK)
	if got := smSeqs(r); !slices.Equal(got, []int{2, 3, 4, 5}) || r.body["total"] != float64(4) {
		t.Errorf("after expiry: seqs %v total %v", got, r.body["total"])
	}
	// An empty session has an empty history.
	empty := e.call(u.token, "active-session", map[string]any{"mode": "new"}).must(t, http.StatusCreated)
	r = smOp(e, u.token, "sessions", "history", "session_id", empty.body["session_id"]).must(t, http.StatusOK)
	if string(r.raw) != "{\"messages\":[],\"next_cursor\":null,\"total\":0}\n" {
		t.Errorf("empty history %s", r.raw)
	}
}

// history's answers_only keeps what get-context's does, for a session and across sessions,
// counts what it keeps, and pages through it.
func TestSessionsHistoryAnswersOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	e.call(u.token, "commit-turn", map[string]any{"session_id": sid, "messages": []any{
		map[string]any{"role": "system", "content": "Be brief."},
		map[string]any{"role": "user", "content": "Units?"},
		map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
			"id": "call_1", "type": "function", "function": map[string]any{"name": "lookup", "arguments": `{}`}}}},
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": `{"ok":true}`},
		map[string]any{"role": "assistant", "content": "Checking.", "tool_calls": []any{map[string]any{
			"id": "call_2", "type": "function", "function": map[string]any{"name": "lookup", "arguments": `{}`}}}},
		map[string]any{"role": "tool", "tool_call_id": "call_2", "content": `{"ok":true}`},
		map[string]any{"role": "assistant", "content": "Metric."},
	}}).must(t, http.StatusCreated)
	ctx := e.call(u.token, "get-context", map[string]any{"session_id": sid, "max_messages": 500, "answers_only": true}).must(t, http.StatusOK)
	want := list(ctx.body["messages"])
	if len(want) != 4 {
		t.Fatalf("get-context answers_only kept %d messages, want 4", len(want))
	}
	r := smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest", "answers_only", true).must(t, http.StatusOK)
	if !reflect.DeepEqual(list(r.body["messages"]), want) || r.body["total"] != float64(4) {
		t.Errorf("history answers_only: total %v\n%v\nwant get-context's\n%v", r.body["total"], r.body["messages"], want)
	}
	// Across sessions, each message with its session_id; and a page at a time.
	all := smOp(e, u.token, "sessions", "history", "order", "oldest", "answers_only", true).must(t, http.StatusOK)
	if got := list(all.body["messages"]); len(got) != 4 || all.body["total"] != float64(4) {
		t.Errorf("user history answers_only: %d messages, total %v", len(got), all.body["total"])
	}
	for _, m := range list(all.body["messages"]) {
		if m.(map[string]any)["role"] == "tool" || m.(map[string]any)["tool_calls"] != nil {
			t.Errorf("user history answers_only holds tool work: %v", m)
		}
	}
	var seqs []int
	var cursor any
	for range 5 {
		page := smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest", "answers_only", true, "limit", 3, "cursor", cursor).must(t, http.StatusOK)
		seqs = append(seqs, smSeqs(page)...)
		if cursor = page.body["next_cursor"]; cursor == nil {
			break
		}
	}
	if !slices.Equal(seqs, []int{1, 2, 5, 7}) {
		t.Errorf("answers_only pages gave seqs %v, want 1 2 5 7", seqs)
	}
	// Without it, the history holds all 7.
	if r := smOp(e, u.token, "sessions", "history", "session_id", sid).must(t, http.StatusOK); r.body["total"] != float64(7) {
		t.Errorf("history total %v, want 7", r.body["total"])
	}
	smOp(e, u.token, "sessions", "history", "session_id", sid, "answers_only", "yes").must(t, http.StatusBadRequest)
}

// reset, delete, delete_message and set_title answer their JSON bodies, and 404 not_found for a
// session or message that is not there; their rules are tested on the use cases (shared/app
// TestResetKeepsSessionAndSeq, TestDeleteSession, TestDeleteMessage, TestSetSessionTitle).
func TestSessionsChangeAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid, other := uuid.New(), uuid.New()
	smCommit(e, u.token, sid, "", "a", "b", "c")
	o := smCommit(e, u.token, other, "", "z", "y")
	mid := str(obj(list(o.body["messages"])[0])["id"])
	want := func(r response, body string) {
		t.Helper()
		if string(r.raw) != body {
			t.Errorf("answered %s, want %s", r.raw, body)
		}
	}
	want(smOp(e, u.token, "sessions", "set_title", "session_id", sid, "title", "kept").must(t, http.StatusOK),
		fmt.Sprintf("{\"session_id\":%q,\"title\":\"kept\"}\n", sid))
	want(smOp(e, u.token, "sessions", "set_title", "session_id", sid, "title", nil).must(t, http.StatusOK),
		fmt.Sprintf("{\"session_id\":%q,\"title\":null}\n", sid))
	want(smOp(e, u.token, "sessions", "reset", "session_id", sid).must(t, http.StatusOK), "{\"deleted\":3}\n")
	want(smOp(e, u.token, "sessions", "delete_message", "session_id", other, "message_id", mid).must(t, http.StatusOK), "{\"deleted\":true}\n")
	want(smOp(e, u.token, "sessions", "delete", "session_id", sid).must(t, http.StatusOK), "{\"deleted\":true}\n")
	for _, c := range []struct {
		op string
		kv []any
	}{
		{"reset", []any{"session_id", sid}},
		{"delete", []any{"session_id", sid}},
		{"history", []any{"session_id", sid}},
		{"set_title", []any{"session_id", sid, "title", "x"}},
		{"delete_message", []any{"session_id", other, "message_id", mid}},
	} {
		wantProblem(t, smOp(e, u.token, "sessions", c.op, c.kv...), http.StatusNotFound, "not_found")
	}
}

func TestSessionsIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	a := e.newUser("t1")
	b := e.newUser("t1")
	aOtherTenant := smToken(t, a.id, "t2")
	aNoTenant := smToken(t, a.id, "")
	sid := uuid.New()
	c := smCommit(e, a.token, sid, "", "secret one", "secret two")
	mid := obj(list(c.body["messages"])[0])["id"]
	smOp(e, a.token, "sessions", "set_title", "session_id", sid, "title", "private").must(t, http.StatusOK)
	before := smSnapshot(e, a.id)

	ops := []struct {
		op string
		kv []any
	}{
		{"history", []any{"session_id", sid}},
		{"reset", []any{"session_id", sid}},
		{"delete", []any{"session_id", sid}},
		{"delete_message", []any{"session_id", sid, "message_id", mid}},
		{"set_title", []any{"session_id", sid, "title", "mine now"}},
	}
	for name, token := range map[string]string{"another user": b.token, "another tenant": aOtherTenant, "no tenant": aNoTenant} {
		r := smOp(e, token, "sessions", "list").must(t, http.StatusOK)
		if len(list(r.body["sessions"])) != 0 {
			t.Errorf("%s lists %s", name, r.raw)
		}
		for _, o := range ops {
			t.Run(o.op, func(t *testing.T) {
				r := smOp(e, token, "sessions", o.op, o.kv...)
				if r.status != http.StatusNotFound || r.problemCode() != "not_found" {
					t.Errorf("%s %s: %d %s, want 404 not_found", name, o.op, r.status, r.raw)
				}
				if strings.Contains(string(r.raw), "secret") || strings.Contains(string(r.raw), "private") {
					t.Errorf("%s %s: the answer shows stored content", name, o.op)
				}
			})
		}
	}
	if smSnapshot(e, a.id) != before {
		t.Fatal("another user or tenant changed the session")
	}

	// A service acts for the user it names, in the tenant it names.
	svc := e.serviceToken()
	r := smOp(e, svc, "sessions", "list", "user_id", a.id, "tenant_id", "t1").must(t, http.StatusOK)
	if got := list(r.body["sessions"]); len(got) != 1 || obj(got[0])["session_id"] != sid.String() {
		t.Errorf("service listing %s", r.raw)
	}
	r = smOp(e, svc, "sessions", "history", "user_id", a.id, "tenant_id", "t1", "session_id", sid).must(t, http.StatusOK)
	if r.body["total"] != float64(2) {
		t.Errorf("service history %s", r.raw)
	}
	smOp(e, svc, "sessions", "history", "user_id", a.id, "session_id", sid).must(t, http.StatusNotFound)
	smOp(e, svc, "sessions", "history", "user_id", b.id, "tenant_id", "t1", "session_id", sid).must(t, http.StatusNotFound)
	r = smOp(e, svc, "sessions", "list").must(t, http.StatusBadRequest)
	if !namesField(r, "user_id") {
		t.Errorf("service without user_id: %s", r.raw)
	}
	// A user may not act for another.
	smOp(e, b.token, "sessions", "list", "user_id", a.id).must(t, http.StatusForbidden)
	smOp(e, b.token, "sessions", "delete", "user_id", a.id, "session_id", sid).must(t, http.StatusForbidden)
	smOp(e, aNoTenant, "sessions", "list", "tenant_id", "t1").must(t, http.StatusForbidden)
	r = smOp(e, svc, "sessions", "set_title", "user_id", a.id, "tenant_id", "t1", "session_id", sid, "title", "by service").must(t, http.StatusOK)
	smOp(e, svc, "sessions", "delete", "user_id", a.id, "tenant_id", "t1", "session_id", sid).must(t, http.StatusOK)
	if n := e.count("sessions", "id = $1", sid); n != 0 {
		t.Errorf("service delete left the session")
	}
	// Without a token nothing happens, whatever the body.
	smOp(e, "", "sessions", "list").must(t, http.StatusUnauthorized)
}

// The sessions function's body decodes into the operation's input: a missing or unknown op,
// an unknown field, a value of the wrong JSON type or JSON that is not one object is 400
// invalid_request and changes nothing; the operations' own ranges are tested on the use cases
// (shared/app TestSessionsRefuseBadInput).
func TestSessionsBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	smCommit(e, u.token, sid, "", "a", "b", "c")
	before := smSnapshot(e, u.id)

	cases := []struct {
		name  string
		body  string
		field string
	}{
		{"no op", `{}`, "op"},
		{"unknown op", `{"op":"purge"}`, "op"},
		{"op case", `{"op":"LIST"}`, "op"},
		{"op type", `{"op":5}`, "op"},
		{"list unknown field", `{"op":"list","sort":"asc"}`, "sort"},
		{"list limit 101", `{"op":"list","limit":101}`, "limit"},
		{"list limit fraction", `{"op":"list","limit":1.5}`, "limit"},
		{"list limit string", `{"op":"list","limit":"10"}`, "limit"},
		{"history since type", fmt.Sprintf(`{"op":"history","session_id":%q,"since":1732000000}`, sid), "since"},
		{"user history message_id", `{"op":"history","message_id":"x"}`, "message_id"},
		{"clear session", fmt.Sprintf(`{"op":"clear","session_id":%q}`, sid), "session_id"},
		{"history session type", `{"op":"history","session_id":7}`, "session_id"},
		{"history unknown field", fmt.Sprintf(`{"op":"history","session_id":%q,"skip":3}`, sid), "skip"},
		{"delete null session", `{"op":"delete","session_id":null}`, "session_id"},
		{"trailing data", fmt.Sprintf(`{"op":"delete","session_id":%q} {}`, sid), ""},
		{"not an object", `["delete"]`, ""},
		{"malformed", `{"op":"delete",`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, e.call(u.token, "sessions", tc.body), http.StatusBadRequest, "invalid_request", tc.field)
		})
	}
	if smSnapshot(e, u.id) != before {
		t.Fatal("a refused request changed something")
	}
}

// FuzzSessionsCursor feeds arbitrary cursors to list and history: every answer is a page or a
// 400, never a server error.
func FuzzSessionsCursor(f *testing.F) {
	f.Add("")
	f.Add("cwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Add("bgAAAAAAAAAD")
	f.Add("bwAAAAAAAAAD")
	f.Add("c3_______________________________")
	f.Add("bv________w")
	f.Add("TgAGYLF4DyQAEjRWeBI0VnhCNFZ4EjRWeAAAAAAAAAAD")
	f.Add("TwAGYLF4DyQAEjRWeBI0VnhCNFZ4EjRWeP_______w")
	f.Add("%%%")
	ft := newFuzzTarget(f)
	f.Fuzz(func(t *testing.T, cursor string) {
		for _, body := range []map[string]any{
			{"op": "list", "cursor": cursor},
			{"op": "history", "session_id": ft.sid, "order": "oldest", "cursor": cursor},
			{"op": "history", "session_id": ft.sid, "cursor": cursor},
			{"op": "history", "session_id": uuid.New(), "cursor": cursor},
			{"op": "history", "cursor": cursor},
			{"op": "history", "order": "oldest", "cursor": cursor},
		} {
			raw, _ := json.Marshal(body)
			status, out := ft.post(ft.user, "sessions", raw)
			switch {
			case status == http.StatusOK, status == http.StatusNotFound:
			case status == http.StatusBadRequest && out["code"] == "invalid_request":
			default:
				t.Fatalf("cursor %q: %d %v", cursor, status, out)
			}
		}
	})
}
