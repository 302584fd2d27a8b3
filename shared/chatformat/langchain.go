package chatformat

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/agentmem/agentmem/shared/memory"
)

// LangChainMessage is a message as LangChain stores it: what messages_to_dict (Python) and
// mapChatMessagesToStoredMessages (LangChain.js) write, and messages_from_dict and
// mapStoredMessagesToChatMessages read.
type LangChainMessage struct {
	// Type is human, ai, system or tool.
	Type string        `json:"type"`
	Data LangChainData `json:"data"`
}

// LangChainData is the fields of a LangChain message.
type LangChainData struct {
	// Content is the content as committed: a string or the content parts.
	Content json.RawMessage `json:"content"`
	// AdditionalKwargs holds, on an ai message with tool calls, the calls as the Chat
	// Completions API shapes them (as LangChain's ChatOpenAI writes them); {} otherwise.
	AdditionalKwargs map[string]any `json:"additional_kwargs"`
	// ResponseMetadata is the message's metadata, {} when it has none.
	ResponseMetadata json.RawMessage `json:"response_metadata"`
	Type             string          `json:"type"`
	// Name is the message's name, null when it has none, as LangChain's messages_to_dict
	// (Python) writes it; LangChain.js reads a null name as none.
	Name *string `json:"name"`
	// ID is the message's id.
	ID string `json:"id"`
	// ToolCalls and InvalidToolCalls are on ai messages only ([] when none).
	ToolCalls        *[]LangChainToolCall        `json:"tool_calls,omitempty"`
	InvalidToolCalls *[]LangChainInvalidToolCall `json:"invalid_tool_calls,omitempty"`
	// ToolCallID is on tool messages only.
	ToolCallID *string `json:"tool_call_id,omitempty"`
}

// LangChainToolCall is a tool call of an ai message whose arguments are a JSON object.
type LangChainToolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	ID   string          `json:"id"`
	Type string          `json:"type"`
}

// LangChainInvalidToolCall is a tool call whose arguments are not a JSON object, kept as
// LangChain keeps a call it cannot parse.
type LangChainInvalidToolCall struct {
	Name  string `json:"name"`
	Args  string `json:"args"`
	ID    string `json:"id"`
	Error string `json:"error"`
	Type  string `json:"type"`
}

var langChainTypes = map[string]string{
	memory.RoleUser: "human", memory.RoleAssistant: "ai", memory.RoleSystem: "system", memory.RoleTool: "tool",
}

// LangChain renders msgs as LangChain stored messages. Tool calls become the ai message's
// tool_calls, their arguments parsed into args (an empty arguments string is {}); a call whose
// arguments are not a JSON object goes to invalid_tool_calls with its arguments as given, as
// LangChain's own parser does.
func LangChain(msgs []memory.Message) []LangChainMessage {
	out := make([]LangChainMessage, len(msgs))
	for i, m := range msgs {
		typ := langChainTypes[m.Role]
		d := LangChainData{
			Content:          committed(m),
			AdditionalKwargs: map[string]any{},
			ResponseMetadata: m.Metadata,
			Type:             typ,
			Name:             m.Name,
			ID:               m.ID,
		}
		if len(d.ResponseMetadata) == 0 || string(d.ResponseMetadata) == "null" {
			d.ResponseMetadata = json.RawMessage("{}")
		}
		switch m.Role {
		case memory.RoleAssistant:
			calls, invalid := []LangChainToolCall{}, []LangChainInvalidToolCall{}
			for _, c := range m.ToolCalls {
				if args, ok := ToolArguments(c.Function.Arguments); ok {
					calls = append(calls, LangChainToolCall{Name: c.Function.Name, Args: args, ID: c.ID, Type: "tool_call"})
				} else {
					invalid = append(invalid, LangChainInvalidToolCall{Name: c.Function.Name, Args: c.Function.Arguments,
						ID: c.ID, Error: "arguments are not a JSON object", Type: "invalid_tool_call"})
				}
			}
			d.ToolCalls, d.InvalidToolCalls = &calls, &invalid
			if len(m.ToolCalls) > 0 {
				d.AdditionalKwargs["tool_calls"] = m.ToolCalls
			}
		case memory.RoleTool:
			d.ToolCallID = m.ToolCallID
		}
		out[i] = LangChainMessage{Type: typ, Data: d}
	}
	return out
}

// ToolArguments parses a tool call's arguments string: the JSON object it holds, compacted,
// or {} for an empty string. ok is false when it holds anything else.
func ToolArguments(arguments string) (json.RawMessage, bool) {
	a := strings.TrimSpace(arguments)
	if a == "" {
		return json.RawMessage("{}"), true
	}
	if a[0] != '{' || !json.Valid([]byte(a)) {
		return nil, false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(a)); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}
