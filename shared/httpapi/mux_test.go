package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const muxOrigin = "https://app.example.com"

// muxDo sends one request from a browser origin to h, with the request id rid when it is not
// empty, and checks what every answer carries, each exactly once: the request id and CORS.
func muxDo(t *testing.T, h http.Handler, method, target, token, rid string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(`{"query": "mux"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", muxOrigin)
	if method == http.MethodOptions {
		req.Header.Set("Access-Control-Request-Method", "POST")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rid != "" {
		req.Header.Set("X-Request-Id", rid)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	ids := res.Header.Values("X-Request-Id")
	if len(ids) != 1 || ids[0] == "" || (rid != "" && ids[0] != rid) {
		t.Errorf("%s %s: X-Request-Id %q, want %q once", method, target, ids, rid)
	}
	if got := res.Header.Values("Access-Control-Allow-Origin"); !slices.Equal(got, []string{muxOrigin}) {
		t.Errorf("%s %s: Access-Control-Allow-Origin %q", method, target, got)
	}
	if got := res.Header.Values("Access-Control-Expose-Headers"); len(got) != 1 {
		t.Errorf("%s %s: Access-Control-Expose-Headers %q", method, target, got)
	}
	if got := res.Header.Values("Vary"); !slices.Equal(got, []string{"Origin"}) {
		t.Errorf("%s %s: Vary %q, want Origin once", method, target, got)
	}
	return res
}

// Every answer of the local server carries the request id and the CORS headers once: the
// functions', the health check's, a 404's and the redirects of unclean paths.
func TestMuxStampsEveryAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	for i, tc := range []struct {
		method, target, token string
		status                int
		location              string
	}{
		{http.MethodPost, "/v1/recall", u.token, http.StatusOK, ""},
		{http.MethodPost, "/v1/recall", "", http.StatusUnauthorized, ""},
		{http.MethodOptions, "/v1/recall", "", http.StatusNoContent, ""},
		{http.MethodGet, "/v1/recall", u.token, http.StatusMethodNotAllowed, ""},
		{http.MethodGet, "/healthz", "", http.StatusOK, ""},
		{http.MethodPost, "/v1/no-such-function", u.token, http.StatusNotFound, ""},
		{http.MethodPost, "//v1/recall", u.token, 0, "/v1/recall"},
		{http.MethodPost, "/v1/../v1/recall", u.token, 0, "/v1/recall"},
		{http.MethodPost, "/v1/./recall", u.token, 0, "/v1/recall"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			for _, rid := range []string{"mux-" + strconv.Itoa(i), ""} {
				res := muxDo(t, e.h, tc.method, tc.target, tc.token, rid)
				if tc.location != "" {
					if res.StatusCode < 300 || res.StatusCode > 399 || res.Header.Get("Location") != tc.location {
						t.Errorf("%s %s: %d to %q, want a redirect to %s", tc.method, tc.target, res.StatusCode, res.Header.Get("Location"), tc.location)
					}
				} else if res.StatusCode != tc.status {
					t.Errorf("%s %s: status %d, want %d", tc.method, tc.target, res.StatusCode, tc.status)
				}
			}
		})
	}
}

// A failed health check answers like every other failure: a 503 problem with Retry-After and
// the request id.
func TestHealthzUnavailable(t *testing.T) {
	t.Parallel()
	h := unreachableServer(t, muxOrigin).Mux()
	res := muxDo(t, h, http.MethodGet, "/healthz", "", "health-1")
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q", ct)
	}
	if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q", res.Header.Get("Retry-After"))
	}
	var p map[string]any
	if err := json.NewDecoder(res.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	if p["code"] != "unavailable" || p["status"] != float64(503) || p["request_id"] != "health-1" {
		t.Errorf("problem %v", p)
	}
}
