package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/embedding/embeddingtest"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// fakeModel is the model the fake provider serves; its vectors are the Hash embedder's, so
// similar texts are near.
const fakeModel = "fake-embed-384"

// fakeProvider is the test API of embeddingtest, serving fakeModel, whose requests can be made
// slow: a request holding a given text waits until released.
type fakeProvider struct {
	*embeddingtest.Server

	mu       sync.Mutex
	holdText string
	arrived  chan struct{} // closed when a request holding holdText arrives
	release  chan struct{} // closed to let it go on
}

// hold makes the requests that hold text wait until release is called; arrived is closed
// when the first such request arrives.
func (f *fakeProvider) hold(t *testing.T, text string) (arrived <-chan struct{}, release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holdText, f.arrived, f.release = text, make(chan struct{}), make(chan struct{})
	var once sync.Once
	rel := f.release
	release = func() { once.Do(func() { close(rel) }) }
	t.Cleanup(release)
	return f.arrived, release
}

// wait holds a request that holds the hold text until it is released.
func (f *fakeProvider) wait(r *http.Request, input []string) {
	f.mu.Lock()
	text, arrived, release := f.holdText, f.arrived, f.release
	f.mu.Unlock()
	if text == "" || !slices.Contains(input, text) {
		return
	}
	select {
	case <-arrived:
	default:
		close(arrived)
	}
	select {
	case <-release:
	case <-r.Context().Done():
	}
}

func newFakeProvider(t *testing.T) *fakeProvider {
	t.Helper()
	f := &fakeProvider{Server: embeddingtest.New(t, fakeModel, 384)}
	f.Before = f.wait
	return f
}

// embedEnv is a store over a fresh database whose embedder is the fake provider.
type embedEnv struct {
	t        *testing.T
	db       testdb.DB
	st       *store.Store
	provider *fakeProvider
}

func newEmbedEnv(t *testing.T) *embedEnv {
	t.Helper()
	p := newFakeProvider(t)
	emb, err := embedding.NewOpenAI(embedding.OpenAIConfig{BaseURL: p.URL, Model: fakeModel, Dimensions: 384,
		Retry: embedding.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, Cooldown: -1}})
	if err != nil {
		t.Fatal(err)
	}
	db := testdb.New(t)
	return &embedEnv{t: t, db: db, st: openWith(t, db.URL, emb), provider: p}
}

// admin runs fn on a superuser connection, outside row-level security.
func (e *embedEnv) admin(fn func(conn *pgx.Conn)) {
	e.t.Helper()
	conn, err := pgx.Connect(context.Background(), e.db.URL)
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	fn(conn)
}

// vectorState is what a row holds: whether it has a vector, and its model ("" for none).
type vectorState struct {
	HasVector bool
	Model     string
}

func (e *embedEnv) memoryState(id uuid.UUID) vectorState {
	e.t.Helper()
	var s vectorState
	e.admin(func(conn *pgx.Conn) {
		if err := conn.QueryRow(context.Background(), `select embedding is not null, coalesce(embedding_model, '')
			from agentmem.memories where id = $1`, id).Scan(&s.HasVector, &s.Model); err != nil {
			e.t.Fatal(err)
		}
	})
	return s
}

func (e *embedEnv) commit(sc memory.Scope, facts ...string) []uuid.UUID {
	e.t.Helper()
	var mems []memory.NewMemory
	for _, f := range facts {
		mems = append(mems, memory.NewMemory{Content: f})
	}
	res, _, err := commitTurn(e.st, context.Background(), store.CommitParams{Scope: sc, SessionID: uuid.New(),
		TTL: time.Hour, Memories: mems, Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: "hi"}}})
	if err != nil {
		e.t.Fatalf("commit while the provider is down=%v: %v", e.provider.Down.Load(), err)
	}
	ids := make([]uuid.UUID, len(res.Memories))
	for i, m := range res.Memories {
		ids[i] = m.ID
	}
	return ids
}

func hitIDs(hits []memory.Hit) []uuid.UUID {
	var ids []uuid.UUID
	for _, h := range hits {
		ids = append(ids, uuid.MustParse(h.ID))
	}
	return ids
}

// With the provider down, a turn's memories are stored without vectors, full-text recall and
// get-context still find them, vector recall answers unavailable; EmbedPending then embeds them
// with the configured model, after which vector recall finds them.
func TestMemoriesOutliveAnEmbeddingOutage(t *testing.T) {
	t.Parallel()
	e := newEmbedEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)

	e.provider.Down.Store(true)
	ids := e.commit(sc, "User prefers metric units.", "Favourite colour is green")
	if len(ids) != 2 {
		t.Fatalf("stored %d memories, want 2", len(ids))
	}
	for _, id := range ids {
		if s := e.memoryState(id); s != (vectorState{}) {
			t.Errorf("memory stored during the outage: %+v, want no vector and no model", s)
		}
	}

	hits, err := recall(e.st, ctx, store.RecallParams{Scope: sc, Query: "metric units", K: 5})
	if err != nil {
		t.Fatalf("hybrid recall during the outage: %v", err)
	}
	if len(hits) != 1 || hits[0].ID != ids[0].String() {
		t.Errorf("hybrid recall during the outage found %v, want %v", hitIDs(hits), ids[:1])
	}
	got, err := getContext(e.st, ctx, store.ContextParams{Scope: sc, SessionID: uuid.New(), MaxMessages: 10,
		Query: "green colour", RecallK: 5})
	if err != nil {
		t.Fatalf("get-context during the outage: %v", err)
	}
	if len(got.Memories) != 1 || got.Memories[0].ID != ids[1].String() {
		t.Errorf("get-context during the outage recalled %v, want %v", hitIDs(got.Memories), ids[1:])
	}
	_, err = recall(e.st, ctx, store.RecallParams{Scope: sc, Query: "metric units", K: 5, Mode: memory.ModeVector})
	if app.Problem(err).Code != apierror.Unavailable {
		// The store names no wait: HTTP's policy gives an unavailable answer its Retry-After.
		t.Errorf("vector recall during the outage: %v, want unavailable", err)
	}

	// Still down: the job embeds nothing, says so, and changes nothing.
	res, err := embedPending(e.st, ctx, 100)
	if !errors.Is(err, embedding.ErrUnavailable) || !res.More || res.Memories != 0 {
		t.Errorf("EmbedPending while down: %+v, %v", res, err)
	}

	e.provider.Down.Store(false)
	res, err = embedPending(e.st, ctx, 100)
	if err != nil || res.Memories != 2 || res.More || res.Failed != 0 {
		t.Fatalf("EmbedPending: %+v, %v; want 2 memories embedded", res, err)
	}
	for _, id := range ids {
		if s := e.memoryState(id); s != (vectorState{true, fakeModel}) {
			t.Errorf("memory after EmbedPending: %+v", s)
		}
	}
	hits, err = recall(e.st, ctx, store.RecallParams{Scope: sc, Query: "which units does the user like", K: 1, Mode: memory.ModeVector})
	if err != nil || len(hits) != 1 || hits[0].ID != ids[0].String() {
		t.Errorf("vector recall after EmbedPending: %v, %v", hitIDs(hits), err)
	}
	// Nothing is left: a second run finds nothing and asks no more of the provider.
	before := e.provider.Requests.Load()
	if res, err := embedPending(e.st, ctx, 100); err != nil || res != (memory.EmbedPendingResult{}) {
		t.Errorf("second EmbedPending: %+v, %v", res, err)
	}
	if e.provider.Requests.Load() != before {
		t.Error("EmbedPending with nothing pending called the provider")
	}
}

// A row embedded by another model is neither ranked against the configured model's query
// vectors nor left so: EmbedPending embeds it again, and records the model.
func TestVectorsOfAnotherModelAreNotRanked(t *testing.T) {
	t.Parallel()
	e := newEmbedEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	ids := e.commit(sc, "User prefers metric units.", "User lives in Lisbon", "user has a cat")
	if s := e.memoryState(ids[0]); s != (vectorState{true, fakeModel}) {
		t.Fatalf("memory stored with the provider up: %+v", s)
	}
	// The first memory holds a vector of another model: the right direction, the wrong model.
	e.admin(func(conn *pgx.Conn) {
		if _, err := conn.Exec(ctx, `update agentmem.memories set embedding_model = 'old-model' where id = $1`, ids[0]); err != nil {
			t.Fatal(err)
		}
	})
	// MinScore -1 keeps every ranked row, however far.
	hits, err := recall(e.st, ctx, store.RecallParams{Scope: sc, Query: "metric units", K: 5, Mode: memory.ModeVector, MinScore: -1})
	if err != nil || slices.Contains(hitIDs(hits), ids[0]) || !slices.Contains(hitIDs(hits), ids[1]) {
		t.Errorf("vector recall ranked %v (%v); want the other model's row left out", hitIDs(hits), err)
	}
	res, err := embedPending(e.st, ctx, 100)
	if err != nil || res.Memories != 1 {
		t.Fatalf("EmbedPending: %+v, %v; want the other model's row embedded again", res, err)
	}
	if s := e.memoryState(ids[0]); s != (vectorState{true, fakeModel}) {
		t.Errorf("after EmbedPending: %+v", s)
	}
	hits, err = recall(e.st, ctx, store.RecallParams{Scope: sc, Query: "metric units", K: 1, Mode: memory.ModeVector})
	if err != nil || len(hits) != 1 || hits[0].ID != ids[0].String() {
		t.Errorf("vector recall after EmbedPending: %v, %v", hitIDs(hits), err)
	}
}

// Storing a fact again during an outage keeps the vector of its unchanged text (the same text,
// or a worse-formed one the memory does not take); a better-formed text, or updating a memory's
// text, during an outage drops the stale vector, and the row waits for EmbedPending.
func TestRewritesDuringAnOutage(t *testing.T) {
	t.Parallel()
	e := newEmbedEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	ids := e.commit(sc, "User prefers metric units.", "User lives in Lisbon", "user has a cat")

	e.provider.Down.Store(true)
	again := e.commit(sc, "User prefers metric units.")
	if again[0] != ids[0] {
		t.Fatalf("the same fact got a new row")
	}
	if s := e.memoryState(ids[0]); s != (vectorState{true, fakeModel}) {
		t.Errorf("a fact stored again unchanged during the outage: %+v, want its vector kept", s)
	}
	// Same fact (same key) in worse form: the memory keeps its text, and so its vector.
	e.commit(sc, "user prefers METRIC units")
	if s := e.memoryState(ids[0]); s != (vectorState{true, fakeModel}) {
		t.Errorf("a fact stored again in worse form during the outage: %+v, want its vector kept", s)
	}
	// Same fact better formed: the text changes, and the old vector no longer describes it.
	if again := e.commit(sc, "User has a cat."); again[0] != ids[2] {
		t.Fatalf("the same fact better formed got a new row")
	}
	if s := e.memoryState(ids[2]); s != (vectorState{}) {
		t.Errorf("a fact stored again with other text during the outage: %+v, want it pending", s)
	}
	text := "User lives in Porto"
	item, err := updateMemory(e.st, ctx, store.UpdateMemoryParams{Scope: sc, ID: ids[1], Content: &text})
	if err != nil || item.Content != text {
		t.Fatalf("update during the outage: %+v, %v", item, err)
	}
	if s := e.memoryState(ids[1]); s != (vectorState{}) {
		t.Errorf("memory updated during the outage: %+v, want it pending", s)
	}
	meta := json.RawMessage(`{"kind":"place"}`)
	if _, err := updateMemory(e.st, ctx, store.UpdateMemoryParams{Scope: sc, ID: ids[1], Metadata: meta}); err != nil {
		t.Fatal(err)
	}
	e.provider.Down.Store(false)
	if res, err := embedPending(e.st, ctx, 100); err != nil || res.Memories != 2 {
		t.Fatalf("EmbedPending: %+v, %v", res, err)
	}
	hits, err := recall(e.st, ctx, store.RecallParams{Scope: sc, Query: "Porto", K: 1, Mode: memory.ModeVector})
	if err != nil || len(hits) != 1 || hits[0].ID != ids[1].String() {
		t.Errorf("vector recall of the updated text: %v, %v", hitIDs(hits), err)
	}
	// A metadata-only update keeps the vector.
	if _, err := updateMemory(e.st, ctx, store.UpdateMemoryParams{Scope: sc, ID: ids[1], Metadata: meta}); err != nil {
		t.Fatal(err)
	}
	if s := e.memoryState(ids[1]); s != (vectorState{true, fakeModel}) {
		t.Errorf("after a metadata update: %+v", s)
	}
}

// Knowledge ingested during an outage is stored and found by text; EmbedPending embeds it.
func TestKnowledgeOutlivesAnEmbeddingOutage(t *testing.T) {
	t.Parallel()
	e := newEmbedEnv(t)
	ctx := context.Background()
	e.provider.Down.Store(true)
	res, err := ingestKnowledge(e.st, ctx, store.IngestParams{TenantID: "acme", Source: "handbook.md",
		Chunks: []string{"Refunds are paid within 14 days.", "Support answers on weekdays."}})
	if err != nil || res.Chunks != 2 {
		t.Fatalf("ingest during the outage: %+v, %v", res, err)
	}
	hits, err := searchKnowledge(e.st, ctx, store.KnowledgeSearchParams{TenantID: "acme", Query: "refunds", K: 5})
	if err != nil || len(hits) != 1 || hits[0].ChunkIndex != 0 {
		t.Errorf("hybrid search during the outage: %+v, %v", hits, err)
	}
	if _, err := searchKnowledge(e.st, ctx, store.KnowledgeSearchParams{TenantID: "acme", Query: "refunds", K: 5,
		Mode: memory.ModeVector}); !errors.Is(err, embedding.ErrUnavailable) {
		t.Errorf("vector search during the outage: %v, want unavailable", err)
	}
	e.provider.Down.Store(false)
	done, err := embedPending(e.st, ctx, 100)
	if err != nil || done.KnowledgeChunks != 2 {
		t.Fatalf("EmbedPending: %+v, %v", done, err)
	}
	var models []string
	e.admin(func(conn *pgx.Conn) {
		rows, _ := conn.Query(ctx, `select coalesce(embedding_model, '') from agentmem.knowledge_chunks
			where embedding is not null order by chunk_index`)
		models, err = pgx.CollectRows(rows, pgx.RowTo[string])
	})
	if err != nil || !slices.Equal(models, []string{fakeModel, fakeModel}) {
		t.Errorf("chunk models %v, %v", models, err)
	}
	hits, err = searchKnowledge(e.st, ctx, store.KnowledgeSearchParams{TenantID: "acme", Query: "refund payment", K: 1,
		Mode: memory.ModeVector})
	if err != nil || len(hits) != 1 || hits[0].ChunkIndex != 0 {
		t.Errorf("vector search after EmbedPending: %+v, %v", hits, err)
	}
}

// A text the provider refuses for good stays pending without holding back the rest, and the
// limit bounds a run.
func TestEmbedPendingSkipsRefusedTextsAndHonoursTheLimit(t *testing.T) {
	t.Parallel()
	e := newEmbedEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	e.provider.Down.Store(true)
	facts := []string{"fact one", "fact two", "poison fact", "fact four", "fact five"}
	ids := e.commit(sc, facts...)
	e.provider.Down.Store(false)
	e.provider.Refuse("poison fact")

	res, err := embedPending(e.st, ctx, 2)
	if err != nil || res.Memories+res.Failed != 2 || !res.More {
		t.Fatalf("EmbedPending(2): %+v, %v", res, err)
	}
	res, err = embedPending(e.st, ctx, 100)
	if err != nil || res.Failed != 1 || res.Memories+res.Failed != 3 && res.Memories+res.Failed != 4 {
		t.Fatalf("EmbedPending(100): %+v, %v", res, err)
	}
	for i, id := range ids {
		want := vectorState{true, fakeModel}
		if facts[i] == "poison fact" {
			want = vectorState{}
		}
		if s := e.memoryState(id); s != want {
			t.Errorf("%q: %+v, want %+v", facts[i], s, want)
		}
	}
}

// Two runs at once store each row's vector once: a run stores a vector only where the row still
// has none of the configured model, so the counts of the two add up to the rows pending.
func TestConcurrentEmbedPendingRunsCountEachRowOnce(t *testing.T) {
	t.Parallel()
	e := newEmbedEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	e.provider.Down.Store(true)
	var facts []string
	for i := range 150 {
		facts = append(facts, "fact number "+uuid.NewString()[:8]+" "+string(rune('a'+i%26)))
	}
	e.commit(sc, facts...)
	e.provider.Down.Store(false)
	results := make(chan memory.EmbedPendingResult, 2)
	for range 2 {
		go func() {
			res, err := embedPending(e.st, ctx, 1000)
			if err != nil {
				t.Error(err)
			}
			results <- res
		}()
	}
	a, b := <-results, <-results
	if a.Memories+b.Memories != 150 {
		t.Errorf("runs embedded %d and %d memories, want 150 in all", a.Memories, b.Memories)
	}
}

// EmbedPending holds no lock while the provider works: a commit that stores a pending fact again
// goes through at once, however slow the provider. A vector is stored only where the row still
// waits for it with the text that was embedded: a row embedded meanwhile keeps its vector, and
// a row whose text changed meanwhile is not given the vector of its old text.
func TestEmbedPendingHoldsNoLockWhileTheProviderWorks(t *testing.T) {
	t.Parallel()
	e := newEmbedEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	const same, changed, gate = "User prefers metric units.", "User lives in Lisbon.", "User drinks green tea."
	e.provider.Down.Store(true)
	ids := e.commit(sc, same, changed, gate)
	e.provider.Down.Store(false)

	arrived, release := e.provider.hold(t, gate) // the run's batch holds all three texts
	type result struct {
		res memory.EmbedPendingResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := embedPending(e.st, ctx, 100)
		done <- result{res, err}
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("EmbedPending never asked the provider")
	}

	committed := make(chan error, 1)
	go func() {
		_, _, err := commitTurn(e.st, ctx, store.CommitParams{Scope: sc, SessionID: uuid.New(), TTL: time.Hour,
			Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: "hi"}},
			Memories: []memory.NewMemory{{Content: same}, {Content: "user lives in LISBON"}}})
		committed <- err
	}()
	select {
	case err := <-committed:
		if err != nil {
			t.Fatalf("commit while EmbedPending waits for the provider: %v", err)
		}
	case <-time.After(5 * time.Second):
		release()
		t.Fatal("a commit of pending facts waited for EmbedPending's provider call")
	}
	release()
	r := <-done
	if r.err != nil || r.res.Memories != 1 || r.res.More {
		t.Fatalf("EmbedPending: %+v, %v; want only the row left unchanged meanwhile embedded", r.res, r.err)
	}
	for i, text := range []string{same, "user lives in LISBON", gate} {
		var near bool
		e.admin(func(conn *pgx.Conn) {
			if err := conn.QueryRow(ctx, `select embedding operator(extensions.<=>) $2::extensions.vector < 1e-6
				and embedding_model = $3 from agentmem.memories where id = $1`, ids[i], knVec(text), fakeModel).Scan(&near); err != nil {
				t.Fatal(err)
			}
		})
		if !near {
			t.Errorf("memory %q does not hold the vector of its text", text)
		}
	}
}

// On tables partitioned by user, a model's HNSW indexes are built without blocking writes: on
// the parent only, then concurrently on each partition, each attached to the parent's, which is
// then valid; a second run builds nothing, and a plain build (within a transaction) works too.
func TestEmbeddingIndexesOnPartitionedTables(t *testing.T) {
	t.Parallel()
	db := testdb.NewPartitioned(t, 4)
	ctx := t.Context()
	conn := storetest.Admin(t, db.URL)
	for _, c := range []struct {
		model        store.VectorModel
		concurrently bool
	}{{store.VectorModel{Name: "a-model", Dims: 8}, true}, {store.VectorModel{Name: "another-model", Dims: 8}, false}} {
		stmts, err := store.EnsureEmbeddingIndexes(ctx, conn, c.model, c.concurrently)
		if err != nil {
			t.Fatalf("%s: %v", c.model.Name, err)
		}
		concurrent := 0
		for _, s := range stmts {
			if strings.Contains(s, "concurrently") {
				concurrent++
			}
		}
		// knowledge_chunks is not a user's table: one build of its own; memories and messages: one
		// per partition
		if want := map[bool]int{true: 1 + 2*4, false: 0}[c.concurrently]; concurrent != want {
			t.Errorf("%s: %d concurrent builds, want %d:\n%s", c.model.Name, concurrent, want, strings.Join(stmts, "\n"))
		}
		var parents, valid, parts int
		if err := conn.QueryRow(ctx, `select count(*), count(*) filter (where i.indisvalid),
			  sum((select count(*) from pg_inherits h where h.inhparent = i.indexrelid))
			from pg_index i join pg_class c on c.oid = i.indexrelid
			where c.relname like '%\_embedding\_%\_idx' and pg_get_indexdef(i.indexrelid) like '%' || $1 || '%'`,
			c.model.Name).Scan(&parents, &valid, &parts); err != nil {
			t.Fatal(err)
		}
		if parents != 3 || valid != 3 || parts != 8 {
			t.Errorf("%s: %d indexes on the tables (%d valid) with %d on their partitions, want 3, 3 and 8",
				c.model.Name, parents, valid, parts)
		}
		again, err := store.EnsureEmbeddingIndexes(ctx, conn, c.model, c.concurrently)
		if err != nil || len(again) != len(stmts) {
			t.Fatalf("%s again: %d statements, %v", c.model.Name, len(again), err)
		}
		var n int
		if err := conn.QueryRow(ctx, `select count(*) from pg_class where relname like '%\_embedding\_%' and relkind = 'i'
			and pg_get_indexdef(oid) like '%' || $1 || '%'`, c.model.Name).Scan(&n); err != nil || n != 1+8 {
			t.Errorf("%s: %d indexes with pages after a second run (%v), want 9", c.model.Name, n, err)
		}
	}
}
