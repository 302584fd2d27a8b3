package store_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// memoryWordsDriftSQL counts the rows in which the word counts of memories
// (agentmem.memory_words) differ from the counts of the stored memories (per scope and lexeme;
// the empty lexeme their number and total length).
var memoryWordsDriftSQL = `with recount as (` + wordRecountSQL("memories") + `),
counts as (select user_id, tenant_id, agent, lexeme, docs, length from agentmem.memory_words)
select count(*) from (
  (select * from counts except all select * from recount)
  union all
  (select * from recount except all select * from counts)) d`

// The word counts of memories follow them as they are created, merged, rewritten, moved to
// another agent, deleted, swept and erased, and an erased user leaves none.
func TestMemoryWordsFollowTheMemories(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	drift := func(step string) {
		t.Helper()
		var n int
		if err := e.conn.QueryRow(ctx, memoryWordsDriftSQL).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("after %s: %d word counts differ from the stored memories'", step, n)
		}
	}
	words := func(u uuid.UUID) int {
		t.Helper()
		var n int
		if err := e.conn.QueryRow(ctx, `select count(*) from agentmem.memory_words where user_id = $1`, u.String()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	user, other := uuid.New(), uuid.New()
	scopes := []memory.Scope{{UserID: user.String(), Agent: "chat"}, {UserID: user.String(), Agent: "mail"},
		{UserID: user.String(), TenantID: "acme", Agent: "chat"}, {UserID: other.String(), Agent: "chat"}}
	var ids []uuid.UUID
	for i, sc := range scopes {
		for j := range 3 {
			out, _, err := e.st.CreateMemory(ctx, store.CreateMemoryParams{Scope: sc, TTL: time.Hour,
				Content: fmt.Sprintf("Prefers green tea in the morning, note %d of scope %d", j, i)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, out.ID)
		}
	}
	drift("creates")
	// the same fact again merges into the stored one
	if _, _, err := e.st.CreateMemory(ctx, store.CreateMemoryParams{Scope: scopes[0], TTL: time.Hour,
		Content: "Prefers green tea in the morning, note 0 of scope 0"}); err != nil {
		t.Fatal(err)
	}
	drift("a merge")
	content := "Switched to black coffee with oat milk"
	if _, err := e.st.UpdateMemory(ctx, store.UpdateMemoryParams{Scope: scopes[0], ID: ids[1], Content: &content}); err != nil {
		t.Fatal(err)
	}
	drift("a rewrite")
	if _, err := e.conn.Exec(ctx, `update agentmem.memories set agent = 'mail' where id = $1`, ids[2]); err != nil {
		t.Fatal(err)
	}
	drift("a move to another agent")
	if err := e.st.DeleteMemory(ctx, scopes[1], ids[3]); err != nil {
		t.Fatal(err)
	}
	drift("a delete")
	if _, err := e.conn.Exec(ctx, `update agentmem.memories set expires_at = now() - interval '1 second' where id = $1`, ids[4]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Sweep(ctx, store.SweepParams{BatchSize: 100, Deadline: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	drift("a sweep")
	if words(other) == 0 {
		t.Fatal("the other user's words are not counted")
	}
	if _, err := e.st.ForgetUser(ctx, store.ForgetParams{UserID: user.String(), AllTenants: true}); err != nil {
		t.Fatal(err)
	}
	drift("an erasure")
	if n := words(user); n != 0 {
		t.Errorf("the erased user leaves %d word counts", n)
	}
	if words(other) == 0 {
		t.Error("the erasure took the other user's word counts")
	}
}

// Above the exact limit, BM25 over memories reads the scope's statistics from the word counts
// and scores the memories of the question's rarer words first: a question of a word held by 10
// of a user's 610 memories and one held by all of them is answered from those 10, with the
// exact path's scores (the same statistics, computed from the rows), reading their 10 matches
// rather than the 610.
func TestMemoryBM25FirstPassKeepsTheExactAnswer(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New().String()
	texts, meta := rankFacts(600)
	for i := range 10 {
		texts, meta = append(texts, fmt.Sprintf("User plans a zanzibar trip, note %d", i)), append(meta, `{}`)
	}
	e.seed(t, uuid.MustParse(user), "chat", texts, meta)
	// one expired, not yet swept: the statistics leave it out, as the exact path does
	if _, err := e.conn.Exec(ctx, `update agentmem.memories set expires_at = now() - interval '1 second'
		where user_id = $1 and content = $2`, user, rankFact(3)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.conn.Exec(ctx, `analyze agentmem.memories`); err != nil {
		t.Fatal(err)
	}
	type hit struct {
		id    string
		score float64
	}
	ask := func(exact bool) (hits []hit, read int64) {
		t.Helper()
		err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": user}, func(tx pgx.Tx) error {
			before := rowsRead(t, tx, "agentmem.memories")
			rows, err := tx.Query(ctx, `select id::text, score from agentmem.memory_bm25_hits($1, '', '', '{}', null, null,
				agentmem.query_terms('zanzibar user'), 10, $2)`, user, exact)
			if err != nil {
				return err
			}
			for rows.Next() {
				var h hit
				if err := rows.Scan(&h.id, &h.score); err != nil {
					return err
				}
				hits = append(hits, h)
			}
			if err := rows.Err(); err != nil {
				return err
			}
			read = rowsRead(t, tx, "agentmem.memories") - before
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return hits, read
	}
	want, _ := ask(true)
	got, read := ask(false)
	if len(want) != 10 || len(got) != len(want) {
		t.Fatalf("exact: %d hits, from the counts: %d; want 10 each", len(want), len(got))
	}
	for i := range want {
		if got[i].id != want[i].id || math.Abs(got[i].score-want[i].score) > 1e-9 {
			t.Errorf("hit %d from the counts: %v, exactly: %v", i, got[i], want[i])
		}
	}
	// the rare word's 10 matches (the statistics read the one expired memory through the
	// expiry index); scoring every match reads the 610
	if read > 50 {
		t.Errorf("BM25 from the counts read %d index entries and rows of memories, want at most 50", read)
	}
}
