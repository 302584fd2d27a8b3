package memory_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/shared/memory"
)

// Check takes every message commit-turn stores and refuses what the database never holds.
func TestMessageCheck(t *testing.T) {
	t.Parallel()
	id := "call_1"
	call := []memory.ToolCall{{ID: id, Type: "function", Function: memory.FunctionCall{Name: "f", Arguments: "{}"}}}
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"type":"text","text":"x"},`, memory.MaxContentParts+1), ",") + "]"
	for _, c := range []struct {
		name string
		m    memory.Message
		ok   bool
	}{
		{"user text", memory.Message{Role: "user", Content: "hi"}, true},
		{"system with metadata", memory.Message{Role: "system", Content: "x", Metadata: json.RawMessage(` {"k":[1]} `)}, true},
		{"parts", memory.Message{Role: "user", Parts: json.RawMessage(`[{"type":"text","text":"hi"},{"type":"image_url","image_url":{}}]`)}, true},
		{"assistant call", memory.Message{Role: "assistant", ToolCalls: call}, true},
		{"tool result", memory.Message{Role: "tool", Content: "r", ToolCallID: &id}, true},
		{"no role", memory.Message{Content: "hi"}, false},
		{"other role", memory.Message{Role: "developer", Content: "hi"}, false},
		{"parts not JSON", memory.Message{Role: "user", Parts: json.RawMessage(`[{"type":"text"`)}, false},
		{"parts null", memory.Message{Role: "user", Parts: json.RawMessage(`null`)}, false},
		{"parts empty", memory.Message{Role: "user", Parts: json.RawMessage(`[]`)}, false},
		{"parts an object", memory.Message{Role: "user", Parts: json.RawMessage(`{"type":"text"}`)}, false},
		{"part without type", memory.Message{Role: "user", Parts: json.RawMessage(`[{"text":"hi"}]`)}, false},
		{"part null", memory.Message{Role: "user", Parts: json.RawMessage(`[null]`)}, false},
		{"part type a number", memory.Message{Role: "user", Parts: json.RawMessage(`[{"type":1}]`)}, false},
		{"too many parts", memory.Message{Role: "user", Parts: json.RawMessage(many)}, false},
		{"metadata not JSON", memory.Message{Role: "user", Metadata: json.RawMessage(`{"k":`)}, false},
		{"metadata an array", memory.Message{Role: "user", Metadata: json.RawMessage(`[]`)}, false},
		{"metadata null", memory.Message{Role: "user", Metadata: json.RawMessage(`null`)}, false},
		{"metadata two objects", memory.Message{Role: "user", Metadata: json.RawMessage(`{} {}`)}, false},
		{"user call", memory.Message{Role: "user", Content: "hi", ToolCalls: call}, false},
		{"tool without id", memory.Message{Role: "tool", Content: "r"}, false},
		{"user with a call id", memory.Message{Role: "user", Content: "r", ToolCallID: &id}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.m.Check()
			if (err == nil) != c.ok {
				t.Fatalf("Check() = %v, want ok %v", err, c.ok)
			}
		})
	}
}
