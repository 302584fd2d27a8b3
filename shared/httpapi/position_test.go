package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/httpapi"
)

// Agentmem-Position is checked on every request, whatever the deployment: a malformed one is a
// 400 naming the header, and the request changes nothing. Without read replicas an answer
// carries none, and one sent is accepted (the primary answers every read). The reads of a
// deployment with a replica are tested by TestReadReplicas (make test-replica).
func TestPositionHeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	turn := map[string]any{"session_id": sid, "messages": []any{map[string]any{"role": "user", "content": "hello"}}}

	for _, bad := range []string{"", "0/16B3748", "16B3748", "000000000016B37G", "0000000000016B3748"} {
		var r response
		if bad != "" {
			r = e.call(u.token, "commit-turn", turn, httpapi.PositionHeader, bad)
		} else {
			// An empty header is present, and no position.
			body, _ := json.Marshal(turn)
			req := httptest.NewRequest(http.MethodPost, "/v1/commit-turn", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+u.token)
			req.Header.Set("Content-Type", "application/json")
			req.Header[httpapi.PositionHeader] = []string{""}
			r = e.do(req)
		}
		r.must(t, http.StatusBadRequest)
		if r.problemCode() != "invalid_request" || !fieldNamed(r, httpapi.PositionHeader) {
			t.Errorf("%q: %s; want invalid_request naming %s", bad, r.raw, httpapi.PositionHeader)
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/get-context", bytes.NewReader([]byte(`{"session_id":"`+sid.String()+`"}`)))
	req.Header.Set("Authorization", "Bearer "+u.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add(httpapi.PositionHeader, "0000000000000001")
	req.Header.Add(httpapi.PositionHeader, "0000000000000002")
	if r := e.do(req); r.status != http.StatusBadRequest || !fieldNamed(r, httpapi.PositionHeader) {
		t.Errorf("two positions: %d %s; want 400 naming the header", r.status, r.raw)
	}
	if n := e.count("messages", "session_id = $1", sid); n != 0 {
		t.Errorf("%d messages stored by refused requests", n)
	}

	r := e.call(u.token, "commit-turn", turn, httpapi.PositionHeader, "00000000FFFFFFFF").must(t, http.StatusCreated)
	if got := r.header.Values(httpapi.PositionHeader); len(got) != 0 {
		t.Errorf("an answer without read replicas carries %s %q", httpapi.PositionHeader, got)
	}
	r = e.call(u.token, "get-context", map[string]any{"session_id": sid}, httpapi.PositionHeader, "7FFFFFFFFFFFFFFF").must(t, http.StatusOK)
	if msgs, _ := r.body["messages"].([]any); len(msgs) != 1 {
		t.Errorf("get-context with a position: %s", r.raw)
	}
}

// fieldNamed reports whether a problem's errors name field.
func fieldNamed(r response, field string) bool {
	errs, _ := r.body["errors"].([]any)
	for _, e := range errs {
		if m, _ := e.(map[string]any); m["field"] == field {
			return true
		}
	}
	return false
}
