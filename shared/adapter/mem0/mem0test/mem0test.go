// Package mem0test runs a server on loopback that speaks the part of Mem0 Platform's REST API
// the Mem0 adapter uses, for tests: add memories (POST /v1/memories/, answered with queued
// events as Mem0 does), delete memories by entity (DELETE /v1/memories/), search (POST
// /v2/memories/search/, filters in Mem0's AND form). It checks what Mem0 checks (the Token
// header, the body's shape, org_id with project_id) and refuses what Mem0 refuses the way Mem0
// does (401 {"detail"}, 400 {"error", "details"}). Each message of an add becomes one memory,
// where Mem0 would extract facts with a model; search ranks by shared words.
package mem0test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Memory is a memory the server holds.
type Memory struct {
	ID        string         `json:"id"`
	Memory    string         `json:"memory"`
	UserID    string         `json:"user_id"`
	AgentID   string         `json:"agent_id,omitempty"`
	RunID     string         `json:"run_id,omitempty"`
	AppID     string         `json:"app_id,omitempty"`
	Role      string         `json:"-"`
	Metadata  map[string]any `json:"metadata"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// Request is a request as the server received it.
type Request struct {
	Method, Path string
	Query        url.Values
	Auth         string
	Body         []byte
	Status       int
	// At is when the request arrived.
	At time.Time
}

// Server is a fake Mem0 Platform.
type Server struct {
	// URL is the API's base (MEM0_URL).
	URL string
	// Key is the API key it accepts.
	Key string
	// OrgID and ProjectID, when set, must come with every request.
	OrgID, ProjectID string

	srv *httptest.Server
	mu  sync.Mutex
	// answer, when set, decides the answer of request n (1-based): a status (0: as Mem0
	// would) and Retry-After ("" for none); a delay before answering.
	answer   func(n int, r *http.Request) (status int, retryAfter string, delay time.Duration)
	requests []Request
	memories []Memory
}

// New starts a server accepting key.
func New(key string) *Server {
	s := &Server{Key: key}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Answer sets how requests are answered (nil: as Mem0 would).
func (s *Server) Answer(f func(n int, r *http.Request) (status int, retryAfter string, delay time.Duration)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = f
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Memories returns the memories held, oldest first.
func (s *Server) Memories() []Memory {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.memories)
}

// Seed adds memories as if Mem0 had extracted them.
func (s *Server) Seed(ms ...Memory) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range ms {
		if m.ID == "" {
			m.ID = uuid.NewString()
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = time.Now().UTC()
			m.UpdatedAt = m.CreatedAt
		}
		s.memories = append(s.memories, m)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func badRequest(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": "400 Bad Request", "details": map[string]any{"message": msg}})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Auth: r.Header.Get("Authorization"), Body: body,
		At: time.Now()}
	s.requests = append(s.requests, req)
	n := len(s.requests)
	answer := s.answer
	s.mu.Unlock()
	rec := &statusRecorder{ResponseWriter: w}
	defer func() {
		s.mu.Lock()
		s.requests[n-1].Status = rec.status
		s.mu.Unlock()
	}()
	w = rec
	if answer != nil {
		status, ra, delay := answer(n, r)
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if status != 0 {
			if ra != "" {
				w.Header().Set("Retry-After", ra)
			}
			writeJSON(w, status, map[string]any{"detail": http.StatusText(status)})
			return
		}
	}
	if req.Auth != "Token "+s.Key {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"detail": "Invalid API key"})
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/memories/":
		s.add(w, body)
	case r.Method == http.MethodDelete && r.URL.Path == "/v1/memories/":
		s.delete(w, r.URL.Query())
	case r.Method == http.MethodPost && r.URL.Path == "/v2/memories/search/":
		s.search(w, body)
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not found."})
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// orgProject checks org_id and project_id as Mem0 takes them: both or neither, and, when the
// server is set to, the right ones.
func (s *Server) orgProject(org, project string) string {
	if (org == "") != (project == "") {
		return "Please provide both org_id and project_id"
	}
	if s.OrgID != "" && (org != s.OrgID || project != s.ProjectID) {
		return "org_id and project_id do not name a project of this key"
	}
	return ""
}

func (s *Server) add(w http.ResponseWriter, body []byte) {
	var in struct {
		Messages  []map[string]any `json:"messages"`
		UserID    *string          `json:"user_id"`
		AgentID   *string          `json:"agent_id"`
		RunID     *string          `json:"run_id"`
		AppID     *string          `json:"app_id"`
		Metadata  map[string]any   `json:"metadata"`
		OrgID     string           `json:"org_id"`
		ProjectID string           `json:"project_id"`
		Version   string           `json:"version"`
		AsyncMode *bool            `json:"async_mode"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		badRequest(w, "Invalid input data.")
		return
	}
	if msg := s.orgProject(in.OrgID, in.ProjectID); msg != "" {
		badRequest(w, msg)
		return
	}
	if len(in.Messages) == 0 {
		badRequest(w, "messages is required")
		return
	}
	if in.UserID == nil && in.AgentID == nil && in.RunID == nil && in.AppID == nil {
		badRequest(w, "One of the filters: app_id, user_id, agent_id, run_id is required!")
		return
	}
	if in.Version != "" && in.Version != "v1" && in.Version != "v2" {
		badRequest(w, "version must be v1 or v2")
		return
	}
	now := time.Now().UTC()
	var events []map[string]any
	var added []Memory
	for _, m := range in.Messages {
		role, ok1 := m["role"].(string)
		content, ok2 := m["content"].(string)
		if !ok1 || !ok2 || (role != "user" && role != "assistant") {
			badRequest(w, "each message needs a role (user or assistant) and a string content")
			return
		}
		mm := Memory{ID: uuid.NewString(), Memory: content, UserID: deref(in.UserID), AgentID: deref(in.AgentID),
			RunID: deref(in.RunID), AppID: deref(in.AppID), Role: role, Metadata: in.Metadata, CreatedAt: now, UpdatedAt: now}
		added = append(added, mm)
		events = append(events, map[string]any{"id": mm.ID, "event": "ADD", "data": map[string]any{"memory": content}})
	}
	s.mu.Lock()
	s.memories = append(s.memories, added...)
	s.mu.Unlock()
	if in.AsyncMode == nil || *in.AsyncMode {
		events = []map[string]any{{"message": "Memory processing has been queued for background execution",
			"status": "PENDING", "event_id": uuid.NewString()}}
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": events, "relations": []any{}})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (s *Server) delete(w http.ResponseWriter, q url.Values) {
	if msg := s.orgProject(q.Get("org_id"), q.Get("project_id")); msg != "" {
		badRequest(w, msg)
		return
	}
	f := map[string]string{}
	for _, k := range []string{"user_id", "agent_id", "run_id", "app_id"} {
		if v := q.Get(k); v != "" {
			f[k] = v
		}
	}
	if len(f) == 0 {
		badRequest(w, "At least one filter is required to delete all memories. If you want to delete all memories, use the `reset()` method.")
		return
	}
	s.mu.Lock()
	s.memories = slices.DeleteFunc(s.memories, func(m Memory) bool { return m.matches(f) })
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"message": "Memories deleted successfully!"})
}

func (m Memory) matches(f map[string]string) bool {
	for k, v := range f {
		var got string
		switch k {
		case "user_id":
			got = m.UserID
		case "agent_id":
			got = m.AgentID
		case "run_id":
			got = m.RunID
		case "app_id":
			got = m.AppID
		default:
			return false
		}
		if v != "*" && got != v {
			return false
		}
	}
	return true
}

func (s *Server) search(w http.ResponseWriter, body []byte) {
	var in struct {
		Query     string         `json:"query"`
		Filters   map[string]any `json:"filters"`
		TopK      *int           `json:"top_k"`
		OrgID     string         `json:"org_id"`
		ProjectID string         `json:"project_id"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.Query == "" || in.Filters == nil {
		badRequest(w, "query and filters are required")
		return
	}
	if msg := s.orgProject(in.OrgID, in.ProjectID); msg != "" {
		badRequest(w, msg)
		return
	}
	f := map[string]string{}
	and, ok := in.Filters["AND"].([]any)
	if !ok {
		and = []any{in.Filters}
	}
	for _, c := range and {
		cond, ok := c.(map[string]any)
		if !ok {
			badRequest(w, "filters: each condition is an object")
			return
		}
		for k, v := range cond {
			sv, ok := v.(string)
			if !ok {
				badRequest(w, fmt.Sprintf("filters: %s must be a string here", k))
				return
			}
			f[k] = sv
		}
	}
	if f["user_id"] == "" && f["agent_id"] == "" && f["run_id"] == "" && f["app_id"] == "" {
		badRequest(w, "Filters must contain at least one of: user_id, agent_id, run_id, app_id")
		return
	}
	k := 10
	if in.TopK != nil {
		k = *in.TopK
	}
	words := strings.Fields(strings.ToLower(in.Query))
	type scored struct {
		Memory
		Score float64 `json:"score"`
	}
	var out []scored
	s.mu.Lock()
	for _, m := range s.memories {
		if !m.matches(f) {
			continue
		}
		text := strings.ToLower(m.Memory)
		n := 0
		for _, wd := range words {
			if strings.Contains(text, wd) {
				n++
			}
		}
		if n > 0 {
			out = append(out, scored{m, float64(n) / float64(len(words))})
		}
	}
	s.mu.Unlock()
	slices.SortStableFunc(out, func(a, b scored) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	if len(out) > k {
		out = out[:k]
	}
	if out == nil {
		out = []scored{}
	}
	writeJSON(w, http.StatusOK, out)
}
