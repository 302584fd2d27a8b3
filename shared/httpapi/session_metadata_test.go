package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
)

// smdStored is a session's metadata as stored, compacted by jsonb ("" when there is no such
// session).
func smdStored(t *testing.T, e *env, sid string) string {
	t.Helper()
	if e.count("sessions", "id = $1", sid) == 0 {
		return ""
	}
	return ctScalar[string](t, e, `select metadata::text from agentmem.sessions where id = $1`, sid)
}

// smdListed is the metadata of session sid in the caller's listing.
func smdListed(t *testing.T, e *env, token, sid string) map[string]any {
	t.Helper()
	r := e.call(token, "sessions", map[string]any{"op": "list"}).must(t, http.StatusOK)
	for _, s := range list(r.body["sessions"]) {
		if str(obj(s)["session_id"]) == sid {
			return obj(obj(s)["metadata"])
		}
	}
	t.Fatalf("session %s not listed: %s", sid, r.raw)
	return nil
}

func smdSame(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	ptSame(t, what, got, w)
}

// A session takes metadata where it is created (active-session in every mode, commit-turn's
// session_metadata), keeps it when a later call gives other metadata, and set_metadata replaces
// it; list and active-session show it.
func TestSessionMetadata(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")

	created := ctSession(t, e, u.token, map[string]any{"agent": "md", "metadata": map[string]any{"device": "web"}}, http.StatusCreated)
	smdSame(t, "resolve's metadata", json.RawMessage(created.Metadata), `{"device":"web"}`)
	again := ctSession(t, e, u.token, map[string]any{"agent": "md", "metadata": map[string]any{"device": "phone"}}, http.StatusOK)
	smdSame(t, "metadata of a second resolve", json.RawMessage(again.Metadata), `{"device":"web"}`)
	smdSame(t, "listed metadata", smdListed(t, e, u.token, created.SessionID), `{"device":"web"}`)

	fresh := ctSession(t, e, u.token, map[string]any{"agent": "md", "mode": "new", "metadata": map[string]any{"n": 1}}, http.StatusCreated)
	smdSame(t, "new's metadata", json.RawMessage(fresh.Metadata), `{"n":1}`)
	unused := uuid.NewString()
	act := ctSession(t, e, u.token, map[string]any{"agent": "md", "mode": "activate", "session_id": unused,
		"metadata": map[string]any{"n": 2}}, http.StatusCreated)
	smdSame(t, "activate's metadata", json.RawMessage(act.Metadata), `{"n":2}`)
	act = ctSession(t, e, u.token, map[string]any{"agent": "md", "mode": "activate", "session_id": fresh.SessionID,
		"metadata": map[string]any{"n": 3}}, http.StatusOK)
	smdSame(t, "metadata of an existing session activated", json.RawMessage(act.Metadata), `{"n":1}`)
	plain := ctSession(t, e, u.token, map[string]any{"agent": "md-plain"}, http.StatusCreated)
	smdSame(t, "metadata of a session created without", json.RawMessage(plain.Metadata), `{}`)

	sid := uuid.NewString()
	turn := map[string]any{"session_id": sid, "messages": []any{ctMsg("user", "Hi.")},
		"session_metadata": map[string]any{"channel": "email"}}
	ctCommit(t, e, u.token, turn)
	turn["session_metadata"] = map[string]any{"channel": "chat"}
	ctCommit(t, e, u.token, turn)
	smdSame(t, "commit's metadata", smdListed(t, e, u.token, sid), `{"channel":"email"}`)
	// Through the transaction path too (a client id).
	sid2 := uuid.NewString()
	ctCommit(t, e, u.token, map[string]any{"session_id": sid2, "messages": []any{ctMsg("user", "Hi.", "id", "m1")},
		"session_metadata": map[string]any{"channel": "sms"}})
	smdSame(t, "commit's metadata with a client id", smdListed(t, e, u.token, sid2), `{"channel":"sms"}`)

	r := e.call(u.token, "sessions", map[string]any{"op": "set_metadata", "session_id": sid,
		"metadata": map[string]any{"channel": "chat", "ticket": "T-1"}}).must(t, http.StatusOK)
	ctKeys(t, "set_metadata", r.body, "session_id", "metadata")
	if r.body["session_id"] != sid {
		t.Errorf("set_metadata answered %s", r.raw)
	}
	smdSame(t, "set_metadata's answer", r.body["metadata"], `{"channel":"chat","ticket":"T-1"}`)
	smdSame(t, "listed after set_metadata", smdListed(t, e, u.token, sid), `{"channel":"chat","ticket":"T-1"}`)
	a := ctSession(t, e, u.token, map[string]any{"mode": "activate", "session_id": sid}, http.StatusOK)
	smdSame(t, "resolved after set_metadata", json.RawMessage(a.Metadata), `{"channel":"chat","ticket":"T-1"}`)
	// {} clears.
	e.call(u.token, "sessions", map[string]any{"op": "set_metadata", "session_id": sid2, "metadata": map[string]any{}}).must(t, http.StatusOK)
	smdSame(t, "cleared", smdListed(t, e, u.token, sid2), `{}`)
}

// Metadata that is not a JSON object, or is larger than a message's may be, is 400 naming the
// field, and nothing changes: no session is created, a session's metadata stays; another
// user's session is not found.
func TestSessionMetadataRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.NewString()
	ctCommit(t, e, u.token, map[string]any{"session_id": sid, "messages": []any{ctMsg("user", "Hi.")},
		"session_metadata": map[string]any{"keep": true}})
	const kept = `{"keep": true}`
	big := map[string]any{"pad": strings.Repeat("x", 16<<10)}
	for _, bad := range []struct {
		name string
		md   any
	}{
		{"array", []any{1}},
		{"string", "x"},
		{"number", 1},
		{"true", true},
		{"too large", big},
	} {
		t.Run(bad.name, func(t *testing.T) {
			e := ctFor(e, t)
			wantProblem(t, e.call(u.token, "sessions", map[string]any{"op": "set_metadata", "session_id": sid, "metadata": bad.md}),
				http.StatusBadRequest, "invalid_request", "metadata")
			if got := smdStored(t, e, sid); got != kept {
				t.Errorf("metadata %s after a refused set_metadata, want %s", got, kept)
			}
			other := e.newUser("")
			wantProblem(t, e.call(other.token, "active-session", map[string]any{"metadata": bad.md}),
				http.StatusBadRequest, "invalid_request", "metadata")
			wantProblem(t, e.call(other.token, "active-session", map[string]any{"mode": "new", "metadata": bad.md}),
				http.StatusBadRequest, "invalid_request", "metadata")
			wantProblem(t, e.call(other.token, "commit-turn", map[string]any{"session_id": uuid.NewString(),
				"messages": []any{ctMsg("user", "Hi.")}, "session_metadata": bad.md}),
				http.StatusBadRequest, "invalid_request", "session_metadata")
			ctNothingStored(t, e, other.id)
		})
	}
	for _, body := range []map[string]any{
		{"op": "set_metadata", "session_id": sid},
		{"op": "set_metadata", "session_id": sid, "metadata": nil},
	} {
		wantProblem(t, e.call(u.token, "sessions", body), http.StatusBadRequest, "invalid_request", "metadata")
	}
	// Just within the bound: 16 KiB of compacted JSON.
	fits := map[string]any{"pad": strings.Repeat("x", 16<<10-len(`{"pad":""}`))}
	e.call(u.token, "sessions", map[string]any{"op": "set_metadata", "session_id": sid, "metadata": fits}).must(t, http.StatusOK)
	e.call(u.token, "sessions", map[string]any{"op": "set_metadata", "session_id": sid, "metadata": map[string]any{"keep": true}}).must(t, http.StatusOK)

	other := e.newUser("")
	wantProblem(t, e.call(other.token, "sessions", map[string]any{"op": "set_metadata", "session_id": sid,
		"metadata": map[string]any{"mine": true}}), http.StatusNotFound, "not_found")
	wantProblem(t, e.call(u.token, "sessions", map[string]any{"op": "set_metadata", "session_id": sid, "agent": "other",
		"metadata": map[string]any{"mine": true}}), http.StatusNotFound, "not_found")
	if got := smdStored(t, e, sid); got != kept {
		t.Errorf("metadata %s after refusals, want %s", got, kept)
	}
}

// last_synced_at is null until the adapters have the session's changes: process-jobs sets it
// when it records the session's last outstanding job done; a newer change leaves the older
// time in place while its job waits or is retried, and moves it forward once delivered.
// Without an adapter it stays null.
func TestSessionLastSyncedAt(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t, app.JobsConfig{}, nil)
	u := e.newUser("")
	sid := uuid.NewString()
	synced := func(what string) *time.Time {
		t.Helper()
		a := ctSession(t, e.env, u.token, map[string]any{"mode": "activate", "session_id": sid}, http.StatusOK)
		r := e.call(u.token, "sessions", map[string]any{"op": "list"}).must(t, http.StatusOK)
		listed := obj(list(r.body["sessions"])[0])["last_synced_at"]
		switch {
		case a.LastSyncedAt == nil && listed == nil:
			return nil
		case a.LastSyncedAt == nil || listed == nil || *a.LastSyncedAt != str(listed):
			t.Fatalf("%s: active-session answers last_synced_at %v, the listing %v", what, a.LastSyncedAt, listed)
		}
		ts := ctUTC(t, "last_synced_at", *a.LastSyncedAt)
		return &ts
	}

	ctCommit(t, e.env, u.token, map[string]any{"session_id": sid, "messages": []any{ctMsg("user", "One.")}})
	if s := synced("before delivery"); s != nil {
		t.Fatalf("last_synced_at %s before any delivery", s)
	}
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatalf("%d jobs done, want 1", done)
	}
	first := synced("after delivery")
	if first == nil {
		t.Fatal("last_synced_at still null after the session's job was done")
	}
	jobDone := ctScalar[time.Time](t, e.env, `select max(updated_at) from agentmem.jobs where session_id = $1`, sid)
	if !first.Equal(jobDone.UTC()) {
		t.Errorf("last_synced_at %s, want the time the job was recorded done, %s", first, jobDone)
	}

	// A newer change: pending, then failing, the session keeps the older time.
	ctCommit(t, e.env, u.token, map[string]any{"session_id": sid, "messages": []any{ctMsg("user", "Two.")}})
	e.rec.Down(true)
	if _, _, retried, _, _ := e.process(t); retried != 1 {
		t.Fatalf("%d jobs retried, want 1", retried)
	}
	if s := synced("while the newer change fails"); s == nil || !s.Equal(*first) {
		t.Errorf("last_synced_at %v while a newer change waits, want %s", s, first)
	}
	e.rec.Down(false)
	e.due()
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatalf("%d jobs done on the retry, want 1", done)
	}
	if s := synced("after the retry"); s == nil || !s.After(*first) {
		t.Errorf("last_synced_at %v after the newer change was delivered, want after %s", s, first)
	}

	// No adapter: null.
	plain := newEnv(t, false)
	pu := plain.newUser("")
	psid := uuid.NewString()
	ctCommit(t, plain, pu.token, map[string]any{"session_id": psid, "messages": []any{ctMsg("user", "One.")}})
	if a := ctSession(t, plain, pu.token, map[string]any{"mode": "activate", "session_id": psid}, http.StatusOK); a.LastSyncedAt != nil {
		t.Errorf("last_synced_at %s without an adapter", *a.LastSyncedAt)
	}
}
