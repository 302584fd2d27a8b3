package store

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"golang.org/x/sync/errgroup"

	"github.com/agentmem/agentmem/shared/memory"
)

// A hybrid recall ranks the scope's rows twice, by BM25 and by vector distance, and fuses the
// two lists; a recall of source all ranks memories and messages apart; no list needs another.
// For a scope whose recalls are slow (ListsAtOnce), and when the pool has a connection free for
// each list, Recall asks each list on a connection of its own, at once, and fuses them in one
// more statement: the recall then waits for its slowest list rather than for all of them in
// turn. The same functions rank the lists and fuse them as in the one statement
// (agentmem.recall_sources, agentmem.recall_memories; migration rank_recalls_arms_apart), so on
// a database that does not change meanwhile the answer is the same to the last bit. The server
// does the same work, plus the fusing statement, and each list counts the scope's rows again
// (at most RECALL_EXACT_LIMIT index entries). Each list is its own transaction: a row erased
// or expired between a list and the fusion is passed over for the next candidate
// (agentmem.recall_fuse), and a row rewritten meanwhile is read as it is then.

// recallTextArmSQL is one source's full-text candidates (agentmem.recall_text_arm).
const recallTextArmSQL = `select src, k1, k2, score, relevance
from agentmem.recall_text_arm(p_source => @source::text, p_query => @query::text, p_user_id => @user_id::text,
  p_tenant_id => @tenant_id::text, p_agent => @agent::text, p_filter => @filter::jsonb, p_since => @since::timestamptz,
  p_until => @until::timestamptz, p_speaker => @speaker::text, p_role => @role::text, candidates => @candidates::int,
  exact_limit => @exact_limit::int, follow_weight => @follow_weight::float8, with_shared => @with_shared::boolean)`

// recallVectorArmSQL is one source's nearest candidates (agentmem.recall_vector_arm).
const recallVectorArmSQL = `select src, k1, k2, distance
from agentmem.recall_vector_arm(p_source => @source::text, query_embedding => @query_embedding::extensions.vector,
  query_model => @query_model::text, p_user_id => @user_id::text, p_tenant_id => @tenant_id::text, p_agent => @agent::text,
  p_filter => @filter::jsonb, p_since => @since::timestamptz, p_until => @until::timestamptz, p_speaker => @speaker::text,
  p_role => @role::text, candidates => @candidates::int, exact_limit => @exact_limit::int, with_shared => @with_shared::boolean)`

// recallFuseSQL is the answer from the arms' candidates (agentmem.recall_fuse), in the rows of
// recallSourcesSQL.
const recallFuseSQL = `select source, id, session_id, seq, role, name, content, score, metadata, created_at,
  relevance, embedding::text, shared
from agentmem.recall_fuse(p_mode => @mode::text, p_user_id => @user_id::text, with_shared => @with_shared::boolean,
  query_embedding => @query_embedding::extensions.vector, query_model => @query_model::text,
  text_weight => @text_weight::float8, vector_weight => @vector_weight::float8, rrf_k => @rrf_k::int,
  min_score => @min_score::float8, min_relevance => @min_relevance::float8, vector_baseline => @vector_baseline::float8,
  relevance_weight => @relevance_weight::float8, p_k => @k::int, with_vectors => @with_vectors::boolean,
  text_src => @text_src::text[], text_k1 => @text_k1::uuid[], text_k2 => @text_k2::int8[],
  text_score => @text_score::float8[], text_relevance => @text_relevance::float8[],
  vector_src => @vector_src::text[], vector_k1 => @vector_k1::uuid[], vector_k2 => @vector_k2::int8[],
  vector_distance => @vector_distance::float8[])`

// armHits are the candidates of one or more arms, as the parallel arrays recallFuseSQL takes:
// score and relevance for the text arm's, distance (in score) for the vector arm's.
type armHits struct {
	src       []string
	k1        [][16]byte
	k2        []int64
	score     []pgtype.Float8
	relevance []pgtype.Float8
}

func (a *armHits) add(b armHits) {
	a.src = append(a.src, b.src...)
	a.k1 = append(a.k1, b.k1...)
	a.k2 = append(a.k2, b.k2...)
	a.score = append(a.score, b.score...)
	a.relevance = append(a.relevance, b.relevance...)
}

// recallLists are the lists p ranks: its sources (memories have neither speaker nor role: with
// either, the messages alone), and whether by text and by vector.
func recallLists(p RecallParams) (sources []string, text, vector bool) {
	switch {
	case p.Source == memory.SourceMemories:
		sources = []string{memory.SourceMemories}
	case p.Source == memory.SourceAll && p.Speaker == "" && p.Role == "":
		sources = []string{memory.SourceMemories, memory.SourceMessages}
	default:
		sources = []string{memory.SourceMessages}
	}
	return sources, p.Mode != memory.ModeVector, p.Mode != memory.ModeText && p.QueryVector != nil
}

// ListsAtOnce chooses when a recall of two lists or more (hybrid, or both sources) asks each on
// a connection of its own, at once. In every case it needs a connection free in the pool for
// each list (idle, or room for a new one), else it asks them in one statement.
type ListsAtOnce int

const (
	// ListsAtOnceAuto asks at once the recalls of a scope (a user's source) whose recalls are
	// slow: one that took ListsAtOnceAfter or more in one statement, or whose lists took that
	// long together when asked at once, makes the next ones at once; one faster than that makes
	// them one statement again. What it learns of a scope is kept for scopeMemoTTL. A small
	// scope's lists take well under a millisecond each, and asking them apart would add more
	// (a round trip and a transaction each, and the fusion's) than it saves.
	ListsAtOnceAuto ListsAtOnce = iota
	// ListsAtOnceAlways asks them at once whenever the pool has the connections.
	ListsAtOnceAlways
	// ListsAtOnceNever asks them in one statement.
	ListsAtOnceNever
)

// ListsAtOnceAfter is how long a recall in one statement must take for ListsAtOnceAuto to ask
// its scope's next recalls at once.
const ListsAtOnceAfter = 3 * time.Millisecond

// listCount is how many lists p ranks.
func listCount(p RecallParams) int {
	sources, text, vector := recallLists(p)
	n := 0
	for _, k := range []bool{text, vector} {
		if k {
			n += len(sources)
		}
	}
	return n
}

// fansOut reports whether Recall asks p's lists at once (see ListsAtOnce).
func (s *Store) fansOut(p RecallParams) bool {
	lists := listCount(p)
	if lists < 2 || s.listsAtOnce == ListsAtOnceNever {
		return false
	}
	if s.listsAtOnce == ListsAtOnceAuto && !s.slowScopes.get(scopeKey(p)) {
		return false
	}
	// a connection for each list (so never from a pool of one)
	st := s.pool.Stat()
	return int(st.IdleConns())+int(st.MaxConns()-st.TotalConns()) >= lists
}

// scopeKey names the scope whose recalls ListsAtOnceAuto learns of: the user and source.
func scopeKey(p RecallParams) string {
	return p.Scope.TenantID + "\x00" + p.Scope.UserID + "\x00" + p.Source
}

// scopeMemo remembers, for a while, which scopes' recalls are slow enough to ask their lists at
// once. It holds at most scopeMemoMax scopes: when full, it forgets the expired ones, and all of
// them if none has expired.
type scopeMemo struct {
	mu sync.Mutex
	m  map[string]scopeNote
}

type scopeNote struct {
	slow  bool
	until time.Time
}

const (
	scopeMemoTTL = 5 * time.Minute
	scopeMemoMax = 10_000
)

func (m *scopeMemo) get(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.m[key]
	return ok && n.slow && time.Now().Before(n.until)
}

func (m *scopeMemo) set(key string, slow bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = make(map[string]scopeNote)
	}
	if _, ok := m.m[key]; !ok && len(m.m) >= scopeMemoMax {
		now := time.Now()
		for k, n := range m.m {
			if !now.Before(n.until) {
				delete(m.m, k)
			}
		}
		if len(m.m) >= scopeMemoMax {
			clear(m.m)
		}
	}
	m.m[key] = scopeNote{slow: slow, until: time.Now().Add(scopeMemoTTL)}
}

// noteOneStatement learns from a recall of p asked in one statement, which took took.
func (s *Store) noteOneStatement(p RecallParams, took time.Duration) {
	if s.listsAtOnce == ListsAtOnceAuto && took >= s.listsAtOnceAfter && listCount(p) >= 2 {
		s.slowScopes.set(scopeKey(p), true)
	}
}

// recallArmsAtOnce is Recall's answer through its lists asked at once (see fansOut); args are
// recallArgs' with recallSourcesSQL's four more.
func (s *Store) recallArmsAtOnce(ctx context.Context, p RecallParams, args pgx.NamedArgs) ([]memory.Hit, error) {
	sources, withText, withVector := recallLists(p)
	text := make([]armHits, len(sources))
	vector := make([]armHits, len(sources))
	took := make([]time.Duration, 2*len(sources)) // each list's
	g, gctx := errgroup.WithContext(ctx)
	for i, src := range sources {
		a := make(pgx.NamedArgs, len(args)+1)
		for k, v := range args {
			a[k] = v
		}
		a["source"] = src
		ask := func(j int, st namedStatement, out *armHits, withRelevance bool) {
			g.Go(func() error {
				start := time.Now()
				err := s.recallArm(gctx, p.Scope, st, a, out, withRelevance)
				took[j] = time.Since(start)
				return err
			})
		}
		if withText {
			ask(2*i, recallTextArmStatement, &text[i], true)
		}
		if withVector {
			ask(2*i+1, recallVectorArmStatement, &vector[i], false)
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if s.listsAtOnce == ListsAtOnceAuto {
		// the lists in turn would have taken about their sum
		var sum time.Duration
		for _, d := range took {
			sum += d
		}
		s.slowScopes.set(scopeKey(p), sum >= s.listsAtOnceAfter)
	}
	var t, v armHits
	for i := range sources {
		t.add(text[i])
		v.add(vector[i])
	}
	args["text_src"], args["text_k1"], args["text_k2"], args["text_score"], args["text_relevance"] =
		t.src, t.k1, t.k2, t.score, t.relevance
	args["vector_src"], args["vector_k1"], args["vector_k2"], args["vector_distance"] = v.src, v.k1, v.k2, v.score
	read := p
	read.Source = memory.SourceAll // recallFuseSQL's rows are recallSourcesSQL's
	var hits []memory.Hit
	err := s.batchInScope(ctx, p.Scope, func(b *pgx.Batch) {
		b.Queue(recallFuseStatement.sql, recallFuseStatement.args(args)...).Query(func(rows pgx.Rows) error {
			var err error
			hits, err = recallHits(rows, read)
			return err
		})
	})
	return hits, err
}

// recallArm reads one arm's candidates into out; withRelevance: the text arm's rows (src, k1,
// k2, score, relevance), else the vector arm's (src, k1, k2, distance).
func (s *Store) recallArm(ctx context.Context, sc memory.Scope, st namedStatement, args pgx.NamedArgs, out *armHits, withRelevance bool) error {
	return s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(st.sql, st.args(args)...).Query(func(rows pgx.Rows) error {
			*out = armHits{} // a batch retried on the primary reads its rows again
			var src string
			var k1 [16]byte
			var k2 int64
			var score, relevance pgtype.Float8 // a NULL passes on as NULL, as within one statement
			dest := []any{&src, &k1, &k2, &score}
			if withRelevance {
				dest = append(dest, &relevance)
			}
			_, err := pgx.ForEachRow(rows, dest, func() error {
				out.src, out.k1, out.k2, out.score = append(out.src, src), append(out.k1, k1), append(out.k2, k2), append(out.score, score)
				if withRelevance {
					out.relevance = append(out.relevance, relevance)
				}
				return nil
			})
			return err
		})
	})
}
