-- Past conversations are searched as memories are: recall with source `messages` or `all`.
--
-- - messages store vectors exactly as memories do (migration store_vectors_of_any_model):
--   embedding (vector of any dimension), embedding_model, embedding_dims (derived from the
--   vector), rows kept inline up to the page size; and a stored tsvector of the content (the
--   message's text) for full-text search, with its GIN index. Adding the generated columns
--   rewrites the table once, under an exclusive lock: on a large table, apply this in a quiet
--   hour. Existing messages have no vector until embedded (`agentmem backfill --table messages`,
--   or the scheduled embed-pending run); full-text search finds them meanwhile.
-- - agentmem.embedding_index_statements now also makes the HNSW indexes of a model and dimension
--   on messages (the migrations make the built-in model's; `agentmem index` the configured one's).
-- - Tool messages (a tool's output: JSON, listings, documents fetched) and messages without text
--   (an assistant's bare tool calls) are not embedded: full text still finds a tool message, but
--   it costs no call of the provider and no place in the HNSW index at every turn. The indexes
--   that find the rows waiting for a vector, for embed-pending and backfill, follow that rule.
-- - agentmem.message_neighbours and agentmem.message_text_hits rank a user's messages as
--   memory_neighbours and memory_text_hits rank memories: exactly while the user has fewer
--   messages than the exact limit (message_scope_is_small), else through the model's HNSW index
--   with iterative scans, or the full-text index, planned for the query at hand.
-- - agentmem.recall_sources is recall over messages, or over memories and messages together:
--   each side (full text, vector) ranks the rows of both sources as one list, and hybrid fuses
--   the two ranks with agentmem.rrf_score, as recall_memories does for memories alone.

alter table agentmem.messages set (toast_tuple_target = 8160);

alter table agentmem.messages
  add column embedding extensions.vector,
  add column embedding_model text,
  add column embedding_dims integer generated always as (extensions.vector_dims(embedding)) stored,
  add column fts tsvector generated always as (to_tsvector('english'::regconfig, content)) stored,
  add constraint messages_embedding_model_check check (embedding is null or embedding_model is not null);

create index messages_fts_idx on agentmem.messages using gin (fts);

-- Rows waiting for a vector (see migration add_embedding_pending_indexes): the first stays empty
-- while the provider is up; the second finds rows of another model.
create index messages_embedding_pending_idx on agentmem.messages (session_id, seq)
  where embedding is null and role <> 'tool' and content <> '';
create index messages_embedding_model_idx on agentmem.messages (embedding_model);

-- As before, for messages too.
create or replace function agentmem.embedding_index_statements(model text, dims integer, build_concurrently boolean)
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
  from pg_catalog.unnest(array['memories', 'knowledge_chunks', 'messages']) as t
  where dims between 1 and 2000
$$;

do $$
declare
  s text;
begin
  for s in select agentmem.embedding_index_statements(
             model => 'agentmem-hash-384-v1', dims => 384, build_concurrently => false) loop
    execute s;
  end loop;
end
$$;

-- Whether a user's scope has fewer messages than exact_limit (expired ones count: they are
-- still rows to read), which are then ranked exactly rather than through an index.
create function agentmem.message_scope_is_small(p_user_id uuid, p_tenant_id text, exact_limit integer)
returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  return (select pg_catalog.count(*) < exact_limit
          from (select 1 from agentmem.messages m
                where m.user_id = p_user_id and m.tenant_id = p_tenant_id limit exact_limit) s);
end
$$;

-- The n messages of a user nearest to query_embedding (cosine distance), nearest first, among
-- the unexpired ones of the scope (agent: that agent's; filter: top-level metadata keys equal)
-- whose vector query_model made at the query's dimension. With exact (a scope smaller than the
-- exact limit) the scope is ranked exactly; else through the model's HNSW index, scanning on
-- until n rows pass the filters (or hnsw.max_scan_tuples), then re-sorted. A message is
-- (session_id, seq).
create function agentmem.message_neighbours(
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  query_embedding extensions.vector, query_model text, n integer, exact boolean
)
returns table (session_id uuid, seq bigint, distance double precision)
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
      select x.session_id, x.seq, x.d from (
        select m.session_id, m.seq,
               case when m.embedding_model = query_model and m.embedding_dims = dims
                    then m.embedding operator(extensions.<=>) query_embedding end as d
        from agentmem.messages m
        where m.user_id = p_user_id and m.tenant_id = p_tenant_id
          and (p_agent = '' or m.agent = p_agent)
          and m.expires_at > pg_catalog.now()
          and (p_filter = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) p_filter
               and not exists (select 1 from pg_catalog.jsonb_each(p_filter) f
                               where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
      ) x
      -- a text without words embeds to the zero vector: its distance is NaN, it has no rank
      where x.d is not null and x.d <> 'NaN'::float8
      order by x.d, x.session_id, x.seq
      limit n;
    return;
  end if;
  perform pg_catalog.set_config('hnsw.iterative_scan', 'relaxed_order', true);
  perform pg_catalog.set_config('hnsw.ef_search', greatest(n, 40)::text, true);
  return query execute pg_catalog.format($q$
    with near as materialized (
      select m.session_id, m.seq,
             m.embedding::extensions.vector(%1$s) operator(extensions.<=>) $5::extensions.vector(%1$s) as d
      from agentmem.messages m
      where m.embedding_model = %2$L and m.embedding_dims = %1$s
        and m.user_id = $1 and m.tenant_id = $2
        and ($3 = '' or m.agent = $3)
        and m.expires_at > pg_catalog.now()
        and ($4 = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) $4
             and not exists (select 1 from pg_catalog.jsonb_each($4) f
                             where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
      order by d
      limit $6
    )
    select near.session_id, near.seq, near.d from near where near.d <> 'NaN'::float8
    order by near.d, near.session_id, near.seq
    $q$, dims, query_model)
    using p_user_id, p_tenant_id, p_agent, p_filter, query_embedding, n;
end
$$;

-- The n messages of a user that best match a full-text query (ts_rank_cd, best first), among
-- the unexpired ones of the scope (agent, filter: as message_neighbours). With exact, the scope
-- is matched row by row among the user's rows (found by the owner index); else the query is
-- planned as it comes, so the full-text index serves a large scope when that is cheaper.
create function agentmem.message_text_hits(
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  q tsquery, n integer, exact boolean
)
returns table (session_id uuid, seq bigint, score double precision)
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
      select m.session_id, m.seq, pg_catalog.ts_rank_cd(m.fts, q)::float8 as rank_score
      from agentmem.messages m
      where m.user_id = p_user_id and m.tenant_id = p_tenant_id
        and (p_agent = '' or m.agent = p_agent)
        and m.expires_at > pg_catalog.now()
        and (p_filter = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) p_filter
             and not exists (select 1 from pg_catalog.jsonb_each(p_filter) f
                             where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
        and (m.fts operator(pg_catalog.@@) q) is true
      order by rank_score desc, m.session_id, m.seq
      limit n;
    return;
  end if;
  return query execute $q$
    select m.session_id, m.seq, pg_catalog.ts_rank_cd(m.fts, $5)::float8 as rank_score
    from agentmem.messages m
    where m.user_id = $1 and m.tenant_id = $2
      and ($3 = '' or m.agent = $3)
      and m.expires_at > pg_catalog.now()
      and ($4 = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) $4
           and not exists (select 1 from pg_catalog.jsonb_each($4) f
                           where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
      and m.fts operator(pg_catalog.@@) $5
    order by rank_score desc, m.session_id, m.seq
    limit $6
    $q$
    using p_user_id, p_tenant_id, p_agent, p_filter, q, n;
end
$$;

-- Recall over messages (p_source 'messages') or over memories and messages as one corpus
-- ('all'; 'memories' works too, though the store calls recall_memories for it): the k best rows
-- of the user's scope for a query, best first. Memories are the scope's as recall_memories sees
-- them (the agent's and agent-less ones), messages the agent's. Each source gives its best
-- `candidates` per side; each side (full text, vector) ranks the rows of both sources together,
-- and p_mode chooses as in recall_memories ('hybrid' fuses the two ranks with rrf_score). Each
-- source is ranked exactly or through its indexes according to its own size. A row is a
-- memory (source 'memory', id) or a message (source 'message', session_id and seq; id is its
-- id); ties go by source, then key. with_vectors adds each row's vector of the query's model.
create function agentmem.recall_sources(
  p_source text, p_query text, query_embedding extensions.vector, query_model text,
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  p_mode text, candidates integer, text_weight double precision, vector_weight double precision,
  rrf_k integer, min_score double precision, p_k integer, exact_limit integer, with_vectors boolean
)
returns table (source text, id uuid, session_id uuid, seq bigint, role text, content text,
               score double precision, metadata jsonb, created_at timestamptz, embedding extensions.vector)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
as $$
declare
  with_memories boolean := p_source in ('memories', 'all');
  with_messages boolean := p_source in ('messages', 'all');
  q tsquery := case when p_mode <> 'vector' then agentmem.any_words_query(p_query) end;
  qv extensions.vector := case when p_mode <> 'text' then query_embedding end;
  -- one count per source for both sides
  memories_exact boolean;
  messages_exact boolean;
begin
  if with_memories then
    memories_exact := agentmem.memory_scope_is_small(
      p_user_id => p_user_id, p_tenant_id => p_tenant_id, exact_limit => exact_limit);
  end if;
  if with_messages then
    messages_exact := agentmem.message_scope_is_small(
      p_user_id => p_user_id, p_tenant_id => p_tenant_id, exact_limit => exact_limit);
  end if;
  return query
    with
    text_found as (
      select 'memory'::text as src, t.id as k1, 0::bigint as k2, t.score
      from agentmem.memory_text_hits(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             q => case when with_memories then q end, n => candidates, exact => memories_exact) t
      union all
      select 'message'::text, t.session_id, t.seq, t.score
      from agentmem.message_text_hits(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             q => case when with_messages then q end, n => candidates, exact => messages_exact) t
    ),
    text_hits as (
      select t.src, t.k1, t.k2, t.score,
             pg_catalog.row_number() over (order by t.score desc, t.src, t.k1, t.k2) as rank
      from text_found t
    ),
    vector_found as (
      select 'memory'::text as src, v.id as k1, 0::bigint as k2, v.distance
      from agentmem.memory_neighbours(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             query_embedding => case when with_memories then qv end,
             query_model => query_model, n => candidates, exact => memories_exact) v
      union all
      select 'message'::text, v.session_id, v.seq, v.distance
      from agentmem.message_neighbours(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             query_embedding => case when with_messages then qv end,
             query_model => query_model, n => candidates, exact => messages_exact) v
    ),
    vector_hits as (
      select v.src, v.k1, v.k2, 1 - v.distance as score,
             pg_catalog.row_number() over (order by v.distance, v.src, v.k1, v.k2) as rank
      from vector_found v
    ),
    fused as (
      select coalesce(t.src, v.src) as src, coalesce(t.k1, v.k1) as k1, coalesce(t.k2, v.k2) as k2,
             case p_mode
               when 'text' then t.score
               when 'vector' then v.score
               else agentmem.rrf_score(text_rank => t.rank, vector_rank => v.rank,
                      text_weight => text_weight, vector_weight => vector_weight, rrf_k => rrf_k)
             end as score
      from text_hits t full join vector_hits v on v.src = t.src and v.k1 = t.k1 and v.k2 = t.k2
    ),
    best as (
      select f.src, f.k1, f.k2, f.score from fused f where f.score >= min_score
      order by f.score desc, f.src, f.k1, f.k2 limit p_k
    )
    select b.src, coalesce(m.id, g.id), g.session_id, g.seq, g.role, coalesce(m.content, g.content),
           b.score, coalesce(m.metadata, g.metadata), coalesce(m.created_at, g.created_at),
           case when with_vectors and m.embedding_model = query_model
                 and m.embedding_dims = extensions.vector_dims(query_embedding) then m.embedding
                when with_vectors and g.embedding_model = query_model
                 and g.embedding_dims = extensions.vector_dims(query_embedding) then g.embedding end
    from best b
      left join agentmem.memories m on b.src = 'memory' and m.id = b.k1
      left join agentmem.messages g on b.src = 'message' and g.session_id = b.k1 and g.seq = b.k2
    where m.id is not null or g.session_id is not null -- only rows the caller may read, as an inner join
    order by b.score desc, b.src, b.k1, b.k2;
end
$$;

-- For the functions' roles only, as every function of schema agentmem (migration
-- take_writes_from_client_roles): they run with the caller's rights, under row-level security.
revoke all on function agentmem.message_scope_is_small(uuid, text, integer) from public, anon, authenticated;
revoke all on function agentmem.message_neighbours(uuid, text, text, jsonb, extensions.vector, text, integer,
  boolean) from public, anon, authenticated;
revoke all on function agentmem.message_text_hits(uuid, text, text, jsonb, tsquery, integer, boolean)
  from public, anon, authenticated;
revoke all on function agentmem.recall_sources(text, text, extensions.vector, text, uuid, text, text, jsonb,
  text, integer, double precision, double precision, integer, double precision, integer, integer, boolean)
  from public, anon, authenticated;
grant execute on function agentmem.message_scope_is_small(uuid, text, integer) to agentmem_caller, service_role;
grant execute on function agentmem.message_neighbours(uuid, text, text, jsonb, extensions.vector, text, integer,
  boolean) to agentmem_caller, service_role;
grant execute on function agentmem.message_text_hits(uuid, text, text, jsonb, tsquery, integer, boolean)
  to agentmem_caller, service_role;
grant execute on function agentmem.recall_sources(text, text, extensions.vector, text, uuid, text, text, jsonb,
  text, integer, double precision, double precision, integer, double precision, integer, integer, boolean)
  to agentmem_caller, service_role;
