package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// isoDB is one superuser connection for a test's many counts and updates (the harness's
// count and exec connect anew each time).
type isoDB struct {
	t    *testing.T
	conn *pgx.Conn
}

func isoAdmin(t *testing.T, e *env) *isoDB {
	t.Helper()
	conn := e.adminConn()
	t.Cleanup(func() { conn.Close(context.Background()) })
	return &isoDB{t: t, conn: conn}
}

func (d *isoDB) count(table, where string, args ...any) int {
	d.t.Helper()
	q := "select count(*) from agentmem." + table
	if where != "" {
		q += " where " + where
	}
	var n int
	if err := d.conn.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		d.t.Fatal(err)
	}
	return n
}

func (d *isoDB) exec(sql string, args ...any) {
	d.t.Helper()
	if _, err := d.conn.Exec(context.Background(), sql, args...); err != nil {
		d.t.Fatal(err)
	}
}

// isoPost is call without the test: safe in goroutines. It returns the status and the body.
func isoPost(h http.Handler, token, fn string, body any, headers ...string) (int, map[string]any) {
	raw, _ := json.Marshal(body)
	req := httptest.NewRequest(http.MethodPost, "/v1/"+fn, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

// isoCounts are row counts of the four kinds a sweep deletes, as the answer names them.
type isoCounts struct {
	Messages        int64 `json:"messages"`
	Memories        int64 `json:"memories"`
	Sessions        int64 `json:"sessions"`
	IdempotencyKeys int64 `json:"idempotency_keys"`
	RequestRates    int64 `json:"request_rates"`
	// ArchivedMessages are expired messages of the history archive.
	ArchivedMessages int64 `json:"archived_messages"`
}

type isoSweepAnswer struct {
	Deleted    isoCounts `json:"deleted"`
	Batches    int       `json:"batches"`
	DurationMS *int64    `json:"duration_ms"`
	More       *bool     `json:"more"`
	// Capped is the history cap's work (nothing here: no session has a cap).
	Capped struct {
		Sessions, Archived, Deleted int64
	} `json:"capped"`
	// Restamped is the rows re-stamped after a change of the default retention (none here).
	Restamped struct {
		Messages         int64 `json:"messages"`
		ArchivedMessages int64 `json:"archived_messages"`
		Memories         int64 `json:"memories"`
		Sessions         int64 `json:"sessions"`
	} `json:"restamped"`
}

func isoSweep(t *testing.T, e *env, body any) isoSweepAnswer {
	t.Helper()
	r := e.call(e.serviceToken(), "sweep-expired", body).must(t, http.StatusOK)
	var a isoSweepAnswer
	dec := json.NewDecoder(bytes.NewReader(r.raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("sweep answer %s: %v", r.raw, err)
	}
	if a.DurationMS == nil || *a.DurationMS < 0 || a.More == nil {
		t.Fatalf("sweep answer without duration_ms or more: %s", r.raw)
	}
	return a
}

func isoTotals(db *isoDB) isoCounts {
	return isoCounts{
		Messages:         int64(db.count("messages", "")),
		Memories:         int64(db.count("memories", "")),
		Sessions:         int64(db.count("sessions", "")),
		IdempotencyKeys:  int64(db.count("idempotency_keys", "")),
		RequestRates:     int64(db.count("request_rates", "")),
		ArchivedMessages: int64(db.count("messages_archive", "")),
	}
}

func (c isoCounts) minus(d isoCounts) isoCounts {
	return isoCounts{c.Messages - d.Messages, c.Memories - d.Memories, c.Sessions - d.Sessions, c.IdempotencyKeys - d.IdempotencyKeys,
		c.RequestRates - d.RequestRates, c.ArchivedMessages - d.ArchivedMessages}
}

// isoSweepSeed stores, for one user, expired and live rows of every kind and returns what a
// sweep must delete and the sessions it must keep.
func isoSweepSeed(t *testing.T, e *env, db *isoDB) (want isoCounts, kept []uuid.UUID) {
	t.Helper()
	u := e.newUser("")
	past := "now() - interval '1 minute'"
	s1, s2, s3, s5 := uuid.New(), uuid.New(), uuid.New(), uuid.New()

	// s1: everything expired, committed with an idempotency key.
	e.call(u.token, "commit-turn", isoTurn(s1, "", []string{"e1", "e2", "e3", "e4", "e5"}, "expired-m1", "expired-m2", "expired-m3"),
		"Idempotency-Key", "sweep-k1").must(t, http.StatusCreated)
	db.exec("update agentmem.messages set expires_at = "+past+" where session_id = $1", s1)
	db.exec("update agentmem.sessions set expires_at = "+past+" where id = $1", s1)
	db.exec("update agentmem.memories set expires_at = "+past+" where user_id = $1 and content like 'expired-%'", u.id)
	db.exec("update agentmem.idempotency_keys set expires_at = "+past+" where user_id = $1 and key = 'sweep-k1'", u.id)

	// s2: live, with a live key and memory.
	e.call(u.token, "commit-turn", isoTurn(s2, "", []string{"l1", "l2"}, "live-m1"), "Idempotency-Key", "sweep-k2").
		must(t, http.StatusCreated)

	// s3: the session has expired, its messages have not: it stays.
	e.call(u.token, "commit-turn", isoTurn(s3, "", []string{"l3", "l4"})).must(t, http.StatusCreated)
	db.exec("update agentmem.sessions set expires_at = "+past+" where id = $1", s3)

	// s4: an empty session (the active one), expired.
	r := e.call(u.token, "active-session", map[string]any{"mode": "new"}).must(t, http.StatusCreated)
	s4 := uuid.MustParse(str(r.body["session_id"]))
	db.exec("update agentmem.sessions set expires_at = "+past+" where id = $1", s4)

	// s5: expired session, two of three messages expired: the messages go, the session stays.
	e.call(u.token, "commit-turn", isoTurn(s5, "", []string{"e6", "e7", "l5"})).must(t, http.StatusCreated)
	db.exec("update agentmem.sessions set expires_at = "+past+" where id = $1", s5)
	db.exec("update agentmem.messages set expires_at = "+past+" where session_id = $1 and content like 'e%'", s5)
	// The messages are embedded after each answer (MESSAGE_EMBEDDING=deferred); a sweep
	// skips the rows that embedding holds locked, so the counts are only exact once it is done.
	e.app.WaitEmbedded()

	return isoCounts{Messages: 7, Memories: 3, Sessions: 2, IdempotencyKeys: 1}, []uuid.UUID{s2, s3, s5}
}

func TestSweepDeletesExactlyTheExpired(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	db := isoAdmin(t, e)
	want, kept := isoSweepSeed(t, e, db)
	before := isoTotals(db)

	dry := isoSweep(t, e, map[string]any{"dry_run": true})
	if dry.Deleted != want || *dry.More {
		t.Errorf("dry run counts %+v (more %v), want %+v", dry.Deleted, *dry.More, want)
	}
	if after := isoTotals(db); after != before {
		t.Fatalf("dry run deleted rows: %+v before, %+v after", before, after)
	}

	got := isoSweep(t, e, map[string]any{"batch_size": 2})
	after := isoTotals(db)
	if got.Deleted != want {
		t.Errorf("sweep deleted %+v, want %+v", got.Deleted, want)
	}
	if gone := before.minus(after); gone != got.Deleted {
		t.Errorf("the answer says %+v deleted; %+v rows are gone", got.Deleted, gone)
	}
	if got.Batches < 4 || *got.More {
		t.Errorf("batches %d (want at least 4 for 7 messages in batches of 2), more %v", got.Batches, *got.More)
	}
	if n := db.count("messages", "expires_at <= now()") + db.count("memories", "expires_at <= now()") +
		db.count("idempotency_keys", "expires_at <= now()"); n != 0 {
		t.Errorf("%d expired rows remain", n)
	}
	for _, s := range kept {
		if db.count("sessions", "id = $1", s) != 1 || db.count("messages", "session_id = $1", s) == 0 {
			t.Errorf("session %s or its live messages were swept", s)
		}
	}
	if n := db.count("messages", "expires_at > now()"); n != 5 {
		t.Errorf("%d live messages, want 5", n)
	}
	if n := db.count("active_sessions", ""); n != 0 {
		t.Errorf("%d active sessions point at swept sessions", n)
	}
	if db.count("memories", "content = 'live-m1'") != 1 || db.count("idempotency_keys", "key = 'sweep-k2'") != 1 {
		t.Error("a live memory or idempotency key was swept")
	}

	again := isoSweep(t, e, map[string]any{})
	if again.Deleted != (isoCounts{}) || *again.More {
		t.Errorf("second sweep: %+v, more %v", again.Deleted, *again.More)
	}
	if dry := isoSweep(t, e, `{"dry_run":true}`); dry.Deleted != (isoCounts{}) {
		t.Errorf("dry run after the sweep: %+v", dry.Deleted)
	}
}

// A sweep stops when its time is up and says there is more; the next one goes on.
func TestSweepTimeBudget(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: sweeps a large seed until its time budget runs out")
	}
	e := newEnv(t, true)
	db := isoAdmin(t, e)
	const n = 5000
	s := uuid.New()
	db.exec(`insert into agentmem.sessions (id, user_id, agent, last_seq, expires_at)
		values ($1, $2, 'default', $3, now() - interval '1 minute')`, s, uuid.New(), n)
	db.exec(`insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
		select $1, g, gen_random_uuid(), (select user_id from agentmem.sessions where id = $1), 'default', 'user', 'x', 1,
		  now() - interval '1 minute'
		from generate_series(1, $2::int) g`, s, n)

	first := isoSweep(t, e, map[string]any{"batch_size": 10, "max_duration_ms": 1})
	if !*first.More || first.Deleted.Messages >= n {
		t.Fatalf("sweep of %d rows in batches of 10 within 1 ms: %+v, more %v", n, first.Deleted, *first.More)
	}
	if left := db.count("messages", ""); int64(left) != n-first.Deleted.Messages {
		t.Errorf("%d messages left, the answer says %d of %d deleted", left, first.Deleted.Messages, n)
	}
	if first.Deleted.Sessions != 0 || db.count("sessions", "id = $1", s) != 1 {
		t.Error("the session went before its messages")
	}
	rest := isoSweep(t, e, map[string]any{"batch_size": 1000})
	if *rest.More || first.Deleted.Messages+rest.Deleted.Messages != n || rest.Deleted.Sessions != 1 || rest.Batches < 5 {
		t.Errorf("second sweep: %+v in %d batches, more %v", rest.Deleted, rest.Batches, *rest.More)
	}
	if left := db.count("messages", ""); left != 0 {
		t.Errorf("%d messages left", left)
	}
	// With nothing left, running out of time does not ask for another sweep.
	for range 3 {
		if a := isoSweep(t, e, map[string]any{"batch_size": 1, "max_duration_ms": 1}); *a.More || a.Deleted != (isoCounts{}) {
			t.Errorf("sweep of nothing within 1 ms: %+v, more %v", a.Deleted, *a.More)
		}
	}
	// With rows left of a later kind only, it does.
	db.exec(`insert into agentmem.idempotency_keys (user_id, caller_role, function, key, request_hash, response_status,
		  response_body, expires_at)
		select gen_random_uuid(), 'authenticated', 'commit-turn', g::text, '\x00', 201, '{}', now() - interval '1 minute'
		from generate_series(1, 3000) g`)
	a := isoSweep(t, e, map[string]any{"batch_size": 1, "max_duration_ms": 1})
	if !*a.More || a.Deleted.IdempotencyKeys >= 3000 {
		t.Errorf("sweep of 3000 keys one by one within 1 ms: %+v, more %v", a.Deleted, *a.More)
	}
}

func TestSweepValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	svc := e.serviceToken()
	for _, tt := range []struct {
		body  string
		field string
	}{
		{`{"batch_size":0}`, "batch_size"},
		{`{"batch_size":50001}`, "batch_size"},
		{`{"batch_size":-1}`, "batch_size"},
		{`{"batch_size":"10"}`, "batch_size"},
		{`{"batch_size":1.5}`, "batch_size"},
		{`{"max_duration_ms":0}`, "max_duration_ms"},
		{`{"max_duration_ms":-5}`, "max_duration_ms"},
		{`{"max_duration_ms":900001}`, "max_duration_ms"},
		{`{"dry_run":"yes"}`, "dry_run"},
		{`{"dry_run":1}`, "dry_run"},
		{`{"batchsize":10}`, "batchsize"},
		{`{"user_id":"` + uuid.NewString() + `"}`, "user_id"},
	} {
		t.Run(tt.body, func(t *testing.T) {
			wantProblem(t, e.call(svc, "sweep-expired", tt.body), http.StatusBadRequest, "invalid_request", tt.field)
		})
	}
	for _, body := range []string{`{"batch_size":1,"dry_run":true}`, `{"batch_size":50000,"dry_run":true}`, `{"max_duration_ms":900000,"dry_run":true}`} {
		e.call(svc, "sweep-expired", body).must(t, http.StatusOK)
	}
	u := e.newUser("")
	r := e.call(u.token, "sweep-expired", `{"dry_run":true}`).must(t, http.StatusForbidden)
	if r.problemCode() != "forbidden" {
		t.Errorf("user token: code %q", r.problemCode())
	}
}

// Commits go on while a sweep deletes many rows, including commits into sessions the sweep
// is emptying.
func TestSweepDoesNotStallCommits(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: commits while a sweep deletes a large seed")
	}
	e := newEnv(t, true)
	db := isoAdmin(t, e)
	const sessions, perSession = 200, 100
	owner := e.newUser("")
	db.exec(`insert into agentmem.sessions (id, user_id, agent, last_seq, expires_at)
		select gen_random_uuid(), $1, 'default', $2, now() - interval '1 minute' from generate_series(1, $3::int)`,
		owner.id, perSession, sessions)
	db.exec(`insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
		select s.id, g, gen_random_uuid(), s.user_id, 'default', 'user', 'old', 1, now() - interval '1 minute'
		from agentmem.sessions s, generate_series(1, $1::int) g`, perSession)
	rows, err := db.conn.Query(t.Context(), "select id from agentmem.sessions order by id limit 8")
	if err != nil {
		t.Fatal(err)
	}
	var expired []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		expired = append(expired, id)
	}

	var wg sync.WaitGroup
	var sweepStatus int
	var sweepBody map[string]any
	wg.Add(1)
	go func() {
		defer wg.Done()
		sweepStatus, sweepBody = isoPost(e.h, e.serviceToken(), "sweep-expired", map[string]any{"batch_size": 200})
	}()
	type result struct {
		session uuid.UUID
		status  int
	}
	results := make(chan result, 8*6)
	users := make([]user, 8)
	for i := range users {
		users[i] = e.newUser("")
	}
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				s := uuid.New()
				status, _ := isoPost(e.h, users[i].token, "commit-turn", isoTurn(s, "", []string{"new", "turn"}, "fact "+s.String()))
				results <- result{s, status}
			}
			// The owner of an expired session commits into it while it is swept.
			status, _ := isoPost(e.h, owner.token, "commit-turn", isoTurn(expired[i], "", []string{"revived"}))
			results <- result{expired[i], status}
		}()
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r.status != http.StatusCreated {
			t.Errorf("commit into %s during a sweep: %d", r.session, r.status)
			continue
		}
		if n := db.count("messages", "session_id = $1 and expires_at > now()", r.session); n == 0 {
			t.Errorf("session %s lost the messages committed during the sweep", r.session)
		}
	}
	if sweepStatus != http.StatusOK {
		t.Fatalf("sweep: %d %v", sweepStatus, sweepBody)
	}
	deleted := obj(sweepBody["deleted"])
	if deleted["messages"].(float64) < float64(sessions*perSession-8*perSession) || sweepBody["more"] != false {
		t.Errorf("sweep answer %v", sweepBody)
	}
	for _, s := range expired {
		if db.count("sessions", "id = $1", s) != 1 {
			t.Errorf("session %s, committed into during the sweep, is gone", s)
		}
	}
	if n := db.count("messages", "expires_at <= now()"); n != 0 && sweepBody["more"] == false {
		// Rows a commit held locked are skipped, never waited for; a later sweep takes them.
		t.Logf("%d expired messages skipped", n)
	}
}
