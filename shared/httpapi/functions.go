package httpapi

import (
	"context"
	"net/http"
	"strings"
	"unicode"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// activeSession serves active-session: 201 when it created the session, else 200.
func (s *Server) activeSession(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, s.app.ActiveSession, func(o store.ActiveSession) int { return createdOr200(o.Created) })
}

// commitTurn serves commit-turn: 201, with Idempotent-Replayed: true on a replayed answer.
func (s *Server) commitTurn(ctx context.Context, c *call) (int, any, error) {
	commit := func(ctx context.Context, p auth.Principal, in app.CommitTurnInput) (app.CommitTurnOutput, error) {
		in.Idempotency = idempotencyKey(c)
		out, err := s.app.CommitTurn(ctx, p, in)
		c.replayed = out.Replayed
		return out, err
	}
	return run(ctx, c, commit, func(app.CommitTurnOutput) int { return http.StatusCreated })
}

// idempotencyKey is the Idempotency-Key the request carries, with the digest of its body; nil
// without the header.
func idempotencyKey(c *call) *app.IdempotencyKey {
	if len(c.r.Header.Values("Idempotency-Key")) == 0 {
		return nil
	}
	return &app.IdempotencyKey{Key: c.r.Header.Get("Idempotency-Key"), Present: true, RequestHash: app.RequestHash(c.body)}
}

// getContext serves get-context, rendering the window in the format asked for.
func (s *Server) getContext(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, func(ctx context.Context, p auth.Principal, in app.GetContextInput) (any, error) {
		out, err := s.app.GetContext(ctx, p, in)
		if err != nil {
			return nil, err
		}
		if out.Format == app.FormatOpenAI {
			return openAIContext{Context: out.Context, Messages: toOpenAI(out.Messages)}, nil
		}
		out.Messages = app.RawMessages(out.Messages)
		return out.Context, nil
	}, ok200)
}

type openAIContext struct {
	store.Context
	Messages []openAIMessage `json:"messages"`
}

// openAIMessage is exactly a message object of the Chat Completions API.
type openAIMessage struct {
	Role       string            `json:"role"`
	Content    *string           `json:"content"`
	Name       *string           `json:"name,omitempty"`
	ToolCalls  []memory.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID *string           `json:"tool_call_id,omitempty"`
}

func toOpenAI(msgs []memory.Message) []openAIMessage {
	out := make([]openAIMessage, len(msgs))
	for i, m := range msgs {
		content := m.Content
		om := openAIMessage{Role: m.Role, Content: &content, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls}
		if m.Role == memory.RoleAssistant && len(m.ToolCalls) > 0 && m.Content == "" {
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

// maxOpenAINameLen is the longest name the Chat Completions API takes.
const maxOpenAINameLen = 64

// openAINameOK reports whether the Chat Completions API takes name as it is.
func openAINameOK(name string) bool {
	if len(name) < 1 || len(name) > maxOpenAINameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
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

// recall serves recall.
func (s *Server) recall(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, s.app.Recall, ok200)
}

// sweepExpired serves sweep-expired, for service callers.
func (s *Server) sweepExpired(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, s.app.SweepExpired, ok200)
}
