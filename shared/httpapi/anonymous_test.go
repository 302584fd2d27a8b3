package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/httpapi"
)

// anonUser is a user of Supabase's anonymous sign-ins: its token, minted by the project's own
// helper, says is_anonymous: true.
func (e *env) anonUser(tenant string) user {
	e.t.Helper()
	id := uuid.New()
	tok, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleUser, Subject: id.String(), TenantID: tenant, Anonymous: true})
	if err != nil {
		e.t.Fatal(err)
	}
	return user{id: id, tenant: tenant, token: tok}
}

// withConfig is e served with cfg instead: same database, store and token secret.
func (e *env) withConfig(t *testing.T, cfg httpapi.Config) *env {
	t.Helper()
	return e.withConfigs(t, cfg, app.Config{})
}

// withConfigs is e served with cfg and its use cases configured by acfg.
func (e *env) withConfigs(t *testing.T, cfg httpapi.Config, acfg app.Config) *env {
	t.Helper()
	return buildEnv(t, envConfig{reuse: e, app: acfg, http: cfg,
		log: func(buf io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(buf, nil)) }})
}

func anonTurn(sid uuid.UUID) map[string]any {
	return map[string]any{"session_id": sid, "agent": "anon-bot",
		"messages": []map[string]any{{"role": "user", "content": "Call me Grace."}},
		"memories": []map[string]any{{"content": "User is called Grace."}}}
}

// By default (AUTH_ALLOW_ANONYMOUS=true) an anonymous user is a user like any other: it
// stores and reads its own rows, and is still refused what every user is refused.
func TestAnonymousUsersAreServedByDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.anonUser("anon-t1")
	sid := uuid.New()
	e.call(u.token, "commit-turn", anonTurn(sid)).must(t, http.StatusCreated)
	r := e.call(u.token, "get-context", map[string]any{"session_id": sid, "agent": "anon-bot", "query": "Grace"}).
		must(t, http.StatusOK)
	if n := len(list(r.body["messages"])); n != 1 {
		t.Errorf("get-context gave %d messages, want 1: %s", n, r.raw)
	}
	if n := len(list(r.body["memories"])); n != 1 {
		t.Errorf("get-context gave %d memories, want 1: %s", n, r.raw)
	}
	e.call(u.token, "user-state", map[string]any{"op": "set", "mode": "active"}).must(t, http.StatusCreated)
	if n := e.count("sessions", "user_id = $1 and tenant_id = $2", u.id, u.tenant); n != 1 {
		t.Errorf("%d sessions stored for the anonymous user, want 1", n)
	}
	r = e.call(u.token, "sweep-expired", map[string]any{}).must(t, http.StatusForbidden)
	if r.problemCode() != "forbidden" {
		t.Errorf("sweep-expired for an anonymous user: code %q, want forbidden", r.problemCode())
	}
}

// With AUTH_ALLOW_ANONYMOUS=false every function answers an anonymous user 403 forbidden, as
// problem+json, whatever the body, and writes nothing; users who signed in and service callers
// are served as before.
func TestAnonymousUsersRefused(t *testing.T) {
	t.Parallel()
	base := newEnv(t, false)
	e := base.withConfig(t, httpapi.Config{RefuseAnonymous: true})
	anon := e.anonUser("")
	sid := uuid.New()

	for _, fn := range e.srv.Functions() {
		t.Run(fn, func(t *testing.T) {
			body := map[string]any{}
			if fn == "commit-turn" {
				body = anonTurn(sid)
			}
			r := e.call(anon.token, fn, body, "Origin", "https://app.example.com")
			wantProblem(t, r, http.StatusForbidden, "forbidden")
		})
	}
	for _, table := range []string{"sessions", "messages", "memories"} {
		if n := e.count(table, "user_id = $1", anon.id); n != 0 {
			t.Errorf("%d rows in %s for the refused anonymous user", n, table)
		}
	}

	// The same anonymous token on a server that accepts anonymous users is served.
	base.call(anon.token, "commit-turn", anonTurn(sid)).must(t, http.StatusCreated)

	signedIn := e.newUser("")
	e.call(signedIn.token, "commit-turn", anonTurn(uuid.New())).must(t, http.StatusCreated)
	e.call(e.serviceToken(), "user-state", map[string]any{"op": "set", "mode": "halted", "user_id": anon.id}).
		must(t, http.StatusCreated)
}
