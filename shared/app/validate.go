package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
)

// ActingFor is what a service caller names to act for a user; a user caller may repeat its own.
type ActingFor struct {
	UserID   *string `json:"user_id"`
	TenantID *string `json:"tenant_id"`
}

var agentPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// userIDRule is what a user_id that fails auth.ValidUserID is told.
const userIDRule = "must be 1 to 255 printable characters"

// scope works out whose data a request of caller p touches. A user acts for themself; a
// service names user_id (and tenant_id). A user naming someone else is refused.
func scope(p auth.Principal, a ActingFor, agent *string, defaultAgent string, f *apierror.Fields) (memory.Scope, error) {
	sc := memory.Scope{Agent: agentField(f, agent, defaultAgent)}
	if !tenantField(f, a.TenantID) {
		return sc, nil
	}
	if p.IsService() {
		if a.UserID == nil {
			f.Add("user_id", "is required for service callers")
			return sc, nil
		}
		if !auth.ValidUserID(*a.UserID) {
			f.Add("user_id", userIDRule)
			return sc, nil
		}
		sc.UserID = auth.NormalUserID(*a.UserID)
		if a.TenantID != nil {
			sc.TenantID = *a.TenantID
		}
		return sc, nil
	}
	sc.UserID, sc.TenantID = p.UserID, p.TenantID
	if a.UserID != nil {
		if auth.NormalUserID(*a.UserID) != p.UserID {
			return sc, apierror.New(apierror.Forbidden, "user_id may name only the caller; acting for another user needs a service token")
		}
	}
	if a.TenantID != nil && *a.TenantID != p.TenantID {
		return sc, apierror.New(apierror.Forbidden, "tenant_id may name only the caller's tenant")
	}
	return sc, nil
}

// agentField validates an optional agent: the agent, or defaultAgent when absent or invalid.
func agentField(f *apierror.Fields, agent *string, defaultAgent string) string {
	if agent == nil {
		return defaultAgent
	}
	if !agentPattern.MatchString(*agent) {
		f.Add("agent", "must be 1 to 64 characters of A-Z a-z 0-9 _ . : -")
		return defaultAgent
	}
	return *agent
}

// sharedScope works out the scope of a memories request about shared memories (shared: true):
// the shared memories of a tenant, which belong to no user, so the request names none. A
// service caller names the tenant (tenant_id; without it, the shared memories of no tenant,
// which the users without a tenant recall); a user reads those of their own tenant and may not
// write (write): 403, whatever else the request holds. Without agent, the scope is every
// agent's: a shared memory created without one is recalled by every agent of the tenant.
func sharedScope(p auth.Principal, a ActingFor, agent *string, write bool, f *apierror.Fields) (memory.Scope, error) {
	if write && !p.IsService() {
		return memory.Scope{}, apierror.New(apierror.Forbidden, "shared memories are written only by service callers")
	}
	sc := memory.SharedScope("", agentField(f, agent, ""))
	if !tenantField(f, a.TenantID) {
		return sc, nil
	}
	if a.UserID != nil {
		f.Add("user_id", "must be absent with shared: true: a shared memory belongs to no user")
	}
	if p.IsService() {
		if a.TenantID != nil {
			sc.TenantID = *a.TenantID
		}
		return sc, nil
	}
	if a.TenantID != nil && *a.TenantID != p.TenantID {
		return sc, apierror.New(apierror.Forbidden, "tenant_id may name only the caller's tenant")
	}
	sc.TenantID = p.TenantID
	return sc, nil
}

// memoryScope is the scope of a memories request: a user's (scope, with defaultAgent), or with
// shared true the tenant's shared memories (sharedScope; write for the operations that change
// them).
func memoryScope(p auth.Principal, a ActingFor, shared *bool, write bool, agent *string, defaultAgent string, f *apierror.Fields) (memory.Scope, error) {
	if shared != nil && *shared {
		return sharedScope(p, a, agent, write, f)
	}
	return scope(p, a, agent, defaultAgent, f)
}

// messageIDField validates a message id (a client's, or one the server gave): 1 to 255
// printable characters, the rule of a user id (auth.ValidUserID), with a UUID in lower case as
// before message ids were text, so that a UUID in either case names one message.
func messageIDField(f *apierror.Fields, field string, v *string, required bool) *string {
	if v == nil {
		if required {
			f.Add(field, "is required")
		}
		return nil
	}
	if !auth.ValidUserID(*v) {
		f.Add(field, "must be 1 to 255 printable characters")
		return nil
	}
	id := auth.NormalUserID(*v)
	return &id
}

// parseUUID validates a required or optional UUID field in its canonical 36-character form.
func parseUUID(f *apierror.Fields, field string, v *string, required bool) *uuid.UUID {
	if v == nil {
		if required {
			f.Add(field, "is required")
		}
		return nil
	}
	id, err := uuid.Parse(*v)
	if err != nil || len(*v) != 36 {
		f.Add(field, "must be a UUID")
		return nil
	}
	return &id
}

// intField checks an optional integer field against its range and returns it or def.
func intField(f *apierror.Fields, field string, v *int64, def, lo, hi int64) int64 {
	if v == nil {
		return def
	}
	if *v < lo || *v > hi {
		f.Addf(field, "must be between %d and %d", lo, hi)
		return def
	}
	return *v
}

// objectField checks that raw, when given, is a JSON object of at most maxBytes, and returns
// it compacted (nil when absent or null).
func objectField(f *apierror.Fields, field string, raw json.RawMessage, maxBytes int) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] != '{' {
		f.Add(field, "must be a JSON object")
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		f.Add(field, "must be a JSON object")
		return nil
	}
	if buf.Len() > maxBytes {
		f.Addf(field, "must be at most %d bytes of JSON", maxBytes)
		return nil
	}
	return buf.Bytes()
}

// timeField reads an optional RFC 3339 timestamp (nil when absent or null). Any year RFC 3339
// can write (0000 to 9999) is within what PostgreSQL's timestamptz holds. The database keeps
// microseconds: a time between two of them rounds up, so that a bound "at or after" it never
// takes in an earlier row.
func timeField(f *apierror.Fields, field string, v *string) *time.Time {
	if v == nil {
		return nil
	}
	ts, err := time.Parse(time.RFC3339Nano, *v)
	if err != nil {
		f.Add(field, "must be an RFC 3339 timestamp, such as 2026-01-02T15:04:05Z")
		return nil
	}
	if c := ts.Truncate(time.Microsecond); !c.Equal(ts) {
		ts = c.Add(time.Microsecond)
	}
	ts = ts.UTC()
	return &ts
}

// tenantField checks a tenant_id a request names, when it names one, by the rule a token's
// tenant follows: a tenant the verifier refuses in a token is refused in a body too.
func tenantField(f *apierror.Fields, v *string) bool {
	if v != nil && !auth.ValidTenant(*v) {
		f.Addf("tenant_id", "must be at most %d printable characters", auth.MaxTenantLen)
		return false
	}
	return true
}

// hasControl reports whether s holds a control character (Unicode Cc: C0, DEL and C1), which
// a name or title shown to people must not.
func hasControl(s string) bool { return strings.ContainsFunc(s, unicode.IsControl) }

func oneOf(f *apierror.Fields, field string, v *string, def string, allowed ...string) string {
	if v == nil {
		return def
	}
	for _, a := range allowed {
		if *v == a {
			return a
		}
	}
	f.Addf(field, "must be one of %s", strings.Join(allowed, ", "))
	return def
}

func idx(field string, i int, sub string) string { return fmt.Sprintf("%s[%d].%s", field, i, sub) }

// searchFields checks what every search takes: query (required, 1 to maxQueryChars
// characters), k (1 to 100, default 10) and mode (hybrid, the default, vector or text).
func searchFields(f *apierror.Fields, query *string, k *int64, mode *string) (string, int, string) {
	var q string
	switch {
	case query == nil:
		f.Add("query", "is required")
	case memory.CharCount(*query) < 1 || memory.CharCount(*query) > maxQueryChars:
		f.Addf("query", "must be 1 to %d characters", maxQueryChars)
	default:
		q = *query
	}
	return q, int(intField(f, "k", k, 10, 1, 100)),
		oneOf(f, "mode", mode, memory.ModeHybrid, memory.ModeHybrid, memory.ModeVector, memory.ModeText)
}
