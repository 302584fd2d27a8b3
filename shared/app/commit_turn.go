package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/telemetry"
)

// CommitTurnInput is the request of commit-turn.
type CommitTurnInput struct {
	ActingFor
	SessionID  *string        `json:"session_id"`
	Agent      *string        `json:"agent"`
	Messages   []MessageInput `json:"messages"`
	Memories   []MemoryInput  `json:"memories"`
	TTLSeconds *int64         `json:"ttl_seconds"`
	// Extract, when false, opts the turn out of fact extraction; default true (extraction
	// still runs only where the deployment enables it).
	Extract *bool `json:"extract"`
	// AnswersOnly, when true, stores only the turn's answers (memory.NewAnswersOnly): no tool
	// messages and no tool calls. The whole turn is still validated.
	AnswersOnly *bool `json:"answers_only"`
	// KeepMessages sets how many of the session's messages stay live (0: all), over the
	// deployment's HISTORY_KEEP_MESSAGES; service callers only (see memory.HistoryCap).
	KeepMessages *int64 `json:"keep_messages"`
	// SessionMetadata is the metadata of the session when this turn creates it (a JSON
	// object); a session that exists keeps its own.
	SessionMetadata json.RawMessage `json:"session_metadata"`
	// Idempotency is the request's Idempotency-Key, nil without one.
	Idempotency *IdempotencyKey `json:"-"`
}

// IdempotencyKey is an Idempotency-Key a request carries and what identifies the request.
type IdempotencyKey struct {
	// Key is the header's value; Present is false when the request had no such header.
	Key     string
	Present bool
	// RequestHash identifies the request body (see RequestHash).
	RequestHash []byte
}

// CommitTurnOutput is the answer of commit-turn; Replayed marks one replayed for a retry.
type CommitTurnOutput struct {
	memory.CommitResult
	Replayed bool `json:"-"`
}

// MessageInput is one message of a turn.
type MessageInput struct {
	ID   *string `json:"id"`
	Role *string `json:"role"`
	// Content is a string or an array of content parts (see contentField).
	Content    json.RawMessage   `json:"content"`
	Name       *string           `json:"name"`
	ToolCalls  []memory.ToolCall `json:"tool_calls"`
	ToolCallID *string           `json:"tool_call_id"`
	Metadata   json.RawMessage   `json:"metadata"`
	// CreatedAt is when the message was said (RFC 3339), for a service importing a history
	// from another system; absent or null: the commit's time.
	CreatedAt *string `json:"created_at"`
}

// MemoryInput is one long-term fact of a turn.
type MemoryInput struct {
	Content  *string         `json:"content"`
	Metadata json.RawMessage `json:"metadata"`
}

var roles = []string{memory.RoleUser, memory.RoleAssistant, memory.RoleSystem, memory.RoleTool}

// CommitTurn appends a turn to a session (see store.CommitTurn), all or nothing.
func (a *App) CommitTurn(ctx context.Context, pr auth.Principal, req CommitTurnInput) (CommitTurnOutput, error) {
	var f apierror.Fields
	sc, err := scope(pr, req.ActingFor, req.Agent, memory.DefaultAgent, &f)
	if err != nil {
		return CommitTurnOutput{}, err
	}
	p := store.CommitParams{Scope: sc, TTL: a.cfg.DefaultRetention, TTLIsDefault: req.TTLSeconds == nil,
		NoExtract: req.Extract != nil && !*req.Extract}
	if id := parseUUID(&f, "session_id", req.SessionID, true); id != nil {
		p.SessionID = *id
	}
	if req.TTLSeconds != nil {
		p.TTL = time.Duration(intField(&f, "ttl_seconds", req.TTLSeconds, 0, 1, maxTTLSeconds)) * time.Second
	}
	switch {
	case req.Messages == nil:
		f.Add("messages", "is required")
	case len(req.Messages) == 0 || len(req.Messages) > maxMessages:
		f.Addf("messages", "must hold 1 to %d messages", maxMessages)
	}
	if len(req.Messages) <= maxMessages {
		seen := map[string]bool{}
		now := time.Now()
		for i, m := range req.Messages {
			nm, ok := validateMessage(&f, pr, now, i, m)
			if !ok {
				continue
			}
			if nm.ID != nil {
				if seen[*nm.ID] {
					f.Add(idx("messages", i, "id"), "repeats the id of an earlier message of this request")
				}
				seen[*nm.ID] = true
			}
			p.Messages = append(p.Messages, nm)
		}
	}
	if len(req.Memories) > maxMemories {
		f.Addf("memories", "must hold at most %d memories", maxMemories)
	} else {
		for i, m := range req.Memories {
			content, ok := factField(&f, idx("memories", i, "content"), m.Content)
			if !ok {
				continue
			}
			md := objectField(&f, idx("memories", i, "metadata"), m.Metadata, maxMetadataBytes)
			p.Memories = append(p.Memories, memory.NewMemory{Content: content, Metadata: md})
		}
	}
	p.KeepMessages = keepMessagesField(&f, pr, req.KeepMessages)
	p.SessionMetadata = objectField(&f, "session_metadata", req.SessionMetadata, maxMetadataBytes)
	p.Idempotency = idempotencyOf(&f, pr, "commit-turn", req.Idempotency)
	if err := f.Err(); err != nil {
		return CommitTurnOutput{}, err
	}
	if req.AnswersOnly != nil && *req.AnswersOnly {
		p.Messages = memory.NewAnswersOnly(p.Messages)
	}
	if p.Idempotency != nil && len(p.Memories) > 0 {
		// A retry is answered from the record before anything is embedded again.
		if res, found, err := a.store.Replay(ctx, sc, *p.Idempotency); err != nil || found {
			return CommitTurnOutput{CommitResult: res, Replayed: found}, err
		}
	}
	if err := a.embedTurn(ctx, &p); err != nil {
		return CommitTurnOutput{}, err
	}
	// The contract's onTurnCommitted intent; its write to the authoritative store is the
	// "adapter.supabase" span, the other adapters' work the jobs it writes.
	ictx, isp := telemetry.StartIntent(ctx, adapter.TurnCommitted)
	sctx, ssp := telemetry.StartAdapter(ictx, telemetry.AdapterSupabase)
	res, replayed, err := a.store.CommitTurn(sctx, p)
	ssp.End(err)
	isp.End(err)
	if err == nil && !replayed {
		a.notify(ctx)
		a.embedLater(p, res)
	}
	return CommitTurnOutput{CommitResult: res, Replayed: replayed}, err
}

// factField checks the text of a long-term fact: present, not only white space, at most
// maxMemoryChars characters.
func factField(f *apierror.Fields, field string, v *string) (string, bool) {
	switch {
	case v == nil:
		f.Add(field, "is required")
	case len(bytes.TrimSpace([]byte(*v))) == 0:
		f.Add(field, "must not be blank")
	case memory.CharCount(*v) > maxMemoryChars:
		f.Addf(field, "must be at most %d characters", maxMemoryChars)
	default:
		return *v, true
	}
	return "", false
}

func validateMessage(f *apierror.Fields, pr auth.Principal, now time.Time, i int, m MessageInput) (memory.NewMessage, bool) {
	before := len(*f)
	var nm memory.NewMessage
	nm.ID = messageIDField(f, idx("messages", i, "id"), m.ID, false)
	role := ""
	if m.Role == nil {
		f.Add(idx("messages", i, "role"), "is required")
	} else {
		role = oneOf(f, idx("messages", i, "role"), m.Role, "", roles...)
	}
	nm.Role = role
	if len(m.ToolCalls) > 0 || (m.ToolCalls != nil && role != memory.RoleAssistant) {
		if role != memory.RoleAssistant {
			f.Add(idx("messages", i, "tool_calls"), "is allowed on assistant messages only")
		} else if len(m.ToolCalls) > maxToolCalls {
			f.Addf(idx("messages", i, "tool_calls"), "must hold at most %d calls", maxToolCalls)
		} else {
			ids := map[string]bool{}
			for k, tc := range m.ToolCalls {
				field := fmt.Sprintf("messages[%d].tool_calls[%d]", i, k)
				switch {
				case tc.ID == "" || len(tc.ID) > maxToolCallIDChars:
					f.Addf(field+".id", "must be 1 to %d characters", maxToolCallIDChars)
				case ids[tc.ID]:
					f.Add(field+".id", "repeats the id of another call of this message")
				case tc.Type != "function":
					f.Add(field+".type", "must be function")
				case tc.Function.Name == "":
					f.Add(field+".function.name", "is required")
				}
				ids[tc.ID] = true
			}
			nm.ToolCalls = m.ToolCalls
		}
	}
	cf := idx("messages", i, "content")
	beforeContent := len(*f)
	content := contentField(f, cf, m.Content)
	emptyOK := role == memory.RoleAssistant && len(m.ToolCalls) > 0
	switch {
	case len(*f) > beforeContent:
		// content was given but is not valid: already reported.
	case !content.Present && !emptyOK:
		f.Add(cf, "is required")
	case content.Present && content.Parts == nil && content.Text == "" && !emptyOK:
		f.Add(cf, "may be empty only for an assistant message with tool_calls")
	case memory.CharCount(content.Text) > maxContentChars:
		if content.Parts != nil {
			f.Addf(cf, "must hold at most %d characters of text in its text parts", maxContentChars)
		} else {
			f.Addf(cf, "must be at most %d characters", maxContentChars)
		}
	default:
		nm.Content, nm.Parts = content.Text, content.Parts
	}
	if m.Name != nil {
		if *m.Name == "" || memory.CharCount(*m.Name) > maxNameChars {
			f.Addf(idx("messages", i, "name"), "must be 1 to %d characters", maxNameChars)
		}
		nm.Name = m.Name
	}
	switch {
	case role == memory.RoleTool && (m.ToolCallID == nil || *m.ToolCallID == ""):
		f.Add(idx("messages", i, "tool_call_id"), "is required for tool messages")
	case role != memory.RoleTool && m.ToolCallID != nil && role != "":
		f.Add(idx("messages", i, "tool_call_id"), "is allowed on tool messages only")
	case m.ToolCallID != nil && len(*m.ToolCallID) > maxToolCallIDChars:
		f.Addf(idx("messages", i, "tool_call_id"), "must be at most %d characters", maxToolCallIDChars)
	default:
		nm.ToolCallID = m.ToolCallID
	}
	nm.Metadata = objectField(f, idx("messages", i, "metadata"), m.Metadata, maxMetadataBytes)
	nm.CreatedAt = messageTime(f, pr, now, idx("messages", i, "created_at"), m.CreatedAt)
	return nm, len(*f) == before
}

// Bounds of a message's given time (messages[].created_at): from earliestMessageTime, older
// than any conversation an agent could have had, to the commit's time plus messageClockSkew,
// which covers the difference between the caller's clock and ours and nothing more: a history
// is imported, never scheduled.
var earliestMessageTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

const messageClockSkew = 5 * time.Minute

// messageTime checks the time a message was said, given for a commit at now: nil when absent.
// Only service callers may give one: they import histories on a user's behalf, while a user's
// own client has no earlier past to import and could otherwise back-date what it says. A user
// giving one is a field of the request this caller may not send (400, named with any other
// invalid field of the turn), not a function its role may not call (403).
func messageTime(f *apierror.Fields, pr auth.Principal, now time.Time, field string, v *string) *time.Time {
	if v == nil {
		return nil
	}
	if !pr.IsService() {
		f.Add(field, "may be given by service callers only")
		return nil
	}
	ts, err := time.Parse(time.RFC3339Nano, *v)
	switch {
	case err != nil:
		f.Add(field, "must be an RFC 3339 timestamp with a zone, such as 2024-05-01T09:30:00Z")
	case ts.Before(earliestMessageTime):
		f.Addf(field, "must not be before %s", earliestMessageTime.Format(time.RFC3339))
	case ts.After(now.Add(messageClockSkew)):
		f.Addf(field, "must be at most %d minutes after the commit's time", int(messageClockSkew/time.Minute))
	default:
		ts = ts.UTC()
		return &ts
	}
	return nil
}

// idempotencyOf checks the Idempotency-Key of a request to function fn: nil when the request has
// none. Keys belong to their caller: the store keys them by user, tenant, the caller's role and
// the function.
func idempotencyOf(f *apierror.Fields, pr auth.Principal, fn string, k *IdempotencyKey) *store.Idempotency {
	if k == nil || !k.Present {
		return nil
	}
	if len(k.Key) < 1 || len(k.Key) > 255 || !PrintableASCII(k.Key) {
		f.Add("Idempotency-Key", "must be 1 to 255 printable ASCII characters")
		return nil
	}
	return &store.Idempotency{CallerRole: pr.Role, Function: fn, Key: k.Key, RequestHash: k.RequestHash}
}

// RequestHash identifies a request body for idempotency: the same JSON, whatever its spacing.
func RequestHash(body []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, body); err != nil {
		buf.Reset()
		buf.Write(body)
	}
	sum := sha256.Sum256(buf.Bytes())
	return sum[:]
}

// PrintableASCII reports whether s is printable ASCII, all a header value we echo or key on
// may hold.
func PrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// keepMessagesField validates commit-turn's keep_messages: a service's setting of its session's
// history cap, 0 (no cap) or memory.MinHistoryKeep to memory.MaxHistoryKeep. A user may not set
// it: how much history a deployment keeps live is the operator's (or its services') choice.
func keepMessagesField(f *apierror.Fields, pr auth.Principal, v *int64) *int {
	if v == nil {
		return nil
	}
	if !pr.IsService() {
		f.Add("keep_messages", "may be given by service callers only")
		return nil
	}
	if k := *v; k != 0 && (k < memory.MinHistoryKeep || k > memory.MaxHistoryKeep) {
		f.Addf("keep_messages", "must be 0 (no cap) or %d to %d", memory.MinHistoryKeep, memory.MaxHistoryKeep)
		return nil
	}
	k := int(*v)
	return &k
}
