-- Shared memories: long-term memories of no user, written only by service callers, that every
-- user of their tenant recalls beside their own.
--
-- A shared memory is a row of agentmem.memories whose user_id is the empty string. No user has
-- that id (a user id is 1 to 255 printable characters; the rate limiter's tenant-wide row uses
-- it the same way), so it cannot be mistaken for a user's memory, and user_id stays NOT NULL:
-- the tables are to be hash-partitioned by user_id with user_id in every primary key, which a
-- NULL could not be part of; the shared memories of every tenant then go to one partition, and
-- a table of their own would have needed every search, merge and listing written twice. The
-- API shows them without a user, as "shared": true.
--
-- Whose: the tenant_id of a shared memory is its audience. A user of tenant T reads the shared
-- memories of T; a user without a tenant reads those written without a tenant (the whole
-- deployment, when it has no tenants). A user of a tenant never reads another tenant's, nor
-- those written without a tenant: tenants stay apart absolutely, as the knowledge base does.
--
-- - Row-level security: caller_reads_shared (the functions' role, running a user's request)
--   and client_reads_shared (a Supabase client, role authenticated) let an identified user
--   read the shared memories of the tenant of their claims. Writing stays with caller_owner,
--   which takes rows whose user_id is the caller's: the functions write shared memories under
--   claims whose sub is '' (the store's shared scope, for service callers only); a user's claims
--   never name '' (an empty sub is refused before any request runs), so no user's request can
--   insert, change or delete one. The client roles write nothing at all (migration
--   take_writes_from_client_roles).
-- - Recall: agentmem.recall_memories and agentmem.recall_sources take with_shared (default
--   false) and return shared. With it, the user's memories and the tenant's shared ones are one
--   corpus for BM25 (agentmem.memory_bm25_hits takes with_shared too), and the vector side is
--   the nearest of each owner's nearest (agentmem.memory_neighbours per owner, the user's and
--   '', as migration search_wider_graphs defines it). Each owner's rows are counted
--   once (agentmem.memory_scope_is_small) and ranked exactly when they are few, so that a tenant
--   without shared memories adds no index scan searching the graph for rows that are not
--   there; BM25 ranks exactly when both owners' rows are few.
-- - Merging (agentmem.store_memories, unchanged) works within (user_id, tenant_id, agent): a
--   shared fact merges only with the shared memories of its tenant and agent.
-- - agentmem.erase_user('') erases nothing: '' is no user, and an erasure never reaches the
--   shared memories. The sweep deletes expired shared memories as any other.
--
-- On a large table: nothing is rewritten or read. Creating the two policies takes a lock on
-- agentmem.memories for a moment, which waits for the transactions using the table to end and
-- holds off new ones meanwhile; the functions are replaced in the same transaction.

create policy caller_reads_shared on agentmem.memories as permissive for select to agentmem_caller
  using (user_id = '' and tenant_id = (select agentmem.current_tenant())
         and (select agentmem.current_user_id()) is not null);
create policy client_reads_shared on agentmem.memories as permissive for select to authenticated
  using (user_id = '' and tenant_id = (select agentmem.current_tenant())
         and (select auth.jwt() ->> 'sub') is not null);

-- The owners whose memories a search of user p_user_id ranks: the user's, and with_shared the
-- tenant's shared memories ('') too.
create function agentmem.memory_owners(p_user_id text, with_shared boolean)
returns text[]
language sql immutable parallel safe
set search_path = ''
as $$
  select case when with_shared and p_user_id <> '' then array[p_user_id, ''] else array[p_user_id] end
$$;

drop function agentmem.memory_bm25_hits(text, text, text, jsonb, timestamptz, timestamptz, text[], integer, boolean);
drop function agentmem.recall_memories(text, extensions.vector, text, text, text, text, jsonb, text, integer,
  double precision, double precision, integer, double precision, integer, integer, boolean, timestamptz,
  timestamptz, double precision, double precision, double precision);
drop function agentmem.recall_sources(text, text, extensions.vector, text, text, text, text, jsonb, text, integer,
  double precision, double precision, integer, double precision, integer, integer, boolean, timestamptz,
  timestamptz, text, text, double precision, double precision, double precision, double precision);

create or replace function agentmem.erase_user(p_user_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  t record;
  n bigint;
  deleted jsonb := '{}'::jsonb;
begin
  -- '' is the owner of the shared memories, not a user: no erasure reaches them
  if p_user_id is null or p_user_id = '' then
    return deleted;
  end if;
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended(p_user_id::text, 7216));
  perform 1 from agentmem.sessions s where s.user_id = p_user_id for update;
  for t in
    with recursive user_tables as (
      select c.oid, c.relname::text as name, pg_catalog.format_type(u.atttypid, u.atttypmod) as user_type
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      join pg_catalog.pg_attribute u
        on u.attrelid = c.oid and u.attname = 'user_id' and u.attnum > 0 and not u.attisdropped
      where ns.nspname = 'agentmem' and c.relkind in ('r', 'p') and not c.relispartition
    ),
    refs as (
      select con.conrelid as src, con.confrelid as dst
      from pg_catalog.pg_constraint con
      where con.contype = 'f' and con.conrelid <> con.confrelid
        and con.conrelid in (select oid from user_tables) and con.confrelid in (select oid from user_tables)
    ),
    -- depth: the longest chain of references that leads to a table (bounded, for cycles).
    depth (oid, d) as (
      select oid, 0 from user_tables
      union
      select r.dst, depth.d + 1 from depth join refs r on r.src = depth.oid where depth.d < 32
    )
    select ut.name, ut.user_type
    from user_tables ut
    join (select oid, max(d) as d from depth group by oid) x on x.oid = ut.oid
    order by x.d, ut.name
  loop
    execute pg_catalog.format('delete from agentmem.%I where %s%s', t.name,
      case t.user_type
        when 'uuid' then 'user_id::text = $1'
        when 'text' then 'user_id = $1::text'
        else 'user_id::text = $1::text'
      end,
      -- An earlier erasure's jobs stay (they hold no content): adapters must still hear of it.
      case when t.name = 'jobs' then ' and intent <> ''onUserForgotten''' else '' end)
      using p_user_id;
    get diagnostics n = row_count;
    deleted := deleted || pg_catalog.jsonb_build_object(t.name, n);
  end loop;
  -- The adapters learn of the erasure (every tenant), after the user's earlier jobs went with
  -- the rest; process-jobs expands this job into one per enabled adapter.
  insert into agentmem.jobs (id, event_id, tenant_id, user_id, agent, intent, adapter, refs)
  values (pg_catalog.gen_random_uuid(), pg_catalog.gen_random_uuid(), '', p_user_id, '',
          'onUserForgotten', 'fanout', '{"all_tenants": true}');
  return deleted;
end
$function$;

create function agentmem.memory_bm25_hits(p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_since timestamp with time zone, p_until timestamp with time zone, terms text[], n integer, exact boolean, with_shared boolean DEFAULT false)
 RETURNS TABLE(id uuid, score double precision, relevance double precision)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  q tsquery := agentmem.terms_query(terms);
  owners text[] := agentmem.memory_owners(p_user_id, with_shared);
  docs double precision;
begin
  if q is null or n < 1 then
    return;
  end if;
  if exact then
    return query
      with scope as materialized (
        select m.id, pg_catalog.length(m.fts) as fts_len,
               case when (m.fts operator(pg_catalog.@@) q) is true
                     and (p_filter = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) p_filter
                          and not exists (select 1 from pg_catalog.jsonb_each(p_filter) f
                                          where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
                     and (p_since is null or m.created_at >= p_since)
                     and (p_until is null or m.created_at < p_until)
                    then pg_catalog.ts_filter(pg_catalog.setweight(pg_catalog.setweight(m.fts, 'D'), 'A', terms), '{a}')
               end as hit
        from agentmem.memories m
        where m.user_id = any(owners) and m.tenant_id = p_tenant_id
          and (p_agent = '' or m.agent in (p_agent, ''))
          and m.expires_at > pg_catalog.now()
      ),
      stats as (
        select pg_catalog.count(*)::float8 as docs, greatest(pg_catalog.avg(s.fts_len), 1)::float8 as avgdl from scope s
      ),
      tf as (
        select s.id, s.fts_len, u.lexeme, coalesce(pg_catalog.array_length(u.positions, 1), 1)::float8 as tf
        from scope s, pg_catalog.unnest(s.hit) u
        where s.hit is not null
      ),
      df as (select t.lexeme, pg_catalog.count(*)::float8 as df from tf t group by t.lexeme),
      best_possible as (
        select greatest(pg_catalog.sum(pg_catalog.ln(1 + (st.docs - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)) * 2.2),
                        1e-9)::float8 as m
        from pg_catalog.unnest(terms) x(lexeme) left join df d on d.lexeme = x.lexeme cross join stats st
      ),
      scored as (
        select t.id,
               pg_catalog.sum(pg_catalog.ln(1 + (st.docs - d.df + 0.5) / (d.df + 0.5))
                 * t.tf * 2.2 / (t.tf + 1.2 * (0.25 + 0.75 * t.fts_len / st.avgdl)))::float8 as bm25
        from tf t join df d on d.lexeme = t.lexeme cross join stats st
        group by t.id
      )
      select c.id, c.bm25, least(1, c.bm25 / bp.m)::float8
      from scored c cross join best_possible bp
      order by c.bm25 desc, c.id
      limit n;
    return;
  end if;
  -- the scope's rows are counted here; their average length is the matching rows' (lengths)
  select pg_catalog.count(*) into docs
  from agentmem.memories m
  where m.user_id = any(owners) and m.tenant_id = p_tenant_id
    and (p_agent = '' or m.agent in (p_agent, ''))
    and m.expires_at > pg_catalog.now();
  return query execute $q$
    with cand as materialized (
      select m.id, pg_catalog.length(m.fts) as fts_len,
             pg_catalog.ts_filter(pg_catalog.setweight(pg_catalog.setweight(m.fts, 'D'), 'A', $7), '{a}') as hit
      from agentmem.memories m
      where m.user_id = any($11) and m.tenant_id = $2
        and ($3 = '' or m.agent in ($3, ''))
        and m.expires_at > pg_catalog.now()
        and ($4 = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) $4
             and not exists (select 1 from pg_catalog.jsonb_each($4) f
                             where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
        and ($9 is null or m.created_at >= $9)
        and ($10 is null or m.created_at < $10)
        and m.fts operator(pg_catalog.@@) $5
    ),
    tf as (
      select c.id, c.fts_len, u.lexeme, coalesce(pg_catalog.array_length(u.positions, 1), 1)::float8 as tf
      from cand c, pg_catalog.unnest(c.hit) u
    ),
    df as (select t.lexeme, pg_catalog.count(*)::float8 as df from tf t group by t.lexeme),
    lengths as (select greatest(pg_catalog.avg(c.fts_len), 1)::float8 as avgdl from cand c),
    best_possible as (
      select greatest(pg_catalog.sum(pg_catalog.ln(1 + ($8 - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)) * 2.2),
                      1e-9)::float8 as m
      from pg_catalog.unnest($7) x(lexeme) left join df d on d.lexeme = x.lexeme
    ),
    scored as (
      select t.id,
             pg_catalog.sum(pg_catalog.ln(1 + ($8 - d.df + 0.5) / (d.df + 0.5))
               * t.tf * 2.2 / (t.tf + 1.2 * (0.25 + 0.75 * t.fts_len / l.avgdl)))::float8 as bm25
      from tf t join df d on d.lexeme = t.lexeme cross join lengths l
      group by t.id
    )
    select c.id, c.bm25, least(1, c.bm25 / bp.m)::float8
    from scored c cross join best_possible bp
    order by c.bm25 desc, c.id
    limit $6
    $q$
    using p_user_id, p_tenant_id, p_agent, p_filter, q, n, terms, docs, p_since, p_until, owners;
end
$function$;

create function agentmem.recall_memories(p_query text, query_embedding extensions.vector, query_model text, p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_mode text, candidates integer, text_weight double precision, vector_weight double precision, rrf_k integer, min_score double precision, p_k integer, exact_limit integer, with_vectors boolean, p_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_until timestamp with time zone DEFAULT NULL::timestamp with time zone, min_relevance double precision DEFAULT 0, vector_baseline double precision DEFAULT 0, relevance_weight double precision DEFAULT 0, with_shared boolean DEFAULT false)
 RETURNS TABLE(id uuid, content text, score double precision, metadata jsonb, created_at timestamp with time zone, relevance double precision, embedding extensions.vector, shared boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  -- one count per owner for both sides
  own_exact boolean := agentmem.memory_scope_is_small(
    p_user_id => p_user_id, p_tenant_id => p_tenant_id, exact_limit => exact_limit);
  shared_exact boolean := case when with_shared and p_user_id <> ''
    then agentmem.memory_scope_is_small(p_user_id => '', p_tenant_id => p_tenant_id, exact_limit => exact_limit)
    else true end;
  exact boolean := own_exact and shared_exact;
begin
  return query
    with
    text_hits as (
      select t.id, t.score, t.relevance, pg_catalog.row_number() over (order by t.score desc, t.id) as rank
      from agentmem.memory_bm25_hits(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_since => p_since, p_until => p_until, terms => case when p_mode <> 'vector' then agentmem.query_terms(p_query) end,
             n => candidates, exact => exact, with_shared => with_shared) t
    ),
    -- the nearest of the user's and, with_shared, of the tenant's shared memories: each owner's
    -- nearest, exactly when the owner's rows are few, then the nearest of both
    near as (
      select v.id, v.distance
      from pg_catalog.unnest(agentmem.memory_owners(p_user_id, with_shared)) o(owner),
        lateral agentmem.memory_neighbours(
             p_user_id => o.owner, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_since => p_since, p_until => p_until, query_embedding => case when p_mode <> 'text' then query_embedding end,
             query_model => query_model, n => candidates,
             exact => case when o.owner = p_user_id then own_exact else shared_exact end) v
      order by v.distance, v.id
      limit candidates
    ),
    vector_hits as (
      select v.id, 1 - v.distance as score, pg_catalog.row_number() over (order by v.distance, v.id) as rank
      from near v
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
                 and m.embedding_dims = extensions.vector_dims(query_embedding) then m.embedding end,
           m.user_id = ''
    from best f join agentmem.memories m on m.id = f.id
    order by f.score desc, f.id;
end
$function$;

create function agentmem.recall_sources(p_source text, p_query text, query_embedding extensions.vector, query_model text, p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_mode text, candidates integer, text_weight double precision, vector_weight double precision, rrf_k integer, min_score double precision, p_k integer, exact_limit integer, with_vectors boolean, p_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_until timestamp with time zone DEFAULT NULL::timestamp with time zone, p_speaker text DEFAULT ''::text, p_role text DEFAULT ''::text, follow_weight double precision DEFAULT 0, min_relevance double precision DEFAULT 0, vector_baseline double precision DEFAULT 0, relevance_weight double precision DEFAULT 0, with_shared boolean DEFAULT false)
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
    from best b
      left join agentmem.memories m on b.src = 'memory' and m.id = b.k1
      left join agentmem.messages g on b.src = 'message' and g.session_id = b.k1 and g.seq = b.k2
    where m.id is not null or g.session_id is not null -- only rows the caller may read, as an inner join
    order by b.score desc, b.src, b.k1, b.k2;
end
$function$;

-- For the functions' roles only, as every function of schema agentmem (migration
-- take_writes_from_client_roles): they run with the caller's rights, under row-level security.
do $$
declare
  f text;
begin
  foreach f in array array[
    'agentmem.memory_owners(text, boolean)',
    'agentmem.memory_bm25_hits(text, text, text, jsonb, timestamptz, timestamptz, text[], integer, boolean, boolean)',
    'agentmem.recall_memories(text, extensions.vector, text, text, text, text, jsonb, text, integer, double precision, double precision, integer, double precision, integer, integer, boolean, timestamptz, timestamptz, double precision, double precision, double precision, boolean)',
    'agentmem.recall_sources(text, text, extensions.vector, text, text, text, text, jsonb, text, integer, double precision, double precision, integer, double precision, integer, integer, boolean, timestamptz, timestamptz, text, text, double precision, double precision, double precision, double precision, boolean)'
  ] loop
    execute pg_catalog.format('revoke all on function %s from public, anon, authenticated', f);
    execute pg_catalog.format('grant execute on function %s to agentmem_caller, service_role', f);
  end loop;
end
$$;
