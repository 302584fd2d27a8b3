package memory

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Context is what the next prompt of a session needs: everything get-context returns (the
// store's GetContext).
type Context struct {
	SessionID  uuid.UUID                  `json:"session_id"`
	Messages   []Message                  `json:"messages"`
	Memories   []Hit                      `json:"memories"`
	UserMemory map[string]json.RawMessage `json:"user_memory"`
	State      *string                    `json:"state"`
	Notes      *string                    `json:"notes"`
	// Summary is the session's rolling summary; nil when it has none.
	Summary *Summary `json:"summary"`
	Usage   Usage    `json:"usage"`
	// UserContext is the user's context text, when the request asked for it.
	UserContext *string `json:"user_context,omitempty"`
	// WindowExpiresAt is the earliest expiry among the messages the window was drawn from
	// (the store's ContextParams.WindowExpiry; nil otherwise or without messages): the answer holds a
	// message past its retention from then on.
	WindowExpiresAt *time.Time `json:"-"`
}

// Usage describes the window of a Context.
type Usage struct {
	Messages      int  `json:"messages"`
	TokenEstimate int  `json:"token_estimate"`
	Truncated     bool `json:"truncated"`
	// DroppedMessages and DroppedParts count the messages of the window, and the content parts
	// of the messages returned, that the format asked for cannot carry and left out.
	DroppedMessages int `json:"dropped_messages"`
	DroppedParts    int `json:"dropped_parts"`
}

// Summary is a session's rolling summary: the gist of its messages up to ThroughSeq.
type Summary struct {
	Content    string    `json:"content"`
	ThroughSeq int64     `json:"through_seq"`
	UpdatedAt  time.Time `json:"updated_at"`
}
