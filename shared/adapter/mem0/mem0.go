// Package mem0 is the Mem0 Platform adapter: each committed turn (and each page of a backfill)
// is added to Mem0 with its add-memories API, so Mem0 extracts its own memories from the
// conversation; deletions in agentmem delete what Mem0 holds of them; and, optionally, Mem0's
// search results join recall's (Search).
//
// Requests, as Mem0's REST API takes them (https://docs.mem0.ai/api-reference), each with
// "Authorization: Token <MEM0_API_KEY>", and org_id and project_id when configured:
//
//	POST   /v1/memories/           {"messages": [{"role", "content"}], "user_id", "agent_id",
//	                                "run_id", "app_id"?, "metadata", "version": "v2", ...}
//	DELETE /v1/memories/?user_id=&agent_id=&run_id=&app_id=
//	POST   /v2/memories/search/    {"query", "filters": {"AND": [{"user_id"}, ...]}, "top_k"}
//
// Identifiers: user_id is agentmem's user id, agent_id the agent, run_id the session id, and
// app_id the tenant, prefixed (AppID), the default tenant too. The metadata of an add carries
// agentmem_event_id (the same on every retry, and on every page's own id for a backfill), so a
// repeat can be recognized in Mem0.
package mem0

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/upstream"
)

// The defaults of the Mem0 settings.
const (
	DefaultURL = "https://api.mem0.ai"
	// DefaultTimeout bounds one request. An add waits for Mem0 to extract its memories
	// (async_mode false), which takes seconds.
	DefaultTimeout = 30 * time.Second
	// DefaultRecallTimeout bounds the search that enriches recall.
	DefaultRecallTimeout = 800 * time.Millisecond
)

// Config configures the Mem0 adapter.
type Config struct {
	// APIKey (MEM0_API_KEY) authenticates every request; required.
	APIKey string
	// URL (MEM0_URL) is Mem0's API; default DefaultURL.
	URL string
	// OrgID and ProjectID (MEM0_ORG_ID, MEM0_PROJECT_ID), when set, name the organization and
	// project of every request; both or neither.
	OrgID, ProjectID string
	// Timeout (MEM0_TIMEOUT) bounds one delivery request; default DefaultTimeout.
	Timeout time.Duration
	// Recall (MEM0_RECALL) merges Mem0's search results into recall's.
	Recall bool
	// RecallTimeout (MEM0_RECALL_TIMEOUT) bounds that search; default DefaultRecallTimeout.
	RecallTimeout time.Duration
	// Client makes the requests; default one with no redirects followed.
	Client *http.Client
}

// Mem0 is the adapter. It is safe for concurrent use.
type Mem0 struct {
	cfg    Config
	base   string
	client *http.Client
}

// New checks cfg and builds the adapter.
func New(cfg Config) (*Mem0, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, errors.New("MEM0_API_KEY is required (the API key of the Mem0 Platform: app.mem0.ai, API keys)")
	}
	if cfg.URL == "" {
		cfg.URL = DefaultURL
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("MEM0_URL must be an http or https URL")
	}
	if (cfg.OrgID == "") != (cfg.ProjectID == "") {
		return nil, errors.New("MEM0_ORG_ID and MEM0_PROJECT_ID go together: set both or neither")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.RecallTimeout <= 0 {
		cfg.RecallTimeout = DefaultRecallTimeout
	}
	m := &Mem0{cfg: cfg, base: strings.TrimRight(cfg.URL, "/"), client: cfg.Client}
	if m.client == nil {
		m.client = &http.Client{
			// A redirect would resend the key and the content somewhere not configured.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return m, nil
}

// Name is adapter.Mem0.
func (m *Mem0) Name() string { return adapter.Mem0 }

// RecallTimeout is how long recall waits for Search.
func (m *Mem0) RecallTimeout() time.Duration { return m.cfg.RecallTimeout }

// Message is a message as Mem0's add API takes it.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// AddRequest is the body of POST /v1/memories/.
type AddRequest struct {
	Messages  []Message      `json:"messages"`
	UserID    string         `json:"user_id"`
	AgentID   string         `json:"agent_id,omitempty"`
	RunID     string         `json:"run_id,omitempty"`
	AppID     string         `json:"app_id,omitempty"`
	Metadata  map[string]any `json:"metadata"`
	Version   string         `json:"version"`
	AsyncMode bool           `json:"async_mode"`
	OrgID     string         `json:"org_id,omitempty"`
	ProjectID string         `json:"project_id,omitempty"`
}

// Deliver applies ev to Mem0: a turn or a backfill page is added; a deletion deletes the
// memories Mem0 derived from what went (of the session for a session's deletion, reset or a
// message's deletion; of the agent or the user for messages cleared; of the user for
// forget-user). Changes of agentmem's own memories, and a session's sync, ask nothing of Mem0.
func (m *Mem0) Deliver(ctx context.Context, ev adapter.Event) error {
	user := ev.UserID
	app := "" // an erasure of the person in every tenant: no app_id, every tenant's memories go
	if ev.TenantID != nil {
		app = AppID(*ev.TenantID)
	}
	session := ""
	if ev.SessionID != nil {
		session = ev.SessionID.String()
	}
	agent := ""
	if ev.Agent != nil {
		agent = *ev.Agent
	}
	switch ev.Type {
	case adapter.TurnCommitted, adapter.BackfillSession:
		return m.add(ctx, ev, user, agent, session, app)
	case adapter.SessionDeleted, adapter.SessionReset, adapter.MessageDeleted:
		// Mem0 keeps no link from a memory to the message it came from: every memory of the
		// session goes, so nothing derived from a deleted message stays.
		if session == "" {
			return adapter.Permanent(errors.New("the event names no session"))
		}
		return m.deleteAll(ctx, deleteFilter{user: user, app: app, run: session})
	case adapter.SyncSession:
		if ev.Removed != nil && ev.Removed.Session && session != "" {
			return m.deleteAll(ctx, deleteFilter{user: user, app: app, run: session})
		}
		return nil
	case adapter.MessagesCleared:
		return m.deleteAll(ctx, deleteFilter{user: user, app: app, agent: agent})
	case adapter.UserForgotten:
		return m.deleteAll(ctx, deleteFilter{user: user, app: app})
	}
	return nil
}

// add sends the user's and the assistant's messages of ev; an event with none sends nothing.
func (m *Mem0) add(ctx context.Context, ev adapter.Event, user, agent, session, app string) error {
	var msgs []Message
	for _, msg := range ev.Messages {
		if (msg.Role == memory.RoleUser || msg.Role == memory.RoleAssistant) && strings.TrimSpace(msg.Content) != "" {
			msgs = append(msgs, Message{Role: msg.Role, Content: msg.Content})
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	meta := map[string]any{"agentmem_event_id": ev.ID.String(), "agentmem_event_type": ev.Type,
		"pii_scrubbed": ev.PIIScrubbed}
	if ev.SeqFrom != nil && ev.SeqTo != nil {
		meta["agentmem_seq_from"], meta["agentmem_seq_to"] = *ev.SeqFrom, *ev.SeqTo
	}
	if pii, ok := ev.Metadata["pii"]; ok {
		meta["pii"] = pii
	}
	body, err := json.Marshal(AddRequest{Messages: msgs, UserID: user, AgentID: agent, RunID: session, AppID: app,
		Metadata: meta, Version: "v2", AsyncMode: false, OrgID: m.cfg.OrgID, ProjectID: m.cfg.ProjectID})
	if err != nil {
		return fmt.Errorf("encode the add request: %w", err)
	}
	_, err = m.do(ctx, m.cfg.Timeout, http.MethodPost, "/v1/memories/", nil, body, false)
	return err
}

// AppID is Mem0's app_id of an agentmem tenant: prefixed, so that the default tenant (the empty string) has
// one too, distinct from every named tenant's, and a search or a deletion in one tenant never
// reaches another tenant's memories (Mem0 leaves a filter without app_id unbounded).
func AppID(tenant string) string { return "agentmem:" + tenant }

type deleteFilter struct{ user, agent, run, app string }

// deleteAll deletes the memories f selects, always within one user: a filter without a user
// would select other users' memories.
func (m *Mem0) deleteAll(ctx context.Context, f deleteFilter) error {
	if f.user == "" || f.user == uuid.Nil.String() {
		return adapter.Permanent(errors.New("a deletion without a user is never sent"))
	}
	q := url.Values{"user_id": {f.user}}
	for k, v := range map[string]string{"agent_id": f.agent, "run_id": f.run, "app_id": f.app} {
		if v != "" {
			q.Set(k, v)
		}
	}
	m.orgProject(q)
	_, err := m.do(ctx, m.cfg.Timeout, http.MethodDelete, "/v1/memories/", q, nil, true)
	return err
}

func (m *Mem0) orgProject(q url.Values) {
	if m.cfg.OrgID != "" {
		q.Set("org_id", m.cfg.OrgID)
		q.Set("project_id", m.cfg.ProjectID)
	}
}

// SearchRequest is the body of POST /v2/memories/search/.
type SearchRequest struct {
	Query     string         `json:"query"`
	Filters   map[string]any `json:"filters"`
	TopK      int            `json:"top_k"`
	Version   string         `json:"version"`
	OrgID     string         `json:"org_id,omitempty"`
	ProjectID string         `json:"project_id,omitempty"`
}

// Memory is a memory in Mem0's search answer.
type Memory struct {
	ID         string          `json:"id"`
	Memory     string          `json:"memory"`
	UserID     string          `json:"user_id"`
	AgentID    *string         `json:"agent_id"`
	Metadata   json.RawMessage `json:"metadata"`
	Categories []string        `json:"categories"`
	Score      float64         `json:"score"`
	CreatedAt  time.Time       `json:"created_at"`
}

// OriginMem0 marks the recall results that come from Mem0 (memory.Hit.Origin).
const OriginMem0 = "mem0"

// Search asks Mem0 for the k memories of sc's user (of its tenant, and of its agent when it
// names one) nearest query, as recall results: source "memory", origin "mem0", Mem0's score,
// Mem0's metadata with "mem0_id" (Mem0's id of the memory) added. query must already be
// redacted. Memories of another user in the answer are dropped.
func (m *Mem0) Search(ctx context.Context, sc memory.Scope, query string, k int) ([]memory.Hit, error) {
	and := []map[string]any{{"user_id": sc.UserID}}
	and = append(and, map[string]any{"app_id": AppID(sc.TenantID)})
	if sc.Agent != "" {
		and = append(and, map[string]any{"agent_id": sc.Agent})
	}
	body, err := json.Marshal(SearchRequest{Query: query, Filters: map[string]any{"AND": and}, TopK: k, Version: "v2",
		OrgID: m.cfg.OrgID, ProjectID: m.cfg.ProjectID})
	if err != nil {
		return nil, err
	}
	answer, err := m.do(ctx, m.cfg.RecallTimeout, http.MethodPost, "/v2/memories/search/", nil, body, false)
	if err != nil {
		return nil, err
	}
	mems, err := decodeMemories(answer)
	if err != nil {
		return nil, err
	}
	var out []memory.Hit
	for _, mm := range mems {
		if mm.UserID != sc.UserID || strings.TrimSpace(mm.Memory) == "" || mm.ID == "" {
			continue
		}
		meta := map[string]any{}
		if len(mm.Metadata) > 0 && string(mm.Metadata) != "null" {
			_ = json.Unmarshal(mm.Metadata, &meta) // not an object: left out
		}
		meta["mem0_id"] = mm.ID
		if len(mm.Categories) > 0 {
			meta["mem0_categories"] = mm.Categories
		}
		raw, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		id, err := uuid.Parse(mm.ID)
		if err != nil {
			id = uuid.NewSHA1(mem0Namespace, []byte(mm.ID))
		}
		out = append(out, memory.Hit{ID: id.String(), Content: mm.Memory, Score: mm.Score, Metadata: raw,
			CreatedAt: mm.CreatedAt.UTC(), Source: memory.HitMemory, Origin: OriginMem0})
		if len(out) == k {
			break
		}
	}
	return out, nil
}

// mem0Namespace names the UUIDs made for Mem0 ids that are not UUIDs.
var mem0Namespace = uuid.MustParse("6f1d2c1e-4b8a-5c55-9d0e-6d656d302d69")

// decodeMemories reads a search answer: an array of memories, or an object holding it under
// "memories" or "results" (Mem0's documented shapes vary by version).
func decodeMemories(answer []byte) ([]Memory, error) {
	var list []Memory
	if err := json.Unmarshal(answer, &list); err == nil {
		return list, nil
	}
	var obj struct {
		Memories []Memory `json:"memories"`
		Results  []Memory `json:"results"`
	}
	if err := json.Unmarshal(answer, &obj); err != nil {
		return nil, errors.New("Mem0's search answer is not a list of memories")
	}
	if obj.Memories != nil {
		return obj.Memories, nil
	}
	return obj.Results, nil
}

// maxAnswer bounds what is read of an answer.
const maxAnswer = 4 << 20

// do makes one request and returns the answer's body on a 2xx. Its errors name the request
// and the status or the network failure, never a body (Mem0's error answers may echo content):
// 429 and 5xx (and 408, 409, network failures) are retried, honouring Retry-After; any other
// answer is permanent (a wrong key, a request Mem0 refuses will not get better by itself). A
// 404 of a deletion is success: nothing is left to delete.
func (m *Mem0) do(ctx context.Context, timeout time.Duration, method, path string, q url.Values, body []byte, deletion bool) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	target := m.base + path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, adapter.Permanent(errors.New("build the Mem0 request: invalid MEM0_URL"))
	}
	req.Header.Set("Authorization", "Token "+m.cfg.APIKey)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "agentmem-mem0/1")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	what := method + " " + path
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("Mem0 %s: %s", what, adapter.NetworkError(err))
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return nil, fmt.Errorf("Mem0 %s: reading the answer: %s", what, adapter.NetworkError(err))
	}
	switch s := resp.StatusCode; {
	case s >= 200 && s <= 299:
		return answer, nil
	case s == http.StatusNotFound && deletion:
		return nil, nil
	case s == http.StatusTooManyRequests || s >= 500 || s == http.StatusRequestTimeout || s == http.StatusConflict:
		err := fmt.Errorf("Mem0 %s answered %d", what, s)
		if d := upstream.RetryAfter(resp.Header, time.Now()); d > 0 && (s == http.StatusTooManyRequests || s == http.StatusServiceUnavailable) {
			return nil, &adapter.RetryAfterError{After: d, Err: err}
		}
		return nil, err
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return nil, adapter.Permanent(fmt.Errorf("Mem0 %s answered %d: check MEM0_API_KEY (and MEM0_ORG_ID, MEM0_PROJECT_ID)", what, s))
	default:
		return nil, adapter.Permanent(fmt.Errorf("Mem0 %s answered %d", what, s))
	}
}
