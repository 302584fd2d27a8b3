package service_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter/mem0/mem0test"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/service"
	"github.com/agentmem/agentmem/shared/testdb"
)

// An embedder configured wrongly stops start-up, before any connection, with a message that
// says why; vectors of any size pgvector stores start.
func TestStartChecksTheEmbedder(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		vars map[string]string
		want []string
	}{
		{map[string]string{"EMBEDDING_PROVIDER": "openai", "EMBEDDING_BASE_URL": "http://127.0.0.1:1",
			"EMBEDDING_MODEL": "text-embedding-3-large", "EMBEDDING_DIMENSIONS": "3072"}, nil},
		{map[string]string{"EMBEDDING_PROVIDER": "bedrock", "AWS_REGION": "us-east-1"}, nil},
		{map[string]string{"EMBEDDING_PROVIDER": "bedrock", "AWS_REGION": "us-east-1", "EMBEDDING_DIMENSIONS": "384"},
			[]string{"256, 512 or 1024"}},
		{map[string]string{"EMBEDDING_MODEL": "all-minilm"}, []string{"local embedder"}},
	} {
		t.Run(fmt.Sprint(tc.vars), func(t *testing.T) {
			vars := tc.vars
			// A database nobody listens on: start-up must fail before it is needed.
			vars["DATABASE_URL"] = "postgresql://postgres:postgres@127.0.0.1:1/postgres?connect_timeout=1"
			cfg, err := config.Load(func(k string) string { return vars[k] })
			if err != nil {
				t.Fatal(err)
			}
			svc, err := service.New(context.Background(), cfg, log)
			if tc.want == nil {
				if err != nil {
					t.Errorf("%v: %v", tc.vars, err)
				} else {
					svc.Close()
				}
				return
			}
			if err == nil {
				svc.Close()
				t.Errorf("%v: started", tc.vars)
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: error %q does not say %q", tc.vars, err, w)
				}
			}
		})
	}
}

// SUPABASE_AUTH_VERIFY=auth-server puts the project's Auth server in front of every function:
// its 200 lets a request through, its 401 is a 401, its outage a 503 the client retries.
func TestAuthServerMode(t *testing.T) {
	t.Parallel()
	const anonKey = "sb_publishable_service-test"
	user := uuid.New()
	mint := func(c auth.MintClaims) string {
		tok, err := auth.MintHS256("a-secret-only-the-fake-auth-server-would-know", c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	good := mint(auth.MintClaims{Role: auth.RoleUser, Subject: user.String()})
	signedOut := mint(auth.MintClaims{Role: auth.RoleUser, Subject: user.String(), Issuer: "signed-out"})
	outage := mint(auth.MintClaims{Role: auth.RoleUser, Subject: user.String(), Issuer: "outage"})
	serviceKey := mint(auth.MintClaims{Role: auth.RoleService})
	var calls atomic.Int32
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path != "/auth/v1/user" || r.Header.Get("apikey") != anonKey:
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"message":"Invalid API key"}`) //nolint:errcheck
		case r.Header.Get("Authorization") == "Bearer "+good:
			fmt.Fprintf(w, `{"id":%q,"aud":"authenticated","role":"authenticated","email":"ada@example.com",`+
				`"app_metadata":{"provider":"email","tenant_id":"t1"},"user_metadata":{}}`, user)
		case r.Header.Get("Authorization") == "Bearer "+outage:
			w.WriteHeader(http.StatusBadGateway)
		default:
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"code":403,"error_code":"session_not_found","msg":"Session from session_id claim in JWT does not exist"}`) //nolint:errcheck
		}
	}))
	t.Cleanup(fake.Close)
	vars := map[string]string{"DATABASE_URL": testdb.ServerURL(t), "SUPABASE_AUTH_VERIFY": "auth-server",
		"SUPABASE_URL": fake.URL, "SUPABASE_ANON_KEY": anonKey}
	svc := newService(t, vars)
	fn := svc.Server.Functions()[0]
	for _, tc := range []struct {
		name   string
		token  string
		status int // a GET that passes authentication is then refused with 405
		calls  int32
	}{
		{"user", good, http.StatusMethodNotAllowed, 1},
		{"user again, from the cache", good, http.StatusMethodNotAllowed, 1},
		{"signed out", signedOut, http.StatusUnauthorized, 2},
		{"auth server down", outage, http.StatusServiceUnavailable, 3},
		{"service token without a secret", serviceKey, http.StatusUnauthorized, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := getWithStatus(t, svc, fn, tc.token, tc.status)
			if tc.status == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") == "" {
				t.Errorf("%s: 503 without Retry-After", tc.name)
			}
			if n := calls.Load(); n != tc.calls {
				t.Errorf("%s: the Auth server was called %d times, want %d", tc.name, n, tc.calls)
			}
		})
	}
}

// newService starts the service configured by vars, as the environment would, closed when the
// test ends.
func newService(t *testing.T, vars map[string]string) *service.Service {
	t.Helper()
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc
}

// getWithStatus GETs function fn of svc with token and fails the test unless it answers status.
func getWithStatus(t *testing.T, svc *service.Service, fn, token string, status int) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/v1/"+fn, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	svc.Server.Mux().ServeHTTP(rec, req)
	if rec.Code != status {
		t.Errorf("status %d, want %d: %s", rec.Code, status, rec.Body)
	}
	return rec
}

// AUTH_ALLOW_ANONYMOUS reaches every function: unset, an anonymous user is served; false, it
// is answered 403 forbidden, and a user who signed in is still served.
func TestAuthAllowAnonymous(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	mint := func(anonymous bool) string {
		tok, err := auth.MintHS256(config.LocalJWTSecret, auth.MintClaims{Role: auth.RoleUser,
			Subject: uuid.NewString(), Anonymous: anonymous})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	for _, tc := range []struct {
		setting        string
		anon, signedIn int
	}{
		{"", http.StatusCreated, http.StatusCreated},
		{"true", http.StatusCreated, http.StatusCreated},
		{"false", http.StatusForbidden, http.StatusCreated},
	} {
		t.Run("AUTH_ALLOW_ANONYMOUS="+tc.setting, func(t *testing.T) {
			vars := map[string]string{"DATABASE_URL": db.URL, "AUTH_ALLOW_ANONYMOUS": tc.setting}
			svc := newService(t, vars)
			for _, c := range []struct {
				who    string
				token  string
				status int
			}{{"anonymous user", mint(true), tc.anon}, {"signed-in user", mint(false), tc.signedIn}} {
				t.Run(c.who, func(t *testing.T) {
					req := httptest.NewRequest(http.MethodPost, "/v1/active-session", strings.NewReader(`{"agent":"anon-bot"}`))
					req.Header.Set("Authorization", "Bearer "+c.token)
					req.Header.Set("Content-Type", "application/json")
					rec := httptest.NewRecorder()
					svc.Server.Mux().ServeHTTP(rec, req)
					if rec.Code != c.status {
						t.Errorf("%s: status %d, want %d: %s", c.who, rec.Code, c.status, rec.Body)
					}
					if c.status == http.StatusForbidden && (!strings.Contains(rec.Body.String(), `"code":"forbidden"`) ||
						rec.Header().Get("Content-Type") != "application/problem+json") {
						t.Errorf("%s: %s %s, want a forbidden problem", c.who, rec.Header().Get("Content-Type"), rec.Body)
					}
				})
			}
		})
	}
}

// A key set that cannot be fetched at start-up does not stop start-up: tokens that need it
// answer 503 with Retry-After, HS256 tokens are checked with the secret as ever.
func TestStartWithTheJWKSDown(t *testing.T) {
	t.Parallel()
	const secret = "a-secret-of-at-least-32-characters-for-this-test"
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	vars := map[string]string{"DATABASE_URL": testdb.ServerURL(t), "AWS_LAMBDA_FUNCTION_NAME": "recall",
		"SUPABASE_JWKS_URL": down.URL + "/auth/v1/.well-known/jwks.json", "SUPABASE_JWT_SECRET": secret}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("start with the JWKS down: %v", err)
	}
	t.Cleanup(svc.Close)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	es := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"role": auth.RoleService,
		"exp": time.Now().Add(time.Hour).Unix()})
	es.Header["kid"] = "7c9d3c1e-0f4b-4d7e-9a55-2f1b8e6d4c3a"
	esToken, err := es.SignedString(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	hsToken, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleService})
	if err != nil {
		t.Fatal(err)
	}
	fn := svc.Server.Functions()[0]
	for _, tc := range []struct {
		name   string
		token  string
		status int // a GET that passes authentication is then refused with 405
	}{
		{"es256 token", esToken, http.StatusServiceUnavailable},
		{"hs256 token", hsToken, http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := getWithStatus(t, svc, fn, tc.token, tc.status)
			if tc.status == http.StatusServiceUnavailable {
				if ra, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || ra < 1 {
					t.Errorf("%s: Retry-After %q, want a number of seconds", tc.name, rec.Header().Get("Retry-After"))
				}
				if !strings.Contains(rec.Body.String(), `"code":"unavailable"`) {
					t.Errorf("%s: body %s, want code unavailable", tc.name, rec.Body)
				}
			}
		})
	}
}

// ADAPTERS=mem0 with MEM0_RECALL=true, as the environment configures it: a commit is delivered
// to Mem0 by the process's delivery, and recall merges Mem0's memories of the user in.
func TestMem0FromTheEnvironment(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	fake := mem0test.New("m0-service-test-key")
	t.Cleanup(fake.Close) // after the service's Close, registered later
	vars := map[string]string{"DATABASE_URL": db.URL, "ADAPTERS": "mem0", "PII_HASH_SALT": "a-salt-of-more-than-sixteen-bytes",
		"MEM0_API_KEY": "m0-service-test-key", "MEM0_URL": fake.URL, "MEM0_RECALL": "true", "MEM0_RECALL_TIMEOUT": "5s"}
	svc := newService(t, vars)
	user := uuid.New()
	tok, err := auth.MintHS256(config.LocalJWTSecret, auth.MintClaims{Role: auth.RoleUser, Subject: user.String()})
	if err != nil {
		t.Fatal(err)
	}
	call := func(fn, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/v1/"+fn, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		svc.Server.Mux().ServeHTTP(rec, req)
		return rec
	}
	if rec := call("commit-turn", `{"session_id":"`+uuid.NewString()+`","agent":"bot","messages":[{"role":"user","content":"I keep bees in Wales."}]}`); rec.Code != http.StatusCreated {
		t.Fatalf("commit-turn: %d %s", rec.Code, rec.Body)
	}
	out, err := svc.App.RunJobs(t.Context(), 10, 10*time.Second)
	if err != nil || out.Done != 1 {
		t.Fatalf("delivery: %+v %v", out, err)
	}
	if ms := fake.Memories(); len(ms) != 1 || ms[0].UserID != user.String() || ms[0].Memory != "I keep bees in Wales." {
		t.Fatalf("Mem0 holds %+v", ms)
	}
	rec := call("recall", `{"query":"bees","mode":"text","agent":"bot"}`)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"origin":"mem0"`) {
		t.Errorf("recall: %d %s", rec.Code, rec.Body)
	}
}
