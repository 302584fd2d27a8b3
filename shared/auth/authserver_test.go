package auth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
)

const testAnonKey = "sb_publishable_agentmem-test-key"

// fakeAuthServer answers GET /auth/v1/user as Supabase's API gateway and Auth server do: the
// gateway checks the apikey, then the Auth server checks the token's signature (testSecret)
// and looks its subject up among users.
type fakeAuthServer struct {
	*httptest.Server
	calls atomic.Int32
	mu    sync.Mutex
	users map[string]map[string]any // by id
	// handle, when set, answers in place of the Auth server.
	handle http.HandlerFunc
}

func newFakeAuthServer(t testing.TB, users ...map[string]any) *fakeAuthServer {
	t.Helper()
	f := &fakeAuthServer{users: map[string]map[string]any{}}
	for _, u := range users {
		f.users[u["id"].(string)] = u
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAuthServer) setHandle(h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handle = h
}

func (f *fakeAuthServer) serve(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	f.mu.Lock()
	h := f.handle
	f.mu.Unlock()
	if h != nil {
		h(w, r)
		return
	}
	if r.Method != http.MethodGet || r.URL.Path != "/auth/v1/user" {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "no Route matched with those values"})
		return
	}
	if r.Header.Get("apikey") != testAnonKey {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Invalid API key",
			"hint": "Double check your Supabase `anon` or `service_role` API key."})
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		writeJSON(w, http.StatusUnauthorized, gotrueError(http.StatusUnauthorized, "no_authorization",
			"This endpoint requires a valid Bearer token"))
		return
	}
	var c jwt.RegisteredClaims
	if _, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return []byte(testSecret), nil },
		jwt.WithValidMethods([]string{"HS256"})); err != nil {
		writeJSON(w, http.StatusForbidden, gotrueError(http.StatusForbidden, "bad_jwt",
			"invalid JWT: unable to parse or verify signature, "+err.Error()))
		return
	}
	f.mu.Lock()
	u, ok := f.users[c.Subject]
	f.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusForbidden, gotrueError(http.StatusForbidden, "user_not_found",
			"User from sub claim in JWT does not exist"))
		return
	}
	writeJSON(w, http.StatusOK, u)
}

func gotrueError(status int, code, msg string) map[string]any {
	return map[string]any{"code": status, "error_code": code, "msg": msg}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// authUserJSON is the Auth server's user object for id; cases change one thing.
func authUserJSON(id string, mod ...func(map[string]any)) map[string]any {
	u := map[string]any{
		"id":                 id,
		"aud":                "authenticated",
		"role":               "authenticated",
		"email":              "ada@example.com",
		"email_confirmed_at": "2026-01-02T10:00:00.000000Z",
		"phone":              "",
		"confirmed_at":       "2026-01-02T10:00:00.000000Z",
		"last_sign_in_at":    "2026-03-04T09:30:00.000000Z",
		"app_metadata":       map[string]any{"provider": "email", "providers": []string{"email"}},
		"user_metadata":      map[string]any{"email_verified": true},
		"identities": []any{map[string]any{
			"identity_id": "0b0e7c1e-5f43-4f4e-9d5e-6a1f1f1f1f1f", "id": id, "user_id": id,
			"identity_data": map[string]any{"email": "ada@example.com", "sub": id},
			"provider":      "email", "email": "ada@example.com",
		}},
		"created_at":   "2026-01-02T10:00:00.000000Z",
		"updated_at":   "2026-03-04T09:30:00.000000Z",
		"is_anonymous": false,
	}
	for _, m := range mod {
		m(u)
	}
	return u
}

func tenantIs(v any) func(map[string]any) {
	return func(u map[string]any) { u["app_metadata"].(map[string]any)["tenant_id"] = v }
}

func newAuthServerVerifier(t testing.TB, cfg AuthServerConfig) *AuthServerVerifier {
	t.Helper()
	if cfg.APIKey == "" {
		cfg.APIKey = testAnonKey
	}
	v, err := NewAuthServerVerifier(cfg)
	if err != nil {
		t.Fatalf("NewAuthServerVerifier: %v", err)
	}
	return v
}

// wantCode fails unless err is an *apierror.Error of code that does not quote token.
func wantCode(t testing.TB, err error, code apierror.Code, token string) *apierror.Error {
	t.Helper()
	var ae *apierror.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not an *apierror.Error", err, err)
	}
	if ae.Code != code {
		t.Fatalf("code = %q (%v), want %q", ae.Code, err, code)
	}
	if token != "" && strings.Contains(err.Error(), token) {
		t.Fatalf("error %q quotes the token", err)
	}
	return ae
}

func TestAuthServerVerify(t *testing.T) {
	t.Parallel()
	id := testUser.String()
	token := hs(t, userClaims())
	other := hs(t, userClaims(set("sub", uuid.NewString())))
	forged := sign(t, jwt.SigningMethodHS256, "", []byte("another-secret-of-at-least-32-characters"), userClaims())
	user := Principal{Role: RoleUser, UserID: testUser.String()}
	answer := func(status int, body string, header ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i+1 < len(header); i += 2 {
				w.Header().Set(header[i], header[i+1])
			}
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}
	}
	tests := []struct {
		name   string
		token  string
		user   map[string]any          // the user the fake knows
		handle http.HandlerFunc        // replaces the fake Auth server
		apiKey string                  // default testAnonKey
		want   *Principal              // nil: want code
		code   apierror.Code           // with want nil
		retry  int                     // RetryAfter of a 503
		calls  int32                   // calls the server sees
		mod    func(*AuthServerConfig) // changes the verifier
	}{
		{name: "user", token: token, user: authUserJSON(id), want: &user, calls: 1},
		{name: "tenant", token: token, user: authUserJSON(id, tenantIs("t1")), calls: 1,
			want: &Principal{Role: RoleUser, UserID: testUser.String(), TenantID: "t1"}},
		{name: "tenant of 128 characters", token: token, user: authUserJSON(id, tenantIs(strings.Repeat("é", 128))), calls: 1,
			want: &Principal{Role: RoleUser, UserID: testUser.String(), TenantID: strings.Repeat("é", 128)}},
		{name: "empty tenant", token: token, user: authUserJSON(id, tenantIs("")), want: &user, calls: 1},
		{name: "null tenant", token: token, user: authUserJSON(id, tenantIs(nil)), want: &user, calls: 1},
		{name: "no app_metadata", token: token, user: authUserJSON(id, func(u map[string]any) { delete(u, "app_metadata") }),
			want: &user, calls: 1},
		{name: "the tenant is app_metadata's, not user_metadata's", token: token, calls: 1, want: &user,
			user: authUserJSON(id, func(u map[string]any) { u["user_metadata"] = map[string]any{"tenant_id": "chosen-by-user"} })},
		{name: "anonymous user", token: token, user: authUserJSON(id, set2("is_anonymous", true), tenantIs("t1")), calls: 1,
			want: &Principal{Role: RoleUser, UserID: testUser.String(), TenantID: "t1", Anonymous: true}},
		{name: "is_anonymous absent", token: token, user: authUserJSON(id, func(u map[string]any) { delete(u, "is_anonymous") }),
			want: &user, calls: 1},
		{name: "is_anonymous null", token: token, user: authUserJSON(id, set2("is_anonymous", nil)), want: &user, calls: 1},
		{name: "configured audience", token: token, user: authUserJSON(id, set2("aud", "agents")), want: &user, calls: 1,
			mod: func(c *AuthServerConfig) { c.Audience = "agents" }},

		{name: "tenant too long", token: token, user: authUserJSON(id, tenantIs(strings.Repeat("a", 129))), code: apierror.Unauthenticated, calls: 1},
		{name: "tenant with NUL", token: token, user: authUserJSON(id, tenantIs("t\x001")), code: apierror.Unauthenticated, calls: 1},
		{name: "tenant not a string", token: token, user: authUserJSON(id, tenantIs(7)), code: apierror.Unauthenticated, calls: 1},
		{name: "app_metadata not an object", token: token, user: authUserJSON(id, set2("app_metadata", "t1")), code: apierror.Unauthenticated, calls: 1},
		{name: "role anon", token: token, user: authUserJSON(id, set2("role", "anon")), code: apierror.Unauthenticated, calls: 1},
		{name: "role service_role", token: token, user: authUserJSON(id, set2("role", RoleService)), code: apierror.Unauthenticated, calls: 1},
		{name: "id not a uuid", token: hs(t, userClaims(set("sub", "user-42"))), user: authUserJSON("user-42"), calls: 1,
			want: &Principal{Role: RoleUser, UserID: "user-42"}},
		{name: "id with a control character", token: hs(t, userClaims(set("sub", "user\x01"))), user: authUserJSON("user\x01"), code: apierror.Unauthenticated, calls: 1},
		{name: "other audience", token: token, user: authUserJSON(id, set2("aud", "agents")), code: apierror.Unauthenticated, calls: 1},
		{name: "unknown user (403)", token: other, user: authUserJSON(id), code: apierror.Unauthenticated, calls: 1},
		{name: "bad signature (403)", token: forged, user: authUserJSON(id), code: apierror.Unauthenticated, calls: 1},
		{name: "401 from the server", token: token, calls: 1, code: apierror.Unauthenticated,
			handle: answer(401, `{"code":401,"error_code":"no_authorization","msg":"This endpoint requires a valid Bearer token"}`)},
		{name: "403 session not found", token: token, calls: 1, code: apierror.Unauthenticated,
			handle: answer(403, `{"code":"session_not_found","message":"Session from session_id claim in JWT does not exist"}`)},

		{name: "500", token: token, calls: 1, code: apierror.Unavailable, retry: 1,
			handle: answer(500, `{"code":500,"error_code":"unexpected_failure","msg":"failed for `+token+`"}`)},
		{name: "502 with Retry-After", token: token, calls: 1, code: apierror.Unavailable, retry: 7,
			handle: answer(502, `<html>Bad Gateway</html>`, "Retry-After", "7")},
		{name: "503 with a long Retry-After", token: token, calls: 1, code: apierror.Unavailable, retry: 60,
			handle: answer(503, ``, "Retry-After", "3600")},
		{name: "429", token: token, calls: 1, code: apierror.Unavailable, retry: 1,
			handle: answer(429, `{"code":429,"error_code":"over_request_rate_limit","msg":"rate limited"}`)},
		{name: "200 not json", token: token, calls: 1, code: apierror.Unavailable, retry: 1,
			handle: answer(200, `<!doctype html><title>Welcome</title>`)},
		{name: "200 not a user", token: token, calls: 1, code: apierror.Unavailable, retry: 1, handle: answer(200, `{}`)},
		{name: "200 id not a string", token: token, calls: 1, code: apierror.Unavailable, retry: 1,
			handle: answer(200, `{"id":42,"role":"authenticated"}`)},
		{name: "404", token: token, calls: 1, code: apierror.Unavailable, retry: 1,
			handle: answer(404, `{"message":"no Route matched with those values"}`)},
		{name: "redirect not followed", token: token, calls: 1, code: apierror.Unavailable, retry: 1,
			handle: func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", http.StatusFound) }},
		{name: "gateway refuses the api key", token: token, user: authUserJSON(id), apiKey: "sb_publishable_wrong",
			calls: 1, code: apierror.Unavailable, retry: 5},

		{name: "expired, not asked", token: hs(t, userClaims(set("exp", time.Now().Add(-time.Minute).Unix()))), user: authUserJSON(id),
			code: apierror.Unauthenticated},
		{name: "expired within leeway, asked", token: hs(t, userClaims(set("exp", time.Now().Add(-10*time.Second).Unix()))), user: authUserJSON(id),
			code: apierror.Unauthenticated, calls: 1, mod: func(c *AuthServerConfig) { c.Leeway = time.Minute }},
		{name: "no exp, not asked", token: hs(t, userClaims(del("exp"))), user: authUserJSON(id), code: apierror.Unauthenticated},
		{name: "exp not a number, not asked", token: hs(t, userClaims(set("exp", "soon"))), user: authUserJSON(id), code: apierror.Unauthenticated},
		{name: "role not a string, not asked", token: hs(t, userClaims(set("role", 1))), user: authUserJSON(id), code: apierror.Unauthenticated},
		{name: "garbage, not asked", token: "not-a-jwt", code: apierror.Unauthenticated},
		{name: "three garbage parts, not asked", token: "aaaa.bbbb.cccc", code: apierror.Unauthenticated},
		{name: "empty, not asked", token: "", code: apierror.Unauthenticated},
		{name: "too long, not asked", token: hs(t, userClaims(set("pad", strings.Repeat("x", maxTokenLen)))), code: apierror.Unauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var users []map[string]any
			if tt.user != nil {
				users = append(users, tt.user)
			}
			srv := newFakeAuthServer(t, users...)
			srv.setHandle(tt.handle)
			cfg := AuthServerConfig{URL: srv.URL + "/", APIKey: tt.apiKey}
			if tt.mod != nil {
				tt.mod(&cfg)
			}
			v := newAuthServerVerifier(t, cfg)
			got, err := v.Verify(t.Context(), tt.token)
			if n := srv.calls.Load(); n != tt.calls {
				t.Errorf("the Auth server was called %d times, want %d", n, tt.calls)
			}
			if tt.want == nil {
				ae := wantCode(t, err, tt.code, tt.token)
				if tt.code == apierror.Unavailable && ae.RetryAfter != tt.retry {
					t.Errorf("RetryAfter = %d, want %d", ae.RetryAfter, tt.retry)
				}
				if got != (Principal{}) {
					t.Errorf("principal = %+v alongside an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if got != *tt.want {
				t.Errorf("principal = %+v, want %+v", got, *tt.want)
			}
		})
	}
}

func set2(k string, v any) func(map[string]any) { return func(u map[string]any) { u[k] = v } }

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	timers []fakeTimer
}

// fakeTimer is a function to run once the fake clock reaches at.
type fakeTimer struct {
	at time.Time
	f  func()
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(time.Now().Unix(), 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock by d, and runs the timers that became due, before it returns.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	var due []func()
	c.timers = slices.DeleteFunc(c.timers, func(tm fakeTimer) bool {
		if tm.at.After(c.t) {
			return false
		}
		due = append(due, tm.f)
		return true
	})
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// AfterFunc runs f once the clock has moved by d.
func (c *fakeClock) AfterFunc(d time.Duration, f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timers = append(c.timers, fakeTimer{at: c.t.Add(d), f: f})
}

func TestAuthServerCache(t *testing.T) {
	t.Parallel()
	srv := newFakeAuthServer(t, authUserJSON(testUser.String(), tenantIs("t1")))
	v := newAuthServerVerifier(t, AuthServerConfig{URL: srv.URL, Leeway: time.Minute})
	clock := newFakeClock()
	v.now = clock.Now
	want := Principal{Role: RoleUser, UserID: testUser.String(), TenantID: "t1"}
	verify := func(token string, calls int32) {
		t.Helper()
		got, err := v.Verify(t.Context(), token)
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		if got != want {
			t.Fatalf("principal = %+v, want %+v", got, want)
		}
		if n := srv.calls.Load(); n != calls {
			t.Fatalf("the Auth server was called %d times, want %d", n, calls)
		}
	}

	// A token that lives an hour: answers are reused for 60 s.
	long := hs(t, userClaims(set("exp", clock.Now().Add(time.Hour).Unix())))
	verify(long, 1)
	verify(long, 1)
	clock.Advance(59 * time.Second)
	verify(long, 1)
	clock.Advance(2 * time.Second)
	verify(long, 2)
	verify(long, 2)

	// A token that expires in 30 s: its answer is not reused past its exp, even though the
	// leeway still lets it be asked about.
	short := hs(t, userClaims(set("exp", clock.Now().Add(30*time.Second).Unix()), set("jti", "short")))
	verify(short, 3)
	clock.Advance(29 * time.Second)
	verify(short, 3)
	clock.Advance(2 * time.Second)
	verify(short, 4)
}

func TestAuthServerRefusalIsCachedOutageIsNot(t *testing.T) {
	t.Parallel()
	srv := newFakeAuthServer(t, authUserJSON(testUser.String()))
	v := newAuthServerVerifier(t, AuthServerConfig{URL: srv.URL})

	stranger := hs(t, userClaims(set("sub", uuid.NewString())))
	for range 3 {
		_, err := v.Verify(t.Context(), stranger)
		wantCode(t, err, apierror.Unauthenticated, stranger)
	}
	if n := srv.calls.Load(); n != 1 {
		t.Errorf("a refused token was asked about %d times, want 1", n)
	}

	token := hs(t, userClaims())
	srv.setHandle(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	_, err := v.Verify(t.Context(), token)
	wantCode(t, err, apierror.Unavailable, token)
	srv.setHandle(nil)
	if _, err := v.Verify(t.Context(), token); err != nil {
		t.Fatalf("Verify after the outage: %v", err)
	}
	if n := srv.calls.Load(); n != 3 {
		t.Errorf("the Auth server was called %d times, want 3 (the outage was remembered)", n)
	}
}

func TestAuthServerCacheSizeIsBounded(t *testing.T) {
	t.Parallel()
	srv := newFakeAuthServer(t, authUserJSON(testUser.String()))
	v := newAuthServerVerifier(t, AuthServerConfig{URL: srv.URL, CacheSize: 2})
	a, b, c := hs(t, userClaims(set("jti", "a"))), hs(t, userClaims(set("jti", "b"))), hs(t, userClaims(set("jti", "c")))
	for i, step := range []struct {
		token string
		calls int32
	}{{a, 1}, {b, 2}, {c, 3}, {c, 3}, {b, 3}, {a, 4}, {c, 4}} {
		if _, err := v.Verify(t.Context(), step.token); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if n := srv.calls.Load(); n != step.calls {
			t.Fatalf("step %d: the Auth server was called %d times, want %d", i, n, step.calls)
		}
		if n := v.cache.size(); n > 2 {
			t.Fatalf("step %d: the cache holds %d answers, want at most 2", i, n)
		}
	}
}

func TestAuthServerOneCallForConcurrentVerifications(t *testing.T) {
	t.Parallel()
	srv := newFakeAuthServer(t)
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the server's Close, which waits for its handlers
	srv.setHandle(func(w http.ResponseWriter, r *http.Request) {
		<-release
		writeJSON(w, http.StatusOK, authUserJSON(testUser.String(), tenantIs("t1")))
	})
	v := newAuthServerVerifier(t, AuthServerConfig{URL: srv.URL})
	token := hs(t, userClaims())
	want := Principal{Role: RoleUser, UserID: testUser.String(), TenantID: "t1"}

	const n = 10
	var started sync.WaitGroup
	var done sync.WaitGroup
	errs := make(chan error, n)
	started.Add(n + 1)
	for range n {
		done.Add(1)
		go func() {
			defer done.Done()
			started.Done()
			got, err := v.Verify(context.Background(), token)
			if err == nil && got != want {
				err = errors.New("wrong principal")
			}
			errs <- err
		}()
	}
	// One more caller gives up while waiting: the others still get their answer.
	impatient, cancel := context.WithCancel(context.Background())
	impatientErr := make(chan error, 1)
	go func() {
		started.Done()
		_, err := v.Verify(impatient, token)
		impatientErr <- err
	}()
	started.Wait()
	for srv.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // every caller is now waiting on the one call
	cancel()
	wantCode(t, <-impatientErr, apierror.Unavailable, token)
	free()
	done.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Verify: %v", err)
		}
	}
	if got := srv.calls.Load(); got != 1 {
		t.Errorf("the Auth server was called %d times for %d concurrent verifications, want 1", got, n+1)
	}
}

func TestAuthServerTimeout(t *testing.T) {
	t.Parallel()
	srv := newFakeAuthServer(t)
	srv.setHandle(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	v := newAuthServerVerifier(t, AuthServerConfig{URL: srv.URL, Timeout: 50 * time.Millisecond})
	token := hs(t, userClaims())
	start := time.Now()
	_, err := v.Verify(t.Context(), token)
	ae := wantCode(t, err, apierror.Unavailable, token)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Verify took %v with a 50ms timeout", d)
	}
	if ae.RetryAfter < 1 {
		t.Errorf("RetryAfter = %d, want at least 1", ae.RetryAfter)
	}

	// A server nobody listens on.
	srv.Close()
	_, err = v.Verify(t.Context(), token)
	wantCode(t, err, apierror.Unavailable, token)
}

func TestAuthServerServiceRole(t *testing.T) {
	t.Parallel()
	srv := newFakeAuthServer(t, authUserJSON(testUser.String()))
	plain := newAuthServerVerifier(t, AuthServerConfig{URL: srv.URL})
	withSecret := newAuthServerVerifier(t, AuthServerConfig{URL: srv.URL,
		ServiceTokens: newVerifier(t, t.Context(), Config{JWTSecret: testSecret})})
	service := hs(t, serviceClaims())
	forged := sign(t, jwt.SigningMethodHS256, "", []byte("another-secret-of-at-least-32-characters"), serviceClaims())
	expired := hs(t, serviceClaims(set("exp", time.Now().Add(-time.Hour).Unix())))
	none := sign(t, jwt.SigningMethodNone, "", jwt.UnsafeAllowNoneSignatureType, serviceClaims())

	_, err := plain.Verify(t.Context(), service)
	ae := wantCode(t, err, apierror.Unauthenticated, service)
	if ae.Detail != errServiceRefused {
		t.Errorf("detail = %q, want %q", ae.Detail, errServiceRefused)
	}
	got, err := withSecret.Verify(t.Context(), service)
	if err != nil || got != (Principal{Role: RoleService}) {
		t.Errorf("service token with a secret configured: %+v, %v", got, err)
	}
	for _, tok := range []string{forged, expired, none} {
		_, err := withSecret.Verify(t.Context(), tok)
		wantCode(t, err, apierror.Unauthenticated, tok)
	}
	if n := srv.calls.Load(); n != 0 {
		t.Errorf("service tokens were sent to the Auth server %d times", n)
	}
	// User tokens still go to the Auth server when a secret is configured.
	if _, err := withSecret.Verify(t.Context(), hs(t, userClaims())); err != nil {
		t.Errorf("user token: %v", err)
	}
	if n := srv.calls.Load(); n != 1 {
		t.Errorf("the Auth server was called %d times for one user token, want 1", n)
	}
}

func TestNewAuthServerVerifierConfig(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		cfg  AuthServerConfig
	}{
		{"no url", AuthServerConfig{APIKey: testAnonKey}},
		{"no key", AuthServerConfig{URL: "https://ref.supabase.co"}},
		{"url without scheme", AuthServerConfig{URL: "ref.supabase.co", APIKey: testAnonKey}},
		{"url of another scheme", AuthServerConfig{URL: "ftp://ref.supabase.co", APIKey: testAnonKey}},
		{"negative leeway", AuthServerConfig{URL: "https://ref.supabase.co", APIKey: testAnonKey, Leeway: -time.Second}},
		{"negative cache size", AuthServerConfig{URL: "https://ref.supabase.co", APIKey: testAnonKey, CacheSize: -1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if v, err := NewAuthServerVerifier(tt.cfg); err == nil {
				t.Errorf("%s: NewAuthServerVerifier = %v, want an error", tt.name, v)
			}
		})
	}
	v, err := NewAuthServerVerifier(AuthServerConfig{URL: "https://ref.supabase.co/", APIKey: testAnonKey})
	if err != nil {
		t.Fatal(err)
	}
	if v.endpoint != "https://ref.supabase.co/auth/v1/user" || v.ttl != time.Minute || v.timeout != 5*time.Second ||
		v.cache.max != 10_000 || v.rules.audience != DefaultAudience {
		t.Errorf("defaults: endpoint %q ttl %v timeout %v cache %d audience %q",
			v.endpoint, v.ttl, v.timeout, v.cache.max, v.rules.audience)
	}
}

// FuzzAuthServerAnswer feeds the decoder of the Auth server's 200 answers: it must name a
// valid user, refuse the token, or call the answer unavailable.
func FuzzAuthServerAnswer(f *testing.F) {
	id := testUser.String()
	for _, u := range []map[string]any{
		authUserJSON(id), authUserJSON(id, tenantIs("t1")), authUserJSON(id, tenantIs(7)),
		authUserJSON(id, set2("role", "anon")), authUserJSON("user-42"), authUserJSON(id, set2("app_metadata", "x")),
	} {
		f.Add([]byte(mustJSON(u)))
	}
	for _, s := range []string{`{}`, `null`, `[]`, `{"id":42}`, `<html>`, ``} {
		f.Add([]byte(s))
	}
	v, err := NewAuthServerVerifier(AuthServerConfig{URL: "https://ref.supabase.co", APIKey: testAnonKey})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := v.decodeUser(body)
		switch {
		case err != nil:
			wantCode(t, err, apierror.Unavailable, "")
		case a.refused != "":
		case a.principal.Role == RoleUser && a.principal.UserID != "" && validTenant(a.principal.TenantID):
		default:
			t.Fatalf("decodeUser(%q) = %+v", body, a)
		}
	})
}
