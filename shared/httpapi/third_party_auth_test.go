package httpapi_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/auth"
)

// thirdParty is an identity provider as Supabase's third-party auth meets one (Clerk, Auth0,
// Firebase, Cognito, WorkOS): its own RS256 key, published as a JWKS, and tokens whose sub is
// its own user id.
type thirdParty struct {
	key  *rsa.PrivateKey
	jwks *httptest.Server
}

func newThirdParty(t *testing.T) *thirdParty {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	set, err := json.Marshal(map[string]any{"keys": []map[string]string{{"kty": "RSA", "alg": "RS256", "use": "sig",
		"kid": "ins_2clerk", "n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(set)
	}))
	t.Cleanup(srv.Close)
	return &thirdParty{key: key, jwks: srv}
}

// token is a session token as Clerk writes one once set up for Supabase: Clerk's own claims
// (azp, sid, iss), no app_metadata, and the role claim Supabase requires of third-party tokens.
func (p *thirdParty) token(t *testing.T, sub string, drop ...string) string {
	t.Helper()
	now := time.Now()
	claims := jwt.MapClaims{"sub": sub, "role": auth.RoleUser, "aud": "authenticated",
		"iss": "https://clerk.example.com", "azp": "https://app.example.com", "sid": "sess_2xyz",
		"iat": now.Unix(), "nbf": now.Add(-5 * time.Second).Unix(), "exp": now.Add(time.Hour).Unix()}
	for _, k := range drop {
		delete(claims, k)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "ins_2clerk"
	s, err := tok.SignedString(p.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A user of a third-party provider, whose sub is no UUID, uses every function a user may call,
// as themself: rows are stored under the sub as given, a service caller naming the same id
// reaches the same rows, another provider's user (auth0|...) and a Supabase Auth user (a UUID)
// see none of them, and forget-user erases them. The service-only functions refuse the token.
func TestThirdPartyUserCallsEveryFunction(t *testing.T) {
	t.Parallel()
	p := newThirdParty(t)
	v, err := auth.NewVerifier(t.Context(), auth.Config{JWKSURL: p.jwks.URL, JWTSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	e := buildEnv(t, envConfig{verifier: v})
	clerkID := "user_2abc" + uuid.NewString()[:8]
	tok := p.token(t, clerkID)
	other := p.token(t, "auth0|"+uuid.NewString()[:8])
	supa := e.newUser("")

	ok := func(fn string, body map[string]any, want ...int) map[string]any {
		t.Helper()
		r := e.call(tok, fn, body)
		if r.status < 200 || r.status > 299 || (len(want) > 0 && r.status != want[0]) {
			t.Fatalf("%s %v: status %d: %s", fn, body["op"], r.status, r.raw)
		}
		return r.body
	}

	sess := ok("active-session", map[string]any{"agent": "support"}, http.StatusCreated)
	sid, _ := sess["session_id"].(string)
	ok("commit-turn", map[string]any{"session_id": sid, "agent": "support",
		"messages": []map[string]any{{"role": "user", "content": "I prefer metric units."},
			{"role": "assistant", "content": "Noted."}},
		"memories": []map[string]any{{"content": "The user prefers metric units."}}}, http.StatusCreated)
	ctx := ok("get-context", map[string]any{"session_id": sid, "agent": "support", "query": "metric units"})
	if msgs, _ := ctx["messages"].([]any); len(msgs) != 2 {
		t.Fatalf("get-context messages %v", ctx["messages"])
	}
	if mems, _ := ctx["memories"].([]any); len(mems) != 1 {
		t.Fatalf("get-context memories %v", ctx["memories"])
	}
	if res, _ := ok("recall", map[string]any{"query": "metric", "source": "all"})["results"].([]any); len(res) < 2 {
		t.Fatalf("recall found %v", res)
	}
	ok("active-session", map[string]any{"agent": "support", "session_id": sid})
	ok("user-memory", map[string]any{"op": "set", "key": "units", "value": map[string]any{"v": "metric"}}, http.StatusCreated)
	ok("user-memory", map[string]any{"op": "get", "key": "units"})
	ok("user-memory", map[string]any{"op": "list"})
	ok("user-state", map[string]any{"op": "set", "mode": "active"})
	ok("user-state", map[string]any{"op": "get"})
	ok("notes", map[string]any{"op": "append", "agent": "support", "content": "# Units\nmetric"})
	ok("notes", map[string]any{"op": "read", "agent": "support"})
	ok("sessions", map[string]any{"op": "list"})
	ok("sessions", map[string]any{"op": "history", "session_id": sid})
	ok("sessions", map[string]any{"op": "set_title", "session_id": sid, "title": "Units"})
	created := ok("memories", map[string]any{"op": "create", "content": "The user lives in Lyon."}, http.StatusCreated)
	mid, _ := created["id"].(string)
	ok("memories", map[string]any{"op": "list"})
	ok("memories", map[string]any{"op": "get", "id": mid})
	ok("memories", map[string]any{"op": "update", "id": mid, "content": "The user lives in Paris."})
	ok("memories", map[string]any{"op": "delete", "id": mid})
	ok("knowledge", map[string]any{"op": "search", "query": "units"})
	ok("intents", map[string]any{"type": "syncSession", "session_id": sid}, http.StatusAccepted)
	for _, fn := range []string{"sweep-expired", "jobs", "process-jobs"} {
		wantProblem(t, e.call(tok, fn, map[string]any{"op": "list"}), http.StatusForbidden, "forbidden")
	}

	if n := e.count("messages", "user_id = $1", clerkID); n != 2 {
		t.Fatalf("%d messages stored under the sub, want 2", n)
	}
	// A service caller names the same user by the same id.
	r := e.call(e.serviceToken(), "get-context", map[string]any{"user_id": clerkID, "session_id": sid, "agent": "support"})
	if msgs, _ := r.body["messages"].([]any); r.status != http.StatusOK || len(msgs) != 2 {
		t.Fatalf("service caller acting for %q: %d %s", clerkID, r.status, r.raw)
	}
	// Another provider's user and a Supabase Auth user see none of it.
	for name, other := range map[string]string{"auth0 user": other, "supabase user": supa.token} {
		r := e.call(other, "get-context", map[string]any{"session_id": sid, "agent": "support", "query": "metric units"})
		if msgs, _ := r.body["messages"].([]any); r.status != http.StatusOK || len(msgs) != 0 {
			t.Errorf("%s reads the session: %d %s", name, r.status, r.raw)
		}
		if mems, _ := r.body["memories"].([]any); len(mems) != 0 {
			t.Errorf("%s recalls the memories: %s", name, r.raw)
		}
		wantProblem(t, e.call(other, "sessions", map[string]any{"op": "history", "session_id": sid}), http.StatusNotFound, "not_found")
	}

	forgot := ok("forget-user", map[string]any{})
	if forgot["deleted"] == nil {
		t.Fatalf("forget-user answered %v", forgot)
	}
	for _, table := range []string{"sessions", "messages", "memories", "user_memory", "user_state", "notes", "active_sessions"} {
		if n := e.count(table, "user_id = $1", clerkID); n != 0 {
			t.Errorf("%d rows of %s left after forget-user", n, table)
		}
	}

	// The role claim Supabase requires of a third-party token is required here too.
	wantProblem(t, e.call(p.token(t, clerkID, "role"), "get-context", map[string]any{"session_id": sid}),
		http.StatusUnauthorized, "unauthenticated")
}
