package store_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// A read URL that names a server not in recovery (here the primary itself) is never read
// from: nothing tells how far it is behind the primary. The store says so in its log, the
// marked reads go to the primary, and the answers to writes still carry growing positions.
// (The reads of a real replica are tested by TestReadReplicas, make test-replica.)
func TestReadURLOfNoReplica(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	var logs lockedBuffer
	st := storetest.Open(t, db, storetest.Config(func(c *store.Config) {
		c.ReadURLs = []string{db.URL}
		c.ReplicaCheckInterval = 10 * time.Millisecond
		c.Log = slog.New(slog.NewJSONHandler(&logs, nil))
	}))
	if st.Replicas() != 1 {
		t.Fatalf("%d replicas", st.Replicas())
	}
	sc := storetest.Scope("default")
	sid := uuid.New()
	var positions []store.Position
	for i := range 2 {
		ctx := store.NoteWrites(context.Background())
		if _, _, err := st.CommitTurn(ctx, store.CommitParams{Scope: sc, SessionID: sid, TTL: storetest.TTL,
			Messages: storetest.Messages(1, "turn")}); err != nil {
			t.Fatal(err)
		}
		p, ok, err := st.WritePosition(ctx)
		if err != nil || !ok || p == 0 {
			t.Fatalf("commit %d: position %v, %v, %v", i, p, ok, err)
		}
		positions = append(positions, p)
	}
	if !(positions[1] > positions[0]) {
		t.Errorf("positions %v do not grow", positions)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "not a replica") {
		if time.Now().After(deadline) {
			t.Fatalf("nothing logged of the read URL: %s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for range 3 {
		ctx := store.NoteWrites(context.Background())
		out, err := st.GetContext(store.MayReadReplica(ctx), store.ContextParams{Scope: sc, SessionID: sid, MaxMessages: 20})
		if err != nil || len(out.Messages) != 2 {
			t.Fatalf("get-context: %d messages, %v", len(out.Messages), err)
		}
		if p, ok, err := st.WritePosition(ctx); ok || err != nil {
			t.Errorf("a read gave a position: %v, %v", p, err)
		}
	}
	if s := st.ReadStats(); s.Replica != 0 || s.Primary != 3 {
		t.Errorf("read stats %+v: want every read from the primary", s)
	}
	if strings.Count(logs.String(), "read replica left out") != 1 {
		t.Errorf("the log says it more than once, or never: %s", logs.String())
	}
}

// Without read URLs no answer carries a position: there is no replica to route by it.
func TestNoPositionWithoutReplicas(t *testing.T) {
	t.Parallel()
	e := storetest.New(t)
	ctx := store.NoteWrites(context.Background())
	storetest.Commit(t, e.Store, storetest.Scope("default"), uuid.New(), storetest.Messages(1, "turn"))
	if _, _, err := e.Store.CommitTurn(ctx, store.CommitParams{Scope: storetest.Scope("default"), SessionID: uuid.New(),
		TTL: storetest.TTL, Messages: storetest.Messages(1, "turn")}); err != nil {
		t.Fatal(err)
	}
	if p, ok, err := e.Store.WritePosition(ctx); ok || err != nil {
		t.Errorf("position %v, %v without replicas", p, err)
	}
}

// lockedBuffer is a log destination safe for concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
