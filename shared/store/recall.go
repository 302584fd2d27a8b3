package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/shared/memory"
)

// Ranking tunes recall and knowledge search. The zero value of a field means its default.
type Ranking struct {
	// TextWeight and VectorWeight weigh the full-text and vector ranks in hybrid fusion
	// (reciprocal rank fusion: weight / (RRFK + rank)); default 1 each.
	TextWeight, VectorWeight float64
	// RRFK is the rank constant of fusion; default 50 (as Supabase's hybrid search). A larger
	// one flattens the difference between the first ranks.
	RRFK int
	// ExactLimit: a user with fewer memories than this is ranked exactly (always the true top
	// k, whatever the filters); a larger one through the model's HNSW index with iterative
	// scans. Default 2,000.
	ExactLimit int
	// FollowWeight is the share of a message's full-text score credited to the message that
	// follows it in its session (agentmem.message_bm25_hits): the answer to a question that
	// matches the query ranks beside the question. Default memory.DefaultFollowWeight; negative: none.
	FollowWeight float64
	// RelevanceWeight adds that share of a result's relevance to its fused score in hybrid
	// recall, so that results fusion ranks nearly alike (one that full text scores far above
	// the next, one that barely wins) are ordered by how much of the query each holds.
	// Default DefaultRelevanceWeight; negative: none.
	RelevanceWeight float64
}

// DefaultRelevanceWeight is Ranking.RelevanceWeight's default, chosen on the quality benchmark
// (cmd/agentmem-bench, -only quality): labelled facts' hybrid MRR 0.866 to 0.876, the
// conversations' hit@5 0.515 to 0.517 and hit@10 0.613 unchanged. Fusion's scores differ by
// 1/51 - 1/52 = 0.0004 between the first two ranks of a list, so 0.01 x relevance reorders
// near ties and few others.
const DefaultRelevanceWeight = 0.01

// DefaultRanking is the ranking of a store whose Config leaves Ranking empty.
var DefaultRanking = Ranking{TextWeight: memory.DefaultTextWeight, VectorWeight: memory.DefaultVectorWeight,
	RRFK: memory.DefaultRRFK, ExactLimit: memory.DefaultExactLimit, FollowWeight: memory.DefaultFollowWeight,
	RelevanceWeight: DefaultRelevanceWeight}

// orDefaults fills the unset fields of r from DefaultRanking.
func (r Ranking) orDefaults() Ranking {
	d := DefaultRanking
	if r.TextWeight > 0 {
		d.TextWeight = r.TextWeight
	}
	if r.VectorWeight > 0 {
		d.VectorWeight = r.VectorWeight
	}
	if r.RRFK > 0 {
		d.RRFK = r.RRFK
	}
	if r.ExactLimit > 0 {
		d.ExactLimit = r.ExactLimit
	}
	switch {
	case r.FollowWeight > 0:
		d.FollowWeight = r.FollowWeight
	case r.FollowWeight < 0:
		d.FollowWeight = 0
	}
	switch {
	case r.RelevanceWeight > 0:
		d.RelevanceWeight = r.RelevanceWeight
	case r.RelevanceWeight < 0:
		d.RelevanceWeight = 0
	}
	return d
}

// RecallParams is a search over a user's long-term memories, past messages, or both.
type RecallParams struct {
	// Scope.Agent, when set, limits the search to that agent's and agent-less memories, and to
	// that agent's messages.
	Scope memory.Scope
	// IncludeShared also ranks the shared memories of the scope's tenant (memory.Scope.Shared),
	// as one corpus with the user's own; their hits are marked Shared.
	IncludeShared bool
	// Source is memory.SourceMemories (the default, also ""), SourceMessages or SourceAll.
	Source string
	Query  string
	K      int
	// Mode is memory.ModeHybrid, ModeVector or ModeText.
	Mode string
	// Filter, a JSON object or nil, keeps memories and messages whose top-level metadata keys
	// equal its values.
	Filter json.RawMessage
	// MinScore drops results scoring below it.
	MinScore float64
	// MinRelevance drops results whose relevance (memory.Hit.Relevance, 0 to 1) is below it.
	MinRelevance float64
	// Since and Until, when set, keep memories and messages created in [Since, Until).
	Since, Until *time.Time
	// Speaker and Role, when set, keep the messages of that speaker (their name, compared
	// case-insensitively) and role; memories, which have neither, are then left out (with
	// SourceMemories, nothing is found).
	Speaker, Role string
	// MMRLambda, when set (0 to 1), diversifies the answer by maximal marginal relevance among
	// the best candidates: each next result maximises lambda x relevance - (1 - lambda) x its
	// greatest cosine similarity to the results already chosen. 1 keeps the ranking's order.
	MMRLambda *float64

	// QueryVector is the query's vector, a pgvector literal of model Model (see VectorLiterals),
	// embedded by the caller; nil when there is none (mode text, or the provider failed: hybrid
	// then ranks by full text alone). Mode vector needs one.
	QueryVector *string
	// Model is the embedding model of QueryVector: only vectors of that model (and of the query
	// vector's dimension) rank.
	Model string
	// VectorBaseline is the cosine similarity Model's vectors of unrelated texts reach
	// (embedding.SimilarityBaseline): a result's relevance credits its vector's similarity
	// only above it, as (similarity - baseline) / (1 - baseline). 0: the similarity itself.
	VectorBaseline float64
}

// Recall searches the user's unexpired memories, messages, or both (p.Source), best first (or
// diversified, with MMRLambda); every hit names its source. Only vectors of p.Model and of the
// query vector's dimension rank. Without p.QueryVector (the caller's provider failed), hybrid
// recall ranks by full text alone.
func (s *Store) Recall(ctx context.Context, p RecallParams) ([]memory.Hit, error) {
	switch p.Source {
	case "":
		p.Source = memory.SourceMemories
	case memory.SourceMemories, memory.SourceMessages, memory.SourceAll:
	default:
		return nil, fmt.Errorf("recall: unknown source %q", p.Source)
	}
	p, err := prepareRecall(p)
	if err != nil {
		return nil, err
	}
	if p.Source == memory.SourceMemories && (p.Speaker != "" || p.Role != "") {
		return []memory.Hit{}, nil // memories have neither speaker nor role
	}
	atOnce := s.fansOut(p) // once: the pool and what the store learned change meanwhile
	query, args := recallStatement, s.recallArgs(p)
	if p.Source != memory.SourceMemories || atOnce {
		query = recallSourcesStatement
		args["source"], args["speaker"], args["role"], args["follow_weight"] = p.Source, p.Speaker, p.Role, s.ranking.FollowWeight
	}
	var hits []memory.Hit
	if atOnce {
		hits, err = s.recallArmsAtOnce(ctx, p, args)
	} else {
		start := time.Now()
		err = s.batchInScope(ctx, p.Scope, func(b *pgx.Batch) {
			b.Queue(query.sql, query.args(args)...).Query(func(rows pgx.Rows) error {
				hits, err = recallHits(rows, p)
				return err
			})
		})
		if err == nil {
			s.noteOneStatement(p, time.Since(start))
		}
	}
	if p.Source == memory.SourceMemories {
		for i := range hits {
			hits[i].Source = memory.HitMemory
		}
	}
	return hits, err
}

func prepareRecall(p RecallParams) (RecallParams, error) {
	if p.Mode == "" {
		p.Mode = memory.ModeHybrid
	}
	if p.Mode == memory.ModeText {
		p.QueryVector = nil
	}
	if p.Mode == memory.ModeVector && p.QueryVector == nil {
		return p, errors.New("recall: mode vector needs a query vector")
	}
	// Without a query vector, hybrid ranks by full text alone: degraded, not failed.
	if len(p.Filter) == 0 || string(p.Filter) == "null" {
		p.Filter = json.RawMessage("{}")
	}
	return p, nil
}

// The candidates of each ranked list: enough that fusion has room to reorder.
func candidates(k int) int { return max(2*k, 20) }

// mmrPool is how many of the best results MMR chooses from.
func mmrPool(k int) int { return min(max(4*k, 20), 200) }

// recallSQL ranks by full text, by vector distance, or fuses both ranks: see the function
// agentmem.recall_memories (migrations store_vectors_of_any_model and
// credit_vectors_above_baseline). Being PL/pgSQL, it is
// planned once per connection rather than at every call. The user is filtered explicitly (so
// the owner index finds the rows) as well as by row-level security.
const recallSQL = `select id, content, score, metadata, created_at, relevance, embedding::text, shared
from agentmem.recall_memories(p_query => @query::text, query_embedding => @query_embedding::extensions.vector,
  query_model => @query_model::text, p_user_id => @user_id::text, p_tenant_id => @tenant_id::text, p_agent => @agent::text,
  p_filter => @filter::jsonb, p_mode => @mode::text, candidates => @candidates::int, text_weight => @text_weight::float8,
  vector_weight => @vector_weight::float8, rrf_k => @rrf_k::int, min_score => @min_score::float8, p_k => @k::int,
  exact_limit => @exact_limit::int, with_vectors => @with_vectors::boolean, p_since => @since::timestamptz,
  p_until => @until::timestamptz, min_relevance => @min_relevance::float8, vector_baseline => @vector_baseline::float8,
  relevance_weight => @relevance_weight::float8, with_shared => @with_shared::boolean)`

// recallSourcesSQL is recallSQL over messages, or memories and messages as one ranking (@source),
// with recallSQL's arguments and four more: see the function agentmem.recall_sources (migrations
// rank_words_by_bm25, credit_vectors_above_baseline and share_memories_within_a_tenant).
const recallSourcesSQL = `select source, id, session_id, seq, role, name, content, score, metadata, created_at,
  relevance, embedding::text, shared
from agentmem.recall_sources(p_source => @source::text, p_since => @since::timestamptz, p_until => @until::timestamptz,
  min_relevance => @min_relevance::float8, p_speaker => @speaker::text, p_role => @role::text, follow_weight => @follow_weight::float8, p_query => @query::text,
  query_embedding => @query_embedding::extensions.vector, query_model => @query_model::text, p_user_id => @user_id::text,
  p_tenant_id => @tenant_id::text, p_agent => @agent::text, p_filter => @filter::jsonb, p_mode => @mode::text,
  candidates => @candidates::int, text_weight => @text_weight::float8, vector_weight => @vector_weight::float8, rrf_k => @rrf_k::int,
  min_score => @min_score::float8, p_k => @k::int, exact_limit => @exact_limit::int, with_vectors => @with_vectors::boolean,
  vector_baseline => @vector_baseline::float8, relevance_weight => @relevance_weight::float8, with_shared => @with_shared::boolean)`

func (s *Store) recallArgs(p RecallParams) pgx.NamedArgs {
	var emb *string
	if p.QueryVector != nil {
		emb = p.QueryVector
	}
	k, cands := p.K, candidates(p.K)
	if p.MMRLambda != nil {
		k = mmrPool(p.K)
		cands = max(cands, k)
	}
	r := s.ranking
	return pgx.NamedArgs{"query": p.Query, "query_embedding": emb, "query_model": p.Model, "user_id": p.Scope.UserID,
		"tenant_id": p.Scope.TenantID, "agent": p.Scope.Agent, "filter": string(p.Filter), "mode": p.Mode,
		"candidates": cands, "text_weight": r.TextWeight, "vector_weight": r.VectorWeight, "rrf_k": r.RRFK,
		"min_score": p.MinScore, "k": k, "exact_limit": r.ExactLimit, "with_vectors": p.MMRLambda != nil,
		"since": p.Since, "until": p.Until, "min_relevance": p.MinRelevance, "vector_baseline": p.VectorBaseline,
		"relevance_weight": r.RelevanceWeight, "with_shared": p.IncludeShared}
}

// recallHits reads the rows of recallSQL (or, for a source other than memories, of
// recallSourcesSQL), best first, diversified when p asks for MMR.
func recallHits(rows pgx.Rows, p RecallParams) ([]memory.Hit, error) {
	var hits []memory.Hit
	var vecs [][]float32
	var h memory.Hit
	var vec *string
	dest := []any{&h.ID, &h.Content, &h.Score, &h.Metadata, &h.CreatedAt, &h.Relevance, &vec, &h.Shared}
	if p.Source == memory.SourceMessages || p.Source == memory.SourceAll {
		dest = []any{&h.Source, &h.ID, &h.SessionID, &h.Seq, &h.Role, &h.Name, &h.Content, &h.Score, &h.Metadata, &h.CreatedAt, &h.Relevance, &vec, &h.Shared}
	}
	_, err := pgx.ForEachRow(rows, dest, func() error {
		h.CreatedAt = h.CreatedAt.UTC()
		if len(h.Metadata) == 0 || string(h.Metadata) == "null" {
			h.Metadata = json.RawMessage(`{}`) // a message committed without, as get-context gives it
		}
		hits = append(hits, h)
		h = memory.Hit{} // the next row's pointers are its own
		var v pgvector.Vector
		if vec != nil && p.MMRLambda != nil {
			if err := v.Scan(*vec); err != nil {
				return err
			}
		}
		vecs = append(vecs, v.Slice())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recall: %w", err)
	}
	if hits == nil {
		return []memory.Hit{}, nil
	}
	if p.MMRLambda != nil {
		order := memory.MMR(scores(hits), vecs, *p.MMRLambda, p.K)
		out := make([]memory.Hit, len(order))
		for i, j := range order {
			out[i] = hits[j]
		}
		return out, nil
	}
	return hits, nil
}

func scores(hits []memory.Hit) []float64 {
	out := make([]float64, len(hits))
	for i, h := range hits {
		out[i] = h.Score
	}
	return out
}

// MessageTurnsAround returns, for each place (a message's session and seq), the unexpired
// messages of the scope's user within n seqs before and after it in its session, the place's
// own message left out, in seq order.
func (s *Store) MessageTurnsAround(ctx context.Context, sc memory.Scope, places []memory.Place, n int) (map[memory.Place][]memory.Turn, error) {
	out := make(map[memory.Place][]memory.Turn, len(places))
	if len(places) == 0 || n < 1 {
		return out, nil
	}
	sessions := make([]uuid.UUID, len(places))
	seqs := make([]int64, len(places))
	for i, p := range places {
		sessions[i], seqs[i] = p.SessionID, p.Seq
	}
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(turnsAroundSQL, sessions, seqs, n, sc.UserID, sc.TenantID).Query(func(rows pgx.Rows) error {
			clear(out) // filled afresh: a read a replica failed runs again on the primary
			var at memory.Place
			var t memory.Turn
			_, err := pgx.ForEachRow(rows, []any{&at.SessionID, &at.Seq, &t.Seq, &t.Role, &t.Name, &t.Content, &t.CreatedAt}, func() error {
				t.CreatedAt = t.CreatedAt.UTC()
				out[at] = append(out[at], t)
				t = memory.Turn{}
				return nil
			})
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("turns around: %w", err)
	}
	return out, nil
}

// turnsAroundSQL reads the turns around places ($1 sessions, $2 seqs), $3 on each side, of
// the user and tenant ($4, $5), repeated beside row-level security so the indexes serve it.
const turnsAroundSQL = `select h.session_id, h.seq, m.seq, m.role, m.name, m.content, m.created_at
from unnest($1::uuid[], $2::bigint[]) as h(session_id, seq)
  join agentmem.messages m on m.session_id = h.session_id
   and m.seq between h.seq - $3::int and h.seq + $3::int and m.seq <> h.seq
where m.user_id = $4::text and m.tenant_id = $5::text and m.expires_at > now()
order by h.session_id, h.seq, m.seq`
