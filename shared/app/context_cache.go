package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/telemetry"
)

// The get-context cache (adapter/redis, whose package documentation gives the argument for
// read-your-writes): the whole answer of a request without a query is cached; requests with a
// query are not. Each read asks the database whether a cached answer may be served and Redis
// for it at the same time.
//
// A cached answer therefore holds no memories: a change of the tenant's shared memories (whose
// jobs name no user, memory.SharedUserID) can make no cached window stale, and a request with
// a query reads the shared memories of the moment from the database.

// contextCache is the enabled adapter that caches get-context windows, when the store writes
// its jobs (without them nothing would ever invalidate it).
func contextCache(st *store.Store, adapters map[string]adapter.Adapter) adapter.ContextCache {
	if st == nil {
		return nil
	}
	for _, name := range st.Adapters() {
		if c, ok := adapters[name].(adapter.ContextCache); ok {
			return c
		}
	}
	return nil
}

// DefaultCacheSettle is how long after a job of the user was delivered a cached answer is not
// served (Config.CacheSettle): longer than a cache check may take (half of it), so that a
// look-up in Redis made at the same time as the check never predates a delivery the check saw
// done.
const DefaultCacheSettle = 2 * time.Second

// expiryMargin covers the difference between the clocks of the database (messages' expiry)
// and of this process (a window's fill time).
const expiryMargin = time.Minute

// A window is cached in CBOR (RFC 8949): decoding it is the whole cost of a hit beside the
// two round trips, and encoding/json took ten times as long as CBOR to decode a window of 100
// messages (1.06 ms against 0.108 ms on the 2-core machine of docs/benchmarks.md), which left a
// hit slower than the database's read. The fields keep their JSON names (the codec reads the
// json tags); times are RFC 3339 strings with nanoseconds, so that every one comes back as it
// went.
var (
	cacheEncoding = func() cbor.EncMode {
		m, err := cbor.EncOptions{Time: cbor.TimeRFC3339Nano}.EncMode()
		if err != nil {
			panic(err)
		}
		return m
	}()
	cacheDecoding = func() cbor.DecMode {
		m, err := cbor.DecOptions{}.DecMode()
		if err != nil {
			panic(err)
		}
		return m
	}()
)

// cachedWindow is the payload cached for a window.
type cachedWindow struct {
	// FilledAt is when the database read that produced it started, by this process's clock.
	FilledAt   time.Time                  `json:"filled_at"`
	Messages   []cachedMessage            `json:"messages"`
	Usage      memory.Usage               `json:"usage"`
	UserMemory map[string]json.RawMessage `json:"user_memory"`
	State      *string                    `json:"state"`
	Notes      *string                    `json:"notes"`
	// Summary is the session's rolling summary as read with the window.
	Summary *memory.Summary `json:"summary"`
	// ExpiresAt is when the first of the window's messages expires (the database's clock); nil
	// without messages. The window is not served from expiryMargin before it: a sweep may
	// delete the message meanwhile, and no job announces that.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Generation is the database's generation (store.CacheCheck) read by the check before the
	// read that produced the window: it is served only while the check reads the same, so a
	// Redis that lost writes or came back older than the database only costs misses.
	Generation string `json:"generation"`
}

// cachedMessage is a message as cached: every field, the token estimate and the content parts
// too (memory.Message's own JSON is the API's and leaves them out).
type cachedMessage struct {
	SessionID  *uuid.UUID        `json:"session_id,omitempty"`
	ID         string            `json:"id"`
	Seq        int64             `json:"seq"`
	Role       string            `json:"role"`
	Content    string            `json:"content"`
	Parts      json.RawMessage   `json:"parts,omitempty"`
	Name       *string           `json:"name"`
	ToolCalls  []memory.ToolCall `json:"tool_calls"`
	ToolCallID *string           `json:"tool_call_id"`
	Metadata   json.RawMessage   `json:"metadata,omitempty"`
	CreatedAt  time.Time         `json:"created_at"`
	Tokens     int               `json:"tokens"`
}

func toCached(msgs []memory.Message) []cachedMessage {
	if msgs == nil {
		return nil
	}
	out := make([]cachedMessage, len(msgs))
	for i, m := range msgs {
		out[i] = cachedMessage{SessionID: m.SessionID, ID: m.ID, Seq: m.Seq, Role: m.Role, Content: m.Content,
			Parts: m.Parts, Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Metadata: m.Metadata,
			CreatedAt: m.CreatedAt, Tokens: m.Tokens}
	}
	return out
}

func fromCached(msgs []cachedMessage) []memory.Message {
	if msgs == nil {
		return nil
	}
	out := make([]memory.Message, len(msgs))
	for i, m := range msgs {
		out[i] = memory.Message{SessionID: m.SessionID, ID: m.ID, Seq: m.Seq, Role: m.Role, Content: m.Content,
			Parts: m.Parts, Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Metadata: m.Metadata,
			CreatedAt: m.CreatedAt, Tokens: m.Tokens}
	}
	return out
}

// decodeWindow reads a cached window and its messages. ok is false for a payload that is not
// a window this process may serve as it is: not the CBOR of one, or one breaking a rule every
// answer read from the database keeps (memory.Message.Check; user memory values JSON), which
// the formats and the JSON answer rely on. Whoever can write to Redis can write anything
// there; such a payload is a miss, never a failed request: the database answers and fills the
// window again.
func decodeWindow(payload []byte) (w cachedWindow, msgs []memory.Message, ok bool) {
	if cacheDecoding.Unmarshal(payload, &w) != nil {
		return cachedWindow{}, nil, false
	}
	msgs = fromCached(w.Messages)
	for _, m := range msgs {
		if m.Check() != nil {
			return cachedWindow{}, nil, false
		}
	}
	for _, v := range w.UserMemory {
		if !json.Valid(v) {
			return cachedWindow{}, nil, false
		}
	}
	return w, msgs, true
}

// context is the answer a window decoded with its messages gives for the session.
func (w cachedWindow) context(session uuid.UUID, msgs []memory.Message) memory.Context {
	if w.UserMemory == nil {
		w.UserMemory = map[string]json.RawMessage{}
	}
	return memory.Context{SessionID: session, Messages: msgs, Memories: []memory.Hit{}, UserMemory: w.UserMemory,
		State: w.State, Notes: w.Notes, Summary: w.Summary, Usage: w.Usage}
}

// contextShape is the part of a get-context request, besides the user and the session, that
// the window depends on: no content. Its first element is the payload's format (1 was JSON, 2
// is CBOR): a window written in another format is never looked up.
func contextShape(p store.ContextParams) string {
	since := ""
	if p.Since != nil {
		since = p.Since.UTC().Format(time.RFC3339Nano)
	}
	b, _ := json.Marshal([]any{2, p.Scope.TenantID, p.Scope.Agent, p.MaxMessages, p.MaxTokens, since, p.AnswersOnly})
	return string(b)
}

// storeContext reads get-context's answer from the database: the "adapter.supabase" span.
func (a *App) storeContext(ctx context.Context, p store.ContextParams) (memory.Context, error) {
	ctx, sp := telemetry.StartAdapter(ctx, telemetry.AdapterSupabase)
	out, err := a.store.GetContext(ctx, p)
	sp.End(err)
	return out, err
}

// readContext reads get-context's answer, through the cache when one is enabled and the
// request is cacheable, from the database otherwise.
func (a *App) readContext(ctx context.Context, p store.ContextParams) (memory.Context, error) {
	if p.Query != "" && p.RecallK > 0 {
		v, err := a.EmbedQuery(ctx, p.Query, memory.ModeHybrid)
		if err != nil {
			return memory.Context{}, err
		}
		p.QueryVector, p.Model = v, a.cfg.Embedder.Model()
		return a.storeContext(ctx, p)
	}
	if a.cache == nil {
		return a.storeContext(ctx, p)
	}
	ctx, sp := telemetry.StartCache(ctx, a.cache.Name())
	out, result, err := a.readCachedContext(ctx, p)
	sp.EndCache(ctx, result)
	return out, err
}

func (a *App) readCachedContext(ctx context.Context, p store.ContextParams) (memory.Context, string, error) {
	if !a.cache.Ready() {
		out, err := a.storeContext(ctx, p)
		return out, telemetry.CacheUnavailable, err
	}
	// The database's check and the look-up in Redis at the same time.
	type checked struct {
		c   store.CacheCheck
		err error
		in  time.Duration
	}
	done := make(chan checked, 1)
	start := time.Now()
	go func() {
		c, err := a.store.CheckContextCache(ctx, p.Scope, p.SessionID, a.cache.Name(), a.cfg.CacheSettle)
		done <- checked{c, err, time.Since(start)}
	}()
	look, lookErr := a.cache.Lookup(ctx, adapter.CacheKey{UserID: p.Scope.UserID, SessionID: p.SessionID, Shape: contextShape(p)})
	// The window is decoded while the check may still be on its way (most of a hit's own work).
	var w cachedWindow
	var msgs []memory.Message
	decoded := false
	if lookErr == nil && look.Payload != nil {
		w, msgs, decoded = decodeWindow(look.Payload)
	}
	chk := <-done
	if chk.err != nil {
		// Without the check no cached answer may be served; the database may still answer.
		a.log.DebugContext(ctx, "context cache check failed", "adapter", a.cache.Name(), "error", chk.err)
		out, err := a.storeContext(ctx, p)
		return out, telemetry.CacheUnavailable, err
	}
	if lookErr != nil {
		a.log.DebugContext(ctx, "context cache unavailable", "adapter", a.cache.Name(), "error", lookErr)
		out, err := a.storeContext(ctx, p)
		return out, telemetry.CacheUnavailable, err
	}
	result := telemetry.CacheMiss
	if look.Payload != nil {
		switch {
		case !decoded:
			a.log.DebugContext(ctx, "context cache window unreadable", "adapter", a.cache.Name())
		case chk.c.Unsettled, chk.in >= a.cfg.CacheSettle/2, w.Generation != chk.c.Generation,
			chk.c.LastExpired != nil && !chk.c.LastExpired.Before(w.FilledAt.Add(-expiryMargin)),
			w.ExpiresAt != nil && !time.Now().Add(expiryMargin).Before(*w.ExpiresAt):
			result = telemetry.CacheStale
		default:
			return w.context(p.SessionID, msgs), telemetry.CacheHit, nil
		}
	}
	// The database, and the answer into the cache under the generations the look-up and the
	// check read, both before the read.
	// The window is read from the primary: the check that gave its generation was.
	filledAt := time.Now()
	p.WindowExpiry = true
	out, err := a.storeContext(store.PrimaryOnly(ctx), p)
	if err != nil {
		return out, result, err
	}
	payload, err := cacheEncoding.Marshal(cachedWindow{FilledAt: filledAt, Messages: toCached(out.Messages), Usage: out.Usage,
		UserMemory: out.UserMemory, State: out.State, Notes: out.Notes, Summary: out.Summary, ExpiresAt: out.WindowExpiresAt,
		Generation: chk.c.Generation})
	if err != nil {
		return out, result, fmt.Errorf("encode cached window: %w", err)
	}
	if err := look.Fill(ctx, payload); err != nil {
		a.log.DebugContext(ctx, "context cache fill failed", "adapter", a.cache.Name(), "error", err)
	}
	return out, result, nil
}
