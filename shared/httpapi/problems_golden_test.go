package httpapi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/problems/*.json from the current answers")

// TestProblemBodiesMatchGolden pins the problem+json bodies clients see for the common refusals:
// each case's status, Content-Type and body (the request id aside, which differs on every call)
// must equal testdata/problems/<name>.json. go test ./shared/httpapi -run TestProblemBodiesMatchGolden
// -args -update rewrites the files after an intended change, for review in the diff.
func TestProblemBodiesMatchGolden(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	e.call(u.token, "commit-turn", map[string]any{"session_id": sid, "messages": []any{
		map[string]any{"role": "user", "content": "first"}}}, "Idempotency-Key", "golden-key").must(t, http.StatusCreated)

	cases := []struct {
		name    string
		token   string
		fn      string
		body    any
		headers []string
	}{
		{name: "no-token", fn: "get-context", body: map[string]any{"session_id": sid}},
		{name: "malformed-token", token: "not.a.jwt", fn: "get-context", body: map[string]any{"session_id": sid}},
		{name: "malformed-json", token: u.token, fn: "commit-turn", body: `{"session_id": `},
		{name: "unknown-field", token: u.token, fn: "get-context", body: map[string]any{"session_id": sid, "budget": 10}},
		{name: "duplicate-field", token: u.token, fn: "get-context", body: `{"session_id": "` + sid.String() + `", "session_id": "` + sid.String() + `"}`},
		{name: "wrong-type", token: u.token, fn: "get-context", body: map[string]any{"session_id": sid, "max_tokens": "many"}},
		{name: "invalid-message", token: u.token, fn: "commit-turn", body: map[string]any{"session_id": sid,
			"messages": []any{map[string]any{"role": "user", "content": "ok"}, map[string]any{"role": "wizard", "content": "x"}}}},
		{name: "unknown-op", token: u.token, fn: "user-state", body: map[string]any{"op": "explode"}},
		{name: "service-only", token: u.token, fn: "sweep-expired", body: map[string]any{}},
		{name: "service-without-user", token: e.serviceToken(), fn: "get-context", body: map[string]any{"session_id": sid}},
		{name: "idempotency-conflict", token: u.token, fn: "commit-turn", body: map[string]any{"session_id": sid,
			"messages": []any{map[string]any{"role": "user", "content": "something else"}}}, headers: []string{"Idempotency-Key", "golden-key"}},
		{name: "unknown-function", token: u.token, fn: "teleport", body: map[string]any{}},
		{name: "malformed-position", token: u.token, fn: "get-context", body: map[string]any{"session_id": sid},
			headers: []string{"Agentmem-Position", "0/16B3748"}},
		{name: "shared-memory-write-by-a-user", token: u.token, fn: "memories", body: map[string]any{"op": "create", "shared": true,
			"content": "The office is closed on Fridays."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.call(c.token, c.fn, c.body, c.headers...)
			got := goldenProblem(t, r)
			path := filepath.Join("testdata", "problems", c.name+".json")
			if *updateGolden {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -args -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s:\n got: %s\nwant: %s", c.name, path, got, want)
			}
		})
	}
}

// goldenProblem renders a refusal as its golden file holds it: status, Content-Type and the
// body with its request id replaced (after checking that the body's id is the header's).
func goldenProblem(t *testing.T, r response) []byte {
	t.Helper()
	if r.status < 400 {
		t.Fatalf("status %d is not a refusal: %s", r.status, r.raw)
	}
	id := r.header.Get("X-Request-Id")
	if id == "" || r.body["request_id"] != id {
		t.Fatalf("request_id %v does not match X-Request-Id %q", r.body["request_id"], id)
	}
	body := map[string]any{}
	for k, v := range r.body {
		body[k] = v
	}
	body["request_id"] = "<request-id>"
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{
		"status":       r.status,
		"content_type": r.header.Get("Content-Type"),
		"body":         body,
	}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
