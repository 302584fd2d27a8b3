-- A large user's nearest memories come from the HNSW index.
--
-- Above the exact limit, agentmem.memory_neighbours asks the model's HNSW index for the
-- user's nearest memories, and the planner chooses between that index and the user's rows
-- sorted by distance, by how many rows it expects the user to have. Row-level security adds
-- its own condition on the user: for memories it is an OR (the user's own rows, or the
-- tenant's shared ones), which the planner cannot merge with the function's "user_id = $1",
-- so it multiplied the two and expected a user of 100,000 memories among 200,000 to have 149.
-- It then read and sorted all 100,000 at every recall: 35,000 buffers, 91 ms warm and over a
-- second cold (agentmem-bench -only w3sources, clustered texts; auto_explain). Messages, whose
-- policy has no OR, got the index (7.5 ms).
--
-- The index-served search is now agentmem.memory_index_neighbours, which reads as its owner
-- and answers only the caller's own scope, as agentmem.memory_word_matches does: the user and
-- tenant of the claims, or the tenant's shared memories for a signed-in caller, exactly what
-- the policy lets the caller read. The planner then sees only the function's own condition.

create function agentmem.memory_index_neighbours(p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb,
  p_since timestamp with time zone, p_until timestamp with time zone, query_embedding extensions.vector,
  query_model text, n integer)
returns table(id uuid, distance double precision)
language plpgsql
stable
security definer
set search_path to ''
as $function$
declare
  dims integer := extensions.vector_dims(query_embedding);
begin
  -- what the policy caller_reads lets the caller read: their own rows, or the tenant's shared
  -- ones (user '') when signed in
  if agentmem.current_user_id() is null or p_user_id not in (agentmem.current_user_id(), '')
     or p_tenant_id is distinct from agentmem.current_tenant()
     or query_embedding is null or n < 1 then
    return;
  end if;
  perform pg_catalog.set_config('hnsw.iterative_scan', 'relaxed_order', true);
  perform pg_catalog.set_config('hnsw.ef_search', greatest(n, 100)::text, true);
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
          and not exists (select 1 from pg_catalog.jsonb_each($4) x
                          where m.metadata operator(pg_catalog.->) x.key operator(pg_catalog.<>) x.value)))
        and ($7 is null or m.created_at >= $7)
        and ($8 is null or m.created_at < $8)
      order by d
      limit $6
    )
    select near.id, near.d from near where near.d <> 'NaN'::float8 order by near.d, near.id
    $q$, dims, query_model)
    using p_user_id, p_tenant_id, p_agent, p_filter, query_embedding, n, p_since, p_until;
end
$function$;

revoke all on function agentmem.memory_index_neighbours(text, text, text, jsonb, timestamp with time zone,
  timestamp with time zone, extensions.vector, text, integer) from public, anon, authenticated;
grant execute on function agentmem.memory_index_neighbours(text, text, text, jsonb, timestamp with time zone,
  timestamp with time zone, extensions.vector, text, integer) to agentmem_caller, service_role;

create or replace function agentmem.memory_neighbours(p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb,
  p_since timestamp with time zone, p_until timestamp with time zone, query_embedding extensions.vector,
  query_model text, n integer, exact boolean)
returns table(id uuid, distance double precision)
language plpgsql
stable
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
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
            and not exists (select 1 from pg_catalog.jsonb_each(p_filter) x
                            where m.metadata operator(pg_catalog.->) x.key operator(pg_catalog.<>) x.value)))
          and (p_since is null or m.created_at >= p_since)
          and (p_until is null or m.created_at < p_until)
        offset 0
      ) x
      -- a text without words embeds to the zero vector: its distance is NaN, it has no rank
      where x.d is not null and x.d <> 'NaN'::float8
      order by x.d, x.id
      limit n;
    return;
  end if;
  -- through the index, where row-level security's condition cannot mislead the planner
  return query
    select x.id, x.distance from agentmem.memory_index_neighbours(
      p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
      p_since => p_since, p_until => p_until, query_embedding => query_embedding,
      query_model => query_model, n => n) x;
end
$function$;
