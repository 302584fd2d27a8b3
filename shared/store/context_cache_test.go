package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// The cache check's generation moves with every change a cached window may predate (a turn
// through the session's last_seq, every other job of the cache, or of an erasure's fan-out,
// through the user's row), to a value it never had before, erasures included; intents that
// change nothing, other adapters' jobs and other users' changes leave it alone.
func TestCacheGenerationFollowsEveryChange(t *testing.T) {
	t.Parallel()
	e := storetest.New(t, storetest.Adapters(adapter.Redis))
	ctx := t.Context()
	admin := e.Admin(t)
	sc, sid := storetest.Scope("agent"), uuid.New()
	gen := func() string {
		t.Helper()
		c, err := e.Store.CheckContextCache(ctx, sc, sid, adapter.Redis, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return c.Generation
	}
	seen := map[string]string{}
	moved := func(what string) {
		t.Helper()
		g := gen()
		if before, ok := seen[g]; ok {
			t.Errorf("after %s the generation is %q, as after %s", what, g, before)
		}
		seen[g] = what
	}
	same := func(what string) {
		t.Helper()
		g := gen()
		if _, ok := seen[g]; !ok {
			t.Errorf("%s moved the generation to %q", what, g)
		}
	}
	job := func(user string, adapterName, intent string) {
		t.Helper()
		if _, err := admin.Exec(ctx, `insert into agentmem.jobs (id, event_id, user_id, agent, session_id, intent, adapter)
			values (gen_random_uuid(), gen_random_uuid(), $1, 'agent', $2, $3, $4)`, user, sid, intent, adapterName); err != nil {
			t.Fatal(err)
		}
	}

	moved("nothing yet")
	storetest.Commit(t, e.Store, sc, sid, storetest.Messages(2, "first"))
	moved("the first turn")
	storetest.Commit(t, e.Store, sc, sid, storetest.Messages(1, "second"))
	moved("a second turn")
	for _, intent := range []string{adapter.MemoryCreated, adapter.MemoryUpdated, adapter.MemoryDeleted, adapter.SessionReset,
		adapter.MessageDeleted, adapter.MessagesCleared, adapter.SummaryUpdated, adapter.UserDataChanged,
		adapter.SessionDeleted, adapter.UserForgotten, "onSomethingNew"} {
		job(sc.UserID, adapter.Redis, intent)
		moved(intent)
	}
	job(sc.UserID, adapter.Fanout, adapter.UserForgotten)
	moved("an erasure's fan-out")
	job(sc.UserID, adapter.Redis, adapter.SyncSession)
	job(sc.UserID, adapter.Redis, adapter.BackfillSession)
	job(sc.UserID, "webhook", adapter.MemoryCreated)
	job(uuid.NewString(), adapter.Redis, adapter.UserDataChanged)
	same("syncSession, backfillSession, another adapter's job and another user's change")

	// An erasure leaves the user's generation (it is not the user's data) and its own job
	// advances it; the session made anew starts from last_seq 0 again.
	if _, err := e.Store.ForgetUser(ctx, store.ForgetParams{UserID: sc.UserID, AllTenants: true}); err != nil {
		t.Fatal(err)
	}
	moved("forget-user")
	storetest.Commit(t, e.Store, sc, sid, storetest.Messages(2, "first"))
	moved("the first turn again, in a session made anew")
}
