package memory

import (
	"time"

	"github.com/google/uuid"
)

// CommitResult is the answer of committing a turn (the store's CommitTurn), also what a replay
// of its idempotency key returns.
type CommitResult struct {
	SessionID uuid.UUID       `json:"session_id"`
	Messages  []StoredMessage `json:"messages"`
	Memories  []StoredMemory  `json:"memories"`
}

// StoredMessage is where a committed message landed.
type StoredMessage struct {
	ID        string    `json:"id"`
	Seq       int64     `json:"seq"`
	CreatedAt time.Time `json:"created_at"`
}

// StoredMemory identifies a committed memory.
type StoredMemory struct {
	ID uuid.UUID `json:"id"`
}
