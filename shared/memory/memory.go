// Package memory holds agentmem's domain types: what a session, a message and a long-term
// memory are, independent of how they are stored or served. It also holds the values the
// store returns and every door shows (a commit's answer, a context, a job, a sweep's counts):
// their JSON form is the API's, so a change to how they are stored cannot change what a client
// reads. And it holds the plain settings and defaults (settings.go, HistoryCap) that the
// configuration, the store and the use cases share, so that reading the environment needs
// neither of the latter.
package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Scope is whose data a request touches. Every user-scoped row carries tenant and user; rows
// of one agent carry the agent too.
type Scope struct {
	// TenantID is "" when the caller has no tenant.
	TenantID string
	UserID   string
	// Agent names the agent; "" where a request concerns every agent of the user.
	Agent string
	// Shared is the scope of the tenant's shared memories rather than a user's: memories of no
	// user (UserID is SharedUserID), written by service callers only and recalled by every user
	// of the tenant beside their own. Only memories are ever shared.
	Shared bool
}

// SharedUserID is the user id the shared memories are stored under: the empty string, which no
// user id is (1 to 255 printable characters), so that user_id stays a non-null key.
const SharedUserID = ""

// SharedScope is the scope of the shared memories of tenant ("" for those of no tenant) and agent.
func SharedScope(tenant, agent string) Scope {
	return Scope{TenantID: tenant, UserID: SharedUserID, Agent: agent, Shared: true}
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
	SessionID *uuid.UUID `json:"session_id,omitempty"`
	// ID is the client's id for the message (1 to 255 printable characters, e.g. a UUID or
	// LangChain's lc_run--...), or a UUID the server chose.
	ID   string `json:"id"`
	Seq  int64  `json:"seq"`
	Role string `json:"role"`
	// Content is the message's text: its string content, or the text of its content parts
	// (see ContentText).
	Content string `json:"content"`
	// Parts is the content as committed when it was an array of content parts, nil when it was
	// a string. In JSON, content is Parts when there are parts (see MarshalJSON).
	Parts      json.RawMessage `json:"-"`
	Name       *string         `json:"name"`
	ToolCalls  []ToolCall      `json:"tool_calls"`
	ToolCallID *string         `json:"tool_call_id"`
	Metadata   json.RawMessage `json:"metadata"`
	CreatedAt  time.Time       `json:"created_at"`
	// Tokens is the estimate used for token budgets.
	Tokens int `json:"-"`
}

// MarshalJSON writes the message with content as it was committed: the string, or the array
// of content parts. (A struct embedding Message would take this method for its own: give such
// a struct a MarshalJSON of its own, or make it hold Message's fields.)
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message
	if m.Parts == nil {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		plain
		Content json.RawMessage `json:"content"`
	}{plain(m), m.Parts})
}

// UnmarshalJSON reads what MarshalJSON writes: content a string, or an array of content parts
// (kept in Parts, with their text in Content).
func (m *Message) UnmarshalJSON(b []byte) error {
	type plain Message
	var v struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*m = Message(v.plain)
	c := bytes.TrimSpace(v.Content)
	switch {
	case len(c) == 0 || string(c) == "null":
	case c[0] == '[':
		text, err := ContentText(c)
		if err != nil {
			return err
		}
		m.Content, m.Parts = text, json.RawMessage(bytes.Clone(c))
	default:
		return json.Unmarshal(c, &m.Content)
	}
	return nil
}

// ContentText is the text of an array of content parts: the text of its "text" parts, joined
// by newlines ("" when it has none). It is what length limits, token estimates, full-text
// search and embeddings use.
func ContentText(parts json.RawMessage) (string, error) {
	var ps []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(parts, &ps); err != nil {
		return "", fmt.Errorf("decode content parts: %w", err)
	}
	texts := make([]string, 0, len(ps))
	for _, p := range ps {
		if p.Type == PartText && p.Text != nil {
			texts = append(texts, *p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// PartText is the type of a content part that carries text.
const PartText = "text"

// MaxContentParts is the most content parts a message holds.
const MaxContentParts = 100

// Check reports which rule of a stored message m breaks, nil when it keeps them all: a role
// of the four; content parts, when there are any, an array of 1 to MaxContentParts objects
// whose type is a string; metadata absent or a JSON object; tool calls on assistant messages
// only; a tool call id on every tool message and on no other. Commit-turn and the database's
// constraints keep them for every message the store reads; a message read from elsewhere (a
// window cached in Redis, which whoever can write to Redis can change) is checked before it is
// served, since every format and the JSON answer rely on them. The error names the rule, never
// the content.
func (m Message) Check() error {
	switch m.Role {
	case RoleUser, RoleAssistant, RoleSystem, RoleTool:
	default:
		return errors.New("role is not one of user, assistant, system, tool")
	}
	if m.Parts != nil {
		var parts []struct {
			Type partType `json:"type"`
		}
		if json.Unmarshal(m.Parts, &parts) != nil || len(parts) < 1 || len(parts) > MaxContentParts {
			return fmt.Errorf("content parts are not an array of 1 to %d objects whose type is a string", MaxContentParts)
		}
		for _, p := range parts {
			if !p.Type {
				return errors.New("a content part has no type")
			}
		}
	}
	if m.Metadata != nil && !jsonObject(m.Metadata) {
		return errors.New("metadata is not a JSON object")
	}
	if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
		return errors.New("tool calls on a message that is not an assistant's")
	}
	if (m.ToolCallID != nil) != (m.Role == RoleTool) {
		return errors.New("a tool call id missing from a tool message, or on another")
	}
	return nil
}

// partType is present when a content part's type is a string; it reads the type without
// copying it, which keeps Check cheap on every cached window served.
type partType bool

// UnmarshalJSON takes a JSON string, and nothing else.
func (p *partType) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		return errors.New("type is not a string")
	}
	*p = true
	return nil
}

// jsonObject reports whether b is one JSON object.
func jsonObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// LogValue keeps message content out of logs.
func (m Message) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", m.ID), slog.Int64("seq", m.Seq),
		slog.String("role", m.Role), slog.Int("content_len", len(m.Content)))
}

// NewMessage is a message to be stored.
type NewMessage struct {
	// ID is the client's id (1 to 255 printable characters); nil to have a UUID generated.
	ID   *string
	Role string
	// Content is the message's text (see ContentText when the content is parts).
	Content string
	// Parts is the content as committed when it was an array of content parts; nil for a
	// string.
	Parts      json.RawMessage
	Name       *string
	ToolCalls  []ToolCall
	ToolCallID *string
	// Metadata is a JSON object or nil.
	Metadata json.RawMessage
	// CreatedAt is when the message was said, given by a service caller that imports a
	// history from another system; nil stamps it with the commit's time. It only places the
	// message in time: seq still orders the session, and expiry counts from the commit.
	CreatedAt *time.Time
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
	// ID is a memory's UUID, or a message's id (see Message.ID).
	ID        string          `json:"id"`
	Content   string          `json:"content"`
	Score     float64         `json:"score"`
	Metadata  json.RawMessage `json:"metadata"`
	CreatedAt time.Time       `json:"created_at"`
	// Relevance, from 0 to 1, tells how well a result of recall matches its query on a scale
	// that does not depend on the mode or on the other results, so that a caller can
	// threshold it: the greater of the share of the query's BM25 weight the text holds (its
	// BM25 score over the highest any text could get for the query: 1 when it holds every word
	// of the query often enough) and the cosine similarity of the vectors. Absent for a result
	// of another source (Mem0).
	Relevance *float64 `json:"relevance,omitempty"`
	// Source is HitMemory or HitMessage in recall's answers; get-context's memories leave it
	// empty (they are all memories).
	Source string `json:"source,omitempty"`
	// Origin names the system a recall result comes from when it is not agentmem's own
	// database: "mem0" for a memory of Mem0 (MEM0_RECALL), whose ID is Mem0's (or, when that is
	// no UUID, one derived from it; Metadata's "mem0_id" holds it as Mem0 gave it). Such a
	// result is read-only: the memories function knows nothing of it.
	Origin string `json:"origin,omitempty"`
	// SessionID, Seq and Role place a message (nil for a memory). A message's Content is its
	// text and its Metadata {} when it has none, as in get-context.
	SessionID *uuid.UUID `json:"session_id,omitempty"`
	Seq       *int64     `json:"seq,omitempty"`
	Role      *string    `json:"role,omitempty"`
	// Name is a message's speaker, when it has one.
	Name *string `json:"name,omitempty"`
	// Context holds, when recall was asked for neighbours, the turns around a message of its
	// session in seq order, without the turns that are results or another result's context.
	Context []Turn `json:"context,omitempty"`
	// Shared marks a shared memory of the tenant (see Scope.Shared), recalled beside the user's
	// own; absent for the user's own memories and for messages.
	Shared bool `json:"shared,omitempty"`
}

// Place is where a message is: its session and seq.
type Place struct {
	SessionID uuid.UUID
	Seq       int64
}

// Turn is a message shown beside a recall result.
type Turn struct {
	Seq       int64     `json:"seq"`
	Role      string    `json:"role"`
	Name      *string   `json:"name,omitempty"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
}

// LogValue keeps message content out of logs.
func (t Turn) LogValue() slog.Value {
	return slog.GroupValue(slog.Int64("seq", t.Seq), slog.Int("content_len", len(t.Content)))
}

// LogValue keeps memory and message content out of logs.
func (h Hit) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", h.ID), slog.String("source", h.Source),
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

// BestRelevance is the highest Relevance among hits, 0 when none has one (no result, or only
// results of another source): what tells a question about something stored from one about
// nothing stored, whose best result is still some result.
func BestRelevance(hits []Hit) float64 {
	best := 0.0
	for _, h := range hits {
		if h.Relevance != nil && *h.Relevance > best {
			best = *h.Relevance
		}
	}
	return best
}
