package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/testdb"
)

// get-context's window runs the generic plan prepared once on the connection from its first
// call: left to choose, PostgreSQL plans it for the values of at least five calls and, on a large
// table (the bench's 400,000 messages), of every call, because it estimates "limit $5" dearer in
// the generic plan, which is the same plan; and planning it costs more than running it. A window
// since a time is still planned for its values.
func TestGetContextPlansItsWindowOnce(t *testing.T) {
	ctx := context.Background()
	s := openPreparing(t)
	sc, sid := commitNumbered(t, s, 30, CommitParams{Memories: []memory.NewMemory{{Content: "likes green tea"}},
		MemoryVectors: []*string{literal(t, "likes green tea")}, Model: embedding.Hash{}.Model()})
	before := planCacheMode(t, s)
	for _, since := range []*time.Time{nil, new(time.Now().Add(-time.Hour))} {
		for i := 0; i < 12; i++ {
			p := ContextParams{Scope: sc, SessionID: sid, MaxMessages: 12, Since: since,
				WindowExpiry: i%3 == 0, AnswersOnly: i%4 == 2}
			if i%2 == 1 {
				// With a recall: agentmem.recall_memories plans its vector search itself.
				p.Query, p.RecallK, p.QueryVector, p.Model = "tea", 3, literal(t, "tea"), embedding.Hash{}.Model()
			}
			got, err := s.GetContext(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Messages) != 12 || got.Messages[11].Seq != 30 || len(got.Memories) != i%2 {
				t.Fatalf("read %d messages and %d memories, want 12 (the last seq 30) and %d", len(got.Messages), len(got.Memories), i%2)
			}
			if p.WindowExpiry != (got.WindowExpiresAt != nil) {
				t.Fatalf("window expiry asked %v, read %v", p.WindowExpiry, got.WindowExpiresAt)
			}
		}
		g, c := plansOf(t, s, windowMessagesSQL)
		eg, ec := plansOf(t, s, windowExpirySQL)
		if since == nil {
			if g != 12 || c != 0 || eg != 4 || ec != 0 {
				t.Errorf("the window ran %d generic and %d custom plans, its expiry %d and %d; want 12 and 4 generic", g, c, eg, ec)
			}
			// The statement after the window is planned as the connection's settings choose.
			if g, c := plansOf(t, s, userDataSQL); c < 5 {
				t.Errorf("the user's data ran %d generic and %d custom plans, want at least 5 custom", g, c)
			}
			continue
		}
		// The window since a time, in transactions left to choose: PostgreSQL plans it for the
		// values of at least its first five calls.
		if g+c != 24 || c < 5 || ec != 4 {
			t.Errorf("with the window since a time, it ran %d generic and %d custom plans in all (its expiry %d custom), want 24 with at least 5 custom (4)", g, c, ec)
		}
	}
	if after := planCacheMode(t, s); after != before {
		t.Errorf("plan_cache_mode of the connection is %q after get-context, was %q", after, before)
	}
}

// planCacheMode is the store's connection's plan_cache_mode.
func planCacheMode(t *testing.T, s *Store) string {
	t.Helper()
	var mode string
	if err := s.pool.QueryRow(context.Background(), `select current_setting('plan_cache_mode')`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	return mode
}

// openPreparing opens a store on a database of its own that prepares statements once per
// connection, whatever the port of the server, on one connection.
func openPreparing(t *testing.T) *Store {
	db := testdb.New(t)
	url := db.URL
	if strings.Contains(url, "?") {
		url += "&default_query_exec_mode=cache_statement"
	} else {
		url += "?default_query_exec_mode=cache_statement"
	}
	s, err := Open(context.Background(), Config{DatabaseURL: url, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// plansOf is how many generic and custom plans the statement prepared as sql ran on the store's
// connection.
func plansOf(t *testing.T, s *Store, sql string) (generic, custom int64) {
	t.Helper()
	err := s.pool.QueryRow(context.Background(),
		`select generic_plans, custom_plans from pg_prepared_statements where statement = $1`, sql).Scan(&generic, &custom)
	if err != nil {
		t.Fatalf("statement not prepared (%v):%s", err, sql)
	}
	return generic, custom
}

// literal is text's vector of the built-in embedder as a pgvector literal.
func literal(t *testing.T, text string) *string {
	t.Helper()
	ls, err := VectorLiterals([][]float32{embedding.Hash{}.Vector(text)}, embedding.HashDimensions)
	if err != nil {
		t.Fatal(err)
	}
	return ls[0]
}

// commitNumbered commits a turn of n messages, "message 1" to "message n", with the rest of p,
// to a new session of a new user, and returns them.
func commitNumbered(t *testing.T, s *Store, n int, p CommitParams) (memory.Scope, uuid.UUID) {
	t.Helper()
	p.Scope, p.SessionID, p.TTL = memory.Scope{UserID: uuid.NewString(), Agent: "default"}, uuid.New(), time.Hour
	for i := range n {
		p.Messages = append(p.Messages, memory.NewMessage{Role: "user", Content: fmt.Sprintf("message %d", i+1)})
	}
	if _, _, err := s.CommitTurn(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p.Scope, p.SessionID
}

// A session's history page runs its generic plan too: a page after a cursor is a range of the
// primary key that begins at the cursor, so a deep page reads what the first does. The plans are
// read as the user's request runs them, under row-level security.
func TestSessionHistoryPagesRunGenericPlansFromTheCursor(t *testing.T) {
	ctx := context.Background()
	s := openPreparing(t)
	sc, sid := commitNumbered(t, s, 50, CommitParams{})
	for _, newest := range []bool{false, true} {
		var after *int64
		var seen []int64
		for {
			page, err := s.SessionHistory(ctx, HistoryParams{Scope: sc, SessionID: sid, Limit: 7, Newest: newest, After: after})
			if err != nil {
				t.Fatal(err)
			}
			if page.Total != 50 {
				t.Fatalf("total %d, want 50", page.Total)
			}
			for _, m := range page.Messages {
				seen = append(seen, m.Seq)
			}
			if page.Next == nil {
				break
			}
			after = page.Next
		}
		if len(seen) != 50 {
			t.Fatalf("newest %v: paged through %d messages, want 50", newest, len(seen))
		}
		for i, seq := range seen {
			want := int64(i + 1)
			if newest {
				want = int64(50 - i)
			}
			if seq != want {
				t.Fatalf("newest %v: message %d has seq %d, want %d", newest, i, seq, want)
			}
		}
	}
	// A history since a time is planned for its values: the oldest first page ran generic plans
	// only so far, and runs its first five since a time planned for them.
	if g, c := plansOf(t, s, historyOldestSQL); g == 0 || c != 0 {
		t.Fatalf("the first page ran %d generic and %d custom plans, want only generic", g, c)
	}
	since := time.Now().Add(-time.Hour)
	for i := 0; i < 6; i++ {
		page, err := s.SessionHistory(ctx, HistoryParams{Scope: sc, SessionID: sid, Limit: 7, Since: &since})
		if err != nil || page.Total != 50 || len(page.Messages) != 7 || page.Messages[0].Seq != 1 {
			t.Fatalf("since an hour ago: %+v, %v", page, err)
		}
	}
	if g, c := plansOf(t, s, historyOldestSQL); c < 5 {
		t.Errorf("the first page since a time ran %d generic and %d custom plans, want at least 5 custom", g, c)
	}
	// The count is planned as the connection's settings choose: a generic plan may read the
	// user's index instead of the session's.
	if g, c := plansOf(t, s, historyCountSQL); c < 5 {
		t.Errorf("the count ran %d generic and %d custom plans, want at least 5 custom", g, c)
	}
	if testdb.UserPartitions(t) > 1 {
		// EXPLAIN (GENERIC_PLAN) plans without the user's value, over every partition of a
		// partitioned messages; which partition a statement reads, TestStatementsReadOnePartition
		// checks in shared/app.
		return
	}
	for sql, want := range map[string]string{
		historyOldestAfterSQL: "((session_id = $1) AND (seq > $4))",
		historyNewestAfterSQL: "((session_id = $1) AND (seq < $4))",
	} {
		if g, cu := plansOf(t, s, sql); g == 0 || cu != 0 {
			t.Errorf("ran %d generic and %d custom plans, want only generic:%s", g, cu, sql)
		}
		// The statement's generic plan, as PostgreSQL makes it for the prepared statement.
		plan := explainInScope(t, s, sc, "generic_plan, format json", sql)
		var conds []string
		plan.walk(func(n planNode) {
			if n.IndexName == "messages_pkey" {
				conds = append(conds, n.IndexCond)
			}
		})
		if len(conds) != 1 || conds[0] != want {
			t.Errorf("the generic plan reads messages_pkey with %q, want %s:\n%s", conds, want, plan)
		}
	}
}

// A commit's append (the session's upsert and the messages' insert, one statement) runs the
// generic plan prepared once on the connection: it has one plan whatever the values, and left
// to choose PostgreSQL planned it again at every commit (about a twentieth of the server's CPU
// with 8 clients). The statement after it in the batch (the turn's memories) is planned as the
// connection's settings choose, and the connection's plan_cache_mode is unchanged.
func TestCommitAppendsOnItsGenericPlan(t *testing.T) {
	ctx := context.Background()
	s := openPreparing(t)
	before := planCacheMode(t, s)
	sc := memory.Scope{UserID: uuid.NewString(), Agent: "default"}
	sid := uuid.New()
	for i := range 12 {
		p := CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour,
			Messages: []memory.NewMessage{{Role: "user", Content: fmt.Sprintf("turn %d", i)}, {Role: "assistant", Content: "noted"}}}
		if i%2 == 1 {
			fact := fmt.Sprintf("likes tea number %d", i)
			p.Memories, p.MemoryVectors, p.Model = []memory.NewMemory{{Content: fact}}, []*string{literal(t, fact)}, embedding.Hash{}.Model()
		}
		res, _, err := s.CommitTurn(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) != 2 || res.Messages[1].Seq != int64(2*i+2) || len(res.Memories) != i%2 {
			t.Fatalf("commit %d stored %v and %d memories", i, res.Messages, len(res.Memories))
		}
	}
	if g, c := plansOf(t, s, appendStatement.sql); g != 12 || c != 0 {
		t.Errorf("the append ran %d generic and %d custom plans, want 12 generic", g, c)
	}
	if g, c := plansOf(t, s, storeMemoriesStatement.sql); c < 5 {
		t.Errorf("the memories after it ran %d generic and %d custom plans, want at least 5 custom", g, c)
	}
	if after := planCacheMode(t, s); after != before {
		t.Errorf("plan_cache_mode of the connection is %q after commits, was %q", after, before)
	}
}
