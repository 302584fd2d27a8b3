package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
)

// backdateUser moves every row of a user back by ago, as if written then (as the superuser,
// without the triggers: the test's clock, not a write of the functions).
func backdateUser(e *env, user uuid.UUID, ago time.Duration) {
	e.t.Helper()
	ctx := context.Background()
	conn := e.adminConn()
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `set local session_replication_role = replica`); err != nil {
		e.t.Fatal(err)
	}
	for _, table := range []string{"messages", "memories", "sessions"} {
		if _, err := tx.Exec(ctx, `update agentmem.`+table+` set expires_at = expires_at - make_interval(secs => $2),
			created_at = created_at - make_interval(secs => $2) where user_id = $1`, user, ago.Seconds()); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		e.t.Fatal(err)
	}
}

// A deployment that lowers DEFAULT_RETENTION applies it to the rows written under the old
// default: once its sweep has run, the read paths (get-context, history, list, recall,
// memories) no longer return rows written two hours ago under 720 hours when the default is an
// hour, and they are deleted; a turn's and a memory's explicit ttl_seconds stay as given.
func TestLoweredDefaultRetentionExpiresOldRows(t *testing.T) {
	t.Parallel()
	before := buildEnv(t, envConfig{own: true})
	u := before.newUser("")
	def, explicit := uuid.New(), uuid.New()
	before.call(u.token, "commit-turn", map[string]any{"session_id": def, "agent": "bot",
		"messages": []map[string]any{{"role": "user", "content": "The violin lesson is on Monday."}},
		"memories": []map[string]any{{"content": "Plays the violin."}}}).must(t, http.StatusCreated)
	before.call(u.token, "commit-turn", map[string]any{"session_id": explicit, "agent": "bot", "ttl_seconds": 30 * 24 * 3600,
		"messages": []map[string]any{{"role": "user", "content": "The chess club meets on Friday."}},
		"memories": []map[string]any{{"content": "Plays chess."}}}).must(t, http.StatusCreated)
	before.call(u.token, "memories", map[string]any{"op": "create", "agent": "bot", "content": "Lives near the violin shop."}).
		must(t, http.StatusCreated)
	before.app.WaitEmbedded()
	backdateUser(before, u.id, 2*time.Hour)

	after := buildEnv(t, envConfig{on: before, app: app.Config{DefaultRetention: time.Hour}})
	sw := after.call(after.serviceToken(), "sweep-expired", map[string]any{}).must(t, http.StatusOK).body
	if r := obj(sw["restamped"]); r["messages"] != 1.0 || r["memories"] != 2.0 || r["sessions"] != 1.0 {
		t.Errorf("re-stamped %v", sw["restamped"])
	}
	if d := obj(sw["deleted"]); d["messages"] != 1.0 || d["memories"] != 2.0 || d["sessions"] != 1.0 {
		t.Errorf("deleted %v", sw["deleted"])
	}

	ctxAnswer := after.call(u.token, "get-context", map[string]any{"session_id": def, "agent": "bot", "query": "violin"}).
		must(t, http.StatusOK)
	if n := len(list(ctxAnswer.body["messages"])); n != 0 {
		t.Errorf("get-context returns %d messages of the old default", n)
	}
	for _, m := range list(ctxAnswer.body["memories"]) {
		if c := str(obj(m)["content"]); c != "Plays chess." {
			t.Errorf("get-context recalls %q, written under the old default", c)
		}
	}
	smOp(after, u.token, "sessions", "history", "session_id", def).must(t, http.StatusNotFound)
	sessions := list(smOp(after, u.token, "sessions", "list").must(t, http.StatusOK).body["sessions"])
	if len(sessions) != 1 || str(obj(sessions[0])["session_id"]) != explicit.String() {
		t.Errorf("sessions list: %v", sessions)
	}
	h := smOp(after, u.token, "sessions", "history").must(t, http.StatusOK)
	if h.body["total"] != 1.0 {
		t.Errorf("the user's history counts %v, want the explicit turn's message", h.body["total"])
	}
	r := after.call(u.token, "recall", map[string]any{"query": "violin chess", "agent": "bot", "source": "all"}).must(t, http.StatusOK)
	for _, hit := range list(r.body["results"]) {
		if c := str(obj(hit)["content"]); c != "Plays chess." && c != "The chess club meets on Friday." {
			t.Errorf("recall finds %q, written under the old default", c)
		}
	}
	mems := list(after.call(u.token, "memories", map[string]any{"op": "list"}).must(t, http.StatusOK).body["items"])
	if len(mems) != 1 || str(obj(mems[0])["content"]) != "Plays chess." {
		t.Errorf("memories list: %v", mems)
	}
	for table, want := range map[string]int{"messages": 1, "memories": 1, "sessions": 1} {
		if n := after.count(table, "user_id = $1", u.id); n != want {
			t.Errorf("%s: %d rows of the user left, want %d", table, n, want)
		}
	}
}
