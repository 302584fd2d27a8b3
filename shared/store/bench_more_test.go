package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// The benchmarks below time the calls of one statement or a few, whose cost is mostly round
// trips: run them next to the figures of BenchmarkGetContext.

// BenchmarkListSessions reads the first page (20) of a user's 25 sessions of 10 messages each.
func BenchmarkListSessions(b *testing.B) {
	st, sc, _ := benchStore(b, 0)
	ctx := context.Background()
	for i := range 25 {
		for j := 0; j < 10; j += 2 {
			_, _, err := st.CommitTurn(ctx, store.CommitParams{
				Scope: sc, SessionID: uuid.New(), TTL: 3600e9,
				Messages: []memory.NewMessage{
					{Role: memory.RoleUser, Content: fmt.Sprintf("question %d.%d about the tides", i, j)},
					{Role: memory.RoleAssistant, Content: fmt.Sprintf("answer %d.%d: high tide at noon", i, j)},
				},
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		p, err := st.ListSessions(ctx, store.ListSessionsParams{Scope: sc, Limit: 20})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Sessions) != 20 {
			b.Fatalf("%d sessions", len(p.Sessions))
		}
	}
}

// BenchmarkSessionHistory reads the newest page (50) of a 200-message session and its total.
func BenchmarkSessionHistory(b *testing.B) {
	st, sc, sid := benchStore(b, 200)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		p, err := st.SessionHistory(ctx, store.HistoryParams{Scope: sc, SessionID: sid, Newest: true, Limit: 50})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Messages) != 50 || p.Total != 200 {
			b.Fatalf("%d messages of %d", len(p.Messages), p.Total)
		}
	}
}

// BenchmarkGetUserMemory reads one key of a user's key/value memory.
func BenchmarkGetUserMemory(b *testing.B) {
	st, sc, _ := benchStore(b, 0)
	ctx := context.Background()
	_, _, err := st.SetUserMemory(ctx, store.SetUserMemoryParams{Scope: sc, Key: "profile",
		Value: json.RawMessage(`{"name":"Ada","city":"Lisbon"}`)})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := st.GetUserMemory(ctx, sc, "profile"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEditNotes appends to and then deletes a section of an agent's notes, one edit per
// iteration, so the notes stay small.
func BenchmarkEditNotes(b *testing.B) {
	st, sc, _ := benchStore(b, 0)
	ctx := context.Background()
	edits := []memory.NotesEdit{
		{Op: memory.NotesReplaceSection, Section: "Travel", Content: "Prefers trains; flies to Lisbon in May."},
		{Op: memory.NotesDeleteSection, Section: "Travel"},
	}
	i := 0
	b.ResetTimer()
	for b.Loop() {
		if _, err := st.EditNotes(ctx, store.EditNotesParams{Scope: sc, Edit: edits[i%2]}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkSearchKnowledge searches a 50-chunk document as a user, hybrid.
func BenchmarkSearchKnowledge(b *testing.B) {
	st, sc, _ := benchStore(b, 0)
	ctx := context.Background()
	chunks := make([]string, 50)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("Section %d: the ferry to the island leaves at %d:00 from pier %d.", i, 6+i%12, i%7)
	}
	if _, err := ingestKnowledge(st, ctx, store.IngestParams{Source: "ferries.md", Chunks: chunks}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		hits, err := searchKnowledge(st, ctx, store.KnowledgeSearchParams{UserID: sc.UserID, Query: "ferry from pier 3", K: 5})
		if err != nil {
			b.Fatal(err)
		}
		if len(hits) != 5 {
			b.Fatalf("%d hits", len(hits))
		}
	}
}

// BenchmarkRecallSharedMemories recalls (hybrid, k 10) for a user of 3,000 memories, more than
// the exact limit (the index path), without the shared memories (own), with them when none is
// stored (shared-none), and with 500 stored (shared-500): what including the tenant's shared
// memories costs.
func BenchmarkRecallSharedMemories(b *testing.B) {
	e := storetest.New(b, storetest.MaxConns(2))
	conn := e.Admin(b)
	user := uuid.NewString()
	texts := func(prefix string, n int) ([]string, []string) {
		t, m := make([]string, n), make([]string, n)
		for i := range t {
			t[i], m[i] = prefix+" "+benchFact(i), "{}"
		}
		return t, m
	}
	own, md := texts("User", 3000)
	storetest.SeedMemories(b, conn, user, memory.DefaultAgent, own, md)
	sc := memory.Scope{UserID: user, Agent: memory.DefaultAgent}
	f := strings.Fields(benchFact(7)) // User prefers w1 w2 with w3 on w4: the query holds its own words
	query := strings.Join([]string{f[2], f[3], f[5], f[7]}, " ")
	v := storetest.HashLiteral(query)
	run := func(b *testing.B, shared bool) {
		ctx := context.Background()
		for b.Loop() {
			hits, err := e.Store.Recall(ctx, store.RecallParams{Scope: sc, Query: query, K: 10, QueryVector: &v,
				Model: embedding.Hash{}.Model(), IncludeShared: shared})
			if err != nil || len(hits) == 0 {
				b.Fatalf("recall: %d hits, %v", len(hits), err)
			}
		}
	}
	for range 20 { // the pages and the connection's plans, before any is timed
		if _, err := e.Store.Recall(context.Background(), store.RecallParams{Scope: sc, Query: query, K: 10, QueryVector: &v,
			Model: embedding.Hash{}.Model(), IncludeShared: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("own", func(b *testing.B) { run(b, false) })
	b.Run("shared-none", func(b *testing.B) { run(b, true) })
	shared, smd := texts("Everyone", 500)
	storetest.SeedMemories(b, conn, memory.SharedUserID, "", shared, smd)
	if _, err := conn.Exec(context.Background(), "analyze agentmem.memories"); err != nil {
		b.Fatal(err)
	}
	b.Run("shared-500", func(b *testing.B) { run(b, true) })
}
