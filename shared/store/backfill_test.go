package store_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// foldEmbedder is a second model beside the Hash embedder: its vectors fold the Hash
// embedder's 384 values into dims, so a text is nearest to itself. It counts the texts it
// embeds and can be taken down (unavailable).
type foldEmbedder struct {
	model string
	dims  int
	texts atomic.Int64
	down  atomic.Bool
}

func (e *foldEmbedder) Model() string   { return e.model }
func (e *foldEmbedder) Dimensions() int { return e.dims }

func (e *foldEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if e.down.Load() {
		return nil, fmt.Errorf("%w: the fake model is down", embedding.ErrUnavailable)
	}
	e.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, e.dims)
		var norm float64
		for j, x := range (embedding.Hash{}).Vector(t) {
			v[j%e.dims] += x
		}
		for _, x := range v {
			norm += float64(x) * float64(x)
		}
		for j := range v {
			v[j] = float32(float64(v[j]) / math.Sqrt(norm))
		}
		out[i] = v
	}
	return out, nil
}

// backfillEnv is a fresh database filled by a store with the built-in Hash embedder.
type backfillEnv struct {
	t    *testing.T
	db   testdb.DB
	hash *store.Store
}

func newBackfillEnv(t *testing.T) *backfillEnv {
	t.Helper()
	e := storetest.New(t)
	return &backfillEnv{t: t, db: e.DB, hash: e.Store}
}

// open is a store over the same database with another embedder.
func (e *backfillEnv) open(emb embedding.Embedder) *store.Store {
	e.t.Helper()
	return openWith(e.t, e.db.URL, emb)
}

// insert stores memories of a user in a tenant as the Hash embedder would have, straight in the
// table (so that what CommitTurn merges or keeps out does not matter here).
func (e *backfillEnv) insert(tenant string, user uuid.UUID, facts ...string) {
	e.t.Helper()
	vecs := make([]string, len(facts))
	for i, f := range facts {
		vecs[i] = knVec(f)
	}
	e.exec(`insert into agentmem.memories (tenant_id, user_id, content, content_key, embedding, embedding_model, expires_at)
		select $1, $2, x.f, x.f, x.v::extensions.vector, $5, now() + interval '1 hour'
		from unnest($3::text[], $4::text[]) as x(f, v)`, tenant, user, facts, vecs, embedding.Hash{}.Model())
}

func (e *backfillEnv) exec(sql string, args ...any) {
	e.t.Helper()
	conn, err := pgx.Connect(context.Background(), e.db.URL)
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		e.t.Fatal(err)
	}
}

// vectors maps every row's content to "model/dimension" ("-/0" without a vector).
func (e *backfillEnv) vectors() map[string]string {
	e.t.Helper()
	conn, err := pgx.Connect(context.Background(), e.db.URL)
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `
		select content, coalesce(embedding_model, '-') || '/' || coalesce(embedding_dims, 0) from agentmem.memories
		union all
		select content, coalesce(embedding_model, '-') || '/' || coalesce(embedding_dims, 0) from agentmem.knowledge_chunks`)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	var content, v string
	if _, err := pgx.ForEachRow(rows, []any{&content, &v}, func() error { out[content] = v; return nil }); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// The backfill fixture: a tenant whose name would break SQL built by formatting, users A, B
// and C, memories in two tenants (one stored without a vector, one expired) and chunks.
const backfillTenant = "o'brien & co"

var (
	backfillUserA = uuid.MustParse("00000000-0000-4000-8000-00000000000a")
	backfillUserB = uuid.MustParse("00000000-0000-4000-8000-00000000000b")
	backfillUserC = uuid.MustParse("00000000-0000-4000-8000-00000000000c")
)

func (e *backfillEnv) fill() {
	e.t.Helper()
	e.insert(backfillTenant, backfillUserA, "a1 User A prefers metric units.", "a2 User A lives in Lisbon.")
	e.insert("", backfillUserA, "a3 User A drinks green tea.", "ax expired memory of A")
	e.insert(backfillTenant, backfillUserB, "b1 User B plays chess.")
	e.insert("", backfillUserC, "c1 User C owns a red bicycle.")
	e.exec(`update agentmem.memories set expires_at = now() - interval '1 second' where content like 'ax %'`)
	e.exec(`update agentmem.memories set embedding = null, embedding_model = null where content like 'c1 %'`)
	for _, k := range []struct{ tenant, text string }{
		{backfillTenant, "k1 Refunds are paid within 14 days."}, {"", "k2 Support answers on weekdays."},
	} {
		if _, err := ingestKnowledge(e.hash, context.Background(), store.IngestParams{TenantID: k.tenant,
			Source: k.text[:2], Chunks: []string{k.text}}); err != nil {
			e.t.Fatal(err)
		}
	}
}

// label is the first word of a fixture's content.
func label(content string) string {
	for i, r := range content {
		if r == ' ' {
			return content[:i]
		}
	}
	return content
}

// A backfill embeds exactly the rows of its scope (tenant, user, tables) with the configured
// model, counts them beforehand, leaves every other row as it was, and a second run finds
// nothing left and asks the model for nothing.
func TestBackfillEmbedsItsScopeOnly(t *testing.T) {
	t.Parallel()
	tenant, none := backfillTenant, ""
	a := backfillUserA.String()
	all := []string{"a1", "a2", "a3", "b1", "c1", "k1", "k2"}
	tests := []struct {
		name  string
		scope store.PendingScope
		want  []string
	}{
		{"everything", store.PendingScope{}, all},
		{"a user's memories in every tenant", store.PendingScope{UserID: &a}, []string{"a1", "a2", "a3"}},
		{"a tenant's memories and chunks", store.PendingScope{TenantID: &tenant}, []string{"a1", "a2", "b1", "k1"}},
		{"the tenant-less scope", store.PendingScope{TenantID: &none}, []string{"a3", "c1", "k2"}},
		{"a user in a tenant", store.PendingScope{TenantID: &tenant, UserID: &a}, []string{"a1", "a2"}},
		{"chunks only", store.PendingScope{Tables: store.PendingKnowledge}, []string{"k1", "k2"}},
		{"a user's chunks: none", store.PendingScope{UserID: &a, Tables: store.PendingKnowledge}, nil},
		{"the tenant-less scope's memories", store.PendingScope{TenantID: &none, Tables: store.PendingMemories},
			[]string{"a3", "c1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newBackfillEnv(t)
			e.fill()
			ctx := context.Background()
			before := e.vectors()
			emb := &foldEmbedder{model: "fake-fold-8", dims: 8}
			st := e.open(emb)

			var wantCount memory.PendingCount
			for _, l := range tc.want {
				if l[0] == 'k' {
					wantCount.KnowledgeChunks++
				} else {
					wantCount.Memories++
				}
			}
			if c, err := countPending(st, ctx, tc.scope); err != nil || c != wantCount {
				t.Errorf("CountPending: %+v, %v; want %+v", c, err, wantCount)
			}
			res, err := backfill(st, ctx, store.BackfillParams{Scope: tc.scope, BatchSize: 2})
			if err != nil || res.Memories != wantCount.Memories || res.KnowledgeChunks != wantCount.KnowledgeChunks ||
				res.Failed != 0 || res.More {
				t.Fatalf("Backfill: %+v, %v; want %+v embedded", res, err, wantCount)
			}
			after := e.vectors()
			for _, content := range slices.Sorted(maps.Keys(after)) {
				want := before[content]
				if slices.Contains(tc.want, label(content)) {
					want = "fake-fold-8/8"
				}
				if after[content] != want {
					t.Errorf("%s: %s, want %s (was %s)", label(content), after[content], want, before[content])
				}
			}
			if c, err := countPending(st, ctx, tc.scope); err != nil || c.Total() != 0 {
				t.Errorf("CountPending after the backfill: %+v, %v", c, err)
			}
			asked := emb.texts.Load()
			if asked != wantCount.Total() {
				t.Errorf("the model embedded %d texts, want %d", asked, wantCount.Total())
			}
			if res, err := backfill(st, ctx, store.BackfillParams{Scope: tc.scope}); err != nil ||
				res != (memory.EmbedPendingResult{}) || emb.texts.Load() != asked {
				t.Errorf("a second backfill: %+v, %v, %d texts embedded again", res, err, emb.texts.Load()-asked)
			}
		})
	}
}

// After a switch to another model (and size), the memories of a backfilled scope rank with the
// new model while those of the rest do not until they are backfilled too. The same model's
// name at another size is another model too.
func TestBackfillAfterAModelSwitch(t *testing.T) {
	t.Parallel()
	e := newBackfillEnv(t)
	e.fill()
	ctx := context.Background()
	scA := memory.Scope{TenantID: backfillTenant, UserID: backfillUserA.String(), Agent: memory.DefaultAgent}
	scB := memory.Scope{TenantID: backfillTenant, UserID: backfillUserB.String(), Agent: memory.DefaultAgent}
	vectorRecall := func(st *store.Store, sc memory.Scope, query string) []string {
		t.Helper()
		hits, err := recall(st, ctx, store.RecallParams{Scope: sc, Query: query, K: 1, Mode: memory.ModeVector, MinScore: -1})
		if err != nil {
			t.Fatalf("vector recall: %v", err)
		}
		var out []string
		for _, h := range hits {
			out = append(out, label(h.Content))
		}
		return out
	}
	if got := vectorRecall(e.hash, scB, "b1 User B plays chess."); !slices.Equal(got, []string{"b1"}) {
		t.Fatalf("the Hash model recalls %v for B, want b1", got)
	}
	// The Hash model's name at another size is another model: every live row waits for it.
	resized := e.open(&foldEmbedder{model: embedding.Hash{}.Model(), dims: 8})
	if c, err := countPending(resized, ctx, store.PendingScope{}); err != nil || c.Memories != 5 || c.KnowledgeChunks != 2 {
		t.Errorf("rows pending for the Hash model's name at 8 dimensions: %+v, %v; want 5 memories, 2 chunks", c, err)
	}

	emb := &foldEmbedder{model: "fake-fold-8", dims: 8}
	st := e.open(emb)
	if got := vectorRecall(st, scA, "a2 User A lives in Lisbon."); len(got) != 0 {
		t.Errorf("the new model ranks %v before any backfill, want nothing", got)
	}
	if kh, err := searchKnowledge(st, ctx, store.KnowledgeSearchParams{TenantID: backfillTenant,
		Query: "k1 Refunds are paid within 14 days.", K: 1, Mode: memory.ModeVector}); err != nil || len(kh) != 0 {
		t.Errorf("the new model ranks chunks before any backfill: %+v, %v", kh, err)
	}
	a := backfillUserA.String()
	if res, err := backfill(st, ctx, store.BackfillParams{Scope: store.PendingScope{UserID: &a}}); err != nil || res.Memories != 3 {
		t.Fatalf("Backfill of A: %+v, %v", res, err)
	}
	for _, q := range []string{"a1 User A prefers metric units.", "a2 User A lives in Lisbon."} {
		if got := vectorRecall(st, scA, q); !slices.Equal(got, []string{label(q)}) {
			t.Errorf("the new model recalls %v for %q, want %s", got, q, label(q))
		}
	}
	if got := vectorRecall(st, scB, "b1 User B plays chess."); len(got) != 0 {
		t.Errorf("the new model ranks %v of B, not backfilled", got)
	}
	if res, err := backfill(st, ctx, store.BackfillParams{}); err != nil || res.Memories != 2 || res.KnowledgeChunks != 2 {
		t.Fatalf("Backfill of the rest: %+v, %v", res, err)
	}
	if got := vectorRecall(st, scB, "b1 User B plays chess."); !slices.Equal(got, []string{"b1"}) {
		t.Errorf("the new model recalls %v for B after the backfill, want b1", got)
	}
	kh, err := searchKnowledge(st, ctx, store.KnowledgeSearchParams{TenantID: backfillTenant,
		Query: "k1 Refunds are paid within 14 days.", K: 1, Mode: memory.ModeVector})
	if err != nil || len(kh) != 1 || kh[0].Source != "k1" {
		t.Errorf("vector search of the knowledge with the new model: %+v, %v; want k1", kh, err)
	}

}

// A backfill stopped after a batch (an interrupt), by its limit, or by the provider going down
// keeps what it stored; the next run goes on with the rows left and embeds none of the done
// ones again.
func TestBackfillResumes(t *testing.T) {
	t.Parallel()
	e := newBackfillEnv(t)
	ctx := context.Background()
	user := uuid.New()
	var facts []string
	for i := range 10 {
		facts = append(facts, fmt.Sprintf("fact %02d of the user", i))
	}
	e.insert("", user, facts...)
	e.insert("", uuid.New(), "another user's fact")
	emb := &foldEmbedder{model: "fake-fold-8", dims: 8}
	st := e.open(emb)
	userID := user.String()
	scope := store.PendingScope{UserID: &userID}
	pending := func() int64 {
		t.Helper()
		c, err := countPending(st, ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		return c.Total()
	}

	// Interrupted after the first batch.
	cctx, cancel := context.WithCancel(ctx)
	res, err := backfill(st, cctx, store.BackfillParams{Scope: scope, BatchSize: 4,
		Progress: func(int64, memory.EmbedPendingResult) { cancel() }})
	cancel()
	if (err != nil && !errors.Is(err, context.Canceled)) || res.Memories != 4 || !res.More {
		t.Fatalf("interrupted run: %+v, %v; want 4 embedded and more", res, err)
	}
	if n := emb.texts.Load(); n != 4 {
		t.Errorf("the interrupted run embedded %d texts, want 4", n)
	}
	if n := pending(); n != 6 {
		t.Errorf("%d rows pending after the interrupted run, want 6", n)
	}

	// Stopped by its limit.
	res, err = backfill(st, ctx, store.BackfillParams{Scope: scope, Limit: 3})
	if err != nil || res.Memories != 3 || !res.More {
		t.Fatalf("run with a limit: %+v, %v", res, err)
	}

	// The provider goes down after a batch.
	res, err = backfill(st, ctx, store.BackfillParams{Scope: scope, BatchSize: 2,
		Progress: func(int64, memory.EmbedPendingResult) { emb.down.Store(true) }})
	if !errors.Is(err, embedding.ErrUnavailable) || res.Memories != 2 || !res.More {
		t.Fatalf("run while the provider goes down: %+v, %v", res, err)
	}
	emb.down.Store(false)

	res, err = backfill(st, ctx, store.BackfillParams{Scope: scope})
	if err != nil || res.Memories != 1 || res.More {
		t.Fatalf("last run: %+v, %v; want the one row left", res, err)
	}
	if n := emb.texts.Load(); n != 10 {
		t.Errorf("the runs embedded %d texts in all, want 10 (each row once)", n)
	}
	if n := pending(); n != 0 {
		t.Errorf("%d rows pending at the end", n)
	}
	for content, v := range e.vectors() {
		want := "fake-fold-8/8"
		if content == "another user's fact" {
			want = embedding.Hash{}.Model() + "/384"
		}
		if v != want {
			t.Errorf("%q: %s, want %s", content, v, want)
		}
	}
}

// Progress is called after every batch with the rows done so far, up to the count CountPending
// gave, and with the result so far.
func TestBackfillProgressReachesTheTotal(t *testing.T) {
	t.Parallel()
	e := newBackfillEnv(t)
	ctx := context.Background()
	var facts []string
	for i := range 70 {
		facts = append(facts, fmt.Sprintf("fact %d", i))
	}
	e.insert("", uuid.New(), facts...)
	var chunks []string
	for i := range 5 {
		chunks = append(chunks, fmt.Sprintf("chunk %d", i))
	}
	if _, err := ingestKnowledge(e.hash, ctx, store.IngestParams{Source: "doc", Chunks: chunks}); err != nil {
		t.Fatal(err)
	}
	st := e.open(&foldEmbedder{model: "fake-fold-8", dims: 8})
	total, err := countPending(st, ctx, store.PendingScope{})
	if err != nil || total != (memory.PendingCount{Memories: 70, KnowledgeChunks: 5}) {
		t.Fatalf("CountPending: %+v, %v", total, err)
	}
	var dones []int64
	var last memory.EmbedPendingResult
	res, err := backfill(st, ctx, store.BackfillParams{Progress: func(done int64, r memory.EmbedPendingResult) {
		dones, last = append(dones, done), r
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Batches of 64: 64 and 6 memories, then 5 chunks.
	if !slices.Equal(dones, []int64{64, 70, 75}) {
		t.Errorf("progress %v, want [64 70 75]", dones)
	}
	if last != res || last.Memories+last.KnowledgeChunks != total.Total() {
		t.Errorf("last progress %+v, result %+v, want %d rows", last, res, total.Total())
	}
}
