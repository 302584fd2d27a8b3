package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// A forget-user racing commits of the same user neither deadlocks with them nor loses count:
// every commit succeeds, and each message a commit stored is either among the rows the forget
// reports deleted (the commit came first) or still there once the round is over (it came
// after); a commit that returned before the forget started leaves nothing behind. The commits
// mix every shape: to the session the user already has (locked first, then its memories), to a
// new session, in one round trip and with an idempotency key; a fact stored again by every
// commit locks the same memory row.
func TestForgetUserRacingCommits(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: races rounds of concurrent commits")
	}
	e := storetest.New(t, storetest.MaxConns(8))
	ctx := context.Background()
	st, admin := e.Store, e.Admin(t)

	const writers = 4
	for _, tenant := range []string{"", "acme"} {
		sc := memory.Scope{TenantID: tenant, UserID: uuid.NewString(), Agent: memory.DefaultAgent}
		shared := uuid.New()
		commit := func(round, w int, session uuid.UUID) (memory.CommitResult, error) {
			p := store.CommitParams{Scope: sc, SessionID: session, TTL: time.Hour,
				Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: "hello"},
					{Role: memory.RoleAssistant, Content: "hi"}},
				Memories: []memory.NewMemory{{Content: "User likes tea."},
					{Content: fmt.Sprintf("Fact %d of writer %d.", round, w)}}}
			if w%2 == 1 {
				p.Idempotency = &store.Idempotency{CallerRole: "authenticated", Function: "commit-turn",
					Key: uuid.NewString(), RequestHash: []byte{1}}
			}
			res, _, err := commitTurn(st, ctx, p)
			return res, err
		}
		userMessages := func() int64 {
			var n int64
			if err := admin.QueryRow(ctx, `select count(*) from agentmem.messages where user_id = $1`,
				sc.UserID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}

		rounds := 0
		for start := time.Now(); time.Since(start) < 1500*time.Millisecond || rounds < 5; rounds++ {
			// Rows committed before the forget starts: it must take every one of them.
			before, err := commit(rounds, -1, shared)
			if err != nil {
				t.Fatalf("round %d: commit before the forget: %v", rounds, err)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			stored := int64(len(before.Messages))
			var errs []error
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					session := shared
					if w >= writers/2 {
						session = uuid.New() // a session created while the forget runs
					}
					res, err := commit(rounds, w, session)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						errs = append(errs, fmt.Errorf("commit of writer %d: %w", w, err))
						return
					}
					stored += int64(len(res.Messages))
				}()
			}
			forgot, err := st.ForgetUser(ctx, store.ForgetParams{UserID: sc.UserID, TenantID: sc.TenantID, AsUser: rounds%2 == 0})
			if err != nil {
				errs = append(errs, fmt.Errorf("forget: %w", err))
			}
			wg.Wait()
			for _, err := range errs {
				t.Errorf("tenant %q, round %d: %v", tenant, rounds, err)
			}
			if t.Failed() {
				t.FailNow()
			}
			left := userMessages()
			if forgot.Deleted["messages"]+left != stored {
				t.Fatalf("tenant %q, round %d: %d messages stored, the forget deleted %d and %d remain",
					tenant, rounds, stored, forgot.Deleted["messages"], left)
			}
			var kept bool
			if err := admin.QueryRow(ctx, `select exists (select 1 from agentmem.messages where id = $1)`,
				before.Messages[0].ID).Scan(&kept); err != nil {
				t.Fatal(err)
			}
			if kept {
				t.Fatalf("tenant %q, round %d: a message committed before the forget survived it", tenant, rounds)
			}
			// The next round starts from what this one left: forget it, alone.
			if _, err := st.ForgetUser(ctx, store.ForgetParams{UserID: sc.UserID, TenantID: sc.TenantID}); err != nil {
				t.Fatal(err)
			}
			if n := userMessages(); n != 0 {
				t.Fatalf("tenant %q, round %d: %d messages after a forget alone", tenant, rounds, n)
			}
		}
		t.Logf("tenant %q: %d rounds", tenant, rounds)
	}
}

// A commit that creates a session while a forget of its user runs is held back until the forget
// commits, then stored whole: the forget neither erases it half (its session, and the messages
// with it, but not its memories) nor counts less than it deleted. The forget is held mid-way by
// a lock on one of the user's notes, so the commit surely lands while it runs.
func TestForgetUserHoldsBackACommitMeanwhile(t *testing.T) {
	t.Parallel()
	e := storetest.New(t)
	ctx := context.Background()
	st, admin := e.Store, e.Admin(t)

	sc := storetest.Scope(memory.DefaultAgent)
	commit := func(fact string) (memory.CommitResult, error) {
		res, _, err := commitTurn(st, ctx, store.CommitParams{Scope: sc, SessionID: uuid.New(), TTL: time.Hour,
			Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: "hello"}},
			Memories: []memory.NewMemory{{Content: fact}}})
		return res, err
	}
	if _, err := commit("User likes tea."); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `insert into agentmem.notes (tenant_id, user_id, agent, content)
		values ('', $1, 'default', '# Notes')`, sc.UserID); err != nil {
		t.Fatal(err)
	}
	watch, err := pgx.Connect(ctx, e.DB.URL) // outside hold: its view of pg_stat_activity stays fresh
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(context.Background())
	waiting := func(n int) bool {
		t.Helper()
		var got int
		if err := watch.QueryRow(ctx, `select count(*) from pg_stat_activity
			where datname = current_database() and wait_event_type = 'Lock'`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got >= n
	}

	hold, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback(context.Background()) //nolint:errcheck
	if _, err := hold.Exec(ctx, `select 1 from agentmem.notes where user_id = $1 for update`, sc.UserID); err != nil {
		t.Fatal(err)
	}
	type forgetDone struct {
		res memory.ForgetResult
		err error
	}
	forgot := make(chan forgetDone, 1)
	go func() {
		res, err := st.ForgetUser(ctx, store.ForgetParams{UserID: sc.UserID})
		forgot <- forgetDone{res, err}
	}()
	for deadline := time.Now().Add(10 * time.Second); !waiting(1); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the forget never waited for the notes lock")
		}
	}
	type commitDone struct {
		res memory.CommitResult
		err error
	}
	committed := make(chan commitDone, 1)
	go func() {
		res, err := commit("User lives in Lisbon.")
		committed <- commitDone{res, err}
	}()
	// The commit either waits for the forget, or (were it let through) finishes.
	var during *commitDone
	for deadline := time.Now().Add(10 * time.Second); during == nil && !waiting(2); time.Sleep(5 * time.Millisecond) {
		select {
		case c := <-committed:
			during = &c
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the commit neither finished nor waited")
		}
	}
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	f := <-forgot
	if during == nil {
		c := <-committed
		during = &c
	}
	if f.err != nil || during.err != nil {
		t.Fatalf("forget: %v; commit meanwhile: %v", f.err, during.err)
	}
	var messages, memories int64
	if err := admin.QueryRow(ctx, `select (select count(*) from agentmem.messages where user_id = $1),
		(select count(*) from agentmem.memories where user_id = $1)`, sc.UserID).Scan(&messages, &memories); err != nil {
		t.Fatal(err)
	}
	if f.res.Deleted["messages"] != 1 || f.res.Deleted["memories"] != 1 || f.res.Deleted["sessions"] != 1 ||
		f.res.Deleted["notes"] != 1 {
		t.Errorf("the forget deleted %v, want the first turn's session, message and memory and the notes", f.res.Deleted)
	}
	if messages != 1 || memories != 1 {
		t.Errorf("after the forget, the commit made meanwhile has %d messages and %d memories, want 1 and 1",
			messages, memories)
	}
}
