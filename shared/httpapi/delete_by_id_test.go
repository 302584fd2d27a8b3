package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// delete_message without session_id deletes the caller's message of that id in whichever of
// their sessions holds it, as delete_message with the session does: the history, the total and
// the summary that told of it follow.
func TestDeleteMessageByIDAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("t1")
	sid, other := uuid.New(), uuid.New()
	c := smCommit(e, u.token, sid, "", "a", "b", "c")
	smCommit(e, u.token, other, "", "z")
	mid := str(obj(list(c.body["messages"])[1])["id"])
	e.exec(`insert into agentmem.session_summaries (session_id, tenant_id, user_id, agent, content, through_seq, prompt, model)
		values ($1, 't1', $2, 'default', 'a summary', 3, 'summarise.v1', 'test')`, sid, u.id)

	r := smOp(e, u.token, "sessions", "delete_message", "message_id", mid).must(t, http.StatusOK)
	if string(r.raw) != "{\"deleted\":true}\n" {
		t.Errorf("delete_message answered %s", r.raw)
	}
	h := smOp(e, u.token, "sessions", "history", "session_id", sid, "order", "oldest").must(t, http.StatusOK)
	if got := smSeqs(h); !slices.Equal(got, []int{1, 3}) || h.body["total"] != float64(2) {
		t.Errorf("after delete_message: seqs %v total %v", got, h.body["total"])
	}
	if n := e.count("session_summaries", "session_id = $1", sid); n != 0 {
		t.Errorf("the summary that told of the deleted message is still there")
	}
	if n := e.count("messages", "session_id = $1", other); n != 1 {
		t.Errorf("the other session lost its message")
	}
	// Gone: a second time is not found. A null session_id is no session_id.
	smOp(e, u.token, "sessions", "delete_message", "message_id", mid).must(t, http.StatusNotFound)
	smOp(e, u.token, "sessions", "delete_message", "session_id", nil, "message_id", mid).must(t, http.StatusNotFound)
	// With agent, only that agent's sessions are searched.
	first := str(obj(list(c.body["messages"])[0])["id"])
	smOp(e, u.token, "sessions", "delete_message", "agent", "another-bot", "message_id", first).must(t, http.StatusNotFound)
	smOp(e, u.token, "sessions", "delete_message", "agent", "default", "message_id", first).must(t, http.StatusOK)
	// An expired message is not there to delete.
	third := str(obj(list(c.body["messages"])[2])["id"])
	e.exec(`update agentmem.messages set expires_at = now() - interval '1 second' where session_id = $1 and seq = 3`, sid)
	smOp(e, u.token, "sessions", "delete_message", "message_id", third).must(t, http.StatusNotFound)
	if n := e.count("messages", "session_id = $1 and seq = 3", sid); n != 1 {
		t.Errorf("the expired message went before the sweep")
	}
}

// A client's message id is unique within its session only: the same id in two sessions of the
// caller makes delete_message without session_id a 409 conflict that names no session and
// deletes nothing; with session_id each goes, and then the id alone is unambiguous again.
func TestDeleteMessageByAmbiguousClientID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	s1, s2 := uuid.New(), uuid.New()
	for _, s := range []uuid.UUID{s1, s2} {
		e.call(u.token, "commit-turn", map[string]any{"session_id": s,
			"messages": []map[string]any{{"role": "user", "content": "hi", "id": "client-msg-1"}}}).must(t, http.StatusCreated)
	}
	before := smSnapshot(e, u.id)
	r := smOp(e, u.token, "sessions", "delete_message", "message_id", "client-msg-1")
	wantProblem(t, r, http.StatusConflict, "conflict")
	for _, s := range []string{s1.String(), s2.String()} {
		if strings.Contains(string(r.raw), s) {
			t.Errorf("the conflict names a session: %s", r.raw)
		}
	}
	if smSnapshot(e, u.id) != before {
		t.Fatal("an ambiguous delete_message changed something")
	}
	smOp(e, u.token, "sessions", "delete_message", "session_id", s1, "message_id", "client-msg-1").must(t, http.StatusOK)
	smOp(e, u.token, "sessions", "delete_message", "message_id", "client-msg-1").must(t, http.StatusOK)
	if n := e.count("messages", "user_id = $1", u.id); n != 0 {
		t.Errorf("%d messages left", n)
	}
}

// Another user's or tenant's message, named by its id alone, is not found, exactly like a
// missing one, and stays.
func TestDeleteMessageByIDOfAnotherUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	victim := e.newUser("t1")
	sid := uuid.New()
	c := smCommit(e, victim.token, sid, "", "secret")
	mid := str(obj(list(c.body["messages"])[0])["id"])
	e.call(victim.token, "commit-turn", map[string]any{"session_id": uuid.New(),
		"messages": []map[string]any{{"role": "user", "content": "secret too", "id": "shared-id"}}}).must(t, http.StatusCreated)
	attacker := e.newUser("t1")
	// The attacker holds a message of the same client id: only their own goes.
	e.call(attacker.token, "commit-turn", map[string]any{"session_id": uuid.New(),
		"messages": []map[string]any{{"role": "user", "content": "mine", "id": "shared-id"}}}).must(t, http.StatusCreated)
	before := smSnapshot(e, victim.id)
	missing := smOp(e, attacker.token, "sessions", "delete_message", "message_id", uuid.NewString())
	wantProblem(t, missing, http.StatusNotFound, "not_found")
	for name, token := range map[string]string{
		"another user":   attacker.token,
		"another tenant": smToken(t, victim.id, "t2"),
		"no tenant":      smToken(t, victim.id, ""),
	} {
		r := smOp(e, token, "sessions", "delete_message", "message_id", mid)
		wantProblem(t, r, http.StatusNotFound, "not_found")
		if str(obj(r.body)["detail"]) != str(obj(missing.body)["detail"]) {
			t.Errorf("%s: %s differs from a missing message's %s", name, r.raw, missing.raw)
		}
	}
	svc := e.serviceToken()
	smOp(e, svc, "sessions", "delete_message", "user_id", attacker.id, "tenant_id", "t1", "message_id", mid).must(t, http.StatusNotFound)
	smOp(e, svc, "sessions", "delete_message", "user_id", victim.id, "tenant_id", "t2", "message_id", mid).must(t, http.StatusNotFound)
	smOp(e, attacker.token, "sessions", "delete_message", "message_id", "shared-id").must(t, http.StatusOK)
	if smSnapshot(e, victim.id) != before {
		t.Fatal("another user or tenant changed the victim's messages")
	}
	// The user's service may.
	smOp(e, svc, "sessions", "delete_message", "user_id", victim.id, "tenant_id", "t1", "message_id", mid).must(t, http.StatusOK)
	if n := e.count("messages", "session_id = $1", sid); n != 0 {
		t.Errorf("the service's delete left the message")
	}
}

// Bad input to delete_message without session_id is a 400 naming the field, and changes nothing.
func TestDeleteMessageByIDBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	smCommit(e, u.token, uuid.New(), "", "a")
	before := smSnapshot(e, u.id)
	for _, tc := range []struct{ name, body, field string }{
		{"no message_id", `{"op":"delete_message"}`, "message_id"},
		{"null message_id", `{"op":"delete_message","message_id":null}`, "message_id"},
		{"empty message_id", `{"op":"delete_message","message_id":""}`, "message_id"},
		{"control character", `{"op":"delete_message","message_id":"a\u0007b"}`, "message_id"},
		{"too long", fmt.Sprintf(`{"op":"delete_message","message_id":%q}`, strings.Repeat("a", 256)), "message_id"},
		{"number", `{"op":"delete_message","message_id":7}`, "message_id"},
		{"bad session", `{"op":"delete_message","session_id":"abc","message_id":"x"}`, "session_id"},
		{"bad agent", `{"op":"delete_message","agent":"a b","message_id":"x"}`, "agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.call(u.token, "sessions", tc.body)
			wantProblem(t, r, http.StatusBadRequest, "invalid_request", tc.field)
			// Only the field at fault: session_id may be left out.
			if len(list(r.body["errors"])) != 1 {
				t.Errorf("errors %s", r.raw)
			}
		})
	}
	if smSnapshot(e, u.id) != before {
		t.Fatal("a refused request changed something")
	}
}
