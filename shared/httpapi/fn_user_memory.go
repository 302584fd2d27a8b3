package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"unicode"

	"github.com/agentmem/agentmem/shared/apierror"
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
	userMemoryOpSet    = "set"
	userMemoryOpGet    = "get"
	userMemoryOpList   = "list"
	userMemoryOpDelete = "delete"
	userMemoryOpClear  = "clear"
)

type userMemoryRequest struct {
	actingFor
	Op    string          `json:"op"`
	Key   *string         `json:"key"`
	Value json.RawMessage `json:"value"`
	// Agent is refused with a reason: key/value memory is the user's, shared by every agent.
	Agent *string `json:"agent"`
}

type userMemoryList struct {
	Items []store.UserMemoryItem `json:"items"`
}

type userMemorySet struct {
	store.UserMemoryItem
	Created bool `json:"created"`
}

// userMemoryDeleted counts the keys removed: 1 for delete (a missing key is a 404 instead),
// any number for clear, so that both answers have the same shape.
type userMemoryDeleted struct {
	Deleted int64 `json:"deleted"`
}

// userMemory is the user's key/value memory, shared by all of the user's agents (there is no
// agent field). Values are JSON objects of up to 64 KiB of compact JSON; they are stored as
// jsonb, so numbers keep every digit but object keys come back in jsonb's order, a repeated
// key keeping its last value. Keys are 1 to 128 characters without control characters or
// surrounding whitespace, compared exactly.
//
//   - set {key, value}: 201 {key, value, updated_at, created: true} for a new key, 200 with
//     created false when it replaces a value.
//   - get {key}: 200 {key, value, updated_at}; 404 when the key is not set.
//   - list: 200 {items: [{key, value, updated_at}]}, every key, ordered by key (bytewise).
//   - delete {key}: 200 {deleted: 1}; 404 when the key is not set.
//   - clear: 200 {deleted: n}, n the number of keys removed (0 when there were none).
func (s *Server) userMemory(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, userMemoryOpSet, userMemoryOpGet, userMemoryOpList, userMemoryOpDelete, userMemoryOpClear)
	if err != nil {
		return 0, nil, err
	}
	var req userMemoryRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	if req.Agent != nil {
		f.Add("agent", "is not a field of user-memory: key/value memory belongs to the user and every agent sees it")
	}
	sc, err := c.scope(req.actingFor, nil, "", &f)
	if err != nil {
		return 0, nil, err
	}
	var key string
	switch op {
	case userMemoryOpSet, userMemoryOpGet, userMemoryOpDelete:
		key = labelField(&f, "key", req.Key, userMemoryKeyMaxChars)
	default:
		unusedForOp(&f, op, "key", req.Key != nil)
	}
	var value json.RawMessage
	if op == userMemoryOpSet {
		value = userMemoryValue(&f, req.Value)
	} else {
		unusedForOp(&f, op, "value", !isNull(req.Value))
	}
	if err := f.Err(); err != nil {
		return 0, nil, err
	}

	switch op {
	case userMemoryOpSet:
		item, created, err := s.store.SetUserMemory(ctx, store.SetUserMemoryParams{Scope: sc, Key: key, Value: value})
		if err != nil {
			return 0, nil, err
		}
		if created {
			return http.StatusCreated, userMemorySet{UserMemoryItem: item, Created: true}, nil
		}
		return http.StatusOK, userMemorySet{UserMemoryItem: item}, nil
	case userMemoryOpGet:
		item, err := s.store.GetUserMemory(ctx, sc, key)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, item, nil
	case userMemoryOpList:
		items, err := s.store.ListUserMemory(ctx, sc)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, userMemoryList{Items: items}, nil
	case userMemoryOpDelete:
		if err := s.store.DeleteUserMemory(ctx, sc, key); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, userMemoryDeleted{Deleted: 1}, nil
	default:
		n, err := s.store.ClearUserMemory(ctx, sc)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, userMemoryDeleted{Deleted: n}, nil
	}
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
