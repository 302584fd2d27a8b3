-- agentmem.recall_sources as it was before the lists could be asked apart (migration
-- rank_recalls_arms_apart), renamed: the reference TestRecallArmsAtOnceAnswerAsOneStatement
-- compares recall with. Loaded into the test's own database only.
CREATE FUNCTION agentmem.recall_sources_one_statement(p_source text, p_query text, query_embedding extensions.vector, query_model text, p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_mode text, candidates integer, text_weight double precision, vector_weight double precision, rrf_k integer, min_score double precision, p_k integer, exact_limit integer, with_vectors boolean, p_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_until timestamp with time zone DEFAULT NULL::timestamp with time zone, p_speaker text DEFAULT ''::text, p_role text DEFAULT ''::text, follow_weight double precision DEFAULT 0, min_relevance double precision DEFAULT 0, vector_baseline double precision DEFAULT 0, relevance_weight double precision DEFAULT 0, with_shared boolean DEFAULT false)
 RETURNS TABLE(source text, id text, session_id uuid, seq bigint, role text, name text, content text, score double precision, metadata jsonb, created_at timestamp with time zone, relevance double precision, embedding extensions.vector, shared boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  -- memories have no speaker nor role: a filter of either keeps messages alone
  with_memories boolean := p_source in ('memories', 'all') and p_speaker = '' and p_role = '';
  with_messages boolean := p_source in ('messages', 'all');
  terms text[] := case when p_mode <> 'vector' then agentmem.query_terms(p_query) end;
  qv extensions.vector := case when p_mode <> 'text' then query_embedding end;
  -- one count per source (and owner of memories) for both sides
  memories_exact boolean;
  own_exact boolean;
  shared_exact boolean;
  messages_exact boolean;
  -- '' with_shared, else the user again: the owners as a list, which prunes partitions
  shared_owner text := case when with_shared and p_user_id <> '' then '' else p_user_id end;
begin
  if with_memories then
    own_exact := agentmem.memory_scope_is_small(
      p_user_id => p_user_id, p_tenant_id => p_tenant_id, exact_limit => exact_limit);
    shared_exact := case when with_shared and p_user_id <> ''
      then agentmem.memory_scope_is_small(p_user_id => '', p_tenant_id => p_tenant_id, exact_limit => exact_limit)
      else true end;
    memories_exact := own_exact and shared_exact;
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
             p_since => p_since, p_until => p_until, terms => case when with_memories then terms end, n => candidates, exact => memories_exact,
             with_shared => with_shared) t
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
      (select 'memory'::text as src, v.id as k1, 0::bigint as k2, v.distance
      from pg_catalog.unnest(agentmem.memory_owners(p_user_id, with_shared)) o(owner),
        lateral agentmem.memory_neighbours(
             p_user_id => o.owner, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_since => p_since, p_until => p_until, query_embedding => case when with_memories then qv end,
             query_model => query_model, n => candidates,
             exact => case when o.owner = p_user_id then own_exact else shared_exact end) v
      order by v.distance, v.id
      limit candidates)
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
    select b.src, coalesce(m.id::text, g.id), g.session_id, g.seq, g.role, g.name, coalesce(m.content, g.content),
           b.score, coalesce(m.metadata, g.metadata), coalesce(m.created_at, g.created_at), b.relevance,
           case when with_vectors and m.embedding_model = query_model
                 and m.embedding_dims = extensions.vector_dims(query_embedding) then m.embedding
                when with_vectors and g.embedding_model = query_model
                 and g.embedding_dims = extensions.vector_dims(query_embedding) then g.embedding end,
           coalesce(m.user_id = '', false)
    -- each by its key (subqueries kept whole): a join on the generic plan, which expects a user of
    -- average size, read all of a large user's memories once per result, spilling them to disk
    from best b
      left join lateral (
        select x.* from agentmem.memories x
        where b.src = 'memory' and x.user_id in (p_user_id, shared_owner) and x.id = b.k1
        offset 0) m on true
      left join lateral (
        select y.* from agentmem.messages y
        where b.src = 'message' and y.user_id = p_user_id and y.session_id = b.k1 and y.seq = b.k2
        offset 0) g on true
    where m.id is not null or g.session_id is not null -- only rows the caller may read, as an inner join
    order by b.score desc, b.src, b.k1, b.k2;
end
$function$;
