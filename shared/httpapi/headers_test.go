package httpapi_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/shared/httpapi"
)

// Headers over the limit answer 431 request_header_fields_too_large as problem+json, with the
// request id and CORS headers, from the local server (not net/http's bare text 431) and from
// the Lambda entry point; headers under it reach the function.
func TestLargeHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.NewHTTPServer(l.Addr().String(), e.h)
	go srv.Serve(l) //nolint:errcheck
	t.Cleanup(func() { srv.Close() })
	client := &http.Client{Timeout: 30 * time.Second}

	post := func(t *testing.T, pad int) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, "http://"+l.Addr().String()+"/v1/recall", strings.NewReader(`{"query":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+u.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "https://app.example.com")
		req.Header.Set("X-Request-Id", "large-headers-1")
		req.Header.Set("X-Pad", strings.Repeat("p", pad))
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, body
	}
	for _, tt := range []struct {
		name   string
		pad    int
		status int
	}{
		{"under the limit", httpapi.MaxHeaderBytes - 1024, http.StatusOK},
		{"just over the limit", httpapi.MaxHeaderBytes, http.StatusRequestHeaderFieldsTooLarge},
		{"1 MiB", 1 << 20, http.StatusRequestHeaderFieldsTooLarge},
		{"3 MiB", 3 << 20, http.StatusRequestHeaderFieldsTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, body := post(t, tt.pad)
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.200s", res.StatusCode, tt.status, body)
			}
			if got := res.Header.Get("X-Request-Id"); got != "large-headers-1" {
				t.Errorf("X-Request-Id %q", got)
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != "https://app.example.com" {
				t.Errorf("Access-Control-Allow-Origin %q", got)
			}
			if tt.status == http.StatusOK {
				return
			}
			var p map[string]any
			if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q", ct)
			}
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
			if p["code"] != "request_header_fields_too_large" || p["status"] != 431.0 || p["request_id"] != "large-headers-1" {
				t.Errorf("problem %s", body)
			}
		})
	}

	t.Run("lambda", func(t *testing.T) {
		var ev map[string]any
		if err := json.Unmarshal(isoHTTPEvent(t, "lambda-function-url.json", "recall", u.token, map[string]any{"query": "x"}, false), &ev); err != nil {
			t.Fatal(err)
		}
		obj(ev["headers"])["x-pad"] = strings.Repeat("p", 1<<20)
		raw, _ := json.Marshal(ev)
		_, body := isoInvoke(t, e, "recall", raw, http.StatusRequestHeaderFieldsTooLarge)
		if body["code"] != "request_header_fields_too_large" {
			t.Errorf("problem %v", body)
		}
	})
}
