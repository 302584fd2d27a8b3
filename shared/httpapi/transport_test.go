package httpapi_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/auth"
)

var isoFunctions = []string{"active-session", "commit-turn", "get-context", "recall", "sweep-expired"}

// isoJWT signs header and claims by hand with HS256 and key, or leaves the signature empty
// when key is nil.
func isoJWT(t *testing.T, header, claims map[string]any, key []byte) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signing := enc(header) + "." + enc(claims)
	if key == nil {
		return signing + "."
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func isoUserClaims(sub string) map[string]any {
	return map[string]any{"sub": sub, "role": auth.RoleUser, "aud": "authenticated",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
}

func isoWithout(m map[string]any, key string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// isoBadTokens are Authorization header values that must all answer 401.
func isoBadTokens(t *testing.T) map[string]string {
	sub := uuid.NewString()
	hs := map[string]any{"alg": "HS256", "typ": "JWT"}
	mint := func(c auth.MintClaims) string {
		tok, err := auth.MintHS256(secret, c)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + tok
	}
	other, err := auth.MintHS256("another-secret-that-is-also-32-characters-long", auth.MintClaims{Role: auth.RoleUser, Subject: sub})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"missing header":     "",
		"basic scheme":       "Basic dXNlcjpwYXNzd29yZA==",
		"bearer without one": "Bearer ",
		"not a jwt":          "Bearer not-a-jwt",
		"expired":            mint(auth.MintClaims{Role: auth.RoleUser, Subject: sub, TTL: -time.Minute}),
		"expired service":    mint(auth.MintClaims{Role: auth.RoleService, TTL: -time.Minute}),
		"wrong signature":    "Bearer " + other,
		"alg none":           "Bearer " + isoJWT(t, map[string]any{"alg": "none", "typ": "JWT"}, isoUserClaims(sub), nil),
		"alg none service":   "Bearer " + isoJWT(t, map[string]any{"alg": "none"}, map[string]any{"role": auth.RoleService, "exp": time.Now().Add(time.Hour).Unix()}, nil),
		"wrong audience":     mint(auth.MintClaims{Role: auth.RoleUser, Subject: sub, Audience: "somebody-else"}),
		"anon role":          mint(auth.MintClaims{Role: "anon", Subject: sub, Audience: "authenticated"}),
		"sub not printable":  mint(auth.MintClaims{Role: auth.RoleUser, Subject: "user\x01"}),
		"no exp":             "Bearer " + isoJWT(t, hs, isoWithout(isoUserClaims(sub), "exp"), []byte(secret)),
		"HS512":              "Bearer " + isoJWT(t, map[string]any{"alg": "HS512"}, isoUserClaims(sub), []byte(secret)),
	}
}

// Every function answers a bad token with 401 unauthenticated as problem+json, before it
// looks at the method, the body or the role.
func TestTransportUnauthenticated(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	// The hand-made tokens are right apart from what each case breaks.
	good := "Bearer " + isoJWT(t, map[string]any{"alg": "HS256", "typ": "JWT"}, isoUserClaims(uuid.NewString()), []byte(secret))
	e.call("", "active-session", nil, "Authorization", good).must(t, http.StatusCreated)

	big := `{"agent":"` + strings.Repeat("a", 2<<20) + `"}`
	bodies := []struct {
		name    string
		body    string
		headers []string
	}{
		{"valid body", `{}`, nil},
		{"malformed body", `{"session_id":`, nil},
		{"unknown field", `{"nope":1}`, nil},
		{"2 MiB body", big, nil},
		{"text body", "hello", []string{"Content-Type", "text/plain"}},
		{"NUL", `{"agent":"a\u0000"}`, nil},
	}
	for name, header := range isoBadTokens(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := *e
			e.t = t
			for _, fn := range isoFunctions {
				for _, b := range bodies {
					t.Run(b.name, func(t *testing.T) {
						r := e.call("", fn, b.body, append([]string{"Authorization", header}, b.headers...)...)
						if r.status != http.StatusUnauthorized || r.problemCode() != "unauthenticated" {
							t.Fatalf("%s, %s: %d %s", fn, b.name, r.status, r.raw)
						}
						if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
							t.Errorf("%s: WWW-Authenticate %q", fn, r.header.Get("WWW-Authenticate"))
						}
						if tok := strings.TrimPrefix(header, "Bearer "); len(tok) > 8 && strings.Contains(string(r.raw), tok) {
							t.Errorf("%s: the problem body quotes the token", fn)
						}
					})
				}
				for _, method := range []string{http.MethodGet, http.MethodDelete} {
					req := httptest.NewRequest(method, "/v1/"+fn, nil)
					if header != "" {
						req.Header.Set("Authorization", header)
					}
					if r := e.do(req); r.status != http.StatusUnauthorized {
						t.Errorf("%s %s: %d, want 401 before the method is checked", method, fn, r.status)
					}
				}
			}
		})
	}
}

// A user token may not sweep: 403, whatever the body.
func TestTransportUserCannotSweep(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	for _, body := range []any{nil, `{}`, `{"dry_run":true}`, `{"batch_size":0}`, `{"bad":1}`} {
		r := e.call(u.token, "sweep-expired", body).must(t, http.StatusForbidden)
		if r.problemCode() != "forbidden" {
			t.Errorf("body %v: code %q", body, r.problemCode())
		}
	}
	tenant := e.newUser("acme")
	e.call(tenant.token, "sweep-expired", `{"dry_run":true}`).must(t, http.StatusForbidden)
	e.call(e.serviceToken(), "sweep-expired", `{"dry_run":true}`).must(t, http.StatusOK)
}

func TestTransportMethodNotAllowed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	for _, fn := range isoFunctions {
		for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodHead} {
			req := httptest.NewRequest(method, "/v1/"+fn, strings.NewReader(`{}`))
			req.Header.Set("Authorization", "Bearer "+u.token)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, req)
			if rec.Code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d, want 405", method, fn, rec.Code)
			}
			allow := rec.Header().Get("Allow")
			if !strings.Contains(allow, "POST") || !strings.Contains(allow, "OPTIONS") {
				t.Errorf("%s %s: Allow %q", method, fn, allow)
			}
			if method != http.MethodHead {
				var p map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p["code"] != "method_not_allowed" {
					t.Errorf("%s %s: body %s", method, fn, rec.Body.Bytes())
				}
			}
		}
	}
	if n := e.count("sessions", "user_id = $1", u.id); n != 0 {
		t.Errorf("a refused method created %d sessions", n)
	}
}

func isoPreflight(e *env, origin string) response {
	req := httptest.NewRequest(http.MethodOptions, "/v1/commit-turn", nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,idempotency-key,x-request-id")
	return e.do(req)
}

func isoHasTokens(list string, want ...string) bool {
	have := map[string]bool{}
	for _, x := range strings.Split(list, ",") {
		have[strings.ToLower(strings.TrimSpace(x))] = true
	}
	for _, w := range want {
		if !have[strings.ToLower(w)] {
			return false
		}
	}
	return true
}

func TestTransportCORS(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	const allowed = "https://app.example.com"

	r := isoPreflight(e, allowed)
	if r.status != http.StatusNoContent {
		t.Fatalf("preflight: %d %s", r.status, r.raw)
	}
	if got := r.header.Get("Access-Control-Allow-Origin"); got != allowed {
		t.Errorf("Access-Control-Allow-Origin = %q", got)
	}
	if got := r.header.Get("Access-Control-Allow-Methods"); !isoHasTokens(got, "POST") {
		t.Errorf("Access-Control-Allow-Methods = %q", got)
	}
	if got := r.header.Get("Access-Control-Allow-Headers"); !isoHasTokens(got, "Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id", "Agentmem-Position") {
		t.Errorf("Access-Control-Allow-Headers = %q", got)
	}
	if !isoHasTokens(r.header.Get("Vary"), "Origin") {
		t.Errorf("Vary = %q", r.header.Get("Vary"))
	}

	for _, origin := range []string{"https://evil.example.com", "https://app.example.com.evil.com", "http://app.example.com", "null"} {
		r := isoPreflight(e, origin)
		for _, h := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Headers", "Access-Control-Allow-Methods"} {
			if got := r.header.Get(h); got != "" {
				t.Errorf("preflight from %s: %s = %q", origin, h, got)
			}
		}
		r = e.call(e.newUser("").token, "active-session", nil, "Origin", origin)
		if got := r.header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("answer to %s: Access-Control-Allow-Origin = %q", origin, got)
		}
	}

	// On answers, errors included, for the allowed origin.
	u := e.newUser("")
	answers := map[string]response{
		"201": e.call(u.token, "active-session", nil, "Origin", allowed).must(t, http.StatusCreated),
		"400": e.call(u.token, "recall", `{}`, "Origin", allowed).must(t, http.StatusBadRequest),
		"401": e.call("", "recall", `{}`, "Origin", allowed).must(t, http.StatusUnauthorized),
		"403": e.call(u.token, "sweep-expired", `{}`, "Origin", allowed).must(t, http.StatusForbidden),
		"413": e.call(u.token, "recall", strings.Repeat(" ", 2<<20), "Origin", allowed).must(t, http.StatusRequestEntityTooLarge),
	}
	for status, r := range answers {
		if got := r.header.Get("Access-Control-Allow-Origin"); got != allowed {
			t.Errorf("%s: Access-Control-Allow-Origin = %q", status, got)
		}
		if got := r.header.Get("Access-Control-Expose-Headers"); !isoHasTokens(got, "X-Request-Id", "Agentmem-Position") {
			t.Errorf("%s: Access-Control-Expose-Headers = %q", status, got)
		}
	}
	// Without an Origin there is nothing to say.
	if got := e.call(u.token, "active-session", nil).header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("answer without Origin: Access-Control-Allow-Origin = %q", got)
	}
}

// Without configured origins every origin may call, as locally.
func TestTransportCORSDefaultAnyOrigin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.h = buildEnv(t, envConfig{reuse: e, log: discardLog}).h
	r := isoPreflight(e, "http://localhost:5173")
	if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "*" ||
		!isoHasTokens(r.header.Get("Access-Control-Allow-Headers"), "Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id") {
		t.Errorf("preflight: %d %v", r.status, r.header)
	}
	r = e.call("", "recall", `{}`, "Origin", "https://anywhere.example").must(t, http.StatusUnauthorized)
	if r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("401: Access-Control-Allow-Origin %q", r.header.Get("Access-Control-Allow-Origin"))
	}
}

func TestTransportRequestID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	r := e.call(u.token, "active-session", nil, "X-Request-Id", "req-iso-42").must(t, http.StatusCreated)
	if got := r.header.Get("X-Request-Id"); got != "req-iso-42" {
		t.Errorf("X-Request-Id = %q, want it echoed", got)
	}
	r = e.call("", "recall", `{}`, "X-Request-Id", "req-iso-43").must(t, http.StatusUnauthorized)
	if r.header.Get("X-Request-Id") != "req-iso-43" || r.body["request_id"] != "req-iso-43" {
		t.Errorf("401: header %q, body request_id %v", r.header.Get("X-Request-Id"), r.body["request_id"])
	}
	seen := map[string]bool{}
	for _, sent := range []string{"", "", strings.Repeat("x", 129), "bad\u00e9id"} {
		r := e.call(u.token, "get-context", map[string]any{"session_id": uuid.NewString()}, "X-Request-Id", sent).must(t, http.StatusOK)
		got := r.header.Get("X-Request-Id")
		if got == "" || got == sent || seen[got] {
			t.Errorf("sent %q, got X-Request-Id %q (seen before: %v)", sent, got, seen[got])
		}
		seen[got] = true
	}
	r = isoPreflight(e, "https://app.example.com")
	if r.header.Get("X-Request-Id") == "" {
		t.Error("preflight without X-Request-Id")
	}
}

// isoValidTurn is a commit-turn body with every optional part, as JSON text.
// isoValidTurnWith is isoValidTurn(session) with its first old replaced by new (which it must hold).
func isoValidTurnWith(t *testing.T, session uuid.UUID, old, new string) string {
	t.Helper()
	valid := isoValidTurn(session)
	if !strings.Contains(valid, old) {
		t.Fatalf("valid body lacks %q", old)
	}
	return strings.Replace(valid, old, new, 1)
}

func isoValidTurn(session uuid.UUID) string {
	return `{"session_id":"` + session.String() + `","agent":"support-bot","messages":[` +
		`{"role":"user","content":"My name is Ada.","metadata":{"lang":"en"}},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"units\"}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"{\"ok\":true}","name":"lookup"},` +
		`{"role":"assistant","content":"Noted, Ada.","metadata":{"model":"x","tokens":12}}],` +
		`"memories":[{"content":"User is called Ada.","metadata":{"kind":"profile"}}],"ttl_seconds":3600}`
}

// Bodies the transport refuses are refused whole: the status and code say why, nothing is
// stored.
func TestTransportBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	valid := isoValidTurn(sid)
	sub := func(old, new string) string { return isoValidTurnWith(t, sid, old, new) }
	huge := `{"session_id":"` + sid.String() + `","messages":[{"role":"user","content":"` + strings.Repeat("a", 1<<20) + `"}]}`
	tests := []struct {
		name    string
		body    string
		status  int
		code    string
		headers []string
	}{
		{"over 1 MiB", huge, 413, "payload_too_large", nil},
		{"over 1 MiB of spaces", valid + strings.Repeat(" ", 1<<20), 413, "payload_too_large", nil},
		{"text/plain", valid, 415, "unsupported_media_type", []string{"Content-Type", "text/plain"}},
		{"no content type", valid, 415, "unsupported_media_type", []string{"Content-Type", ""}},
		{"form", valid, 415, "unsupported_media_type", []string{"Content-Type", "application/x-www-form-urlencoded"}},
		{"malformed", valid[:len(valid)-1], 400, "invalid_request", nil},
		{"malformed inside", sub(`"role":"user"`, `"role":user`), 400, "invalid_request", nil},
		{"trailing object", valid + `{}`, 400, "invalid_request", nil},
		{"trailing garbage", valid + ` x`, 400, "invalid_request", nil},
		{"two objects", valid + valid, 400, "invalid_request", nil},
		{"not an object", `[` + valid + `]`, 400, "invalid_request", nil},
		{"null", `null`, 400, "invalid_request", nil},
		{"unknown field", sub(`"ttl_seconds"`, `"ttl_second"`), 400, "invalid_request", nil},
		{"unknown message field", sub(`"tool_call_id"`, `"toolCallId"`), 400, "invalid_request", nil},
		{"unknown tool call field", sub(`"arguments"`, `"args"`), 400, "invalid_request", nil},
		{"wrong type", sub(`"ttl_seconds":3600`, `"ttl_seconds":"3600"`), 400, "invalid_request", nil},
		{"invalid UTF-8 in content", sub("Ada.", "Ada\xff."), 400, "invalid_request", nil},
		{"invalid UTF-8 in metadata", sub(`"lang":"en"`, "\"lang\":\"e\xc3\x28\""), 400, "invalid_request", nil},
		{"NUL in content", sub("My name", `My\u0000name`), 400, "invalid_request", nil},
		{"NUL in metadata value", sub(`"lang":"en"`, `"lang":"e\u0000n"`), 400, "invalid_request", nil},
		{"NUL in metadata key", sub(`"lang":"en"`, `"la\u0000ng":"en"`), 400, "invalid_request", nil},
		{"NUL in agent", sub(`"support-bot"`, `"support\u0000bot"`), 400, "invalid_request", nil},
		{"NUL in name", sub(`"name":"lookup"`, `"name":"look\u0000up"`), 400, "invalid_request", nil},
		{"NUL in tool arguments", sub(`{\"q\":\"units\"}`, `{\"q\":\"\u0000\"}`), 400, "invalid_request", nil},
		{"NUL in memory", sub("User is called", `User\u0000is called`), 400, "invalid_request", nil},
		{"NUL in memory metadata", sub(`"kind":"profile"`, `"kind":"pro\u0000file"`), 400, "invalid_request", nil},
		{"lone surrogate in metadata", sub(`"lang":"en"`, `"lang":"\ud800"`), 400, "invalid_request", nil},
		{"low surrogate first in memory metadata", sub(`"kind":"profile"`, `"kind":"\udc00\ud800"`), 400, "invalid_request", nil},
		{"number too large for the database", sub(`"tokens":12`, `"tokens":1e200000`), 400, "invalid_request", nil},
		{"number too small for the database", sub(`"tokens":12`, `"tokens":1e-200000`), 400, "invalid_request", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := *e
			e.t = t
			r := e.call(u.token, "commit-turn", tt.body, tt.headers...)
			if r.status != tt.status || r.problemCode() != tt.code {
				t.Errorf("%d %s, want %d %s: %.300s", r.status, r.problemCode(), tt.status, tt.code, r.raw)
			}
		})
	}
	for _, table := range []string{"sessions", "messages", "memories", "active_sessions"} {
		if n := e.count(table, "user_id = $1", u.id); n != 0 {
			t.Errorf("%d rows in %s after refused bodies", n, table)
		}
	}
	// The same body, well-formed, is stored; so is an escaped NUL-looking text that is not one.
	e.call(u.token, "commit-turn", valid).must(t, http.StatusCreated)
	e.call(u.token, "commit-turn", isoTurn(sid, "support-bot", []string{`a literal \u0000 is fine`})).must(t, http.StatusCreated)
	if n := e.count("messages", "user_id = $1", u.id); n != 5 {
		t.Errorf("%d messages stored, want 5", n)
	}
	if n := e.count("messages", "user_id = $1 and content = $2", u.id, `a literal \u0000 is fine`); n != 1 {
		t.Error(`the text \u0000 (escaped backslash) was not stored as sent`)
	}

	// A body over the limit without a Content-Length is cut off as well.
	req := httptest.NewRequest(http.MethodPost, "/v1/commit-turn", struct{ *bytes.Reader }{bytes.NewReader([]byte(huge))})
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+u.token)
	req.Header.Set("Content-Type", "application/json")
	if r := e.do(req); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked body over 1 MiB: %d", r.status)
	}
	// A body of exactly 1 MiB is read (and then judged on its content).
	exact := `{"query":"` + strings.Repeat("a", 1<<20-len(`{"query":""}`)) + `"}`
	if r := e.call(u.token, "recall", exact); r.status != http.StatusBadRequest || !namesField(r, "query") {
		t.Errorf("1 MiB body: %d %s", r.status, r.raw)
	}
}

// Every function refuses NUL characters and takes an empty body as {}.
func TestTransportEveryFunction(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	svc := e.serviceToken()
	nul := map[string]string{
		"active-session": `{"agent":"a\u0000b"}`,
		"commit-turn":    `{"session_id":"` + uuid.NewString() + `","messages":[{"role":"user","content":"\u0000"}]}`,
		"get-context":    `{"session_id":"` + uuid.NewString() + `","query":"x\u0000"}`,
		"recall":         `{"query":"metric","filter":{"kind":"\u0000"}}`,
		"sweep-expired":  `{"dry_run":true,"x\u0000":1}`,
	}
	for fn, body := range nul {
		tok := u.token
		if fn == "sweep-expired" {
			tok = svc
		}
		r := e.call(tok, fn, body).must(t, http.StatusBadRequest)
		if r.problemCode() != "invalid_request" {
			t.Errorf("%s: code %q", fn, r.problemCode())
		}
		e.call(tok, fn, `{"unknown_field":true}`).must(t, http.StatusBadRequest)
		e.call(tok, fn, `{}`+"\n"+`{}`).must(t, http.StatusBadRequest)
		for _, notObject := range []string{`null`, `[]`, `"x"`, `1`, `true`} {
			e.call(tok, fn, notObject).must(t, http.StatusBadRequest)
		}
	}
	// An empty body is {}: what needs nothing works, what needs a field names it.
	want := http.StatusCreated // then the session it created
	for _, body := range []any{nil, "", "  \n"} {
		for _, ct := range []string{"application/json", ""} {
			e.call(u.token, "active-session", body, "Content-Type", ct).must(t, want)
			want = http.StatusOK
			e.call(svc, "sweep-expired", body, "Content-Type", ct).must(t, http.StatusOK)
			r := e.call(u.token, "recall", body, "Content-Type", ct).must(t, http.StatusBadRequest)
			if !namesField(r, "query") {
				t.Errorf("recall with an empty body: %s", r.raw)
			}
		}
	}
	if n := e.count("active_sessions", "user_id = $1", u.id); n != 1 {
		t.Errorf("resolves with empty bodies left %d active sessions, want 1", n)
	}
}

// A value of the wrong type, a fraction where an integer belongs or a number out of range is
// a 400 that names the field and says which.
func TestTransportTypeErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	svc := e.serviceToken()
	sid := uuid.NewString()
	for _, tc := range []struct {
		fn, body, field, message string
	}{
		{"recall", `{"query":"x","k":1.0}`, "k", "must be an integer"},
		{"recall", `{"query":"x","k":2.5}`, "k", "must be an integer"},
		{"recall", `{"query":"x","k":1e1}`, "k", "must be an integer"},
		{"recall", `{"query":"x","k":"10"}`, "k", "must be an integer, not string"},
		{"recall", `{"query":"x","k":99999999999999999999}`, "k", "is out of range"},
		{"recall", `{"query":"x","k":-99999999999999999999}`, "k", "is out of range"},
		{"recall", `{"query":"x","min_score":1e309}`, "min_score", "is out of range"},
		{"recall", `{"query":"x","min_score":-1e309}`, "min_score", "is out of range"},
		{"recall", `{"query":"x","min_score":"0.5"}`, "min_score", "must be a number, not string"},
		{"recall", `{"query":5}`, "query", "must be a string, not number"},
		{"recall", `{"query":["x"]}`, "query", "must be a string, not array"},
		{"get-context", `{"session_id":"` + sid + `","max_messages":20.0}`, "max_messages", "must be an integer"},
		{"commit-turn", `{"session_id":"` + sid + `","messages":[{"role":"user","content":"x"}],"ttl_seconds":1e400}`, "ttl_seconds", "must be an integer"},
		{"commit-turn", `{"session_id":"` + sid + `","messages":{}}`, "messages", "must be an array, not object"},
		{"commit-turn", `{"session_id":"` + sid + `","messages":[{"role":"user","content":7}]}`, "messages[0].content", "must be a string or an array of content parts, not number"},
		{"commit-turn", `{"session_id":"` + sid + `","messages":[{"role":"user","content":[{"type":"text","text":7}]}]}`, "messages[0].content[0].text", "must be a string, not number"},
		{"commit-turn", `{"session_id":"` + sid + `","messages":[{"role":"user","content":["x"]}]}`, "messages[0].content[0]", "must be a content part (an object with a type), not string"},
		{"sweep-expired", `{"dry_run":1}`, "dry_run", "must be a boolean, not number"},
		{"sweep-expired", `{"batch_size":18446744073709551616}`, "batch_size", "is out of range"},
	} {
		t.Run(tc.fn, func(t *testing.T) {
			tok := u.token
			if tc.fn == "sweep-expired" {
				tok = svc
			}
			r := e.call(tok, tc.fn, tc.body).must(t, http.StatusBadRequest)
			errs := list(r.body["errors"])
			if r.problemCode() != "invalid_request" || len(errs) != 1 ||
				str(obj(errs[0])["field"]) != tc.field || str(obj(errs[0])["message"]) != tc.message {
				t.Errorf("%s %s: %s, want %s %q", tc.fn, tc.body, r.raw, tc.field, tc.message)
			}
		})
	}
	if n := e.count("sessions", "user_id = $1", u.id); n != 0 {
		t.Errorf("%d sessions stored by refused bodies", n)
	}
}

func TestTransportUnknownPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	for _, path := range []string{"/v1/nope", "/", "/v1/commit-turn/extra", "/v2/recall", "/v1/"} {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+u.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "https://app.example.com")
		req.Header.Set("X-Request-Id", "req-404")
		r := e.do(req)
		if r.status != http.StatusNotFound || r.problemCode() != "not_found" {
			t.Errorf("%s: %d %s", path, r.status, r.raw)
		}
		if r.header.Get("X-Request-Id") != "req-404" || r.body["request_id"] != "req-404" {
			t.Errorf("%s: X-Request-Id %q, request_id %v", path, r.header.Get("X-Request-Id"), r.body["request_id"])
		}
		if r.header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
			t.Errorf("%s: 404 without CORS headers", path)
		}
	}
	// The functions are at /v1/<name> on the Mux.
	e.call(u.token, "active-session", nil).must(t, http.StatusCreated)
}

// FuzzCommitTurnBody: whatever the body, commit-turn answers 2xx or 4xx, never 5xx.
func FuzzCommitTurnBody(f *testing.F) {
	sid := uuid.MustParse("0b9c7a61-5d0e-4f43-9e1c-2f6a3c4b5d6e")
	seed := func(s string) string { return strings.ReplaceAll(s, sid.String(), "$SID") }
	fuzzFunction(f, "commit-turn", false,
		seed(isoValidTurn(sid)),
		`{"session_id":"$SID","messages":[{"role":"user","content":"hi"}]}`,
		`{"session_id":"$SID","messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}}]}]}`,
		`{"session_id":"$SID","messages":[{"role":"user","content":[{"type":"text"},{"text":"x"},{"type":1},"x",null,[]]}]}`,
		`{"session_id":"$SID","messages":[{"role":"user","content":[]}]}`,
		`{"session_id":"$SID","messages":[{"role":"user","content":[{"type":"x","v":1e999999}]}]}`,
		`{"session_id":"$SID","messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`,
		`{"session_id":"$SID","messages":[{"id":"$SID","role":"user","content":"hi"},{"id":"$SID","role":"user","content":"again"}]}`,
		`{"session_id":"$SID","messages":[{"id":"$MID","role":"user","content":"I like tea."}]}`,
		`{"session_id":"$SID","messages":[{"role":"tool","content":"x"}]}`,
		`{"session_id":"$SID","messages":[{"role":"user","content":"x","metadata":{"a":"\ud800"}}]}`,
		`{"session_id":"$SID","messages":[{"role":"user","content":"x","metadata":{"a":1e999999}}]}`,
		`{"session_id":"$SID","messages":[{"role":"user","content":"x"}],"memories":[{"content":"!!!","metadata":{"k":[1,{"b":null}]}}],"ttl_seconds":1}`,
		`{"session_id":"$SID","messages":[],"ttl_seconds":-1}`,
		`{"session_id":"x","agent":"","messages":null}`,
		`{"messages":[{"role":"user","content":"\u0000"}]}`,
		"{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}",
		`{"session_id":"$SID","SESSION_ID":"$SID","messages":[{"role":"user","content":"x","metadata":{"a":1,"a":2}}]}`)
}
