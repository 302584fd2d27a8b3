package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/webhook"
	"github.com/agentmem/agentmem/shared/adapter/webhook/webhooktest"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/redact"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/telemetry"
)

// jobsEnv is a server with the webhook adapter enabled, over a database of its own (process-jobs
// delivers every due job of the database), delivering to rec.
type jobsEnv struct {
	*env
	rec *webhooktest.Receiver
}

func newJobsEnv(t *testing.T, jc app.JobsConfig, notifier app.Notifier) *jobsEnv {
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
	return &jobsEnv{env: newAdapterEnv(t, wh, jc, notifier), rec: rec}
}

// newAdapterEnv is a server over a database of its own with one adapter enabled.
func newAdapterEnv(t *testing.T, ad adapter.Adapter, jc app.JobsConfig, notifier app.Notifier) *env {
	t.Helper()
	return buildEnv(t, envConfig{own: true, app: app.Config{Jobs: jc, Adapters: map[string]adapter.Adapter{ad.Name(): ad},
		Notifier: notifier, Redactor: testRedactor(t)}})
}

// testSalt keys the tests' PII hashes.
const testSalt = "a-test-salt-of-more-than-sixteen-bytes"

func testRedactor(t *testing.T) *redact.Redactor {
	t.Helper()
	r, err := redact.New(testSalt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// process runs process-jobs as a service caller and returns its counts.
func (e *env) process(t *testing.T) (processed, done, retried, dead int, more bool) {
	t.Helper()
	r := e.call(e.serviceToken(), "process-jobs", map[string]any{"max_duration_ms": 20000}).must(t, http.StatusOK)
	n := func(k string) int { return int(r.body[k].(float64)) }
	return n("processed"), n("done"), n("retried"), n("dead"), r.body["more"] == true
}

// due makes every pending job due now, as the time of its next attempt would.
func (e *env) due() {
	e.exec(`update agentmem.jobs set next_attempt_at = now() where status = 'pending'`)
}

func jobTurn(sid uuid.UUID, agent string, contents ...string) map[string]any {
	var msgs []map[string]any
	for i, c := range contents {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]any{"role": role, "content": c})
	}
	return map[string]any{"session_id": sid, "agent": agent, "messages": msgs}
}

// Every change is delivered to the webhook once process-jobs runs: a turn with its messages and
// facts, a memory's update, a message's deletion, each as one signed event the receiver
// verifies, with the content as stored but its personal data redacted (the salted hashes in
// the event's metadata; the database keeps what the user sent); a second run finds nothing.
// Only service callers may run it or see the jobs, and nothing of the content reaches the log.
func TestJobsDeliveredToWebhook(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t, app.JobsConfig{}, nil)
	u := e.newUser("acme")
	sid := uuid.New()
	turn := jobTurn(sid, "bot", "I am Ada Lovelace-7731, write to ada7731@example.com.", "Noted, Ada-7731.")
	turn["messages"].([]map[string]any)[0]["metadata"] = map[string]any{"callback": "+44 20 7946 0958"}
	turn["memories"] = []map[string]any{{"content": "User is Ada Lovelace-7731.",
		"metadata": map[string]any{"card": "4111 1111 1111 1111"}}}
	c := e.call(u.token, "commit-turn", turn).must(t, http.StatusCreated)
	memID := str(obj(list(c.body["memories"])[0])["id"])
	msgID := str(obj(list(c.body["messages"])[1])["id"])
	e.call(u.token, "memories", map[string]any{"op": "update", "id": memID, "content": "User is Ada King-7731."}).must(t, http.StatusOK)
	e.call(u.token, "sessions", map[string]any{"op": "delete_message", "session_id": sid, "message_id": msgID}).must(t, http.StatusOK)
	// Content parts: the text of a text part is redacted, an image part kept as given.
	partsSession := uuid.New()
	e.call(u.token, "commit-turn", map[string]any{"session_id": partsSession, "agent": "bot", "messages": []map[string]any{{
		"role": "user", "content": []map[string]any{{"type": "text", "text": "Mail grace7731@example.com."},
			{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/7731.png"}}}}}}).must(t, http.StatusCreated)
	if n := e.count("jobs", "user_id = $1 and status = 'pending'", u.id); n != 4 {
		t.Fatalf("%d pending jobs, want 4", n)
	}

	for _, fn := range []string{"process-jobs", "jobs"} {
		r := e.call(u.token, fn, map[string]any{"op": "list"})
		if r.status != http.StatusForbidden || r.problemCode() != "forbidden" {
			t.Errorf("%s as a user: %d %s", fn, r.status, r.raw)
		}
		if r := e.call("", fn, map[string]any{}); r.status != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d", fn, r.status)
		}
	}
	processed, done, retried, dead, more := e.process(t)
	if processed != 4 || done != 4 || retried != 0 || dead != 0 || more {
		t.Fatalf("process-jobs: processed %d, done %d, retried %d, dead %d, more %v", processed, done, retried, dead, more)
	}
	evs := e.rec.Events()
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
		if ev.UserID != u.id.String() || *ev.TenantID != "acme" || !ev.PIIScrubbed {
			t.Errorf("event %+v", ev)
		}
	}
	slices.Sort(types)
	if !slices.Equal(types, []string{adapter.MemoryUpdated, adapter.MessageDeleted, adapter.TurnCommitted, adapter.TurnCommitted}) {
		t.Fatalf("events %v", types)
	}
	for _, ev := range evs {
		switch {
		case ev.Type == adapter.TurnCommitted && *ev.SessionID == partsSession:
			want := `[{"type":"text","text":"Mail [EMAIL]."},{"type":"image_url","image_url":{"url":"https://example.com/7731.png"}}]`
			var got, wantParts any
			_ = json.Unmarshal([]byte(want), &wantParts)
			if len(ev.Messages) == 1 {
				_ = json.Unmarshal(ev.Messages[0].Parts, &got)
			}
			if len(ev.Messages) != 1 || !reflect.DeepEqual(got, wantParts) || ev.Messages[0].Content != "Mail [EMAIL]." {
				t.Errorf("parts event %+v, parts %s", ev, ev.Messages[0].Parts)
			}
		case ev.Type == adapter.TurnCommitted:
			// The assistant's message was deleted before delivery: the event holds what is stored.
			if len(ev.Messages) != 1 || ev.Messages[0].Content != "I am Ada Lovelace-7731, write to [EMAIL]." ||
				string(ev.Messages[0].Metadata) != `{"callback":"[PHONE]"}` || len(ev.Memories) != 1 ||
				ev.Memories[0].Content != "User is Ada King-7731." || string(ev.Memories[0].Metadata) != `{"card":"[CARD]"}` ||
				*ev.SeqFrom != 1 || *ev.SeqTo != 2 || *ev.SessionID != sid {
				t.Errorf("turn event %+v", ev)
			}
			// The hashes of what went, as the redactor keys them, in the order found.
			var want []redact.Finding
			for _, s := range []string{"ada7731@example.com", "+44 20 7946 0958", "4111 1111 1111 1111"} {
				_, f := testRedactor(t).Text(s)
				want = append(want, f...)
			}
			raw, _ := json.Marshal(ev.Metadata["pii"])
			var got []redact.Finding
			if err := json.Unmarshal(raw, &got); err != nil || !slices.Equal(got, want) || len(want) != 3 {
				t.Errorf("pii %s, want %v", raw, want)
			}
		case ev.Type == adapter.MemoryUpdated:
			if len(ev.Memories) != 1 || ev.Memories[0].ID.String() != memID {
				t.Errorf("update event %+v", ev)
			}
		case ev.Type == adapter.MessageDeleted:
			if ev.Removed == nil || len(ev.Removed.MessageIDs) != 1 || ev.Removed.MessageIDs[0] != msgID || *ev.SeqTo != 2 {
				t.Errorf("deletion event %+v", ev)
			}
		}
	}
	if processed, _, _, _, _ := e.process(t); processed != 0 {
		t.Errorf("a second run processed %d", processed)
	}
	r := e.call(e.serviceToken(), "jobs", map[string]any{"op": "list", "status": "done"}).must(t, http.StatusOK)
	if n := len(list(r.body["jobs"])); n != 4 {
		t.Errorf("%d done jobs listed: %s", n, r.raw)
	}
	// Ids in the log are hex and may hold any digits: look for the content's words instead.
	for _, content := range []string{"Lovelace", "Ada King", "ada7731", "grace7731", "7731.png"} {
		if strings.Contains(e.logBuf.String(), content) {
			t.Errorf("the log holds content (%q)", content)
		}
	}
	var stored string
	conn := e.adminConn()
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), `select content from agentmem.messages where session_id = $1 and seq = 1`,
		sid).Scan(&stored); err != nil || !strings.Contains(stored, "ada7731@example.com") {
		t.Errorf("the database holds %q (%v), want what the user sent", stored, err)
	}
}

// The intents function: a user asks for their own session, a service caller for anyone's
// naming user_id; another user's session is not found; bad input is a 400 naming the field and
// writes nothing. A backfill delivers every message of the session in pages of 100 seqs, each
// page an event of its own id; a sync delivers the session's state.
func TestIntentsFunction(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t, app.JobsConfig{}, nil)
	u, other := e.newUser(""), e.newUser("")
	sid := uuid.New()
	contents := make([]string, 0, 100)
	for i := range 100 {
		contents = append(contents, fmt.Sprintf("message %d", i+1))
	}
	for range 2 {
		e.call(u.token, "commit-turn", jobTurn(sid, "bot", contents...)).must(t, http.StatusCreated)
	}
	e.call(u.token, "commit-turn", jobTurn(sid, "bot", "the last one")).must(t, http.StatusCreated)
	e.call(u.token, "sessions", map[string]any{"op": "set_title", "session_id": sid, "title": "Tea talk"}).must(t, http.StatusOK)
	before := e.count("jobs", "")

	for _, c := range []struct {
		name  string
		token string
		body  map[string]any
		field string
	}{
		{"no type", u.token, map[string]any{"session_id": sid}, "type"},
		{"unknown type", u.token, map[string]any{"type": "fetchContext", "session_id": sid}, "type"},
		{"no session", u.token, map[string]any{"type": "syncSession"}, "session_id"},
		{"bad session", u.token, map[string]any{"type": "syncSession", "session_id": "nope"}, "session_id"},
		{"service without user", e.serviceToken(), map[string]any{"type": "syncSession", "session_id": sid}, "user_id"},
		{"unknown field", u.token, map[string]any{"type": "syncSession", "session_id": sid, "agent": "bot"}, "agent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.call(c.token, "intents", c.body)
			wantProblem(t, r, http.StatusBadRequest, "invalid_request", c.field)
		})
	}
	if r := e.call(other.token, "intents", map[string]any{"type": "syncSession", "session_id": sid}); r.status != http.StatusNotFound {
		t.Errorf("another user's session: %d %s", r.status, r.raw)
	}
	if r := e.call(other.token, "intents", map[string]any{"type": "syncSession", "session_id": sid, "user_id": u.id}); r.status != http.StatusForbidden {
		t.Errorf("a user naming another: %d %s", r.status, r.raw)
	}
	if r := e.call(e.serviceToken(), "intents", map[string]any{"type": "syncSession", "session_id": sid,
		"user_id": u.id, "tenant_id": "elsewhere"}); r.status != http.StatusNotFound {
		t.Errorf("the session in another tenant: %d %s", r.status, r.raw)
	}
	if n := e.count("jobs", ""); n != before {
		t.Fatalf("refused intents wrote %d jobs", n-before)
	}

	r := e.call(u.token, "intents", map[string]any{"type": "backfillSession", "session_id": sid}).must(t, http.StatusAccepted)
	jobs := list(r.body["jobs"])
	if r.body["type"] != "backfillSession" || r.body["session_id"] != sid.String() || len(jobs) != 1 ||
		obj(jobs[0])["adapter"] != "webhook" || obj(jobs[0])["status"] != "pending" {
		t.Fatalf("intent answer %s", r.raw)
	}
	backfill := uuid.MustParse(str(r.body["intent_id"]))
	r = e.call(e.serviceToken(), "intents", map[string]any{"type": "syncSession", "session_id": sid, "user_id": u.id}).
		must(t, http.StatusAccepted)
	sync := uuid.MustParse(str(r.body["intent_id"]))
	g := e.call(e.serviceToken(), "jobs", map[string]any{"op": "get", "id": obj(list(r.body["jobs"])[0])["id"]}).must(t, http.StatusOK)
	if g.body["intent"] != "syncSession" || g.body["user_id"] != u.id.String() || g.body["session_id"] != sid.String() {
		t.Errorf("job %s", g.raw)
	}

	e.process(t)
	var seen []int64
	for page := 1; page <= 3; page++ {
		ev, _, ok := e.rec.Event(adapter.PageID(backfill, page))
		if !ok || ev.Type != adapter.BackfillSession || ev.Page == nil || ev.Page.Number != page || ev.Page.Of != 3 {
			t.Fatalf("backfill page %d: %v %+v", page, ok, ev)
		}
		for _, m := range ev.Messages {
			seen = append(seen, m.Seq)
		}
	}
	if len(seen) != 201 || seen[0] != 1 || seen[200] != 201 || !slices.IsSorted(seen) {
		t.Errorf("backfill delivered %d messages", len(seen))
	}
	ev, _, ok := e.rec.Event(sync)
	if !ok || ev.Session == nil || ev.Session.LastSeq != 201 || ev.Session.MessageCount != 201 || *ev.Session.Title != "Tea talk" ||
		ev.Session.Agent != "bot" || len(ev.Messages) != 0 {
		t.Errorf("sync event %v %+v", ok, ev)
	}
}

// The jobs function: list (filters, pages), get, retry (a dead job; any other is a conflict),
// purge (done or dead, older than); bad input names the field.
func TestJobsFunction(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t, app.JobsConfig{MaxAttempts: 1}, nil)
	svc := e.serviceToken()
	u := e.newUser("")
	for i := range 5 {
		e.call(u.token, "commit-turn", jobTurn(uuid.New(), "bot", fmt.Sprintf("turn %d", i))).must(t, http.StatusCreated)
	}
	// Two deliveries fail, at the cap of one attempt: dead.
	e.rec.Answer(func(n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return 0
	})
	if _, done, _, dead, _ := e.process(t); done != 3 || dead != 2 {
		t.Fatalf("done %d, dead %d", done, dead)
	}
	e.rec.Answer(nil)

	var ids []string
	var cursor any
	for page := 0; ; page++ {
		body := map[string]any{"op": "list", "limit": 2}
		if cursor != nil {
			body["cursor"] = cursor
		}
		r := e.call(svc, "jobs", body).must(t, http.StatusOK)
		for _, j := range list(r.body["jobs"]) {
			ids = append(ids, str(obj(j)["id"]))
			ctKeys(t, "job", obj(j), "id", "intent", "adapter", "status", "attempts", "next_attempt_at", "last_error",
				"created_at", "updated_at", "session_id", "user_id")
		}
		if cursor = r.body["next_cursor"]; cursor == nil {
			break
		}
		if page > 5 {
			t.Fatal("the listing never ends")
		}
	}
	if len(ids) != 5 || len(slices.Compact(slices.Sorted(slices.Values(ids)))) != 5 {
		t.Fatalf("listed %v", ids)
	}
	r := e.call(svc, "jobs", map[string]any{"op": "list", "status": "dead", "adapter": "webhook"}).must(t, http.StatusOK)
	dead := list(r.body["jobs"])
	if len(dead) != 2 || obj(dead[0])["last_error"] != "the webhook answered 500" || obj(dead[0])["attempts"] != float64(1) {
		t.Fatalf("dead jobs %s", r.raw)
	}
	deadID := str(obj(dead[0])["id"])

	r = e.call(svc, "jobs", map[string]any{"op": "retry", "id": deadID}).must(t, http.StatusOK)
	if r.body["status"] != "pending" || r.body["attempts"] != float64(0) {
		t.Errorf("retried %s", r.raw)
	}
	if r := e.call(svc, "jobs", map[string]any{"op": "retry", "id": deadID}); r.status != http.StatusConflict {
		t.Errorf("retry of a pending job: %d %s", r.status, r.raw)
	}
	for _, op := range []string{"get", "retry"} {
		if r := e.call(svc, "jobs", map[string]any{"op": op, "id": uuid.New()}); r.status != http.StatusNotFound {
			t.Errorf("%s of no job: %d", op, r.status)
		}
	}
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Errorf("the retried job: %d done", done)
	}

	// A purge counts from when a job finished: written two hours ago but done just now is not
	// an hour old; done two hours ago is.
	e.exec(`update agentmem.jobs set created_at = now() - interval '2 hours' where status = 'done'`)
	if r := e.call(svc, "jobs", map[string]any{"op": "purge", "status": "done", "older_than_seconds": 3600}).must(t, http.StatusOK); r.body["deleted"] != float64(0) {
		t.Errorf("purge of old done jobs: %s", r.raw)
	}
	e.exec(`update agentmem.jobs set updated_at = now() - interval '2 hours'
		where id = (select id from agentmem.jobs where status = 'done' limit 1)`)
	if r := e.call(svc, "jobs", map[string]any{"op": "purge", "status": "done", "older_than_seconds": 3600}).must(t, http.StatusOK); r.body["deleted"] != float64(1) {
		t.Errorf("purge of a job done two hours ago: %s", r.raw)
	}
	if r := e.call(svc, "jobs", map[string]any{"op": "purge", "status": "done"}).must(t, http.StatusOK); r.body["deleted"] != float64(3) {
		t.Errorf("purge of done jobs: %s", r.raw)
	}
	if r := e.call(svc, "jobs", map[string]any{"op": "purge", "status": "dead"}).must(t, http.StatusOK); r.body["deleted"] != float64(1) {
		t.Errorf("purge of dead jobs: %s", r.raw)
	}

	before := e.count("jobs", "")
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{}, "op"},
		{map[string]any{"op": "drop"}, "op"},
		{map[string]any{"op": "list", "status": "lost"}, "status"},
		{map[string]any{"op": "list", "adapter": "fax"}, "adapter"},
		{map[string]any{"op": "list", "limit": 0}, "limit"},
		{map[string]any{"op": "list", "limit": 201}, "limit"},
		{map[string]any{"op": "list", "cursor": "bm90LWEtY3Vyc29y"}, "cursor"},
		{map[string]any{"op": "get"}, "id"},
		{map[string]any{"op": "retry", "id": "x"}, "id"},
		{map[string]any{"op": "purge"}, "status"},
		{map[string]any{"op": "purge", "status": "pending"}, "status"},
		{map[string]any{"op": "purge", "status": "done", "older_than_seconds": -1}, "older_than_seconds"},
		{map[string]any{"op": "get", "id": uuid.New(), "user_id": u.id}, "user_id"},
	} {
		t.Run(fmt.Sprint(c.body), func(t *testing.T) {
			wantProblem(t, e.call(svc, "jobs", c.body), http.StatusBadRequest, "invalid_request", c.field)
		})
	}
	if r := e.call(svc, "process-jobs", map[string]any{"limit": 0}); r.status != http.StatusBadRequest {
		t.Errorf("process-jobs limit 0: %d", r.status)
	}
	wantProblem(t, e.call(svc, "process-jobs", map[string]any{"max_duration_ms": "soon"}), http.StatusBadRequest, "invalid_request", "max_duration_ms")
	if n := e.count("jobs", ""); n != before {
		t.Errorf("bad requests changed the jobs: %d to %d", before, n)
	}
}

// A receiver that keeps failing never fails a user's request; its job is retried with growing
// waits (exponential backoff, jittered down by at most half) and goes dead at the attempt cap,
// with the failure (no content) as last_error.
func TestDeliveryRetriesWithBackoffThenDies(t *testing.T) {
	t.Parallel()
	jc := app.JobsConfig{MaxAttempts: 4, BackoffBase: 10 * time.Second, BackoffMax: 30 * time.Second}
	e := newJobsEnv(t, jc, nil)
	e.rec.Answer(func(int) int { return http.StatusInternalServerError })
	u := e.newUser("")
	e.call(u.token, "commit-turn", jobTurn(uuid.New(), "bot", "secret-content-5150")).must(t, http.StatusCreated)
	for attempt := 1; attempt <= 4; attempt++ {
		_, done, retried, dead, _ := e.process(t)
		var wait float64
		var attempts int
		var status, lastErr string
		conn := e.adminConn()
		if err := conn.QueryRow(context.Background(), `select extract(epoch from next_attempt_at - updated_at), attempts,
			status, coalesce(last_error, '') from agentmem.jobs where user_id = $1`, u.id).Scan(&wait, &attempts, &status, &lastErr); err != nil {
			t.Fatal(err)
		}
		conn.Close(context.Background())
		if attempts != attempt || lastErr != "the webhook answered 500" || done != 0 {
			t.Fatalf("attempt %d: attempts %d, error %q, done %d", attempt, attempts, lastErr, done)
		}
		if attempt < 4 {
			full := min(jc.BackoffBase*time.Duration(1<<(attempt-1)), jc.BackoffMax).Seconds()
			if retried != 1 || status != "pending" || wait < full/2-0.01 || wait > full+0.01 {
				t.Errorf("attempt %d: %s, retried %d, waits %.2fs, want %.1f to %.1f", attempt, status, retried, wait, full/2, full)
			}
			e.due()
		} else if dead != 1 || status != "dead" {
			t.Errorf("attempt %d: %s, dead %d", attempt, status, dead)
		}
	}
	if processed, _, _, _, _ := e.process(t); processed != 0 {
		t.Errorf("a dead job was processed again")
	}
}

// An adapter down for a while loses nothing: turns committed by concurrent users while it is
// down all succeed; their jobs wait (retried with backoff); once it is back every event arrives,
// each kept once by id, duplicates only where an acknowledgement was lost. A worker that
// claimed jobs and died before recording leaves them to be claimed again after the lease.
func TestAdapterDownThenRecovered(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: delivers rounds of concurrent users' jobs to an adapter that was down")
	}
	e := newJobsEnv(t, app.JobsConfig{MaxAttempts: 50, BackoffBase: time.Hour, BackoffMax: time.Hour}, nil)
	e.rec.Down(true)
	const users, turns = 4, 10
	var wg sync.WaitGroup
	errs := make(chan string, users*turns)
	for range users {
		u := e.newUser("")
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := uuid.New()
			for i := range turns {
				r := e.call(u.token, "commit-turn", jobTurn(sid, "bot", fmt.Sprintf("turn %d", i), "ok"))
				if r.status != http.StatusCreated {
					errs <- fmt.Sprintf("commit: %d %s", r.status, r.raw)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	const total = users * turns
	for range 3 {
		if _, done, retried, _, _ := e.process(t); done != 0 || retried != total {
			t.Fatalf("while down: done %d, retried %d", done, retried)
		}
		e.due()
	}
	// A worker claims some jobs and dies.
	claimed, _, err := e.store.ClaimJobs(context.Background(), store.ClaimJobsParams{Limit: 5, Lease: time.Minute, MaxAttempts: 50})
	if err != nil || len(claimed) != 5 {
		t.Fatalf("claim: %d, %v", len(claimed), err)
	}
	// Back up, with every third acknowledgement lost on the way.
	e.rec.Answer(func(n int) int {
		if n%3 == 0 {
			return -http.StatusBadGateway
		}
		return 0
	})
	for range 10 {
		processed, _, _, _, _ := e.process(t)
		e.due()
		if processed == 0 {
			break
		}
	}
	if n := e.count("jobs", "status = 'done'"); n != total-5 {
		t.Errorf("%d done before the dead worker's lease passed, want %d", n, total-5)
	}
	e.exec(`update agentmem.jobs set next_attempt_at = now() where status = 'running'`)
	for range 10 {
		processed, _, _, _, _ := e.process(t)
		e.due()
		if processed == 0 {
			break
		}
	}
	if n := e.count("jobs", "status = 'done'"); n != total {
		t.Fatalf("%d of %d jobs done", n, total)
	}
	// Every change's event arrived, none unknown.
	conn := e.adminConn()
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `select event_id from agentmem.jobs`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uuid.UUID]bool{}
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		want[id] = true
	}
	evs := e.rec.Events()
	for _, ev := range evs {
		if !want[ev.ID] {
			t.Errorf("event %s of no job", ev.ID)
		}
		delete(want, ev.ID)
	}
	if len(want) != 0 || len(evs) != total {
		t.Errorf("%d events kept, %d lost", len(evs), len(want))
	}
	_, rejected, dups := e.rec.Stats()
	if rejected != 0 || dups == 0 {
		t.Errorf("rejected %d, duplicates %d (lost acknowledgements were meant to cause some)", rejected, dups)
	}
}

// In a long-running process, delivery starts right after the commit: the change notifies the
// delivery loop, with no poll due for an hour.
func TestDeliveryStartsAfterCommit(t *testing.T) {
	t.Parallel()
	kick := app.NewKick()
	e := newJobsEnv(t, app.JobsConfig{}, kick)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.app.DeliveryLoop(ctx, kick, time.Hour) }()
	defer func() { cancel(); <-done }()
	u := e.newUser("")
	e.call(u.token, "commit-turn", jobTurn(uuid.New(), "bot", "hello")).must(t, http.StatusCreated)
	if !e.rec.WaitFor(1, 20*time.Second) {
		t.Fatal("the event never arrived")
	}
	sid := uuid.New()
	e.call(u.token, "commit-turn", jobTurn(sid, "bot", "again")).must(t, http.StatusCreated)
	e.call(u.token, "sessions", map[string]any{"op": "reset", "session_id": sid}).must(t, http.StatusOK)
	if !e.rec.WaitFor(3, 20*time.Second) {
		t.Fatal("the later events never arrived")
	}
}

// Through QStash: the event is published to QStash's API, which delivers it signed with its
// keys; a QStash answer that is not QStash's fails the delivery (retried), never the commit.
func TestJobsThroughQStash(t *testing.T) {
	t.Parallel()
	q := webhooktest.NewQStash()
	defer q.Close()
	rec := webhooktest.NewQStashReceiver(q.CurrentKey, q.NextKey)
	defer rec.Close()
	wh, err := webhook.New(webhook.Config{URL: rec.URL, QStashToken: q.Token, QStashURL: q.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := newAdapterEnv(t, wh, app.JobsConfig{}, nil)
	q.Answer(func(n int) int {
		if n == 1 {
			return -1
		}
		return 0
	})
	u := e.newUser("")
	e.call(u.token, "commit-turn", jobTurn(uuid.New(), "bot", "via QStash")).must(t, http.StatusCreated)
	if _, done, retried, _, _ := e.process(t); done != 0 || retried != 1 {
		t.Fatalf("a malformed QStash answer: done %d, retried %d", done, retried)
	}
	e.due()
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatalf("done %d", done)
	}
	if !rec.WaitFor(1, 10*time.Second) {
		t.Fatal("QStash never delivered")
	}
	if evs := rec.Events(); evs[0].Messages[0].Content != "via QStash" {
		t.Errorf("event %+v", evs[0])
	}
	if _, rejected, _ := rec.Stats(); rejected != 0 {
		t.Errorf("%d deliveries failed verification", rejected)
	}
}

// A process without a redactor delivers nothing: each job fails, saying why, rather than send
// content unredacted.
func TestNoDeliveryWithoutRedactor(t *testing.T) {
	t.Parallel()
	e := newJobsEnv(t, app.JobsConfig{}, nil)
	u := e.newUser("")
	e.call(u.token, "commit-turn", jobTurn(uuid.New(), "bot", "mail me at grace@example.com")).must(t, http.StatusCreated)
	secret := webhooktest.NewSecret()
	wh, err := webhook.New(webhook.Config{URL: e.rec.URL, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	bare := app.New(e.store, slog.New(slog.DiscardHandler), app.Config{Adapters: map[string]adapter.Adapter{adapter.Webhook: wh}})
	out, err := bare.RunJobs(t.Context(), 10, 5*time.Second)
	if err != nil || out.Retried != 1 || out.Done != 0 {
		t.Fatalf("run without a redactor: %+v %v", out, err)
	}
	if requests, _, _ := e.rec.Stats(); requests != 0 {
		t.Errorf("the receiver got %d requests", requests)
	}
	if n := e.count("jobs", "last_error like 'no PII redactor%'"); n != 1 {
		t.Errorf("%d jobs say why", n)
	}
}

// The orchestrator's telemetry: an intent (a commit, the intents function) is a "memory.intent"
// span with its work in the database an "adapter.supabase" span inside it, each delivery
// attempt an "adapter.webhook" span, jobs are counted as they enter a status and deliveries timed from the
// commit; and nothing exported holds the content, the user's id or the receiver's URL.
func TestTelemetryOfTheOrchestrator(t *testing.T) {
	// Not parallel: the providers are process-wide.
	e := newJobsEnv(t, app.JobsConfig{MaxAttempts: 1}, nil)
	spans := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	tel := telemetry.Install(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)),
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	defer tel.Shutdown(context.Background()) //nolint:errcheck

	u := e.newUser("Tenant-fixture-acme")
	sid := uuid.New()
	e.call(u.token, "commit-turn", jobTurn(sid, "bot", "Zanzibar-fixture-7731 at jane.doe.fixture@example.com")).must(t, http.StatusCreated)
	e.call(u.token, "intents", map[string]any{"type": "syncSession", "session_id": sid}).must(t, http.StatusAccepted)
	e.rec.Answer(func(n int) int {
		if n == 2 {
			return http.StatusInternalServerError
		}
		return 0
	})
	if _, done, _, dead, _ := e.process(t); done != 1 || dead != 1 {
		t.Fatalf("done %d, dead %d", done, dead)
	}
	secrets := []string{"Zanzibar-fixture-7731", "jane.doe.fixture@example.com", u.id.String(), "Tenant-fixture-acme",
		u.token, e.rec.URL, sid.String()}
	names := map[string]int{}
	var intents []string
	intentSpans := map[trace.SpanID]bool{}
	for _, s := range spans.GetSpans() {
		names[s.Name]++
		checkNoSecrets(t, s.Name+" "+s.Status.Description, secrets)
		for _, a := range s.Attributes {
			checkNoSecrets(t, string(a.Key)+"="+a.Value.String(), secrets)
		}
		if s.Name == "adapter.webhook" && spanAttr(s.Attributes, "agentmem.adapter") != "webhook" {
			t.Errorf("adapter span attributes %v", s.Attributes)
		}
		if s.Name == "memory.intent" {
			intents = append(intents, spanAttr(s.Attributes, "agentmem.intent"))
			intentSpans[s.SpanContext.SpanID()] = true
		}
	}
	slices.Sort(intents)
	if want := []string{"onTurnCommitted", "syncSession"}; !slices.Equal(intents, want) {
		t.Errorf("intent spans %v, want %v", intents, want)
	}
	// Each intent's work in the database is an adapter.supabase span inside it.
	for _, s := range spans.GetSpans() {
		if s.Name == "adapter.supabase" && (!intentSpans[s.Parent.SpanID()] || spanAttr(s.Attributes, "agentmem.adapter") != "supabase") {
			t.Errorf("adapter.supabase span outside an intent, or with attributes %v", s.Attributes)
		}
	}
	if names["memory.intent"] != 2 || names["adapter.supabase"] != 2 || names["adapter.webhook"] != 2 {
		t.Errorf("spans %v, want two memory.intent, two adapter.supabase and two adapter.webhook", names)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	jobs := map[string]int64{}
	var delivered uint64
	var failures int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					for _, a := range p.Attributes.ToSlice() {
						checkNoSecrets(t, string(a.Key)+"="+a.Value.String(), secrets)
					}
					switch m.Name {
					case "agentmem.jobs":
						st, _ := p.Attributes.Value("agentmem.job.status")
						jobs[st.AsString()] += p.Value
					case "agentmem.delivery.failures":
						failures += p.Value
					}
				}
			case metricdata.Histogram[float64]:
				if m.Name == "agentmem.delivery.duration" {
					for _, p := range d.DataPoints {
						delivered += p.Count
					}
				}
			}
		}
	}
	if jobs["pending"] != 2 || jobs["delivered"] != 1 || jobs["dead"] != 1 || delivered != 1 || failures != 1 {
		t.Errorf("jobs by status %v, %d deliveries timed, %d failures", jobs, delivered, failures)
	}
}
