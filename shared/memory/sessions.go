package memory

import (
	"encoding/json"
	"log/slog"
	"time"

	"github.com/google/uuid"
)

// ActiveSession is the answer of the active-session function (the store's ActiveSession): the
// scope's current session.
type ActiveSession struct {
	SessionID uuid.UUID `json:"session_id"`
	Agent     string    `json:"agent"`
	Created   bool      `json:"created"`
	Matched   bool      `json:"matched"`
	// LastActiveAt is refreshed by every resolve, activation and commit (this answer's own
	// included); CreatedAt is when the session started.
	LastActiveAt time.Time `json:"last_active_at"`
	CreatedAt    time.Time `json:"created_at"`
	// Metadata is the session's metadata, {} when none.
	Metadata json.RawMessage `json:"metadata"`
	// LastSyncedAt is when the adapters last caught up with the session; nil until they have,
	// and without adapters.
	LastSyncedAt *time.Time `json:"last_synced_at"`
}

// LogValue keeps the metadata out of logs.
func (a ActiveSession) LogValue() slog.Value {
	return slog.GroupValue(slog.String("session_id", a.SessionID.String()), slog.Bool("created", a.Created))
}

// SessionSummary is one session of a listing.
type SessionSummary struct {
	SessionID uuid.UUID `json:"session_id"`
	Agent     string    `json:"agent"`
	Title     *string   `json:"title"`
	// MessageCount counts the session's unexpired messages.
	MessageCount int64     `json:"message_count"`
	CreatedAt    time.Time `json:"created_at"`
	LastActiveAt time.Time `json:"last_active_at"`
	// Metadata and LastSyncedAt are as in ActiveSession.
	Metadata     json.RawMessage `json:"metadata"`
	LastSyncedAt *time.Time      `json:"last_synced_at"`
}

// LogValue keeps the title and metadata out of logs.
func (s SessionSummary) LogValue() slog.Value {
	return slog.GroupValue(slog.String("session_id", s.SessionID.String()), slog.Int64("message_count", s.MessageCount))
}
