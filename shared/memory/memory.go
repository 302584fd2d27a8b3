// Package memory holds agentmem's domain types: what a session, a message and a long-term
// memory are, independent of how they are stored or served.
package memory

import (
	"encoding/json"
	"log/slog"
	"time"

	"github.com/google/uuid"
)

// Scope is whose data a request touches. Every user-scoped row carries tenant and user; rows
// of one agent carry the agent too.
type Scope struct {
	// TenantID is "" when the caller has no tenant.
	TenantID string
	UserID   uuid.UUID
	// Agent names the agent; "" where a request concerns every agent of the user.
	Agent string
}

// DefaultAgent is the agent of a request that names none.
const DefaultAgent = "default"

// DefaultRetention is the lifetime of what a request stores (sessions, messages, memories) when
// neither the request nor DEFAULT_RETENTION sets one.
const DefaultRetention = 720 * time.Hour

// The roles of a message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
	RoleTool      = "tool"
)

// ToolCall is one function call requested by an assistant message, as LLM APIs shape it.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its arguments as a JSON-encoded string.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message is a stored message of a session.
type Message struct {
	// SessionID is set where messages of several sessions are listed together (a user's
	// history across sessions); nil, and left out of JSON, where the session is known.
	SessionID  *uuid.UUID      `json:"session_id,omitempty"`
	ID         uuid.UUID       `json:"id"`
	Seq        int64           `json:"seq"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Name       *string         `json:"name"`
	ToolCalls  []ToolCall      `json:"tool_calls"`
	ToolCallID *string         `json:"tool_call_id"`
	Metadata   json.RawMessage `json:"metadata"`
	CreatedAt  time.Time       `json:"created_at"`
	// Tokens is the estimate used for token budgets.
	Tokens int `json:"-"`
}

// LogValue keeps message content out of logs.
func (m Message) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", m.ID.String()), slog.Int64("seq", m.Seq),
		slog.String("role", m.Role), slog.Int("content_len", len(m.Content)))
}

// NewMessage is a message to be stored.
type NewMessage struct {
	// ID is the client's id; nil to have one generated.
	ID         *uuid.UUID
	Role       string
	Content    string
	Name       *string
	ToolCalls  []ToolCall
	ToolCallID *string
	// Metadata is a JSON object or nil.
	Metadata json.RawMessage
}

// LogValue keeps message content out of logs.
func (m NewMessage) LogValue() slog.Value {
	return slog.GroupValue(slog.String("role", m.Role), slog.Int("content_len", len(m.Content)))
}

// NewMemory is a long-term fact to be stored.
type NewMemory struct {
	Content string
	// Metadata is a JSON object or nil.
	Metadata json.RawMessage
}

// LogValue keeps memory content out of logs.
func (m NewMemory) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("content_len", len(m.Content)))
}

// Hit is a long-term memory found by a search.
type Hit struct {
	ID        uuid.UUID       `json:"id"`
	Content   string          `json:"content"`
	Score     float64         `json:"score"`
	Metadata  json.RawMessage `json:"metadata"`
	CreatedAt time.Time       `json:"created_at"`
}

// LogValue keeps memory content out of logs.
func (h Hit) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", h.ID.String()), slog.Int("content_len", len(h.Content)))
}

// The search modes of recall.
const (
	ModeHybrid = "hybrid"
	ModeVector = "vector"
	ModeText   = "text"
)
