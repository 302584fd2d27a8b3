-- The match functions for supabase-js, again, with what they lacked:
--
-- - hybrid_match_memories had no filter_user_id: a service caller (row-level security does not
--   bind service_role) got every user's memories fused into one list. Every memory function now
--   takes filter_user_id and filter_tenant_id, and match_knowledge filter_tenant_id as before. For
--   a user they can only narrow what row-level security lets them see.
-- - Vectors of different models do not compare: query_model, when given, keeps the rows whose
--   vector that model made (embedding_model), as the functions of the store do.
-- - A query vector without direction (all zeros) is at distance NaN from everything, which sorts
--   after every number: such rows were returned as matches. Rows at distance NaN are left out (the
--   hybrid search then ranks by full text alone).
--
-- New arguments come last, with defaults, so calls that worked before still do (by position or by
-- name). The signatures change, so the old functions are dropped, not replaced. As before: each
-- runs as its caller (security invoker) with an empty search_path and every name qualified, the
-- HNSW scans go on until enough rows pass the filters (hnsw.iterative_scan), and only the API
-- roles that sign in may execute them.

drop function public.match_memories(extensions.vector, integer, uuid);
drop function public.match_knowledge(extensions.vector, integer, text);
drop function public.hybrid_match_memories(text, extensions.vector, integer, double precision,
  double precision, integer);

-- Nearest memories to an embedding, by cosine similarity (1 = same direction).
create function public.match_memories(
  query_embedding extensions.vector(384),
  match_count integer,
  filter_user_id uuid default null,
  filter_tenant_id text default null,
  query_model text default null
)
returns table (id uuid, content text, metadata jsonb, similarity double precision)
language sql stable
security invoker
set search_path = ''
set hnsw.iterative_scan = 'strict_order'
as $$
  select m.id, m.content, m.metadata,
         1 - (m.embedding operator(extensions.<=>) query_embedding) as similarity
  from agentmem.memories m
  where m.embedding is not null
    and m.expires_at > pg_catalog.now()
    and (filter_user_id is null or m.user_id = filter_user_id)
    and (filter_tenant_id is null or m.tenant_id = filter_tenant_id)
    and (query_model is null or m.embedding_model = query_model)
    and (m.embedding operator(extensions.<=>) query_embedding) <> 'NaN'::float8
  order by m.embedding operator(extensions.<=>) query_embedding, m.id
  limit least(greatest(match_count, 0), 1000)
$$;

-- Nearest knowledge chunks to an embedding. filter_tenant_id narrows a service caller's search
-- to one tenant; a user sees only their own tenant's chunks in any case.
create function public.match_knowledge(
  query_embedding extensions.vector(384),
  match_count integer,
  filter_tenant_id text default null,
  query_model text default null
)
returns table (id uuid, source text, chunk_index integer, content text, metadata jsonb,
               similarity double precision)
language sql stable
security invoker
set search_path = ''
set hnsw.iterative_scan = 'strict_order'
as $$
  select k.id, k.source, k.chunk_index, k.content, k.metadata,
         1 - (k.embedding operator(extensions.<=>) query_embedding) as similarity
  from agentmem.knowledge_chunks k
  where k.embedding is not null
    and (filter_tenant_id is null or k.tenant_id = filter_tenant_id)
    and (query_model is null or k.embedding_model = query_model)
    and (k.embedding operator(extensions.<=>) query_embedding) <> 'NaN'::float8
  order by k.embedding operator(extensions.<=>) query_embedding, k.id
  limit least(greatest(match_count, 0), 1000)
$$;

-- Hybrid search over memories, as Supabase's hybrid search: full-text and vector rankings fused
-- by reciprocal rank, each side weighted. The full-text side matches any word of query_text
-- (the ranking then prefers memories that share more of them), as the recall function does.
-- The filters apply to both sides; query_model to the vector side only (full text has no model).
-- score is the fused score: higher is better.
create function public.hybrid_match_memories(
  query_text text,
  query_embedding extensions.vector(384),
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
set hnsw.iterative_scan = 'strict_order'
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
  semantic as (
    select m.id,
           pg_catalog.row_number() over (order by m.embedding operator(extensions.<=>) query_embedding, m.id) as rank_ix
    from agentmem.memories m
    where m.embedding is not null
      and m.expires_at > pg_catalog.now()
      and (filter_user_id is null or m.user_id = filter_user_id)
      and (filter_tenant_id is null or m.tenant_id = filter_tenant_id)
      and (query_model is null or m.embedding_model = query_model)
      and (m.embedding operator(extensions.<=>) query_embedding) <> 'NaN'::float8
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

-- Supabase grants new functions in public to anon by default: take that back.
revoke execute on function public.match_memories(extensions.vector, integer, uuid, text, text)
  from public, anon;
revoke execute on function public.match_knowledge(extensions.vector, integer, text, text)
  from public, anon;
revoke execute on function public.hybrid_match_memories(text, extensions.vector, integer,
  double precision, double precision, integer, uuid, text, text) from public, anon;
grant execute on function public.match_memories(extensions.vector, integer, uuid, text, text)
  to authenticated, service_role;
grant execute on function public.match_knowledge(extensions.vector, integer, text, text)
  to authenticated, service_role;
grant execute on function public.hybrid_match_memories(text, extensions.vector, integer,
  double precision, double precision, integer, uuid, text, text) to authenticated, service_role;
