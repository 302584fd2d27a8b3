package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// rankEnv is a database with two stores over it: one with the given ranking, one with the
// defaults (exact below 2,000 memories), and a superuser connection to seed rows.
type rankEnv struct {
	st, exact *store.Store
	conn      *pgx.Conn
	url       string
}

func newRankEnv(t *testing.T, r store.Ranking) *rankEnv {
	t.Helper()
	e := storetest.New(t, storetest.MaxConns(4), storetest.Ranking(r))
	exact := storetest.Open(t, e.DB, storetest.MaxConns(4))
	return &rankEnv{st: e.Store, exact: exact, conn: e.Admin(t), url: e.DB.URL}
}

// seed stores memories of user (agent, metadata) with the built-in embedder's vectors.
func (e *rankEnv) seed(t *testing.T, user uuid.UUID, agent string, texts []string, metadata []string) {
	t.Helper()
	storetest.SeedMemories(t, e.conn, user.String(), agent, texts, metadata)
}

var rankWords = strings.Fields(`tea coffee hiking chess Porto Berlin violin garden dog cat bicycle
	novel sushi marathon piano python kayak pottery opera salsa climbing tennis jazz baking`)

// rankFact is a deterministic text of three words of rankWords.
func rankFact(i int) string {
	n := len(rankWords)
	return fmt.Sprintf("User enjoys %s with %s near %s, note %d", rankWords[i%n], rankWords[(i*7+3)%n],
		rankWords[(i*13+5)%n], i)
}

// indexAgreesWithExact recalls user's rows of source (seeded in agents common and rare, a third
// of the common ones with metadata {"i": 1}) through the index (e.st) and exactly (e.exact), for
// the whole scope, one agent of ten and a metadata filter: every hit through the index passes the
// filter, recall@10 against the exact answer is at least 0.9, and full text above the exact limit
// finds what it finds below it, in the same order.
func (e *rankEnv) indexAgreesWithExact(t *testing.T, user uuid.UUID, source string, rare []string) {
	t.Helper()
	ctx := context.Background()
	cases := []struct {
		name   string
		agent  string
		filter string
		check  func(h memory.Hit) bool
	}{
		{"whole scope", "", "", func(memory.Hit) bool { return true }},
		{"one agent of ten", "rare", "", func(h memory.Hit) bool { return slices.Contains(rare, h.Content) }},
		{"metadata filter", "", `{"i": 1}`, func(h memory.Hit) bool { return string(h.Metadata) == `{"i": 1}` }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var overlap, total int
			for q := range 8 {
				p := store.RecallParams{Scope: memory.Scope{UserID: user.String(), Agent: c.agent}, Source: source,
					Query: rankFact(q*37 + 1), K: 10, Mode: memory.ModeVector, MinScore: -1}
				if c.filter != "" {
					p.Filter = []byte(c.filter)
				}
				got, err := recall(e.st, ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				want, err := recall(e.exact, ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 10 || len(want) != 10 {
					t.Fatalf("query %d: %d results through the index, %d exact; want 10", q, len(got), len(want))
				}
				for _, h := range got {
					if !c.check(h) {
						t.Fatalf("query %d: %q (%s) does not pass the filter", q, h.Content, h.Metadata)
					}
					if slices.Contains(keys(want), key(h)) {
						overlap++
					}
				}
				total += len(want)

				// Full text above the limit is planned for the query, below it matched among
				// the user's rows: the same rows in the same order either way.
				p.Mode = memory.ModeText
				gotText, err := recall(e.st, ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				wantText, err := recall(e.exact, ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if len(wantText) == 0 || !slices.Equal(keys(gotText), keys(wantText)) {
					t.Fatalf("query %d, text: %v above the limit, %v below", q, contents(gotText), contents(wantText))
				}
			}
			if r := float64(overlap) / float64(total); r < 0.9 {
				t.Errorf("recall@10 against exact = %.2f, want >= 0.9", r)
			}
		})
	}
}

func ids(hits []memory.Hit) []uuid.UUID {
	out := make([]uuid.UUID, len(hits))
	for i, h := range hits {
		out[i] = uuid.MustParse(h.ID)
	}
	return out
}

// A user with more memories than the exact limit is ranked through the model's HNSW index path;
// the answer still has k memories that pass a selective agent or metadata filter, and matches
// the exact ranking.
func TestRecallLargeScopeUsesTheIndex(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: seeds hundreds of memories for the HNSW index path")
	}
	e := newRankEnv(t, store.Ranking{ExactLimit: 50})
	ctx := context.Background()
	user := uuid.New()
	var common, rare, meta []string
	for i := range 300 {
		if i%10 == 0 {
			rare = append(rare, rankFact(i))
		} else {
			common = append(common, rankFact(i))
		}
	}
	for i := range common {
		meta = append(meta, fmt.Sprintf(`{"i": %d}`, i%3))
	}
	e.seed(t, user, "common", common, meta)
	e.seed(t, user, "rare", rare, slices.Repeat([]string{`{}`}, len(rare)))
	for u := range 20 { // other users' rows share the index
		var texts []string
		for i := range 50 {
			texts = append(texts, rankFact(1000+u*50+i))
		}
		e.seed(t, uuid.New(), "common", texts, slices.Repeat([]string{`{}`}, len(texts)))
	}
	if _, err := e.conn.Exec(ctx, "analyze agentmem.memories"); err != nil {
		t.Fatal(err)
	}
	e.indexAgreesWithExact(t, user, "", rare)

	// The plans: above the limit the HNSW index serves the query, and its iterative scan still
	// finds k rows of a selective filter (on a table this small the planner would rather scan
	// the owner index and sort, so it is asked not to); below the limit, the owner index.
	// The user has 300 memories: exact below a limit of 301, through the index from 300.
	for limit, want := range map[int]bool{300: false, 301: true} {
		var small bool
		err := asRole(t, e.conn, store.CallerRole, map[string]any{"role": "authenticated", "sub": user.String()}, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `select agentmem.memory_scope_is_small($1, '', $2)`, user, limit).Scan(&small)
		})
		if err != nil {
			t.Fatal(err)
		}
		if small != want {
			t.Errorf("memory_scope_is_small at limit %d = %v, want %v", limit, small, want)
		}
	}
	plans, got := explainNeighbours(t, e.url, user, "rare", false)
	if !strings.Contains(plans, "Index Scan using memories_embedding_") {
		t.Errorf("above the exact limit the plan does not scan the HNSW index:\n%s", plans)
	}
	if len(got) != 10 {
		t.Errorf("through the HNSW index: %d memories of agent rare, want 10", len(got))
	}
	for _, c := range got {
		if !slices.Contains(rare, c) {
			t.Errorf("through the HNSW index: %q is not of agent rare", c)
		}
	}
	plans, _ = explainNeighbours(t, e.url, user, "rare", true)
	// (Partitioned by user, the user's rows are a larger share of their partition, whose
	// planner may find them through another of its indexes.)
	if strings.Contains(plans, "memories_embedding_") ||
		(testdb.UserPartitions(t) == 1 && !strings.Contains(plans, "memories_owner_created_idx")) {
		t.Errorf("below the exact limit the plan is not an exact scan of the user's rows:\n%s", plans)
	}
}

// explainNeighbours runs memory_neighbours for the 10 memories of agent nearest to a text, exactly
// or through the index, with auto_explain on, and returns the plans it logged and the memories'
// contents.
func explainNeighbours(t *testing.T, url string, user uuid.UUID, agent string, exact bool) (string, []string) {
	t.Helper()
	q := pgvector.NewVector(embedding.Hash{}.Vector(rankFact(1))).String()
	// signed in as the user: the index-served search answers only the caller's own scope
	claims := fmt.Sprintf(`{"sub": %q, "role": "authenticated"}`, user)
	return explainAs(t, url, claims, `select m.content
		from agentmem.memory_neighbours($1, '', $2, '{}', null, null, $3::extensions.vector, $5, 10, $4) n
		join agentmem.memories m on m.id = n.id`, user, agent, q, exact, embedding.HashModel)
}

// explain runs a query of one text column with auto_explain on (nested statements too), the
// planner told to avoid sequential scans and sorts, and returns the plans it logged and the
// rows.
func explain(t *testing.T, url, sql string, args ...any) (string, []string) {
	t.Helper()
	return explainAs(t, url, "", sql, args...)
}

// explainAs is explain with request.jwt.claims set to claims (unless empty), as the superuser.
func explainAs(t *testing.T, url, claims, sql string, args ...any) (string, []string) {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logged strings.Builder
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		logged.WriteString(n.Message + "\n")
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range []string{"set enable_seqscan = off", "set enable_bitmapscan = off", "set enable_sort = off",
		"load 'auto_explain'", "set auto_explain.log_min_duration = 0",
		"set auto_explain.log_nested_statements = on", "set client_min_messages = log"} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if claims != "" {
		if _, err := conn.Exec(ctx, `select set_config('request.jwt.claims', $1, false)`, claims); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return logged.String(), got
}

// MMR keeps the ranking's order at lambda 1, and at a low lambda puts a memory unlike the first
// before the near-copies of it.
func TestRecallMMR(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New()
	texts := []string{
		"Ada drinks green tea every morning",
		"Ada drinks green tea every single morning",
		"Ada drinks green tea each morning",
		"Ada plays chess on Sunday mornings",
	}
	e.seed(t, user, "", texts, slices.Repeat([]string{`{}`}, len(texts)))
	p := store.RecallParams{Scope: memory.Scope{UserID: user.String()}, Query: "Ada green tea morning", K: 4, Mode: memory.ModeVector}
	plain, err := recall(e.st, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != 4 || plain[3].Content != texts[3] {
		t.Fatalf("without MMR the chess memory should rank last: %v", contents(plain))
	}
	one := 1.0
	p.MMRLambda = &one
	same, err := recall(e.st, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(same), ids(plain)) {
		t.Errorf("lambda 1 changed the order: %v, want %v", contents(same), contents(plain))
	}
	low := 0.3
	p.MMRLambda = &low
	diverse, err := recall(e.st, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(diverse) != 4 || diverse[0].ID != plain[0].ID || diverse[1].Content != texts[3] {
		t.Errorf("lambda 0.3: %v; want the best first, then the chess memory", contents(diverse))
	}
	p.K = 2
	two, err := recall(e.st, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(two) != 2 || two[1].Content != texts[3] {
		t.Errorf("k 2 with lambda 0.3: %v; want the chess memory second", contents(two))
	}
}

func contents(hits []memory.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Content
	}
	return out
}

// Fusion weights decide hybrid's order: a heavy text weight gives full text's order, a heavy
// vector weight the vector order.
func TestRecallFusionWeights(t *testing.T) {
	t.Parallel()
	texts := []string{
		"the user runs every day, runs fast, runs far",
		"the user is a runner",
		// longer for full text than for the vector, which weighs names less
		"running shoes from Nike and Adidas are in the hall",
		"the user ran a marathon in Porto last year",
		"the user dislikes running in the rain",
	}
	query := "runs daily"
	user := uuid.New()
	ctx := context.Background()
	e := newRankEnv(t, store.Ranking{})
	e.seed(t, user, "", texts, slices.Repeat([]string{`{}`}, len(texts)))
	orderOf := func(r store.Ranking, mode string) []string {
		st := storetest.OpenURL(t, e.url, storetest.MaxConns(1), storetest.Ranking(r))
		hits, err := recall(st, ctx, store.RecallParams{Scope: memory.Scope{UserID: user.String()}, Query: query, K: 5,
			Mode: mode, MinScore: -1})
		if err != nil {
			t.Fatal(err)
		}
		return contents(hits)
	}
	text := orderOf(store.Ranking{}, memory.ModeText)
	vector := orderOf(store.Ranking{}, memory.ModeVector)
	if len(text) < 2 || slices.Equal(text, vector[:len(text)]) {
		t.Fatalf("the data should rank differently by text %v and by vector %v", text, vector)
	}
	textHeavy := orderOf(store.Ranking{TextWeight: 100, VectorWeight: 0.01}, memory.ModeHybrid)
	if !slices.Equal(textHeavy[:len(text)], text) {
		t.Errorf("text-heavy hybrid %v does not start with the text order %v", textHeavy, text)
	}
	vectorHeavy := orderOf(store.Ranking{TextWeight: 0.01, VectorWeight: 100}, memory.ModeHybrid)
	if !slices.Equal(vectorHeavy, vector) {
		t.Errorf("vector-heavy hybrid %v is not the vector order %v", vectorHeavy, vector)
	}
}

// A tenant with more chunks than the exact limit is searched through the model's HNSW index
// path: k chunks, all the tenant's own, the same as the exact ranking, for a user and a service
// caller.
func TestSearchKnowledgeLargeTenantUsesTheIndex(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{ExactLimit: 20})
	ctx := context.Background()
	ingest := func(tenant string, from int) {
		var chunks []string
		for i := range 60 {
			chunks = append(chunks, rankFact(from+i))
		}
		if _, err := ingestKnowledge(e.exact, ctx, store.IngestParams{TenantID: tenant, Source: "doc", Chunks: chunks}); err != nil {
			t.Fatal(err)
		}
	}
	ingest("acme", 0)
	ingest("globex", 500)
	acme := map[string]bool{}
	for i := range 60 {
		acme[rankFact(i)] = true
	}
	for _, user := range []uuid.UUID{uuid.New(), uuid.Nil} {
		var overlap int
		for q := range 5 {
			p := store.KnowledgeSearchParams{TenantID: "acme", UserID: user.String(), Query: rankFact(q*11 + 2), K: 10,
				Mode: memory.ModeVector}
			got, err := searchKnowledge(e.st, ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			want, err := searchKnowledge(e.exact, ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 10 || len(want) != 10 {
				t.Fatalf("%d chunks through the index, %d exact; want 10", len(got), len(want))
			}
			for _, h := range got {
				if !acme[h.Content] {
					t.Fatalf("%q is not acme's", h.Content)
				}
				if slices.ContainsFunc(want, func(w memory.KnowledgeHit) bool { return w.ID == h.ID }) {
					overlap++
				}
			}
		}
		if overlap < 45 {
			t.Errorf("user %v: %d of 50 chunks in the exact top 10, want >= 45", user, overlap)
		}
	}
	// The HNSW index serves the query above the limit, and finds k chunks of the tenant.
	q := pgvector.NewVector(embedding.Hash{}.Vector(rankFact(3))).String()
	plans, got := explain(t, e.url, `select k.content
		from agentmem.knowledge_neighbours('acme', $1::extensions.vector, $2, 10, 20) n
		join agentmem.knowledge_chunks k on k.id = n.id`, q, embedding.HashModel)
	if !strings.Contains(plans, "Index Scan using knowledge_chunks_embedding_") {
		t.Errorf("above the exact limit the plan does not scan the HNSW index:\n%s", plans)
	}
	if len(got) != 10 {
		t.Errorf("through the HNSW index: %d chunks, want 10", len(got))
	}
	for _, c := range got {
		if !acme[c] {
			t.Errorf("through the HNSW index: %q is not acme's", c)
		}
	}
}
