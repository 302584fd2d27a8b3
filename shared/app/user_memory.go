package app

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"unicode"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// Limits of user-memory.
const (
	userMemoryKeyMaxChars   = 128
	userMemoryValueMaxBytes = 64 << 10
)

// The operations of user-memory.
const (
	UserMemoryOpSet    = "set"
	UserMemoryOpGet    = "get"
	UserMemoryOpList   = "list"
	UserMemoryOpDelete = "delete"
	UserMemoryOpClear  = "clear"
)

// UserMemoryInput is the request of every operation of user-memory.
type UserMemoryInput struct {
	ActingFor
	Op    string          `json:"op"`
	Key   *string         `json:"key"`
	Value json.RawMessage `json:"value"`
	// Agent is refused with a reason: key/value memory is the user's, shared by every agent.
	Agent *string `json:"agent"`
}

// UserMemoryList is the answer of list.
type UserMemoryList struct {
	Items []memory.UserMemoryItem `json:"items"`
}

// UserMemorySet is the answer of set.
type UserMemorySet struct {
	memory.UserMemoryItem
	Created bool `json:"created"`
}

// UserMemoryDeleted counts the keys removed: 1 for delete (a missing key is not found
// instead), any number for clear, so that both answers have the same shape.
type UserMemoryDeleted struct {
	Deleted int64 `json:"deleted"`
}

// The user-memory operations keep the user's key/value memory, shared by all of the user's
// agents (there is no agent field). Values are JSON objects of up to 64 KiB of compact JSON;
// they are stored as jsonb, so numbers keep every digit but object keys come back in jsonb's
// order, a repeated key keeping its last value. Keys are 1 to 128 characters without control
// characters or surrounding whitespace, compared exactly.
//
//   - set {key, value}: {key, value, updated_at, created: true} for a new key, created false
//     when it replaces a value.
//   - get {key}: {key, value, updated_at}; not found when the key is not set.
//   - list: {items: [{key, value, updated_at}]}, every key, ordered by key (bytewise).
//   - delete {key}: {deleted: 1}; not found when the key is not set.
//   - clear: {deleted: n}, n the number of keys removed (0 when there were none).
func userMemoryRequest(p auth.Principal, in UserMemoryInput, op string) (memory.Scope, string, json.RawMessage, error) {
	var f apierror.Fields
	if in.Agent != nil {
		f.Add("agent", "is not a field of user-memory: key/value memory belongs to the user and every agent sees it")
	}
	sc, err := scope(p, in.ActingFor, nil, "", &f)
	if err != nil {
		return sc, "", nil, err
	}
	var key string
	switch op {
	case UserMemoryOpSet, UserMemoryOpGet, UserMemoryOpDelete:
		key = labelField(&f, "key", in.Key, userMemoryKeyMaxChars)
	default:
		unusedForOp(&f, op, "key", in.Key != nil)
	}
	var value json.RawMessage
	if op == UserMemoryOpSet {
		value = userMemoryValue(&f, in.Value)
	} else {
		unusedForOp(&f, op, "value", !isNull(in.Value))
	}
	return sc, key, value, f.Err()
}

// SetUserMemory sets one key.
func (a *App) SetUserMemory(ctx context.Context, p auth.Principal, in UserMemoryInput) (UserMemorySet, error) {
	sc, key, value, err := userMemoryRequest(p, in, UserMemoryOpSet)
	if err != nil {
		return UserMemorySet{}, err
	}
	item, created, err := a.store.SetUserMemory(ctx, store.SetUserMemoryParams{Scope: sc, Key: key, Value: value})
	return UserMemorySet{UserMemoryItem: item, Created: created}, err
}

// GetUserMemory reads one key.
func (a *App) GetUserMemory(ctx context.Context, p auth.Principal, in UserMemoryInput) (memory.UserMemoryItem, error) {
	sc, key, _, err := userMemoryRequest(p, in, UserMemoryOpGet)
	if err != nil {
		return memory.UserMemoryItem{}, err
	}
	return a.store.GetUserMemory(ctx, sc, key)
}

// ListUserMemory reads every key.
func (a *App) ListUserMemory(ctx context.Context, p auth.Principal, in UserMemoryInput) (UserMemoryList, error) {
	sc, _, _, err := userMemoryRequest(p, in, UserMemoryOpList)
	if err != nil {
		return UserMemoryList{}, err
	}
	items, err := a.store.ListUserMemory(ctx, sc)
	return UserMemoryList{Items: items}, err
}

// DeleteUserMemory removes one key.
func (a *App) DeleteUserMemory(ctx context.Context, p auth.Principal, in UserMemoryInput) (UserMemoryDeleted, error) {
	sc, key, _, err := userMemoryRequest(p, in, UserMemoryOpDelete)
	if err != nil {
		return UserMemoryDeleted{}, err
	}
	if err := a.store.DeleteUserMemory(ctx, sc, key); err != nil {
		return UserMemoryDeleted{}, err
	}
	return UserMemoryDeleted{Deleted: 1}, nil
}

// ClearUserMemory removes every key.
func (a *App) ClearUserMemory(ctx context.Context, p auth.Principal, in UserMemoryInput) (UserMemoryDeleted, error) {
	sc, _, _, err := userMemoryRequest(p, in, UserMemoryOpClear)
	if err != nil {
		return UserMemoryDeleted{}, err
	}
	n, err := a.store.ClearUserMemory(ctx, sc)
	return UserMemoryDeleted{Deleted: n}, err
}

// userMemoryValue checks the value of set: a JSON object of at most userMemoryValueMaxBytes
// once compacted. Compacting keeps every number's digits as sent. null is absent, as for every
// field.
func userMemoryValue(f *apierror.Fields, raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		f.Add("value", "is required: a JSON object")
		return nil
	}
	return objectField(f, "value", raw, userMemoryValueMaxBytes)
}

// isNull reports whether a raw field is absent or JSON null, which count the same.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// labelField checks a required short string that names something (a key, a mode): 1 to
// maxChars characters, not blank, without surrounding whitespace (which would make two names
// that look alike) and without control or line-separator characters.
func labelField(f *apierror.Fields, field string, v *string, maxChars int) string {
	if v == nil {
		f.Add(field, "is required")
		return ""
	}
	s := *v
	switch n := memory.CharCount(s); {
	case n < 1 || n > maxChars:
		f.Addf(field, "must be 1 to %d characters", maxChars)
	case strings.TrimSpace(s) == "":
		f.Add(field, "must not be blank")
	case strings.TrimSpace(s) != s:
		f.Add(field, "must not start or end with whitespace")
	case strings.IndexFunc(s, notPrintable) >= 0:
		f.Add(field, "must not contain control characters or line breaks")
	default:
		return s
	}
	return ""
}

func notPrintable(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp)
}

// unusedForOp refuses a field the operation does not take: sending it is a mistake the caller
// should hear about, not data silently dropped.
func unusedForOp(f *apierror.Fields, op, field string, present bool) {
	if present {
		f.Addf(field, "is not a field of op %s", op)
	}
}
