-- Similarity search for supabase-js callers: `supabase.rpc('match_memories', {...})` and friends.
-- They live in `public` so PostgREST exposes them. Each runs as its caller (security invoker),
-- so row-level security decides what it sees: a user gets only their own memories and their own
-- tenant's knowledge, whatever the arguments; a filter can only narrow that. The search_path is
-- empty and every name qualified, so no object a caller creates can stand in for ours. Expired
-- memories are never returned, as by every function.
--
-- The HNSW scans go on until enough rows pass row-level security and the filters
-- (hnsw.iterative_scan), so a user among many still gets match_count rows.

-- Nearest memories to an embedding, by cosine similarity (1 = same direction).
create function public.match_memories(
  query_embedding extensions.vector(384),
  match_count integer,
  filter_user_id uuid default null
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
  order by m.embedding operator(extensions.<=>) query_embedding, m.id
  limit least(greatest(match_count, 0), 1000)
$$;

-- Nearest knowledge chunks to an embedding. filter_tenant_id narrows a service caller's search
-- to one tenant; a user sees only their own tenant's chunks in any case.
create function public.match_knowledge(
  query_embedding extensions.vector(384),
  match_count integer,
  filter_tenant_id text default null
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
  order by k.embedding operator(extensions.<=>) query_embedding, k.id
  limit least(greatest(match_count, 0), 1000)
$$;

-- Hybrid search over memories, as Supabase's hybrid search: full-text and vector rankings fused
-- by reciprocal rank, each side weighted. The full-text side matches any word of query_text
-- (the ranking then prefers memories that share more of them), as the recall function does.
-- score is the fused score: higher is better.
create function public.hybrid_match_memories(
  query_text text,
  query_embedding extensions.vector(384),
  match_count integer,
  full_text_weight double precision default 1,
  semantic_weight double precision default 1,
  rrf_k integer default 50
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
    order by rank_ix
    limit least(greatest(match_count, 0), 1000) * 2
  ),
  semantic as (
    select m.id,
           pg_catalog.row_number() over (order by m.embedding operator(extensions.<=>) query_embedding, m.id) as rank_ix
    from agentmem.memories m
    where m.embedding is not null
      and m.expires_at > pg_catalog.now()
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
revoke execute on function public.match_memories(extensions.vector, integer, uuid) from public, anon;
revoke execute on function public.match_knowledge(extensions.vector, integer, text) from public, anon;
revoke execute on function public.hybrid_match_memories(text, extensions.vector, integer, double precision, double precision, integer) from public, anon;
grant execute on function public.match_memories(extensions.vector, integer, uuid) to authenticated, service_role;
grant execute on function public.match_knowledge(extensions.vector, integer, text) to authenticated, service_role;
grant execute on function public.hybrid_match_memories(text, extensions.vector, integer, double precision, double precision, integer) to authenticated, service_role;
