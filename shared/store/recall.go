package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
)

// Ranking constants of hybrid search (reciprocal rank fusion, as Supabase's hybrid search).
const (
	rrfK         = 50
	textWeight   = 1.0
	vectorWeight = 1.0
)

// RecallParams is a search over a user's long-term memories.
type RecallParams struct {
	// Scope.Agent, when set, limits the search to that agent's and agent-less memories.
	Scope memory.Scope
	Query string
	K     int
	// Mode is memory.ModeHybrid, ModeVector or ModeText.
	Mode string
	// Filter, a JSON object or nil, keeps memories whose top-level metadata keys equal its values.
	Filter json.RawMessage
	// MinScore drops results scoring below it.
	MinScore float64

	embedding string
	// model is the embedding model of the query vector: only vectors of that model rank.
	model string
}

// Recall searches the user's unexpired memories, best first. Only vectors of the configured
// model rank. When the embedding provider fails, hybrid recall ranks by full text alone and
// vector recall answers unavailable.
func (s *Store) Recall(ctx context.Context, p RecallParams) ([]memory.Hit, error) {
	p, err := s.prepareRecall(ctx, p)
	if err != nil {
		return nil, err
	}
	var hits []memory.Hit
	err = s.batchInScope(ctx, p.Scope, func(b *pgx.Batch) {
		b.Queue(recallSQL, recallArgs(p)...).Query(func(rows pgx.Rows) error {
			hits, err = scanHits(rows)
			return err
		})
	})
	return hits, err
}

func (s *Store) prepareRecall(ctx context.Context, p RecallParams) (RecallParams, error) {
	if p.Mode == "" {
		p.Mode = memory.ModeHybrid
	}
	if p.Mode != memory.ModeText {
		var err error
		p.embedding, err = s.embedQuery(ctx, p.Query)
		if err := callerGone(ctx); err != nil {
			return p, err
		}
		if err != nil && p.Mode == memory.ModeVector {
			return p, vectorSearchUnavailable(err)
		}
		// Without a query vector, hybrid ranks by full text alone: degraded, not failed.
	}
	p.model = s.embedder.Model()
	if len(p.Filter) == 0 || string(p.Filter) == "null" {
		p.Filter = json.RawMessage("{}")
	}
	return p, nil
}

// The candidates of each ranked list: enough that fusion has room to reorder.
func candidates(k int) int { return max(2*k, 20) }

// recallSQL ranks by full text, by vector distance, or fuses both ranks. The owner filter is
// repeated (row-level security applies as well) so the owner index finds the user's rows; the
// user's memories are then ranked exactly (the scoped rows are read once, as a materialised
// CTE), so a user among many always gets the true top k: no approximate index scan can come
// back short when the filter is selective. The ranked lists carry what the answer shows, so
// nothing is read twice.
const recallSQL = `
with
ftq as (select agentmem.any_words_query($1::text) as q),
scoped as materialized (
  select m.id, m.content, m.metadata, m.created_at, m.fts, m.embedding, m.embedding_model
  from agentmem.memories m
  where m.user_id = $2 and m.tenant_id = $3
    and ($4::text = '' or m.agent in ($4::text, ''))
    and m.expires_at > now()
    and m.metadata @> $5::jsonb
    and not exists (select 1 from jsonb_each($5::jsonb) f where m.metadata -> f.key <> f.value)
),
text_hits as (
  select s.id, s.content, s.metadata, s.created_at, ts_rank_cd(s.fts, ftq.q) as score,
         row_number() over (order by ts_rank_cd(s.fts, ftq.q) desc, s.id) as rank
  from scoped s, ftq
  where $6::text <> 'vector' and s.fts @@ ftq.q
  order by rank
  limit $7
),
vector_hits as (
  select s.id, s.content, s.metadata, s.created_at,
         1 - (s.embedding operator(extensions.<=>) $8::extensions.vector) as score,
         row_number() over (order by s.embedding operator(extensions.<=>) $8::extensions.vector, s.id) as rank
  from scoped s
  where $6::text <> 'text' and $8::extensions.vector is not null and s.embedding is not null
    -- vectors of another model do not compare: such a row waits to be embedded again
    and s.embedding_model = $14::text
    -- a text without words embeds to the zero vector, whose cosine distance is NaN: no rank
    and (s.embedding operator(extensions.<=>) $8::extensions.vector) <> 'NaN'::float8
  order by rank
  limit $7
),
fused as (
  select coalesce(t.id, v.id) as id, coalesce(t.content, v.content) as content,
         coalesce(t.metadata, v.metadata) as metadata, coalesce(t.created_at, v.created_at) as created_at,
         case $6::text
           when 'text' then t.score
           when 'vector' then v.score
           else coalesce($9::float8 / ($11::int + t.rank), 0) + coalesce($10::float8 / ($11::int + v.rank), 0)
         end as score
  from text_hits t full join vector_hits v on v.id = t.id
)
select id, content, score::float8, metadata, created_at
from fused
where score >= $12::float8
order by score desc, id
limit $13`

func recallArgs(p RecallParams) []any {
	var emb *string
	if p.embedding != "" {
		emb = &p.embedding
	}
	return []any{p.Query, p.Scope.UserID, p.Scope.TenantID, p.Scope.Agent,
		string(p.Filter), p.Mode, candidates(p.K), emb, textWeight, vectorWeight, rrfK, p.MinScore, p.K, p.model}
}

func scanHits(rows pgx.Rows) ([]memory.Hit, error) {
	hits, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (memory.Hit, error) {
		var h memory.Hit
		err := r.Scan(&h.ID, &h.Content, &h.Score, &h.Metadata, &h.CreatedAt)
		h.CreatedAt = h.CreatedAt.UTC()
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("recall: %w", err)
	}
	if hits == nil {
		hits = []memory.Hit{}
	}
	return hits, nil
}
