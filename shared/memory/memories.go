package memory

import (
	"encoding/json"
	"log/slog"
	"time"

	"github.com/google/uuid"
)

// MemoryItem is a stored long-term memory as the memories function shows it.
type MemoryItem struct {
	ID       uuid.UUID       `json:"id"`
	Content  string          `json:"content"`
	Metadata json.RawMessage `json:"metadata"`
	// Agent is nil for a memory of the user that every agent recalls.
	Agent     *string   `json:"agent"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// Shared marks a shared memory of the tenant, which has no user (see Scope.Shared); absent
	// for a user's own.
	Shared bool `json:"shared,omitempty"`
}

// LogValue keeps memory content out of logs.
func (m MemoryItem) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", m.ID.String()), slog.Int("content_len", len(m.Content)))
}

// CreatedMemory is the answer of creating a memory (the store's CreateMemory), also what a
// replay of its idempotency key returns.
type CreatedMemory struct {
	ID uuid.UUID `json:"id"`
	// Merged is true when the fact went into a memory the scope held already (the same text,
	// or a near-duplicate), false when it made a memory of its own.
	Merged bool `json:"merged"`
	// ContentChanged is true when the merge gave the memory the fact's wording, false when the
	// memory kept its own text (the better formed, or the first) and for a new memory: an
	// agent learns whether what it will recall reads as it wrote it.
	ContentChanged bool `json:"content_changed"`
}
