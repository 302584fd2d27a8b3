package chatformat_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/chatformat"
	"github.com/agentmem/agentmem/shared/memory"
)

// The openai and langchain renderings, fuzzed over windows built around one message whose
// every field comes from the fuzzer: they never panic, whatever the message; and for a window
// of messages the store can hold (memory.Message.Check), the rendering marshals to JSON of the
// format's shape, and reading it back gives each message's role, content and tool calls as
// they were.

var fuzzRoles = []string{memory.RoleUser, memory.RoleAssistant, memory.RoleSystem, memory.RoleTool}

// fuzzWindow is a window around one message m made of the fuzzer's fields: role (one of the
// four, or roleText), content (its parts when parts is set and holds some), name, metadata,
// and a tool call (id, arguments) that m makes (an assistant's) or answers (a tool's), with
// its counterpart beside it.
func fuzzWindow(role uint8, roleText, content, parts, name, callID, args, metadata string, flags uint8) []memory.Message {
	m := memory.Message{Content: content}
	if int(role) < len(fuzzRoles) {
		m.Role = fuzzRoles[role]
	} else {
		m.Role = roleText
	}
	if flags&1 != 0 {
		m.Parts = json.RawMessage(parts)
		if text, err := memory.ContentText(m.Parts); err == nil {
			m.Content = text
		}
	}
	if flags&2 != 0 {
		m.Name = &name
	}
	if flags&4 != 0 {
		m.Metadata = json.RawMessage(metadata)
	}
	call := []memory.ToolCall{{ID: callID, Type: "function", Function: memory.FunctionCall{Name: name, Arguments: args}}}
	if flags&8 != 0 || m.Role == memory.RoleTool {
		m.ToolCallID = &callID
	}
	if flags&16 != 0 || (m.Role == memory.RoleAssistant && flags&32 != 0) {
		m.ToolCalls = call
	}
	w := []memory.Message{{Role: memory.RoleSystem, Content: "Be brief."}, {Role: memory.RoleUser, Content: "hi"}}
	switch {
	case m.Role == memory.RoleTool:
		w = append(w, memory.Message{Role: memory.RoleAssistant, ToolCalls: call}, m)
	case len(m.ToolCalls) > 0:
		w = append(w, m, memory.Message{Role: memory.RoleTool, Content: "result", ToolCallID: &callID})
	default:
		w = append(w, m)
	}
	w = append(w, memory.Message{Role: memory.RoleAssistant, Content: "done"})
	for i := range w {
		w[i].ID = uuid.NewSHA1(uuid.NameSpaceOID, []byte{byte(i)}).String()
		w[i].Seq = int64(i + 1)
		w[i].Tokens = 10
	}
	return w
}

// storable reports whether every message of w is one the store can hold.
func storable(w []memory.Message) bool {
	for _, m := range w {
		if m.Check() != nil {
			return false
		}
	}
	return true
}

// addWindowSeeds adds the seeds of the window targets: the table cases' content parts, tool
// calls and names.
func addWindowSeeds(f *testing.F) {
	textParts := `[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"` + png + `"}}]`
	for _, s := range []struct {
		role                                                   uint8
		roleText, content, parts, name, callID, args, metadata string
		flags                                                  uint8
	}{
		{0, "", "My name is Ada.", "", "Ada", "", "", `{"client":"web"}`, 2 | 4},
		{0, "", "", textParts, "Ada Lovelace", "", "", "", 1 | 2},
		{1, "", "", "", "lookup", "call_1", `{"q": "units"}`, "", 32},
		{1, "", "Checking.", "", "f", "c:1", "oops", `{"model":"x","tokens":12}`, 4 | 32},
		{1, "", "", "", "g", "c2", "", "", 32},
		{3, "", `{"ok":true}`, "", "lookup", "call_1", "", "", 0},
		{3, "", "", `[{"type":"file","file":{"file_data":"` + pdf + `"}},` + audio + `]`, "", "call 1", "", "", 1},
		{2, "", "Use metric.", "", "李雷", "", "", "", 2},
		{0, "", "x", `[{"type":"text"}]`, "", "", "", `[]`, 1 | 4},
		{0, "", "x", `null`, "", "", "", `null`, 1 | 4},
		{0, "", "x", `[{"type":"text","text":`, "", "", "", `{"k":`, 1 | 4},
		{0, "", "\xff\xfe", "", "\x00", "", "", "", 2},
		{4, "developer", "hi", "", "", "", "", "", 0},
		{4, "", "hi", "", "", "id", "", "", 8 | 16},
	} {
		f.Add(s.role, s.roleText, s.content, s.parts, s.name, s.callID, s.args, s.metadata, s.flags)
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// checkContent requires content, as rendered, to be m's as committed: its parts, or its
// string (when it is valid UTF-8, which JSON keeps as it is).
func checkContent(m memory.Message, content json.RawMessage) error {
	switch {
	case m.Parts != nil:
		if !jsonEqual(content, m.Parts) {
			return fmt.Errorf("content %s, want the parts %s", content, m.Parts)
		}
	default:
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return fmt.Errorf("content %s is not a string", content)
		}
		if utf8.ValidString(m.Content) && s != m.Content {
			return fmt.Errorf("content %q, want %q", s, m.Content)
		}
	}
	return nil
}

// keysIn requires obj's keys to be among allowed.
func keysIn(obj map[string]json.RawMessage, allowed ...string) error {
	for k := range obj {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("key %q", k)
		}
	}
	return nil
}

var openAIName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// FuzzOpenAI: the Chat Completions rendering of a storable window is a list of the API's
// message objects (role of the four, content a string, the parts or null, a name the API
// takes, tool calls and tool_call_id as stored), and each reads back as memory.Message (what
// commit-turn takes) to the stored role, content and tool calls.
func FuzzOpenAI(f *testing.F) {
	addWindowSeeds(f)
	f.Fuzz(func(t *testing.T, role uint8, roleText, content, parts, name, callID, args, metadata string, flags uint8) {
		in := fuzzWindow(role, roleText, content, parts, name, callID, args, metadata, flags)
		got := chatformat.OpenAI(in)
		b, err := json.Marshal(got)
		if !storable(in) {
			return // never panics; the store never holds such a window
		}
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var objs []map[string]json.RawMessage
		var back []memory.Message
		if err := json.Unmarshal(b, &objs); err != nil || len(objs) != len(in) {
			t.Fatalf("%s does not read back as %d objects: %v", b, len(in), err)
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s does not read back as messages: %v", b, err)
		}
		for i, m := range in {
			o, r := objs[i], back[i]
			if err := keysIn(o, "role", "content", "name", "tool_calls", "tool_call_id"); err != nil {
				t.Fatalf("message %d %s: %v", i, b, err)
			}
			if r.Role != m.Role || !slices.Contains(fuzzRoles, r.Role) {
				t.Fatalf("message %d: role %q, want %q", i, r.Role, m.Role)
			}
			if m.Role == memory.RoleAssistant && len(m.ToolCalls) > 0 && m.Parts == nil && m.Content == "" {
				if string(o["content"]) != "null" {
					t.Fatalf("message %d: content %s, want null", i, o["content"])
				}
			} else if err := checkContent(m, o["content"]); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			if r.Name != nil && (m.Role == memory.RoleTool || !openAIName.MatchString(*r.Name)) {
				t.Fatalf("message %d: name %q on a %s message", i, *r.Name, m.Role)
			}
			if !reflect.DeepEqual(r.ToolCallID, m.ToolCallID) && utf8.ValidString(callID) {
				t.Fatalf("message %d: tool_call_id %v, want %v", i, r.ToolCallID, m.ToolCallID)
			}
			if len(r.ToolCalls) != len(m.ToolCalls) || (len(m.ToolCalls) > 0 && utf8.ValidString(callID+name+args) &&
				!reflect.DeepEqual(r.ToolCalls, m.ToolCalls)) {
				t.Fatalf("message %d: tool calls %+v, want %+v", i, r.ToolCalls, m.ToolCalls)
			}
		}
	})
}

var langChainTypes = map[string]string{"user": "human", "assistant": "ai", "system": "system", "tool": "tool"}

// FuzzLangChain: the LangChain rendering of a storable window is a list of stored messages
// (type human, ai, system or tool, the same in data; content the string or the parts;
// additional_kwargs and response_metadata objects, the metadata as stored; the message's id;
// on ai messages tool_calls with object args and invalid_tool_calls, one entry per stored
// call; tool_call_id on tool messages only).
func FuzzLangChain(f *testing.F) {
	addWindowSeeds(f)
	f.Fuzz(func(t *testing.T, role uint8, roleText, content, parts, name, callID, args, metadata string, flags uint8) {
		in := fuzzWindow(role, roleText, content, parts, name, callID, args, metadata, flags)
		got := chatformat.LangChain(in)
		b, err := json.Marshal(got)
		if !storable(in) {
			return // never panics; the store never holds such a window
		}
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var out []struct {
			Type string                     `json:"type"`
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(b, &out); err != nil || len(out) != len(in) {
			t.Fatalf("%s does not read back as %d messages: %v", b, len(in), err)
		}
		for i, m := range in {
			typ, d := out[i].Type, out[i].Data
			if typ != langChainTypes[m.Role] || string(d["type"]) != `"`+typ+`"` {
				t.Fatalf("message %d: type %q, data.type %s, for role %q", i, typ, d["type"], m.Role)
			}
			if err := keysIn(d, "content", "additional_kwargs", "response_metadata", "type", "name", "id", "tool_calls",
				"invalid_tool_calls", "tool_call_id"); err != nil {
				t.Fatalf("message %d %s: %v", i, b, err)
			}
			if err := checkContent(m, d["content"]); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			var kwargs, meta map[string]any
			if json.Unmarshal(d["additional_kwargs"], &kwargs) != nil || kwargs == nil ||
				json.Unmarshal(d["response_metadata"], &meta) != nil || meta == nil {
				t.Fatalf("message %d: additional_kwargs %s, response_metadata %s", i, d["additional_kwargs"], d["response_metadata"])
			}
			if m.Metadata != nil && !jsonEqual(d["response_metadata"], m.Metadata) {
				t.Fatalf("message %d: response_metadata %s, want %s", i, d["response_metadata"], m.Metadata)
			}
			if string(d["id"]) != `"`+m.ID+`"` {
				t.Fatalf("message %d: id %s, want %s", i, d["id"], m.ID)
			}
			_, hasID := d["tool_call_id"]
			if hasID != (m.Role == memory.RoleTool) {
				t.Fatalf("message %d (%s): tool_call_id %s", i, m.Role, d["tool_call_id"])
			}
			var calls []struct {
				Args json.RawMessage `json:"args"`
			}
			var invalid []json.RawMessage
			_, hasCalls := d["tool_calls"]
			_, hasInvalid := d["invalid_tool_calls"]
			if m.Role != memory.RoleAssistant {
				if hasCalls || hasInvalid {
					t.Fatalf("message %d: tool calls on a %s message", i, typ)
				}
				continue
			}
			if json.Unmarshal(d["tool_calls"], &calls) != nil || calls == nil ||
				json.Unmarshal(d["invalid_tool_calls"], &invalid) != nil || invalid == nil ||
				len(calls)+len(invalid) != len(m.ToolCalls) {
				t.Fatalf("message %d: tool_calls %s, invalid_tool_calls %s, for %d calls", i, d["tool_calls"], d["invalid_tool_calls"], len(m.ToolCalls))
			}
			for _, c := range calls {
				if a := bytes.TrimSpace(c.Args); len(a) == 0 || a[0] != '{' || !json.Valid(a) {
					t.Fatalf("message %d: args %s", i, c.Args)
				}
			}
		}
	})
}
