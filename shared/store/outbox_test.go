package store_test

import (
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// obJob is a job row as the superuser reads it.
type obJob struct {
	ID        uuid.UUID
	EventID   uuid.UUID
	TenantID  string
	UserID    string
	Agent     string
	SessionID *uuid.UUID
	Intent    string
	Adapter   string
	Refs      map[string]any
	Status    string
}

func obJobs(t *testing.T, conn *pgx.Conn, user string) []obJob {
	t.Helper()
	rows, err := conn.Query(t.Context(), `select id, event_id, tenant_id, user_id, agent, session_id, intent, adapter,
		refs, status from agentmem.jobs where user_id = $1 order by created_at, adapter`, user)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (obJob, error) {
		var j obJob
		err := r.Scan(&j.ID, &j.EventID, &j.TenantID, &j.UserID, &j.Agent, &j.SessionID, &j.Intent, &j.Adapter, &j.Refs, &j.Status)
		return j, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func obOpen(t *testing.T, db testdb.DB, adapters ...string) *store.Store {
	t.Helper()
	return storetest.Open(t, db, storetest.MaxConns(4), storetest.Adapters(adapters...))
}

func obConn(t *testing.T, db testdb.DB) *pgx.Conn {
	t.Helper()
	return storetest.Admin(t, db.URL)
}

func obTurn(sc memory.Scope, session uuid.UUID, contents ...string) store.CommitParams {
	p := store.CommitParams{Scope: sc, SessionID: session, TTL: time.Hour}
	for _, c := range contents {
		p.Messages = append(p.Messages, memory.NewMessage{Role: memory.RoleUser, Content: c})
	}
	return p
}

// Every change an adapter must learn of writes one job per enabled adapter, in its own
// transaction, with the references its event needs and nothing else; a change that does not
// happen (refused, replayed, a retry of stored messages) writes none; and each job's event,
// read back, carries the content of the change as stored.
func TestOutboxWritesOneJobPerAdapterWithEachChange(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := t.Context()
	adapters := []string{"webhook", "second"}
	st := obOpen(t, db, adapters...)
	conn := obConn(t, db)
	sc := memory.Scope{TenantID: "acme", UserID: uuid.NewString(), Agent: "bot"}
	session := uuid.New()
	last := 0
	newJobs := func(what string, intent string) []obJob {
		t.Helper()
		all := obJobs(t, conn, sc.UserID)
		fresh := all[last:]
		last = len(all)
		if intent == "" {
			if len(fresh) != 0 {
				t.Errorf("%s wrote %d jobs, want none", what, len(fresh))
			}
			return nil
		}
		if len(fresh) != len(adapters) {
			t.Fatalf("%s wrote %d jobs, want %d", what, len(fresh), len(adapters))
		}
		var names []string
		for _, j := range fresh {
			names = append(names, j.Adapter)
			if j.Intent != intent || j.Status != store.JobPending || j.UserID != sc.UserID || j.TenantID != sc.TenantID ||
				j.EventID != fresh[0].EventID {
				t.Errorf("%s: job %+v", what, j)
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"second", "webhook"}) {
			t.Errorf("%s: jobs for %v", what, names)
		}
		return fresh
	}
	event := func(j obJob) adapter.Event {
		t.Helper()
		var c store.ClaimedJob
		c.ID, c.EventID, c.TenantID, c.UserID, c.Agent, c.SessionID, c.Intent = j.ID, j.EventID, j.TenantID, j.UserID, j.Agent, j.SessionID, j.Intent
		c.Refs, _ = json.Marshal(j.Refs)
		evs, err := st.LoadEvents(ctx, c)
		if err != nil || len(evs) != 1 {
			t.Fatalf("events of %s: %d, %v", j.Intent, len(evs), err)
		}
		return evs[0]
	}

	// A turn in one round trip: its seq range and the content keys of its facts.
	p := obTurn(sc, session, "first", "second")
	p.Memories = []memory.NewMemory{{Content: "Likes tea."}}
	res, _, err := commitTurn(st, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	jobs := newJobs("a turn", adapter.TurnCommitted)
	if j := jobs[0]; j.Agent != "bot" || j.SessionID == nil || *j.SessionID != session ||
		j.Refs["seq_from"] != float64(1) || j.Refs["seq_to"] != float64(2) ||
		!slices.Equal(j.Refs["memory_ids"].([]any), []any{res.Memories[0].ID.String()}) {
		t.Errorf("turn job %+v", j)
	}
	ev := event(jobs[0])
	if len(ev.Messages) != 2 || ev.Messages[0].Content != "first" || ev.Messages[1].Seq != 2 ||
		len(ev.Memories) != 1 || ev.Memories[0].ID != res.Memories[0].ID || ev.Memories[0].Content != "Likes tea." ||
		*ev.TenantID != "acme" || *ev.Agent != "bot" || ev.ID != jobs[0].EventID {
		t.Errorf("turn event %+v", ev)
	}

	// A turn with an idempotency key (one transaction): seqs 3 and 4; its replay writes none.
	p = obTurn(sc, session, "third", "fourth")
	p.Idempotency = &store.Idempotency{CallerRole: "authenticated", Function: "commit-turn", Key: "k1", RequestHash: []byte{1}}
	if _, _, err := commitTurn(st, ctx, p); err != nil {
		t.Fatal(err)
	}
	jobs = newJobs("a keyed turn", adapter.TurnCommitted)
	if jobs[0].Refs["seq_from"] != float64(3) || jobs[0].Refs["seq_to"] != float64(4) {
		t.Errorf("keyed turn refs %v", jobs[0].Refs)
	}
	if _, replayed, err := commitTurn(st, ctx, p); err != nil || !replayed {
		t.Fatalf("replay: %v %v", replayed, err)
	}
	newJobs("a replay", "")

	// Messages with client ids: stored once; sent again, nothing changes and no job is written.
	id := uuid.NewString()
	p = obTurn(sc, session, "fifth")
	p.Messages[0].ID = &id
	if _, _, err := commitTurn(st, ctx, p); err != nil {
		t.Fatal(err)
	}
	if jobs = newJobs("a turn with a client id", adapter.TurnCommitted); jobs[0].Refs["seq_from"] != float64(5) {
		t.Errorf("client id turn refs %v", jobs[0].Refs)
	}
	if _, _, err := commitTurn(st, ctx, p); err != nil {
		t.Fatal(err)
	}
	newJobs("a retry of stored messages", "")

	// Refused turns write nothing: another agent's session, another user's.
	other := sc
	other.Agent = "other-bot"
	if _, _, err := commitTurn(st, ctx, obTurn(other, session, "x")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another agent's session: %v", err)
	}
	stranger := memory.Scope{TenantID: "acme", UserID: uuid.NewString(), Agent: "bot"}
	if _, _, err := commitTurn(st, ctx, obTurn(stranger, session, "x")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another user's session: %v", err)
	}
	newJobs("refused turns", "")
	if n := len(obJobs(t, conn, stranger.UserID)); n != 0 {
		t.Errorf("the stranger has %d jobs", n)
	}

	// Memory update and delete; deleting a missing memory writes nothing.
	mem := res.Memories[0].ID
	newText := "Likes green tea."
	if _, err := updateMemory(st, ctx, store.UpdateMemoryParams{Scope: memory.Scope{TenantID: sc.TenantID, UserID: sc.UserID},
		ID: mem, Content: &newText}); err != nil {
		t.Fatal(err)
	}
	jobs = newJobs("a memory update", adapter.MemoryUpdated)
	if ev := event(jobs[0]); len(ev.Memories) != 1 || ev.Memories[0].Content != newText || *ev.Agent != "bot" {
		t.Errorf("update event %+v", ev)
	}
	userScope := memory.Scope{TenantID: sc.TenantID, UserID: sc.UserID}
	if err := st.DeleteMemory(ctx, userScope, mem); err != nil {
		t.Fatal(err)
	}
	jobs = newJobs("a memory deletion", adapter.MemoryDeleted)
	if ev := event(jobs[0]); ev.Removed == nil || !slices.Equal(ev.Removed.MemoryIDs, []uuid.UUID{mem}) {
		t.Errorf("delete event %+v", ev)
	}
	if err := st.DeleteMemory(ctx, userScope, mem); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete again: %v", err)
	}
	newJobs("a deletion of nothing", "")

	// A message deleted, a session reset, a session deleted.
	if err := st.DeleteMessage(ctx, userScope, &session, id); err != nil {
		t.Fatal(err)
	}
	jobs = newJobs("a message deletion", adapter.MessageDeleted)
	if ev := event(jobs[0]); ev.Removed == nil || !slices.Equal(ev.Removed.MessageIDs, []string{id}) || *ev.SeqTo != 5 {
		t.Errorf("message deletion event %+v", ev)
	}
	if _, err := st.ResetSession(ctx, userScope, session); err != nil {
		t.Fatal(err)
	}
	jobs = newJobs("a reset", adapter.SessionReset)
	if ev := event(jobs[0]); ev.Removed == nil || !ev.Removed.AllMessages || *ev.SeqTo != 5 || *ev.SessionID != session {
		t.Errorf("reset event %+v", ev)
	}
	if err := st.DeleteSession(ctx, userScope, session); err != nil {
		t.Fatal(err)
	}
	newJobs("a session deletion", adapter.SessionDeleted)
	if err := st.DeleteSession(ctx, userScope, session); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete again: %v", err)
	}
	newJobs("a deletion of nothing", "")

	// Intents: a backfill remembers how far the session went.
	s2 := uuid.New()
	if _, _, err := commitTurn(st, ctx, obTurn(sc, s2, "a", "b", "c")); err != nil {
		t.Fatal(err)
	}
	newJobs("a turn", adapter.TurnCommitted)
	ir, err := st.CreateIntent(ctx, store.IntentParams{Scope: userScope, SessionID: s2, Intent: adapter.BackfillSession})
	if err != nil || len(ir.Jobs) != 2 {
		t.Fatalf("intent: %+v %v", ir, err)
	}
	jobs = newJobs("a backfill", adapter.BackfillSession)
	if jobs[0].EventID != ir.IntentID || jobs[0].Refs["seq_to"] != float64(3) || jobs[0].Agent != "bot" {
		t.Errorf("backfill job %+v, intent %v", jobs[0], ir.IntentID)
	}
	if _, err := st.CreateIntent(ctx, store.IntentParams{Scope: memory.Scope{TenantID: "acme", UserID: stranger.UserID},
		SessionID: s2, Intent: adapter.SyncSession}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an intent on another user's session: %v", err)
	}

	// A fact without a turn: created, then merged into (the same fact again).
	created, _, err := createMemory(st, ctx, store.CreateMemoryParams{Scope: sc, Content: "Owns a cat named Ada-9.", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	jobs = newJobs("a memory created", adapter.MemoryCreated)
	if ev := event(jobs[0]); len(ev.Memories) != 1 || ev.Memories[0].ID != created.ID || *ev.Agent != "bot" {
		t.Errorf("create event %+v", ev)
	}
	if _, _, err := createMemory(st, ctx, store.CreateMemoryParams{Scope: sc, Content: "Owns a cat named Ada-9", TTL: time.Hour,
		Idempotency: &store.Idempotency{CallerRole: "authenticated", Function: "memories", Key: "m1", RequestHash: []byte{2}}}); err != nil {
		t.Fatal(err)
	}
	jobs = newJobs("a memory merged into", adapter.MemoryUpdated)
	if jobs[0].Refs["memory_id"] != created.ID.String() {
		t.Errorf("merge job refs %v", jobs[0].Refs)
	}

	// Every message of one agent cleared, then of every agent.
	if _, err := st.ClearMessages(ctx, sc); err != nil {
		t.Fatal(err)
	}
	jobs = newJobs("a clear of one agent", adapter.MessagesCleared)
	if ev := event(jobs[0]); ev.Removed == nil || !ev.Removed.AllMessages || *ev.Agent != "bot" {
		t.Errorf("clear event %+v", ev)
	}
	if _, err := st.ClearMessages(ctx, userScope); err != nil {
		t.Fatal(err)
	}
	if ev := event(newJobs("a clear of every agent", adapter.MessagesCleared)[0]); ev.Agent != nil {
		t.Errorf("clear event %+v", ev)
	}

	// An erasure: the user's jobs go with everything else, and the erasure's own are written.
	fr, err := st.ForgetUser(ctx, store.ForgetParams{UserID: sc.UserID, TenantID: sc.TenantID, AsUser: true})
	if err != nil {
		t.Fatal(err)
	}
	if fr.Deleted["jobs"] != int64(last) {
		t.Errorf("forget deleted %d jobs, want %d", fr.Deleted["jobs"], last)
	}
	last = 0
	jobs = newJobs("an erasure", adapter.UserForgotten)
	if ev := event(jobs[0]); ev.Removed == nil || !ev.Removed.User || ev.Agent != nil || *ev.TenantID != "acme" {
		t.Errorf("erasure event %+v", ev)
	}
}

// Without adapters, no change writes a job (and none of the statements that write them runs).
func TestOutboxOffWritesNothing(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := t.Context()
	st := obOpen(t, db)
	conn := obConn(t, db)
	sc := memory.Scope{UserID: uuid.NewString(), Agent: "bot"}
	session := uuid.New()
	p := obTurn(sc, session, "one")
	p.Memories = []memory.NewMemory{{Content: "a fact"}}
	res, _, err := commitTurn(st, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	p = obTurn(sc, session, "two")
	p.Idempotency = &store.Idempotency{CallerRole: "authenticated", Function: "commit-turn", Key: "k", RequestHash: []byte{1}}
	if _, _, err := commitTurn(st, ctx, p); err != nil {
		t.Fatal(err)
	}
	us := memory.Scope{UserID: sc.UserID}
	text := "another fact"
	if _, err := updateMemory(st, ctx, store.UpdateMemoryParams{Scope: us, ID: res.Memories[0].ID, Content: &text}); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMemory(ctx, us, res.Memories[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMessage(ctx, us, &session, res.Messages[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ResetSession(ctx, us, session); err != nil {
		t.Fatal(err)
	}
	ir, err := st.CreateIntent(ctx, store.IntentParams{Scope: us, SessionID: session, Intent: adapter.SyncSession})
	if err != nil || len(ir.Jobs) != 0 {
		t.Fatalf("intent without adapters: %+v %v", ir, err)
	}
	if err := st.DeleteSession(ctx, us, session); err != nil {
		t.Fatal(err)
	}
	if _, _, err := createMemory(st, ctx, store.CreateMemoryParams{Scope: sc, Content: "a fact alone", TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClearMessages(ctx, us); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ForgetUser(ctx, store.ForgetParams{UserID: sc.UserID, AllTenants: true}); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := conn.QueryRow(ctx, `select count(*) from agentmem.jobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d jobs written without adapters", n)
	}
	if len(st.Adapters()) != 0 {
		t.Errorf("adapters %v", st.Adapters())
	}
}

// A worker that claimed a job and died (no result recorded) leaves it running until its lease
// passes; then another worker claims it again (one more attempt), and the dead worker's late
// result changes nothing. A job whose lease passed after the last allowed attempt goes dead,
// saying why. Concurrent claims never take the same job.
func TestClaimLeaseAndRecord(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := t.Context()
	st := obOpen(t, db, "webhook")
	conn := obConn(t, db)
	sc := memory.Scope{UserID: uuid.NewString(), Agent: "bot"}
	if _, _, err := commitTurn(st, ctx, obTurn(sc, uuid.New(), "hello")); err != nil {
		t.Fatal(err)
	}
	claim := store.ClaimJobsParams{Limit: 10, Lease: time.Minute, MaxAttempts: 3}
	first, dead, err := st.ClaimJobs(ctx, claim)
	if err != nil || len(first) != 1 || len(dead) != 0 || first[0].Attempts != 1 || first[0].Status != store.JobRunning {
		t.Fatalf("first claim: %+v, %d dead, %v", first, len(dead), err)
	}
	// The worker dies here. While its lease runs, nobody else takes the job.
	if again, _, err := st.ClaimJobs(ctx, claim); err != nil || len(again) != 0 {
		t.Fatalf("claim during the lease: %+v %v", again, err)
	}
	lapse := func() {
		t.Helper()
		if _, err := conn.Exec(ctx, `update agentmem.jobs set next_attempt_at = now() - interval '1 second'
			where user_id = $1`, sc.UserID); err != nil {
			t.Fatal(err)
		}
	}
	lapse()
	second, _, err := st.ClaimJobs(ctx, claim)
	if err != nil || len(second) != 1 || second[0].ID != first[0].ID || second[0].Attempts != 2 {
		t.Fatalf("claim after the lease: %+v %v", second, err)
	}
	// The first worker wakes up and records: nothing happens.
	msg := "late"
	if n, err := st.RecordJobs(ctx, []store.JobResult{{ID: first[0].ID, UserID: first[0].UserID, Attempts: 1, Status: store.JobDone}}); err != nil || n != 0 {
		t.Fatalf("late record: %d rows, %v", n, err)
	}
	// The second fails; retried later.
	if n, err := st.RecordJobs(ctx, []store.JobResult{{ID: second[0].ID, UserID: second[0].UserID, Attempts: 2, Status: store.JobPending,
		Delay: time.Hour, Error: &msg}}); err != nil || n != 1 {
		t.Fatalf("record: %d rows, %v", n, err)
	}
	j, err := st.GetJob(ctx, first[0].ID)
	if err != nil || j.Status != store.JobPending || j.Attempts != 2 || j.LastError == nil || *j.LastError != "late" ||
		time.Until(j.NextAttemptAt) < 50*time.Minute {
		t.Fatalf("after a failure: %+v %v", j, err)
	}
	// The third (last allowed) attempt's worker dies too: the job goes dead at the next claim.
	lapse()
	third, _, err := st.ClaimJobs(ctx, claim)
	if err != nil || len(third) != 1 || third[0].Attempts != 3 {
		t.Fatalf("third claim: %+v %v", third, err)
	}
	lapse()
	none, dead, err := st.ClaimJobs(ctx, claim)
	if err != nil || len(none) != 0 || len(dead) != 1 || dead[0].ID != first[0].ID || dead[0].Adapter != "webhook" {
		t.Fatalf("claim after the last lease: %+v, %+v dead, %v", none, dead, err)
	}
	j, err = st.GetJob(ctx, first[0].ID)
	if err != nil || j.Status != store.JobDead || j.Attempts != 3 || j.LastError == nil {
		t.Fatalf("after the last lease: %+v %v", j, err)
	}
	// Retry revives it with fresh attempts; a second retry is a conflict.
	if j, err = st.RetryJob(ctx, j.ID); err != nil || j.Status != store.JobPending || j.Attempts != 0 {
		t.Fatalf("retry: %+v %v", j, err)
	}
	if _, err := st.RetryJob(ctx, j.ID); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("retry of a pending job: %v", err)
	}
	if _, err := st.RetryJob(ctx, uuid.New()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("retry of no job: %v", err)
	}

	// Concurrent claims of many jobs take each once.
	for range 60 {
		if _, _, err := commitTurn(st, ctx, obTurn(sc, uuid.New(), "hello")); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[uuid.UUID]int{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, _, err := st.ClaimJobs(ctx, store.ClaimJobsParams{Limit: 3, Lease: time.Minute, MaxAttempts: 3})
				if err != nil {
					errs <- err
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, g := range got {
					seen[g.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != 61 {
		t.Errorf("claimed %d distinct jobs, want 61", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("job %s claimed %d times", id, n)
		}
	}
	if _, err := st.GetJob(ctx, uuid.New()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("get of no job: %v", err)
	}
}

// On tables partitioned by user, purging finished jobs deletes them and none of the jobs that
// sit at the same place in other partitions.
func TestPurgeJobsOfPartitionedTablesKeepsOthers(t *testing.T) {
	t.Parallel()
	db := testdb.NewPartitioned(t, 4)
	ctx := t.Context()
	admin := storetest.Admin(t, db.URL)
	// The finished job first, the first row of its partition, as are the pending jobs of the
	// users that follow in the other partitions.
	if _, err := admin.Exec(ctx, `
		insert into agentmem.jobs (id, event_id, user_id, intent, adapter, status, updated_at)
		values (gen_random_uuid(), gen_random_uuid(), 'done-user', 'onTurnCommitted', 'webhook', 'done', now() - interval '1 day');
		insert into agentmem.jobs (id, event_id, user_id, intent, adapter)
		select gen_random_uuid(), gen_random_uuid(), 'user-' || i, 'onTurnCommitted', 'webhook' from generate_series(1, 16) i`); err != nil {
		t.Fatal(err)
	}
	var places int
	if err := admin.QueryRow(ctx, `select count(distinct tableoid) from agentmem.jobs where ctid = '(0,1)'`).Scan(&places); err != nil || places < 2 {
		t.Fatalf("jobs at (0,1) in %d partitions (%v): the test needs them in several", places, err)
	}
	st := storetest.Open(t, db)
	n, err := st.PurgeJobs(ctx, store.PurgeJobsParams{Status: store.JobDone, Limit: 100})
	if err != nil || n != 1 {
		t.Fatalf("purge: %d jobs, %v; want 1", n, err)
	}
	var pending int
	if err := admin.QueryRow(ctx, `select count(*) from agentmem.jobs where status = 'pending'`).Scan(&pending); err != nil || pending != 16 {
		t.Errorf("after the purge: %d of 16 pending jobs (%v)", pending, err)
	}
}
