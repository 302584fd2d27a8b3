package mem0_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/mem0"
	"github.com/agentmem/agentmem/shared/adapter/mem0/mem0test"
	"github.com/agentmem/agentmem/shared/memory"
)

const key = "m0-test-key-of-the-fake"

func newServer(t *testing.T) *mem0test.Server {
	t.Helper()
	s := mem0test.New(key)
	t.Cleanup(s.Close)
	return s
}

func newAdapter(t *testing.T, cfg mem0.Config) *mem0.Mem0 {
	t.Helper()
	m, err := mem0.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func turn(content ...string) adapter.Event {
	tenant, agent, session := "acme", "bot", uuid.New()
	from, to := int64(1), int64(len(content)+1)
	ev := adapter.Event{ID: uuid.New(), Type: adapter.TurnCommitted, OccurredAt: time.Now().UTC(), TenantID: &tenant,
		UserID: uuid.NewString(), Agent: &agent, SessionID: &session, SeqFrom: &from, SeqTo: &to, Memories: []adapter.Memory{},
		PIIScrubbed: true, Metadata: map[string]any{"pii": []any{map[string]any{"type": "email", "hash": "ab12"}}}}
	ev.Messages = append(ev.Messages, memory.Message{ID: uuid.NewString(), Seq: 1, Role: memory.RoleSystem, Content: "You are terse."})
	for i, c := range content {
		role := memory.RoleUser
		if i%2 == 1 {
			role = memory.RoleAssistant
		}
		ev.Messages = append(ev.Messages, memory.Message{ID: uuid.NewString(), Seq: int64(i + 2), Role: role, Content: c})
	}
	return ev
}

// A turn is one add: its user and assistant messages (not the system's or a tool's), the
// user, agent, session and tenant as Mem0's user_id, agent_id, run_id and app_id, the event's
// id in the metadata, the key as a Token, org_id and project_id when configured. The same
// event sent again carries the same event id.
func TestTurnIsAdded(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.OrgID, s.ProjectID = "org_1", "proj_1"
	m := newAdapter(t, mem0.Config{APIKey: key, URL: s.URL, OrgID: "org_1", ProjectID: "proj_1"})
	if m.Name() != adapter.Mem0 {
		t.Errorf("name %q", m.Name())
	}
	ev := turn("I like green tea.", "Noted.")
	for range 2 {
		if err := m.Deliver(t.Context(), ev); err != nil {
			t.Fatal(err)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var bodies []map[string]any
	for _, r := range reqs {
		if r.Method != http.MethodPost || r.Path != "/v1/memories/" || r.Auth != "Token "+key || r.Status != http.StatusOK {
			t.Errorf("request %s %s auth %q: %d", r.Method, r.Path, r.Auth, r.Status)
		}
		var b map[string]any
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	if !reflect.DeepEqual(bodies[0], bodies[1]) {
		t.Errorf("a repeat differs: %v / %v", bodies[0], bodies[1])
	}
	b := bodies[0]
	wantMsgs := []any{map[string]any{"role": "user", "content": "I like green tea."},
		map[string]any{"role": "assistant", "content": "Noted."}}
	if !reflect.DeepEqual(b["messages"], wantMsgs) {
		t.Errorf("messages %v", b["messages"])
	}
	for k, want := range map[string]any{"user_id": ev.UserID, "agent_id": "bot", "run_id": ev.SessionID.String(),
		"app_id": "agentmem:acme", "version": "v2", "async_mode": false, "org_id": "org_1", "project_id": "proj_1"} {
		if b[k] != want {
			t.Errorf("%s = %v, want %v", k, b[k], want)
		}
	}
	meta, _ := b["metadata"].(map[string]any)
	if meta["agentmem_event_id"] != ev.ID.String() || meta["agentmem_event_type"] != adapter.TurnCommitted ||
		meta["pii_scrubbed"] != true || meta["agentmem_seq_from"] != 1.0 || meta["pii"] == nil {
		t.Errorf("metadata %v", meta)
	}
	if got := s.Memories(); len(got) != 4 || got[0].UserID != ev.UserID || got[0].RunID != ev.SessionID.String() {
		t.Errorf("memories %+v", got)
	}
}

// Deletions delete what Mem0 derived from what went, always within one user: a session's (its
// deletion, a reset, a message's deletion, a sync of a session gone), an agent's (messages
// cleared), the user's in one tenant or in all (forget-user). Changes of agentmem's own
// memories, a sync of a live session and a turn without user or assistant text send nothing.
func TestDeletions(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m := newAdapter(t, mem0.Config{APIKey: key, URL: s.URL})
	ev := turn("hello")
	user, session, other := ev.UserID, ev.SessionID.String(), uuid.NewString()
	s.Seed(mem0test.Memory{Memory: "a", UserID: user, RunID: session, AppID: "agentmem:acme", AgentID: "bot"},
		mem0test.Memory{Memory: "b", UserID: user, RunID: uuid.NewString(), AppID: "agentmem:acme", AgentID: "bot"},
		mem0test.Memory{Memory: "c", UserID: user, RunID: uuid.NewString(), AppID: "agentmem:acme", AgentID: "other"},
		mem0test.Memory{Memory: "d", UserID: user, AppID: "agentmem:beta"},
		mem0test.Memory{Memory: "e", UserID: other, RunID: session, AppID: "agentmem:acme"})
	remaining := func() string {
		var out []string
		for _, x := range s.Memories() {
			out = append(out, x.Memory)
		}
		return strings.Join(out, "")
	}
	with := func(typ string, f func(*adapter.Event)) adapter.Event {
		e := ev
		e.ID, e.Type, e.Messages = uuid.New(), typ, nil
		e.Removed = &adapter.Removed{AllMessages: true}
		if f != nil {
			f(&e)
		}
		return e
	}
	for _, tc := range []struct {
		ev     adapter.Event
		query  string
		remain string
	}{
		{with(adapter.MemoryUpdated, func(e *adapter.Event) { e.Removed = nil }), "", "abcde"},
		{with(adapter.SyncSession, func(e *adapter.Event) { e.Removed = nil; e.Session = &adapter.Session{} }), "", "abcde"},
		{with(adapter.TurnCommitted, func(e *adapter.Event) {
			e.Removed = nil
			e.Messages = []memory.Message{{Role: memory.RoleTool, Content: "{}"}, {Role: memory.RoleUser, Content: "  "}}
		}), "", "abcde"},
		{with(adapter.SessionDeleted, nil), "app_id=agentmem%3Aacme&run_id=" + session + "&user_id=" + user, "bcde"},
		{with(adapter.MessagesCleared, nil), "agent_id=bot&app_id=agentmem%3Aacme&user_id=" + user, "cde"},
		{with(adapter.UserForgotten, nil), "app_id=agentmem%3Aacme&user_id=" + user, "de"},
		{with(adapter.UserForgotten, func(e *adapter.Event) { e.TenantID = nil }), "user_id=" + user, "e"},
	} {
		t.Run(tc.ev.Type, func(t *testing.T) {
			before := len(s.Requests())
			if err := m.Deliver(t.Context(), tc.ev); err != nil {
				t.Fatalf("%s: %v", tc.ev.Type, err)
			}
			reqs := s.Requests()[before:]
			switch {
			case tc.query == "" && len(reqs) != 0:
				t.Errorf("%s sent %d requests", tc.ev.Type, len(reqs))
			case tc.query != "" && (len(reqs) != 1 || reqs[0].Method != http.MethodDelete || reqs[0].Path != "/v1/memories/" ||
				reqs[0].Query.Encode() != tc.query || reqs[0].Status != http.StatusOK):
				t.Errorf("%s: requests %+v, want DELETE ?%s", tc.ev.Type, reqs, tc.query)
			}
			if got := remaining(); got != tc.remain {
				t.Errorf("after %s: %q remain, want %q", tc.ev.Type, got, tc.remain)
			}
		})
	}
	// A reset, a message's deletion and a sync of a session gone: the session's memories.
	for _, typ := range []string{adapter.SessionReset, adapter.MessageDeleted, adapter.SyncSession} {
		s.Seed(mem0test.Memory{Memory: "x", UserID: user, RunID: session, AppID: "agentmem:acme"})
		if err := m.Deliver(t.Context(), with(typ, func(e *adapter.Event) { e.Removed.Session = typ == adapter.SyncSession })); err != nil {
			t.Fatal(err)
		}
		if got := remaining(); got != "e" {
			t.Errorf("after %s: %q remain", typ, got)
		}
	}
}

// Failures: 429 and 5xx are retried, with Mem0's Retry-After; a refused key or request is
// permanent; a deletion of what is not there is done; a slow Mem0 is a timeout. No error holds
// the content, nor the key.
func TestFailures(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m := newAdapter(t, mem0.Config{APIKey: key, URL: s.URL, Timeout: 300 * time.Millisecond})
	const secret = "the-secret-content-4242"
	ev := turn(secret)
	for _, tc := range []struct {
		status     int
		retryAfter string
		delay      time.Duration
		wantAfter  time.Duration
		permanent  bool
		want       string
	}{
		{http.StatusTooManyRequests, "7", 0, 7 * time.Second, false, "answered 429"},
		{http.StatusServiceUnavailable, "", 0, 0, false, "answered 503"},
		{http.StatusInternalServerError, "", 0, 0, false, "answered 500"},
		{http.StatusBadRequest, "", 0, 0, true, "answered 400"},
		{http.StatusUnauthorized, "", 0, 0, true, "MEM0_API_KEY"},
		{http.StatusForbidden, "", 0, 0, true, "answered 403"},
		{http.StatusOK, "", 2 * time.Second, 0, false, "no answer in time"},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			s.Answer(func(int, *http.Request) (int, string, time.Duration) { return tc.status, tc.retryAfter, tc.delay })
			err := m.Deliver(t.Context(), ev)
			if err == nil {
				t.Errorf("%d: no error", tc.status)
				return
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), key) {
				t.Errorf("%d: error %q", tc.status, err)
			}
			if adapter.IsPermanent(err) != tc.permanent || adapter.RetryAfter(err) != tc.wantAfter {
				t.Errorf("%d: permanent %v, retry after %s", tc.status, adapter.IsPermanent(err), adapter.RetryAfter(err))
			}
		})
	}
	// The fake's own refusal of a wrong key, as Mem0 answers it.
	s.Answer(nil)
	wrong := newAdapter(t, mem0.Config{APIKey: "m0-wrong", URL: s.URL})
	if err := wrong.Deliver(t.Context(), ev); !adapter.IsPermanent(err) {
		t.Errorf("a wrong key: %v", err)
	}
	s.Answer(func(int, *http.Request) (int, string, time.Duration) { return http.StatusNotFound, "", 0 })
	del := ev
	del.Type, del.Removed = adapter.SessionDeleted, &adapter.Removed{Session: true}
	if err := m.Deliver(t.Context(), del); err != nil {
		t.Errorf("deleting what is gone: %v", err)
	}
	// Unreachable: retried.
	down := newAdapter(t, mem0.Config{APIKey: key, URL: "http://127.0.0.1:1"})
	if err := down.Deliver(t.Context(), ev); err == nil || adapter.IsPermanent(err) {
		t.Errorf("unreachable: %v", err)
	}
}

// Search asks for the memories of the caller's user (tenant, agent) and returns them as recall
// results of origin mem0, dropping any of another user.
func TestSearch(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m := newAdapter(t, mem0.Config{APIKey: key, URL: s.URL})
	user := uuid.New()
	s.Seed(mem0test.Memory{ID: "mem_01JF8ZS4Y0R0SPM13R5R6H32CJ", Memory: "Likes green tea", UserID: user.String(),
		AppID: "agentmem:acme", AgentID: "bot", Metadata: map[string]any{"agentmem_event_id": "x"}},
		mem0test.Memory{Memory: "Likes black tea", UserID: user.String(), AppID: "agentmem:acme", AgentID: "other"},
		mem0test.Memory{Memory: "Likes tea too", UserID: uuid.NewString(), AppID: "agentmem:acme", AgentID: "bot"})
	hits, err := m.Search(t.Context(), memory.Scope{TenantID: "acme", UserID: user.String(), Agent: "bot"}, "green tea", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Content != "Likes green tea" || hits[0].Origin != mem0.OriginMem0 ||
		hits[0].Source != memory.HitMemory || hits[0].Score != 1 {
		t.Fatalf("hits %+v", hits)
	}
	var meta map[string]any
	if err := json.Unmarshal(hits[0].Metadata, &meta); err != nil || meta["mem0_id"] != "mem_01JF8ZS4Y0R0SPM13R5R6H32CJ" ||
		meta["agentmem_event_id"] != "x" {
		t.Errorf("metadata %s", hits[0].Metadata)
	}
	r := s.Requests()[0]
	var body map[string]any
	_ = json.Unmarshal(r.Body, &body)
	want := map[string]any{"AND": []any{map[string]any{"user_id": user.String()}, map[string]any{"app_id": "agentmem:acme"},
		map[string]any{"agent_id": "bot"}}}
	if r.Path != "/v2/memories/search/" || !reflect.DeepEqual(body["filters"], want) || body["top_k"] != 5.0 || body["query"] != "green tea" {
		t.Errorf("search request %s %s", r.Path, r.Body)
	}
	// Without an agent: every agent's.
	hits, err = m.Search(t.Context(), memory.Scope{TenantID: "acme", UserID: user.String()}, "tea", 5)
	if err != nil || len(hits) != 2 {
		t.Errorf("all agents: %d hits, %v", len(hits), err)
	}
	s.Answer(func(int, *http.Request) (int, string, time.Duration) { return http.StatusBadGateway, "", 0 })
	if _, err := m.Search(t.Context(), memory.Scope{UserID: user.String()}, "tea", 5); err == nil {
		t.Error("a 502 searched")
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  mem0.Config
		want string
	}{
		{mem0.Config{}, "MEM0_API_KEY"},
		{mem0.Config{APIKey: "k", URL: "ftp://x"}, "MEM0_URL"},
		{mem0.Config{APIKey: "k", OrgID: "o"}, "MEM0_ORG_ID"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if _, err := mem0.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v: %v", tc.cfg, err)
			}
		})
	}
	m, err := mem0.New(mem0.Config{APIKey: "k"})
	if err != nil || m.RecallTimeout() != mem0.DefaultRecallTimeout {
		t.Errorf("defaults: %v", err)
	}
	var pe *adapter.PermanentError
	if !errors.As(adapter.Permanent(errors.New("x")), &pe) {
		t.Error("Permanent")
	}
}

// The default tenant (the empty string) is a tenant like any other: a search there finds none of the same
// person's memories of another tenant, and a forget-user there deletes none of them.
func TestDefaultTenantStaysInItsOwn(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m := newAdapter(t, mem0.Config{APIKey: key, URL: s.URL})
	user := uuid.New()
	s.Seed(mem0test.Memory{Memory: "Likes tea in acme", UserID: user.String(), AppID: mem0.AppID("acme")},
		mem0test.Memory{Memory: "Likes tea by default", UserID: user.String(), AppID: mem0.AppID("")})
	hits, err := m.Search(t.Context(), memory.Scope{UserID: user.String()}, "tea", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Content != "Likes tea by default" {
		t.Errorf("search in the default tenant: %+v, want its own memory only", hits)
	}
	def := ""
	forget := adapter.Event{ID: uuid.New(), Type: adapter.UserForgotten, TenantID: &def, UserID: user.String()}
	if err := m.Deliver(t.Context(), forget); err != nil {
		t.Fatal(err)
	}
	if left := s.Memories(); len(left) != 1 || left[0].Memory != "Likes tea in acme" {
		t.Errorf("after forgetting the user in the default tenant: %+v, want acme's memory kept", left)
	}
}
