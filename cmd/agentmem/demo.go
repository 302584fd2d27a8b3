package main

import (
	"embed"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/config"
)

// demoFiles is the demo chat page (cmd/agentmem/demo): plain HTML and ES modules importing the
// committed bundle of clients/typescript, served as they are.
//
//go:embed demo
var demoFiles embed.FS

// demoTokenTTL is the lifetime of a token minted for the demo page.
const demoTokenTTL = time.Hour

// demoParams configures withDemo.
type demoParams struct {
	// API serves everything but /demo.
	API http.Handler
	// Addr is where the server listens: POST /demo/token exists only on a loopback address.
	Addr string
	// JWTSecret signs the demo's tokens. POST /demo/token exists only when it is the public
	// local default (config.LocalJWTSecret): a token the endpoint mints must never be worth
	// more than one anybody can sign with that published secret. With any other secret (a
	// hosted project's), JWKS or auth-server mode, the page takes a pasted token.
	JWTSecret string
	// Tokens (DEMO_TOKENS=true) enables POST /demo/token; `make dev` and the browser test set
	// it. Off by default, so that no server mints tokens unless asked to.
	Tokens bool
	// InLambda is true inside AWS Lambda (AWS_LAMBDA_FUNCTION_NAME set), where no token is
	// ever minted, whatever the rest says.
	InLambda bool
	Log      *slog.Logger
}

// withDemo adds the demo page at /demo/ to the local server and, on a loopback address with an
// HS256 secret, POST /demo/token, which mints a user token for the page's "sign in". Only
// `agentmem serve` (the local server) calls it; no Lambda function serves either.
func withDemo(p demoParams) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", p.API)
	page, err := fs.Sub(demoFiles, "demo")
	if err != nil {
		panic(err) // the embedded directory is always there
	}
	files := http.StripPrefix("/demo/", http.FileServerFS(page))
	mux.Handle("GET /demo/", noStore(files))
	mux.Handle("HEAD /demo/", noStore(files))
	mux.HandleFunc("GET /demo", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/demo/", http.StatusMovedPermanently)
	})
	if !p.InLambda && p.Tokens && demoTokensEnabled(p.Addr, p.JWTSecret) {
		mux.HandleFunc("POST /demo/token", demoToken(p.JWTSecret, p.Log))
	}
	return mux
}

// noStore keeps browsers from serving a stale page or bundle after a change.
func noStore(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// demoTokensEnabled tells whether the token endpoint may exist: the public local secret to
// sign with and a listening address that only this machine can reach.
func demoTokensEnabled(addr, secret string) bool {
	if secret != config.LocalJWTSecret {
		return false
	}
	return config.LoopbackAddr(addr)
}

// demoTokenRequest is the body of POST /demo/token.
type demoTokenRequest struct {
	// UserID is the user to sign in as (a UUID); empty: a new user.
	UserID string `json:"user_id"`
}

// demoTokenResponse has the fields of a Supabase session that the page uses.
type demoTokenResponse struct {
	AccessToken string   `json:"access_token"`
	TokenType   string   `json:"token_type"`
	ExpiresIn   int      `json:"expires_in"`
	ExpiresAt   int64    `json:"expires_at"`
	User        demoUser `json:"user"`
}

type demoUser struct {
	ID string `json:"id"`
}

// demoToken mints a user access token for requests from this machine.
func demoToken(secret string, log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !fromLoopback(r) {
			writeDemoProblem(w, http.StatusForbidden, "forbidden", "tokens are minted for this machine only")
			return
		}
		// A loopback peer is not enough: a page on another site can reach this server through
		// the browser (DNS rebinding gives its name a loopback address) or a tunnel can forward
		// to it. Such a request names a host of its own, or comes from another origin.
		if !loopbackRequestHost(r.Host) {
			writeDemoProblem(w, http.StatusForbidden, "forbidden", "tokens are minted only for requests to localhost or a loopback address")
			return
		}
		if !sameOrigin(r) {
			writeDemoProblem(w, http.StatusForbidden, "forbidden", "tokens are minted only for the demo page's own origin")
			return
		}
		var req demoTokenRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil && !errors.Is(err, io.EOF) {
			writeDemoProblem(w, http.StatusBadRequest, "invalid_request", "the body must be {\"user_id\": \"<uuid>\"} or empty")
			return
		}
		sub := strings.TrimSpace(req.UserID)
		if sub == "" {
			sub = uuid.NewString()
		} else if id, err := uuid.Parse(sub); err != nil || id == uuid.Nil || len(sub) != 36 {
			writeDemoProblem(w, http.StatusBadRequest, "invalid_request", "user_id must be a UUID")
			return
		}
		tok, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleUser, Subject: sub, TTL: demoTokenTTL})
		if err != nil {
			log.ErrorContext(r.Context(), "demo token", "error", err)
			writeDemoProblem(w, http.StatusInternalServerError, "internal", "could not mint a token")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(demoTokenResponse{ //nolint:errcheck // the client went away
			AccessToken: tok,
			TokenType:   "bearer",
			ExpiresIn:   int(demoTokenTTL / time.Second),
			ExpiresAt:   time.Now().Add(demoTokenTTL).Unix(),
			User:        demoUser{ID: sub},
		})
	}
}

// fromLoopback tells whether the request's peer is this machine.
func fromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackRequestHost tells whether a request's Host header names localhost or a loopback
// literal (with or without a port).
func loopbackRequestHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return host != "" && config.LoopbackHost(host)
}

// sameOrigin tells whether a request comes from the server's own origin: without an Origin
// header (curl, a script on this machine) or with one that is exactly http://<Host>. A
// browser sends Origin on every cross-origin request and on same-origin POSTs.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Values("Origin")
	switch len(origin) {
	case 0:
		return true
	case 1:
		return origin[0] == "http://"+r.Host
	default:
		return false
	}
}

func writeDemoProblem(w http.ResponseWriter, status int, code, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{ //nolint:errcheck // the client went away
		"type": "about:blank", "title": http.StatusText(status), "status": status, "code": code, "detail": detail,
	})
}
