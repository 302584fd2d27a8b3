package chatformat_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/chatformat"
	"github.com/agentmem/agentmem/shared/memory"
)

// ---- message factories: seq order, ten tokens each ----

type msgs struct{ list []memory.Message }

func (b *msgs) add(m memory.Message) *msgs {
	m.ID = uuid.NewString()
	m.Seq = int64(len(b.list) + 1)
	m.Tokens = 10
	b.list = append(b.list, m)
	return b
}

func (b *msgs) text(role, content string) *msgs {
	return b.add(memory.Message{Role: role, Content: content})
}

func (b *msgs) parts(role, parts string) *msgs {
	text, err := memory.ContentText(json.RawMessage(parts))
	if err != nil {
		panic(err)
	}
	return b.add(memory.Message{Role: role, Content: text, Parts: json.RawMessage(parts)})
}

func (b *msgs) partsResult(id, parts string) *msgs {
	b.parts(memory.RoleTool, parts)
	b.list[len(b.list)-1].ToolCallID = &id
	return b
}

func (b *msgs) calls(content string, ids ...string) *msgs {
	m := memory.Message{Role: memory.RoleAssistant, Content: content}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, memory.ToolCall{ID: id, Type: "function",
			Function: memory.FunctionCall{Name: "lookup", Arguments: `{"q": "` + id + `"}`}})
	}
	return b.add(m)
}

func (b *msgs) result(id, content string) *msgs {
	return b.add(memory.Message{Role: memory.RoleTool, Content: content, ToolCallID: &id})
}

// jsonEq requires got, marshalled, to be the JSON want (compared as values).
func jsonEq(t *testing.T, what string, got any, want string) {
	t.Helper()
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want of %s: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got  %s\n want %s", what, b, want)
	}
}

const (
	png   = `data:image/png;base64,iVBORw0KGgo=`
	pdf   = `data:application/pdf;base64,JVBERi0xLjQ=`
	audio = `{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}`
)

func TestAnthropic(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		in       *msgs
		system   string // "" means null
		messages string
		carried  int
		dropped  int
		parts    int
	}{
		{
			name:     "plain turns keep string content",
			in:       new(msgs).text("user", "hi").text("assistant", "hello"),
			messages: `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`,
			carried:  2,
		},
		{
			name:     "system messages leave the list, joined by blank lines",
			in:       new(msgs).text("system", "Be brief.").text("user", "hi").text("system", "Use metric.").text("user", "again"),
			system:   "Be brief.\n\nUse metric.",
			messages: `[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":"again"}]}]`,
			carried:  4,
		},
		{
			name: "tool calls become tool_use, results a user message right after",
			in:   new(msgs).text("user", "weather?").calls("Checking.", "c1", "c2").result("c1", "rain").result("c2", "snow").text("assistant", "Rain and snow."),
			messages: `[{"role":"user","content":"weather?"},
			  {"role":"assistant","content":[{"type":"text","text":"Checking."},
			    {"type":"tool_use","id":"c1","name":"lookup","input":{"q":"c1"}},
			    {"type":"tool_use","id":"c2","name":"lookup","input":{"q":"c2"}}]},
			  {"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"rain"},
			    {"type":"tool_result","tool_use_id":"c2","content":"snow"}]},
			  {"role":"assistant","content":"Rain and snow."}]`,
			carried: 5,
		},
		{
			name: "a user message after results merges behind them",
			in:   new(msgs).text("user", "go").calls("", "c1").result("c1", "done").text("user", "thanks"),
			messages: `[{"role":"user","content":"go"},
			  {"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"lookup","input":{"q":"c1"}}]},
			  {"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"done"},{"type":"text","text":"thanks"}]}]`,
			carried: 4,
		},
		{
			name:     "leading assistant messages and their results are dropped",
			in:       new(msgs).text("system", "sys").calls("", "c1").result("c1", "r").text("assistant", "so").text("user", "hi"),
			system:   "sys",
			messages: `[{"role":"user","content":"hi"}]`,
			carried:  2, dropped: 3,
		},
		{
			name:     "no user message at all",
			in:       new(msgs).text("assistant", "hello").text("assistant", "anyone?"),
			messages: `[]`,
			dropped:  2,
		},
		{
			name: "image parts map to image blocks, audio is dropped",
			in: new(msgs).parts("user", `[{"type":"text","text":"what is this?"},
			  {"type":"image_url","image_url":{"url":"https://example.com/cat.jpg","detail":"high"}},
			  {"type":"image_url","image_url":{"url":"`+png+`"}},`+audio+`]`),
			messages: `[{"role":"user","content":[{"type":"text","text":"what is this?"},
			  {"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}},
			  {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}]`,
			carried: 1, parts: 1,
		},
		{
			name: "a PDF file part maps to a document",
			in:   new(msgs).parts("user", `[{"type":"file","file":{"filename":"a.pdf","file_data":"`+pdf+`"}},{"type":"file","file":{"file_id":"file-1"}}]`),
			messages: `[{"role":"user","content":[{"type":"document","title":"a.pdf",
			  "source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQ="}}]}]`,
			carried: 1, parts: 1,
		},
		{
			name: "images the API cannot take are dropped",
			in: new(msgs).parts("user", `[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/svg+xml;base64,PHN2Zz4="}},
			  {"type":"image_url","image_url":{"url":"ftp://example.com/a.png"}},{"type":"image_url","image_url":"https://example.com/b.png"}]`),
			messages: `[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"url","url":"https://example.com/b.png"}}]}]`,
			carried:  1, parts: 2,
		},
		{
			name:     "a message left with nothing is dropped",
			in:       new(msgs).text("user", "hi").parts("user", `[`+audio+`]`).text("assistant", "  "),
			messages: `[{"role":"user","content":"hi"}]`,
			carried:  1, dropped: 2,
		},
		{
			name:     "blank text parts are left out, not counted",
			in:       new(msgs).parts("user", `[{"type":"text","text":""},{"type":"text","text":"x"},{"type":"text","text":" \n"}]`),
			messages: `[{"role":"user","content":[{"type":"text","text":"x"}]}]`,
			carried:  1,
		},
		{
			name: "tool results with parts, and an empty one",
			in: new(msgs).text("user", "go").calls("", "c1", "c2").
				partsResult("c1", `[{"type":"text","text":"chart"},{"type":"image_url","image_url":{"url":"`+png+`"}},`+audio+`]`).
				partsResult("c2", `[`+audio+`]`),
			messages: `[{"role":"user","content":"go"},
			  {"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"lookup","input":{"q":"c1"}},{"type":"tool_use","id":"c2","name":"lookup","input":{"q":"c2"}}]},
			  {"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"chart"},
			    {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},
			    {"type":"tool_result","tool_use_id":"c2"}]}]`,
			carried: 4, parts: 2,
		},
		{
			name:     "non-text parts of a system message are dropped",
			in:       new(msgs).parts("system", `[{"type":"text","text":"rules"},`+audio+`]`).text("user", "hi"),
			system:   "rules",
			messages: `[{"role":"user","content":"hi"}]`,
			carried:  2, parts: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := chatformat.Anthropic(tc.in.list)
			switch {
			case tc.system == "" && got.System != nil:
				t.Errorf("system = %q, want null", *got.System)
			case tc.system != "" && (got.System == nil || *got.System != tc.system):
				t.Errorf("system = %v, want %q", got.System, tc.system)
			}
			jsonEq(t, "messages", got.Messages, tc.messages)
			if got.Carried != tc.carried || got.Tokens != 10*tc.carried || got.DroppedMessages != tc.dropped || got.DroppedParts != tc.parts {
				t.Errorf("carried %d (%d tokens), dropped %d messages and %d parts; want %d (%d), %d and %d",
					got.Carried, got.Tokens, got.DroppedMessages, got.DroppedParts, tc.carried, 10*tc.carried, tc.dropped, tc.parts)
			}
			if err := anthropicRules(got.Messages); err != nil {
				t.Error(err)
			}
		})
	}
}

// Tool ids the Messages API refuses are replaced the same way in the call and its result;
// distinct ids stay distinct; arguments that are not an object are kept under "arguments".
func TestAnthropicToolIDsAndArguments(t *testing.T) {
	t.Parallel()
	in := new(msgs).text("user", "go")
	in.add(memory.Message{Role: memory.RoleAssistant, ToolCalls: []memory.ToolCall{
		{ID: "call:1", Type: "function", Function: memory.FunctionCall{Name: "f", Arguments: "not json"}},
		{ID: "call.1", Type: "function", Function: memory.FunctionCall{Name: "f", Arguments: ""}},
		{ID: "ok_id-2", Type: "function", Function: memory.FunctionCall{Name: "f", Arguments: "[1]"}},
	}})
	in.result("call:1", "a").result("call.1", "b").result("ok_id-2", "c")
	got := chatformat.Anthropic(in.list)
	if err := anthropicRules(got.Messages); err != nil {
		t.Fatal(err)
	}
	var uses []struct {
		ID    string          `json:"id"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(got.Messages[1].Content, &uses); err != nil {
		t.Fatal(err)
	}
	idRE := regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	seen := map[string]bool{}
	for _, u := range uses {
		if !idRE.MatchString(u.ID) || seen[u.ID] {
			t.Errorf("tool_use id %q: not one the API takes, or repeated", u.ID)
		}
		seen[u.ID] = true
	}
	if uses[2].ID != "ok_id-2" {
		t.Errorf("an id the API takes changed: %q", uses[2].ID)
	}
	for i, want := range []string{`{"arguments":"not json"}`, `{}`, `{"arguments":"[1]"}`} {
		if string(uses[i].Input) != want {
			t.Errorf("input %d = %s, want %s", i, uses[i].Input, want)
		}
	}
}

// anthropicRules checks what the Messages API requires of a message list: roles user and
// assistant alternating, a user message first, content blocks of known types, and each
// assistant message with tool_use blocks followed by a user message that starts with a
// tool_result for each of them (and no tool_result elsewhere).
func anthropicRules(ms []chatformat.AnthropicMessage) error {
	pending := map[string]bool{}
	for i, m := range ms {
		if (i == 0 && m.Role != "user") || (i > 0 && m.Role == ms[i-1].Role) || (m.Role != "user" && m.Role != "assistant") {
			return fmt.Errorf("message %d has role %s after %v", i, m.Role, ms[max(i-1, 0)].Role)
		}
		var blocks []struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			ToolUseID string `json:"tool_use_id"`
		}
		if m.Content[0] == '"' {
			if len(pending) > 0 {
				return fmt.Errorf("message %d does not answer tool calls %v", i, pending)
			}
			continue
		}
		if err := json.Unmarshal(m.Content, &blocks); err != nil || len(blocks) == 0 {
			return fmt.Errorf("message %d content %s: %v", i, m.Content, err)
		}
		results := true
		for _, b := range blocks {
			switch b.Type {
			case "tool_result":
				if !results || !pending[b.ToolUseID] {
					return fmt.Errorf("message %d: tool_result %q out of place", i, b.ToolUseID)
				}
				delete(pending, b.ToolUseID)
			case "tool_use":
				if m.Role != "assistant" {
					return fmt.Errorf("message %d: tool_use in a %s message", i, m.Role)
				}
				results = false
			case "text", "image", "document":
				results = false
			default:
				return fmt.Errorf("message %d: block type %q", i, b.Type)
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("message %d leaves tool calls %v unanswered", i, pending)
		}
		for _, b := range blocks {
			if b.Type == "tool_use" {
				pending[b.ID] = true
			}
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("tool calls %v unanswered at the end", pending)
	}
	return nil
}

func TestLangChain(t *testing.T) {
	t.Parallel()
	in := new(msgs).text("system", "sys").parts("user", `[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"`+png+`"}}]`)
	name := "Ada"
	in.list[1].Name = &name
	in.list[1].Metadata = json.RawMessage(`{"client":"web"}`)
	in.add(memory.Message{Role: memory.RoleAssistant, ToolCalls: []memory.ToolCall{
		{ID: "c1", Type: "function", Function: memory.FunctionCall{Name: "f", Arguments: `{"a": 1}`}},
		{ID: "c2", Type: "function", Function: memory.FunctionCall{Name: "g", Arguments: `oops`}},
	}}).result("c1", "one").result("c2", "two").text("assistant", "done")
	got := chatformat.LangChain(in.list)
	id := func(i int) string { return in.list[i].ID }
	jsonEq(t, "langchain", got, `[
	 {"type":"system","data":{"content":"sys","additional_kwargs":{},"response_metadata":{},"type":"system","name":null,"id":"`+id(0)+`"}},
	 {"type":"human","data":{"content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"`+png+`"}}],
	   "additional_kwargs":{},"response_metadata":{"client":"web"},"type":"human","name":"Ada","id":"`+id(1)+`"}},
	 {"type":"ai","data":{"content":"","additional_kwargs":{"tool_calls":[
	     {"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\": 1}"}},
	     {"id":"c2","type":"function","function":{"name":"g","arguments":"oops"}}]},
	   "response_metadata":{},"type":"ai","name":null,"id":"`+id(2)+`",
	   "tool_calls":[{"name":"f","args":{"a":1},"id":"c1","type":"tool_call"}],
	   "invalid_tool_calls":[{"name":"g","args":"oops","id":"c2","error":"arguments are not a JSON object","type":"invalid_tool_call"}]}},
	 {"type":"tool","data":{"content":"one","additional_kwargs":{},"response_metadata":{},"type":"tool","name":null,"id":"`+id(3)+`","tool_call_id":"c1"}},
	 {"type":"tool","data":{"content":"two","additional_kwargs":{},"response_metadata":{},"type":"tool","name":null,"id":"`+id(4)+`","tool_call_id":"c2"}},
	 {"type":"ai","data":{"content":"done","additional_kwargs":{},"response_metadata":{},"type":"ai","name":null,"id":"`+id(5)+`",
	   "tool_calls":[],"invalid_tool_calls":[]}}]`)
}

func TestOpenAI(t *testing.T) {
	t.Parallel()
	parts := `[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"` + png + `"}}]`
	in := new(msgs).parts("user", parts).calls("", "c1").result("c1", "r").
		parts("assistant", `[{"type":"text","text":""}]`)
	in.list[1].ToolCalls[0].Function.Arguments = `{}`
	jsonEq(t, "openai", chatformat.OpenAI(in.list), `[
	 {"role":"user","content":`+parts+`},
	 {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{}"}}]},
	 {"role":"tool","content":"r","tool_call_id":"c1"},
	 {"role":"assistant","content":[{"type":"text","text":""}]}]`)
}

func TestToolArguments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{``, `{}`, true},
		{"  \n", `{}`, true},
		{`{"a": [1, 2]}`, `{"a":[1,2]}`, true},
		{`{"a":`, ``, false},
		{`[1]`, ``, false},
		{`"x"`, ``, false},
		{`null`, ``, false},
		{`{} {}`, ``, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := chatformat.ToolArguments(tc.in)
			if ok != tc.ok || string(got) != tc.want {
				t.Errorf("ToolArguments(%q) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// FuzzAnthropic: whatever content parts and tool ids a window holds, the anthropic rendering
// never panics, follows the Messages API's rules, and accounts for every stored message.
func FuzzAnthropic(f *testing.F) {
	f.Add(`[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"`+png+`"}}]`, "call:1", "{}", true)
	f.Add(`[{"type":"image_url","image_url":"data:image/png;base64,"}]`, "", "x", false)
	f.Add(`[{"type":"file","file":{"file_data":"data:application/pdf;base64,"}},`+audio+`]`, "ok", "[", true)
	f.Add(`[{"type":"text","text":" "}]`, "a b", `{"a":1}`, false)
	f.Fuzz(func(t *testing.T, parts, id, args string, lead bool) {
		if _, err := memory.ContentText(json.RawMessage(parts)); err != nil {
			return // not an array of parts: commit-turn refuses it
		}
		in := new(msgs)
		if lead {
			in.text("assistant", "hello")
		}
		in.parts("user", parts).text("system", "sys")
		in.add(memory.Message{Role: memory.RoleAssistant, ToolCalls: []memory.ToolCall{
			{ID: id, Type: "function", Function: memory.FunctionCall{Name: "f", Arguments: args}}}})
		in.partsResult(id, parts).parts("assistant", parts)
		got := chatformat.Anthropic(in.list)
		if err := anthropicRules(got.Messages); err != nil {
			t.Fatal(err)
		}
		if got.Carried+got.DroppedMessages != len(in.list) {
			t.Fatalf("carried %d and dropped %d of %d messages", got.Carried, got.DroppedMessages, len(in.list))
		}
	})
}

// BenchmarkFormats renders a window of 500 messages (a fifth with an image part, a tool call
// and its result every tenth) in each format.
func BenchmarkFormats(b *testing.B) {
	in := new(msgs).text("system", "Be brief.")
	for i := 0; len(in.list) < 500; i++ {
		switch {
		case i%10 == 9:
			id := fmt.Sprintf("call_%d", i)
			in.calls("Looking.", id).result(id, `{"ok":true}`)
		case i%5 == 0:
			in.parts("user", `[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"`+png+`"}}]`)
		case i%2 == 0:
			in.text("user", "a question of a few words")
		default:
			in.text("assistant", "an answer of a few more words than the question")
		}
	}
	for _, f := range []struct {
		name   string
		render func([]memory.Message) any
	}{
		{"openai", func(m []memory.Message) any { return chatformat.OpenAI(m) }},
		{"langchain", func(m []memory.Message) any { return chatformat.LangChain(m) }},
		{"anthropic", func(m []memory.Message) any { return chatformat.Anthropic(m) }},
	} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := json.Marshal(f.render(in.list)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
