-- Knowledge search ranks a tenant's chunks as recall ranks a user's memories
-- (agentmem.memory_neighbours): exactly while the tenant has fewer chunks than exact_limit, else
-- through the model's HNSW index with iterative scans, so a tenant among many still gets n
-- chunks of its own. Only vectors of the query's model and dimension compare.
create function agentmem.knowledge_neighbours(
  p_tenant_id text, query_embedding extensions.vector, query_model text, n integer, exact_limit integer
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
  if (select pg_catalog.count(*) from (select 1 from agentmem.knowledge_chunks k
        where k.tenant_id = p_tenant_id limit exact_limit) s) < exact_limit then
    return query
      select x.id, x.d from (
        select k.id,
               case when k.embedding_model = query_model and k.embedding_dims = dims
                    then k.embedding operator(extensions.<=>) query_embedding end as d
        from agentmem.knowledge_chunks k
        where k.tenant_id = p_tenant_id
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
      select k.id,
             k.embedding::extensions.vector(%1$s) operator(extensions.<=>) $2::extensions.vector(%1$s) as d
      from agentmem.knowledge_chunks k
      where k.embedding_model = %2$L and k.embedding_dims = %1$s and k.tenant_id = $1
      order by d
      limit $3
    )
    select near.id, near.d from near where near.d <> 'NaN'::float8 order by near.d, near.id
    $q$, dims, query_model)
    using p_tenant_id, query_embedding, n;
end
$$;

revoke execute on function agentmem.knowledge_neighbours(text, extensions.vector, text, integer, integer)
  from public, anon;
grant execute on function agentmem.knowledge_neighbours(text, extensions.vector, text, integer, integer)
  to authenticated, service_role;
