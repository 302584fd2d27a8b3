package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// countingEmbedder is the built-in embedder, counting its calls.
type countingEmbedder struct {
	embedding.Hash
	calls atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls.Add(1)
	return c.Hash.Embed(ctx, texts)
}

func commitEnv(t *testing.T) (*store.Store, *countingEmbedder, func(sql string, args ...any)) {
	t.Helper()
	db := testdb.New(t)
	emb := &countingEmbedder{}
	st := openWith(t, db.URL, emb, storetest.MaxConns(8))
	exec := func(sql string, args ...any) {
		t.Helper()
		storetest.Exec(t, db.URL, sql, args...)
	}
	return st, emb, exec
}

func turn(sc memory.Scope, sid uuid.UUID, facts ...string) store.CommitParams {
	p := store.CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour,
		Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: "noted"}}}
	for _, f := range facts {
		p.Memories = append(p.Memories, memory.NewMemory{Content: f, Metadata: json.RawMessage(`{"n":1}`)})
	}
	return p
}

// Two turns storing the same facts in opposite orders never deadlock: the facts are written in
// one order whatever the request's.
func TestConcurrentTurnsWithTheSameFactsDoNotDeadlock(t *testing.T) {
	t.Parallel()
	st, _, _ := commitEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	facts := []string{"likes tea", "lives in Porto", "has a cat", "works nights", "speaks Basque", "plays chess"}
	reversed := make([]string, len(facts))
	for i, f := range facts {
		reversed[len(facts)-1-i] = f
	}
	for round := 0; round < 40; round++ {
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for _, order := range [][]string{facts, reversed} {
			wg.Add(1)
			go func(order []string) {
				defer wg.Done()
				_, _, err := commitTurn(st, ctx, turn(sc, uuid.New(), order...))
				errs <- err
			}(order)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}

// An expired fact stored again starts afresh: a new id, and none of the expired metadata.
func TestAnExpiredFactStoredAgainStartsAfresh(t *testing.T) {
	t.Parallel()
	st, _, exec := commitEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	p := turn(sc, uuid.New(), "User lives in Berlin")
	p.Memories[0].Metadata = json.RawMessage(`{"address":"Example Street 1"}`)
	first, _, err := commitTurn(st, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	exec(`update agentmem.memories set expires_at = now() - interval '1 second' where id = $1`, first.Memories[0].ID)

	p = turn(sc, uuid.New(), "user lives in berlin.")
	p.Memories[0].Metadata = json.RawMessage(`{"kind":"fact"}`)
	again, _, err := commitTurn(st, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if again.Memories[0].ID == first.Memories[0].ID {
		t.Error("the expired fact's id came back")
	}
	hits, err := recall(st, ctx, store.RecallParams{Scope: sc, Query: "Berlin", K: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || string(hits[0].Metadata) != `{"kind": "fact"}` {
		t.Errorf("recall after re-storing: %+v", hits)
	}

	// A live fact stored again keeps its id and merges its metadata.
	p = turn(sc, uuid.New(), "User lives in Berlin")
	p.Memories[0].Metadata = json.RawMessage(`{"since":2020}`)
	live, _, err := commitTurn(st, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if live.Memories[0].ID != again.Memories[0].ID {
		t.Error("a live fact stored again got a new id")
	}
}

// A client message id whose message expired (not yet swept) is stored anew, not answered
// with the expired message's place.
func TestAClientIDOfAnExpiredMessageIsStoredAnew(t *testing.T) {
	t.Parallel()
	st, _, exec := commitEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	sid, mid := uuid.New(), uuid.NewString()
	p := store.CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour,
		Messages: []memory.NewMessage{{ID: &mid, Role: memory.RoleUser, Content: "first"}}}
	first, _, err := commitTurn(st, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	exec(`update agentmem.messages set expires_at = now() - interval '1 second' where session_id = $1`, sid)
	p.Messages[0].Content = "again"
	again, _, err := commitTurn(st, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if again.Messages[0].Seq <= first.Messages[0].Seq {
		t.Errorf("seq %d, want a new one after %d", again.Messages[0].Seq, first.Messages[0].Seq)
	}
	c, err := getContext(st, ctx, store.ContextParams{Scope: sc, SessionID: sid, MaxMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 1 || c.Messages[0].Content != "again" {
		t.Errorf("window after re-storing: %+v", c.Messages)
	}
}

// A retried commit with memories is answered from its record without embedding again; the key
// with another request conflicts; after the window it is a new request.
func TestIdempotentRetriesSkipEmbeddingAndKeysExpire(t *testing.T) {
	t.Parallel()
	st, emb, exec := commitEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	p := turn(sc, uuid.New(), "prefers window seats")
	p.Idempotency = &store.Idempotency{CallerRole: "authenticated", Function: "commit-turn", Key: "k1", RequestHash: []byte("h1")}

	first, replayed, err := commitTurn(st, ctx, p)
	if err != nil || replayed {
		t.Fatalf("first: replayed %v, %v", replayed, err)
	}
	calls := emb.calls.Load()
	second, replayed, err := commitTurn(st, ctx, p)
	if err != nil || !replayed || second.Messages[0].ID != first.Messages[0].ID {
		t.Fatalf("retry: replayed %v, %+v, %v", replayed, second, err)
	}
	if emb.calls.Load() != calls {
		t.Error("the retry embedded its memories again")
	}
	other := p
	other.Idempotency = &store.Idempotency{CallerRole: "authenticated", Function: "commit-turn", Key: "k1", RequestHash: []byte("h2")}
	if _, _, err := commitTurn(st, ctx, other); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("same key, other request: %v", err)
	}

	exec(`update agentmem.idempotency_keys set expires_at = now() - interval '1 second' where user_id = $1`, sc.UserID)
	third, replayed, err := commitTurn(st, ctx, other)
	if err != nil || replayed || third.Messages[0].ID == first.Messages[0].ID {
		t.Fatalf("after the window: replayed %v, %+v, %v", replayed, third, err)
	}
}
