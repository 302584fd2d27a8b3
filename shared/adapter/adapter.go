// Package adapter is the seam between agentmem and the systems that learn of its changes (a
// webhook receiver, a cache, an enrichment service): the events they receive and the one
// interface each implements. The database stays the authority; an adapter only ever hears of a
// change after it committed, from the outbox (agentmem.jobs), and a failing adapter never fails
// a user's request.
//
// An adapter lives in a package of its own (adapter/webhook, ...) that reads its own settings
// (ConfigFromEnv, through shared/envvar) and is enabled by its name in ADAPTERS. Adding one
// takes the package, its name in Known, its settings in config.Config (read by its
// ConfigFromEnv), a constructor in shared/service, and nothing else: the outbox writes a job per
// enabled name, process-jobs delivers it.
package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/memory"
)

// Webhook is the name of the webhook adapter (adapter/webhook): every event POSTed to a URL,
// signed, directly or through Upstash QStash.
const Webhook = "webhook"

// Redis is the name of the Redis adapter (adapter/redis): a get-context cache in Redis or
// Upstash Redis, invalidated by the outbox.
const Redis = "redis"

// Mem0 is the name of the Mem0 Platform adapter (adapter/mem0): each turn added to Mem0, and
// optionally Mem0's memories merged into recall.
const Mem0 = "mem0"

// Known lists the adapter names ADAPTERS may hold.
func Known() []string { return []string{Webhook, Mem0, Redis} }

// The internal work that rides the outbox beside the adapters, with the same claim, retry and
// dead-letter machinery: a job's adapter column names it. They are not adapters: ADAPTERS
// cannot name them, each has a setting of its own (EXTRACT_FACTS, SUMMARIES), and their
// input is read from the database unredacted, since they hand it to the deployment's own chat
// model and store what it answers back in the same database.
const (
	// Extract asks the chat model for the facts of a committed turn and stores them as
	// memories.
	Extract = "extract"
	// Summarize advances a session's rolling summary once its unsummarised messages pass the
	// trigger.
	Summarize = "summarize"
	// Fanout is a change the database itself wrote, not knowing which adapters are enabled (a
	// user deleted in Supabase Auth): process-jobs expands it into one job per enabled
	// adapter.
	Fanout = "fanout"
)

// JobKinds lists every name a job's adapter column may hold: the adapters and the internal
// work.
func JobKinds() []string { return append(Known(), Extract, Summarize, Fanout) }

// Adapter delivers events to one system.
type Adapter interface {
	// Name is the adapter's name in ADAPTERS and in its jobs.
	Name() string
	// Deliver hands ev to the system. nil means the system has it for good; any error is
	// retried later (with backoff, up to the attempt cap), so Deliver must be safe to call
	// again with the same event: receivers drop repeats by ev.ID. An error's text is kept as
	// the job's last_error and must never hold content.
	Deliver(ctx context.Context, ev Event) error
}

// ContextCache is an adapter that also caches get-context windows (adapter/redis). The use
// case decides what is cached and when a cached window may be served; the cache keeps opaque
// payloads under a generation of the user and of the session, which its Deliver advances for
// every change, so that a payload filled before a change is never returned after its job was
// delivered.
type ContextCache interface {
	Adapter
	// Ready is false while the cache rests after a failure: the caller skips it (and reads
	// the database) without waiting for a timeout.
	Ready() bool
	// Lookup reads the payload cached under key, nil when there is none or its generations
	// are no longer current, and a Fill for a payload read from the database from now on.
	// An error (the cache is unreachable, too slow) is for the caller to read the database.
	Lookup(ctx context.Context, key CacheKey) (CacheLookup, error)
	// DropUser deletes every answer cached for the user at once, within the cache's request
	// timeout: an erasure calls it after its commit, so that the erased content leaves the
	// cache before the erasure answers rather than when its job is delivered (which does it
	// again). An error leaves it to the job.
	DropUser(ctx context.Context, userID string) error
	// Retention is the longest a cached answer lives. A dead job of the cache is kept at least
	// that long after it died: until then the cache may hold an answer its change never
	// reached, and the job is what keeps the user's reads away from it.
	Retention() time.Duration
}

// CacheKey names a cached get-context window: whose (UserID), which session, and Shape, the
// rest of the request (tenant, agent, sizes...) as the use case encodes it, without content.
type CacheKey struct {
	UserID    string
	SessionID uuid.UUID
	Shape     string
}

// CacheLookup is the result of ContextCache.Lookup.
type CacheLookup struct {
	// Payload is the cached payload, nil on a miss.
	Payload []byte
	// Fill stores a payload read from the database after the look-up: under the generations
	// the look-up read, so that it is never served after a change that it may predate.
	Fill func(ctx context.Context, payload []byte) error
}

// RetryAfterError is a failure whose system said when to try again (HTTP 429 or 503 with
// Retry-After): the next attempt comes no sooner, nor sooner than the backoff.
type RetryAfterError struct {
	After time.Duration
	Err   error
}

func (e *RetryAfterError) Error() string { return e.Err.Error() }
func (e *RetryAfterError) Unwrap() error { return e.Err }

// RetryAfter is the delay a failure asks for, 0 when it asks for none.
func RetryAfter(err error) time.Duration {
	var ra *RetryAfterError
	if errors.As(err, &ra) {
		return ra.After
	}
	return 0
}

// NetworkError describes a failed request for a job's last_error, without its URL (which may
// carry a token in its query): "no answer in time", "canceled", or the transport's error.
func NetworkError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "no answer in time"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return err.Error()
}

// PermanentError is a failure that trying again will not mend (a key the system refuses, a
// request it cannot take): the job goes dead at once, for an operator to look at and retry
// (agentmem jobs retry) once the cause is fixed.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent marks err as permanent.
func Permanent(err error) error { return &PermanentError{Err: err} }

// IsPermanent reports whether err, or an error it wraps, is permanent.
func IsPermanent(err error) bool {
	var pe *PermanentError
	return errors.As(err, &pe)
}

// ParseNames reads ADAPTERS: comma-separated adapter names, each known, none twice. Empty is
// none.
func ParseNames(list string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !slices.Contains(Known(), n) {
			return nil, fmt.Errorf("unknown adapter %q; known: %s", n, strings.Join(Known(), ", "))
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("adapter %q is named twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}

// The kinds of events (a job's intent). Committing a turn is the contract's onTurnCommitted;
// syncSession and backfillSession are asked for through the intents function; the others are
// the changes an adapter must learn of to stay true to the database.
const (
	TurnCommitted   = "onTurnCommitted"
	MemoryCreated   = "onMemoryCreated"
	MemoryUpdated   = "onMemoryUpdated"
	MemoryDeleted   = "onMemoryDeleted"
	SessionReset    = "onSessionReset"
	SessionDeleted  = "onSessionDeleted"
	MessageDeleted  = "onMessageDeleted"
	MessagesCleared = "onMessagesCleared"
	UserForgotten   = "onUserForgotten"
	SyncSession     = "syncSession"
	BackfillSession = "backfillSession"
	// SummaryUpdated: a session's rolling summary advanced (SeqTo is its new through_seq), so
	// what get-context answers for the session changed without a message of its own.
	SummaryUpdated = "onSummaryUpdated"
	// UserDataChanged is a change of the user's key/value memory, state or notes: written
	// only for the adapters that cache them (CachesUserData), which no other event tells.
	UserDataChanged = "onUserDataChanged"
)

// CachesUserData reports whether the adapter name keeps a copy of the user's key/value
// memory, state and notes, and so receives UserDataChanged events (the Redis cache); the
// others never do.
func CachesUserData(name string) bool { return name == Redis }

// Event is one change as an adapter receives it, read from the database when the job is
// delivered: the content is what the database holds then (a message deleted meanwhile is no
// longer in it). The webhook adapter sends it as its JSON body.
type Event struct {
	// ID identifies the change; every delivery of it (retries, and the same change to other
	// adapters) carries the same ID, so a receiver drops the repeats it already has. A page
	// of a backfill has an ID of its own, derived from the change's.
	ID   uuid.UUID `json:"id"`
	Type string    `json:"type"`
	// OccurredAt is when the change committed (its job's creation).
	OccurredAt time.Time `json:"occurred_at"`
	// TenantID is nil for a change of the user in every tenant (an erasure of a person).
	TenantID *string `json:"tenant_id"`
	// UserID is memory.SharedUserID ("") for a change of the tenant's shared memories (Shared).
	UserID string `json:"user_id"`
	// Shared marks a change of the tenant's shared memories, which belong to no user: no
	// user's copy of anything changed. Absent for every other change.
	Shared bool `json:"shared,omitempty"`
	// Agent is nil for a change of the user as a whole.
	Agent     *string    `json:"agent"`
	SessionID *uuid.UUID `json:"session_id"`
	// SeqFrom and SeqTo bound the messages the change is about (a turn's, a backfill page's;
	// SeqTo alone for a reset: every message up to it went); nil when none.
	SeqFrom *int64 `json:"seq_from"`
	SeqTo   *int64 `json:"seq_to"`
	// Messages and Memories are the content of the change, as stored now.
	Messages []memory.Message `json:"messages"`
	Memories []Memory         `json:"memories"`
	// Removed names what a deletion removed; nil for other changes.
	Removed *Removed `json:"removed"`
	// Session describes the session (syncSession); nil for other changes.
	Session *Session `json:"session"`
	// Page places a backfill page; nil for other changes.
	Page *Page `json:"page"`
	// PIIScrubbed says every content field went through PII redaction first.
	PIIScrubbed bool `json:"pii_scrubbed"`
	// Metadata carries what the pipeline adds (the redaction's hashes); an empty object when
	// nothing.
	Metadata map[string]any `json:"metadata"`
}

// LogValue keeps content out of logs: ids and counts only.
func (e Event) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", e.ID.String()), slog.String("type", e.Type),
		slog.Int("messages", len(e.Messages)), slog.Int("memories", len(e.Memories)))
}

// Memory is a long-term memory in an event.
type Memory struct {
	ID       uuid.UUID       `json:"id"`
	Content  string          `json:"content"`
	Metadata json.RawMessage `json:"metadata"`
	// Agent is nil for a memory of the user that every agent recalls.
	Agent     *string   `json:"agent"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Removed names what a deletion removed.
type Removed struct {
	MessageIDs []string    `json:"message_ids"`
	MemoryIDs  []uuid.UUID `json:"memory_ids"`
	// AllMessages is true when every message of the session (reset), of the user's sessions
	// of Agent (or of every agent when Agent is nil: messages cleared), or of the user went.
	AllMessages bool `json:"all_messages"`
	// Session is true when the session itself went, and everything in it.
	Session bool `json:"session"`
	// User is true when everything of the user went (forget-user).
	User bool `json:"user"`
}

// Session describes a session in a syncSession event.
type Session struct {
	ID           uuid.UUID `json:"id"`
	Agent        string    `json:"agent"`
	Title        *string   `json:"title"`
	LastSeq      int64     `json:"last_seq"`
	MessageCount int64     `json:"message_count"`
	CreatedAt    time.Time `json:"created_at"`
	LastActiveAt time.Time `json:"last_active_at"`
	ExpiresAt    time.Time `json:"expires_at"`
}

// Page places one page of a backfill: Number of Of, 1-based.
type Page struct {
	Number int `json:"number"`
	Of     int `json:"of"`
}

// BackfillPageSeqs is how many seqs one backfill page covers (at most that many messages).
const BackfillPageSeqs = 100

// PageID is the event id of page n (1-based) of the backfill ev: derived from the change's id,
// so a retry sends each page under the id it had the first time.
func PageID(change uuid.UUID, n int) uuid.UUID {
	return uuid.NewSHA1(change, []byte(fmt.Sprintf("page-%d", n)))
}
