package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// armTracer records the statements a store sends, and how many of its batches were in flight
// at once.
type armTracer struct {
	mu       sync.Mutex
	sent     []string
	inFlight int
	most     int
}

type armTraceKey struct{}

func (a *armTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sent = append(a.sent, d.SQL)
	return ctx
}

func (a *armTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (a *armTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inFlight++
	a.most = max(a.most, a.inFlight)
	return context.WithValue(ctx, armTraceKey{}, true)
}

func (a *armTracer) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sent = append(a.sent, d.SQL)
}

func (a *armTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inFlight--
}

// calls counts the statements sent that call the function fn (a name of schema agentmem).
func (a *armTracer) calls(fn string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, s := range a.sent {
		if strings.Contains(s, "agentmem."+fn+"(") {
			n++
		}
	}
	return n
}

// A recall of two lists or more (hybrid, or both sources) from a pool of two connections or
// more asks its lists at once and fuses them in a statement of their own; from a pool of one,
// or with one list, it asks agentmem.recall_memories or recall_sources. Both give the same answer, to the last bit, for every source and option:
// speaker and role, time range, metadata filter, shared memories, thresholds and MMR, the scope
// ranked exactly and through the indexes; and the same as agentmem.recall_sources answered
// before the lists could be asked apart (kept in testdata). The arms are seen in flight at once. (Memories have
// no speaker nor role: a recall of memories with either finds nothing, on both paths.)
func TestRecallArmsAtOnceAnswerAsOneStatement(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	conn := storetest.Admin(t, db.URL)
	ctx := t.Context()
	user := "auth0|arms"
	rng := rand.New(rand.NewPCG(23, 29))
	words := strings.Fields("harbour violin tea garden lantern river orchard kettle meadow bicycle " +
		"canyon pottery glacier saddle compass quilt falcon ember thistle marble")
	text := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
	var msgs, mems, msgMeta, memMeta []string
	for i := range 600 {
		msgs = append(msgs, text(4+rng.IntN(8)))
		msgMeta = append(msgMeta, fmt.Sprintf(`{"k": %q}`, []string{"a", "b"}[i%2]))
	}
	for i := range 240 {
		mems = append(mems, text(3+rng.IntN(6)))
		memMeta = append(memMeta, fmt.Sprintf(`{"k": %q}`, []string{"a", "b"}[i%3%2]))
	}
	storetest.SeedMessages(t, conn, user, "chat", msgs, msgMeta)
	storetest.SeedMemories(t, conn, user, "chat", mems, memMeta)
	for i := range 40 {
		s := text(5)
		if _, err := conn.Exec(ctx, sharedFixture, "", s, storetest.HashLiteral(s), embedding.Hash{}.Model()); err != nil {
			t.Fatal(i, err)
		}
	}
	// speakers and roles taking turns, and a spread of times
	if _, err := conn.Exec(ctx, `update agentmem.messages set
		name = case when seq % 2 = 0 then 'Maria' else 'John' end,
		role = case when seq % 3 = 0 then 'assistant' else 'user' end,
		created_at = now() - interval '1 day' * (seq % 5)
		where user_id = $1`, user); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `update agentmem.memories set created_at = now() - interval '1 day' * (length(content) % 5)
		where user_id = $1`, user); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "analyze agentmem.messages, agentmem.memories"); err != nil {
		t.Fatal(err)
	}

	// the one statement as it was before the lists could be asked apart
	before, err := os.ReadFile("testdata/recall_sources_one_statement.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, string(before)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "grant execute on function agentmem.recall_sources_one_statement to "+store.CallerRole); err != nil {
		t.Fatal(err)
	}
	// asBefore is what that statement answers for p, ranking the scope exactly below limit, as
	// "source id score relevance shared" lines (the floats to their last bit)
	r := store.DefaultRanking
	asBefore := func(p store.RecallParams, limit int) string {
		t.Helper()
		filter := string(p.Filter)
		if filter == "" || filter == "null" {
			filter = "{}"
		}
		var out []string
		err := asRole(t, conn, store.CallerRole, map[string]any{"sub": user, "role": "authenticated"}, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `select source, id, score, relevance, shared from agentmem.recall_sources_one_statement(
				p_source => $1, p_query => $2, query_embedding => $3::extensions.vector, query_model => $4, p_user_id => $5,
				p_tenant_id => '', p_agent => $6, p_filter => $7::jsonb, p_mode => $8, candidates => $9, text_weight => $10,
				vector_weight => $11, rrf_k => $12, min_score => $13, p_k => $14, exact_limit => $15, with_vectors => false,
				p_since => $16, p_until => $17, p_speaker => $18, p_role => $19, follow_weight => $20, min_relevance => $21,
				vector_baseline => $22, relevance_weight => $23, with_shared => $24)`,
				p.Source, p.Query, p.QueryVector, p.Model, user, p.Scope.Agent, filter, p.Mode, max(2*p.K, 20), r.TextWeight,
				r.VectorWeight, r.RRFK, p.MinScore, p.K, limit, p.Since, p.Until, p.Speaker, p.Role, r.FollowWeight,
				p.MinRelevance, p.VectorBaseline, r.RelevanceWeight, p.IncludeShared)
			if err != nil {
				return err
			}
			out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
				var h memory.Hit
				err := row.Scan(&h.Source, &h.ID, &h.Score, &h.Relevance, &h.Shared)
				return hitLine(h), err
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(out, "")
	}

	tr := &armTracer{}
	traced := storetest.Config(func(c *store.Config) { c.ConnConfig = func(cc *pgx.ConnConfig) { cc.Tracer = tr } })
	type pair struct {
		name      string
		limit     int
		one, many *store.Store
	}
	var pairs []pair
	for _, limit := range []int{100_000, 50} { // exact, and through the indexes
		r := storetest.Ranking(store.Ranking{ExactLimit: limit})
		pairs = append(pairs, pair{fmt.Sprintf("exact limit %d", limit), limit,
			storetest.Open(t, db, storetest.MaxConns(1), r),
			storetest.Open(t, db, storetest.MaxConns(4), r, traced, storetest.Config(func(c *store.Config) { c.ListsAtOnce = store.ListsAtOnceAlways }))})
	}

	h := embedding.Hash{}
	since, until := time.Now().Add(-60*time.Hour), time.Now().Add(-12*time.Hour)
	lambda := 0.5
	variants := map[string]func(p *store.RecallParams){
		"plain":          func(*store.RecallParams) {},
		"speaker":        func(p *store.RecallParams) { p.Speaker = "maria" },
		"role":           func(p *store.RecallParams) { p.Role = memory.RoleAssistant },
		"time range":     func(p *store.RecallParams) { p.Since, p.Until = &since, &until },
		"filter":         func(p *store.RecallParams) { p.Filter = json.RawMessage(`{"k": "a"}`) },
		"shared":         func(p *store.RecallParams) { p.IncludeShared = true },
		"min score":      func(p *store.RecallParams) { p.MinScore = 0.03 },
		"min relevance":  func(p *store.RecallParams) { p.MinRelevance = 0.2 },
		"mmr":            func(p *store.RecallParams) { p.MMRLambda = &lambda },
		"k 3":            func(p *store.RecallParams) { p.K = 3 },
		"other agent":    func(p *store.RecallParams) { p.Scope.Agent = "mail" },
		"no such words":  func(p *store.RecallParams) { p.Query = "zeppelin quasar" },
		"all but shared": func(p *store.RecallParams) { p.IncludeShared, p.K = true, 25 },
		// one list of each source
		"text":   func(p *store.RecallParams) { p.Mode = memory.ModeText },
		"vector": func(p *store.RecallParams) { p.Mode = memory.ModeVector },
		// the provider failed: hybrid by text alone
		"no query vector": func(p *store.RecallParams) { p.QueryVector = nil },
	}
	asked, found, fused, skipped := 0, 0, 0, 0 // fused: the recalls of two lists or more; skipped: of none
	for _, pr := range pairs {
		for name, vary := range variants {
			for _, source := range []string{memory.SourceMemories, memory.SourceMessages, memory.SourceAll} {
				for q := range 6 {
					query := text(2 + q%3)
					p := store.RecallParams{Scope: memory.Scope{UserID: user, Agent: "chat"}, Source: source,
						Query: query, K: 10, Mode: memory.ModeHybrid, Model: h.Model(),
						VectorBaseline: embedding.SimilarityBaseline(h.Model())}
					lits, err := store.VectorLiterals([][]float32{h.Vector(p.Query)}, h.Dimensions())
					if err != nil {
						t.Fatal(err)
					}
					p.QueryVector = lits[0]
					vary(&p)
					if p.Query != query { // a variant's own query
						if lits, err = store.VectorLiterals([][]float32{h.Vector(p.Query)}, h.Dimensions()); err != nil {
							t.Fatal(err)
						}
						p.QueryVector = lits[0]
					}
					one, err := pr.one.Recall(ctx, p)
					if err != nil {
						t.Fatalf("%s, %s, %s, one statement: %v", pr.name, name, source, err)
					}
					many, err := pr.many.Recall(ctx, p)
					if err != nil {
						t.Fatalf("%s, %s, %s, arms at once: %v", pr.name, name, source, err)
					}
					asked++
					lists := 1 // of each source
					if p.Mode == memory.ModeHybrid && p.QueryVector != nil {
						lists = 2
					}
					switch {
					case source == memory.SourceMemories && (p.Speaker != "" || p.Role != ""):
						lists = 0 // memories have neither: nothing to ask
					case source == memory.SourceAll && p.Speaker == "" && p.Role == "":
						lists *= 2
					}
					if lists >= 2 {
						fused++
					}
					if lists == 0 {
						skipped++
					}
					if len(one) > 0 {
						found++
					}
					if !reflect.DeepEqual(one, many) {
						t.Errorf("%s, %s, %s, %q: arms at once answer\n%s\nnot as one statement:\n%s",
							pr.name, name, source, p.Query, hitKeys(many), hitKeys(one))
					}
					if p.MMRLambda == nil { // MMR reorders in Go
						if want := asBefore(p, pr.limit); hitKeys(many) != want {
							t.Errorf("%s, %s, %s, %q: arms at once answer\n%s\nnot as the one statement before them:\n%s",
								pr.name, name, source, p.Query, hitKeys(many), want)
						}
					}
				}
			}
		}
	}
	if found < asked*3/4 {
		t.Errorf("only %d of %d recalls found anything: the comparison proves little", found, asked)
	}
	// every recall of the pools of four went through the arms, none through the one statement
	if n := tr.calls("recall_fuse"); n != fused {
		t.Errorf("the pools of four fused %d of %d recalls", n, fused)
	}
	// and the others (one list) in one statement
	if n := tr.calls("recall_sources") + tr.calls("recall_memories"); n != asked-fused-skipped {
		t.Errorf("the pools of four asked %d recalls in one statement, not %d", n, asked-fused-skipped)
	}
	if tr.calls("recall_text_arm") < fused || tr.calls("recall_vector_arm") < fused {
		t.Errorf("arms asked: %d text, %d vector, for %d recalls", tr.calls("recall_text_arm"), tr.calls("recall_vector_arm"), fused)
	}
	if tr.most < 2 {
		t.Errorf("at most %d batch in flight at once: the arms ran one after the other", tr.most)
	}
}

// hitKeys lists hits as hitLine does.
func hitKeys(hits []memory.Hit) string {
	var b strings.Builder
	for _, h := range hits {
		b.WriteString(hitLine(h))
	}
	return b.String()
}

// hitLine is a hit's source, id, score and relevance (to their last bit) and whether it is
// shared, as a line.
func hitLine(h memory.Hit) string {
	rel := "none"
	if h.Relevance != nil {
		rel = strconv.FormatFloat(*h.Relevance, 'g', -1, 64)
	}
	return fmt.Sprintf("  %s %s %s %s shared=%v\n", h.Source, h.ID, strconv.FormatFloat(h.Score, 'g', -1, 64), rel, h.Shared)
}

// When the lists were asked apart, a candidate's row can be gone by the time the fusion reads
// it (erased, or expired meanwhile): agentmem.recall_fuse passes over it and reads the next
// candidates, so the answer still has k results when there are k candidates left; and it stops
// when the candidates run out.
func TestRecallFusePassesOverRowsGoneMeanwhile(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	conn := storetest.Admin(t, db.URL)
	ctx := t.Context()
	user := "auth0|fuse"
	storetest.SeedMessages(t, conn, user, "chat", []string{"one harbour", "two harbour", "three harbour", "four harbour"},
		[]string{"{}", "{}", "{}", "{}"})
	var sid string
	if err := conn.QueryRow(ctx, `select session_id::text from agentmem.messages where user_id = $1 limit 1`, user).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	// seq 2 expires now; a session that never was ranks first
	if _, err := conn.Exec(ctx, `update agentmem.messages set expires_at = now() - interval '1 second'
		where user_id = $1 and seq = 2`, user); err != nil {
		t.Fatal(err)
	}
	fuse := func(k int) string {
		t.Helper()
		var out string
		err := asRole(t, conn, store.CallerRole, map[string]any{"sub": user, "role": "authenticated"}, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `select coalesce(string_agg(seq::text, ' ' order by score desc), '')
				from agentmem.recall_fuse('text', $1, false, null, '', 1, 1, 50, -1, 0, 0, 0, $2, false,
				  array['message', 'message', 'message', 'message', 'message'],
				  array[gen_random_uuid(), $3::uuid, $3::uuid, $3::uuid, $3::uuid], array[1, 2, 1, 3, 4]::bigint[],
				  array[5, 4, 3, 2, 1]::float8[], array[1, 1, 1, 1, 1]::float8[], null, null, null, null)`,
				user, k, sid).Scan(&out)
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for k, want := range map[int]string{1: "1", 2: "1 3", 3: "1 3 4", 10: "1 3 4"} {
		if got := fuse(k); got != want {
			t.Errorf("k %d: the fusion read seqs %q, want %q", k, got, want)
		}
	}
}
