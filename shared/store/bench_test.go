package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/testdb"
)

// benchStore opens a store over a fresh database, with one session of n messages.
func benchStore(b *testing.B, n int) (*store.Store, memory.Scope, uuid.UUID) {
	b.Helper()
	db := testdb.New(b)
	st, err := store.Open(context.Background(), store.Config{DatabaseURL: db.URL, MaxConns: 8})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(st.Close)
	sc := memory.Scope{UserID: uuid.New(), Agent: memory.DefaultAgent}
	sid := uuid.New()
	for i := 0; i < n; i += 2 {
		_, _, err := st.CommitTurn(context.Background(), store.CommitParams{
			Scope: sc, SessionID: sid, TTL: 3600e9,
			Messages: []memory.NewMessage{
				{Role: memory.RoleUser, Content: fmt.Sprintf("question %d about the weather in Lisbon this week", i)},
				{Role: memory.RoleAssistant, Content: fmt.Sprintf("answer %d: mild and sunny, around 21 degrees", i)},
			},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return st, sc, sid
}

// BenchmarkGetContext reads the last 12 messages of a 200-message session (W2's read).
func BenchmarkGetContext(b *testing.B) {
	st, sc, sid := benchStore(b, 200)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := st.GetContext(ctx, store.ContextParams{Scope: sc, SessionID: sid, MaxMessages: 12}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitTurn commits a two-message turn (W1's write), one client.
func BenchmarkCommitTurn(b *testing.B) {
	st, sc, sid := benchStore(b, 0)
	ctx := context.Background()
	msgs := []memory.NewMessage{
		{Role: memory.RoleUser, Content: "what is the weather in Lisbon this week and should I pack a coat"},
		{Role: memory.RoleAssistant, Content: "mild and sunny, around 21 degrees; a light jacket is enough"},
	}
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := st.CommitTurn(ctx, store.CommitParams{Scope: sc, SessionID: sid, TTL: 3600e9, Messages: msgs}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitTurnParallel commits turns from 8 clients, each to its own session.
func BenchmarkCommitTurnParallel(b *testing.B) {
	st, sc, _ := benchStore(b, 0)
	ctx := context.Background()
	msgs := []memory.NewMessage{
		{Role: memory.RoleUser, Content: "what is the weather in Lisbon this week and should I pack a coat"},
		{Role: memory.RoleAssistant, Content: "mild and sunny, around 21 degrees; a light jacket is enough"},
	}
	b.SetParallelism(4) // 4 x GOMAXPROCS(2) = 8 clients
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		sid := uuid.New()
		for pb.Next() {
			if _, _, err := st.CommitTurn(ctx, store.CommitParams{Scope: sc, SessionID: sid, TTL: 3600e9, Messages: msgs}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
