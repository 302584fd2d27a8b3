package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/auth"
)

// isoTurn is a commit-turn body: the texts as alternating user and assistant messages, and
// the memories given as contents.
func isoTurn(session uuid.UUID, agent string, texts []string, memories ...string) map[string]any {
	msgs := make([]any, len(texts))
	for i, tx := range texts {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs[i] = map[string]any{"role": role, "content": tx}
	}
	body := map[string]any{"session_id": session.String(), "messages": msgs}
	if agent != "" {
		body["agent"] = agent
	}
	if len(memories) > 0 {
		mems := make([]any, len(memories))
		for i, m := range memories {
			mems[i] = map[string]any{"content": m}
		}
		body["memories"] = mems
	}
	return body
}

// isoWith returns body with extra fields set (for naming user_id / tenant_id).
func isoWith(body map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// isoMint mints a token for subject in tenant with role.
func isoMint(t *testing.T, role, subject, tenant string) string {
	t.Helper()
	tok, err := auth.MintHS256(secret, auth.MintClaims{Role: role, Subject: subject, TenantID: tenant})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// isoSeeded is what isoSeed stored for one caller.
type isoSeeded struct {
	session  uuid.UUID // the session committed to, also made active
	active   uuid.UUID // the session resolve created before the activation
	word     string    // a word only this caller's messages and memories contain
	messages int
}

// isoSeed commits a turn with memories into a new session as token (acting for body extras
// such as user_id), resolves an active session and then activates the committed one.
func isoSeed(t *testing.T, e *env, token string, extra ...any) isoSeeded {
	t.Helper()
	word := "quokka" + uuid.NewString()[:8]
	s := isoSeeded{session: uuid.New(), word: word, messages: 2}
	texts := []string{"I keep a " + word + " named Pip.", "Noted: your " + word + " is Pip."}
	e.call(token, "commit-turn", isoWith(isoTurn(s.session, "", texts,
		"The user keeps a "+word+" named Pip.", "The user's "+word+" eats leaves."), extra...)).must(t, http.StatusCreated)
	e.app.WaitEmbedded() // the messages are embedded right after the answer (MESSAGE_EMBEDDING=deferred)
	r := e.call(token, "active-session", isoWith(map[string]any{}, extra...)).must(t, http.StatusCreated)
	s.active = uuid.MustParse(str(r.body["session_id"]))
	e.call(token, "active-session", isoWith(map[string]any{"mode": "activate", "session_id": s.session.String()}, extra...)).
		must(t, http.StatusOK)
	return s
}

// isoSees asserts what token, acting as given, sees of a seeded caller: everything when want
// is true, nothing when false.
func isoSees(t *testing.T, e *env, token string, s isoSeeded, want bool, extra ...any) {
	t.Helper()
	r := e.call(token, "get-context", isoWith(map[string]any{"session_id": s.session.String(), "query": s.word}, extra...)).
		must(t, http.StatusOK)
	msgs, mems := len(list(r.body["messages"])), len(list(r.body["memories"]))
	if want && (msgs != s.messages || mems != 2) {
		t.Errorf("get-context: %d messages and %d memories, want %d and 2: %s", msgs, mems, s.messages, r.raw)
	}
	if !want && (msgs != 0 || mems != 0) {
		t.Errorf("get-context of someone else's session: %d messages, %d memories: %s", msgs, mems, r.raw)
	}
	for _, mode := range []string{"hybrid", "vector", "text"} {
		// The memories, the messages of past conversations, and both.
		for source, n := range map[string]int{"memories": 2, "messages": s.messages, "all": 2 + s.messages} {
			r = e.call(token, "recall", isoWith(map[string]any{"query": s.word + " Pip", "mode": mode, "source": source}, extra...)).
				must(t, http.StatusOK)
			results := list(r.body["results"])
			if want && len(results) != n {
				t.Errorf("recall %s of %s: %d results, want %d: %s", mode, source, len(results), n, r.raw)
			}
			if !want && len(results) != 0 {
				t.Errorf("recall %s of %s found someone else's rows: %s", mode, source, r.raw)
			}
			for _, x := range results {
				if h := obj(x); h["source"] == "message" && h["session_id"] != s.session.String() {
					t.Errorf("recall %s of %s: a message of session %v, want %s", mode, source, h["session_id"], s.session)
				}
			}
		}
	}
}

// A user reaches nothing of another user's, through any function: reads come back empty,
// writes and activations answer 404 and change nothing.
func TestIsolationBetweenUsers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	a, b := e.newUser(""), e.newUser("")
	s := isoSeed(t, e, a.token)
	isoSees(t, e, a.token, s, true)

	before := e.count("messages", "session_id = $1", s.session)
	var lastSeq int64
	conn := e.adminConn()
	if err := conn.QueryRow(t.Context(), "select last_seq from agentmem.sessions where id = $1", s.session).Scan(&lastSeq); err != nil {
		t.Fatal(err)
	}
	conn.Close(t.Context())

	// Reads: exactly the answer for a session that does not exist.
	isoSees(t, e, b.token, s, false)
	got := e.call(b.token, "get-context", map[string]any{"session_id": s.session.String()}).must(t, http.StatusOK)
	missing := uuid.New()
	want := e.call(b.token, "get-context", map[string]any{"session_id": missing.String()}).must(t, http.StatusOK)
	delete(got.body, "session_id")
	delete(want.body, "session_id")
	if g, w := fmt.Sprint(got.body), fmt.Sprint(want.body); g != w {
		t.Errorf("another user's session answers\n%s\na missing one\n%s", g, w)
	}
	if m, ok := got.body["messages"].([]any); !ok || len(m) != 0 {
		t.Errorf("messages = %v, want []", got.body["messages"])
	}

	// Writes into A's session, with A's agent and another.
	for _, agent := range []string{"", "other-bot"} {
		r := e.call(b.token, "commit-turn", isoTurn(s.session, agent, []string{"B was here"}, "B's fact")).must(t, http.StatusNotFound)
		if r.problemCode() != "not_found" {
			t.Errorf("code = %q", r.problemCode())
		}
	}
	// A retried commit with A's own message ids changes nothing either.
	r := e.call(b.token, "commit-turn", map[string]any{"session_id": s.session.String(),
		"messages": []any{map[string]any{"id": uuid.NewString(), "role": "user", "content": "x"}}})
	r.must(t, http.StatusNotFound)
	if n := e.count("messages", "session_id = $1", s.session); n != before {
		t.Errorf("A's session has %d messages after B's commits, had %d", n, before)
	}
	if n := e.count("sessions", "id = $1 and user_id = $2 and last_seq = $3", s.session, a.id, lastSeq); n != 1 {
		t.Error("A's session changed owner or numbering after B's commits")
	}
	for _, table := range []string{"sessions", "messages", "memories", "active_sessions", "idempotency_keys"} {
		if n := e.count(table, "user_id = $1", b.id); n != 0 {
			t.Errorf("%d rows of B in %s after refused requests", n, table)
		}
	}

	// Activation of A's session.
	r = e.call(b.token, "active-session", map[string]any{"mode": "activate", "session_id": s.session.String()}).
		must(t, http.StatusNotFound)
	if r.problemCode() != "not_found" {
		t.Errorf("code = %q", r.problemCode())
	}
	if n := e.count("active_sessions", "user_id = $1", b.id); n != 0 {
		t.Errorf("B has %d active sessions after a refused activation", n)
	}
	// B's own resolve makes B a session of B's own, never A's.
	r = e.call(b.token, "active-session", map[string]any{"session_id": s.session.String()}).must(t, http.StatusCreated)
	if id := str(r.body["session_id"]); id == s.session.String() || id == s.active.String() || r.body["matched"] != false {
		t.Errorf("B resolved %s (matched %v); A's sessions are %s and %s", id, r.body["matched"], s.session, s.active)
	}
	// A still has everything, and A's active session is still the activated one.
	isoSees(t, e, a.token, s, true)
	r = e.call(a.token, "active-session", map[string]any{"session_id": s.session.String()}).must(t, http.StatusOK)
	if str(r.body["session_id"]) != s.session.String() || r.body["matched"] != true {
		t.Errorf("A's active session is %s after B's requests, want %s", r.body["session_id"], s.session)
	}
}

// The same user id in another tenant is another caller: it sees and changes nothing of the
// first tenant's rows.
func TestIsolationBetweenTenants(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	id := uuid.NewString()
	t1, t2 := "t1-"+id[:8], "t2-"+id[:8]
	in1 := isoMint(t, auth.RoleUser, id, t1)
	in2 := isoMint(t, auth.RoleUser, id, t2)
	none := isoMint(t, auth.RoleUser, id, "")
	s := isoSeed(t, e, in1)
	isoSees(t, e, in1, s, true)

	for name, tok := range map[string]string{"other tenant": in2, "no tenant": none} {
		t.Run(name, func(t *testing.T) {
			e := *e
			e.t = t
			isoSees(t, &e, tok, s, false)
			e.call(tok, "commit-turn", isoTurn(s.session, "", []string{"cross-tenant write"})).must(t, http.StatusNotFound)
			e.call(tok, "active-session", map[string]any{"mode": "activate", "session_id": s.session.String()}).
				must(t, http.StatusNotFound)
			r := e.call(tok, "active-session", map[string]any{"session_id": s.session.String()}).must(t, http.StatusCreated)
			if sid := str(r.body["session_id"]); sid == s.session.String() || sid == s.active.String() {
				t.Errorf("resolve in another tenant answered the first tenant's session %s", sid)
			}
		})
	}
	if n := e.count("messages", "session_id = $1", s.session); n != s.messages {
		t.Errorf("tenant t1's session has %d messages, want %d", n, s.messages)
	}
	if n := e.count("sessions", "user_id = $1 and tenant_id = $2", uuid.MustParse(id), t1); n != 2 {
		t.Errorf("tenant t1 has %d sessions, want 2", n)
	}
	// The first tenant's view is intact.
	isoSees(t, e, in1, s, true)
}

// A service caller acts for the user it names, in the tenant it names.
func TestIsolationServiceActsForUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	svc := e.serviceToken()
	a := e.newUser("")
	acme := e.newUser("acme-" + uuid.NewString()[:8])

	s := isoSeed(t, e, a.token)
	isoSees(t, e, svc, s, true, "user_id", a.id.String())
	isoSees(t, e, svc, s, false, "user_id", uuid.NewString())
	// A UUID in upper case names the same user, as before user ids were text.
	isoSees(t, e, svc, s, true, "user_id", strings.ToUpper(a.id.String()))
	// Any other id is the user it names, exactly: another id that differs by a space or a
	// character's case is another user.
	clerk := "user_2aBc" + uuid.NewString()[:8]
	sc := isoSeed(t, e, svc, "user_id", clerk)
	isoSees(t, e, svc, sc, true, "user_id", clerk)
	isoSees(t, e, svc, sc, false, "user_id", clerk+" ")
	isoSees(t, e, svc, sc, false, "user_id", strings.ToLower(clerk))

	// A service seeds for a tenant's user; the user sees it, the service sees it only when it
	// names the tenant.
	st := isoSeed(t, e, svc, "user_id", acme.id.String(), "tenant_id", acme.tenant)
	isoSees(t, e, acme.token, st, true)
	isoSees(t, e, svc, st, true, "user_id", acme.id.String(), "tenant_id", acme.tenant)
	isoSees(t, e, svc, st, false, "user_id", acme.id.String())
	if n := e.count("messages", "user_id = $1 and tenant_id = $2", acme.id, acme.tenant); n != st.messages {
		t.Errorf("%d messages stored for the tenant's user, want %d", n, st.messages)
	}

	bodies := map[string]map[string]any{
		"active-session": {},
		"commit-turn":    isoTurn(uuid.New(), "", []string{"hello"}),
		"get-context":    {"session_id": uuid.NewString()},
		"recall":         {"query": "hello"},
	}
	for fn, body := range bodies {
		t.Run(fn, func(t *testing.T) {
			e := *e
			e.t = t
			for _, bad := range []any{nil, "", strings.Repeat("é", 256), "user\x01", "user\n2", "user\u200b", 42} {
				b := body
				if bad != nil {
					b = isoWith(body, "user_id", bad)
				}
				r := e.call(svc, fn, b).must(t, http.StatusBadRequest)
				if r.problemCode() != "invalid_request" || !namesField(r, "user_id") {
					t.Errorf("user_id %v: %s", bad, r.raw)
				}
			}
			// A user naming someone else, or another tenant, is refused.
			other := e.newUser("")
			for _, extra := range [][]any{
				{"user_id", other.id.String()},
				{"user_id", "not-a-uuid"},
				{"tenant_id", "someone-elses"},
				{"user_id", a.id.String(), "tenant_id", "x"},
			} {
				r := e.call(a.token, fn, isoWith(body, extra...)).must(t, http.StatusForbidden)
				if r.problemCode() != "forbidden" {
					t.Errorf("%v: code %q", extra, r.problemCode())
				}
			}
			r := e.call(acme.token, fn, isoWith(body, "tenant_id", "")).must(t, http.StatusForbidden)
			if r.problemCode() != "forbidden" {
				t.Errorf("tenant user naming no tenant: code %q", r.problemCode())
			}
			// Naming oneself is allowed.
			r = e.call(acme.token, fn, isoWith(body, "user_id", acme.id.String(), "tenant_id", acme.tenant))
			if r.status != http.StatusOK && r.status != http.StatusCreated {
				t.Errorf("user naming itself: %d %s", r.status, r.raw)
			}
			for _, table := range []string{"sessions", "messages", "memories"} {
				if n := e.count(table, "user_id = $1", other.id); n != 0 {
					t.Errorf("%d rows in %s for a user another user named", n, table)
				}
			}
		})
	}
}

// Any tenant a user token may carry, a service may name, and the user may repeat.
func TestIsolationLongTenant(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	for _, tenant := range []string{strings.Repeat("é", 128), strings.Repeat("t", 128), "ünïcode tenant ✓"} {
		u := e.newUser(tenant)
		s := isoSeed(t, e, u.token)
		isoSees(t, e, u.token, s, true, "tenant_id", tenant)
		isoSees(t, e, e.serviceToken(), s, true, "user_id", u.id.String(), "tenant_id", tenant)
	}
	svc := e.serviceToken()
	for _, bad := range []string{strings.Repeat("é", 129), strings.Repeat("t", 129), "tab\there", "ctl\x01"} {
		t.Run(bad, func(t *testing.T) {
			r := e.call(svc, "recall", map[string]any{"query": "x", "user_id": uuid.NewString(), "tenant_id": bad}).
				must(t, http.StatusBadRequest)
			if !namesField(r, "tenant_id") {
				t.Errorf("tenant_id %q: %s", bad, r.raw)
			}
		})
	}
}
