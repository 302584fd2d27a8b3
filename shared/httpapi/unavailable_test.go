package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/memory"
)

// unreachableServer is a server over a database nobody listens on. store.Open does not
// connect: the first query finds nobody on port 1.
func unreachableServer(t *testing.T, origin string) *httpapi.Server {
	t.Helper()
	return buildEnv(t, envConfig{url: "postgresql://postgres:postgres@127.0.0.1:1/postgres?connect_timeout=1",
		maxConns: memory.DefaultMaxConns, log: discardLog,
		http: httpapi.Config{AllowedOrigins: []string{origin}}}).srv
}

// A database nobody listens on answers 503 unavailable, with Retry-After, the request id and
// CORS, and without the driver's message: the client is told to retry, not shown a 500.
func TestDatabaseUnreachableIsUnavailable(t *testing.T) {
	t.Parallel()
	const origin = "https://app.example.com"
	h := unreachableServer(t, origin).Mux()
	id := uuid.New()
	tok, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleUser, Subject: id.String()})
	if err != nil {
		t.Fatal(err)
	}
	sid := uuid.NewString()
	for _, tc := range []struct {
		fn   string
		body string
	}{
		{"commit-turn", `{"session_id": "` + sid + `", "messages": [{"role": "user", "content": "hello"}]}`},
		{"get-context", `{"session_id": "` + sid + `", "query": "hello"}`},
	} {
		t.Run(tc.fn, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/v1/"+tc.fn, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Origin", origin)
			req.Header.Set("X-Request-Id", "unavailable-"+tc.fn)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			res := rec.Result()

			if res.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("status %d, want 503: %s", res.StatusCode, rec.Body)
			}
			if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q", ct)
			}
			// Nobody listens: the connection failed, so the wait is a restart's, not a moment's.
			if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra != 2 {
				t.Errorf("Retry-After %q, want 2", res.Header.Get("Retry-After"))
			}
			if got := res.Header.Get("X-Request-Id"); got != "unavailable-"+tc.fn {
				t.Errorf("X-Request-Id %q", got)
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != origin {
				t.Errorf("Access-Control-Allow-Origin %q", got)
			}
			var p map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if p["code"] != "unavailable" || p["status"] != float64(503) || p["request_id"] != "unavailable-"+tc.fn {
				t.Errorf("problem %v", p)
			}
			for _, leak := range []string{"127.0.0.1", "dial", "connect", "hello"} {
				if strings.Contains(rec.Body.String(), leak) {
					t.Errorf("the body shows %q: %s", leak, rec.Body)
				}
			}
		})
	}
}
