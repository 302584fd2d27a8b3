-- Hybrid ranking's reciprocal rank fusion, written once: agentmem.rrf_score, used by recall
-- (agentmem.recall_memories), knowledge search (the store's query) and the supabase-js RPC
-- public.hybrid_match_memories. Functions call functions of several arguments with named
-- arguments. supabase/schema.sql shows every function whole.
--
-- Recall and knowledge search rank exactly as before. The RPC's scores are now computed in
-- double precision, as recall's are, instead of numeric then double precision: they may differ in
-- the last digits, and rows tie exactly when their ranks are the same pair.

-- The reciprocal-rank-fusion score of a row ranked text_rank by full text and vector_rank by
-- vector distance (null: not among that side's hits), each side weighted:
-- text_weight / (rrf_k + text_rank) + vector_weight / (rrf_k + vector_rank). PL/pgSQL: called
-- once per candidate, it costs far less than a SQL function that sets search_path.
create function agentmem.rrf_score(
  text_rank bigint, vector_rank bigint,
  text_weight double precision, vector_weight double precision, rrf_k integer
)
returns double precision
language plpgsql immutable parallel safe
set search_path = ''
as $$
begin
  return coalesce(text_weight / (rrf_k + text_rank), 0) + coalesce(vector_weight / (rrf_k + vector_rank), 0);
end
$$;

-- The functions' role ranks with it; a Supabase client's hybrid_match_memories does too.
revoke execute on function agentmem.rrf_score(bigint, bigint, double precision, double precision, integer)
  from public, anon;
grant execute on function agentmem.rrf_score(bigint, bigint, double precision, double precision, integer)
  to authenticated, agentmem_caller, service_role;

-- Recall, as before (migration store_vectors_of_any_model), with the fusion of rrf_score.
create or replace function agentmem.recall_memories(
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
  exact boolean := agentmem.memory_scope_is_small(
    p_user_id => p_user_id, p_tenant_id => p_tenant_id, exact_limit => exact_limit);
begin
  return query
    with
    text_hits as (
      select t.id, t.score, pg_catalog.row_number() over (order by t.score desc, t.id) as rank
      from agentmem.memory_text_hits(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             q => case when p_mode <> 'vector' then agentmem.any_words_query(p_query) end,
             n => candidates, exact => exact) t
    ),
    vector_hits as (
      select v.id, 1 - v.distance as score, pg_catalog.row_number() over (order by v.distance, v.id) as rank
      from agentmem.memory_neighbours(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             query_embedding => case when p_mode <> 'text' then query_embedding end,
             query_model => query_model, n => candidates, exact => exact) v
    ),
    fused as (
      select coalesce(t.id, v.id) as id,
             case p_mode
               when 'text' then t.score
               when 'vector' then v.score
               else agentmem.rrf_score(text_rank => t.rank, vector_rank => v.rank,
                      text_weight => text_weight, vector_weight => vector_weight, rrf_k => rrf_k)
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

-- The supabase-js RPC, as before (migration store_vectors_of_any_model), with the fusion of
-- rrf_score.
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
         agentmem.rrf_score(text_rank => ft.rank_ix, vector_rank => s.rank_ix,
           text_weight => full_text_weight, vector_weight => semantic_weight, rrf_k => rrf_k) as score
  from full_text ft
    full outer join semantic s on s.id = ft.id
    join agentmem.memories m on m.id = coalesce(ft.id, s.id)
  order by score desc, m.id
  limit least(greatest(match_count, 0), 1000)
$$;
