// Package chatformat renders stored messages as the message lists of LLM APIs and frameworks
// take them: the Chat Completions API (OpenAI), the Messages API (Anthropic) and LangChain's
// stored messages. Each rendering keeps the tool-call rule of its input: the window it is
// given never has a call without its results nor a result without its call, and no rendering
// leaves out one without the other.
package chatformat

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/agentmem/agentmem/shared/memory"
)

// OpenAIMessage is exactly a message object of the Chat Completions API.
type OpenAIMessage struct {
	Role string `json:"role"`
	// Content is a string, the content parts as committed, or null (an assistant message with
	// tool calls and no text).
	Content    json.RawMessage   `json:"content"`
	Name       *string           `json:"name,omitempty"`
	ToolCalls  []memory.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID *string           `json:"tool_call_id,omitempty"`
}

// OpenAI renders msgs as Chat Completions messages: content as committed (a string or content
// parts), null for an assistant message with tool calls and empty content; names the API
// takes (see openAIName), on every role but tool.
func OpenAI(msgs []memory.Message) []OpenAIMessage {
	out := make([]OpenAIMessage, len(msgs))
	for i, m := range msgs {
		om := OpenAIMessage{Role: m.Role, Content: committed(m), ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls}
		if m.Role == memory.RoleAssistant && len(m.ToolCalls) > 0 && m.Parts == nil && m.Content == "" {
			om.Content = nil
		}
		// The API takes a name on user, system and assistant messages only.
		if m.Role != memory.RoleTool && m.Name != nil {
			om.Name = openAIName(*m.Name)
		}
		out[i] = om
	}
	return out
}

// committed is a message's content as committed: its parts, or its string.
func committed(m memory.Message) json.RawMessage {
	if m.Parts != nil {
		return m.Parts
	}
	b, _ := json.Marshal(m.Content) // a string always marshals
	return b
}

// maxOpenAINameLen is the longest name the Chat Completions API takes.
const maxOpenAINameLen = 64

// openAINameOK reports whether the Chat Completions API takes name as it is.
func openAINameOK(name string) bool {
	if len(name) < 1 || len(name) > maxOpenAINameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !idChar(name[i]) {
			return false
		}
	}
	return true
}

// idChar reports whether c is one of the characters LLM APIs take in names and ids:
// A-Z a-z 0-9 _ -.
func idChar(c byte) bool {
	return c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// openAIName makes a stored name one the Chat Completions API takes (^[a-zA-Z0-9_-]{1,64}$):
// each run of other characters becomes one "_", and the result is cut to 64 characters. A
// changed name with no letter or digit of that set left names nobody, and is omitted (nil).
// Names that fit are unchanged; the raw format always gives the name as stored.
func openAIName(name string) *string {
	if openAINameOK(name) {
		return &name
	}
	var b strings.Builder
	useful, gap := false, false
	for _, r := range name {
		if !(r < 0x80 && (r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r))) {
			gap = b.Len() > 0
			continue
		}
		if gap {
			b.WriteByte('_')
			gap = false
		}
		b.WriteRune(r)
		useful = useful || (r != '_' && r != '-')
	}
	if !useful {
		return nil
	}
	out := b.String()
	if len(out) > maxOpenAINameLen {
		out = out[:maxOpenAINameLen] // ASCII only: a byte is a character
	}
	return &out
}
