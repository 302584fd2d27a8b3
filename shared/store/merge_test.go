package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// fixedEmbedder embeds each text as the vector the test gave it, so that the similarity of two
// facts is exactly what the test says. A text it was given no vector for is a bug of the test.
type fixedEmbedder struct {
	model string
	vecs  map[string][]float32
	// down makes every call fail, as a provider that is unavailable does.
	down atomic.Bool
}

func (f *fixedEmbedder) Model() string { return f.model }

func (f *fixedEmbedder) Dimensions() int {
	for _, v := range f.vecs {
		return len(v)
	}
	return 0
}

func (f *fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if f.down.Load() {
		return nil, fmt.Errorf("%w: test provider down", embedding.ErrUnavailable)
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := f.vecs[t]
		if !ok {
			panic(fmt.Sprintf("fixedEmbedder: no vector for %q", t))
		}
		out[i] = v
	}
	return out, nil
}

// near is a unit vector of 4 dimensions whose cosine similarity with (1, 0, 0, 0) is sim.
func near(sim float64) []float32 {
	return []float32{float32(sim), float32(math.Sqrt(1 - sim*sim)), 0, 0}
}

// The facts of these tests and their vectors: base is (1, 0, 0, 0).
const (
	lisbon     = "User lives in Lisbon"
	lisbonHome = "User lives in Lisbon now"            // 0.97 to lisbon
	lisbonCity = "The user lives in Lisbon"            // 0.98 to lisbon
	lisbon90   = "User lives in Lisbon most weeks"     // 0.90 to lisbon
	lisbon94   = "User lives in Lisbon often"          // 0.94 to lisbon
	owes       = "Alice owes Bob ten euros"            // (0, 0, 0, 1)
	owesBack   = "Bob owes Alice ten euros"            // the same vector: the same words
	reworded   = "Lisbon is where the user has a home" // 0.99 to lisbon, other words and order
	cat        = "User has a cat"                      // orthogonal to lisbon
	wordless   = "..."                                 // the zero vector, as a text without words
	wordless2  = "--"                                  // the zero vector too
	noted      = "noted"                               // the message of every turn (messages are embedded too)
	mergeModel = "merge-test-4"
)

func mergeVectors() map[string][]float32 {
	return map[string][]float32{
		lisbon:     near(1),
		lisbonHome: near(0.97),
		lisbonCity: near(0.98),
		lisbon90:   near(0.90),
		lisbon94:   near(0.94),
		cat:        {0, 0, 1, 0},
		owes:       {0, 0, 0, 1},
		owesBack:   {0, 0, 0, 1},
		reworded:   near(0.99),
		wordless:   {0, 0, 0, 0},
		wordless2:  {0, 0, 0, 0},
		noted:      {0, 1, 0, 0},
	}
}

// mergeEnv is one database, stores over it with the embedder and threshold a test chooses, and
// a superuser connection to look at the rows.
type mergeEnv struct {
	t   *testing.T
	url string
	db  *pgx.Conn
}

func newMergeEnv(t *testing.T) *mergeEnv {
	t.Helper()
	db := testdb.New(t)
	return &mergeEnv{t: t, url: db.URL, db: storetest.Admin(t, db.URL)}
}

// open opens a store embedding with emb (fixedEmbedder over mergeVectors when nil) that merges
// from similarity (0: the default).
func (e *mergeEnv) open(emb embedding.Embedder, similarity float64) *store.Store {
	e.t.Helper()
	if emb == nil {
		emb = &fixedEmbedder{model: mergeModel, vecs: mergeVectors()}
	}
	return openWith(e.t, e.url, emb, storetest.MaxConns(4),
		storetest.Config(func(c *store.Config) { c.MergeSimilarity = similarity }))
}

// fact is a memory with metadata.
type fact struct {
	content, meta string
}

// commit stores facts in a new session of sc and returns the ids answered, one per fact.
func (e *mergeEnv) commit(st *store.Store, sc memory.Scope, ttl time.Duration, facts ...fact) []uuid.UUID {
	e.t.Helper()
	res, err := e.tryCommit(st, sc, uuid.New(), ttl, facts...)
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

func (e *mergeEnv) tryCommit(st *store.Store, sc memory.Scope, sid uuid.UUID, ttl time.Duration, facts ...fact) ([]uuid.UUID, error) {
	p := store.CommitParams{Scope: sc, SessionID: sid, TTL: ttl,
		Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: noted}}}
	for _, f := range facts {
		m := memory.NewMemory{Content: f.content}
		if f.meta != "" {
			m.Metadata = json.RawMessage(f.meta)
		}
		p.Memories = append(p.Memories, m)
	}
	res, _, err := commitTurn(st, context.Background(), p)
	if err != nil {
		return nil, err
	}
	if len(res.Memories) != len(facts) {
		return nil, fmt.Errorf("%d memories answered for %d facts", len(res.Memories), len(facts))
	}
	ids := make([]uuid.UUID, len(res.Memories))
	for i, m := range res.Memories {
		ids[i] = m.ID
	}
	return ids, nil
}

// memRow is a stored memory as the superuser sees it, expired or not.
type memRow struct {
	ID                   uuid.UUID
	Content, ContentKey  string
	Metadata             map[string]any
	Embedding            *pgvector.Vector
	Model                *string
	CreatedAt, UpdatedAt time.Time
	ExpiresAt            time.Time
}

// rows reads every memory of sc (expired ones too), oldest first.
func (e *mergeEnv) rows(sc memory.Scope) []memRow {
	e.t.Helper()
	rows, err := e.db.Query(context.Background(), `
		select id, content, content_key, metadata, embedding::text, embedding_model, created_at, updated_at, expires_at
		from agentmem.memories where user_id = $1 and tenant_id = $2 and agent = $3
		order by created_at, id`, sc.UserID, sc.TenantID, sc.Agent)
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (memRow, error) {
		var m memRow
		var vec *string
		err := r.Scan(&m.ID, &m.Content, &m.ContentKey, &m.Metadata, &vec, &m.Model, &m.CreatedAt, &m.UpdatedAt, &m.ExpiresAt)
		if vec != nil {
			var v pgvector.Vector
			if err := v.Parse(*vec); err != nil {
				return m, err
			}
			m.Embedding = &v
		}
		return m, err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func newScope() memory.Scope {
	return storetest.Scope(memory.DefaultAgent)
}

// A paraphrase close enough merges into the memory it rephrases: one row, the newest text and
// vector, the first id, metadata merged (new keys win), the later expiry.
func TestAParaphraseMergesIntoTheMemory(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	st := e.open(nil, 0)
	sc := newScope()
	first := e.commit(st, sc, time.Hour, fact{lisbon, `{"kind":"place","since":2019}`})
	before := e.rows(sc)

	second := e.commit(st, sc, 48*time.Hour, fact{lisbonHome, `{"since":2020,"source":"chat"}`})
	if second[0] != first[0] {
		t.Errorf("the paraphrase answered id %s, want the memory's %s", second[0], first[0])
	}
	rows := e.rows(sc)
	if len(rows) != 1 {
		t.Fatalf("%d rows after the paraphrase, want 1: %+v", len(rows), rows)
	}
	m := rows[0]
	if m.Content != lisbonHome || m.ContentKey != store.ContentKey(lisbonHome) {
		t.Errorf("content %q key %s, want the new text and its key", m.Content, m.ContentKey)
	}
	if want := map[string]any{"kind": "place", "since": 2020.0, "source": "chat"}; fmt.Sprint(m.Metadata) != fmt.Sprint(want) {
		t.Errorf("metadata %v, want %v", m.Metadata, want)
	}
	if m.Embedding == nil || fmt.Sprint(m.Embedding.Slice()) != fmt.Sprint(near(0.97)) || m.Model == nil || *m.Model != mergeModel {
		t.Errorf("vector %v of %v, want the paraphrase's", m.Embedding, m.Model)
	}
	if time.Until(m.ExpiresAt) < 47*time.Hour {
		t.Errorf("expires at %s, want the paraphrase's later expiry", m.ExpiresAt)
	}
	if !m.CreatedAt.Equal(before[0].CreatedAt) || !m.UpdatedAt.After(before[0].UpdatedAt) {
		t.Errorf("created %s updated %s, want created kept (%s) and updated later", m.CreatedAt, m.UpdatedAt, before[0].CreatedAt)
	}

	// A later paraphrase with a shorter retention keeps the later expiry, and recall finds one
	// memory with the newest text.
	third := e.commit(st, sc, time.Hour, fact{lisbonCity, ""})
	rows = e.rows(sc)
	if third[0] != first[0] || len(rows) != 1 || rows[0].Content != lisbonCity || time.Until(rows[0].ExpiresAt) < 47*time.Hour {
		t.Errorf("after a third phrasing: id %s, rows %+v", third[0], rows)
	}
	page, err := st.ListMemories(context.Background(), store.ListMemoriesParams{Scope: sc, Limit: 10})
	if err != nil || len(page.Items) != 1 || page.Items[0].Content != lisbonCity {
		t.Errorf("listing: %+v, %v", page.Items, err)
	}
}

// A fact that is not close enough to any memory takes a row of its own.
func TestADifferentFactDoesNotMerge(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	st := e.open(nil, 0)
	sc := newScope()
	first := e.commit(st, sc, time.Hour, fact{lisbon, ""})
	// The zero vector is near nothing, not even another zero vector, and breaks nothing.
	for _, f := range []string{cat, lisbon94, wordless, wordless2} {
		if id := e.commit(st, sc, time.Hour, fact{f, ""}); id[0] == first[0] {
			t.Errorf("%q merged into %q", f, lisbon)
		}
	}
	if rows := e.rows(sc); len(rows) != 5 || rows[0].Content != lisbon {
		t.Errorf("rows %+v, want the five facts", rows)
	}
}

// Near vectors are not enough: the texts must also say their words in much the same order, so
// that the same words in another order (a bag-of-words embedder's identical vectors) or a
// sentence built anew keep rows of their own.
func TestNearVectorsOfDifferentlyOrderedTextsDoNotMerge(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	st := e.open(nil, 0)
	sc := newScope()
	a := e.commit(st, sc, time.Hour, fact{owes, ""})
	b := e.commit(st, sc, time.Hour, fact{owesBack, ""})
	l := e.commit(st, sc, time.Hour, fact{lisbon, ""})
	r := e.commit(st, sc, time.Hour, fact{reworded, ""})
	if a[0] == b[0] || l[0] == r[0] {
		t.Errorf("ids %v %v %v %v: a reordering or a rebuilt sentence merged", a, b, l, r)
	}
	if rows := e.rows(sc); len(rows) != 4 {
		t.Errorf("%d rows, want 4: %+v", len(rows), rows)
	}
}

// Another agent's, user's or tenant's near-duplicate never merges.
func TestANearDuplicateOfAnotherScopeDoesNotMerge(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	st := e.open(nil, 0)
	sc := newScope()
	first := e.commit(st, sc, time.Hour, fact{lisbon, ""})
	others := []memory.Scope{
		{UserID: sc.UserID, Agent: "travel-bot"},
		{UserID: uuid.NewString(), Agent: sc.Agent},
		{UserID: sc.UserID, TenantID: "acme", Agent: sc.Agent},
	}
	for _, o := range others {
		if id := e.commit(st, o, time.Hour, fact{lisbonHome, ""}); id[0] == first[0] {
			t.Errorf("scope %+v: merged into another scope's memory", o)
		}
		if rows := e.rows(o); len(rows) != 1 || rows[0].Content != lisbonHome {
			t.Errorf("scope %+v: rows %+v", o, rows)
		}
	}
	if rows := e.rows(sc); len(rows) != 1 || rows[0].Content != lisbon {
		t.Errorf("the first scope's memory changed: %+v", rows)
	}
}

// A memory whose vector is of another model, or of the same model at another size, is never
// compared: the fact takes a row of its own, and nothing fails.
func TestVectorsOfAnotherModelOrSizeNeverMerge(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	sc := newScope()
	// Every store embeds every text as the same direction, at its own size.
	open := func(model string, v []float32) *store.Store {
		vecs := map[string][]float32{}
		for _, f := range []string{lisbon, lisbonHome, lisbonCity, lisbon90, lisbon94, noted} {
			vecs[f] = v
		}
		return e.open(&fixedEmbedder{model: model, vecs: vecs}, 0)
	}
	a4 := open("model-a", []float32{1, 0, 0, 0})
	b4 := open("model-b", []float32{1, 0, 0, 0})
	a3 := open("model-a", []float32{1, 0, 0})
	a5 := open("model-a", []float32{1, 0, 0, 0, 0})

	ids := map[uuid.UUID]bool{}
	for i, st := range []*store.Store{a4, b4, a3, a5} {
		ids[e.commit(st, sc, time.Hour, fact{[]string{lisbon, lisbonHome, lisbonCity, lisbon90}[i], ""})[0]] = true
	}
	rows := e.rows(sc)
	if len(ids) != 4 || len(rows) != 4 {
		t.Fatalf("%d ids, rows %+v; want one row per model and size", len(ids), rows)
	}
	// A paraphrase as near to all of them merges into the one of its own model and size.
	for _, r := range rows {
		if r.Content != lisbonHome {
			continue
		}
		if got := e.commit(b4, sc, time.Hour, fact{lisbon94, ""})[0]; got != r.ID {
			t.Errorf("model b's paraphrase went to %s, want model b's memory %s", got, r.ID)
		}
	}
	if rows := e.rows(sc); len(rows) != 4 {
		t.Errorf("rows %+v, want 4", rows)
	}
}

// Near-duplicates within one request end in one memory, which holds the last one's text.
func TestNearDuplicatesInOneRequestMergeIntoOne(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	st := e.open(nil, 0)
	sc := newScope()
	ids := e.commit(st, sc, time.Hour, fact{lisbonHome, `{"a":1}`}, fact{cat, ""}, fact{lisbon, `{"b":2}`})
	if ids[0] != ids[2] || ids[0] == ids[1] {
		t.Errorf("ids %v: want the first and last the same, the cat its own", ids)
	}
	rows := e.rows(sc)
	if len(rows) != 2 {
		t.Fatalf("rows %+v, want 2", rows)
	}
	for _, r := range rows {
		if r.ID == ids[0] && (r.Content != lisbon || fmt.Sprint(r.Metadata) != fmt.Sprint(map[string]any{"a": 1.0, "b": 2.0})) {
			t.Errorf("merged row %+v, want the last text and both metadata", r)
		}
	}
	// The transactional path (an idempotency key) merges the same way.
	p := store.CommitParams{Scope: sc, SessionID: uuid.New(), TTL: time.Hour,
		Messages:    []memory.NewMessage{{Role: memory.RoleUser, Content: "noted"}},
		Memories:    []memory.NewMemory{{Content: lisbonCity}},
		Idempotency: &store.Idempotency{CallerRole: "authenticated", Function: "commit-turn", Key: "k", RequestHash: []byte("h")}}
	res, _, err := commitTurn(st, context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if rows := e.rows(sc); res.Memories[0].ID != ids[0] || len(rows) != 2 {
		t.Errorf("the idempotent path stored %s, want %s; rows %+v", res.Memories[0].ID, ids[0], rows)
	}
}

// The threshold decides: a pair at similarity 0.90 merges from 0.85, not at the default 0.95.
func TestTheThresholdDecides(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	for _, tc := range []struct {
		similarity float64
		merges     bool
	}{{0, false}, {0.95, false}, {0.91, false}, {0.89, true}, {0.85, true}} {
		t.Run(fmt.Sprint(tc.similarity), func(t *testing.T) {
			st := e.open(nil, tc.similarity)
			sc := newScope()
			first := e.commit(st, sc, time.Hour, fact{lisbon, ""})
			second := e.commit(st, sc, time.Hour, fact{lisbon90, ""})
			if merged := second[0] == first[0]; merged != tc.merges || len(e.rows(sc)) != map[bool]int{true: 1, false: 2}[tc.merges] {
				t.Errorf("threshold %v: merged %v (%d rows), want %v", tc.similarity, merged, len(e.rows(sc)), tc.merges)
			}
		})
	}
}

// Above 1 nothing merges but the same text, even identical vectors.
func TestMergingCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	vecs := mergeVectors()
	vecs[lisbonHome] = vecs[lisbon]
	vecs["user lives in lisbon."] = vecs[lisbon]
	st := e.open(&fixedEmbedder{model: mergeModel, vecs: vecs}, 1.01)
	sc := newScope()
	first := e.commit(st, sc, time.Hour, fact{lisbon, ""})
	if second := e.commit(st, sc, time.Hour, fact{lisbonHome, ""}); second[0] == first[0] {
		t.Error("a fact of the same vector merged with merging off")
	}
	if again := e.commit(st, sc, time.Hour, fact{"user lives in lisbon.", ""}); again[0] != first[0] {
		t.Error("the same fact stored again took another row with merging off")
	}
	if rows := e.rows(sc); len(rows) != 2 {
		t.Errorf("rows %+v, want 2", rows)
	}
}

// A fact stored without a vector (the provider is down) merges only with the same text.
func TestAFactWithoutAVectorMergesOnlyExactly(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	emb := &fixedEmbedder{model: mergeModel, vecs: mergeVectors()}
	st := e.open(emb, 0)
	sc := newScope()
	first := e.commit(st, sc, time.Hour, fact{lisbon, ""})
	emb.down.Store(true)
	if second := e.commit(st, sc, time.Hour, fact{lisbonHome, ""}); second[0] == first[0] {
		t.Error("a fact without a vector merged with a paraphrase")
	}
	if again := e.commit(st, sc, time.Hour, fact{lisbon, `{"x":1}`}); again[0] != first[0] {
		t.Error("the same fact without a vector took another row")
	}
	rows := e.rows(sc)
	if len(rows) != 2 || rows[0].Embedding == nil || rows[0].Metadata["x"] != 1.0 || rows[1].Embedding != nil {
		t.Errorf("rows %+v: want the first merged, with its vector (the same text), the paraphrase without", rows)
	}
}

// The memory holding the fact's own text wins over a nearer vector elsewhere; an expired
// memory holding it makes room for a near-duplicate to take the text.
func TestTheExactMatchWins(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	vecs := mergeVectors()
	vecs["user lives in lisbon."] = vecs[cat]
	st := e.open(&fixedEmbedder{model: mergeModel, vecs: vecs}, 0)
	sc := newScope()
	ids := e.commit(st, sc, time.Hour, fact{lisbon, ""}, fact{cat, ""})
	if got := e.commit(st, sc, time.Hour, fact{"user lives in lisbon.", ""}); got[0] != ids[0] {
		t.Errorf("the same text went to %s, want its memory %s, not the nearest vector's %s", got[0], ids[0], ids[1])
	}
	for _, r := range e.rows(sc) {
		if r.ID == ids[1] && r.Content != cat {
			t.Errorf("the cat memory changed: %+v", r)
		}
	}

	// Expired: the text's old row is gone, its key now the near-duplicate's.
	sc = newScope()
	old := e.commit(st, sc, time.Hour, fact{lisbon, ""})
	if _, err := e.db.Exec(context.Background(), `update agentmem.memories set expires_at = now() - interval '1 second' where id = $1`, old[0]); err != nil {
		t.Fatal(err)
	}
	live := e.commit(st, sc, time.Hour, fact{lisbonCity, ""})
	got := e.commit(st, sc, time.Hour, fact{lisbon, ""})
	rows := e.rows(sc)
	if got[0] != live[0] || len(rows) != 1 || rows[0].Content != lisbon || rows[0].ContentKey != store.ContentKey(lisbon) {
		t.Errorf("got %s (live %s, expired %s); rows %+v", got[0], live[0], old[0], rows)
	}
}

// Near-duplicates committed at once by two turns of one scope end in one memory.
func TestConcurrentNearDuplicatesEndInOneMemory(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	st := e.open(nil, 0)
	for round := 0; round < 30; round++ {
		sc := newScope()
		var wg sync.WaitGroup
		ids := make([]uuid.UUID, 2)
		errs := make([]error, 2)
		for i, f := range []string{lisbon, lisbonHome} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var got []uuid.UUID
				got, errs[i] = e.tryCommit(st, sc, uuid.New(), time.Hour, fact{f, ""})
				if errs[i] == nil {
					ids[i] = got[0]
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if rows := e.rows(sc); len(rows) != 1 || ids[0] != ids[1] {
			t.Fatalf("round %d: ids %v, %d rows; want one memory", round, ids, len(rows))
		}
	}
}

// A turn refused for its session (another agent's) changes no memory, near-duplicates included.
func TestARefusedTurnMergesNothing(t *testing.T) {
	t.Parallel()
	e := newMergeEnv(t)
	st := e.open(nil, 0)
	sc := newScope()
	sid := uuid.New()
	if _, err := e.tryCommit(st, sc, sid, time.Hour, fact{lisbon, ""}); err != nil {
		t.Fatal(err)
	}
	other := memory.Scope{UserID: sc.UserID, Agent: "travel-bot"}
	if _, err := e.tryCommit(st, other, uuid.New(), time.Hour, fact{cat, ""}); err != nil {
		t.Fatal(err)
	}
	_, err := e.tryCommit(st, other, sid, time.Hour, fact{lisbonHome, ""}, fact{cat, `{"x":1}`})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("commit to another agent's session: %v", err)
	}
	if rows := e.rows(sc); len(rows) != 1 || rows[0].Content != lisbon {
		t.Errorf("rows %+v", rows)
	}
	if rows := e.rows(other); len(rows) != 1 || len(rows[0].Metadata) != 0 {
		t.Errorf("rows %+v", rows)
	}
}
