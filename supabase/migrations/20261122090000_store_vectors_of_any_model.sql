-- Vectors of any model and any size in one database.
--
-- - memories.embedding and knowledge_chunks.embedding become vector (any dimension), and each row
--   records its dimension next to its model (embedding_dims, derived from the vector). Vectors of
--   different models, or of one model at different sizes, are never compared: every ranking keeps
--   the rows of the query's model and dimension, and computes a distance only for them.
-- - One HNSW index per model and dimension (an expression index over embedding::vector(n),
--   partial on that model), made by agentmem.embedding_index_statements, which the migrations
--   and the `agentmem index` command share. This migration makes the built-in model's.
-- - Rows keep their vector inline up to the page size (toast_tuple_target): ranking a user's
--   memories reads each row once instead of once more in the TOAST table.
-- - agentmem.memory_neighbours ranks a user's memories by distance: exactly while the user has
--   fewer memories than the exact limit (memory_scope_is_small; always the true top n, whatever
--   the filters), else through the model's HNSW index with iterative scans (enough rows pass
--   the filters, re-sorted).
-- - agentmem.memory_text_hits matches a user's memories by full text the same way: among the
--   user's own rows below the exact limit, planned for the query at hand above it.
-- - agentmem.recall_memories is the recall of the store (and of get-context), as a PL/pgSQL
--   function with generic plans, so that each connection plans it once, not at every call (the
--   plan of a user's scope does not depend on who the user is).
-- - The match functions for supabase-js compare only vectors of the query's dimension.
-- - agentmem.any_words_query is planned once per connection and gives null for a text without
--   lexemes.

drop index agentmem.memories_embedding_idx;
drop index agentmem.knowledge_chunks_embedding_idx;

alter table agentmem.memories set (toast_tuple_target = 8160);
alter table agentmem.knowledge_chunks set (toast_tuple_target = 8160);

alter table agentmem.memories alter column embedding type extensions.vector;
alter table agentmem.knowledge_chunks alter column embedding type extensions.vector;

alter table agentmem.memories
  add column embedding_dims integer generated always as (extensions.vector_dims(embedding)) stored,
  add constraint memories_embedding_model_check check (embedding is null or embedding_model is not null);
alter table agentmem.knowledge_chunks
  add column embedding_dims integer generated always as (extensions.vector_dims(embedding)) stored,
  add constraint knowledge_chunks_embedding_model_check
    check (embedding is null or embedding_model is not null);

-- The statements that make the HNSW indexes (cosine) of a model and dimension on memories and
-- knowledge_chunks, if missing. HNSW indexes vectors of up to 2,000 dimensions: larger ones get no
-- index (ranking stays exact). The names end in a digest of model and dimension.
create function agentmem.embedding_index_statements(model text, dims integer, build_concurrently boolean)
returns setof text
language sql immutable
set search_path = ''
as $$
  select pg_catalog.format(
    'create index %s if not exists %I on agentmem.%I using hnsw ((embedding::extensions.vector(%s)) '
    'extensions.vector_cosine_ops) where embedding_model = %L and embedding_dims = %s',
    case when build_concurrently then 'concurrently' else '' end,
    t || '_embedding_' || pg_catalog.left(pg_catalog.md5(model || '/' || dims), 12) || '_idx',
    t, dims, model, dims)
  from pg_catalog.unnest(array['memories', 'knowledge_chunks']) as t
  where dims between 1 and 2000
$$;
revoke execute on function agentmem.embedding_index_statements(text, integer, boolean) from public, anon;

do $$
declare
  s text;
begin
  for s in select agentmem.embedding_index_statements('agentmem-hash-384-v1', 384, false) loop
    execute s;
  end loop;
end
$$;

-- The OR-query of a text's lexemes, as before, but in PL/pgSQL (its plan is made once per
-- connection, not at every call) and null for a text without lexemes (it matches nothing, as the
-- empty query did, without a notice at every call).
create or replace function agentmem.any_words_query(query text) returns tsquery
  language plpgsql immutable parallel safe
  set search_path = ''
as $$
begin
  return (select pg_catalog.string_agg(pg_catalog.quote_literal(lexeme), ' | ')::pg_catalog.tsquery
          from pg_catalog.unnest(pg_catalog.to_tsvector('english'::pg_catalog.regconfig, query)));
end
$$;

-- Whether a user's scope has fewer memories than exact_limit (expired ones count: they are
-- still rows to read), which are then ranked exactly rather than through an index.
create function agentmem.memory_scope_is_small(p_user_id uuid, p_tenant_id text, exact_limit integer)
returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  return (select pg_catalog.count(*) < exact_limit
          from (select 1 from agentmem.memories m
                where m.user_id = p_user_id and m.tenant_id = p_tenant_id limit exact_limit) s);
end
$$;

-- The n memories of a user nearest to query_embedding (cosine distance), nearest first, among
-- the unexpired ones of the scope (agent: that agent's and agent-less ones; filter: top-level
-- metadata keys equal) whose vector query_model made at the query's dimension. With exact (a
-- scope smaller than the exact limit, see memory_scope_is_small) the scope is ranked exactly;
-- else through the model's HNSW index, scanning on until n rows pass the filters (or
-- hnsw.max_scan_tuples), then re-sorted.
create function agentmem.memory_neighbours(
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  query_embedding extensions.vector, query_model text, n integer, exact boolean
)
returns table (id uuid, distance double precision)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
as $$
declare
  dims integer := extensions.vector_dims(query_embedding);
begin
  if query_embedding is null or n < 1 then
    return;
  end if;
  if exact then
    return query
      select x.id, x.d from (
        select m.id,
               case when m.embedding_model = query_model and m.embedding_dims = dims
                    then m.embedding operator(extensions.<=>) query_embedding end as d
        from agentmem.memories m
        where m.user_id = p_user_id and m.tenant_id = p_tenant_id
          and (p_agent = '' or m.agent in (p_agent, ''))
          and m.expires_at > pg_catalog.now()
          and (p_filter = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) p_filter
               and not exists (select 1 from pg_catalog.jsonb_each(p_filter) f
                               where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
      ) x
      -- a text without words embeds to the zero vector: its distance is NaN, it has no rank
      where x.d is not null and x.d <> 'NaN'::float8
      order by x.d, x.id
      limit n;
    return;
  end if;
  perform pg_catalog.set_config('hnsw.iterative_scan', 'relaxed_order', true);
  perform pg_catalog.set_config('hnsw.ef_search', greatest(n, 40)::text, true);
  return query execute pg_catalog.format($q$
    with near as materialized (
      select m.id,
             m.embedding::extensions.vector(%1$s) operator(extensions.<=>) $5::extensions.vector(%1$s) as d
      from agentmem.memories m
      where m.embedding_model = %2$L and m.embedding_dims = %1$s
        and m.user_id = $1 and m.tenant_id = $2
        and ($3 = '' or m.agent in ($3, ''))
        and m.expires_at > pg_catalog.now()
        and ($4 = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) $4
             and not exists (select 1 from pg_catalog.jsonb_each($4) f
                             where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
      order by d
      limit $6
    )
    select near.id, near.d from near where near.d <> 'NaN'::float8 order by near.d, near.id
    $q$, dims, query_model)
    using p_user_id, p_tenant_id, p_agent, p_filter, query_embedding, n;
end
$$;

-- The n memories of a user that best match a full-text query (ts_rank_cd, best first), among
-- the unexpired ones of the scope (agent, filter: as memory_neighbours). With exact, the scope
-- is matched row by row among the user's rows (found by the owner index):
-- the full-text index holds every user's words, and a plan made once for all users would
-- intersect the user's rows with every row sharing a word of the query. Else the query is
-- planned as it comes, so the full-text index serves a large scope when that is cheaper.
create function agentmem.memory_text_hits(
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  q tsquery, n integer, exact boolean
)
returns table (id uuid, score double precision)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
as $$
begin
  if q is null or n < 1 then
    return;
  end if;
  if exact then
    return query
      select m.id, pg_catalog.ts_rank_cd(m.fts, q)::float8 as rank_score
      from agentmem.memories m
      where m.user_id = p_user_id and m.tenant_id = p_tenant_id
        and (p_agent = '' or m.agent in (p_agent, ''))
        and m.expires_at > pg_catalog.now()
        and (p_filter = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) p_filter
             and not exists (select 1 from pg_catalog.jsonb_each(p_filter) f
                             where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
        and (m.fts operator(pg_catalog.@@) q) is true
      order by rank_score desc, m.id
      limit n;
    return;
  end if;
  return query execute $q$
    select m.id, pg_catalog.ts_rank_cd(m.fts, $5)::float8 as rank_score
    from agentmem.memories m
    where m.user_id = $1 and m.tenant_id = $2
      and ($3 = '' or m.agent in ($3, ''))
      and m.expires_at > pg_catalog.now()
      and ($4 = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) $4
           and not exists (select 1 from pg_catalog.jsonb_each($4) f
                           where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
      and m.fts operator(pg_catalog.@@) $5
    order by rank_score desc, m.id
    limit $6
    $q$
    using p_user_id, p_tenant_id, p_agent, p_filter, q, n;
end
$$;

-- Recall: the k best memories of a user's scope for a query, best first. mode 'text' ranks by
-- full text (any word of the query), 'vector' by cosine similarity, 'hybrid' fuses both ranks
-- (reciprocal rank fusion, each side weighted). Each side contributes its best `candidates`.
-- with_vectors adds each memory's vector (for diversification by the caller).
create function agentmem.recall_memories(
  p_query text, query_embedding extensions.vector, query_model text,
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  p_mode text, candidates integer, text_weight double precision, vector_weight double precision,
  rrf_k integer, min_score double precision, p_k integer, exact_limit integer, with_vectors boolean
)
returns table (id uuid, content text, score double precision, metadata jsonb,
               created_at timestamptz, embedding extensions.vector)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
as $$
declare
  -- one count for both sides
  exact boolean := agentmem.memory_scope_is_small(p_user_id, p_tenant_id, exact_limit);
begin
  return query
    with
    text_hits as (
      select t.id, t.score, pg_catalog.row_number() over (order by t.score desc, t.id) as rank
      from agentmem.memory_text_hits(p_user_id, p_tenant_id, p_agent, p_filter,
             case when p_mode <> 'vector' then agentmem.any_words_query(p_query) end, candidates, exact) t
    ),
    vector_hits as (
      select v.id, 1 - v.distance as score, pg_catalog.row_number() over (order by v.distance, v.id) as rank
      from agentmem.memory_neighbours(p_user_id, p_tenant_id, p_agent, p_filter,
             case when p_mode <> 'text' then query_embedding end, query_model, candidates, exact) v
    ),
    fused as (
      select coalesce(t.id, v.id) as id,
             case p_mode
               when 'text' then t.score
               when 'vector' then v.score
               else coalesce(text_weight / (rrf_k + t.rank), 0) + coalesce(vector_weight / (rrf_k + v.rank), 0)
             end as score
      from text_hits t full join vector_hits v on v.id = t.id
    ),
    best as (
      select f.id, f.score from fused f where f.score >= min_score order by f.score desc, f.id limit p_k
    )
    select f.id, m.content, f.score, m.metadata, m.created_at,
           case when with_vectors and m.embedding_model = query_model
                 and m.embedding_dims = extensions.vector_dims(query_embedding) then m.embedding end
    from best f join agentmem.memories m on m.id = f.id
    order by f.score desc, f.id;
end
$$;

revoke execute on function agentmem.memory_scope_is_small(uuid, text, integer) from public, anon;
revoke execute on function agentmem.memory_neighbours(uuid, text, text, jsonb, extensions.vector, text,
  integer, boolean) from public, anon;
revoke execute on function agentmem.memory_text_hits(uuid, text, text, jsonb, tsquery, integer, boolean)
  from public, anon;
revoke execute on function agentmem.recall_memories(text, extensions.vector, text, uuid, text, text, jsonb,
  text, integer, double precision, double precision, integer, double precision, integer, integer, boolean)
  from public, anon;
grant execute on function agentmem.memory_scope_is_small(uuid, text, integer) to authenticated, service_role;
grant execute on function agentmem.memory_neighbours(uuid, text, text, jsonb, extensions.vector, text,
  integer, boolean) to authenticated, service_role;
grant execute on function agentmem.memory_text_hits(uuid, text, text, jsonb, tsquery, integer, boolean)
  to authenticated, service_role;
grant execute on function agentmem.recall_memories(text, extensions.vector, text, uuid, text, text, jsonb,
  text, integer, double precision, double precision, integer, double precision, integer, integer, boolean)
  to authenticated, service_role;

-- The match functions for supabase-js, as before, except that they compare the query only with
-- vectors of its dimension (a distance between vectors of different sizes is an error), and rank
-- exactly (the HNSW indexes are per model and dimension now).
create or replace function public.match_memories(
  query_embedding extensions.vector,
  match_count integer,
  filter_user_id uuid default null,
  filter_tenant_id text default null,
  query_model text default null
)
returns table (id uuid, content text, metadata jsonb, similarity double precision)
language sql stable
security invoker
set search_path = ''
as $$
  select x.id, x.content, x.metadata, 1 - x.d as similarity
  from (
    select m.id, m.content, m.metadata,
           case when m.embedding_dims = extensions.vector_dims(query_embedding)
                then m.embedding operator(extensions.<=>) query_embedding end as d
    from agentmem.memories m
    where m.embedding is not null
      and m.expires_at > pg_catalog.now()
      and (filter_user_id is null or m.user_id = filter_user_id)
      and (filter_tenant_id is null or m.tenant_id = filter_tenant_id)
      and (query_model is null or m.embedding_model = query_model)
  ) x
  where x.d is not null and x.d <> 'NaN'::float8
  order by x.d, x.id
  limit least(greatest(match_count, 0), 1000)
$$;

create or replace function public.match_knowledge(
  query_embedding extensions.vector,
  match_count integer,
  filter_tenant_id text default null,
  query_model text default null
)
returns table (id uuid, source text, chunk_index integer, content text, metadata jsonb,
               similarity double precision)
language sql stable
security invoker
set search_path = ''
as $$
  select x.id, x.source, x.chunk_index, x.content, x.metadata, 1 - x.d as similarity
  from (
    select k.id, k.source, k.chunk_index, k.content, k.metadata,
           case when k.embedding_dims = extensions.vector_dims(query_embedding)
                then k.embedding operator(extensions.<=>) query_embedding end as d
    from agentmem.knowledge_chunks k
    where k.embedding is not null
      and (filter_tenant_id is null or k.tenant_id = filter_tenant_id)
      and (query_model is null or k.embedding_model = query_model)
  ) x
  where x.d is not null and x.d <> 'NaN'::float8
  order by x.d, x.id
  limit least(greatest(match_count, 0), 1000)
$$;

create or replace function public.hybrid_match_memories(
  query_text text,
  query_embedding extensions.vector,
  match_count integer,
  full_text_weight double precision default 1,
  semantic_weight double precision default 1,
  rrf_k integer default 50,
  filter_user_id uuid default null,
  filter_tenant_id text default null,
  query_model text default null
)
returns table (id uuid, content text, metadata jsonb, score double precision)
language sql stable
security invoker
set search_path = ''
as $$
  with
  ftq as (select agentmem.any_words_query(query_text) as q),
  full_text as (
    select m.id,
           pg_catalog.row_number() over (order by pg_catalog.ts_rank_cd(m.fts, ftq.q) desc, m.id) as rank_ix
    from agentmem.memories m, ftq
    where m.fts operator(pg_catalog.@@) ftq.q
      and m.expires_at > pg_catalog.now()
      and (filter_user_id is null or m.user_id = filter_user_id)
      and (filter_tenant_id is null or m.tenant_id = filter_tenant_id)
    order by rank_ix
    limit least(greatest(match_count, 0), 1000) * 2
  ),
  distances as (
    select m.id,
           case when m.embedding_dims = extensions.vector_dims(query_embedding)
                then m.embedding operator(extensions.<=>) query_embedding end as d
    from agentmem.memories m
    where m.embedding is not null
      and m.expires_at > pg_catalog.now()
      and (filter_user_id is null or m.user_id = filter_user_id)
      and (filter_tenant_id is null or m.tenant_id = filter_tenant_id)
      and (query_model is null or m.embedding_model = query_model)
  ),
  semantic as (
    select x.id, pg_catalog.row_number() over (order by x.d, x.id) as rank_ix
    from distances x
    where x.d is not null and x.d <> 'NaN'::float8
    order by rank_ix
    limit least(greatest(match_count, 0), 1000) * 2
  )
  select m.id, m.content, m.metadata,
         (coalesce(1.0 / (rrf_k + ft.rank_ix), 0.0) * full_text_weight +
          coalesce(1.0 / (rrf_k + s.rank_ix), 0.0) * semantic_weight)::double precision as score
  from full_text ft
    full outer join semantic s on s.id = ft.id
    join agentmem.memories m on m.id = coalesce(ft.id, s.id)
  order by score desc, m.id
  limit least(greatest(match_count, 0), 1000)
$$;
