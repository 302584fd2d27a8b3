-- Hybrid recall's arms as functions of their own, so that they can run at once.
--
-- A hybrid recall ranks the scope's rows by BM25 and by vector distance, then fuses the two
-- lists. agentmem.recall_sources did all of it in one statement, one arm after the other: for
-- a user of 6,790 messages of natural conversation, the text arm took about 5.5 ms and the
-- vector arm about 4.5 ms of its 9.8 ms (p50 of 200 questions). The arms need nothing from each
-- other, so the store now asks each on a connection of its own, at once, and then fuses their
-- lists in a third statement (one more round trip): the latency of the slower arm, not of both.
--
-- agentmem.recall_text_arm and agentmem.recall_vector_arm are recall_sources' two candidate
-- lists; agentmem.recall_fuse is the rest of it (the rank fusion, the thresholds, and the rows
-- read by their keys). recall_sources is now these three in turn, with the scope counted once
-- for both arms, and answers as before, to the last bit; recall_memories is recall_sources over
-- memories. The fusion computes its scores in the query: agentmem.rrf_score and
-- agentmem.vector_relevance, called, were three function calls a candidate (a function with a
-- SET clause is never inlined); without them a small user's hybrid recall took 1.26 ms p50
-- against 1.40 (W3). Asked apart, the lists and the fusion are transactions of their own:
-- recall_fuse passes over a candidate whose row is gone or expired by then, for the next one
-- (within one statement every candidate's row is there).
--
-- Whether each source's scope is ranked exactly is counted once, by
-- agentmem.recall_scope_exact: by recall_sources for both its lists, or by each list asked
-- apart.
--
-- All three run with the caller's rights, as recall_sources does: the arms' searches answer only
-- the claims' own scope, and recall_fuse reads the rows of the keys it is given through
-- row-level security, so keys of another user's rows find nothing.

-- Whether p_source's scopes are ranked exactly (fewer rows than exact_limit): the user's memories
-- (own_exact), the tenant's shared memories (shared_exact: true unless with_shared), the user's
-- messages (messages_exact); null for a source the recall does not rank (memories have no
-- speaker nor role: a filter of either keeps messages alone).
create function agentmem.recall_scope_exact(
  p_source text, p_user_id text, p_tenant_id text, p_speaker text, p_role text, exact_limit integer,
  with_shared boolean, out own_exact boolean, out shared_exact boolean, out messages_exact boolean)
language plpgsql stable
set search_path = ''
as $function$
begin
  if p_source in ('memories', 'all') and p_speaker = '' and p_role = '' then
    own_exact := agentmem.memory_scope_is_small(
      p_user_id => p_user_id, p_tenant_id => p_tenant_id, exact_limit => exact_limit);
    shared_exact := case when with_shared and p_user_id <> ''
      then agentmem.memory_scope_is_small(p_user_id => '', p_tenant_id => p_tenant_id, exact_limit => exact_limit)
      else true end;
  end if;
  if p_source in ('messages', 'all') then
    messages_exact := agentmem.message_scope_is_small(
      p_user_id => p_user_id, p_tenant_id => p_tenant_id, exact_limit => exact_limit);
  end if;
end
$function$;

-- The full-text candidates of p_source's rows: 'memory' rows keyed by id (k2 0), 'message'
-- rows by session and seq. own_exact, shared_exact and messages_exact are
-- agentmem.recall_scope_exact's answer; all three null, the arm asks it.
create function agentmem.recall_text_arm(
  p_source text, p_query text, p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb,
  p_since timestamptz, p_until timestamptz, p_speaker text, p_role text, candidates integer,
  exact_limit integer, follow_weight double precision, with_shared boolean,
  own_exact boolean default null, shared_exact boolean default null, messages_exact boolean default null)
returns table (src text, k1 uuid, k2 bigint, score double precision, relevance double precision)
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $function$
declare
  -- memories have no speaker nor role: a filter of either keeps messages alone
  with_memories boolean := p_source in ('memories', 'all') and p_speaker = '' and p_role = '';
  with_messages boolean := p_source in ('messages', 'all');
  terms text[] := agentmem.query_terms(p_query);
begin
  if own_exact is null and shared_exact is null and messages_exact is null then
    select e.own_exact, e.shared_exact, e.messages_exact into own_exact, shared_exact, messages_exact
    from agentmem.recall_scope_exact(p_source, p_user_id, p_tenant_id, p_speaker, p_role, exact_limit, with_shared) e;
  end if;
  return query
    select 'memory'::text, t.id, 0::bigint, t.score, t.relevance
    from agentmem.memory_bm25_hits(
           p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
           p_since => p_since, p_until => p_until, terms => case when with_memories then terms end, n => candidates,
           exact => own_exact and shared_exact, with_shared => with_shared) t
    union all
    select 'message'::text, t.session_id, t.seq, t.score, t.relevance
    from agentmem.message_bm25_hits(
           p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
           p_speaker => p_speaker, p_role => p_role, p_since => p_since, p_until => p_until,
           terms => case when with_messages then terms end, n => candidates, exact => messages_exact,
           follow_weight => follow_weight) t;
end
$function$;

-- The nearest candidates of p_source's rows to query_embedding, keyed as the text arm's: at
-- most candidates memories (of the user and, with_shared, of the tenant's shared ones) and
-- candidates messages. The flags: as the text arm's.
create function agentmem.recall_vector_arm(
  p_source text, query_embedding extensions.vector, query_model text, p_user_id text, p_tenant_id text,
  p_agent text, p_filter jsonb, p_since timestamptz, p_until timestamptz, p_speaker text, p_role text,
  candidates integer, exact_limit integer, with_shared boolean,
  own_exact boolean default null, shared_exact boolean default null, messages_exact boolean default null)
returns table (src text, k1 uuid, k2 bigint, distance double precision)
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $function$
declare
  with_memories boolean := p_source in ('memories', 'all') and p_speaker = '' and p_role = '';
  with_messages boolean := p_source in ('messages', 'all');
begin
  if own_exact is null and shared_exact is null and messages_exact is null then
    select e.own_exact, e.shared_exact, e.messages_exact into own_exact, shared_exact, messages_exact
    from agentmem.recall_scope_exact(p_source, p_user_id, p_tenant_id, p_speaker, p_role, exact_limit, with_shared) e;
  end if;
  return query
    (select 'memory'::text, v.id, 0::bigint, v.distance
    from pg_catalog.unnest(agentmem.memory_owners(p_user_id, with_shared)) o(owner),
      lateral agentmem.memory_neighbours(
           p_user_id => o.owner, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
           p_since => p_since, p_until => p_until, query_embedding => case when with_memories then query_embedding end,
           query_model => query_model, n => candidates,
           exact => case when o.owner = p_user_id then own_exact else shared_exact end) v
    order by v.distance, v.id
    limit candidates)
    union all
    select 'message'::text, v.session_id, v.seq, v.distance
    from agentmem.message_neighbours(
           p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
           p_speaker => p_speaker, p_role => p_role, p_since => p_since, p_until => p_until,
           query_embedding => case when with_messages then query_embedding end,
           query_model => query_model, n => candidates, exact => messages_exact) v;
end
$function$;

-- The answer of a recall from its arms' candidates (text_* the text arm's rows, vector_* the
-- vector arm's, as parallel arrays; null or empty for an arm not asked): each list ranked, the
-- ranks fused (p_mode 'text' or 'vector': that list's own score), the thresholds applied, and
-- the best p_k read by their keys, as rows of agentmem.recall_sources.
create function agentmem.recall_fuse(
  p_mode text, p_user_id text, with_shared boolean, query_embedding extensions.vector, query_model text,
  text_weight double precision, vector_weight double precision, rrf_k integer, min_score double precision,
  min_relevance double precision, vector_baseline double precision, relevance_weight double precision,
  p_k integer, with_vectors boolean,
  text_src text[], text_k1 uuid[], text_k2 bigint[], text_score double precision[], text_relevance double precision[],
  vector_src text[], vector_k1 uuid[], vector_k2 bigint[], vector_distance double precision[])
returns table (source text, id text, session_id uuid, seq bigint, role text, name text, content text,
  score double precision, metadata jsonb, created_at timestamptz, relevance double precision,
  embedding extensions.vector, shared boolean)
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $function$
declare
  -- '' with_shared, else the user again: the owners as a list, which prunes partitions
  shared_owner text := case when with_shared and p_user_id <> '' then '' else p_user_id end;
  -- the fused candidates ranked after the first lo are read, want at a time
  lo integer := 0;
  want integer := p_k;
  got integer;
  ranks integer := coalesce(pg_catalog.cardinality(text_src), 0) + coalesce(pg_catalog.cardinality(vector_src), 0);
begin
  -- The best want candidates are read by their keys. Within one statement (recall_sources)
  -- every candidate's row is there; when the lists were asked apart, a row can be gone (erased,
  -- merged, expired) by the time it is read: the candidates after it take its place.
  while want > 0 and lo < ranks loop
    return query
      with
      text_hits as (
        select t.src, t.k1, t.k2, t.score, t.relevance,
               pg_catalog.row_number() over (order by t.score desc, t.src, t.k1, t.k2) as rank
        from rows from (pg_catalog.unnest(text_src), pg_catalog.unnest(text_k1), pg_catalog.unnest(text_k2),
               pg_catalog.unnest(text_score), pg_catalog.unnest(text_relevance)) t(src, k1, k2, score, relevance)
      ),
      vector_hits as (
        select v.src, v.k1, v.k2, 1 - v.distance as score,
               pg_catalog.row_number() over (order by v.distance, v.src, v.k1, v.k2) as rank
        from rows from (pg_catalog.unnest(vector_src), pg_catalog.unnest(vector_k1), pg_catalog.unnest(vector_k2),
               pg_catalog.unnest(vector_distance)) v(src, k1, k2, distance)
      ),
      -- agentmem.rrf_score and agentmem.vector_relevance written out, each once a row: called,
      -- they ran as functions of their own (a SET clause keeps a function from being inlined),
      -- three a candidate
      joined as (
        select coalesce(t.src, v.src) as src, coalesce(t.k1, v.k1) as k1, coalesce(t.k2, v.k2) as k2,
               t.score as by_text, v.score as by_vector, t.rank as text_place, v.rank as vector_place,
               greatest(coalesce(t.relevance, 0),
                 case when v.score is null then 0
                      when vector_baseline <= 0 then greatest(v.score, 0)
                      when vector_baseline >= 1 then 0
                      else greatest((v.score - vector_baseline) / (1 - vector_baseline), 0) end) as relevance
        from text_hits t full join vector_hits v on v.src = t.src and v.k1 = t.k1 and v.k2 = t.k2
      ),
      fused as (
        select j.src, j.k1, j.k2,
               case p_mode
                 when 'text' then j.by_text
                 when 'vector' then j.by_vector
                 else coalesce(text_weight / (rrf_k + j.text_place), 0) + coalesce(vector_weight / (rrf_k + j.vector_place), 0)
                      + relevance_weight * j.relevance
               end as score,
               j.relevance
        from joined j
      ),
      best as (
        select f.src, f.k1, f.k2, f.score, f.relevance from fused f
        where f.score >= min_score and f.relevance >= min_relevance
        order by f.score desc, f.src, f.k1, f.k2 offset lo limit want
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
            and x.expires_at > pg_catalog.now()
          offset 0) m on true
        left join lateral (
          select y.* from agentmem.messages y
          where b.src = 'message' and y.user_id = p_user_id and y.session_id = b.k1 and y.seq = b.k2
            and y.expires_at > pg_catalog.now()
          offset 0) g on true
      where m.id is not null or g.session_id is not null -- only rows the caller may read, as an inner join
      order by b.score desc, b.src, b.k1, b.k2;
    get diagnostics got = row_count;
    lo := lo + want;
    want := want - got;
  end loop;
end
$function$;

create or replace function agentmem.recall_sources(p_source text, p_query text, query_embedding extensions.vector,
  query_model text, p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_mode text, candidates integer,
  text_weight double precision, vector_weight double precision, rrf_k integer, min_score double precision,
  p_k integer, exact_limit integer, with_vectors boolean, p_since timestamptz default null,
  p_until timestamptz default null, p_speaker text default '', p_role text default '',
  follow_weight double precision default 0, min_relevance double precision default 0,
  vector_baseline double precision default 0, relevance_weight double precision default 0,
  with_shared boolean default false)
returns table (source text, id text, session_id uuid, seq bigint, role text, name text, content text,
  score double precision, metadata jsonb, created_at timestamptz, relevance double precision,
  embedding extensions.vector, shared boolean)
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $function$
declare
  -- memories have no speaker nor role: a filter of either keeps messages alone
  -- one count per source (and owner of memories) for both arms
  own_exact boolean;
  shared_exact boolean;
  messages_exact boolean;
  t_src text[];
  t_k1 uuid[];
  t_k2 bigint[];
  t_score double precision[];
  t_relevance double precision[];
  v_src text[];
  v_k1 uuid[];
  v_k2 bigint[];
  v_distance double precision[];
begin
  select e.own_exact, e.shared_exact, e.messages_exact into own_exact, shared_exact, messages_exact
  from agentmem.recall_scope_exact(p_source, p_user_id, p_tenant_id, p_speaker, p_role, exact_limit, with_shared) e;
  if p_mode <> 'vector' then
    select pg_catalog.array_agg(t.src), pg_catalog.array_agg(t.k1), pg_catalog.array_agg(t.k2),
           pg_catalog.array_agg(t.score), pg_catalog.array_agg(t.relevance)
    into t_src, t_k1, t_k2, t_score, t_relevance
    from agentmem.recall_text_arm(
           p_source => p_source, p_query => p_query, p_user_id => p_user_id, p_tenant_id => p_tenant_id,
           p_agent => p_agent, p_filter => p_filter, p_since => p_since, p_until => p_until,
           p_speaker => p_speaker, p_role => p_role, candidates => candidates, exact_limit => exact_limit,
           follow_weight => follow_weight, with_shared => with_shared,
           own_exact => own_exact, shared_exact => shared_exact, messages_exact => messages_exact) t;
  end if;
  if p_mode <> 'text' and query_embedding is not null then
    select pg_catalog.array_agg(v.src), pg_catalog.array_agg(v.k1), pg_catalog.array_agg(v.k2),
           pg_catalog.array_agg(v.distance)
    into v_src, v_k1, v_k2, v_distance
    from agentmem.recall_vector_arm(
           p_source => p_source, query_embedding => query_embedding, query_model => query_model,
           p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
           p_since => p_since, p_until => p_until, p_speaker => p_speaker, p_role => p_role,
           candidates => candidates, exact_limit => exact_limit, with_shared => with_shared,
           own_exact => own_exact, shared_exact => shared_exact, messages_exact => messages_exact) v;
  end if;
  return query
    select * from agentmem.recall_fuse(
      p_mode => p_mode, p_user_id => p_user_id, with_shared => with_shared, query_embedding => query_embedding,
      query_model => query_model, text_weight => text_weight, vector_weight => vector_weight, rrf_k => rrf_k,
      min_score => min_score, min_relevance => min_relevance, vector_baseline => vector_baseline,
      relevance_weight => relevance_weight, p_k => p_k, with_vectors => with_vectors,
      text_src => t_src, text_k1 => t_k1, text_k2 => t_k2, text_score => t_score, text_relevance => t_relevance,
      vector_src => v_src, vector_k1 => v_k1, vector_k2 => v_k2, vector_distance => v_distance);
end
$function$;

-- recall_memories is recall_sources over memories: one fusion for every source, and the
-- fusion's scores without a function call per candidate.
create or replace function agentmem.recall_memories(p_query text, query_embedding extensions.vector,
  query_model text, p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_mode text, candidates integer,
  text_weight double precision, vector_weight double precision, rrf_k integer, min_score double precision,
  p_k integer, exact_limit integer, with_vectors boolean, p_since timestamptz default null,
  p_until timestamptz default null, min_relevance double precision default 0,
  vector_baseline double precision default 0, relevance_weight double precision default 0,
  with_shared boolean default false)
returns table (id uuid, content text, score double precision, metadata jsonb, created_at timestamptz,
  relevance double precision, embedding extensions.vector, shared boolean)
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $function$
begin
  return query
    select r.id::uuid, r.content, r.score, r.metadata, r.created_at, r.relevance, r.embedding, r.shared
    from agentmem.recall_sources(
      p_source => 'memories', p_query => p_query, query_embedding => query_embedding, query_model => query_model,
      p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter, p_mode => p_mode,
      candidates => candidates, text_weight => text_weight, vector_weight => vector_weight, rrf_k => rrf_k,
      min_score => min_score, p_k => p_k, exact_limit => exact_limit, with_vectors => with_vectors,
      p_since => p_since, p_until => p_until, min_relevance => min_relevance, vector_baseline => vector_baseline,
      relevance_weight => relevance_weight, with_shared => with_shared) r
    order by r.score desc, r.id::uuid;
end
$function$;

-- For the functions' roles only, as every function of schema agentmem (migration
-- take_writes_from_client_roles): they run with the caller's rights, under row-level security.
do $$
declare
  f text;
begin
  foreach f in array array[
    'agentmem.recall_scope_exact(text, text, text, text, text, integer, boolean)',
    'agentmem.recall_text_arm(text, text, text, text, text, jsonb, timestamptz, timestamptz, text, text, integer, integer, double precision, boolean, boolean, boolean, boolean)',
    'agentmem.recall_vector_arm(text, extensions.vector, text, text, text, text, jsonb, timestamptz, timestamptz, text, text, integer, integer, boolean, boolean, boolean, boolean)',
    'agentmem.recall_fuse(text, text, boolean, extensions.vector, text, double precision, double precision, integer, double precision, double precision, double precision, double precision, integer, boolean, text[], uuid[], bigint[], double precision[], double precision[], text[], uuid[], bigint[], double precision[])'
  ] loop
    execute pg_catalog.format('revoke all on function %s from public, anon, authenticated', f);
    execute pg_catalog.format('grant execute on function %s to agentmem_caller, service_role', f);
  end loop;
end
$$;
