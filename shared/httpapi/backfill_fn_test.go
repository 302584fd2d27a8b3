package httpapi_test

import (
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/mem0"
	"github.com/agentmem/agentmem/shared/adapter/mem0/mem0test"
	"github.com/agentmem/agentmem/shared/adapter/webhook"
	"github.com/agentmem/agentmem/shared/adapter/webhook/webhooktest"
	"github.com/agentmem/agentmem/shared/app"
)

// backfillEnv is a server over a database of its own with the webhook and Mem0 adapters
// enabled, delivering to their fakes, with the rate limits rl.
type backfillEnv struct {
	*env
	rec  *webhooktest.Receiver
	mem0 *mem0test.Server
}

func newBackfillEnv(t *testing.T, rl app.RateLimit) *backfillEnv {
	t.Helper()
	secret := webhooktest.NewSecret()
	rec, err := webhooktest.NewReceiver(secret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Close)
	wh, err := webhook.New(webhook.Config{URL: rec.URL, Secret: secret, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fake := mem0test.New(mem0Key)
	t.Cleanup(fake.Close)
	m, err := mem0.New(mem0.Config{APIKey: mem0Key, URL: fake.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg := app.Config{Adapters: map[string]adapter.Adapter{adapter.Mem0: m, wh.Name(): wh}, Redactor: testRedactor(t),
		RateLimit: rl}
	return &backfillEnv{env: buildEnv(t, envConfig{own: true, app: cfg}), rec: rec, mem0: fake}
}

// delivered counts the backfill events each fake received: Mem0's adds and the webhook's
// events (the receiver refused none and received none twice).
func (e *backfillEnv) delivered(t *testing.T) (mem0Adds, webhookEvents int) {
	t.Helper()
	for _, a := range addBodies(t, e.mem0) {
		if a.Metadata["agentmem_event_type"] == adapter.BackfillSession {
			mem0Adds++
		}
	}
	if _, rejected, duplicates := e.rec.Stats(); rejected != 0 || duplicates != 0 {
		t.Errorf("the webhook refused %d deliveries and received %d twice", rejected, duplicates)
	}
	for _, ev := range e.rec.Events() {
		if ev.Type == adapter.BackfillSession {
			webhookEvents++
		}
	}
	return mem0Adds, webhookEvents
}

// backfillRefs are the ids of an intent answer's jobs, by adapter.
func backfillRefs(t *testing.T, r response) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, j := range list(r.body["jobs"]) {
		if obj(j)["status"] != "pending" {
			t.Errorf("job %v, want pending", j)
		}
		out[str(obj(j)["adapter"])] = str(obj(j)["id"])
	}
	return out
}

// Twenty backfills of one session at once write one backfill job per adapter: the first writes
// them, every other answers 202 with the same jobs, coalesced, under the first one's intent id.
// Delivered, the session reaches Mem0 as one add and the webhook as one event. A backfill asked
// while that job still waits, after more messages came, is absorbed too and its job covers
// them; once the job was delivered, a backfill writes a new one.
func TestBackfillsOfOneSessionCoalesce(t *testing.T) {
	t.Parallel()
	e := newBackfillEnv(t, app.RateLimit{})
	u := e.newUser("acme")
	sid := uuid.New()
	e.call(u.token, "commit-turn", jobTurn(sid, "bot", "first question", "first answer")).must(t, http.StatusCreated)
	if _, done, _, _, _ := e.process(t); done != 2 {
		t.Fatalf("the turn: done %d, want one job per adapter", done)
	}

	const burst = 20
	answers := make([]response, burst)
	var wg sync.WaitGroup
	for i := range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := u.token
			body := map[string]any{"type": "backfillSession", "session_id": sid}
			if i%2 == 1 { // a service caller acting for the user coalesces with the user's own
				token = e.serviceToken()
				body["user_id"], body["tenant_id"] = u.id, "acme"
			}
			answers[i] = e.call(token, "intents", body)
		}()
	}
	wg.Wait()
	var first map[string]string
	intents := map[string]int{}
	fresh := 0
	for i, r := range answers {
		if r.status != http.StatusAccepted {
			t.Fatalf("backfill %d: %d %s", i, r.status, r.raw)
		}
		refs := backfillRefs(t, r)
		if len(refs) != 2 || refs[adapter.Mem0] == "" || refs["webhook"] == "" {
			t.Fatalf("backfill %d: jobs %s, want one per adapter", i, r.raw)
		}
		if first == nil {
			first = refs
		} else if refs[adapter.Mem0] != first[adapter.Mem0] || refs["webhook"] != first["webhook"] {
			t.Errorf("backfill %d answers jobs %v, another %v", i, refs, first)
		}
		intents[str(r.body["intent_id"])]++
		if r.body["coalesced"] == false {
			fresh++
		} else if r.body["coalesced"] != true {
			t.Errorf("backfill %d: coalesced %v", i, r.body["coalesced"])
		}
	}
	if fresh != 1 || len(intents) != 1 {
		t.Errorf("%d answers wrote jobs (want 1), under %d intent ids (want 1)", fresh, len(intents))
	}
	if n := e.count("jobs", "intent = 'backfillSession'"); n != 2 {
		t.Fatalf("%d backfill jobs written, want one per adapter", n)
	}
	if n := e.count("jobs", "intent = 'backfillSession' and status = 'pending' and (refs->>'seq_to')::int = 2"); n != 2 {
		t.Errorf("%d backfill jobs pending up to seq 2, want 2", n)
	}

	// More messages, then one more backfill while the jobs still wait: absorbed too. The new
	// messages reach the adapters with their turn.
	e.call(u.token, "commit-turn", jobTurn(sid, "bot", "second question", "second answer")).must(t, http.StatusCreated)
	r := e.call(u.token, "intents", map[string]any{"type": "backfillSession", "session_id": sid}).must(t, http.StatusAccepted)
	if refs := backfillRefs(t, r); r.body["coalesced"] != true || refs[adapter.Mem0] != first[adapter.Mem0] ||
		refs["webhook"] != first["webhook"] {
		t.Errorf("a backfill while the jobs wait: %s, want the same jobs, coalesced", r.raw)
	}

	if _, done, _, _, _ := e.process(t); done != 4 {
		t.Fatalf("the second turn and the backfill: done %d, want 4", done)
	}
	adds, events := e.delivered(t)
	if adds != 1 || events != 1 {
		t.Fatalf("the backfills reached Mem0 as %d adds and the webhook as %d events, want 1 and 1", adds, events)
	}
	var seqs []int64
	for _, ev := range e.rec.Events() {
		for _, m := range ev.Messages {
			seqs = append(seqs, m.Seq)
		}
	}
	slices.Sort(seqs)
	if want := []int64{1, 1, 2, 2, 3, 4}; !slices.Equal(seqs, want) {
		t.Errorf("the webhook received seqs %v, want %v (the first turn and the backfill, then the second turn)", seqs, want)
	}

	// Delivered, the jobs no longer absorb anything: a new backfill writes new jobs.
	r = e.call(u.token, "intents", map[string]any{"type": "backfillSession", "session_id": sid}).must(t, http.StatusAccepted)
	if refs := backfillRefs(t, r); r.body["coalesced"] != false || refs[adapter.Mem0] == first[adapter.Mem0] ||
		refs["webhook"] == first["webhook"] || len(refs) != 2 {
		t.Errorf("a backfill after delivery: %s, want new jobs", r.raw)
	}
	// Syncs never coalesce.
	for range 2 {
		r = e.call(u.token, "intents", map[string]any{"type": "syncSession", "session_id": sid}).must(t, http.StatusAccepted)
		if r.body["coalesced"] != false {
			t.Errorf("sync: %s", r.raw)
		}
	}
	if n := e.count("jobs", "intent = 'syncSession'"); n != 4 {
		t.Errorf("%d sync jobs, want 4", n)
	}
}

// Backfills have a per-user limit of their own: past it a backfill answers 429 rate_limited,
// problem+json with Retry-After, and writes nothing, whatever the session and whoever asks for
// the user; coalesced backfills count too. Syncs, other users and backfills the function
// refuses for their input are not counted.
func TestBackfillsHaveAPerUserLimit(t *testing.T) {
	t.Parallel()
	e := newBackfillEnv(t, app.RateLimit{Backfill: 3, BackfillPeriod: time.Hour})
	u, other := e.newUser(""), e.newUser("")
	a, b := uuid.New(), uuid.New()
	for _, sid := range []uuid.UUID{a, b} {
		e.call(u.token, "commit-turn", jobTurn(sid, "bot", "a question", "an answer")).must(t, http.StatusCreated)
	}
	e.call(other.token, "commit-turn", jobTurn(uuid.New(), "bot", "hi", "hello")).must(t, http.StatusCreated)
	backfill := func(token string, sid uuid.UUID, extra ...any) response {
		body := map[string]any{"type": "backfillSession", "session_id": sid}
		for i := 0; i+1 < len(extra); i += 2 {
			body[extra[i].(string)] = extra[i+1]
		}
		return e.call(token, "intents", body)
	}

	wantProblem(t, backfill(u.token, a, "agent", "bot"), http.StatusBadRequest, "invalid_request", "agent")
	for range 2 {
		e.call(u.token, "intents", map[string]any{"type": "syncSession", "session_id": a}).must(t, http.StatusAccepted)
	}
	backfill(u.token, a).must(t, http.StatusAccepted)
	if r := backfill(u.token, a).must(t, http.StatusAccepted); r.body["coalesced"] != true {
		t.Fatalf("second backfill of a: %s", r.raw)
	}
	backfill(e.serviceToken(), b, "user_id", u.id).must(t, http.StatusAccepted)
	jobs := e.count("jobs", "")

	for _, r := range []response{backfill(u.token, b), backfill(u.token, a), backfill(e.serviceToken(), a, "user_id", u.id)} {
		wantProblem(t, r, http.StatusTooManyRequests, "rate_limited")
		secs, err := strconv.Atoi(r.header.Get("Retry-After"))
		if err != nil || secs < 1 || secs > 3600 {
			t.Errorf("Retry-After %q, want the seconds until a backfill is let through (at most an hour)", r.header.Get("Retry-After"))
		}
	}
	if n := e.count("jobs", ""); n != jobs {
		t.Errorf("refused backfills wrote %d jobs", n-jobs)
	}
	// The limit is the backfills' own: the user's other requests, and other users, go on.
	e.call(u.token, "intents", map[string]any{"type": "syncSession", "session_id": a}).must(t, http.StatusAccepted)
	e.call(u.token, "get-context", map[string]any{"session_id": a, "agent": "bot"}).must(t, http.StatusOK)
	backfill(other.token, uuid.New()).must(t, http.StatusNotFound)
}
