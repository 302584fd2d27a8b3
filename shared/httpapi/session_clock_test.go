package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
)

// scBackdate moves a session's created_at and last_active_at an hour back, as the clock of a
// session last used an hour ago would have left them, and answers them.
func scBackdate(t *testing.T, e *env, sid string) (created, active time.Time) {
	t.Helper()
	e.exec(`update agentmem.sessions set created_at = created_at - interval '1 hour',
		last_active_at = last_active_at - interval '1 hour' where id = $1`, sid)
	return ctScalar[time.Time](t, e, `select created_at from agentmem.sessions where id = $1`, sid),
		ctScalar[time.Time](t, e, `select last_active_at from agentmem.sessions where id = $1`, sid)
}

// scListed is the listed session sid of the caller: its created_at and last_active_at, and its
// place in the listing (0 is the most recently active).
func scListed(t *testing.T, e *env, token, sid string) (created, active time.Time, place int) {
	t.Helper()
	r := e.call(token, "sessions", map[string]any{"op": "list"}).must(t, http.StatusOK)
	for i, s := range list(r.body["sessions"]) {
		if str(obj(s)["session_id"]) == sid {
			return ctUTC(t, "created_at", str(obj(s)["created_at"])), ctUTC(t, "last_active_at", str(obj(s)["last_active_at"])), i
		}
	}
	t.Fatalf("session %s not listed: %s", sid, r.raw)
	return
}

// The listing follows the active session's clock: every resolve, activation and commit refreshes last_active_at
// (so the session moves to the front of the listing), created_at stays when the session was
// created, and the answer of active-session and the listing give both, as stored.
func TestSessionsListFollowsTheActiveClock(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	first := ctSession(t, e, u.token, map[string]any{"agent": "clock"}, http.StatusCreated)
	if first.CreatedAt != first.LastActiveAt {
		t.Errorf("a new session: created_at %s, last_active_at %s, want the same", first.CreatedAt, first.LastActiveAt)
	}
	other := uuid.NewString()
	ctCommit(t, e, u.token, map[string]any{"session_id": other, "agent": "clock", "messages": []any{ctMsg("user", "Hi.")}})

	type step struct {
		name string
		do   func() string // the answered last_active_at, "" when the step answers none
	}
	for _, st := range []step{
		{"resolve", func() string {
			return ctSession(t, e, u.token, map[string]any{"agent": "clock"}, http.StatusOK).LastActiveAt
		}},
		{"resolve with the remembered id", func() string {
			a := ctSession(t, e, u.token, map[string]any{"agent": "clock", "session_id": first.SessionID}, http.StatusOK)
			if !a.Matched {
				t.Errorf("not matched")
			}
			return a.LastActiveAt
		}},
		{"activate", func() string {
			return ctSession(t, e, u.token, map[string]any{"agent": "clock", "mode": "activate", "session_id": first.SessionID},
				http.StatusOK).LastActiveAt
		}},
		{"commit", func() string {
			ctCommit(t, e, u.token, map[string]any{"session_id": first.SessionID, "agent": "clock",
				"messages": []any{ctMsg("user", "Still there?")}})
			return ""
		}},
	} {
		// The other session is the most recently active before each step.
		ctCommit(t, e, u.token, map[string]any{"session_id": other, "agent": "clock", "messages": []any{ctMsg("user", "Again.")}})
		created, before := scBackdate(t, e, first.SessionID)
		if _, _, place := scListed(t, e, u.token, first.SessionID); place != 1 {
			t.Fatalf("%s: the backdated session is listed at %d, want 1", st.name, place)
		}
		answered := st.do()
		stored := ctScalar[time.Time](t, e, `select last_active_at from agentmem.sessions where id = $1`, first.SessionID)
		if !stored.After(before.Add(59 * time.Minute)) {
			t.Errorf("%s: last_active_at %s, not refreshed from %s", st.name, stored, before)
		}
		if answered != "" && !ctUTC(t, "last_active_at", answered).Equal(stored) {
			t.Errorf("%s: answered last_active_at %s, stored %s", st.name, answered, stored)
		}
		listedCreated, listedActive, place := scListed(t, e, u.token, first.SessionID)
		if !listedCreated.Equal(created) || !listedActive.Equal(stored) || place != 0 {
			t.Errorf("%s: listed created_at %s, last_active_at %s at %d; want %s, %s at 0", st.name,
				listedCreated, listedActive, place, created, stored)
		}
		if a := ctSession(t, e, u.token, map[string]any{"agent": "clock"}, http.StatusOK); !ctUTC(t, "created_at", a.CreatedAt).Equal(created) {
			t.Errorf("%s: created_at %s, want %s kept", st.name, a.CreatedAt, created)
		}
	}
}
