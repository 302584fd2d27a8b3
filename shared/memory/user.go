package memory

import (
	"encoding/json"
	"log/slog"
	"time"
)

// UserState is the mode of a user (e.g. active, halted), one per user: every agent sees it.
type UserState struct {
	Mode      string    `json:"mode"`
	UpdatedAt time.Time `json:"updated_at"`
}

// UserMemoryItem is one key of a user's key/value memory. Value is the stored JSON object as
// jsonb gives it back: the same value (numbers keep their digits), keys in jsonb's order and
// without duplicates.
type UserMemoryItem struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// LogValue keeps keys and values out of logs.
func (i UserMemoryItem) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("key_len", len(i.Key)), slog.Int("value_len", len(i.Value)))
}

// ForgetResult is the answer of erasing a user's data (the store's ForgetUser).
type ForgetResult struct {
	UserID string `json:"user_id"`
	// TenantID is the tenant erased; nil when every tenant was.
	TenantID *string `json:"tenant_id"`
	// Deleted counts the rows deleted per table, for every table that holds user rows (zero
	// included), keyed by table name.
	Deleted map[string]int64 `json:"deleted"`
}
