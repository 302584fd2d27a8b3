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

// Hit is a long-term memory, or a message of a past conversation, found by a search.
type Hit struct {
	ID        uuid.UUID       `json:"id"`
	Content   string          `json:"content"`
	Score     float64         `json:"score"`
	Metadata  json.RawMessage `json:"metadata"`
	CreatedAt time.Time       `json:"created_at"`
	// Source is HitMemory or HitMessage in recall's answers; get-context's memories leave it
	// empty (they are all memories).
	Source string `json:"source,omitempty"`
	// SessionID, Seq and Role place a message (nil for a memory). A message's Content is its
	// text and its Metadata null when it has none.
	SessionID *uuid.UUID `json:"session_id,omitempty"`
	Seq       *int64     `json:"seq,omitempty"`
	Role      *string    `json:"role,omitempty"`
}

// LogValue keeps memory and message content out of logs.
func (h Hit) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", h.ID.String()), slog.String("source", h.Source),
		slog.Int("content_len", len(h.Content)))
}

// The sources of a Hit.
const (
	HitMemory  = "memory"
	HitMessage = "message"
)

// The sources recall searches: long-term memories (the default), the messages of past
// conversations, or both as one ranking.
const (
	SourceMemories = "memories"
	SourceMessages = "messages"
	SourceAll      = "all"
)

// EmbedsMessage reports whether a message of this role and text gets a vector (and so ranks in
// vector search): every message with text but a tool's output. A tool message (JSON, a listing,
// a document fetched) is often the largest of a turn and says little in the user's words; full
// text still finds it, without a call of the provider or a place in the vector index at every
// turn. The migration search_messages writes the same rule in SQL, for embed-pending.
func EmbedsMessage(role, content string) bool { return role != RoleTool && content != "" }

// The search modes of recall.
const (
	ModeHybrid = "hybrid"
	ModeVector = "vector"
	ModeText   = "text"
)
