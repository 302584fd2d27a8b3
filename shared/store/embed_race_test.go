package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// The writers of message vectors (the background embedding of committed turns, and the
// scheduled embed-pending run) racing a session's reset, a clear of the user's messages and a
// forget-user never deadlock with them: every call of either side succeeds, the deletions
// delete what they must, and the writer stores the vector of every message no deletion took.
//
// Each round commits a few turns to a few sessions of a new user, none embedded, then runs one
// writer and one deletion at once. The background writer's batch holds the turns in the order
// they may reach it from concurrent commits (the last session's first, a session's later turn
// before its earlier one); embed-pending's holds the rows in key order (session id, seq); the
// deletions go in the order of their own plans (a session's seqs upwards, a user's rows by
// creation time).
func TestEmbeddingWritersRacingDeletionsDoNotDeadlock(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: races embedding writers against deletions")
	}
	e := storetest.New(t, storetest.MaxConns(6))
	ctx := context.Background()
	st, admin := e.Store, e.Admin(t)
	model := store.VectorModel{Name: embedding.Hash{}.Model(), Dims: embedding.Hash{}.Dimensions()}
	count := func(where string, args ...any) int64 {
		t.Helper()
		var n int64
		if err := admin.QueryRow(ctx, `select count(*) from agentmem.messages where `+where, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	const sessions, turns, perTurn = 3, 2, 4
	deletions := []string{"reset", "clear", "forget"}
	const maxRounds, minRounds, budget = 48, 12, 30 * time.Second
	deadlocks, rounds := 0, 0
	for start := time.Now(); rounds < maxRounds && (rounds < minRounds || time.Since(start) < budget); rounds++ {
		sc := memory.Scope{TenantID: "acme", UserID: uuid.NewString(), Agent: memory.DefaultAgent}
		ids := make([]uuid.UUID, sessions)
		committed := make([][][]store.MessageVector, sessions) // by session, then turn
		for s := range ids {
			ids[s] = uuid.New()
			for tn := range turns {
				msgs := storetest.Messages(perTurn, fmt.Sprintf("round %d session %d turn %d", rounds, s, tn))
				res := storetest.Commit(t, st, sc, ids[s], msgs)
				var vs []store.MessageVector
				for i, m := range res.Messages {
					vs = append(vs, store.MessageVector{UserID: sc.UserID, SessionID: ids[s], Seq: m.Seq, Content: msgs[i].Content,
						Vector: storetest.HashLiteral(msgs[i].Content)})
				}
				committed[s] = append(committed[s], vs)
			}
		}
		var batch []store.MessageVector
		for s := sessions - 1; s >= 0; s-- {
			for tn := turns - 1; tn >= 0; tn-- {
				batch = append(batch, committed[s][tn]...)
			}
		}
		background := rounds%2 == 0
		var pending []store.PendingRow
		var pendingVecs []*string
		if !background {
			var err error
			pending, err = st.ReadPending(ctx, model, store.PendingScope{UserID: &sc.UserID},
				store.PendingMessages, store.PendingKey{}, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if len(pending) != sessions*turns*perTurn {
				t.Fatalf("round %d: %d messages pending, want %d", rounds, len(pending), sessions*turns*perTurn)
			}
			for _, r := range pending {
				v := storetest.HashLiteral(r.Content)
				pendingVecs = append(pendingVecs, &v)
			}
		}

		deletion := deletions[rounds%len(deletions)]
		reset := ids[sessions/2]
		var wg sync.WaitGroup
		var writeErr, deleteErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			if background {
				_, writeErr = st.StoreMessageVectors(ctx, model, batch)
			} else {
				_, writeErr = st.StorePending(ctx, model, store.PendingMessages, pending, pendingVecs)
			}
		}()
		go func() {
			defer wg.Done()
			switch deletion {
			case "reset":
				_, deleteErr = st.ResetSession(ctx, sc, reset)
			case "clear":
				_, deleteErr = st.ClearMessages(ctx, memory.Scope{TenantID: sc.TenantID, UserID: sc.UserID})
			default:
				_, deleteErr = st.ForgetUser(ctx, store.ForgetParams{UserID: sc.UserID, TenantID: sc.TenantID})
			}
		}()
		wg.Wait()
		writer := map[bool]string{true: "background embedding", false: "embed-pending"}[background]
		for _, e := range []struct {
			who string
			err error
		}{{writer, writeErr}, {deletion, deleteErr}} {
			if e.err == nil {
				continue
			}
			var pgErr *pgconn.PgError
			if errors.As(e.err, &pgErr) && pgErr.Code == "40P01" {
				deadlocks++
			}
			t.Errorf("round %d, %s racing %s: %s failed: %v", rounds, writer, deletion, e.who, e.err)
		}
		if t.Failed() {
			continue
		}
		// What the deletion took is gone; the writer embedded every message it left.
		if deletion == "reset" {
			if n := count("session_id = $1", reset); n != 0 {
				t.Errorf("round %d: the reset left %d messages", rounds, n)
			}
			if n := count("user_id = $1 and session_id <> $2", sc.UserID, reset); n != (sessions-1)*turns*perTurn {
				t.Errorf("round %d: %d messages in the other sessions after the reset, want %d", rounds, n, (sessions-1)*turns*perTurn)
			}
			if n := count("user_id = $1 and embedding is null", sc.UserID); n != 0 {
				t.Errorf("round %d: %s racing the reset: %d messages it left have no vector", rounds, writer, n)
			}
		} else if n := count("user_id = $1", sc.UserID); n != 0 {
			t.Errorf("round %d: %s left %d messages", rounds, deletion, n)
		}
	}
	if deadlocks > 0 {
		t.Errorf("%d deadlocks in %d rounds", deadlocks, rounds)
	}
	t.Logf("%d rounds", rounds)
}
