package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/mem0"
	"github.com/agentmem/agentmem/shared/adapter/mem0/mem0test"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/telemetry"
)

const mem0Key = "m0-key-of-the-fake-mem0"

// mem0Env is a server with the Mem0 adapter enabled (and, with recall, Mem0's memories merged
// into recall), over a database of its own, delivering to a fake Mem0.
type mem0Env struct {
	*env
	mem0 *mem0test.Server
}

func newMem0Env(t *testing.T, jc app.JobsConfig, recall bool, recallTimeout time.Duration) *mem0Env {
	t.Helper()
	fake := mem0test.New(mem0Key)
	t.Cleanup(fake.Close)
	m, err := mem0.New(mem0.Config{APIKey: mem0Key, URL: fake.URL, Timeout: 5 * time.Second, Recall: recall,
		RecallTimeout: recallTimeout})
	if err != nil {
		t.Fatal(err)
	}
	cfg := app.Config{Jobs: jc, Adapters: map[string]adapter.Adapter{adapter.Mem0: m}, Redactor: testRedactor(t)}
	if recall {
		cfg.RecallExtra = m
	}
	return &mem0Env{env: buildEnv(t, envConfig{own: true, app: cfg}), mem0: fake}
}

// addBodies decodes the add requests Mem0 received.
func addBodies(t *testing.T, s *mem0test.Server) []mem0.AddRequest {
	t.Helper()
	var out []mem0.AddRequest
	for _, r := range s.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/memories/" {
			var b mem0.AddRequest
			if err := json.Unmarshal(r.Body, &b); err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}

// commit-turn → outbox → process-jobs → Mem0: the turn is added with its personal data
// redacted (Mem0 never receives the email or the phone number the database keeps), under the
// user, agent and session, with the job's event id; a backfill adds every page under its own
// id; deleting a session deletes the run's memories in Mem0, forget-user the user's. Nothing
// of the content reaches the log.
func TestJobsDeliveredToMem0(t *testing.T) {
	t.Parallel()
	e := newMem0Env(t, app.JobsConfig{}, false, 0)
	u := e.newUser("acme")
	sid := uuid.New()
	e.call(u.token, "commit-turn", jobTurn(sid, "bot", "I am Ada-8842, mail ada8842@example.com or call +44 20 7946 0958.",
		"Noted, Ada-8842.")).must(t, http.StatusCreated)
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatalf("done %d", done)
	}
	adds := addBodies(t, e.mem0)
	if len(adds) != 1 {
		t.Fatalf("%d adds", len(adds))
	}
	add := adds[0]
	if add.UserID != u.id.String() || add.AgentID != "bot" || add.RunID != sid.String() || add.AppID != "agentmem:acme" ||
		len(add.Messages) != 2 || add.Messages[0].Role != "user" ||
		add.Messages[0].Content != "I am Ada-8842, mail [EMAIL] or call [PHONE]." || add.Messages[1].Content != "Noted, Ada-8842." {
		t.Fatalf("add %+v", add)
	}
	var eventID string
	conn := e.adminConn()
	if err := conn.QueryRow(context.Background(), `select event_id::text from agentmem.jobs where user_id = $1`, u.id).Scan(&eventID); err != nil {
		t.Fatal(err)
	}
	conn.Close(context.Background())
	if add.Metadata["agentmem_event_id"] != eventID || add.Metadata["pii_scrubbed"] != true || add.Metadata["pii"] == nil {
		t.Errorf("metadata %v, want event id %s", add.Metadata, eventID)
	}
	for _, r := range e.mem0.Requests() {
		if strings.Contains(string(r.Body), "ada8842@example.com") || strings.Contains(string(r.Body), "7946 0958") {
			t.Errorf("Mem0 received personal data: %s", r.Body)
		}
	}

	// A backfill of a session of 150 messages: two pages, each added under its own id.
	big := uuid.New()
	var contents []string
	for i := range 150 {
		contents = append(contents, "line "+strings.Repeat("x", i%7+1))
	}
	e.call(u.token, "commit-turn", jobTurn(big, "bot", contents[:100]...)).must(t, http.StatusCreated)
	e.call(u.token, "commit-turn", jobTurn(big, "bot", contents[100:]...)).must(t, http.StatusCreated)
	r := e.call(u.token, "intents", map[string]any{"type": "backfillSession", "session_id": big}).must(t, http.StatusAccepted)
	if _, done, _, _, _ := e.process(t); done != 3 {
		t.Fatalf("turns and backfill: done %d (%s)", done, r.raw)
	}
	adds = addBodies(t, e.mem0)
	if len(adds) != 5 {
		t.Fatalf("%d adds, want the first turn, two turns and two pages", len(adds))
	}
	adds = adds[1:]
	slices.SortStableFunc(adds, func(a, b mem0.AddRequest) int {
		return strings.Compare(fmt.Sprint(a.Metadata["agentmem_event_type"]), fmt.Sprint(b.Metadata["agentmem_event_type"]))
	})
	ids := map[any]bool{}
	for _, a := range adds[:2] {
		ids[a.Metadata["agentmem_event_id"]] = true
		if a.Metadata["agentmem_event_type"] != adapter.BackfillSession || a.RunID != big.String() {
			t.Errorf("page %+v", a.Metadata)
		}
	}
	if len(adds[0].Messages) != 100 || len(adds[1].Messages) != 50 || len(ids) != 2 {
		t.Errorf("pages of %d and %d messages, %d ids", len(adds[0].Messages), len(adds[1].Messages), len(ids))
	}

	// Deletions follow.
	e.call(u.token, "sessions", map[string]any{"op": "delete", "session_id": sid}).must(t, http.StatusOK)
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatalf("session deletion: done %d", done)
	}
	for _, m := range e.mem0.Memories() {
		if m.RunID == sid.String() {
			t.Fatalf("a memory of the deleted session is still in Mem0")
		}
	}
	if len(e.mem0.Memories()) == 0 {
		t.Fatal("the other session's memories went too")
	}
	e.call(u.token, "forget-user", map[string]any{}).must(t, http.StatusOK)
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatalf("forget-user: done %d", done)
	}
	if n := len(e.mem0.Memories()); n != 0 {
		t.Errorf("%d memories of the forgotten user in Mem0", n)
	}
	last := e.mem0.Requests()[len(e.mem0.Requests())-1]
	if last.Method != http.MethodDelete || last.Query.Get("user_id") != u.id.String() || last.Auth != "Token "+mem0Key {
		t.Errorf("forget-user request %+v", last)
	}
	// Ids in the log are hex and may hold any digits: look for the content's words instead.
	for _, content := range []string{"Ada-8842", "ada8842", "Noted", "7946 0958"} {
		if strings.Contains(e.logBuf.String(), content) {
			t.Errorf("the log holds content (%q)", content)
		}
	}
}

// A user deleted in Supabase Auth reaches Mem0 too: the trigger's erasure writes a fan-out
// job, which process-jobs expands into the Mem0 adapter's onUserForgotten job, and Mem0
// deletes the person's memories of every tenant (no app_id), even when a forget-user of one
// tenant came first; another user's stay.
func TestAuthUserDeletionReachesMem0(t *testing.T) {
	t.Parallel()
	e := newMem0Env(t, app.JobsConfig{}, false, 0)
	conn := e.adminConn()
	t.Cleanup(func() { conn.Close(context.Background()) })
	gone, kept := uuid.New(), uuid.New()
	for _, id := range []uuid.UUID{gone, kept} {
		auSignUp(t, conn, id)
		for _, tenant := range []string{"acme", ""} {
			e.call(knToken(t, id, tenant), "commit-turn", jobTurn(uuid.New(), "bot", "I live in Porto.", "Noted.")).
				must(t, http.StatusCreated)
		}
	}
	if _, done, _, _, _ := e.process(t); done != 4 {
		t.Fatalf("turns: done %d", done)
	}
	held := func(id uuid.UUID) map[string]int {
		n := map[string]int{}
		for _, m := range e.mem0.Memories() {
			if m.UserID == id.String() {
				n[m.AppID]++
			}
		}
		return n
	}
	if n := held(gone); n["agentmem:acme"] == 0 || n["agentmem:"] == 0 {
		t.Fatalf("before: Mem0 holds %v of the user", n)
	}
	before := len(e.mem0.Requests())

	if _, err := conn.Exec(t.Context(), `delete from auth.users where id = $1`, gone); err != nil {
		t.Fatal(err)
	}
	var adapters []string
	if err := conn.QueryRow(t.Context(), `select coalesce(array_agg(adapter || ':' || intent || ':' || status || ':' || refs::text
		order by adapter), '{}') from agentmem.jobs where user_id = $1`, gone).Scan(&adapters); err != nil {
		t.Fatal(err)
	}
	if want := []string{`fanout:onUserForgotten:pending:{"all_tenants": true}`}; !slices.Equal(adapters, want) {
		t.Fatalf("jobs after the deletion %v, want %v", adapters, want)
	}
	// A forget-user of one tenant meanwhile does not cancel the erasure of every tenant: it
	// keeps the waiting erasure's job and writes its own.
	e.call(e.serviceToken(), "forget-user", map[string]any{"user_id": gone, "tenant_id": "acme"}).must(t, http.StatusOK)
	if _, done, _, _, _ := e.process(t); done != 3 {
		t.Fatalf("the deletion: done %d, want the fan-out, its Mem0 job and forget-user's", done)
	}
	if err := conn.QueryRow(t.Context(), `select array_agg(adapter || ':' || intent || ':' || status || ':' || refs::text
		order by adapter, refs::text) from agentmem.jobs where user_id = $1`, gone).Scan(&adapters); err != nil {
		t.Fatal(err)
	}
	if want := []string{`fanout:onUserForgotten:done:{"all_tenants": true}`, `mem0:onUserForgotten:done:{"all_tenants": false}`,
		`mem0:onUserForgotten:done:{"all_tenants": true}`}; !slices.Equal(adapters, want) {
		t.Fatalf("jobs after process-jobs %v, want %v", adapters, want)
	}
	if n := held(gone); len(n) != 0 {
		t.Errorf("after: Mem0 holds %v of the deleted user", n)
	}
	if n := held(kept); n["agentmem:acme"] == 0 || n["agentmem:"] == 0 {
		t.Errorf("the other user's memories went: %v", n)
	}
	everyTenant := 0
	for _, r := range e.mem0.Requests()[before:] {
		if r.Method != http.MethodDelete || r.Query.Get("user_id") != gone.String() {
			t.Errorf("request after the deletion %+v", r)
		}
		if !r.Query.Has("app_id") {
			everyTenant++
		}
	}
	if everyTenant != 1 {
		t.Errorf("%d deletions in every tenant, want 1", everyTenant)
	}
	// Expanded once: another run finds nothing to do.
	if processed, _, _, _, _ := e.process(t); processed != 0 {
		t.Errorf("a second run processed %d jobs", processed)
	}
}

// Mem0 failing: a 5xx is retried with backoff up to the cap, then the job is dead, its
// last_error naming the status and not the content; a 429 waits at least its Retry-After; a
// refused key is dead at once. The commit never fails.
func TestMem0RetriesThenDies(t *testing.T) {
	t.Parallel()
	jc := app.JobsConfig{MaxAttempts: 3, BackoffBase: time.Second, BackoffMax: 2 * time.Second}
	e := newMem0Env(t, jc, false, 0)
	jobOf := func(u user) (status string, attempts int, wait float64, lastErr string) {
		t.Helper()
		conn := e.adminConn()
		defer conn.Close(context.Background())
		if err := conn.QueryRow(context.Background(), `select status, attempts, extract(epoch from next_attempt_at - updated_at),
			coalesce(last_error, '') from agentmem.jobs where user_id = $1`, u.id).Scan(&status, &attempts, &wait, &lastErr); err != nil {
			t.Fatal(err)
		}
		return
	}
	u := e.newUser("")
	e.mem0.Answer(func(int, *http.Request) (int, string, time.Duration) { return http.StatusBadGateway, "", 0 })
	e.call(u.token, "commit-turn", jobTurn(uuid.New(), "bot", "secret-content-6161")).must(t, http.StatusCreated)
	for attempt := 1; attempt <= 3; attempt++ {
		_, _, retried, dead, _ := e.process(t)
		status, attempts, _, lastErr := jobOf(u)
		if attempts != attempt || lastErr != "Mem0 POST /v1/memories/ answered 502" {
			t.Fatalf("attempt %d: %d attempts, error %q", attempt, attempts, lastErr)
		}
		if attempt < 3 && (status != "pending" || retried != 1) {
			t.Errorf("attempt %d: %s, retried %d", attempt, status, retried)
		}
		if attempt == 3 && (status != "dead" || dead != 1) {
			t.Errorf("attempt %d: %s, dead %d", attempt, status, dead)
		}
		e.due()
	}

	// 429 with Retry-After: 120 s, beyond the backoff's 2 s at most.
	u2 := e.newUser("")
	e.mem0.Answer(func(int, *http.Request) (int, string, time.Duration) { return http.StatusTooManyRequests, "120", 0 })
	e.call(u2.token, "commit-turn", jobTurn(uuid.New(), "bot", "secret-content-6161")).must(t, http.StatusCreated)
	e.process(t)
	if status, _, wait, lastErr := jobOf(u2); status != "pending" || wait < 119 || lastErr != "Mem0 POST /v1/memories/ answered 429" {
		t.Errorf("after a 429: %s, waits %.0fs, %q", status, wait, lastErr)
	}

	// A refused key: dead after one attempt.
	u3 := e.newUser("")
	e.mem0.Answer(nil)
	e.mem0.Key = "m0-rotated-key"
	e.call(u3.token, "commit-turn", jobTurn(uuid.New(), "bot", "secret-content-6161")).must(t, http.StatusCreated)
	if _, _, _, dead, _ := e.process(t); dead != 1 {
		t.Errorf("a refused key: dead %d", dead)
	}
	if status, attempts, _, lastErr := jobOf(u3); status != "dead" || attempts != 1 || !strings.Contains(lastErr, "401") ||
		!strings.Contains(lastErr, "MEM0_API_KEY") {
		t.Errorf("a refused key: %s after %d, %q", status, attempts, lastErr)
	}
	if n := e.count("jobs", "last_error like '%6161%' or last_error like '%"+mem0Key+"%'"); n != 0 {
		t.Errorf("%d jobs hold content or the key in last_error", n)
	}
	if strings.Contains(e.logBuf.String(), "secret-content") || strings.Contains(e.logBuf.String(), mem0Key) {
		t.Error("the log holds content or the key")
	}
}

// MEM0_RECALL: recall merges Mem0's memories of the caller (never another user's) into its
// own results, alternately, the database's first, each of Mem0's marked source "memory",
// origin "mem0"; Mem0 gets the query redacted. Mem0 failing or slow leaves recall its own
// results, logged without content; a search of messages, or with a metadata filter, does not
// ask Mem0.
func TestRecallWithMem0(t *testing.T) {
	t.Parallel()
	e := newMem0Env(t, app.JobsConfig{}, true, 500*time.Millisecond)
	u, other := e.newUser("acme"), e.newUser("acme")
	turn := jobTurn(uuid.New(), "bot", "hello")
	turn["memories"] = []map[string]any{{"content": "The user drinks oolong tea daily."}}
	e.call(u.token, "commit-turn", turn).must(t, http.StatusCreated)
	e.mem0.Seed(mem0test.Memory{Memory: "Prefers oolong tea without sugar", UserID: u.id.String(), AgentID: "bot", AppID: "agentmem:acme"},
		mem0test.Memory{Memory: "Oolong tea lover, other user", UserID: other.id.String(), AgentID: "bot", AppID: "agentmem:acme"},
		mem0test.Memory{Memory: "the user drinks oolong tea daily.", UserID: u.id.String(), AgentID: "bot", AppID: "agentmem:acme"})
	recall := func(body map[string]any) []map[string]any {
		t.Helper()
		r := e.call(u.token, "recall", body).must(t, http.StatusOK)
		var out []map[string]any
		for _, x := range list(r.body["results"]) {
			out = append(out, obj(x))
		}
		return out
	}
	res := recall(map[string]any{"query": "oolong tea ada9931@example.com", "mode": "text", "agent": "bot", "k": 10})
	if len(res) != 2 || res[0]["content"] != "The user drinks oolong tea daily." || res[0]["origin"] != nil ||
		res[1]["content"] != "Prefers oolong tea without sugar" || res[1]["origin"] != "mem0" || res[1]["source"] != "memory" {
		t.Fatalf("results %v\n%s", res, e.logBuf.String())
	}
	if meta := obj(res[1]["metadata"]); meta["mem0_id"] == nil {
		t.Errorf("metadata %v", meta)
	}
	reqs := e.mem0.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v2/memories/search/" || !strings.Contains(string(reqs[0].Body), "[EMAIL]") ||
		strings.Contains(string(reqs[0].Body), "ada9931") {
		t.Fatalf("search requests %+v", reqs)
	}
	if res := recall(map[string]any{"query": "oolong", "mode": "text", "k": 1}); len(res) != 1 || res[0]["origin"] != nil {
		t.Errorf("k 1: %v", res)
	}

	for name, answer := range map[string]func(int, *http.Request) (int, string, time.Duration){
		"failing": func(int, *http.Request) (int, string, time.Duration) { return http.StatusInternalServerError, "", 0 },
		"slow":    func(int, *http.Request) (int, string, time.Duration) { return 0, "", 5 * time.Second },
	} {
		t.Run(name, func(t *testing.T) {
			e.mem0.Answer(answer)
			start := time.Now()
			res := recall(map[string]any{"query": "oolong tea", "mode": "text", "agent": "bot"})
			if len(res) != 1 || res[0]["origin"] != nil {
				t.Errorf("Mem0 %s: results %v", name, res)
			}
			if time.Since(start) > 4*time.Second {
				t.Errorf("Mem0 %s: recall waited for it", name)
			}
		})
	}
	e.mem0.Answer(nil)
	if !strings.Contains(e.logBuf.String(), "recall without the extra source") || strings.Contains(e.logBuf.String(), "oolong") {
		t.Errorf("log: %s", e.logBuf.String())
	}
	before := len(e.mem0.Requests())
	recall(map[string]any{"query": "oolong", "source": "messages"})
	recall(map[string]any{"query": "oolong", "filter": map[string]any{"topic": "drinks"}})
	if n := len(e.mem0.Requests()) - before; n != 0 {
		t.Errorf("%d searches of Mem0 for messages or a filter", n)
	}
}

// The telemetry of the Mem0 adapter: each delivery and each recall search of Mem0 is an
// "adapter.mem0" span, inside the function's span; nothing exported holds the content, the
// query, the user's id, the key or Mem0's URL.
func TestTelemetryOfMem0(t *testing.T) {
	// Not parallel: the providers are process-wide.
	e := newMem0Env(t, app.JobsConfig{}, true, 2*time.Second)
	spans := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	tel := telemetry.Install(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)),
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	defer tel.Shutdown(context.Background()) //nolint:errcheck

	u := e.newUser("Tenant-fixture-m0")
	e.call(u.token, "commit-turn", jobTurn(uuid.New(), "bot", "Quokka-fixture-5521 at quokka.fixture@example.com")).must(t, http.StatusCreated)
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatalf("done %d", done)
	}
	e.call(u.token, "recall", map[string]any{"query": "Quokka-fixture-5521", "mode": "text"}).must(t, http.StatusOK)
	if n := len(e.mem0.Requests()); n != 2 {
		t.Fatalf("%d Mem0 requests, want an add and a search", n)
	}
	secrets := []string{"Quokka-fixture-5521", "quokka.fixture@example.com", u.id.String(), "Tenant-fixture-m0", u.token,
		mem0Key, e.mem0.URL}
	names := map[string]int{}
	for _, s := range spans.GetSpans() {
		names[s.Name]++
		checkNoSecrets(t, s.Name+" "+s.Status.Description, secrets)
		for _, a := range s.Attributes {
			checkNoSecrets(t, string(a.Key)+"="+a.Value.String(), secrets)
		}
		if s.Name == "adapter.mem0" && spanAttr(s.Attributes, "agentmem.adapter") != "mem0" {
			t.Errorf("adapter span attributes %v", s.Attributes)
		}
	}
	for _, n := range []string{"agentmem.commit-turn", "agentmem.process-jobs", "agentmem.recall"} {
		if names[n] != 1 {
			t.Errorf("spans %v, want one %s", names, n)
		}
	}
	if names["adapter.mem0"] != 2 {
		t.Errorf("spans %v, want two adapter.mem0", names)
	}
}

// An agent and a tenant holding personal data reach Mem0 redacted as names, alike in the turns
// added and in recall's searches: recall still finds the memories Mem0 made of the agent's
// turns, and not those of another agent whose name redacts to the same placeholder.
func TestMem0NamesHoldingPersonalData(t *testing.T) {
	t.Parallel()
	e := newMem0Env(t, app.JobsConfig{}, true, 2*time.Second)
	u := e.newUser("ada@example.com")
	e.call(u.token, "commit-turn", jobTurn(uuid.New(), "0612345678", "I drink oolong tea daily.")).must(t, http.StatusCreated)
	e.call(u.token, "commit-turn", jobTurn(uuid.New(), "0698765432", "I drink oolong coffee daily.")).must(t, http.StatusCreated)
	if _, done, _, _, _ := e.process(t); done != 2 {
		t.Fatalf("done %d", done)
	}
	adds := addBodies(t, e.mem0)
	if len(adds) != 2 || adds[0].AgentID == adds[1].AgentID || adds[0].AppID != adds[1].AppID ||
		!strings.HasPrefix(adds[0].AgentID, "[PHONE]#") || !strings.HasPrefix(adds[0].AppID, "agentmem:[EMAIL]#") {
		t.Fatalf("adds %+v", adds)
	}
	r := e.call(u.token, "recall", map[string]any{"query": "oolong", "mode": "text", "agent": "0612345678", "k": 10}).must(t, http.StatusOK)
	var fromMem0 []string
	for _, x := range list(r.body["results"]) {
		if obj(x)["origin"] == "mem0" {
			fromMem0 = append(fromMem0, str(obj(x)["content"]))
		}
	}
	if len(fromMem0) != 1 || fromMem0[0] != "I drink oolong tea daily." {
		t.Errorf("Mem0's results %q, want the agent's one memory", fromMem0)
	}
	for _, req := range e.mem0.Requests() {
		for _, s := range []string{"0612345678", "0698765432", "ada@example.com", "ada%40example.com"} {
			if strings.Contains(string(req.Body)+req.Query.Encode(), s) {
				t.Errorf("Mem0 got %q: %s %s", s, req.Path, req.Body)
			}
		}
	}
}
