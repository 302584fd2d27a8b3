-- Relevance that says when nothing matched: the vector side of a result's relevance is credited
-- only above a baseline similarity of the embedding model, the similarity its vectors of
-- unrelated texts reach.
--
-- A result's relevance was the greater of its BM25 share (bm25 / the best any text could get)
-- and the cosine similarity of the vectors. The built-in embedder's vectors of unrelated texts
-- share hashed pieces of words: a question about nothing stored ("What is the capital of
-- Mongolia?") found results of similarity 0.1 to 0.6, so that a floor on relevance flagged
-- the answers of real questions along with them. The vector side now counts
-- (similarity - baseline) / (1 - baseline), 0 at the baseline and below; the caller gives the
-- model's baseline (vector_baseline, default 0: the similarity as before).
--
-- - agentmem.vector_relevance(similarity, baseline) is that credit.
-- - agentmem.recall_memories and agentmem.recall_sources take vector_baseline (default 0), and
--   relevance_weight (default 0): hybrid's score is the reciprocal rank fusion of the two
--   ranks plus relevance_weight x relevance. Fusion keeps only ranks: of a user's ten
--   memories, one that full text scores far above the next and one that barely wins rank
--   the same. A small share of relevance orders such near ties by how much of the query
--   each result holds (the store gives 0.01: 1/51 - 1/52, a rank's worth near the top, is
--   0.0004). Otherwise as before (migration rank_words_by_bm25).

create function agentmem.vector_relevance(similarity double precision, baseline double precision)
returns double precision
language sql immutable parallel safe
set search_path = ''
as $$
  select case when similarity is null then 0
              when baseline <= 0 then greatest(similarity, 0)
              when baseline >= 1 then 0
              else greatest((similarity - baseline) / (1 - baseline), 0) end
$$;

drop function agentmem.recall_memories(text, extensions.vector, text, uuid, text, text, jsonb, text, integer,
  double precision, double precision, integer, double precision, integer, integer, boolean, timestamptz,
  timestamptz, double precision);
drop function agentmem.recall_sources(text, text, extensions.vector, text, uuid, text, text, jsonb, text, integer,
  double precision, double precision, integer, double precision, integer, integer, boolean, timestamptz,
  timestamptz, text, text, double precision, double precision);

create function agentmem.recall_memories(
  p_query text, query_embedding extensions.vector, query_model text,
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  p_mode text, candidates integer, text_weight double precision, vector_weight double precision,
  rrf_k integer, min_score double precision, p_k integer, exact_limit integer, with_vectors boolean,
  p_since timestamptz default null, p_until timestamptz default null,
  min_relevance double precision default 0, vector_baseline double precision default 0,
  relevance_weight double precision default 0
)
returns table (id uuid, content text, score double precision, metadata jsonb,
               created_at timestamptz, relevance double precision, embedding extensions.vector)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
as $$
declare
  -- one count for both sides
  exact boolean := agentmem.memory_scope_is_small(
    p_user_id => p_user_id, p_tenant_id => p_tenant_id, exact_limit => exact_limit);
begin
  return query
    with
    text_hits as (
      select t.id, t.score, t.relevance, pg_catalog.row_number() over (order by t.score desc, t.id) as rank
      from agentmem.memory_bm25_hits(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_since => p_since, p_until => p_until, terms => case when p_mode <> 'vector' then agentmem.query_terms(p_query) end,
             n => candidates, exact => exact) t
    ),
    vector_hits as (
      select v.id, 1 - v.distance as score, pg_catalog.row_number() over (order by v.distance, v.id) as rank
      from agentmem.memory_neighbours(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_since => p_since, p_until => p_until, query_embedding => case when p_mode <> 'text' then query_embedding end,
             query_model => query_model, n => candidates, exact => exact) v
    ),
    fused as (
      select coalesce(t.id, v.id) as id,
             case p_mode
               when 'text' then t.score
               when 'vector' then v.score
               else agentmem.rrf_score(text_rank => t.rank, vector_rank => v.rank,
                      text_weight => text_weight, vector_weight => vector_weight, rrf_k => rrf_k)
                    + relevance_weight * greatest(coalesce(t.relevance, 0), agentmem.vector_relevance(v.score, vector_baseline))
             end as score,
             greatest(coalesce(t.relevance, 0), agentmem.vector_relevance(v.score, vector_baseline)) as relevance
      from text_hits t full join vector_hits v on v.id = t.id
    ),
    best as (
      select f.id, f.score, f.relevance from fused f
      where f.score >= min_score and f.relevance >= min_relevance
      order by f.score desc, f.id limit p_k
    )
    select f.id, m.content, f.score, m.metadata, m.created_at, f.relevance,
           case when with_vectors and m.embedding_model = query_model
                 and m.embedding_dims = extensions.vector_dims(query_embedding) then m.embedding end
    from best f join agentmem.memories m on m.id = f.id
    order by f.score desc, f.id;
end
$$;

create function agentmem.recall_sources(
  p_source text, p_query text, query_embedding extensions.vector, query_model text,
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  p_mode text, candidates integer, text_weight double precision, vector_weight double precision,
  rrf_k integer, min_score double precision, p_k integer, exact_limit integer, with_vectors boolean,
  p_since timestamptz default null, p_until timestamptz default null, p_speaker text default '',
  p_role text default '', follow_weight double precision default 0, min_relevance double precision default 0,
  vector_baseline double precision default 0, relevance_weight double precision default 0
)
returns table (source text, id uuid, session_id uuid, seq bigint, role text, name text, content text,
               score double precision, metadata jsonb, created_at timestamptz, relevance double precision,
               embedding extensions.vector)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
as $$
declare
  -- memories have no speaker nor role: a filter of either keeps messages alone
  with_memories boolean := p_source in ('memories', 'all') and p_speaker = '' and p_role = '';
  with_messages boolean := p_source in ('messages', 'all');
  terms text[] := case when p_mode <> 'vector' then agentmem.query_terms(p_query) end;
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
      select 'memory'::text as src, t.id as k1, 0::bigint as k2, t.score, t.relevance
      from agentmem.memory_bm25_hits(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_since => p_since, p_until => p_until, terms => case when with_memories then terms end, n => candidates, exact => memories_exact) t
      union all
      select 'message'::text, t.session_id, t.seq, t.score, t.relevance
      from agentmem.message_bm25_hits(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_speaker => p_speaker, p_role => p_role, p_since => p_since, p_until => p_until,
             terms => case when with_messages then terms end, n => candidates, exact => messages_exact,
             follow_weight => follow_weight) t
    ),
    text_hits as (
      select t.src, t.k1, t.k2, t.score, t.relevance,
             pg_catalog.row_number() over (order by t.score desc, t.src, t.k1, t.k2) as rank
      from text_found t
    ),
    vector_found as (
      select 'memory'::text as src, v.id as k1, 0::bigint as k2, v.distance
      from agentmem.memory_neighbours(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_since => p_since, p_until => p_until, query_embedding => case when with_memories then qv end,
             query_model => query_model, n => candidates, exact => memories_exact) v
      union all
      select 'message'::text, v.session_id, v.seq, v.distance
      from agentmem.message_neighbours(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_speaker => p_speaker, p_role => p_role, p_since => p_since, p_until => p_until,
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
                    + relevance_weight * greatest(coalesce(t.relevance, 0), agentmem.vector_relevance(v.score, vector_baseline))
             end as score,
             greatest(coalesce(t.relevance, 0), agentmem.vector_relevance(v.score, vector_baseline)) as relevance
      from text_hits t full join vector_hits v on v.src = t.src and v.k1 = t.k1 and v.k2 = t.k2
    ),
    best as (
      select f.src, f.k1, f.k2, f.score, f.relevance from fused f
      where f.score >= min_score and f.relevance >= min_relevance
      order by f.score desc, f.src, f.k1, f.k2 limit p_k
    )
    select b.src, coalesce(m.id, g.id), g.session_id, g.seq, g.role, g.name, coalesce(m.content, g.content),
           b.score, coalesce(m.metadata, g.metadata), coalesce(m.created_at, g.created_at), b.relevance,
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
do $$
declare
  f text;
begin
  foreach f in array array[
    'agentmem.vector_relevance(double precision, double precision)',
    'agentmem.recall_memories(text, extensions.vector, text, uuid, text, text, jsonb, text, integer, double precision, double precision, integer, double precision, integer, integer, boolean, timestamptz, timestamptz, double precision, double precision, double precision)',
    'agentmem.recall_sources(text, text, extensions.vector, text, uuid, text, text, jsonb, text, integer, double precision, double precision, integer, double precision, integer, integer, boolean, timestamptz, timestamptz, text, text, double precision, double precision, double precision, double precision)'
  ] loop
    execute pg_catalog.format('revoke all on function %s from public, anon, authenticated', f);
    execute pg_catalog.format('grant execute on function %s to agentmem_caller, service_role', f);
  end loop;
end
$$;
