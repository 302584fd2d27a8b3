package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

type ctActive struct {
	SessionID    string          `json:"session_id"`
	Agent        string          `json:"agent"`
	Created      bool            `json:"created"`
	Matched      bool            `json:"matched"`
	LastActiveAt string          `json:"last_active_at"`
	CreatedAt    string          `json:"created_at"`
	Metadata     json.RawMessage `json:"metadata"`
	LastSyncedAt *string         `json:"last_synced_at"`
}

// ctSession calls active-session, requires status and checks the answer's shape.
func ctSession(t *testing.T, e *env, token string, body any, status int) ctActive {
	t.Helper()
	r := e.call(token, "active-session", body).must(t, status)
	a := ctStrict[ctActive](t, r.raw)
	ctKeys(t, "active-session", r.body, "session_id", "agent", "created", "matched", "last_active_at", "created_at",
		"metadata", "last_synced_at")
	if _, err := uuid.Parse(a.SessionID); err != nil {
		t.Errorf("session_id %q is not a UUID", a.SessionID)
	}
	if created, active := ctUTC(t, "created_at", a.CreatedAt), ctUTC(t, "last_active_at", a.LastActiveAt); active.Before(created) {
		t.Errorf("last_active_at %s before created_at %s", a.LastActiveAt, a.CreatedAt)
	}
	if !strings.HasPrefix(string(a.Metadata), "{") {
		t.Errorf("metadata %s is not an object", a.Metadata)
	}
	if a.Created != (status == http.StatusCreated) {
		t.Errorf("created %v with status %d", a.Created, status)
	}
	return a
}

// ctActiveID is the active session of (user, agent) in the database, or "".
func ctActiveID(t *testing.T, e *env, id uuid.UUID, agent string) string {
	t.Helper()
	if e.count("active_sessions", "user_id = $1 and agent = $2", id, agent) == 0 {
		return ""
	}
	return ctScalar[string](t, e, `select session_id::text from agentmem.active_sessions where user_id = $1 and agent = $2`, id, agent)
}

func TestActiveSessionResolve(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")

	first := ctSession(t, e, u.token, map[string]any{}, http.StatusCreated)
	if first.Agent != "default" || first.Matched {
		t.Errorf("first resolve %+v", first)
	}
	if n := e.count("sessions", "id = $1 and user_id = $2 and agent = 'default' and tenant_id = ''", first.SessionID, u.id); n != 1 {
		t.Errorf("the created session is not the caller's")
	}
	if got := ctActiveID(t, e, u.id, "default"); got != first.SessionID {
		t.Errorf("active session %q, want %s", got, first.SessionID)
	}

	// Then the same session, not created; an empty body and mode resolve are the same.
	for _, body := range []any{map[string]any{}, map[string]any{"mode": "resolve"}, "", map[string]any{"agent": "default"}} {
		again := ctSession(t, e, u.token, body, http.StatusOK)
		if again.SessionID != first.SessionID || again.Matched {
			t.Errorf("resolve %v: %+v, want %s unmatched", body, again, first.SessionID)
		}
	}
	// matched says whether the client's remembered id is the active one.
	if a := ctSession(t, e, u.token, map[string]any{"session_id": first.SessionID}, http.StatusOK); !a.Matched || a.SessionID != first.SessionID {
		t.Errorf("resolve with the active id: %+v", a)
	}
	if a := ctSession(t, e, u.token, map[string]any{"session_id": uuid.NewString()}, http.StatusOK); a.Matched || a.SessionID != first.SessionID {
		t.Errorf("resolve with another id: %+v", a)
	}
	if n := e.count("sessions", "user_id = $1", u.id); n != 1 {
		t.Errorf("%d sessions after resolving, want 1", n)
	}

	// A fresh client with a remembered id resolving for the first time: created, not matched.
	v := e.newUser("")
	if a := ctSession(t, e, v.token, map[string]any{"session_id": uuid.NewString()}, http.StatusCreated); a.Matched {
		t.Errorf("a new session matched the client's id: %+v", a)
	}

	// The resolved session takes commits and reads of its owner.
	sid, _ := uuid.Parse(first.SessionID)
	ctCommit(t, e, u.token, ctTurn(sid, ctMsg("user", "hello")))
	if c := ctGet(t, e, u.token, map[string]any{"session_id": first.SessionID}); len(c.Messages) != 1 {
		t.Errorf("the resolved session holds %d messages", len(c.Messages))
	}

	// An active session that expired is never returned: resolve starts another.
	e.exec(`update agentmem.sessions set expires_at = now() - interval '1 second' where id = $1`, sid)
	next := ctSession(t, e, u.token, map[string]any{"session_id": first.SessionID}, http.StatusCreated)
	if next.SessionID == first.SessionID || next.Matched {
		t.Errorf("resolve returned the expired session: %+v", next)
	}
}

// Seed 004's clock: every resolve and activation marks the active session active now, as every
// commit does, and the answer says when the session was created.
func TestActiveSessionClock(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	first := ctSession(t, e, u.token, map[string]any{}, http.StatusCreated)
	if !at(first.CreatedAt).Equal(at(first.LastActiveAt)) {
		t.Errorf("a new session: created_at %s, last_active_at %s", first.CreatedAt, first.LastActiveAt)
	}
	sid, _ := uuid.Parse(first.SessionID)
	lastActive := func() time.Time {
		return ctScalar[time.Time](t, e, `select last_active_at from agentmem.sessions where id = $1`, sid)
	}
	// An hour of quiet, then each way of touching the session brings its clock to now.
	for _, touch := range []struct {
		name string
		do   func() (lastActiveAt, createdAt time.Time)
	}{
		{"a resolve", func() (time.Time, time.Time) {
			a := ctSession(t, e, u.token, map[string]any{}, http.StatusOK)
			return at(a.LastActiveAt), at(a.CreatedAt)
		}},
		{"an activation", func() (time.Time, time.Time) {
			a := ctSession(t, e, u.token, map[string]any{"mode": "activate", "session_id": first.SessionID}, http.StatusOK)
			return at(a.LastActiveAt), at(a.CreatedAt)
		}},
		{"a commit", func() (time.Time, time.Time) {
			ctCommit(t, e, u.token, ctTurn(sid, ctMsg("user", "hello")))
			return lastActive(), at(first.CreatedAt)
		}},
	} {
		e.exec(`update agentmem.sessions set last_active_at = now() - interval '1 hour' where id = $1`, sid)
		quiet := lastActive()
		got, created := touch.do()
		if !got.After(quiet.Add(59 * time.Minute)) {
			t.Errorf("after %s, last_active_at %s, not an hour later than %s", touch.name, got, quiet)
		}
		if !created.Equal(at(first.CreatedAt)) {
			t.Errorf("after %s, created_at %s, want %s", touch.name, created, first.CreatedAt)
		}
		if db := lastActive(); !db.Equal(got) {
			t.Errorf("after %s, the answer says %s, the session %s", touch.name, got, db)
		}
	}
}

func TestActiveSessionConcurrentResolve(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	const n = 20
	type answer struct {
		status int
		raw    []byte
		a      ctActive
	}
	answers := make([]answer, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			status, _, raw := ctRaw(e, u.token, "active-session", `{"agent":"support-bot"}`)
			answers[i] = answer{status: status, raw: raw}
			_ = json.Unmarshal(raw, &answers[i].a)
		}()
	}
	close(start)
	wg.Wait()
	created := 0
	for i, a := range answers {
		if a.status != http.StatusCreated && a.status != http.StatusOK {
			t.Fatalf("answer %d: %d %s", i, a.status, a.raw)
		}
		if a.a.SessionID != answers[0].a.SessionID {
			t.Errorf("answer %d: session %s, answer 0: %s", i, a.a.SessionID, answers[0].a.SessionID)
		}
		if a.status == http.StatusCreated {
			created++
		}
	}
	if created != 1 {
		t.Errorf("%d answers say created, want 1", created)
	}
	if got := e.count("sessions", "user_id = $1", u.id); got != 1 {
		t.Errorf("%d sessions created, want exactly 1", got)
	}
	if got := ctActiveID(t, e, u.id, "support-bot"); got != answers[0].a.SessionID {
		t.Errorf("active session %q, want %s", got, answers[0].a.SessionID)
	}
}

func TestActiveSessionActivate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u, other := e.newUser(""), e.newUser("")
	active := ctSession(t, e, u.token, nil, http.StatusCreated)

	// The caller's own session, made by a commit.
	own := uuid.New()
	ctCommit(t, e, u.token, ctTurn(own, ctMsg("user", "earlier conversation")))
	a := ctSession(t, e, u.token, map[string]any{"mode": "activate", "session_id": own.String()}, http.StatusOK)
	// matched: the named session is the active one once the call returns.
	if a.SessionID != own.String() || a.Created || !a.Matched {
		t.Errorf("activate own: %+v", a)
	}
	if r := ctSession(t, e, u.token, map[string]any{"session_id": own.String()}, http.StatusOK); r.SessionID != own.String() || !r.Matched {
		t.Errorf("resolve after activate: %+v", r)
	}
	// Activating the active one again changes nothing.
	ctSession(t, e, u.token, map[string]any{"mode": "activate", "session_id": own.String()}, http.StatusOK)

	// An unused id starts a session of the caller and makes it active.
	fresh := uuid.New()
	a = ctSession(t, e, u.token, map[string]any{"mode": "activate", "session_id": fresh.String()}, http.StatusCreated)
	if a.SessionID != fresh.String() {
		t.Errorf("activate unused: %+v", a)
	}
	if n := e.count("sessions", "id = $1 and user_id = $2 and agent = 'default'", fresh, u.id); n != 1 {
		t.Errorf("the activated id is not a session of the caller")
	}
	if got := ctActiveID(t, e, u.id, "default"); got != fresh.String() {
		t.Errorf("active %q, want %s", got, fresh)
	}
	// ... which takes commits.
	ctCommit(t, e, u.token, ctTurn(fresh, ctMsg("user", "hi")))

	// Another user's session looks missing and nothing changes, on either side.
	theirs := ctSession(t, e, other.token, nil, http.StatusCreated)
	before := e.count("sessions", "user_id = $1", u.id)
	for _, token := range []string{u.token, ctToken(t, other.id, "tenant-x")} {
		r := e.call(token, "active-session", map[string]any{"mode": "activate", "session_id": theirs.SessionID})
		wantProblem(t, r, http.StatusNotFound, "not_found", "")
	}
	if got := ctActiveID(t, e, u.id, "default"); got != fresh.String() {
		t.Errorf("a refused activate changed the active session to %q", got)
	}
	if got := ctActiveID(t, e, other.id, "default"); got != theirs.SessionID {
		t.Errorf("the other user's active session changed to %q", got)
	}
	if n := e.count("sessions", "user_id = $1", u.id); n != before {
		t.Errorf("sessions of the caller: %d, want %d", n, before)
	}
	if n := e.count("sessions", "id = $1 and user_id = $2", theirs.SessionID, other.id); n != 1 {
		t.Errorf("the other user's session changed owner")
	}
	if n := e.count("active_sessions", "user_id = $1", other.id); n != 1 {
		t.Errorf("active rows of the other user: %d", n)
	}

	// The caller's own session of another agent is not this agent's to activate.
	botSession := ctSession(t, e, u.token, map[string]any{"agent": "bot"}, http.StatusCreated)
	wantProblem(t, e.call(u.token, "active-session", map[string]any{"mode": "activate", "session_id": botSession.SessionID}),
		http.StatusNotFound, "not_found", "")
	if got := ctActiveID(t, e, u.id, "default"); got != fresh.String() {
		t.Errorf("active %q after a refused activate", got)
	}

	// The caller's own expired session comes back when activated, as a commit to it would bring
	// it back; its expired messages stay invisible.
	e.exec(`update agentmem.sessions set expires_at = now() - interval '1 second' where id = $1`, own)
	e.exec(`update agentmem.messages set expires_at = now() - interval '1 second' where session_id = $1`, own)
	a = ctSession(t, e, u.token, map[string]any{"mode": "activate", "session_id": own.String()}, http.StatusOK)
	if a.SessionID != own.String() || a.Created {
		t.Errorf("activate own expired: %+v", a)
	}
	if n := e.count("sessions", "id = $1 and expires_at > now()", own); n != 1 {
		t.Errorf("the activated expired session is still expired")
	}
	if r := e.call(u.token, "get-context", map[string]any{"session_id": own.String()}).must(t, http.StatusOK); len(list(r.body["messages"])) != 0 {
		t.Errorf("expired messages came back with their session: %s", r.raw)
	}

	wantProblem(t, e.call(u.token, "active-session", map[string]any{"mode": "activate"}), http.StatusBadRequest, "invalid_request", "session_id")
	wantProblem(t, e.call(u.token, "active-session", map[string]any{"mode": "activate", "session_id": "x"}), http.StatusBadRequest, "invalid_request", "session_id")
	_ = active
}

func TestActiveSessionNew(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	first := ctSession(t, e, u.token, nil, http.StatusCreated)
	n1 := ctSession(t, e, u.token, map[string]any{"mode": "new"}, http.StatusCreated)
	n2 := ctSession(t, e, u.token, map[string]any{"mode": "new"}, http.StatusCreated)
	if n1.SessionID == first.SessionID || n2.SessionID == n1.SessionID || n1.Matched {
		t.Errorf("new sessions %s, %s after %s", n1.SessionID, n2.SessionID, first.SessionID)
	}
	if r := ctSession(t, e, u.token, map[string]any{"session_id": n2.SessionID}, http.StatusOK); r.SessionID != n2.SessionID || !r.Matched {
		t.Errorf("resolve after new: %+v, want %s", r, n2.SessionID)
	}
	if n := e.count("sessions", "user_id = $1", u.id); n != 3 {
		t.Errorf("%d sessions, want 3", n)
	}
	if n := e.count("active_sessions", "user_id = $1", u.id); n != 1 {
		t.Errorf("%d active rows for one agent, want 1", n)
	}
	r := e.call(u.token, "active-session", map[string]any{"mode": "new", "session_id": uuid.NewString()})
	wantProblem(t, r, http.StatusBadRequest, "invalid_request", "session_id")
	if n := e.count("sessions", "user_id = $1", u.id); n != 3 {
		t.Errorf("a refused new created a session")
	}
}

func TestActiveSessionAgentsAndValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	a1 := ctSession(t, e, u.token, map[string]any{"agent": "support-bot"}, http.StatusCreated)
	a2 := ctSession(t, e, u.token, map[string]any{"agent": "sales:bot-2"}, http.StatusCreated)
	if a1.SessionID == a2.SessionID || a1.Agent != "support-bot" || a2.Agent != "sales:bot-2" {
		t.Errorf("agents share a session: %+v %+v", a1, a2)
	}
	if again := ctSession(t, e, u.token, map[string]any{"agent": "support-bot"}, http.StatusOK); again.SessionID != a1.SessionID {
		t.Errorf("support-bot resolves to %s, want %s", again.SessionID, a1.SessionID)
	}
	// Agents are case-sensitive names.
	if a3 := ctSession(t, e, u.token, map[string]any{"agent": "Support-Bot"}, http.StatusCreated); a3.SessionID == a1.SessionID {
		t.Errorf("Support-Bot shares support-bot's session")
	}
	// Another user of the same agent has their own.
	v := e.newUser("")
	if b := ctSession(t, e, v.token, map[string]any{"agent": "support-bot"}, http.StatusCreated); b.SessionID == a1.SessionID {
		t.Errorf("two users share a session")
	}
	// A service acting for u resolves u's session.
	if s := ctSession(t, e, e.serviceToken(), map[string]any{"agent": "support-bot", "user_id": u.id.String()}, http.StatusOK); s.SessionID != a1.SessionID {
		t.Errorf("service for u: %s, want %s", s.SessionID, a1.SessionID)
	}

	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"mode wrong case", map[string]any{"mode": "Resolve"}, "mode"},
		{"mode unknown", map[string]any{"mode": "create"}, "mode"},
		{"mode a number", map[string]any{"mode": 1}, "mode"},
		{"session_id not a UUID", map[string]any{"session_id": "abc"}, "session_id"},
		{"agent invalid", map[string]any{"agent": "bad agent!"}, "agent"},
		{"agent too long", map[string]any{"agent": strings.Repeat("a", 65)}, "agent"},
		{"unknown field", map[string]any{"mdoe": "new"}, "mdoe"},
		{"body an array", `[]`, ""},
		{"body a string", `"x"`, ""},
		{"trailing data", `{} {}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := ctFor(e, t)
			w := e.newUser("")
			wantProblem(t, e.call(w.token, "active-session", tc.body), http.StatusBadRequest, "invalid_request", tc.field)
			ctNothingStored(t, e, w.id)
		})
	}
	t.Run("service without user_id", func(t *testing.T) {
		t.Parallel()
		e := ctFor(e, t)
		wantProblem(t, e.call(e.serviceToken(), "active-session", map[string]any{}), http.StatusBadRequest, "invalid_request", "user_id")
	})
}
