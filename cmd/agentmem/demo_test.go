package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/config"
)

// demoTestSecret is the only secret the token endpoint signs with: the public local one.
const demoTestSecret = config.LocalJWTSecret

// otherSecret stands for a hosted project's secret, which the endpoint never signs with.
const otherSecret = "a-hosted-projects-secret-with-at-least-32-characters"

func TestDemoTokensEnabled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr, secret string
		want         bool
	}{
		{"127.0.0.1:9000", demoTestSecret, true},
		{"localhost:9000", demoTestSecret, true},
		{"[::1]:9000", demoTestSecret, true},
		{"127.0.0.1:9000", "", false},
		{"127.0.0.1:9000", otherSecret, false},
		{"LOCALHOST:9000", demoTestSecret, true},
		{"0.0.0.0:9000", demoTestSecret, false},
		{":9000", demoTestSecret, false},
		{"192.168.1.5:9000", demoTestSecret, false},
		{"example.com:9000", demoTestSecret, false},
		{"not an address", demoTestSecret, false},
	}
	for _, tt := range tests {
		t.Run(tt.addr+"/"+tt.secret, func(t *testing.T) {
			if got := demoTokensEnabled(tt.addr, tt.secret); got != tt.want {
				t.Errorf("demoTokensEnabled(%q) = %v, want %v", tt.addr, got, tt.want)
			}
		})
	}
}

func demoHandler(addr, secret string) http.Handler {
	return demoHandlerIn(addr, secret, false)
}

func demoHandlerIn(addr, secret string, inLambda bool) http.Handler {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-From", "api")
		w.WriteHeader(http.StatusTeapot)
	})
	return withDemo(demoParams{API: api, Addr: addr, JWTSecret: secret, Tokens: true, InLambda: inLambda, Log: slog.New(slog.DiscardHandler)})
}

func serveDemo(h http.Handler, method, path, remote, body string) *httptest.ResponseRecorder {
	return serveDemoAt(h, method, "http://127.0.0.1:9000"+path, remote, body, nil)
}

// serveDemoAt sends a request to url (whose host is the Host header) with the given headers.
func serveDemoAt(h http.Handler, method, url, remote, body string, header http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, url, strings.NewReader(body))
	for k, v := range header {
		r.Header[k] = v
	}
	r.RemoteAddr = remote
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestDemoToken(t *testing.T) {
	t.Parallel()
	h := demoHandler("127.0.0.1:9000", demoTestSecret)
	v, err := auth.NewVerifier(context.Background(), auth.Config{JWTSecret: demoTestSecret})
	if err != nil {
		t.Fatal(err)
	}
	const user = "0b4f8f0e-4a59-4c2e-9d7a-1d2a3b4c5d6e"
	tests := []struct {
		name, remote, body string
		status             int
		sub                string // "" with 200: any new UUID
	}{
		{"named user", "127.0.0.1:5555", `{"user_id": "` + user + `"}`, 200, user},
		{"new user", "127.0.0.1:5555", `{}`, 200, ""},
		{"empty body", "[::1]:5555", ``, 200, ""},
		{"not a uuid", "127.0.0.1:5555", `{"user_id": "ada"}`, 400, ""},
		{"nil uuid", "127.0.0.1:5555", `{"user_id": "00000000-0000-0000-0000-000000000000"}`, 400, ""},
		{"unknown field", "127.0.0.1:5555", `{"role": "service_role"}`, 400, ""},
		{"not json", "127.0.0.1:5555", `user`, 400, ""},
		{"from another machine", "10.0.0.7:5555", `{}`, 403, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serveDemo(h, http.MethodPost, "/demo/token", tt.remote, tt.body)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.status != 200 {
				var p struct{ Code, Detail string }
				if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
					t.Errorf("Content-Type %q", ct)
				}
				if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Code == "" || p.Detail == "" {
					t.Errorf("problem body %s (%v)", w.Body, err)
				}
				return
			}
			var got demoTokenResponse
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			p, err := v.Verify(context.Background(), got.AccessToken)
			if err != nil {
				t.Fatalf("minted token does not verify: %v", err)
			}
			if p.Role != auth.RoleUser || p.UserID != got.User.ID {
				t.Errorf("principal %+v for user %s", p, got.User.ID)
			}
			if tt.sub != "" && got.User.ID != tt.sub {
				t.Errorf("user %s, want %s", got.User.ID, tt.sub)
			}
			if got.ExpiresIn != 3600 || got.TokenType != "bearer" {
				t.Errorf("answer %+v", got)
			}
		})
	}
}

// TestDemoTokenRefusesOtherHostsAndOrigins: a loopback peer is not enough. A DNS-rebinding
// page (its own name resolving to 127.0.0.1), a tunnel or a port forwarder names a host of its
// own, and a page of another site sends its origin.
func TestDemoTokenRefusesOtherHostsAndOrigins(t *testing.T) {
	t.Parallel()
	h := demoHandler("127.0.0.1:9000", demoTestSecret)
	origin := func(o ...string) http.Header { return http.Header{"Origin": o} }
	tests := []struct {
		name, url string
		header    http.Header
		status    int
	}{
		{"rebinding host", "http://rebind.attacker.example:9000/demo/token", nil, 403},
		{"rebinding host without port", "http://rebind.attacker.example/demo/token", nil, 403},
		{"tunnel host", "http://abc123.tunnel.example/demo/token", nil, 403},
		{"private address as host", "http://192.168.1.5:9000/demo/token", nil, 403},
		{"localhost subdomain trick", "http://localhost.attacker.example:9000/demo/token", nil, 403},
		{"cross-origin page", "http://127.0.0.1:9000/demo/token", origin("https://attacker.example"), 403},
		{"other loopback port", "http://127.0.0.1:9000/demo/token", origin("http://127.0.0.1:3000"), 403},
		{"opaque origin", "http://127.0.0.1:9000/demo/token", origin("null"), 403},
		{"two origins", "http://127.0.0.1:9000/demo/token", origin("http://127.0.0.1:9000", "http://127.0.0.1:9000"), 403},
		{"same origin", "http://127.0.0.1:9000/demo/token", origin("http://127.0.0.1:9000"), 200},
		{"localhost, same origin", "http://localhost:9000/demo/token", origin("http://localhost:9000"), 200},
		{"ipv6 loopback", "http://[::1]:9000/demo/token", nil, 200},
		{"no origin (curl)", "http://127.0.0.1:9000/demo/token", nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serveDemoAt(h, http.MethodPost, tt.url, "127.0.0.1:5555", `{}`, tt.header)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.status == 403 {
				if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
					t.Errorf("Content-Type %q", ct)
				}
				if strings.Contains(w.Body.String(), "access_token") {
					t.Errorf("a refusal carries a token: %s", w.Body)
				}
			}
		})
	}
}

func TestDemoTokenDisabled(t *testing.T) {
	t.Parallel()
	notEnabled := withDemo(demoParams{
		API: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-From", "api")
			w.WriteHeader(http.StatusTeapot)
		}),
		Addr: "127.0.0.1:9000", JWTSecret: demoTestSecret, Log: slog.New(slog.DiscardHandler),
	})
	for _, h := range []http.Handler{
		notEnabled,
		demoHandler("0.0.0.0:9000", demoTestSecret),
		demoHandler("127.0.0.1:9000", ""),
		demoHandler("127.0.0.1:9000", otherSecret),
		demoHandlerIn("127.0.0.1:9000", demoTestSecret, true),
	} {
		w := serveDemo(h, http.MethodPost, "/demo/token", "127.0.0.1:5555", `{}`)
		if w.Code != http.StatusTeapot || w.Header().Get("X-From") != "api" {
			t.Errorf("POST /demo/token answered %d (X-From %q), want the API's own answer", w.Code, w.Header().Get("X-From"))
		}
	}
}

func TestDemoPage(t *testing.T) {
	t.Parallel()
	h := demoHandler("0.0.0.0:9000", "")
	w := serveDemo(h, http.MethodGet, "/demo/", "10.0.0.7:5555", "")
	if w.Code != 200 || !strings.Contains(w.Header().Get("Content-Type"), "text/html") || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("GET /demo/: %d %v", w.Code, w.Header())
	}
	body, _ := io.ReadAll(w.Body)
	if !strings.Contains(string(body), "agentmem") {
		t.Errorf("page does not name agentmem: %.200s", body)
	}
	w = serveDemo(h, http.MethodGet, "/demo/agentmem-client.js", "10.0.0.7:5555", "")
	if w.Code != 200 || !strings.Contains(w.Header().Get("Content-Type"), "javascript") {
		t.Errorf("GET bundle: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	if w := serveDemo(h, http.MethodGet, "/demo", "127.0.0.1:5555", ""); w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "/demo/" {
		t.Errorf("GET /demo: %d %q", w.Code, w.Header().Get("Location"))
	}
	if w := serveDemo(h, http.MethodPost, "/v1/recall", "127.0.0.1:5555", `{}`); w.Header().Get("X-From") != "api" {
		t.Errorf("POST /v1/recall did not reach the API")
	}
}
