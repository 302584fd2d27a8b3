package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
)

// A request that cannot finish within its deadline (a Lambda invocation's) answers 503 with
// Retry-After while there is still time to send it, and stores nothing.
func TestBlockedRequestAnswers503BeforeItsDeadline(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: waits out a blocked request's deadline")
	}
	e := newEnv(t, true) // a database of its own: the check below watches all of its backends
	u := e.newUser("")
	sid := uuid.New()
	e.call(u.token, "commit-turn", map[string]any{"session_id": sid,
		"messages": []any{map[string]any{"role": "user", "content": "first"}}}).must(t, http.StatusCreated)

	// Another transaction holds the session's row lock, as a stuck commit would.
	admin := e.adminConn()
	defer admin.Close(context.Background())
	tx, err := admin.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	if _, err := tx.Exec(context.Background(), `select 1 from agentmem.sessions where id = $1 for update`, sid); err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(4 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"session_id": sid,
		"messages": []any{map[string]any{"role": "user", "content": "second"}}})
	req := httptest.NewRequest(http.MethodPost, "/v1/commit-turn", bytes.NewReader(body)).WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+u.token)
	req.Header.Set("Origin", "https://app.example.com")
	r := e.do(req)
	answered := time.Now()

	wantProblem(t, r, http.StatusServiceUnavailable, "unavailable")
	if r.header.Get("Retry-After") == "" || r.header.Get("Access-Control-Allow-Origin") == "" {
		t.Errorf("503 without Retry-After or CORS: %v", r.header)
	}
	if !answered.Before(deadline) {
		t.Errorf("answered %v after the deadline", answered.Sub(deadline))
	}
	if err := tx.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The refused commit must not go on to commit once the lock is free. Count only once no
	// other backend of this database is running a statement or holds a transaction open: from
	// then on nothing left over from the request can still write.
	for settled := time.Now().Add(10 * time.Second); ; {
		var busy int
		if err := admin.QueryRow(context.Background(), `select count(*) from pg_stat_activity
			where datname = current_database() and pid <> pg_backend_pid()
			  and state in ('active', 'idle in transaction', 'idle in transaction (aborted)')`).Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if busy == 0 {
			break
		}
		if time.Now().After(settled) {
			t.Fatalf("%d backends still busy 10 s after the lock was released", busy)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := e.count("messages", "session_id = $1", sid); n != 1 {
		t.Errorf("messages after the refused commit: %d, want 1", n)
	}
}
