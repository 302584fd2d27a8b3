package httpapi_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// isoFixtures are texts that may appear in requests and stored rows, never in logs.
var isoFixtures = []string{
	"Zanzibar-fixture-7731", "Metadata-fixture-5512", "Memory-fixture-9034", "Memkind-fixture-3321",
	"Args-fixture-4410", "Name-fixture-8823", "Toolresult-fixture-1187", "Query-fixture-2290",
	"Idem-fixture-6617", "Filter-fixture-7002", "Field-fixture-3141", "Agent-fixture-0042",
}

// isoLogLines parses the JSON log lines, failing on any that is not JSON.
func isoLogLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// isoRequestLine finds the request line of a request id and checks its attributes.
func isoRequestLine(t *testing.T, lines []map[string]any, rid, fn string, status int) map[string]any {
	t.Helper()
	for _, l := range lines {
		if l["request_id"] == rid && l["msg"] == "request" {
			if l["fn"] != fn || l["status"] != float64(status) {
				t.Errorf("request line of %s: fn %v status %v, want %s %d", rid, l["fn"], l["status"], fn, status)
			}
			if _, ok := l["duration_ms"].(float64); !ok {
				t.Errorf("request line of %s without duration_ms: %v", rid, l)
			}
			return l
		}
	}
	t.Errorf("no request line for %s (%s)", rid, fn)
	return nil
}

func isoNoSecrets(t *testing.T, log string, secrets ...string) {
	t.Helper()
	for _, s := range append(secrets, isoFixtures...) {
		if s != "" && strings.Contains(log, s) {
			t.Errorf("the log contains %q", s)
		}
	}
}

// A full turn and its reads log ids, function names and statuses, and nothing a client sent.
func TestLogsHoldNoContent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	turn := map[string]any{
		"session_id": sid.String(),
		"agent":      "support-bot",
		"messages": []any{
			map[string]any{"role": "user", "content": "Zanzibar-fixture-7731 is my favourite island",
				"metadata": map[string]any{"note": "Metadata-fixture-5512"}},
			map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function",
				"function": map[string]any{"name": "Name-fixture-8823", "arguments": `{"q":"Args-fixture-4410"}`}}}},
			map[string]any{"role": "tool", "tool_call_id": "call_1", "name": "Name-fixture-8823", "content": "Toolresult-fixture-1187"},
			map[string]any{"role": "assistant", "content": "Zanzibar-fixture-7731 noted."},
		},
		"memories": []any{map[string]any{"content": "Memory-fixture-9034: the user loves Zanzibar-fixture-7731",
			"metadata": map[string]any{"kind": "Memkind-fixture-3321"}}},
		"ttl_seconds": 3600,
	}
	e.call(u.token, "commit-turn", turn, "X-Request-Id", "rid-log-commit", "Idempotency-Key", "Idem-fixture-6617").
		must(t, http.StatusCreated)
	e.call(u.token, "commit-turn", turn, "X-Request-Id", "rid-log-replay", "Idempotency-Key", "Idem-fixture-6617").
		must(t, http.StatusCreated)
	r := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "agent": "support-bot",
		"query": "Query-fixture-2290 Zanzibar-fixture-7731"}, "X-Request-Id", "rid-log-context").must(t, http.StatusOK)
	if len(list(r.body["messages"])) != 4 || len(list(r.body["memories"])) != 1 {
		t.Fatalf("get-context did not return the turn: %s", r.raw)
	}
	e.call(u.token, "recall", map[string]any{"query": "Query-fixture-2290 Zanzibar-fixture-7731", "mode": "text",
		"filter": map[string]any{"kind": "Memkind-fixture-3321"}}, "X-Request-Id", "rid-log-recall").must(t, http.StatusOK)
	e.call(u.token, "active-session", map[string]any{"agent": "support-bot"}, "X-Request-Id", "rid-log-active").
		must(t, http.StatusCreated)
	// Refusals name fields to the client, not to the log.
	e.call(u.token, "commit-turn", map[string]any{"session_id": sid.String(), "Field-fixture-3141": "Zanzibar-fixture-7731"},
		"X-Request-Id", "rid-log-400").must(t, http.StatusBadRequest)
	e.call(u.token, "recall", map[string]any{"query": "Query-fixture-2290", "agent": "Agent-fixture-0042 !"},
		"X-Request-Id", "rid-log-400b").must(t, http.StatusBadRequest)
	other := isoWith(turn, "ttl_seconds", 60)
	e.call(u.token, "commit-turn", other, "X-Request-Id", "rid-log-409", "Idempotency-Key", "Idem-fixture-6617").
		must(t, http.StatusConflict)
	e.call("Zanzibar-fixture-7731.x.y", "recall", `{}`, "X-Request-Id", "rid-log-401").must(t, http.StatusUnauthorized)
	e.call(e.serviceToken(), "sweep-expired", `{"dry_run":true}`, "X-Request-Id", "rid-log-sweep").must(t, http.StatusOK)
	e.call(u.token, "memories", map[string]any{"op": "create", "content": "Memory-fixture-9034 again, Zanzibar-fixture-7731",
		"metadata": map[string]any{"kind": "Memkind-fixture-3321"}}, "X-Request-Id", "rid-log-remember",
		"Idempotency-Key", "Idem-fixture-6617").must(t, http.StatusCreated)
	e.call(u.token, "sessions", map[string]any{"op": "history", "agent": "support-bot"}, "X-Request-Id", "rid-log-history").
		must(t, http.StatusOK)
	e.call(u.token, "sessions", map[string]any{"op": "clear", "agent": "support-bot"}, "X-Request-Id", "rid-log-clear").
		must(t, http.StatusOK)

	log := e.logBuf.String()
	isoNoSecrets(t, log, u.token, e.serviceToken()[:40], u.token[strings.LastIndex(u.token, ".")+1:])
	lines := isoLogLines(t, log)
	for _, c := range []struct {
		rid, fn string
		status  int
		code    string
	}{
		{"rid-log-commit", "commit-turn", 201, ""},
		{"rid-log-replay", "commit-turn", 201, ""},
		{"rid-log-context", "get-context", 200, ""},
		{"rid-log-recall", "recall", 200, ""},
		{"rid-log-active", "active-session", 201, ""},
		{"rid-log-400", "commit-turn", 400, "invalid_request"},
		{"rid-log-400b", "recall", 400, "invalid_request"},
		{"rid-log-409", "commit-turn", 409, "conflict"},
		{"rid-log-401", "recall", 401, "unauthenticated"},
		{"rid-log-sweep", "sweep-expired", 200, ""},
		{"rid-log-remember", "memories", 201, ""},
		{"rid-log-history", "sessions", 200, ""},
		{"rid-log-clear", "sessions", 200, ""},
	} {
		t.Run(c.fn, func(t *testing.T) {
			if l := isoRequestLine(t, lines, c.rid, c.fn, c.status); l != nil && c.code != "" && l["code"] != c.code {
				t.Errorf("%s: code %v, want %s", c.rid, l["code"], c.code)
			}
		})
	}
}

// An internal failure is logged once with its request id and cause, and answered with a
// generic problem; neither holds what the client sent.
func TestLogsServerError(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	e.store.Close() // every query now fails
	r := e.call(u.token, "commit-turn", isoTurn(uuid.New(), "", []string{"Zanzibar-fixture-7731"}, "Memory-fixture-9034"),
		"X-Request-Id", "rid-log-5xx")
	if r.status < 500 {
		t.Fatalf("commit-turn on a closed pool: %d %s", r.status, r.raw)
	}
	if d := str(r.body["detail"]); strings.Contains(d, "pool") || strings.Contains(d, "closed") {
		t.Errorf("problem detail %q reveals the cause", d)
	}
	log := e.logBuf.String()
	isoNoSecrets(t, log, u.token)
	lines := isoLogLines(t, log)
	isoRequestLine(t, lines, "rid-log-5xx", "commit-turn", r.status)
	failures := 0
	for _, l := range lines {
		if l["request_id"] == "rid-log-5xx" && l["level"] == "ERROR" {
			failures++
			if l["fn"] != "commit-turn" || str(l["error"]) == "" {
				t.Errorf("failure line without fn or error: %v", l)
			}
		}
	}
	if failures != 1 {
		t.Errorf("%d error lines for one failure, want 1:\n%s", failures, log)
	}
}
