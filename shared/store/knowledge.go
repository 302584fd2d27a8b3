package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
)

// IngestParams is a document to store in a tenant's knowledge base, already split.
type IngestParams struct {
	// TenantID is the tenant whose knowledge base gets the document; "" is the tenant-less one.
	TenantID string
	// Source names the document; an ingest replaces every earlier chunk of the same source.
	Source string
	// Chunks are the document's pieces, in order.
	Chunks []string
	// Metadata, a JSON object or nil, is stored with every chunk.
	Metadata json.RawMessage
	// Vectors are the chunks' vectors, pgvector literals of model Model, embedded by the caller,
	// one per chunk in order; a short slice or a nil entry stores that chunk without a vector
	// (full-text search finds it) for the embed-pending run.
	Vectors []*string
	Model   string
}

// LogValue keeps the document out of logs.
func (p IngestParams) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("source_len", len(p.Source)), slog.Int("chunks", len(p.Chunks)))
}

// KnowledgeSearchParams is a search of one tenant's knowledge base.
type KnowledgeSearchParams struct {
	TenantID string
	// UserID is the user who searches, under row-level security; "" for a service
	// caller, whose search runs as service_role limited to TenantID.
	UserID string
	Query  string
	K      int
	// Mode is memory.ModeHybrid (default), ModeVector or ModeText.
	Mode string
	// QueryVector is Query's vector, a pgvector literal of model Model, embedded by the caller;
	// nil without one (hybrid then ranks by full text alone). Mode vector needs one.
	QueryVector *string
	Model       string
}

// asServiceRole runs fn in one transaction as the service_role, as PostgREST does for a
// service key: row-level security is bypassed, so every statement must name its tenant.
func (s *Store) asServiceRole(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, setServiceRoleSQL, statementTimeout(ctx)); err != nil {
			return fmt.Errorf("set service role: %w", err)
		}
		return fn(tx)
	})
}

// lockSource serialises the writers of one source, so two ingests of it never mix their chunks:
// the second waits, then replaces what the first wrote.
func lockSource(ctx context.Context, tx pgx.Tx, tenant, source string) error {
	_, err := tx.Exec(ctx, `select pg_advisory_xact_lock(hashtextextended($1::text, 7215))`,
		fmt.Sprintf("%d:%s/%s", len(tenant), tenant, source))
	if err != nil {
		return fmt.Errorf("lock source: %w", err)
	}
	return nil
}

// IngestKnowledge stores a document's chunks with their embeddings, replacing an earlier ingest
// of the same source in the same transaction: a concurrent search sees the old chunks or the
// new ones, never a mix and never none. The caller embeds the chunks before (p.Vectors); a
// chunk without a vector (the provider failed) is found by full-text search until the
// embed-pending run embeds it.
func (s *Store) IngestKnowledge(ctx context.Context, p IngestParams) (memory.IngestResult, error) {
	res := memory.IngestResult{Source: p.Source, TenantID: p.TenantID, Chunks: len(p.Chunks)}
	vectors := make([]*string, len(p.Chunks))
	copy(vectors, p.Vectors)
	indexes := make([]int32, len(p.Chunks))
	for i := range indexes {
		indexes[i] = int32(i)
	}
	err := s.asServiceRole(ctx, func(tx pgx.Tx) error {
		if err := lockSource(ctx, tx, p.TenantID, p.Source); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `delete from agentmem.knowledge_chunks where tenant_id = $1 and source = $2`,
			p.TenantID, p.Source)
		if err != nil {
			return fmt.Errorf("delete old chunks: %w", err)
		}
		res.Replaced = tag.RowsAffected()
		_, err = tx.Exec(ctx, `
			insert into agentmem.knowledge_chunks (tenant_id, source, chunk_index, content, metadata,
			  embedding, embedding_model)
			select $1, $2, c.idx, c.content, $3::jsonb, c.embedding::extensions.vector,
			  case when c.embedding is not null then $4::text end
			from unnest($5::int[], $6::text[], $7::text[]) as c(idx, content, embedding)`,
			p.TenantID, p.Source, string(objectOrEmpty(p.Metadata)), p.Model,
			indexes, p.Chunks, vectors)
		if err != nil {
			return fmt.Errorf("insert chunks: %w", err)
		}
		return nil
	})
	return res, err
}

// DeleteKnowledge removes every chunk of a source. A source the tenant does not have is a
// not_found error.
func (s *Store) DeleteKnowledge(ctx context.Context, tenant, source string) (int64, error) {
	var n int64
	err := s.asServiceRole(ctx, func(tx pgx.Tx) error {
		if err := lockSource(ctx, tx, tenant, source); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `delete from agentmem.knowledge_chunks where tenant_id = $1 and source = $2`,
			tenant, source)
		if err != nil {
			return fmt.Errorf("delete chunks: %w", err)
		}
		n = tag.RowsAffected()
		if n == 0 {
			return notFound("source not found")
		}
		return nil
	})
	return n, err
}

// knowledgeSQL is recall's ranking over a tenant's chunks: full text (BM25 with the tenant's
// statistics, agentmem.knowledge_bm25_hits), vector distance, or both
// ranks fused by agentmem.rrf_score, as recall's are. The tenant filter is repeated (row-level
// security applies as well for users) so the indexes serve it. The vector side is
// agentmem.knowledge_neighbours: exact below the ranking's exact limit (@exact_limit), through the model's
// HNSW index above it.
const knowledgeSQL = `
with
text_hits as (
  select t.id, t.score, row_number() over (order by t.score desc, t.id) as rank
  from agentmem.knowledge_bm25_hits(p_tenant_id => @tenant_id::text,
         terms => case when @mode::text <> 'vector' then agentmem.query_terms(@query::text) end, n => @candidates::int) t
),
vector_hits as (
  select v.id, 1 - v.distance as score, row_number() over (order by v.distance, v.id) as rank
  from agentmem.knowledge_neighbours(p_tenant_id => @tenant_id::text,
         query_embedding => case when @mode::text <> 'text' then @query_embedding::extensions.vector end,
         query_model => @query_model::text, n => @candidates::int, exact_limit => @exact_limit::int) v
),
fused as (
  select coalesce(t.id, v.id) as id,
         case @mode::text
           when 'text' then t.score
           when 'vector' then v.score
           else agentmem.rrf_score(text_rank => t.rank, vector_rank => v.rank,
                  text_weight => @text_weight::float8, vector_weight => @vector_weight::float8, rrf_k => @rrf_k::int)
         end as score
  from text_hits t full join vector_hits v on v.id = t.id
)
select k.id, k.source, k.chunk_index, k.content, f.score::float8, k.metadata
from fused f join agentmem.knowledge_chunks k on k.id = f.id
order by f.score desc, k.id
limit @k`

// SearchKnowledge searches a tenant's knowledge base, best first. A user searches under
// row-level security, which shows only their own tenant's chunks. Only vectors of p.Model
// rank; without p.QueryVector (the caller's provider failed), hybrid search ranks by full text
// alone.
func (s *Store) SearchKnowledge(ctx context.Context, p KnowledgeSearchParams) ([]memory.KnowledgeHit, error) {
	if p.Mode == "" {
		p.Mode = memory.ModeHybrid
	}
	var emb *string
	if p.Mode != memory.ModeText {
		emb = p.QueryVector
	}
	if p.Mode == memory.ModeVector && emb == nil {
		return nil, errors.New("search knowledge: mode vector needs a query vector")
	}
	var hits []memory.KnowledgeHit
	search := func(b *pgx.Batch) {
		b.Queue(knowledgeStatement.sql, knowledgeStatement.args(pgx.NamedArgs{"query": p.Query, "tenant_id": p.TenantID, "mode": p.Mode,
			"candidates": candidates(p.K), "query_embedding": emb, "text_weight": s.ranking.TextWeight,
			"vector_weight": s.ranking.VectorWeight, "rrf_k": s.ranking.RRFK, "k": p.K, "query_model": p.Model,
			"exact_limit": s.ranking.ExactLimit})...).Query(func(rows pgx.Rows) error {
			var err error
			hits, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (memory.KnowledgeHit, error) {
				var h memory.KnowledgeHit
				var idx int32
				err := r.Scan(&h.ID, &h.Source, &idx, &h.Content, &h.Score, &h.Metadata)
				h.ChunkIndex = int(idx)
				return h, err
			})
			if err != nil {
				return fmt.Errorf("search knowledge: %w", err)
			}
			return nil
		})
	}
	var err error
	if p.UserID == "" {
		err = s.batchAsServiceRole(ctx, search)
	} else {
		err = s.batchInScope(ctx, memory.Scope{TenantID: p.TenantID, UserID: p.UserID}, search)
	}
	if hits == nil {
		hits = []memory.KnowledgeHit{}
	}
	return hits, err
}
