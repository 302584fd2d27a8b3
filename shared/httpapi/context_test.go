package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/memory"
)

type ctRawMessage struct {
	ID         string            `json:"id"`
	Seq        int64             `json:"seq"`
	Role       string            `json:"role"`
	Content    string            `json:"content"`
	Name       *string           `json:"name"`
	ToolCalls  []memory.ToolCall `json:"tool_calls"`
	ToolCallID *string           `json:"tool_call_id"`
	Metadata   json.RawMessage   `json:"metadata"`
	CreatedAt  string            `json:"created_at"`
}

type ctHit struct {
	ID        string          `json:"id"`
	Content   string          `json:"content"`
	Score     float64         `json:"score"`
	Metadata  json.RawMessage `json:"metadata"`
	CreatedAt string          `json:"created_at"`
}

type ctContext struct {
	SessionID  string                     `json:"session_id"`
	Messages   []ctRawMessage             `json:"messages"`
	Memories   []ctHit                    `json:"memories"`
	UserMemory map[string]json.RawMessage `json:"user_memory"`
	State      *string                    `json:"state"`
	Notes      *string                    `json:"notes"`
	Summary    json.RawMessage            `json:"summary"`
	Usage      struct {
		Messages        int  `json:"messages"`
		TokenEstimate   int  `json:"token_estimate"`
		Truncated       bool `json:"truncated"`
		DroppedMessages int  `json:"dropped_messages"`
		DroppedParts    int  `json:"dropped_parts"`
	} `json:"usage"`
}

// ctGet calls get-context in the raw format, requires 200 and checks what must hold of every
// answer: the exact keys, the usage figures, the order and the tool-call safety of the window.
func ctGet(t *testing.T, e *env, token string, body map[string]any) ctContext {
	t.Helper()
	r := e.call(token, "get-context", body).must(t, http.StatusOK)
	ctKeys(t, "get-context", r.body, "session_id", "messages", "memories", "user_memory", "state", "notes", "summary", "usage")
	for i, m := range list(r.body["messages"]) {
		ctKeys(t, fmt.Sprintf("messages[%d]", i), obj(m), "id", "seq", "role", "content", "name", "tool_calls", "tool_call_id", "metadata", "created_at")
	}
	c := ctStrict[ctContext](t, r.raw)
	if string(c.Summary) != "null" {
		t.Errorf("summary = %s, want null (no session has a rolling summary)", c.Summary)
	}
	if c.Usage.DroppedMessages != 0 || c.Usage.DroppedParts != 0 {
		t.Errorf("usage %+v: the raw format drops nothing", c.Usage)
	}
	if c.Messages == nil || c.Memories == nil || c.UserMemory == nil {
		t.Errorf("messages, memories and user_memory must be [] / {} rather than null: %s", r.raw)
	}
	tokens := 0
	for i, m := range c.Messages {
		if i > 0 && m.Seq <= c.Messages[i-1].Seq {
			t.Errorf("messages not oldest first: seq %d after %d", m.Seq, c.Messages[i-1].Seq)
		}
		ctUTC(t, "created_at", m.CreatedAt)
		if len(m.Metadata) == 0 || m.Metadata[0] != '{' {
			t.Errorf("messages[%d].metadata = %s, want an object", i, m.Metadata)
		}
		tokens += memory.EstimateTokens(m.Content, m.Name, m.ToolCalls, m.ToolCallID)
	}
	if c.Usage.Messages != len(c.Messages) || c.Usage.TokenEstimate != tokens {
		t.Errorf("usage %+v, but %d messages of %d tokens returned", c.Usage, len(c.Messages), tokens)
	}
	if err := ctToolSafe(c.Messages); err != nil {
		t.Errorf("unsafe window: %v", err)
	}
	return c
}

// ctKeys requires m to have exactly the keys.
func ctKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	var got []string
	for k := range m {
		got = append(got, k)
	}
	sort.Strings(got)
	sort.Strings(keys)
	if !reflect.DeepEqual(got, keys) {
		t.Errorf("%s has keys %v, want %v", what, got, keys)
	}
}

// ctToolSafe checks what LLM APIs require of a window: every assistant message with tool calls
// is followed at once by a result for each call, and no tool message appears anywhere else.
func ctToolSafe(msgs []ctRawMessage) error {
	for i := 0; i < len(msgs); {
		m := msgs[i]
		switch {
		case m.Role == "tool":
			return fmt.Errorf("message %d (seq %d) is a tool result without its call", i, m.Seq)
		case m.Role == "assistant" && len(m.ToolCalls) > 0:
			pending := map[string]bool{}
			for _, c := range m.ToolCalls {
				pending[c.ID] = true
			}
			j := i + 1
			for ; j < len(msgs) && msgs[j].Role == "tool"; j++ {
				if msgs[j].ToolCallID == nil || !pending[*msgs[j].ToolCallID] {
					return fmt.Errorf("message %d (seq %d) answers no pending call of seq %d", j, msgs[j].Seq, m.Seq)
				}
				delete(pending, *msgs[j].ToolCallID)
			}
			if len(pending) > 0 {
				return fmt.Errorf("assistant seq %d lacks results for %v", m.Seq, pending)
			}
			i = j
		default:
			i++
		}
	}
	return nil
}

func ctContents(msgs []ctRawMessage) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

func ctSeqList(msgs []ctRawMessage) []int64 {
	out := []int64{}
	for _, m := range msgs {
		out = append(out, m.Seq)
	}
	return out
}

// ctTokens is the estimate of a request message, as the server computes it.
func ctTokens(m map[string]any) int {
	content, _ := m["content"].(string)
	var name, tcid *string
	if s, ok := m["name"].(string); ok {
		name = &s
	}
	if s, ok := m["tool_call_id"].(string); ok {
		tcid = &s
	}
	var calls []memory.ToolCall
	if raw, ok := m["tool_calls"]; ok {
		b, _ := json.Marshal(raw)
		_ = json.Unmarshal(b, &calls)
	}
	return memory.EstimateTokens(content, name, calls, tcid)
}

// get-context's body decodes into the use case's input: a value of the wrong JSON type, an
// unknown field or JSON that is not one object is 400 invalid_request naming the field, null is
// the default; the ranges themselves are tested on the use case (shared/app
// TestGetContextValidation), a refusal of it rendered here once.
func TestGetContextValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.NewString()
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"max_messages 501", map[string]any{"session_id": sid, "max_messages": 501}, "max_messages"},
		{"max_messages fractional", map[string]any{"session_id": sid, "max_messages": 2.5}, "max_messages"},
		{"max_messages a string", map[string]any{"session_id": sid, "max_messages": "5"}, "max_messages"},
		{"format a number", map[string]any{"session_id": sid, "format": 1}, "format"},
		{"unknown field", map[string]any{"session_id": sid, "max_message": 5}, "max_message"},
		{"body an array", `[]`, ""},
		{"body null", `null`, ""},
		{"trailing data", `{"session_id":"` + sid + `"} {}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := ctFor(e, t)
			wantProblem(t, e.call(u.token, "get-context", tc.body), http.StatusBadRequest, "invalid_request", tc.field)
		})
	}
	t.Run("null is the default", func(t *testing.T) {
		t.Parallel()
		e := ctFor(e, t)
		sid := uuid.New()
		msgs := make([]map[string]any, 25)
		for i := range msgs {
			msgs[i] = ctMsg("user", fmt.Sprintf("m%d", i))
		}
		ctCommit(t, e, u.token, ctTurn(sid, msgs...))
		if c := ctGet(t, e, u.token, map[string]any{"session_id": sid.String(), "max_messages": nil}); len(c.Messages) != 20 {
			t.Errorf("max_messages null gave %d messages, want the default 20", len(c.Messages))
		}
	})
}

// ctToolSession is a session whose window boundaries fall inside tool-call groups:
//
//	1 user  2 assistant→c1  3 tool c1  4 assistant  5 user  6 assistant→c2,c3  7 tool c3  8 tool c2  9 assistant
func ctToolSession(t *testing.T, e *env, u user) (uuid.UUID, []map[string]any) {
	t.Helper()
	sid := uuid.New()
	msgs := []map[string]any{
		ctMsg("user", "q1: what is the weather?"),
		ctCalls("c1"),
		ctResult("c1"),
		ctMsg("assistant", "a1: sunny"),
		ctMsg("user", "q2: and in two cities?"),
		ctCalls("c2", "c3"),
		ctResult("c3"),
		ctResult("c2"),
		ctMsg("assistant", "a2: both sunny"),
	}
	// Each group in a turn of its own, as agents commit them.
	ctCommit(t, e, u.token, ctTurn(sid, msgs[0]))
	ctCommit(t, e, u.token, ctTurn(sid, msgs[1:4]...))
	ctCommit(t, e, u.token, ctTurn(sid, msgs[4:6]...))
	ctCommit(t, e, u.token, ctTurn(sid, msgs[6:]...))
	return sid, msgs
}

func TestGetContextToolCallSafety(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid, msgs := ctToolSession(t, e, u)
	tok := make([]int, len(msgs)+1) // tok[seq]
	total := 0
	for i, m := range msgs {
		tok[i+1] = ctTokens(m)
		total += tok[i+1]
	}
	sum := func(from, to int) int {
		n := 0
		for s := from; s <= to; s++ {
			n += tok[s]
		}
		return n
	}
	seqs := func(from, to int) []int64 {
		out := []int64{}
		for s := from; s <= to; s++ {
			out = append(out, int64(s))
		}
		return out
	}
	cases := []struct {
		maxMessages, maxTokens int
		want                   []int64
		truncated              bool
	}{
		{1, 0, seqs(9, 9), false},
		{2, 0, seqs(9, 9), true}, // 8 answers a call outside the window
		{3, 0, seqs(9, 9), true}, // 7 and 8 too
		{4, 0, seqs(6, 9), false},
		{5, 0, seqs(5, 9), false},
		{6, 0, seqs(4, 9), false},
		{7, 0, seqs(4, 9), true}, // 3 answers a call outside the window
		{8, 0, seqs(2, 9), false},
		{9, 0, seqs(1, 9), false},
		{500, total, seqs(1, 9), false},
		{500, total - 1, seqs(2, 9), true},
		{500, sum(2, 9) - 1, seqs(4, 9), true}, // the group 2-3 goes whole
		{500, sum(6, 9), seqs(6, 9), true},
		{500, sum(6, 9) - 1, seqs(9, 9), true}, // the group 6-8 goes whole
		{500, sum(7, 9), seqs(9, 9), true},     // room for the results is no room for the group
		{500, tok[9] - 1, seqs(1, 0), true},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.maxMessages), func(t *testing.T) {
			body := map[string]any{"session_id": sid.String(), "max_messages": tc.maxMessages}
			if tc.maxTokens > 0 {
				body["max_tokens"] = tc.maxTokens
			}
			c := ctGet(t, e, u.token, body)
			if got := ctSeqList(c.Messages); !reflect.DeepEqual(got, tc.want) || c.Usage.Truncated != tc.truncated {
				t.Errorf("max_messages %d max_tokens %d: seqs %v truncated %v, want %v truncated %v",
					tc.maxMessages, tc.maxTokens, got, c.Usage.Truncated, tc.want, tc.truncated)
			}
		})
	}
	// Every boundary, by count and by budget: ctGet checks the window is safe each time.
	for n := 1; n <= 9; n++ {
		for budget := 1; budget <= total+4; budget += 11 {
			c := ctGet(t, e, u.token, map[string]any{"session_id": sid.String(), "max_messages": n, "max_tokens": budget})
			if c.Usage.TokenEstimate > budget {
				t.Errorf("max_messages %d max_tokens %d: estimate %d", n, budget, c.Usage.TokenEstimate)
			}
		}
	}
	// The two-call group comes whole and in stored order in the openai format too.
	r := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "max_messages": 4, "format": "openai"}).must(t, http.StatusOK)
	var roles []string
	for _, m := range list(r.body["messages"]) {
		roles = append(roles, str(obj(m)["role"])+":"+str(obj(m)["tool_call_id"]))
	}
	if want := []string{"assistant:", "tool:c3", "tool:c2", "assistant:"}; !reflect.DeepEqual(roles, want) {
		t.Errorf("openai window %v, want %v", roles, want)
	}
}

func TestGetContextIncompleteToolCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	ctCommit(t, e, u.token, ctTurn(sid, ctMsg("user", "look up two things"), ctCalls("d1", "d2"), ctResult("d1")))

	// One result is not stored yet: the call and its partial results stay out.
	for _, format := range []string{"raw", "openai"} {
		r := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "format": format}).must(t, http.StatusOK)
		if n := len(list(r.body["messages"])); n != 1 || str(obj(list(r.body["messages"])[0])["role"]) != "user" {
			t.Errorf("%s: window %s, want only the user message", format, r.raw)
		}
		if !obj(r.body["usage"])["truncated"].(bool) {
			t.Errorf("%s: a left-out group must set truncated", format)
		}
	}
	// Once the last result is stored, the group comes whole.
	ctCommit(t, e, u.token, ctTurn(sid, ctResult("d2"), ctMsg("assistant", "done")))
	c := ctGet(t, e, u.token, map[string]any{"session_id": sid.String()})
	if got := ctSeqList(c.Messages); !reflect.DeepEqual(got, []int64{1, 2, 3, 4, 5}) || c.Usage.Truncated {
		t.Errorf("complete group: seqs %v truncated %v", got, c.Usage.Truncated)
	}

	// Results separated from their call by another message cannot be sent as they are.
	sid2 := uuid.New()
	ctCommit(t, e, u.token, ctTurn(sid2, ctCalls("e1"), ctMsg("user", "interrupting"), ctResult("e1"), ctMsg("assistant", "ok")))
	c = ctGet(t, e, u.token, map[string]any{"session_id": sid2.String()})
	if got := ctContents(c.Messages); !reflect.DeepEqual(got, []string{"interrupting", "ok"}) {
		t.Errorf("separated results: %q", got)
	}
	// A result answering a call of another message, and one answering nothing, stay out.
	sid3 := uuid.New()
	ctCommit(t, e, u.token, ctTurn(sid3, ctMsg("user", "hi"), ctCalls("f1"), ctResult("f1"), ctResult("f1"), ctResult("zz"), ctMsg("assistant", "bye")))
	c = ctGet(t, e, u.token, map[string]any{"session_id": sid3.String()})
	if got := ctSeqList(c.Messages); !reflect.DeepEqual(got, []int64{1, 2, 3, 6}) {
		t.Errorf("stray results: seqs %v, want [1 2 3 6]", got)
	}
}

func TestGetContextForeignOrMissingSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	a, b := e.newUser(""), e.newUser("")
	sid := uuid.New()
	body := ctTurn(sid, ctMsg("user", "secret of a"))
	body["memories"] = []any{map[string]any{"content": "A's secret fact"}}
	ctCommit(t, e, a.token, body)

	normalized := func(token string, sessionID uuid.UUID, extra ...any) string {
		t.Helper()
		req := map[string]any{"session_id": sessionID.String(), "query": "secret fact"}
		for i := 0; i+1 < len(extra); i += 2 {
			req[extra[i].(string)] = extra[i+1]
		}
		r := e.call(token, "get-context", req).must(t, http.StatusOK)
		if bytes := string(r.raw); strings.Contains(bytes, "secret") {
			t.Errorf("another user's content leaked: %s", r.raw)
		}
		r.body["session_id"] = "-"
		out, _ := json.Marshal(r.body)
		return string(out)
	}
	missing := normalized(b.token, uuid.New())
	want := `{"memories":[],"messages":[],"notes":null,"session_id":"-","state":null,"summary":null,"usage":{"dropped_messages":0,"dropped_parts":0,"messages":0,"token_estimate":0,"truncated":false},"user_memory":{}}`
	if missing != want {
		t.Errorf("missing session: %s, want %s", missing, want)
	}
	svc := e.serviceToken()
	for name, got := range map[string]string{
		"another user's session":             normalized(b.token, sid),
		"another user's session, openai":     normalized(b.token, sid, "format", "openai"),
		"another user's session, langchain":  normalized(b.token, sid, "format", "langchain"),
		"a service acting for another user":  normalized(svc, sid, "user_id", b.id.String()),
		"the same user id in another tenant": normalized(ctToken(t, a.id, "tenant-x"), sid),
	} {
		if got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	wantAnthropic := strings.Replace(want, `"state":null,`, `"state":null,"summary":null,"system":null,`, 1)
	wantAnthropic = strings.Replace(wantAnthropic, `"summary":null,"usage"`, `"usage"`, 1)
	if got := normalized(b.token, sid, "format", "anthropic"); got != wantAnthropic {
		t.Errorf("another user's session, anthropic: %s, want %s", got, wantAnthropic)
	}
	// The owner through another agent sees no messages either.
	c := ctGet(t, e, a.token, map[string]any{"session_id": sid.String(), "agent": "other"})
	if len(c.Messages) != 0 {
		t.Errorf("another agent read the session: %q", ctContents(c.Messages))
	}
	// And the owner sees it.
	if c := ctGet(t, e, a.token, map[string]any{"session_id": sid.String()}); len(c.Messages) != 1 {
		t.Errorf("the owner reads %d messages", len(c.Messages))
	}
}

func TestGetContextFormats(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	calls1 := []any{ctToolCall("c1", "lookup", `{"q":"ada"}`)}
	calls2 := []any{ctToolCall("c2", "weather", `{"city":"Paris"}`), ctToolCall("c3", "weather", `{"city":"Oslo"}`)}
	sent := []map[string]any{
		ctMsg("system", "You are helpful.", "name", "sys"),
		ctMsg("user", "Hi, I'm Ada", "name", "ada", "metadata", map[string]any{"client": "web"}),
		ctMsg("assistant", "", "name", "helper", "tool_calls", calls1),
		ctMsg("tool", `{"ok":true}`, "tool_call_id", "c1", "name", "lookup"),
		ctMsg("assistant", "Hello Ada.", "metadata", map[string]any{"model": "x", "tokens": 12}),
		ctMsg("assistant", "Let me check both.", "tool_calls", calls2),
		ctMsg("tool", "rain", "tool_call_id", "c2"),
		ctMsg("tool", "snow", "tool_call_id", "c3"),
	}
	res := ctCommit(t, e, u.token, ctTurn(sid, sent...))

	// raw: every field of the contract, null where absent.
	c := ctGet(t, e, u.token, map[string]any{"session_id": sid.String()})
	if len(c.Messages) != len(sent) {
		t.Fatalf("%d messages, want %d", len(c.Messages), len(sent))
	}
	r := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "format": "raw"}).must(t, http.StatusOK)
	def := e.call(u.token, "get-context", map[string]any{"session_id": sid.String()}).must(t, http.StatusOK)
	if string(r.raw) != string(def.raw) {
		t.Errorf("format raw differs from the default")
	}
	for i, m := range list(r.body["messages"]) {
		m := obj(m)
		if m["id"] != res.Messages[i].ID || m["seq"] != float64(res.Messages[i].Seq) || m["created_at"] != res.Messages[i].CreatedAt {
			t.Errorf("messages[%d] id/seq/created_at %v/%v/%v, commit answered %+v", i, m["id"], m["seq"], m["created_at"], res.Messages[i])
		}
		for _, k := range []string{"role", "content", "name", "tool_call_id", "tool_calls"} {
			want, ok := sent[i][k]
			if !ok {
				want = nil
			}
			if w, _ := json.Marshal(want); string(w) != ctJSON(t, m[k]) {
				t.Errorf("messages[%d].%s = %s, want %s", i, k, ctJSON(t, m[k]), w)
			}
		}
		want, ok := sent[i]["metadata"]
		if !ok {
			want = map[string]any{}
		}
		if w, _ := json.Marshal(want); string(w) != ctJSON(t, m["metadata"]) {
			t.Errorf("messages[%d].metadata = %s, want %s", i, ctJSON(t, m["metadata"]), w)
		}
	}

	// openai: exactly what Chat Completions accepts.
	r = e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "format": "openai"}).must(t, http.StatusOK)
	ctKeys(t, "openai answer", r.body, "session_id", "messages", "memories", "user_memory", "state", "notes", "summary", "usage")
	wantJSON := `[
	 {"role":"system","content":"You are helpful.","name":"sys"},
	 {"role":"user","content":"Hi, I'm Ada","name":"ada"},
	 {"role":"assistant","content":null,"name":"helper","tool_calls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"ada\"}"}}]},
	 {"role":"tool","content":"{\"ok\":true}","tool_call_id":"c1"},
	 {"role":"assistant","content":"Hello Ada."},
	 {"role":"assistant","content":"Let me check both.","tool_calls":[
	   {"id":"c2","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
	   {"id":"c3","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}]},
	 {"role":"tool","content":"rain","tool_call_id":"c2"},
	 {"role":"tool","content":"snow","tool_call_id":"c3"}]`
	var want []any
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Fatal(err)
	}
	if got := r.body["messages"]; !reflect.DeepEqual(got, want) {
		t.Errorf("openai messages\n%s\nwant\n%s", ctJSON(t, got), ctJSON(t, want))
	}
	if u := obj(r.body["usage"]); u["messages"] != 8.0 || u["token_estimate"] != float64(c.Usage.TokenEstimate) {
		t.Errorf("openai usage %v, raw usage %+v", u, c.Usage)
	}
}

func TestGetContextRecall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u, v := e.newUser(""), e.newUser("")
	commit := func(who user, agent string, facts ...string) {
		t.Helper()
		b := ctTurn(uuid.New(), ctMsg("user", "facts"))
		b["agent"] = agent
		var mems []any
		for _, f := range facts {
			mems = append(mems, map[string]any{"content": f, "metadata": map[string]any{"kind": "fact"}})
		}
		b["memories"] = mems
		ctCommit(t, e, who.token, b)
	}
	commit(u, "bot", "User prefers metric units.", "User's cat is named Tom.", "User lives in Lyon.")
	commit(u, "other", "User prefers metric units for other things.")
	commit(v, "bot", "User prefers metric units, says v.")
	// A memory of the user for every agent (agent '').
	e.exec(`insert into agentmem.memories (user_id, agent, content, content_key, expires_at)
		values ($1, '', 'Metric units everywhere, across agents.', 'agentless-1', now() + interval '1 day')`, u.id)

	sid := uuid.NewString()
	c := ctGet(t, e, u.token, map[string]any{"session_id": sid, "agent": "bot", "query": "metric units", "recall_k": 10})
	got := map[string]bool{}
	for _, h := range c.Memories {
		got[h.Content] = true
		if _, err := uuid.Parse(h.ID); err != nil || len(h.Metadata) == 0 || h.Metadata[0] != '{' || h.Score <= 0 {
			t.Errorf("memory %+v lacks an id, metadata or score", h)
		}
		ctUTC(t, "memories[].created_at", h.CreatedAt)
	}
	for _, want := range []string{"User prefers metric units.", "Metric units everywhere, across agents."} {
		if !got[want] {
			t.Errorf("recall lacks %q: %v", want, got)
		}
	}
	for _, not := range []string{"User prefers metric units for other things.", "User prefers metric units, says v."} {
		if got[not] {
			t.Errorf("recall returned %q (another agent's or user's)", not)
		}
	}
	if len(c.Memories) != 4 {
		t.Errorf("%d memories, want the 4 of the agent and agent-less", len(c.Memories))
	}

	// The same ranking as recall.
	rr := e.call(u.token, "recall", map[string]any{"query": "metric units", "k": 10, "agent": "bot"}).must(t, http.StatusOK)
	var recalled []string
	for _, h := range list(rr.body["results"]) {
		recalled = append(recalled, str(obj(h)["id"]))
	}
	var ids []string
	for _, h := range c.Memories {
		ids = append(ids, h.ID)
	}
	if !reflect.DeepEqual(ids, recalled) {
		t.Errorf("get-context memories %v, recall %v", ids, recalled)
	}
	if c1 := ctGet(t, e, u.token, map[string]any{"session_id": sid, "agent": "bot", "query": "metric units", "recall_k": 1}); len(c1.Memories) != 1 || c1.Memories[0].ID != ids[0] {
		t.Errorf("recall_k 1: %+v, want the best of %v", c1.Memories, ids)
	}
	if def := ctGet(t, e, u.token, map[string]any{"session_id": sid, "agent": "bot", "query": "metric units"}); len(def.Memories) != 4 {
		t.Errorf("default recall_k: %d memories", len(def.Memories))
	}
	for name, body := range map[string]map[string]any{
		"recall_k 0":  {"session_id": sid, "agent": "bot", "query": "metric units", "recall_k": 0},
		"no query":    {"session_id": sid, "agent": "bot", "recall_k": 10},
		"empty query": {"session_id": sid, "agent": "bot", "query": "", "recall_k": 10},
	} {
		t.Run(name, func(t *testing.T) {
			if c := ctGet(t, e, u.token, body); len(c.Memories) != 0 {
				t.Errorf("%s: %d memories, want none", name, len(c.Memories))
			}
		})
	}
	wantProblem(t, e.call(u.token, "get-context", map[string]any{"session_id": sid, "query": "metric", "recall_k": 51}),
		http.StatusBadRequest, "invalid_request", "recall_k")
}

func TestGetContextUserData(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.NewString()
	r := e.call(u.token, "get-context", map[string]any{"session_id": sid}).must(t, http.StatusOK)
	for _, frag := range []string{`"user_memory":{}`, `"state":null`, `"notes":null`, `"memories":[]`, `"messages":[]`} {
		if !strings.Contains(string(r.raw), frag) {
			t.Errorf("empty user: %s lacks %s", r.raw, frag)
		}
	}

	e.exec(`insert into agentmem.user_memory (user_id, key, value) values ($1, 'profile', '{"name":"Ada"}'), ($1, 'prefs', '{"units":"metric"}')`, u.id)
	e.exec(`insert into agentmem.user_state (user_id, mode) values ($1, 'halted')`, u.id)
	e.exec(`insert into agentmem.notes (user_id, agent, content) values ($1, 'default', $2), ($1, 'other', 'other agent notes')`, u.id, "# Ada\n- likes tea")
	// Rows of the same user id in another tenant, and of another user, stay out.
	e.exec(`insert into agentmem.user_memory (user_id, tenant_id, key, value) values ($1, 'tenant-x', 'leak', '{}')`, u.id)
	v := e.newUser("")
	e.exec(`insert into agentmem.user_memory (user_id, key, value) values ($1, 'leak', '{}')`, v.id)
	e.exec(`insert into agentmem.user_state (user_id, mode) values ($1, 'leak')`, v.id)

	c := ctGet(t, e, u.token, map[string]any{"session_id": sid})
	gotMem := map[string]any{}
	for k, val := range c.UserMemory {
		var v any
		if err := json.Unmarshal(val, &v); err != nil {
			t.Fatal(err)
		}
		gotMem[k] = v
	}
	if want := map[string]any{"profile": map[string]any{"name": "Ada"}, "prefs": map[string]any{"units": "metric"}}; !reflect.DeepEqual(gotMem, want) {
		t.Errorf("user_memory %v, want %v", gotMem, want)
	}
	if c.State == nil || *c.State != "halted" {
		t.Errorf("state %v, want halted", c.State)
	}
	if c.Notes == nil || *c.Notes != "# Ada\n- likes tea" {
		t.Errorf("notes %v, want the default agent's", c.Notes)
	}
	c = ctGet(t, e, u.token, map[string]any{"session_id": sid, "agent": "other"})
	if c.Notes == nil || *c.Notes != "other agent notes" || len(c.UserMemory) != 2 {
		t.Errorf("agent other: notes %v, %d user_memory keys", c.Notes, len(c.UserMemory))
	}
	c = ctGet(t, e, u.token, map[string]any{"session_id": sid, "agent": "third"})
	if c.Notes != nil {
		t.Errorf("an agent without notes got %q", *c.Notes)
	}
	// The same user id in another tenant sees its own tenant's rows only.
	c = ctGet(t, e, ctToken(t, u.id, "tenant-x"), map[string]any{"session_id": sid})
	if len(c.UserMemory) != 1 || c.UserMemory["leak"] == nil || c.State != nil || c.Notes != nil {
		t.Errorf("tenant-x: %+v", c)
	}
}
