package httpapi_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

const rlOrigin = "https://app.example.com"

// rlContainers gives n servers with the rate limit rl over the package's database, each with
// a pool of its own, as n Lambda containers have.
func rlContainers(t *testing.T, n int, rl app.RateLimit) (*env, []*env) {
	t.Helper()
	base := newEnv(t, false)
	var out []*env
	for range n {
		c := buildEnv(t, envConfig{on: base, maxConns: 4, app: app.Config{RateLimit: rl},
			http: httpapi.Config{AllowedOrigins: []string{rlOrigin}}, log: discardLog})
		c.logBuf = base.logBuf
		out = append(out, c)
	}
	return base, out
}

// rlTenant is a tenant name no other test uses.
func rlTenant() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "rl-" + hex.EncodeToString(b)
}

// rlCommit is a commit-turn body for a new session, and the Idempotency-Key headers.
func rlCommit(i int) (string, []string) {
	return fmt.Sprintf(`{"session_id": %q, "messages": [{"role": "user", "content": "turn %d"}]}`, uuid.NewString(), i),
		[]string{"Origin", rlOrigin, "Idempotency-Key", "rl-" + uuid.NewString()}
}

// rlRace sends one commit-turn per token at once, spread over the containers, and returns the
// responses.
func rlRace(t *testing.T, containers []*env, tokens []string) []response {
	t.Helper()
	out := make([]response, len(tokens))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, tok := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, headers := rlCommit(i)
			<-start
			out[i] = containers[i%len(containers)].call(tok, "commit-turn", body, headers...)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// rlTally counts 201s and checks that every other answer is a complete 429: problem+json
// rate_limited, Retry-After in whole seconds within [1, maxRetry], CORS and the request id.
func rlTally(t *testing.T, rs []response, maxRetry int) (created, limited int) {
	t.Helper()
	for _, r := range rs {
		switch r.status {
		case http.StatusCreated:
			created++
		case http.StatusTooManyRequests:
			limited++
			ra, err := strconv.Atoi(r.header.Get("Retry-After"))
			if err != nil || ra < 1 || ra > maxRetry {
				t.Errorf("Retry-After %q, want whole seconds from 1 to %d", r.header.Get("Retry-After"), maxRetry)
			}
			if r.problemCode() != "rate_limited" || r.body["status"] != float64(429) || str(r.body["title"]) != "Too Many Requests" {
				t.Errorf("429 body %s", r.raw)
			}
			if r.header.Get("Access-Control-Allow-Origin") != rlOrigin ||
				!strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "Retry-After") {
				t.Errorf("429 without CORS headers: %v", r.header)
			}
			if r.header.Get("X-Request-Id") == "" || str(r.body["request_id"]) != r.header.Get("X-Request-Id") {
				t.Errorf("429 without its request id: %v %s", r.header, r.raw)
			}
		default:
			t.Errorf("status %d: %s", r.status, r.raw)
		}
	}
	return created, limited
}

// rlStored counts what a user has stored of what a commit-turn writes.
func rlStored(e *env, where string, args ...any) [3]int {
	return [3]int{e.count("messages", where, args...), e.count("sessions", where, args...),
		e.count("idempotency_keys", where, args...)}
}

// Eight clients of one user race through two containers against a limit of 3 a minute:
// exactly 3 are served, 5 get 429 with Retry-After, and nothing of the 5 is stored (no
// message, no session, no idempotency record). Another user is unaffected.
func TestRateLimitPerUserAcrossContainers(t *testing.T) {
	t.Parallel()
	base, cs := rlContainers(t, 2, app.RateLimit{User: 3})
	u := base.newUser(rlTenant())
	tokens := make([]string, 8)
	for i := range tokens {
		tokens[i] = u.token
	}
	created, limited := rlTally(t, rlRace(t, cs, tokens), 20)
	if created != 3 || limited != 5 {
		t.Fatalf("%d served, %d limited; want 3 and 5", created, limited)
	}
	if got := rlStored(base, "user_id = $1", u.id); got != [3]int{3, 3, 3} {
		t.Errorf("stored (messages, sessions, idempotency records) %v; want 3 of each, none of the limited requests", got)
	}
	// Still limited, whatever the function, and still nothing written.
	r := cs[1].call(u.token, "user-state", `{"op": "set", "mode": "halted"}`, "Origin", rlOrigin)
	rlTally(t, []response{r}, 20)
	if r.status != http.StatusTooManyRequests || base.count("user_state", "user_id = $1", u.id) != 0 {
		t.Errorf("user-state after the limit: %d, %d rows", r.status, base.count("user_state", "user_id = $1", u.id))
	}
	// Another user, of the same tenant or none, has a limit of their own.
	for _, other := range []user{base.newUser(u.tenant), base.newUser("")} {
		body, headers := rlCommit(0)
		cs[0].call(other.token, "commit-turn", body, headers...).must(t, http.StatusCreated)
	}
}

// A tenant's limit caps its users together: nine requests of three users of one tenant, at
// once, against a tenant limit of 4: exactly 4 are served. Other tenants, and users without a
// tenant, are not counted against it.
func TestRateLimitPerTenant(t *testing.T) {
	t.Parallel()
	base, cs := rlContainers(t, 2, app.RateLimit{User: 100, Tenant: 4})
	tenant := rlTenant()
	var tokens []string
	for range 3 {
		u := base.newUser(tenant)
		tokens = append(tokens, u.token, u.token, u.token)
	}
	rs := rlRace(t, cs, tokens)
	created, limited := rlTally(t, rs, 15)
	if created != 4 || limited != 5 {
		t.Fatalf("%d served, %d limited; want 4 and 5", created, limited)
	}
	for _, r := range rs {
		if r.status == http.StatusTooManyRequests && !strings.Contains(str(r.body["detail"]), "tenant") {
			t.Errorf("a 429 of the tenant's limit does not say so: %s", r.raw)
		}
	}
	if got := rlStored(base, "tenant_id = $1", tenant); got != [3]int{4, 4, 4} {
		t.Errorf("stored for the tenant %v; want 4 of each", got)
	}
	for _, other := range []user{base.newUser(rlTenant()), base.newUser("")} {
		body, headers := rlCommit(0)
		cs[1].call(other.token, "commit-turn", body, headers...).must(t, http.StatusCreated)
	}
}

// A service caller acting for a user counts against that user (and the tenant it names): the
// limits are the user's, whoever relays the requests. A service call for no user is not
// limited.
func TestRateLimitServiceCallers(t *testing.T) {
	t.Parallel()
	base, cs := rlContainers(t, 1, app.RateLimit{User: 2, Tenant: 3})
	e := cs[0]
	svc := e.serviceToken()
	tenant := rlTenant()
	u := e.newUser(tenant)
	e.call(u.token, "user-state", `{"op": "set", "mode": "a"}`).must(t, http.StatusCreated)
	e.call(svc, "user-state", fmt.Sprintf(`{"op": "set", "mode": "b", "user_id": %q, "tenant_id": %q}`, u.id, tenant)).must(t, http.StatusOK)
	// u's third request, by u or by a service for u, is over the limit.
	r := e.call(svc, "user-state", fmt.Sprintf(`{"op": "set", "mode": "c", "user_id": %q, "tenant_id": %q}`, u.id, tenant))
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("a service acting for a user over the limit: %d %s", r.status, r.raw)
	}
	e.call(u.token, "user-state", `{"op": "set", "mode": "d"}`).must(t, http.StatusTooManyRequests)
	if got := e.call(svc, "user-state", fmt.Sprintf(`{"op": "get", "user_id": %q, "tenant_id": %q}`, u.id, "")); got.status != http.StatusNotFound {
		// The same user id without a tenant is another (tenant, user): not limited, and empty.
		t.Errorf("the user id in no tenant: %d %s", got.status, got.raw)
	}
	var mode string
	if err := func() error {
		conn := base.adminConn()
		defer conn.Close(context.Background())
		return conn.QueryRow(context.Background(), `select mode from agentmem.user_state where user_id = $1`, u.id).Scan(&mode)
	}(); err != nil || mode != "b" {
		t.Errorf("stored mode %q (%v); want b, the limited requests changed nothing", mode, err)
	}
	// The tenant's third request (another user, by the service) is served; its fourth is not.
	v := uuid.NewString()
	e.call(svc, "user-state", fmt.Sprintf(`{"op": "set", "mode": "x", "user_id": %q, "tenant_id": %q}`, v, tenant)).must(t, http.StatusCreated)
	r = e.call(svc, "user-state", fmt.Sprintf(`{"op": "get", "user_id": %q, "tenant_id": %q}`, v, tenant))
	if r.status != http.StatusTooManyRequests || !strings.Contains(str(r.body["detail"]), "tenant") {
		t.Errorf("the tenant's fourth request: %d %s", r.status, r.raw)
	}
	// Calls for no user: the sweep, and a body the function refuses, are not limited.
	for range 4 {
		e.call(svc, "sweep-expired", `{"dry_run": true}`).must(t, http.StatusOK)
		e.call(svc, "user-state", `{"op": "get"}`).must(t, http.StatusBadRequest)
	}
}

// When the limiter's database cannot be reached the request answers 503 unavailable with
// Retry-After and CORS, and runs nothing: it does not go on unlimited.
func TestRateLimitUnavailableFailsClosed(t *testing.T) {
	t.Parallel()
	dead := storetest.OpenURL(t, "postgresql://postgres:postgres@127.0.0.1:1/postgres?connect_timeout=1")
	base, cs := rlContainers(t, 1, app.RateLimit{User: 100, Limiter: dead})
	u := base.newUser("")
	body, headers := rlCommit(0)
	r := cs[0].call(u.token, "commit-turn", body, headers...)
	wantProblem(t, r, http.StatusServiceUnavailable, "unavailable")
	if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	if r.header.Get("Access-Control-Allow-Origin") != rlOrigin {
		t.Errorf("503 without CORS: %v", r.header)
	}
	if got := rlStored(base, "user_id = $1", u.id); got != [3]int{} {
		t.Errorf("stored %v; want nothing", got)
	}
}

// Without limits (the default) nothing is counted: no counter row, no 429.
func TestRateLimitOffByDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser(rlTenant())
	for range 5 {
		e.call(u.token, "user-state", `{"op": "get"}`).must(t, http.StatusNotFound)
	}
	if n := e.count("request_rates", "tenant_id = $1", u.tenant); n != 0 {
		t.Errorf("%d counters without a limit", n)
	}
}

// BenchmarkRateLimit measures what the limit adds to a request: the same small read
// (user-state get) through the whole handler, without limits and with limits that never
// refuse it.
func BenchmarkRateLimit(b *testing.B) {
	db := testdb.New(b)
	for _, tc := range []struct {
		name string
		rl   app.RateLimit
	}{
		{"off", app.RateLimit{}},
		{"user", app.RateLimit{User: 1_000_000}},
		{"user+tenant", app.RateLimit{User: 1_000_000, Tenant: 1_000_000}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := envConfig{maxConns: 4, app: app.Config{RateLimit: tc.rl}, log: discardLog}
			_, srv := c.serve(b, c.openStore(b, db), io.Discard)
			h := srv.Mux()
			// A user per run, so the counters never refuse: 1,000,000 a minute is one every 60 µs.
			tok, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleUser, Subject: uuid.NewString(),
				TenantID: rlTenant(), TTL: time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			benchUserStateGet(b, h, tok)
		})
	}
}
