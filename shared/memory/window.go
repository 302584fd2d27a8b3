package memory

import "unicode/utf8"

// perMessageTokens is the framing every chat message costs in LLM APIs (role, separators).
const perMessageTokens = 4

// EstimateTokens estimates what a message costs in a prompt: about four bytes of text per token
// (the usual rule for BPE tokenizers on English), plus the message framing. It is an estimate
// for budgeting, deliberately cheap and stable; it never undercounts an empty message as free.
func EstimateTokens(content string, name *string, toolCalls []ToolCall, toolCallID *string) int {
	n := len(content)
	if name != nil {
		n += len(*name)
	}
	if toolCallID != nil {
		n += len(*toolCallID)
	}
	for _, c := range toolCalls {
		n += len(c.ID) + len(c.Type) + len(c.Function.Name) + len(c.Function.Arguments) + 12
	}
	return (n+3)/4 + perMessageTokens
}

// CharCount is the number of characters (code points) of s, the unit of every length limit.
func CharCount(s string) int { return utf8.RuneCountInString(s) }

// Window shapes the most recent messages of a session (oldest first) into what a prompt may
// hold. LLM APIs reject a tool result without the assistant message that called it, and an
// assistant tool call without its results, so messages are kept or dropped in units: an
// assistant message with tool calls together with the tool messages answering them. A unit
// that is incomplete within msgs (its caller fell outside the window, or some of its results
// are missing) is dropped. Then, when maxTokens > 0, the oldest units are dropped until the
// rest fits. truncated reports whether anything of msgs was left out.
func Window(msgs []Message, maxTokens int) (kept []Message, tokens int, truncated bool) {
	units := groupUnits(msgs)
	complete := units[:0]
	for _, u := range units {
		if u.complete {
			complete = append(complete, u)
		} else {
			truncated = true
		}
	}
	for _, u := range complete {
		tokens += u.tokens
	}
	start := 0
	if maxTokens > 0 {
		for start < len(complete) && tokens > maxTokens {
			tokens -= complete[start].tokens
			start++
			truncated = true
		}
	}
	for _, u := range complete[start:] {
		kept = append(kept, msgs[u.from:u.to]...)
	}
	if kept == nil {
		kept = []Message{}
	}
	return kept, tokens, truncated
}

type unit struct {
	from, to int // msgs[from:to]
	tokens   int
	complete bool
}

// groupUnits splits msgs into units: a plain message alone; an assistant message with tool
// calls followed by the tool messages that answer it (other messages may not interleave, as
// LLM APIs require the results right after the call); a tool message answering nothing in
// the window alone and incomplete.
func groupUnits(msgs []Message) []unit {
	var units []unit
	for i := 0; i < len(msgs); {
		m := msgs[i]
		switch {
		case m.Role == RoleAssistant && len(m.ToolCalls) > 0:
			pending := make(map[string]bool, len(m.ToolCalls))
			for _, c := range m.ToolCalls {
				pending[c.ID] = true
			}
			u := unit{from: i, tokens: m.Tokens}
			j := i + 1
			for ; j < len(msgs) && msgs[j].Role == RoleTool && msgs[j].ToolCallID != nil && pending[*msgs[j].ToolCallID]; j++ {
				delete(pending, *msgs[j].ToolCallID)
				u.tokens += msgs[j].Tokens
			}
			u.to = j
			u.complete = len(pending) == 0
			units = append(units, u)
			i = j
		case m.Role == RoleTool:
			units = append(units, unit{from: i, to: i + 1, tokens: m.Tokens, complete: false})
			i++
		default:
			units = append(units, unit{from: i, to: i + 1, tokens: m.Tokens, complete: true})
			i++
		}
	}
	return units
}

// AnswersOnly keeps the answers of msgs: it leaves out tool messages and the tool calls of
// assistant messages (re-estimating their tokens), and then the assistant messages that have no
// text left.
func AnswersOnly(msgs []Message) []Message {
	out := msgs[:0]
	for _, m := range msgs {
		if !IsAnswer(m.Role, m.Content) {
			continue
		}
		if len(m.ToolCalls) > 0 {
			m.ToolCalls = nil
			m.Tokens = EstimateTokens(m.Content, m.Name, nil, m.ToolCallID)
		}
		out = append(out, m)
	}
	return out
}

// NewAnswersOnly is AnswersOnly for the messages of a turn to commit: the system, user and
// assistant text of the turn, without tool messages and tool calls.
func NewAnswersOnly(msgs []NewMessage) []NewMessage {
	out := make([]NewMessage, 0, len(msgs))
	for _, m := range msgs {
		if IsAnswer(m.Role, m.Content) {
			m.ToolCalls = nil
			out = append(out, m)
		}
	}
	return out
}

// IsAnswer reports whether a message of role with text content is kept by answers-only: every
// message but tool results and assistant messages without text (tool calls alone).
func IsAnswer(role, content string) bool {
	return role != RoleTool && !(role == RoleAssistant && content == "")
}
