package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// syncedAt reads a session's last_synced_at (nil for null).
func syncedAt(t *testing.T, conn *pgx.Conn, sid uuid.UUID) *time.Time {
	t.Helper()
	var at *time.Time
	if err := conn.QueryRow(t.Context(), `select last_synced_at from agentmem.sessions where id = $1`, sid).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at
}

// A session is synced once every adapter has its newest change: with two adapters, the first
// job recorded done leaves last_synced_at as it was, the second sets it, even when the two are
// recorded by workers at the same moment; a dead job of the newest change keeps the session
// unsynced until a later change reaches every adapter.
func TestLastSyncedAtWaitsForEveryAdapter(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := t.Context()
	st := obOpen(t, db, "webhook", "mem0")
	conn := obConn(t, db)
	sc := storetest.Scope("bot")
	sid := uuid.New()
	claim := func(want int) []store.ClaimedJob {
		t.Helper()
		jobs, _, err := st.ClaimJobs(ctx, store.ClaimJobsParams{Limit: 10, Lease: time.Minute, MaxAttempts: 3})
		if err != nil || len(jobs) != want {
			t.Fatalf("claimed %d jobs (%v), want %d", len(jobs), err, want)
		}
		return jobs
	}
	record := func(j store.ClaimedJob, status string) {
		t.Helper()
		if n, err := st.RecordJobs(ctx, []store.JobResult{{ID: j.ID, UserID: j.UserID, Attempts: j.Attempts, Status: status}}); err != nil || n != 1 {
			t.Fatalf("record %s: %d, %v", status, n, err)
		}
	}

	storetest.Commit(t, st, sc, sid, storetest.Messages(1, "one"))
	jobs := claim(2)
	record(jobs[0], store.JobDone)
	if at := syncedAt(t, conn, sid); at != nil {
		t.Fatalf("last_synced_at %s with one adapter's job still running", at)
	}
	record(jobs[1], store.JobDone)
	last := syncedAt(t, conn, sid)
	if last == nil {
		t.Fatal("last_synced_at null once both adapters' jobs are done")
	}

	// Both jobs of a change recorded at once, by two workers: the later of the two sees the
	// other's outcome and sets the time.
	for i := range 10 {
		storetest.Commit(t, st, sc, sid, storetest.Messages(1, "again"))
		jobs := claim(2)
		var wg sync.WaitGroup
		for _, j := range jobs {
			wg.Go(func() {
				if _, err := st.RecordJobs(ctx, []store.JobResult{{ID: j.ID, UserID: j.UserID, Attempts: j.Attempts, Status: store.JobDone}}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		at := syncedAt(t, conn, sid)
		if at == nil || !at.After(*last) {
			t.Fatalf("round %d: last_synced_at %v, want after %s once both jobs are done", i, at, last)
		}
		last = at
	}

	// A change one adapter never got: not synced, until a later change reaches both.
	storetest.Commit(t, st, sc, sid, storetest.Messages(1, "lost"))
	jobs = claim(2)
	record(jobs[0], store.JobDead)
	record(jobs[1], store.JobDone)
	if at := syncedAt(t, conn, sid); at == nil || !at.Equal(*last) {
		t.Fatalf("last_synced_at %v with a dead job of the newest change, want %s kept", at, last)
	}
	storetest.Commit(t, st, sc, sid, storetest.Messages(1, "later"))
	jobs = claim(2)
	record(jobs[0], store.JobDone)
	record(jobs[1], store.JobDone)
	if at := syncedAt(t, conn, sid); at == nil || !at.After(*last) {
		t.Errorf("last_synced_at %v after a later change reached both adapters, want after %s", at, last)
	}
}
