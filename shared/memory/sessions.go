package memory

import (
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
	// LastActiveAt is refreshed by every resolve and commit; CreatedAt is when the session
	// started.
	LastActiveAt time.Time `json:"last_active_at"`
	CreatedAt    time.Time `json:"created_at"`
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
}

// LogValue keeps the title out of logs.
func (s SessionSummary) LogValue() slog.Value {
	return slog.GroupValue(slog.String("session_id", s.SessionID.String()), slog.Int64("message_count", s.MessageCount))
}
