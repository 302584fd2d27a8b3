package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/lambdaentry"
)

// bearer adds a token to every request of an MCP client.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// mcpSession connects the Go SDK's client over Streamable HTTP to url with token.
func mcpSession(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token: token, base: http.DefaultTransport}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls a tool and returns its structured content, failing on a protocol error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) (map[string]any, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	if res.IsError { // a tool error's problem is its text
		if len(res.Content) != 1 || res.StructuredContent != nil {
			t.Fatalf("%s: tool error %+v, want one text and no structured content", name, res)
		}
		raw = []byte(res.Content[0].(*mcp.TextContent).Text)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, raw, err)
	}
	return out, res
}

func okTool(t *testing.T, cs *mcp.ClientSession, name string, args any) map[string]any {
	t.Helper()
	out, res := callTool(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s: tool error %v", name, out)
	}
	return out
}

func TestMCPToolsActForTheTokensUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	ada, bob := e.newUser(""), e.newUser("")
	cs := mcpSession(t, ts.URL+"/v1/mcp", ada.token)

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" || tl.InputSchema == nil || tl.OutputSchema == nil || tl.Annotations == nil {
			t.Errorf("%s: description, schemas and annotations are all required: %+v", tl.Name, tl)
		}
	}
	want := []string{"store_memory", "recall_memory", "search_knowledge_base", "get_user_context", "manage_long_term_memory",
		"get_context", "commit_turn", "forget_memory", "list_memories", "search_history"}
	slices.Sort(want) // the SDK lists tools by name
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	stored := okTool(t, cs, "store_memory", map[string]any{"content": "User prefers metric units.", "metadata": map[string]any{"kind": "preference"}})
	if stored["merged"] != false || str(stored["id"]) == "" {
		t.Fatalf("store_memory: %v", stored)
	}
	recalled := okTool(t, cs, "recall_memory", map[string]any{"query": "metric units"})
	if r := list(recalled["results"]); len(r) == 0 || obj(r[0])["content"] != "User prefers metric units." {
		t.Fatalf("recall_memory: %v", recalled)
	}

	// Bob sees nothing of Ada's, through any tool.
	bcs := mcpSession(t, ts.URL+"/v1/mcp", bob.token)
	if r := okTool(t, bcs, "recall_memory", map[string]any{"query": "metric units"}); len(list(r["results"])) != 0 {
		t.Fatalf("bob recalls ada's memory: %v", r)
	}
	if r := okTool(t, bcs, "list_memories", map[string]any{}); len(list(r["items"])) != 0 {
		t.Fatalf("bob lists ada's memories: %v", r)
	}
	out, res := callTool(t, bcs, "forget_memory", map[string]any{"id": stored["id"]})
	if !res.IsError || out["code"] != "not_found" {
		t.Fatalf("bob forgets ada's memory: %v", out)
	}
	// A user token naming another user is refused as a protocol error, not acted on.
	_, err = bcs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_memories", Arguments: map[string]any{"user_id": ada.id.String()}})
	if err == nil || !strings.Contains(err.Error(), "forbidden: user_id may name only the caller") {
		t.Fatalf("user_id of another user: %v, want a forbidden protocol error", err)
	}

	// Notes, by the seed's operations.
	okTool(t, cs, "manage_long_term_memory", map[string]any{"operation": "overwrite", "content": "# Ada\n## Preferences\n- metric\n## Trips\n- Lisbon"})
	n := okTool(t, cs, "manage_long_term_memory", map[string]any{"operation": "replace_section_by_header", "section_header": "## Preferences", "content": "- metric\n- tea"})
	if !strings.Contains(str(n["content"]), "- tea") || n["section_created"] != false {
		t.Fatalf("replace_section_by_header: %v", n)
	}
	n = okTool(t, cs, "manage_long_term_memory", map[string]any{"operation": "delete_section_by_header", "section_header": "Trips"})
	if strings.Contains(str(n["content"]), "Lisbon") {
		t.Fatalf("delete_section_by_header: %v", n)
	}
	okTool(t, cs, "manage_long_term_memory", map[string]any{"operation": "append", "content": "Likes short answers."})
	n = okTool(t, cs, "manage_long_term_memory", map[string]any{"operation": "prepend", "content": "Top line."})
	if !strings.HasPrefix(str(n["content"]), "Top line.") || !strings.HasSuffix(strings.TrimSpace(str(n["content"])), "Likes short answers.") {
		t.Fatalf("prepend/append: %q", n["content"])
	}
	out, res = callTool(t, cs, "manage_long_term_memory", map[string]any{"operation": "delete_section_by_header", "section_header": "Nowhere"})
	if !res.IsError || out["code"] != "not_found" {
		t.Fatalf("delete of a missing section: %v", out)
	}
	out, res = callTool(t, cs, "manage_long_term_memory", map[string]any{"operation": "append", "content": strings.Repeat("x", 20_001)})
	if !res.IsError || out["code"] != "invalid_request" || !strings.Contains(str(out["detail"]), "20000") {
		t.Fatalf("append over the size limit: %v", out)
	}
	if r := okTool(t, bcs, "manage_long_term_memory", map[string]any{"operation": "read"}); r["content"] != "" {
		t.Fatalf("bob reads ada's notes: %v", r)
	}

	// The user's context text holds key/value memory, mode and notes.
	e.call(ada.token, "user-memory", map[string]any{"op": "set", "key": "plan", "value": map[string]any{"tier": "pro"}}).must(t, 201)
	e.call(ada.token, "user-state", map[string]any{"op": "set", "mode": "active"}).must(t, 201)
	uc, ucRes := callTool(t, cs, "get_user_context", map[string]any{})
	text := str(uc["text"])
	for _, w := range []string{"Mode: active", `plan: {"tier":"pro"}`, "Likes short answers."} {
		if !strings.Contains(text, w) {
			t.Errorf("get_user_context lacks %q: %q", w, text)
		}
	}
	if tc, ok := ucRes.Content[0].(*mcp.TextContent); !ok || tc.Text != text {
		t.Errorf("get_user_context's text content is not the text: %+v", ucRes.Content)
	}
	if r := okTool(t, bcs, "get_user_context", map[string]any{}); r["text"] != "" {
		t.Fatalf("bob's context shows ada's: %v", r)
	}
	short := okTool(t, cs, "get_user_context", map[string]any{"max_tokens": 5})
	if short["truncated"] != true || len(str(short["text"])) > 20 {
		t.Fatalf("max_tokens 5: %v", short)
	}

	// A turn, its window, its search, and a replayed commit.
	session := uuid.NewString()
	turn := map[string]any{"session_id": session, "idempotency_key": "turn-1", "messages": []any{
		map[string]any{"role": "user", "content": "I am flying to Reykjavik in March."},
		map[string]any{"role": "assistant", "content": "Noted, enjoy the trip."}}}
	c1 := okTool(t, cs, "commit_turn", turn)
	c2 := okTool(t, cs, "commit_turn", turn)
	if c1["replayed"] != false || c2["replayed"] != true || e.count("messages", "session_id = $1", session) != 2 {
		t.Fatalf("commit then replay: %v %v", c1, c2)
	}
	w := okTool(t, cs, "get_context", map[string]any{"session_id": session, "format": "openai", "user_context": true})
	if len(list(w["messages"])) != 2 || !strings.Contains(str(w["user_context"]), "Mode: active") {
		t.Fatalf("get_context: %v", w)
	}
	if r := okTool(t, bcs, "get_context", map[string]any{"session_id": session}); len(list(r["messages"])) != 0 {
		t.Fatalf("bob reads ada's session: %v", r)
	}
	h := okTool(t, cs, "search_history", map[string]any{"query": "Reykjavik", "mode": "text"})
	if r := list(h["results"]); len(r) == 0 || obj(r[0])["source"] != "message" || obj(r[0])["session_id"] != session {
		t.Fatalf("search_history: %v", h)
	}
	if r := okTool(t, bcs, "search_history", map[string]any{"query": "Reykjavik", "mode": "text"}); len(list(r["results"])) != 0 {
		t.Fatalf("bob finds ada's messages: %v", r)
	}
	out, res = callTool(t, bcs, "commit_turn", map[string]any{"session_id": session, "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	if !res.IsError || out["code"] != "not_found" {
		t.Fatalf("bob commits to ada's session: %v", out)
	}

	if r := okTool(t, cs, "search_knowledge_base", map[string]any{"query": "refunds"}); r["results"] == nil {
		t.Fatalf("search_knowledge_base: %v", r)
	}
	if r := okTool(t, cs, "list_memories", map[string]any{"limit": 5}); len(list(r["items"])) != 1 {
		t.Fatalf("list_memories: %v", r)
	}
	if r := okTool(t, cs, "forget_memory", map[string]any{"id": stored["id"]}); r["deleted"] != true {
		t.Fatalf("forget_memory: %v", r)
	}
	if r := okTool(t, cs, "recall_memory", map[string]any{"query": "metric units"}); len(list(r["results"])) != 0 {
		t.Fatalf("recall after forget: %v", r)
	}
}

func TestMCPToolErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	cs := mcpSession(t, ts.URL+"/v1/mcp", e.newUser("").token)
	for _, c := range []struct {
		tool  string
		args  map[string]any
		code  string
		field string
	}{
		{"recall_memory", map[string]any{"query": "x", "k": 1000}, "invalid_request", "k"},
		{"recall_memory", map[string]any{}, "invalid_request", "query"},
		{"recall_memory", map[string]any{"query": "x", "source": "messages"}, "invalid_request", "source"},
		{"store_memory", map[string]any{"content": "a\u0000b"}, "invalid_request", ""},
		{"store_memory", map[string]any{"content": 5}, "invalid_request", "content"},
		{"manage_long_term_memory", map[string]any{"operation": "shred"}, "invalid_request", "operation"},
		{"manage_long_term_memory", map[string]any{"operation": "replace_section_by_header", "content": "x"}, "invalid_request", "section_header"},
		{"get_context", map[string]any{"session_id": "nope"}, "invalid_request", "session_id"},
		{"forget_memory", map[string]any{"id": uuid.NewString()}, "not_found", ""},
		{"commit_turn", map[string]any{"session_id": uuid.NewString(), "messages": []any{map[string]any{"role": "robot", "content": "x"}}}, "invalid_request", "messages[0].role"},
	} {
		out, res := callTool(t, cs, c.tool, c.args)
		if !res.IsError || out["code"] != c.code || str(out["detail"]) == "" {
			t.Errorf("%s %v: %v, want a tool error %s", c.tool, c.args, out, c.code)
			continue
		}
		if c.field != "" {
			found := false
			for _, fe := range list(out["errors"]) {
				found = found || obj(fe)["field"] == c.field
			}
			if !found {
				t.Errorf("%s %v: errors %v do not name %s", c.tool, c.args, out["errors"], c.field)
			}
		}
	}
	// An unknown tool is a protocol error.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "drop_tables"}); err == nil {
		t.Error("an unknown tool answered")
	}
	// A service token acts for the user it names, and must name one.
	svc := mcpSession(t, ts.URL+"/v1/mcp", e.serviceToken())
	out, res := callTool(t, svc, "list_memories", map[string]any{})
	if !res.IsError || out["code"] != "invalid_request" {
		t.Errorf("service caller without user_id: %v", out)
	}
	u := e.newUser("")
	okTool(t, svc, "store_memory", map[string]any{"user_id": u.id.String(), "content": "Service-stored fact."})
	if r := okTool(t, mcpSession(t, ts.URL+"/v1/mcp", u.token), "list_memories", map[string]any{}); len(list(r["items"])) != 1 {
		t.Errorf("the user does not see the memory stored for them: %v", r)
	}
}

func TestMCPAuthenticatesFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tok := range []string{"", "Bearer nope"} {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9102/v1/mcp", strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tok != "" {
			req.Header.Set("Authorization", tok)
		}
		r := e.do(req)
		wantProblem(t, r, 401, "unauthenticated")
		if got, want := r.header.Get("WWW-Authenticate"), `Bearer realm="agentmem", resource_metadata="http://127.0.0.1:9102/.well-known/oauth-protected-resource/v1/mcp"`; got != want {
			t.Errorf("WWW-Authenticate %q, want %q", got, want)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:9102/.well-known/oauth-protected-resource/v1/mcp", nil)
	r := e.do(req)
	if r.status != 200 || r.body["resource"] != "http://127.0.0.1:9102/v1/mcp" || list(r.body["bearer_methods_supported"])[0] != "header" {
		t.Fatalf("resource metadata: %d %s", r.status, r.raw)
	}
	// A GET of the endpoint (a standalone event stream) is not offered by a stateless server.
	req = httptest.NewRequest(http.MethodGet, "http://127.0.0.1:9102/v1/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+e.newUser("").token)
	wantProblem(t, e.do(req), 405, "method_not_allowed")
	// A POST without the Accept the transport asks for is a problem, not plain text.
	req = httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9102/v1/mcp", strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.newUser("").token)
	wantProblem(t, e.do(req), 400, "invalid_request")
}

// The MCP flow through the Lambda entry point from Function URL events, each answered by
// another container (another Server over the same database): the server keeps nothing
// between requests, so none needs to see the one before.
func TestMCPThroughFunctionURLEventsOfAnyContainer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	containers := []*env{e, buildEnv(t, envConfig{on: e, http: httpapi.Config{AllowedOrigins: []string{"https://app.example.com"}}})}
	u := e.newUser("")
	n := 0
	invoke := func(token string, msg map[string]any, wantStatus int) (lambdaentry.HTTPResponse, map[string]any) {
		t.Helper()
		c := containers[n%2]
		n++
		ev := isoEvent(t, "lambda-function-url.json")
		raw, _ := json.Marshal(msg)
		h := obj(ev["headers"])
		h["authorization"] = "Bearer " + token
		h["accept"] = "application/json, text/event-stream"
		h["mcp-protocol-version"] = "2025-06-18"
		h["content-length"] = strconv.Itoa(len(raw))
		delete(h, "idempotency-key")
		ev["body"] = string(raw)
		event, _ := json.Marshal(ev)
		out, err := lambdaentry.Handler(c.srv.MCP(), lambdaentry.Options{})(isoLambdaCtx(t, 30*time.Second), event)
		if err != nil {
			t.Fatal(err)
		}
		res := out.(lambdaentry.HTTPResponse)
		if res.StatusCode != wantStatus {
			t.Fatalf("%v: status %d, want %d: %s", msg["method"], res.StatusCode, wantStatus, res.Body)
		}
		if res.Headers["X-Request-Id"] != "req-123" || res.Headers["Access-Control-Allow-Origin"] != "https://app.example.com" {
			t.Errorf("%v: headers %v", msg["method"], res.Headers)
		}
		var body map[string]any
		if res.Body != "" {
			if err := json.Unmarshal([]byte(res.Body), &body); err != nil {
				t.Fatalf("%v: body %q: %v", msg["method"], res.Body, err)
			}
		}
		return res, body
	}
	call := func(id int, tool string, args map[string]any) map[string]any {
		t.Helper()
		_, body := invoke(u.token, map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
			"params": map[string]any{"name": tool, "arguments": args}}, 200)
		result := obj(body["result"])
		if result == nil || result["isError"] == true {
			t.Fatalf("%s: %v", tool, body)
		}
		return obj(result["structuredContent"])
	}

	_, body := invoke(u.token, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "lambda-test", "version": "1"}}}, 200)
	if obj(obj(body["result"])["serverInfo"])["name"] != "agentmem" {
		t.Fatalf("initialize: %v", body)
	}
	invoke(u.token, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}, 202)
	_, body = invoke(u.token, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, 200)
	if tools := list(obj(body["result"])["tools"]); len(tools) != 10 {
		t.Fatalf("tools/list: %d tools", len(tools))
	}
	stored := call(3, "store_memory", map[string]any{"content": "User's favourite colour is teal."})
	found := call(4, "recall_memory", map[string]any{"query": "favourite colour"})
	if r := list(found["results"]); len(r) != 1 || obj(r[0])["id"] != stored["id"] {
		t.Fatalf("recall_memory on another container: %v", found)
	}
	res, problem := invoke("expired.token.here", map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, 401)
	if problem["code"] != "unauthenticated" || res.Headers["Www-Authenticate"] !=
		`Bearer realm="agentmem", resource_metadata="https://a1b2c3d4e5f6g7h8i9j0klmnop.lambda-url.eu-west-1.on.aws/.well-known/oauth-protected-resource"` {
		t.Fatalf("401: %v %v", res.Headers, problem)
	}
}
