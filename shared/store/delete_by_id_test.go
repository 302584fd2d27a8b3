package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/testdb"
)

// A message deleted by its id alone leaves what a deletion within its session leaves: the
// adapters learn of it (a job naming the message and its seq, for its session), the word
// counts BM25 reads drop it, and nothing of another session or user moves.
func TestDeleteMessageByIDKeepsJobsAndWordCounts(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	st := obOpen(t, db, adapter.Webhook)
	conn := obConn(t, db)
	ctx := context.Background()
	sc := memory.Scope{TenantID: "acme", UserID: uuid.NewString(), Agent: "bot"}
	session, other := uuid.New(), uuid.New()
	res, _, err := commitTurn(st, ctx, obTurn(sc, session, "budget review on Monday", "the violin lesson", "thanks"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := commitTurn(st, ctx, obTurn(sc, other, "the violin lesson again")); err != nil {
		t.Fatal(err)
	}
	drift := func(step string) {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, messageWordsDriftSQL).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("after %s: %d word counts differ from the stored messages'", step, n)
		}
	}
	drift("commits")
	before := len(obJobs(t, conn, sc.UserID))
	id := res.Messages[1].ID
	if err := st.DeleteMessage(ctx, memory.Scope{TenantID: sc.TenantID, UserID: sc.UserID}, nil, id); err != nil {
		t.Fatal(err)
	}
	drift("a message deleted by its id alone")
	jobs := obJobs(t, conn, sc.UserID)[before:]
	if len(jobs) != 1 || jobs[0].Intent != adapter.MessageDeleted || jobs[0].SessionID == nil || *jobs[0].SessionID != session ||
		jobs[0].Refs["message_id"] != id || jobs[0].Refs["seq"] != float64(2) {
		t.Fatalf("jobs of the deletion: %+v", jobs)
	}
	var left []int64
	rows, _ := conn.Query(ctx, `select seq from agentmem.messages where user_id = $1 order by session_id = $2 desc, seq`, sc.UserID, session)
	for rows.Next() {
		var s int64
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		left = append(left, s)
	}
	if len(left) != 3 || left[0] != 1 || left[1] != 3 || left[2] != 1 {
		t.Fatalf("messages left: %v", left)
	}
	// Gone: not found again, and no job written for it.
	if err := st.DeleteMessage(ctx, sc, nil, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete again: %v", err)
	}
	if n := len(obJobs(t, conn, sc.UserID)); n != before+1 {
		t.Errorf("a deletion of nothing wrote %d jobs", n-before-1)
	}
}
