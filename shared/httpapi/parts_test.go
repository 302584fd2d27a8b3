package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/memory"
)

// ---- content parts (contract v1.1) ----

const ptPNG = "data:image/png;base64,iVBORw0KGgo="

// ptParts is a content array.
func ptParts(parts ...any) []any { return parts }

func ptText(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func ptImage(url string) map[string]any {
	return map[string]any{"type": "image_url", "image_url": map[string]any{"url": url, "detail": "low"}}
}

var ptAudio = map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": "UklGRg==", "format": "wav"}}

// ptSame requires two JSON values to be equal, whatever their spacing and key order.
func ptSame(t *testing.T, what string, got, want any) {
	t.Helper()
	norm := func(v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if raw, ok := v.(json.RawMessage); ok {
			b = raw
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return out
	}
	if g, w := norm(got), norm(want); !reflect.DeepEqual(g, w) {
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		t.Errorf("%s:\n got  %s\n want %s", what, gb, wb)
	}
}

// A turn whose messages carry content parts is stored with its text in content and its parts
// as committed, and every format that can carry content parts gives them back as committed.
func TestCommitTurnContentParts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	userParts := ptParts(ptText("What is on this picture?"), ptImage(ptPNG), ptAudio, ptText("Be brief."))
	systemParts := ptParts(ptText("You describe pictures."))
	toolParts := ptParts(ptText("cat, 0.98"))
	sent := []map[string]any{
		ctMsg("system", "", "content", systemParts),
		ctMsg("user", "", "content", userParts),
		ctMsg("assistant", "", "tool_calls", []any{ctToolCall("c1", "classify", `{"image":0}`)}),
		ctMsg("tool", "", "content", toolParts, "tool_call_id", "c1"),
		ctMsg("assistant", "A cat."),
	}
	res := ctCommit(t, e, u.token, ctTurn(sid, sent...))

	// The database holds the text for search and budgets, and the parts beside it.
	wantText := []string{"You describe pictures.", "What is on this picture?\nBe brief.", "", "cat, 0.98", "A cat."}
	for i, m := range ctMessages(t, e, sid) {
		if m.Content != wantText[i] {
			t.Errorf("stored content %d = %q, want %q", i, m.Content, wantText[i])
		}
	}
	if n := ctScalar[int](t, e, `select count(*) from agentmem.messages where session_id = $1 and parts is not null`, sid); n != 3 {
		t.Errorf("%d messages with parts, want 3", n)
	}
	if got, want := ctScalar[int](t, e, `select token_estimate from agentmem.messages where session_id = $1 and seq = 2`, sid),
		memory.EstimateTokens(wantText[1], nil, nil, nil); got != want {
		t.Errorf("token estimate %d, want %d (of the text)", got, want)
	}

	content := func(m map[string]any) any {
		if c, ok := m["content"]; ok {
			return c
		}
		return nil
	}
	wantContent := []any{systemParts, userParts, "", toolParts, "A cat."}
	// raw and the default.
	raw := e.call(u.token, "get-context", map[string]any{"session_id": sid.String()}).must(t, http.StatusOK)
	for i, m := range list(raw.body["messages"]) {
		ptSame(t, fmt.Sprintf("raw messages[%d].content", i), content(obj(m)), wantContent[i])
		if obj(m)["id"] != res.Messages[i].ID {
			t.Errorf("raw messages[%d].id = %v, want %s", i, obj(m)["id"], res.Messages[i].ID)
		}
	}
	if u := obj(raw.body["usage"]); u["messages"] != 5.0 {
		t.Errorf("usage %v", u)
	}
	// openai: null for the assistant with tool calls and no text.
	oa := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "format": "openai"}).must(t, http.StatusOK)
	wantOpenAI := []any{systemParts, userParts, nil, toolParts, "A cat."}
	for i, m := range list(oa.body["messages"]) {
		ptSame(t, fmt.Sprintf("openai messages[%d].content", i), content(obj(m)), wantOpenAI[i])
	}
	// langchain: in data.
	lc := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "format": "langchain"}).must(t, http.StatusOK)
	for i, m := range list(lc.body["messages"]) {
		ptSame(t, fmt.Sprintf("langchain messages[%d].data.content", i), content(obj(obj(m)["data"])), wantContent[i])
	}
	// History gives the content as committed too, newest first and oldest first.
	for _, order := range []string{"oldest", "newest"} {
		h := e.call(u.token, "sessions", map[string]any{"op": "history", "session_id": sid.String(), "order": order}).must(t, http.StatusOK)
		msgs := list(h.body["messages"])
		for i, m := range msgs {
			k := i
			if order == "newest" {
				k = len(msgs) - 1 - i
			}
			ptSame(t, fmt.Sprintf("history (%s) messages[%d].content", order, i), content(obj(m)), wantContent[k])
		}
	}
	// anthropic: blocks where a mapping exists; the audio part is dropped and counted.
	an := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "format": "anthropic"}).must(t, http.StatusOK)
	ctKeys(t, "anthropic answer", an.body, "session_id", "system", "messages", "memories", "user_memory", "state", "notes", "summary", "usage")
	if an.body["system"] != "You describe pictures." {
		t.Errorf("system = %v", an.body["system"])
	}
	ptSame(t, "anthropic messages", an.body["messages"], []any{
		map[string]any{"role": "user", "content": []any{
			ptText("What is on this picture?"),
			map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
			ptText("Be brief.")}},
		map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "tool_use", "id": "c1", "name": "classify", "input": map[string]any{"image": 0}}}},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "c1", "content": []any{ptText("cat, 0.98")}}}},
		map[string]any{"role": "assistant", "content": "A cat."},
	})
	ptSame(t, "anthropic usage", an.body["usage"], map[string]any{"messages": 5, "token_estimate": obj(raw.body["usage"])["token_estimate"],
		"truncated": false, "dropped_messages": 0, "dropped_parts": 1})
}

// Every malformed content is a 400 naming its path, with nothing stored.
func TestCommitTurnContentPartsValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	// big is a non-text part of exactly n bytes of compact JSON.
	big := func(n int) map[string]any {
		p := map[string]any{"type": "image_url", "image_url": map[string]any{"url": ""}}
		b, _ := json.Marshal(p)
		p["image_url"] = map[string]any{"url": strings.Repeat("a", n-len(b))}
		return p
	}
	if b, _ := json.Marshal(big(64 << 10)); len(b) != 64<<10 {
		t.Fatalf("big(64 KiB) is %d bytes", len(b))
	}
	n := func(k int, part any) []any {
		out := make([]any, k)
		for i := range out {
			out[i] = part
		}
		return out
	}
	second := func(content any) []map[string]any {
		return []map[string]any{ctMsg("user", "first"), ctMsg("user", "", "content", content)}
	}
	cases := []struct {
		name   string
		msgs   []map[string]any
		status int
		field  string
	}{
		{"empty array", second([]any{}), 400, "messages[1].content"},
		{"101 parts", second(n(101, ptText("x"))), 400, "messages[1].content"},
		{"part without type", second(ptParts(ptText("a"), map[string]any{"text": "b"})), 400, "messages[1].content[1].type"},
		{"type null", second(ptParts(map[string]any{"type": nil, "text": "b"})), 400, "messages[1].content[0].type"},
		{"type a number", second(ptParts(map[string]any{"type": 3})), 400, "messages[1].content[0].type"},
		{"type empty", second(ptParts(map[string]any{"type": ""})), 400, "messages[1].content[0].type"},
		{"text part without text", second(ptParts(ptText("a"), ptImage(ptPNG), map[string]any{"type": "text"})), 400, "messages[1].content[2].text"},
		{"text part with null text", second(ptParts(map[string]any{"type": "text", "text": nil})), 400, "messages[1].content[0].text"},
		{"text part with a number", second(ptParts(map[string]any{"type": "text", "text": 5})), 400, "messages[1].content[0].text"},
		{"text part with an object", second(ptParts(map[string]any{"type": "text", "text": map[string]any{"value": "x"}})), 400, "messages[1].content[0].text"},
		{"part a string", second(ptParts(ptText("a"), "b")), 400, "messages[1].content[1]"},
		{"part an array", second(ptParts([]any{ptText("a")})), 400, "messages[1].content[0]"},
		{"part null", second(ptParts(nil)), 400, "messages[1].content[0]"},
		{"non-text part over 64 KiB", second(ptParts(ptText("a"), big(64<<10+1))), 400, "messages[1].content[1]"},
		{"text over 100,000 characters", second(ptParts(ptText(strings.Repeat("a", 60_000)), ptText(strings.Repeat("b", 40_000)))), 400, "messages[1].content"},
		{"content an object", second(ptText("a")), 400, "messages[1].content"},
		{"content a boolean", second(true), 400, "messages[1].content"},
		{"repeated key in a part", nil, 400, "messages[0].content[0].text"},
		{"unpaired surrogate in a part", nil, 400, "messages[0].content[0].image_url.url"},
		{"NUL in a part", nil, 400, ""},

		// The edges that are valid.
		{"100 parts", second(n(100, ptText("x"))), 201, ""},
		{"non-text part of exactly 64 KiB", second(ptParts(big(64 << 10))), 201, ""},
		{"image only", second(ptParts(ptImage(ptPNG))), 201, ""},
		{"empty text part", second(ptParts(ptText(""))), 201, ""},
		{"unknown part type kept", second(ptParts(map[string]any{"type": "x-custom", "payload": map[string]any{"a": []any{1, 2}}})), 201, ""},
		{"text of 100,000 characters across parts", second(ptParts(ptText(strings.Repeat("a", 60_000)), ptText(strings.Repeat("b", 39_999)))), 201, ""},
		{"parts on an assistant with tool_calls", []map[string]any{
			ctMsg("assistant", "", "content", ptParts(ptText("checking")), "tool_calls", []any{ctToolCall("c1", "f", "{}")}),
			ctMsg("tool", "", "content", ptParts(ptText("ok")), "tool_call_id", "c1")}, 201, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := ctFor(e, t)
			u := e.newUser("")
			sid := uuid.New()
			var body any = ctTurn(sid, tc.msgs...)
			switch tc.name {
			case "repeated key in a part":
				body = fmt.Sprintf(`{"session_id":%q,"messages":[{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}]}`, sid)
			case "unpaired surrogate in a part":
				body = fmt.Sprintf(`{"session_id":%q,"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"\ud800"}}]}]}`, sid)
			case "NUL in a part":
				body = fmt.Sprintf(`{"session_id":%q,"messages":[{"role":"user","content":[{"type":"x","v":"a\u0000b"}]}]}`, sid)
			}
			r := e.call(u.token, "commit-turn", body)
			if tc.status == http.StatusCreated {
				r.must(t, http.StatusCreated)
				if got := e.count("messages", "session_id = $1 and user_id = $2", sid, u.id); got != len(tc.msgs) {
					t.Errorf("%d messages stored, want %d", got, len(tc.msgs))
				}
				return
			}
			wantProblem(t, r, tc.status, "invalid_request", tc.field)
			ctNothingStored(t, e, u.id)
		})
	}
}

// A retry with the same key and the same parts replays; the same key with parts that differ in
// any way, or with the same text as a string, is a conflict.
func TestCommitTurnIdempotentReplayWithParts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	turn := func(content any) map[string]any {
		return ctTurn(sid, ctMsg("user", "", "content", content), ctMsg("assistant", "A cat."))
	}
	parts := ptParts(ptText("look"), ptImage(ptPNG), ptText("here"))
	key := "parts-" + uuid.NewString()
	first := e.call(u.token, "commit-turn", turn(parts), "Idempotency-Key", key).must(t, http.StatusCreated)
	spaced, _ := json.MarshalIndent(turn(parts), "", "  ")
	for _, b := range []any{turn(parts), string(spaced)} {
		again := e.call(u.token, "commit-turn", b, "Idempotency-Key", key).must(t, http.StatusCreated)
		if again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.raw, first.raw) {
			t.Errorf("not replayed: %s", again.raw)
		}
	}
	for name, other := range map[string]any{
		"another image":           ptParts(ptText("look"), ptImage("data:image/png;base64,AAAA"), ptText("here")),
		"another detail":          ptParts(ptText("look"), map[string]any{"type": "image_url", "image_url": map[string]any{"url": ptPNG, "detail": "high"}}, ptText("here")),
		"parts in another order":  ptParts(ptImage(ptPNG), ptText("look"), ptText("here")),
		"the same text as string": "look\nhere",
		"without the image":       ptParts(ptText("look"), ptText("here")),
	} {
		t.Run(name, func(t *testing.T) {
			r := e.call(u.token, "commit-turn", turn(other), "Idempotency-Key", key)
			if r.status != http.StatusConflict {
				t.Errorf("%s: status %d, want 409: %s", name, r.status, r.raw)
			}
		})
	}
	if n := e.count("messages", "session_id = $1", sid); n != 2 {
		t.Errorf("%d messages, want 2", n)
	}
	c := e.call(u.token, "get-context", map[string]any{"session_id": sid.String()}).must(t, http.StatusOK)
	ptSame(t, "content", obj(list(c.body["messages"])[0])["content"], parts)
}

// get-context's since, answers_only and format: bad values are 400 naming the field; since
// keeps the messages created at or after it; answers_only only the answers, in every format.
func TestGetContextSinceAnswersOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	for name, body := range map[string]map[string]any{
		"since":        {"since": "yesterday"},
		"answers_only": {"answers_only": "yes"},
		"format":       {"format": "gemini"},
	} {
		t.Run(name, func(t *testing.T) {
			body["session_id"] = sid.String()
			r := e.call(u.token, "get-context", body)
			wantProblem(t, r, http.StatusBadRequest, "invalid_request", name)
		})
	}
	for _, bad := range []string{"2026-01-02", "2026-01-02T15:04:05", "2026-13-02T15:04:05Z", "1767366245", ""} {
		t.Run(bad, func(t *testing.T) {
			r := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "since": bad})
			wantProblem(t, r, http.StatusBadRequest, "invalid_request", "since")
		})
	}
	r := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "format": "Anthropic"})
	wantProblem(t, r, http.StatusBadRequest, "invalid_request", "format")

	ctCommit(t, e, u.token, ctTurn(sid, ctMsg("user", "old"), ctMsg("assistant", "old answer")))
	// The first turn happened two hours ago.
	conn := e.adminConn()
	if _, err := conn.Exec(t.Context(), `update agentmem.messages set created_at = now() - interval '2 hours' where session_id = $1`, sid); err != nil {
		t.Fatal(err)
	}
	conn.Close(t.Context())
	ctCommit(t, e, u.token, ctTurn(sid, ctMsg("user", "weather?"), ctCalls("c1"), ctResult("c1"),
		ctMsg("assistant", "Checking tomorrow too.", "tool_calls", []any{ctToolCall("c2", "lookup", "{}")}), ctResult("c2"),
		ctMsg("assistant", "Rain, then sun.")))

	contents := func(body map[string]any) []string {
		body["session_id"] = sid.String()
		c := ctGet(t, e, u.token, body)
		return ctContents(c.Messages)
	}
	hourAgo := time.Now().Add(-time.Hour).UTC()
	for _, since := range []string{hourAgo.Format(time.RFC3339), hourAgo.In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano)} {
		if got := contents(map[string]any{"since": since}); len(got) != 6 || got[0] != "weather?" {
			t.Errorf("since %s: %q", since, got)
		}
	}
	if got := contents(map[string]any{"since": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}); len(got) != 0 {
		t.Errorf("since the future: %q", got)
	}
	answers := []string{"old", "old answer", "weather?", "Checking tomorrow too.", "Rain, then sun."}
	if got := contents(map[string]any{"answers_only": true}); !reflect.DeepEqual(got, answers) {
		t.Errorf("answers only: %q, want %q", got, answers)
	}
	if got := contents(map[string]any{"answers_only": true, "since": hourAgo.Format(time.RFC3339), "max_messages": 2}); !reflect.DeepEqual(got, answers[3:]) {
		t.Errorf("answers only since an hour ago, 2 messages: %q", got)
	}
	if got := contents(map[string]any{"answers_only": false}); len(got) != 8 {
		t.Errorf("answers_only false: %q", got)
	}
	for _, format := range []string{"openai", "langchain", "anthropic"} {
		r := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "answers_only": true, "format": format}).must(t, http.StatusOK)
		for _, trace := range []string{`"c1"`, `"c2"`, "lookup", "tool_use", `"role":"tool"`, `"type":"tool"`} {
			if strings.Contains(string(r.raw), trace) {
				t.Errorf("%s, answers only, carries tool traffic (%s): %s", format, trace, r.raw)
			}
		}
		// anthropic merges the two last assistant messages.
		if n := len(list(r.body["messages"])); (format == "anthropic" && n != 4) || (format != "anthropic" && n != len(answers)) {
			t.Errorf("%s, answers only: %d messages", format, n)
		}
	}
}

// In the anthropic format, assistant messages before the first user message are dropped with
// their tool results and counted; the other formats carry them.
func TestGetContextAnthropicLeadingAssistant(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	ctCommit(t, e, u.token, ctTurn(sid, ctMsg("system", "Be kind."), ctMsg("assistant", "Welcome back!"), ctCalls("c1"), ctResult("c1"),
		ctMsg("user", "hi"), ctMsg("user", "are you there?"), ctMsg("assistant", "Yes.")))
	raw := ctGet(t, e, u.token, map[string]any{"session_id": sid.String()})
	an := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "format": "anthropic"}).must(t, http.StatusOK)
	if an.body["system"] != "Be kind." {
		t.Errorf("system = %v", an.body["system"])
	}
	ptSame(t, "anthropic messages", an.body["messages"], []any{
		map[string]any{"role": "user", "content": []any{ptText("hi"), ptText("are you there?")}},
		map[string]any{"role": "assistant", "content": "Yes."},
	})
	tokens := 0
	for _, m := range raw.Messages {
		if m.Role == "system" || m.Seq >= 5 {
			tokens += memory.EstimateTokens(m.Content, m.Name, m.ToolCalls, m.ToolCallID)
		}
	}
	ptSame(t, "usage", an.body["usage"], map[string]any{"messages": 4, "token_estimate": tokens, "truncated": false,
		"dropped_messages": 3, "dropped_parts": 0})
	lc := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "format": "langchain"}).must(t, http.StatusOK)
	var types []string
	for _, m := range list(lc.body["messages"]) {
		types = append(types, str(obj(m)["type"]))
	}
	if want := []string{"system", "ai", "ai", "tool", "human", "human", "ai"}; !reflect.DeepEqual(types, want) {
		t.Errorf("langchain types %v, want %v", types, want)
	}
}
