package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// Limits of the contract.
const (
	maxMessages        = 100
	maxContentChars    = 100_000
	maxMetadataBytes   = 16 << 10
	maxMemories        = 100
	maxMemoryChars     = 20_000
	maxToolCalls       = 128
	maxNameChars       = 256
	maxToolCallIDChars = 255
	maxTTLSeconds      = 10 * 365 * 24 * 3600
	maxQueryChars      = 4096
)

func init() {
	functions["active-session"] = function{run: (*Server).activeSession}
	functions["commit-turn"] = function{run: (*Server).commitTurn}
	functions["get-context"] = function{run: (*Server).getContext}
	functions["recall"] = function{run: (*Server).recall}
	functions["sweep-expired"] = function{serviceOnly: true, run: (*Server).sweepExpired}
}

// ---- active-session ----

type activeSessionRequest struct {
	actingFor
	Agent     *string `json:"agent"`
	SessionID *string `json:"session_id"`
	Mode      *string `json:"mode"`
}

func (s *Server) activeSession(ctx context.Context, c *call) (int, any, error) {
	var req activeSessionRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	sc, err := c.scope(req.actingFor, req.Agent, memory.DefaultAgent, &f)
	if err != nil {
		return 0, nil, err
	}
	mode := oneOf(&f, "mode", req.Mode, store.ModeResolve, store.ModeResolve, store.ModeActivate, store.ModeNew)
	id := parseUUID(&f, "session_id", req.SessionID, mode == store.ModeActivate)
	if mode == store.ModeNew && req.SessionID != nil {
		f.Add("session_id", "must not be given with mode new: a new session gets a new id")
	}
	if err := f.Err(); err != nil {
		return 0, nil, err
	}
	out, err := s.store.ActiveSession(ctx, store.ActiveSessionParams{Scope: sc, Mode: mode, SessionID: id, TTL: s.cfg.DefaultRetention})
	if err != nil {
		return 0, nil, err
	}
	if out.Created {
		return http.StatusCreated, out, nil
	}
	return http.StatusOK, out, nil
}

// ---- commit-turn ----

type commitTurnRequest struct {
	actingFor
	SessionID  *string     `json:"session_id"`
	Agent      *string     `json:"agent"`
	Messages   []messageIn `json:"messages"`
	Memories   []memoryIn  `json:"memories"`
	TTLSeconds *int64      `json:"ttl_seconds"`
}

type messageIn struct {
	ID         *string           `json:"id"`
	Role       *string           `json:"role"`
	Content    *string           `json:"content"`
	Name       *string           `json:"name"`
	ToolCalls  []memory.ToolCall `json:"tool_calls"`
	ToolCallID *string           `json:"tool_call_id"`
	Metadata   json.RawMessage   `json:"metadata"`
}

type memoryIn struct {
	Content  *string         `json:"content"`
	Metadata json.RawMessage `json:"metadata"`
}

var roles = []string{memory.RoleUser, memory.RoleAssistant, memory.RoleSystem, memory.RoleTool}

func (s *Server) commitTurn(ctx context.Context, c *call) (int, any, error) {
	var req commitTurnRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	sc, err := c.scope(req.actingFor, req.Agent, memory.DefaultAgent, &f)
	if err != nil {
		return 0, nil, err
	}
	p := store.CommitParams{Scope: sc, TTL: s.cfg.DefaultRetention}
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
		for i, m := range req.Messages {
			nm, ok := validateMessage(&f, i, m)
			if !ok {
				continue
			}
			if nm.ID != nil {
				if seen[nm.ID.String()] {
					f.Add(idx("messages", i, "id"), "repeats the id of an earlier message of this request")
				}
				seen[nm.ID.String()] = true
			}
			p.Messages = append(p.Messages, nm)
		}
	}
	if len(req.Memories) > maxMemories {
		f.Addf("memories", "must hold at most %d memories", maxMemories)
	} else {
		for i, m := range req.Memories {
			field := idx("memories", i, "content")
			switch {
			case m.Content == nil:
				f.Add(field, "is required")
				continue
			case len(bytes.TrimSpace([]byte(*m.Content))) == 0:
				f.Add(field, "must not be blank")
				continue
			case memory.CharCount(*m.Content) > maxMemoryChars:
				f.Addf(field, "must be at most %d characters", maxMemoryChars)
				continue
			}
			md := objectField(&f, idx("memories", i, "metadata"), m.Metadata, maxMetadataBytes)
			p.Memories = append(p.Memories, memory.NewMemory{Content: *m.Content, Metadata: md})
		}
	}
	if key := c.r.Header.Get("Idempotency-Key"); key != "" || len(c.r.Header.Values("Idempotency-Key")) > 0 {
		if len(key) < 1 || len(key) > 255 || !printableASCII(key) {
			f.Add("Idempotency-Key", "must be 1 to 255 printable ASCII characters")
		} else {
			p.Idempotency = &store.Idempotency{
				CallerRole: c.principal.Role, Function: "commit-turn", Key: key, RequestHash: requestHash(c.body),
			}
		}
	}
	if err := f.Err(); err != nil {
		return 0, nil, err
	}
	res, replayed, err := s.store.CommitTurn(ctx, p)
	if err != nil {
		return 0, nil, err
	}
	c.replayed = replayed
	return http.StatusCreated, res, nil
}

func validateMessage(f *apierror.Fields, i int, m messageIn) (memory.NewMessage, bool) {
	before := len(*f)
	var nm memory.NewMessage
	nm.ID = parseUUID(f, idx("messages", i, "id"), m.ID, false)
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
	switch {
	case m.Content == nil && !(role == memory.RoleAssistant && len(m.ToolCalls) > 0):
		f.Add(idx("messages", i, "content"), "is required")
	case m.Content != nil && *m.Content == "" && !(role == memory.RoleAssistant && len(m.ToolCalls) > 0):
		f.Add(idx("messages", i, "content"), "may be empty only for an assistant message with tool_calls")
	case m.Content != nil && memory.CharCount(*m.Content) > maxContentChars:
		f.Addf(idx("messages", i, "content"), "must be at most %d characters", maxContentChars)
	case m.Content != nil:
		nm.Content = *m.Content
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
	return nm, len(*f) == before
}

// requestHash identifies a request body for idempotency: the same JSON, whatever its spacing.
func requestHash(body []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, body); err != nil {
		buf.Reset()
		buf.Write(body)
	}
	sum := sha256.Sum256(buf.Bytes())
	return sum[:]
}

// ---- get-context ----

type getContextRequest struct {
	actingFor
	SessionID   *string `json:"session_id"`
	Agent       *string `json:"agent"`
	MaxMessages *int64  `json:"max_messages"`
	MaxTokens   *int64  `json:"max_tokens"`
	Query       *string `json:"query"`
	RecallK     *int64  `json:"recall_k"`
	Format      *string `json:"format"`
}

func (s *Server) getContext(ctx context.Context, c *call) (int, any, error) {
	var req getContextRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	sc, err := c.scope(req.actingFor, req.Agent, memory.DefaultAgent, &f)
	if err != nil {
		return 0, nil, err
	}
	p := store.ContextParams{Scope: sc}
	if id := parseUUID(&f, "session_id", req.SessionID, true); id != nil {
		p.SessionID = *id
	}
	p.MaxMessages = int(intField(&f, "max_messages", req.MaxMessages, 20, 1, 500))
	p.MaxTokens = int(intField(&f, "max_tokens", req.MaxTokens, 0, 1, 10_000_000))
	p.RecallK = int(intField(&f, "recall_k", req.RecallK, 5, 0, 50))
	if req.Query != nil {
		if memory.CharCount(*req.Query) > maxQueryChars {
			f.Addf("query", "must be at most %d characters", maxQueryChars)
		}
		p.Query = *req.Query
	}
	format := oneOf(&f, "format", req.Format, "raw", "raw", "openai")
	if err := f.Err(); err != nil {
		return 0, nil, err
	}
	out, err := s.store.GetContext(ctx, p)
	if err != nil {
		return 0, nil, err
	}
	if format == "openai" {
		return http.StatusOK, openAIContext{Context: out, Messages: toOpenAI(out.Messages)}, nil
	}
	out.Messages = rawMessages(out.Messages)
	return http.StatusOK, out, nil
}

// rawMessages renders messages in the raw format: every field, metadata {} when there is
// none, tool_calls null when there are none, and [] rather than null for no messages.
func rawMessages(msgs []memory.Message) []memory.Message {
	for i := range msgs {
		if msgs[i].Metadata == nil {
			msgs[i].Metadata = json.RawMessage("{}")
		}
	}
	if msgs == nil {
		msgs = []memory.Message{}
	}
	return msgs
}

type openAIContext struct {
	store.Context
	Messages []openAIMessage `json:"messages"`
}

// openAIMessage is exactly a message object of the Chat Completions API.
type openAIMessage struct {
	Role       string            `json:"role"`
	Content    *string           `json:"content"`
	Name       *string           `json:"name,omitempty"`
	ToolCalls  []memory.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID *string           `json:"tool_call_id,omitempty"`
}

func toOpenAI(msgs []memory.Message) []openAIMessage {
	out := make([]openAIMessage, len(msgs))
	for i, m := range msgs {
		content := m.Content
		om := openAIMessage{Role: m.Role, Content: &content, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls}
		if m.Role == memory.RoleAssistant && len(m.ToolCalls) > 0 && m.Content == "" {
			om.Content = nil
		}
		// The API takes a name on user, system and assistant messages only.
		if m.Role != memory.RoleTool && m.Name != nil {
			om.Name = openAIName(*m.Name)
		}
		out[i] = om
	}
	return out
}

// maxOpenAINameLen is the longest name the Chat Completions API takes.
const maxOpenAINameLen = 64

// openAINameOK reports whether the Chat Completions API takes name as it is.
func openAINameOK(name string) bool {
	if len(name) < 1 || len(name) > maxOpenAINameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// openAIName makes a stored name one the Chat Completions API takes (^[a-zA-Z0-9_-]{1,64}$):
// each run of other characters becomes one "_", and the result is cut to 64 characters. A
// changed name with no letter or digit of that set left names nobody, and is omitted (nil).
// Names that fit are unchanged; the raw format always gives the name as stored.
func openAIName(name string) *string {
	if openAINameOK(name) {
		return &name
	}
	var b strings.Builder
	useful, gap := false, false
	for _, r := range name {
		if !(r < 0x80 && (r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r))) {
			gap = b.Len() > 0
			continue
		}
		if gap {
			b.WriteByte('_')
			gap = false
		}
		b.WriteRune(r)
		useful = useful || (r != '_' && r != '-')
	}
	if !useful {
		return nil
	}
	out := b.String()
	if len(out) > maxOpenAINameLen {
		out = out[:maxOpenAINameLen] // ASCII only: a byte is a character
	}
	return &out
}

// ---- recall ----

type recallRequest struct {
	actingFor
	Query    *string         `json:"query"`
	K        *int64          `json:"k"`
	Agent    *string         `json:"agent"`
	Mode     *string         `json:"mode"`
	Filter   json.RawMessage `json:"filter"`
	MinScore *float64        `json:"min_score"`
	// MMRLambda, when given, diversifies the answer (see store.RecallParams.MMRLambda).
	MMRLambda *float64 `json:"mmr_lambda"`
}

func (s *Server) recall(ctx context.Context, c *call) (int, any, error) {
	var req recallRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	sc, err := c.scope(req.actingFor, req.Agent, "", &f)
	if err != nil {
		return 0, nil, err
	}
	p := store.RecallParams{Scope: sc}
	switch {
	case req.Query == nil:
		f.Add("query", "is required")
	case memory.CharCount(*req.Query) < 1 || memory.CharCount(*req.Query) > maxQueryChars:
		f.Addf("query", "must be 1 to %d characters", maxQueryChars)
	default:
		p.Query = *req.Query
	}
	p.K = int(intField(&f, "k", req.K, 10, 1, 100))
	p.Mode = oneOf(&f, "mode", req.Mode, memory.ModeHybrid, memory.ModeHybrid, memory.ModeVector, memory.ModeText)
	p.Filter = objectField(&f, "filter", req.Filter, maxMetadataBytes)
	if req.MinScore != nil {
		p.MinScore = *req.MinScore
	}
	if req.MMRLambda != nil {
		if l := *req.MMRLambda; l < 0 || l > 1 {
			f.Add("mmr_lambda", "must be a number from 0 to 1")
		} else {
			p.MMRLambda = &l
		}
	}
	if err := f.Err(); err != nil {
		return 0, nil, err
	}
	hits, err := s.store.Recall(ctx, p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"results": hits}, nil
}

// ---- sweep-expired ----

type sweepRequest struct {
	DryRun        *bool  `json:"dry_run"`
	BatchSize     *int64 `json:"batch_size"`
	MaxDurationMS *int64 `json:"max_duration_ms"`
}

type sweepResponse struct {
	store.SweepResult
	DurationMS int64 `json:"duration_ms"`
}

func (s *Server) sweepExpired(ctx context.Context, c *call) (int, any, error) {
	var req sweepRequest
	if err := decode(c.body, &req); err != nil {
		return 0, nil, err
	}
	var f apierror.Fields
	batch := intField(&f, "batch_size", req.BatchSize, 5000, 1, 50_000)
	budget := intField(&f, "max_duration_ms", req.MaxDurationMS, 20_000, 1, 900_000)
	if err := f.Err(); err != nil {
		return 0, nil, err
	}
	out, err := s.Sweep(ctx, req.DryRun != nil && *req.DryRun, int(batch), time.Duration(budget)*time.Millisecond)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, out, nil
}

// Sweep deletes expired rows within budget, leaving headroom before ctx's deadline to answer.
func (s *Server) Sweep(ctx context.Context, dryRun bool, batch int, budget time.Duration) (any, error) {
	start := time.Now()
	res, err := s.store.Sweep(ctx, store.SweepParams{DryRun: dryRun, BatchSize: batch, Deadline: workDeadline(ctx, budget)})
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "sweep", "messages", res.Deleted.Messages, "memories", res.Deleted.Memories,
		"sessions", res.Deleted.Sessions, "idempotency_keys", res.Deleted.IdempotencyKeys,
		"batches", res.Batches, "more", res.More, "dry_run", dryRun)
	return sweepResponse{SweepResult: res, DurationMS: time.Since(start).Milliseconds()}, nil
}

// ScheduledSweep is the sweep a scheduler triggers (an EventBridge rule in AWS): the defaults of
// the contract, bounded by ctx's deadline. Only AWS can deliver such an event to the function.
// It then embeds the rows that wait for a vector (see EmbedPending).
func (s *Server) ScheduledSweep(ctx context.Context) (any, error) {
	out, err := s.Sweep(ctx, false, 5000, 20*time.Second)
	if err != nil {
		return nil, err
	}
	embedded, err := s.EmbedPending(ctx, scheduledEmbedLimit, 20*time.Second)
	if err != nil {
		return nil, err
	}
	return scheduledResponse{sweepResponse: out.(sweepResponse), Embedded: embedded}, nil
}
