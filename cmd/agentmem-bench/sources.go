package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// sourcesRecallQueries is how many of W3-sources' queries are scored against an exact search.
const sourcesRecallQueries = 100

// sourcesVectors are the workload vectors of the W3-sources user's rows, for the exact search
// that scores recall@10.
type sourcesVectors struct {
	messages, memories [][]float32
}

// rebuiltIndexes are the full-text indexes dropped for W3-sources' bulk load and created again
// from their definitions (the HNSW indexes are made again by EnsureEmbeddingIndexes).
var rebuiltIndexes = []string{"memories_user_fts_idx", "messages_user_fts_idx"}

// loadSources loads W3-sources' data with COPY: the user's messages (in sessions of
// SourcesPerSession) and memories, and the other users' messages (one session each, the users
// of W3's memories), every row with its workload vector; the full-text and HNSW indexes of both
// tables are dropped for the load and made again after it.
func loadSources(ctx context.Context, db *benchDB, c *bench.SourcesCorpus, replace bool) (sourcesVectors, error) {
	var out sourcesVectors
	conn, err := db.admin(ctx)
	if err != nil {
		return out, err
	}
	defer conn.Close(ctx)
	// A partitioned table's index is written ON ONLY it; made again ON it, every partition gets one.
	rows, err := conn.Query(ctx, `select indexname, replace(indexdef, ' ON ONLY ', ' ON ') from pg_indexes where schemaname = 'agentmem'
		and tablename in ('memories', 'messages') and (indexdef like '%USING hnsw%' or indexname = any($1))`, rebuiltIndexes)
	if err != nil {
		return out, fmt.Errorf("list indexes: %w", err)
	}
	defs := map[string]string{}
	var name, def string
	if _, err := pgx.ForEachRow(rows, []any{&name, &def}, func() error { defs[name] = def; return nil }); err != nil {
		return out, fmt.Errorf("list indexes: %w", err)
	}
	for name := range defs {
		if _, err := conn.Exec(ctx, "drop index agentmem."+pgx.Identifier{name}.Sanitize()); err != nil {
			return out, err
		}
	}

	var emb bench.Embedder
	now := time.Now()
	expires := now.Add(retention)
	userSessions := (c.Rows + bench.SourcesPerSession - 1) / bench.SourcesPerSession
	perOther := (c.Rows + c.Others - 1) / c.Others
	var sessions [][]any
	var ids []uuid.UUID
	for s := range userSessions {
		sessions = append(sessions, []any{bench.SourcesSessionID(s), bench.SourcesUserID.String(), int64(bench.SourcesPerSession)})
		ids = append(ids, bench.SourcesSessionID(s))
	}
	for u := range c.Others {
		sessions = append(sessions, []any{bench.OtherSessionID(u), bench.UserID(u).String(), int64(perOther)})
		ids = append(ids, bench.OtherSessionID(u))
	}
	if replace {
		// An earlier kind's rows go first (their messages with their sessions), so that each
		// kind is measured among as many rows as the other.
		if _, err := conn.Exec(ctx, "delete from agentmem.sessions where id = any($1)", ids); err != nil {
			return out, fmt.Errorf("delete earlier sessions: %w", err)
		}
		if _, err := conn.Exec(ctx, "delete from agentmem.memories where user_id = $1", bench.SourcesUserID.String()); err != nil {
			return out, fmt.Errorf("delete earlier memories: %w", err)
		}
		if _, err := conn.Exec(ctx, "vacuum agentmem.sessions, agentmem.messages, agentmem.memories"); err != nil {
			return out, err
		}
	}
	sessionRows := make([][]any, len(sessions))
	for i, s := range sessions {
		sessionRows[i] = append(s, "", benchAgent, now.Add(-time.Hour), now, expires)
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"agentmem", "sessions"},
		[]string{"id", "user_id", "last_seq", "tenant_id", "agent", "created_at", "last_active_at", "expires_at"},
		pgx.CopyFromRows(sessionRows)); err != nil {
		return out, fmt.Errorf("copy sessions: %w", err)
	}

	out.messages = make([][]float32, c.Rows)
	out.memories = make([][]float32, c.Rows)
	m := 0
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"agentmem", "messages"},
		[]string{"session_id", "seq", "id", "tenant_id", "user_id", "agent", "role", "content", "token_estimate",
			"created_at", "expires_at", "embedding", "embedding_model"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if m >= 2*c.Rows {
				return nil, nil
			}
			var session, user uuid.UUID
			var seq int
			var text string
			if m < c.Rows { // the user's
				session, user, seq = bench.SourcesSessionID(m/bench.SourcesPerSession), bench.SourcesUserID, m%bench.SourcesPerSession
				text = bench.Join(c.MessageWords(m))
			} else {
				o := m - c.Rows
				session, user, seq = bench.OtherSessionID(o/perOther), bench.UserID(o/perOther), o%perOther
				text = c.OtherText(o)
			}
			vec := emb.Vector(text)
			if m < c.Rows {
				out.messages[m] = vec
			}
			row := []any{session, int64(seq + 1), uuid.New(), "", user.String(), benchAgent, bench.Role(seq), text,
				int32(memory.EstimateTokens(text, nil, nil, nil)), now.Add(-time.Duration(2*c.Rows-m) * time.Second), expires,
				pgvector.NewVector(vec), emb.Model()}
			m++
			return row, nil
		}))
	if err != nil {
		return out, fmt.Errorf("copy messages: %w", err)
	}
	empty := []byte("{}")
	m = 0
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"agentmem", "memories"},
		[]string{"tenant_id", "user_id", "agent", "content", "content_key", "metadata", "embedding",
			"embedding_model", "created_at", "updated_at", "expires_at"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if m >= c.Rows {
				return nil, nil
			}
			text := bench.Join(c.MemoryWords(m))
			out.memories[m] = emb.Vector(text)
			created := now.Add(-time.Duration(c.Rows-m) * time.Second)
			row := []any{"", bench.SourcesUserID.String(), "", text, store.ContentKey(text), empty,
				pgvector.NewVector(out.memories[m]), emb.Model(), created, created, expires}
			m++
			return row, nil
		}))
	if err != nil {
		return out, fmt.Errorf("copy memories: %w", err)
	}

	if _, err := conn.Exec(ctx, "set maintenance_work_mem = '3GB'"); err != nil {
		return out, err
	}
	for _, name := range rebuiltIndexes {
		if def, ok := defs[name]; ok {
			if _, err := conn.Exec(ctx, def); err != nil {
				return out, fmt.Errorf("create %s: %w", name, err)
			}
		}
	}
	// The workload model's HNSW indexes, as `agentmem index` makes them (and the built-in
	// model's, which the migrations made and the load dropped).
	for name, def := range defs {
		if !slices.Contains(rebuiltIndexes, name) {
			if _, err := conn.Exec(ctx, def); err != nil {
				return out, fmt.Errorf("create %s: %w", name, err)
			}
		}
	}
	if _, err := store.EnsureEmbeddingIndexes(ctx, conn, store.VectorModel{Name: emb.Model(), Dims: emb.Dimensions()}, false); err != nil {
		return out, err
	}
	if err := settle(ctx, conn, "agentmem.sessions, agentmem.messages, agentmem.memories"); err != nil {
		return out, err
	}
	rows, err = conn.Query(ctx, `select indexname from pg_indexes where schemaname = 'agentmem'
		and tablename in ('memories', 'messages') and (indexdef like '%USING hnsw%' or indexname = any($1))`, rebuiltIndexes)
	if err != nil {
		return out, err
	}
	hot, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return out, err
	}
	for i := range hot {
		hot[i] = "agentmem." + pgx.Identifier{hot[i]}.Sanitize()
	}
	return out, prewarm(ctx, conn, append(hot, "agentmem.messages_owner_created_idx", "agentmem.memories_owner_created_idx")...)
}

// sourceNames are the sources W3-sources asks, in the order of SourcePhases.
var sourceNames = []string{memory.SourceMemories, memory.SourceMessages, memory.SourceAll}

// runSources loads W3-sources' data, asks every query of each source in turn (vector mode, then
// the default hybrid mode), scores vector recall against an exact search, and commits turns
// into the user's sessions.
func runSources(ctx context.Context, cfg Config, db *benchDB, st *store.Store, sz bench.Sizes, kind string, replace bool) (*bench.W3Sources, error) {
	t0 := time.Now()
	c := bench.GenerateSources(bench.Stream(bench.StreamSources), sz.SourcesRows, sz.Users)
	if kind == bench.VectorsClustered {
		c = bench.GenerateClusteredSources(bench.Stream(bench.StreamSourcesClustered), sz.SourcesRows, sz.Users)
	}
	vecs, err := loadSources(ctx, db, c, replace)
	if err != nil {
		return nil, err
	}
	r := &bench.W3Sources{Vectors: c.Vectors, Rows: c.Rows, OtherMemories: sz.Users * sz.MemoriesPerUser, OtherMessages: c.Rows,
		LoadSeconds: time.Since(t0).Seconds()}
	cfg.logf("W3-sources: loaded and indexed in %.1fs", r.LoadSeconds)
	qr := bench.Stream(bench.StreamSourcesQueries)
	queries := bench.GenerateSourcesQueries(qr, sz.SourcesQueries, c)
	// Every query is asked of three sources in two modes: a short warm-up is enough.
	warm := bench.GenerateSourcesQueries(bench.Stream(bench.StreamWarmup), min(sz.WarmupQueries, 20), c)
	scope := memory.Scope{UserID: bench.SourcesUserID.String()}
	ask := func(ctx context.Context, source, mode, query string) ([]memory.Hit, error) {
		p, err := withQuery(ctx, bench.Embedder{}, store.RecallParams{Scope: scope, Source: source, Query: query, K: recallK, Mode: mode})
		if err != nil {
			return nil, err
		}
		return st.Recall(ctx, p)
	}
	// found[source][i] are the contents vector mode returned for query i.
	found := make([][][]string, len(sourceNames))
	for _, mode := range []string{memory.ModeVector, memory.ModeHybrid} {
		for _, q := range warm {
			for _, src := range sourceNames {
				if _, err := ask(ctx, src, mode, q.Text); err != nil {
					return nil, fmt.Errorf("warm-up, %s of %s: %w", mode, src, err)
				}
			}
		}
		lat := make([][]time.Duration, len(sourceNames))
		errs := make([]int, len(sourceNames))
		first := make([]string, len(sourceNames))
		elapsed := make([]time.Duration, len(sourceNames))
		for s := range found {
			found[s] = make([][]string, len(queries))
		}
		for i, q := range queries {
			for k := range sourceNames {
				s := (i + k) % len(sourceNames) // each source first as often as the others
				t := time.Now()
				hits, err := ask(ctx, sourceNames[s], mode, q.Text)
				d := time.Since(t)
				elapsed[s] += d
				if err != nil {
					errs[s]++
					if first[s] == "" {
						first[s] = err.Error()
					}
					continue
				}
				lat[s] = append(lat[s], d)
				if mode == memory.ModeVector {
					for _, h := range hits {
						found[s][i] = append(found[s][i], h.Content)
					}
				}
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
		ph := make([]bench.Phase, len(sourceNames))
		for s := range sourceNames {
			ph[s] = phase(1, len(queries), errs[s], first[s], elapsed[s], lat[s])
		}
		p := bench.SourcePhases{Memories: ph[0], Messages: ph[1], All: ph[2]}
		if mode == memory.ModeVector {
			r.Vector = p
			r.RecallQueries = min(len(queries), sourcesRecallQueries)
			r.RecallAt10Memories = sourcesRecallAt10(queries[:r.RecallQueries], found[0], vecs.memories)
			r.RecallAt10Messages = sourcesRecallAt10(queries[:r.RecallQueries], found[1], vecs.messages)
		} else {
			r.Hybrid = p
		}
	}
	if m := r.Hybrid.Memories.Latency.P50MS; m > 0 {
		r.MessagesToMemoriesP50 = r.Hybrid.Messages.Latency.P50MS / m
	}

	sessions := (c.Rows + bench.SourcesPerSession - 1) / bench.SourcesPerSession
	turns := bench.GenerateTurns(qr, 2*(len(queries)+sz.WarmupQueries), sessions)
	// commit commits turn i. Embedded at commit (MESSAGE_EMBEDDING=commit), the vectors go into
	// the HNSW index in the commit's transaction, as r.Commits has always measured; deferred
	// (the default, in the process and in template.yaml), the messages are stored without, and a
	// worker of the process embeds them after the answer: the index's insertions leave the
	// request (under Lambda, they finish in the same invocation, after its answer).
	commit := func(ctx context.Context, i int, deferred bool) error {
		tr := turns[i]
		p := store.CommitParams{Scope: memory.Scope{UserID: bench.SourcesUserID.String(), Agent: benchAgent},
			SessionID: bench.SourcesSessionID(tr.Session), TTL: retention,
			Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: tr.User}, {Role: memory.RoleAssistant, Content: tr.Assistant}}}
		if !deferred {
			vecs, err := literals(ctx, bench.Embedder{}, []string{tr.User, tr.Assistant})
			if err != nil {
				return err
			}
			p.MessageVectors, p.Model = vecs, bench.Embedder{}.Model()
		}
		_, _, err := st.CommitTurn(ctx, p)
		return err
	}
	// commits measures len(queries) commits after a warm-up, from turn base on
	commits := func(base int, deferred bool) bench.Phase {
		measure(ctx, 1, sz.WarmupQueries, func(ctx context.Context, i int) error { return commit(ctx, base+i, deferred) })
		return measure(ctx, 1, len(queries), func(ctx context.Context, i int) error {
			return commit(ctx, base+sz.WarmupQueries+i, deferred)
		})
	}
	r.Commits = commits(0, false)
	r.CommitsDeferred = commits(len(queries)+sz.WarmupQueries, true)
	return r, nil
}

// sourcesRecallAt10 is the mean share of each query's answer within the exact top 10 of the
// user's rows of one source by cosine distance (within 1e-6 of the 10th distance, or closer), as
// W3's recall@10 counts it.
func sourcesRecallAt10(queries []bench.SourcesQuery, found [][]string, rows [][]float32) float64 {
	if len(queries) == 0 {
		return 0
	}
	var emb bench.Embedder
	k := min(recallK, len(rows))
	ds := make([]float64, len(rows))
	var total float64
	for i, q := range queries {
		qv := emb.Vector(q.Text)
		for j, v := range rows {
			ds[j] = bench.CosineDistance(qv, v)
		}
		tenth := kthSmallest(ds, k)
		hits := 0
		for j, content := range found[i] {
			if j >= k {
				break
			}
			if bench.CosineDistance(qv, emb.Vector(content)) <= tenth+1e-6 {
				hits++
			}
		}
		total += float64(hits) / float64(k)
	}
	return total / float64(len(queries))
}

// kthSmallest is the k-th smallest of ds (1-based).
func kthSmallest(ds []float64, k int) float64 {
	best := make([]float64, 0, k+1)
	for _, d := range ds {
		if len(best) < k || d < best[len(best)-1] {
			i, _ := slices.BinarySearch(best, d)
			best = slices.Insert(best, i, d)
			if len(best) > k {
				best = best[:k]
			}
		}
	}
	return best[len(best)-1]
}
