package memory

import (
	"time"

	"github.com/google/uuid"
)

// Job is a job of the outbox as the jobs function shows it: no refs, no content.
type Job struct {
	ID            uuid.UUID  `json:"id"`
	Intent        string     `json:"intent"`
	Adapter       string     `json:"adapter"`
	Status        string     `json:"status"`
	Attempts      int        `json:"attempts"`
	NextAttemptAt time.Time  `json:"next_attempt_at"`
	LastError     *string    `json:"last_error"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	SessionID     *uuid.UUID `json:"session_id"`
	UserID        string     `json:"user_id"`
}

// JobRef is a job as a change's answer names it.
type JobRef struct {
	ID      uuid.UUID `json:"id"`
	Adapter string    `json:"adapter"`
	Status  string    `json:"status"`
}
