package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// benchStore opens a store over a fresh database, with one session of n messages.
func benchStore(b *testing.B, n int) (*store.Store, memory.Scope, uuid.UUID) {
	b.Helper()
	st := storetest.New(b, storetest.MaxConns(8)).Store
	sc := storetest.Scope(memory.DefaultAgent)
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
		if _, err := getContext(st, ctx, store.ContextParams{Scope: sc, SessionID: sid, MaxMessages: 12}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitTurn commits a two-message turn (W1's write), one client, with the built-in
// embedder; besides the mean it reports the median and 99th percentile (p50-ms, p99-ms).
func BenchmarkCommitTurn(b *testing.B) {
	st, sc, sid := benchStore(b, 0)
	ctx := context.Background()
	msgs := []memory.NewMessage{
		{Role: memory.RoleUser, Content: "what is the weather in Lisbon this week and should I pack a coat"},
		{Role: memory.RoleAssistant, Content: "mild and sunny, around 21 degrees; a light jacket is enough"},
	}
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if _, _, err := st.CommitTurn(ctx, store.CommitParams{Scope: sc, SessionID: sid, TTL: 3600e9, Messages: msgs}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	at := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(at(0.5), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
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

// benchFact is a fact of a few made-up words: facts of different n share little but their
// frame, so no two are near-duplicates (as the built-in embedder sees them).
func benchFact(n int) string {
	word := func(k int) string {
		const letters = "bcdfghjklmnprstvz"
		const vowels = "aeiou"
		k = k*2654435761 + 12345
		w := make([]byte, 0, 6)
		for i := 0; i < 3; i++ {
			w = append(w, letters[k%len(letters)], vowels[(k/len(letters))%len(vowels)])
			k /= len(letters) * len(vowels)
		}
		return string(w)
	}
	return fmt.Sprintf("User prefers %s %s with %s on %s", word(4*n), word(4*n+1), word(4*n+2), word(4*n+3))
}

// benchFill stores facts first to first+n-1 in sc, 100 a turn.
func benchFill(b *testing.B, st *store.Store, sc memory.Scope, sid uuid.UUID, first, n int) {
	b.Helper()
	for i := first; i < first+n; i += 100 {
		p := store.CommitParams{Scope: sc, SessionID: sid, TTL: 3600e9,
			Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: "remember this"}}}
		for j := i; j < min(i+100, first+n); j++ {
			p.Memories = append(p.Memories, memory.NewMemory{Content: benchFact(j)})
		}
		if _, _, err := st.CommitTurn(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitTurnMemories commits a two-message turn with two facts, one client, to a user
// holding 512 to 768 memories: facts stored again (repeat), or new facts (new: each is compared
// with every memory of the scope, then inserted; the user changes every 256 turns).
func BenchmarkCommitTurnMemories(b *testing.B) {
	msgs := []memory.NewMessage{
		{Role: memory.RoleUser, Content: "I prefer aisle seats and vegetarian meals"},
		{Role: memory.RoleAssistant, Content: "noted: aisle seats, vegetarian meals"},
	}
	const held = 512
	b.Run("repeat", func(b *testing.B) {
		st, sc, sid := benchStore(b, 0)
		benchFill(b, st, sc, sid, 0, held)
		ctx := context.Background()
		i := 0
		b.ResetTimer()
		for b.Loop() {
			p := store.CommitParams{Scope: sc, SessionID: sid, TTL: 3600e9, Messages: msgs, Memories: []memory.NewMemory{
				{Content: benchFact(i % held)}, {Content: benchFact((i + held/2) % held)}}}
			if _, _, err := st.CommitTurn(ctx, p); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("new", func(b *testing.B) {
		st, _, _ := benchStore(b, 0)
		ctx := context.Background()
		var sc memory.Scope
		var sid uuid.UUID
		i := 0
		b.ResetTimer()
		for b.Loop() {
			if i%256 == 0 {
				b.StopTimer()
				sc, sid = storetest.Scope(memory.DefaultAgent), uuid.New()
				benchFill(b, st, sc, sid, 0, held)
				b.StartTimer()
			}
			p := store.CommitParams{Scope: sc, SessionID: sid, TTL: 3600e9, Messages: msgs, Memories: []memory.NewMemory{
				{Content: benchFact(held + 2*i)}, {Content: benchFact(held + 2*i + 1)}}}
			if _, _, err := st.CommitTurn(ctx, p); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
