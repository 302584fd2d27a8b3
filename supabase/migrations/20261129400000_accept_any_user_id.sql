-- User ids and client message ids become text: any id of 1 to 255 printable characters, such as the `sub` of Supabase's
-- third-party auth (Clerk's `user_2abc...`, Auth0's `auth0|123`, Firebase, Cognito, WorkOS) and
-- the ids other memory managers keep, beside Supabase Auth's UUIDs.
--
-- Every user-keyed column (user_id of each table, owner of cache_generations) changes from uuid
-- to text in place: a UUID keeps its canonical text (user_id::text), which is what the functions
-- already named it by (lock keys, cache keys, job payloads), so nothing stored changes meaning.
-- The columns take the "C" collation: a user id is an opaque string, compared byte by byte, and
-- the indexes that lead with it compare without the locale's rules.
--
-- A message's id (messages.id) becomes text too, in the same rewrite of the table: a client
-- names its messages by the ids of its own framework (LangGraph's run-3f2a..., LangChain's
-- lc_run--...), deduplicated within the session as UUIDs were; recall_sources returns a
-- result's id as text (a memory's UUID, or a message's id).
--
-- Row-level security reads the caller from auth.jwt()->>'sub' instead of auth.uid(), which
-- casts the subject to uuid and fails for any other id. A policy that reads a column keeps the
-- column's type fixed, so the policies go first and come back after the change (as does the
-- trigger that recounts a message's words, which names the column); the functions
-- that take or return a user id are dropped and created again with text (a function's argument
-- types are its identity: create or replace would add an overload), their bodies unchanged but
-- for erase_user, which compares a table added later that still keys users by uuid through the
-- UUID's text.
-- erase_user(text) erases a Supabase Auth user by the text of its UUID: the auth.users trigger
-- passes old.id::text. The rate limiter's tenant-wide row, which a nil UUID stood for, is now
-- the empty user id, which no user can have.
--
-- On a large table: changing a column's type from uuid to text rewrites the table and rebuilds
-- all of its indexes (the HNSW and full-text indexes of messages and memories included) under an
-- ACCESS EXCLUSIVE lock, which blocks every read and write of that table until the migration
-- commits; the whole migration is one transaction, so the functions see either the old schema or
-- the new one. Expect it to take about as long as building the tables' indexes again and to
-- need free disk space for a second copy of each table; run it in a maintenance window (or
-- after a sweep, which makes the tables smaller). Nothing is lost or half-changed if it is
-- cancelled.

-- 1. The policies that read user_id.
do $$
declare
  t text;
begin
  foreach t in array array['sessions', 'messages', 'active_sessions', 'memories', 'user_memory',
                           'user_state', 'notes', 'idempotency_keys', 'session_summaries', 'message_words']
  loop
    execute pg_catalog.format('drop policy caller_owner on agentmem.%I', t);
    if t not in ('idempotency_keys', 'message_words') then
      execute pg_catalog.format('drop policy client_reads_own on agentmem.%I', t);
    end if;
  end loop;
end
$$;
drop policy caller_inserts_own on agentmem.jobs;
-- The trigger that recounts a message's words when its owner changes names the column too.
drop trigger messages_count_updated_words on agentmem.messages;

-- 2. The functions that take or return a user id.
drop function agentmem.check_context_cache(uuid,text,uuid,text,integer);
drop function agentmem.current_user_id();
drop function agentmem.erase_user(uuid);
drop function public.hybrid_match_memories(text,extensions.vector,integer,double precision,double precision,integer,uuid,text,text);
drop function public.match_memories(extensions.vector,integer,uuid,text,text);
drop function agentmem.memory_bm25_hits(uuid,text,text,jsonb,timestamp with time zone,timestamp with time zone,text[],integer,boolean);
drop function agentmem.memory_neighbours(uuid,text,text,jsonb,timestamp with time zone,timestamp with time zone,extensions.vector,text,integer,boolean);
drop function agentmem.memory_scope_is_small(uuid,text,integer);
drop function agentmem.message_bm25_hits(uuid,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,text[],integer,boolean,double precision);
drop function agentmem.message_bm25_scored(uuid,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,tsquery,tsquery,integer,tsquery[],tsquery[],double precision[],double precision,double precision,integer,double precision);
drop function agentmem.message_neighbours(uuid,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,extensions.vector,text,integer,boolean);
drop function agentmem.message_scope_is_small(uuid,text,integer);
drop function agentmem.recall_memories(text,extensions.vector,text,uuid,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,double precision,double precision,double precision);
drop function agentmem.recall_sources(text,text,extensions.vector,text,uuid,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,text,text,double precision,double precision,double precision,double precision);
drop function agentmem.store_memories(text,uuid,text,uuid,text[],text[],text[],text[],text,double precision,double precision);
drop function agentmem.take_request_slot(text,uuid,integer,integer,integer,text);
drop function agentmem.write_turn_jobs(uuid,uuid,uuid,text,text,integer,text[],text[],uuid[]);

-- 3. The columns. One ALTER TABLE per table: each table is rewritten once.
alter table agentmem.sessions alter column user_id type text collate "C" using user_id::text;
alter table agentmem.messages alter column user_id type text collate "C" using user_id::text,
  alter column id type text collate "C" using id::text;
alter table agentmem.active_sessions alter column user_id type text collate "C" using user_id::text;
alter table agentmem.memories alter column user_id type text collate "C" using user_id::text;
alter table agentmem.user_memory alter column user_id type text collate "C" using user_id::text;
alter table agentmem.user_state alter column user_id type text collate "C" using user_id::text;
alter table agentmem.notes alter column user_id type text collate "C" using user_id::text;
alter table agentmem.idempotency_keys alter column user_id type text collate "C" using user_id::text;
alter table agentmem.session_summaries alter column user_id type text collate "C" using user_id::text;
alter table agentmem.message_words alter column user_id type text collate "C" using user_id::text;
alter table agentmem.jobs alter column user_id type text collate "C" using user_id::text;
alter table agentmem.request_rates alter column user_id type text collate "C" using user_id::text;
alter table agentmem.cache_generations alter column owner type text collate "C" using owner::text;

update agentmem.request_rates set user_id = ''
where user_id = '00000000-0000-0000-0000-000000000000';

create trigger messages_count_updated_words
  after update of content, name, user_id, tenant_id, agent on agentmem.messages
  for each row
  when (old.fts is distinct from new.fts or old.user_id <> new.user_id
        or old.tenant_id <> new.tenant_id or old.agent <> new.agent)
  execute function agentmem.recount_message_words();

-- 4. The functions again, with text user ids.

create function agentmem.check_context_cache(p_user_id text, p_tenant_id text, p_session_id uuid, p_adapter text, p_settle_ms integer)
 RETURNS TABLE(unsettled boolean, last_expired timestamp with time zone, generation text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO ''
AS $function$
begin
  return query select
    exists (
      select 1 from agentmem.jobs j
      where j.user_id = p_user_id and j.adapter in (p_adapter, 'fanout') and j.status <> 'done')
    or exists (
      select 1 from agentmem.jobs j
      where j.user_id = p_user_id and j.adapter = p_adapter and j.status = 'done'
        and j.updated_at > pg_catalog.now() - pg_catalog.make_interval(secs => p_settle_ms / 1000.0)),
    (select max(m.expires_at) from agentmem.messages m
      where m.session_id = p_session_id and m.user_id = p_user_id and m.tenant_id = p_tenant_id
        and m.expires_at <= pg_catalog.now()),
    coalesce((select g.generation::text from agentmem.cache_generations g where g.owner = p_user_id), '-')
      || ':' || coalesce((select s.last_seq::text || ':'
          || (extract(epoch from s.created_at) * 1000000)::bigint::text
        from agentmem.sessions s
        where s.id = p_session_id and s.user_id = p_user_id and s.tenant_id = p_tenant_id), '-');
end
$function$;
revoke all on function agentmem.check_context_cache(text,text,uuid,text,integer) from public, anon, authenticated;

grant execute on function agentmem.check_context_cache(text,text,uuid,text,integer) to agentmem_caller;

grant execute on function agentmem.check_context_cache(text,text,uuid,text,integer) to service_role;
comment on function agentmem.check_context_cache(text,text,uuid,text,integer) is 'Whether a get-context answer cached by the adapter p_adapter may be served: see shared/adapter/redis.';

create function agentmem.current_user_id()
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
AS $function$
begin
  return coalesce(
    nullif(pg_catalog.current_setting('request.jwt.claim.sub', true), ''),
    (nullif(pg_catalog.current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
  );
end
$function$;
revoke all on function agentmem.current_user_id() from public, anon, authenticated;

grant execute on function agentmem.current_user_id() to agentmem_caller;

grant execute on function agentmem.current_user_id() to service_role;

create or replace function agentmem.erase_deleted_auth_user()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
begin
  perform agentmem.erase_user(old.id::text);
  return old;
end
$function$;

create function agentmem.erase_user(p_user_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  t record;
  n bigint;
  deleted jsonb := '{}'::jsonb;
begin
  if p_user_id is null then
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
revoke all on function agentmem.erase_user(text) from public, anon, authenticated, service_role, agentmem_caller;
comment on function agentmem.erase_user(text) is 'Erases every row of a user in every agentmem table and tenant; returns the rows deleted per table. Called when Supabase Auth deletes the user.';

create function public.hybrid_match_memories(query_text text, query_embedding extensions.vector, match_count integer, full_text_weight double precision DEFAULT 1, semantic_weight double precision DEFAULT 1, rrf_k integer DEFAULT 50, filter_user_id text DEFAULT NULL::text, filter_tenant_id text DEFAULT NULL::text, query_model text DEFAULT NULL::text)
 RETURNS TABLE(id uuid, content text, metadata jsonb, score double precision)
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
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
$function$;
revoke all on function public.hybrid_match_memories(text,extensions.vector,integer,double precision,double precision,integer,text,text,text) from public, anon;

grant execute on function public.hybrid_match_memories(text,extensions.vector,integer,double precision,double precision,integer,text,text,text) to authenticated;

grant execute on function public.hybrid_match_memories(text,extensions.vector,integer,double precision,double precision,integer,text,text,text) to service_role;

create function public.match_memories(query_embedding extensions.vector, match_count integer, filter_user_id text DEFAULT NULL::text, filter_tenant_id text DEFAULT NULL::text, query_model text DEFAULT NULL::text)
 RETURNS TABLE(id uuid, content text, metadata jsonb, similarity double precision)
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select x.id, x.content, x.metadata, 1 - x.d as similarity
  from (
    select m.id, m.content, m.metadata,
           case when m.embedding_dims = extensions.vector_dims(query_embedding)
                then m.embedding operator(extensions.<=>) query_embedding end as d
    from agentmem.memories m
    where m.embedding is not null
      and m.expires_at > pg_catalog.now()
      and (filter_user_id is null or m.user_id = filter_user_id)
      and (filter_tenant_id is null or m.tenant_id = filter_tenant_id)
      and (query_model is null or m.embedding_model = query_model)
  ) x
  where x.d is not null and x.d <> 'NaN'::float8
  order by x.d, x.id
  limit least(greatest(match_count, 0), 1000)
$function$;
revoke all on function public.match_memories(extensions.vector,integer,text,text,text) from public, anon;

grant execute on function public.match_memories(extensions.vector,integer,text,text,text) to authenticated;

grant execute on function public.match_memories(extensions.vector,integer,text,text,text) to service_role;

create function agentmem.memory_bm25_hits(p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_since timestamp with time zone, p_until timestamp with time zone, terms text[], n integer, exact boolean)
 RETURNS TABLE(id uuid, score double precision, relevance double precision)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  q tsquery := agentmem.terms_query(terms);
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
        where m.user_id = p_user_id and m.tenant_id = p_tenant_id
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
  where m.user_id = p_user_id and m.tenant_id = p_tenant_id
    and (p_agent = '' or m.agent in (p_agent, ''))
    and m.expires_at > pg_catalog.now();
  return query execute $q$
    with cand as materialized (
      select m.id, pg_catalog.length(m.fts) as fts_len,
             pg_catalog.ts_filter(pg_catalog.setweight(pg_catalog.setweight(m.fts, 'D'), 'A', $7), '{a}') as hit
      from agentmem.memories m
      where m.user_id = $1 and m.tenant_id = $2
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
    using p_user_id, p_tenant_id, p_agent, p_filter, q, n, terms, docs, p_since, p_until;
end
$function$;
revoke all on function agentmem.memory_bm25_hits(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,text[],integer,boolean) from public, anon, authenticated;

grant execute on function agentmem.memory_bm25_hits(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,text[],integer,boolean) to agentmem_caller;

grant execute on function agentmem.memory_bm25_hits(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,text[],integer,boolean) to service_role;

create function agentmem.memory_neighbours(p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_since timestamp with time zone, p_until timestamp with time zone, query_embedding extensions.vector, query_model text, n integer, exact boolean)
 RETURNS TABLE(id uuid, distance double precision)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
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
revoke all on function agentmem.memory_neighbours(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,extensions.vector,text,integer,boolean) from public, anon, authenticated;

grant execute on function agentmem.memory_neighbours(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,extensions.vector,text,integer,boolean) to agentmem_caller;

grant execute on function agentmem.memory_neighbours(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,extensions.vector,text,integer,boolean) to service_role;

create function agentmem.memory_scope_is_small(p_user_id text, p_tenant_id text, exact_limit integer)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
AS $function$
begin
  return (select pg_catalog.count(*) < exact_limit
          from (select 1 from agentmem.memories m
                where m.user_id = p_user_id and m.tenant_id = p_tenant_id limit exact_limit) s);
end
$function$;
revoke all on function agentmem.memory_scope_is_small(text,text,integer) from public, anon, authenticated;

grant execute on function agentmem.memory_scope_is_small(text,text,integer) to agentmem_caller;

grant execute on function agentmem.memory_scope_is_small(text,text,integer) to service_role;

create function agentmem.message_bm25_hits(p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_speaker text, p_role text, p_since timestamp with time zone, p_until timestamp with time zone, terms text[], n integer, exact boolean, follow_weight double precision)
 RETURNS TABLE(session_id uuid, seq bigint, score double precision, relevance double precision)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
declare
  q tsquery := agentmem.terms_query(terms);
  docs double precision;
  avgdl double precision;
  dfs double precision[];
  idfs double precision[];
  best double precision := 0;
  -- the words held by more than a twentieth of the scope, and the most they can add
  rare text[];
  common_bound double precision := 0;
  tqs tsquery[];
  tqas tsquery[];
  i integer;
  found integer;
  nth double precision;
begin
  if q is null or n < 1 then
    return;
  end if;
  -- the scope's stored messages, less those expired and not yet swept
  with expired as (
    select m.fts from agentmem.sessions s
      join agentmem.messages m on m.session_id = s.id
    where s.user_id = p_user_id and s.tenant_id = p_tenant_id
      and m.user_id = p_user_id and m.tenant_id = p_tenant_id
      and (p_agent = '' or m.agent = p_agent)
      and m.expires_at <= pg_catalog.now()
  ),
  stored as (
    select w.lexeme, pg_catalog.sum(w.docs) as docs, pg_catalog.sum(w.length) as length
    from agentmem.message_words w
    where w.user_id = p_user_id and w.tenant_id = p_tenant_id and (p_agent = '' or w.agent = p_agent)
      and w.lexeme = any (terms operator(pg_catalog.||) ''::text)
    group by w.lexeme
  ),
  gone as (
    select u.lexeme, pg_catalog.count(*) as docs from expired e, pg_catalog.unnest(e.fts) u
    where u.lexeme = any (terms) group by u.lexeme
    union all
    select '', pg_catalog.count(*) from expired e
  ),
  gone_length as (select coalesce(pg_catalog.sum(pg_catalog.length(e.fts)), 0) as length from expired e)
  select (coalesce(st.docs, 0) - coalesce(g.docs, 0))::float8,
         case when coalesce(st.docs, 0) - coalesce(g.docs, 0) > 0
              then greatest((coalesce(st.length, 0) - gl.length)::numeric / (coalesce(st.docs, 0) - coalesce(g.docs, 0))::numeric, 1)::float8 end,
         array(select (coalesce(s2.docs, 0) - coalesce(g2.docs, 0))::float8
               from pg_catalog.unnest(terms) with ordinality t(lexeme, k)
                 left join stored s2 on s2.lexeme = t.lexeme left join gone g2 on g2.lexeme = t.lexeme
               order by t.k)
  into docs, avgdl, dfs
  from (select 1) one
    left join stored st on st.lexeme = ''
    left join gone g on g.lexeme = ''
    cross join gone_length gl;
  if docs is null or docs <= 0 then
    return;
  end if;
  idfs := array[]::float8[];
  tqs := array[]::tsquery[];
  tqas := array[]::tsquery[];
  for i in 1 .. pg_catalog.array_length(terms, 1) loop
    idfs := idfs || pg_catalog.ln(1 + (docs - dfs[i] + 0.5) / (dfs[i] + 0.5));
    best := best + pg_catalog.ln(1 + (docs - dfs[i] + 0.5) / (dfs[i] + 0.5)) * 2.2;
    tqs := tqs || pg_catalog.quote_literal(terms[i])::tsquery;
    tqas := tqas || (pg_catalog.quote_literal(terms[i]) || ':A')::tsquery;
    if dfs[i] > docs / 20 then
      -- tf 1 in the name (3) of a message of length 0: 3 x 2.2 / (3 + 1.2 x 0.25) = 2
      common_bound := common_bound + idfs[i] * 2;
    elsif dfs[i] > 0 then
      rare := rare || terms[i];
    end if;
  end loop;
  best := greatest(best, 1e-9);
  -- a message two places or more from every rare word's message: its own score from the
  -- common words, and the credit of each neighbour, no more than that
  common_bound := common_bound * (1 + 2 * greatest(follow_weight, 0));

  if rare is not null and common_bound > 0 then
    return query
      with hits as (select * from agentmem.message_bm25_scored(
        p_user_id, p_tenant_id, p_agent, p_filter, p_speaker, p_role, p_since, p_until,
        q, agentmem.terms_query(rare), case when follow_weight > 0 then 2 else 0 end,
        tqs, tqas, idfs, avgdl, best, n, follow_weight) h)
      select h.session_id, h.seq, h.score, h.relevance from hits h
      where (select pg_catalog.count(*) from hits) >= n
        and (select pg_catalog.min(x.score) from hits x) > common_bound;
    get diagnostics found = row_count;
    if found > 0 then
      return;
    end if;
  end if;
  return query
    select * from agentmem.message_bm25_scored(
      p_user_id, p_tenant_id, p_agent, p_filter, p_speaker, p_role, p_since, p_until,
      q, q, 0, tqs, tqas, idfs, avgdl, best, n, follow_weight);
end
$function$;
revoke all on function agentmem.message_bm25_hits(text,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,text[],integer,boolean,double precision) from public, anon, authenticated;

grant execute on function agentmem.message_bm25_hits(text,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,text[],integer,boolean,double precision) to agentmem_caller;

grant execute on function agentmem.message_bm25_hits(text,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,text[],integer,boolean,double precision) to service_role;

create function agentmem.message_bm25_scored(p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_speaker text, p_role text, p_since timestamp with time zone, p_until timestamp with time zone, q tsquery, q_cand tsquery, reach integer, tqs tsquery[], tqas tsquery[], idfs double precision[], avgdl double precision, best double precision, n integer, follow_weight double precision)
 RETURNS TABLE(session_id uuid, seq bigint, score double precision, relevance double precision)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
begin
  return query
    with
    cand as materialized (
      select m.session_id, m.seq from agentmem.messages m
      where m.user_id = p_user_id and m.tenant_id = p_tenant_id and (p_agent = '' or m.agent = p_agent)
        and m.expires_at > pg_catalog.now() and m.fts operator(pg_catalog.@@) q_cand
    ),
    near as (
      select c.session_id, c.seq + d.d as seq, pg_catalog.min(pg_catalog.abs(d.d)) as dist
      from cand c cross join pg_catalog.generate_series(-reach, reach) d(d)
      group by 1, 2
    ),
    scored as materialized (
      select m.session_id, m.seq, x.dist,
             pg_catalog.right(pg_catalog.rtrim(m.content), 1) = '?' as question,
             ((p_filter = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) p_filter
                and not exists (select 1 from pg_catalog.jsonb_each(p_filter) f
                                where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
              and (p_speaker = '' or pg_catalog.lower(m.name) = pg_catalog.lower(p_speaker))
              and (p_role = '' or m.role = p_role)
              and (p_since is null or m.created_at >= p_since)
              and (p_until is null or m.created_at < p_until)) is true as eligible,
             (select pg_catalog.sum(case when m.fts operator(pg_catalog.@@) w.tq
                       then w.idf * (1 + 2 * (m.fts operator(pg_catalog.@@) w.tqa)::int) * 2.2
                            / (1 + 2 * (m.fts operator(pg_catalog.@@) w.tqa)::int + 1.2 * (0.25 + 0.75 * pg_catalog.length(m.fts) / avgdl))
                       else 0 end)
              from rows from (pg_catalog.unnest(tqs), pg_catalog.unnest(tqas), pg_catalog.unnest(idfs)) w(tq, tqa, idf))::float8 as bm25
      from near x join agentmem.messages m on m.session_id = x.session_id and m.seq = x.seq
      where m.user_id = p_user_id and m.tenant_id = p_tenant_id and (p_agent = '' or m.agent = p_agent)
        and m.expires_at > pg_catalog.now() and m.fts operator(pg_catalog.@@) q
    )
    select s.session_id, s.seq,
           (s.bm25 + follow_weight * (case when b.question then b.bm25 else 0 end
                            + case when not s.question and not a.question then a.bm25 else 0 end))::float8,
           least(1, s.bm25 / best)::float8
    from scored s
      left join scored b on b.session_id = s.session_id and b.seq = s.seq - 1
      left join scored a on a.session_id = s.session_id and a.seq = s.seq + 1
    where s.eligible and s.dist < greatest(reach, 1)
    order by 3 desc, s.session_id, s.seq
    limit n;
end
$function$;
revoke all on function agentmem.message_bm25_scored(text,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,tsquery,tsquery,integer,tsquery[],tsquery[],double precision[],double precision,double precision,integer,double precision) from public, anon, authenticated;

grant execute on function agentmem.message_bm25_scored(text,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,tsquery,tsquery,integer,tsquery[],tsquery[],double precision[],double precision,double precision,integer,double precision) to agentmem_caller;

grant execute on function agentmem.message_bm25_scored(text,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,tsquery,tsquery,integer,tsquery[],tsquery[],double precision[],double precision,double precision,integer,double precision) to service_role;

create function agentmem.message_neighbours(p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_speaker text, p_role text, p_since timestamp with time zone, p_until timestamp with time zone, query_embedding extensions.vector, query_model text, n integer, exact boolean)
 RETURNS TABLE(session_id uuid, seq bigint, distance double precision)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
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
            and not exists (select 1 from pg_catalog.jsonb_each(p_filter) x
                            where m.metadata operator(pg_catalog.->) x.key operator(pg_catalog.<>) x.value)))
          and (p_speaker = '' or pg_catalog.lower(m.name) = pg_catalog.lower(p_speaker))
          and (p_role = '' or m.role = p_role)
          and (p_since is null or m.created_at >= p_since)
          and (p_until is null or m.created_at < p_until)
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
          and not exists (select 1 from pg_catalog.jsonb_each($4) x
                          where m.metadata operator(pg_catalog.->) x.key operator(pg_catalog.<>) x.value)))
        and ($7 = '' or pg_catalog.lower(m.name) = pg_catalog.lower($7))
        and ($8 = '' or m.role = $8)
        and ($9 is null or m.created_at >= $9)
        and ($10 is null or m.created_at < $10)
      order by d
      limit $6
    )
    select near.session_id, near.seq, near.d from near where near.d <> 'NaN'::float8
    order by near.d, near.session_id, near.seq
    $q$, dims, query_model)
    using p_user_id, p_tenant_id, p_agent, p_filter, query_embedding, n, p_speaker, p_role, p_since, p_until;
end
$function$;
revoke all on function agentmem.message_neighbours(text,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,extensions.vector,text,integer,boolean) from public, anon, authenticated;

grant execute on function agentmem.message_neighbours(text,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,extensions.vector,text,integer,boolean) to agentmem_caller;

grant execute on function agentmem.message_neighbours(text,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,extensions.vector,text,integer,boolean) to service_role;

create function agentmem.message_scope_is_small(p_user_id text, p_tenant_id text, exact_limit integer)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
AS $function$
begin
  return (select pg_catalog.count(*) < exact_limit
          from (select 1 from agentmem.messages m
                where m.user_id = p_user_id and m.tenant_id = p_tenant_id limit exact_limit) s);
end
$function$;
revoke all on function agentmem.message_scope_is_small(text,text,integer) from public, anon, authenticated;

grant execute on function agentmem.message_scope_is_small(text,text,integer) to agentmem_caller;

grant execute on function agentmem.message_scope_is_small(text,text,integer) to service_role;

create function agentmem.recall_memories(p_query text, query_embedding extensions.vector, query_model text, p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_mode text, candidates integer, text_weight double precision, vector_weight double precision, rrf_k integer, min_score double precision, p_k integer, exact_limit integer, with_vectors boolean, p_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_until timestamp with time zone DEFAULT NULL::timestamp with time zone, min_relevance double precision DEFAULT 0, vector_baseline double precision DEFAULT 0, relevance_weight double precision DEFAULT 0)
 RETURNS TABLE(id uuid, content text, score double precision, metadata jsonb, created_at timestamp with time zone, relevance double precision, embedding extensions.vector)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
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
$function$;
revoke all on function agentmem.recall_memories(text,extensions.vector,text,text,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,double precision,double precision,double precision) from public, anon, authenticated;

grant execute on function agentmem.recall_memories(text,extensions.vector,text,text,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,double precision,double precision,double precision) to agentmem_caller;

grant execute on function agentmem.recall_memories(text,extensions.vector,text,text,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,double precision,double precision,double precision) to service_role;

create function agentmem.recall_sources(p_source text, p_query text, query_embedding extensions.vector, query_model text, p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_mode text, candidates integer, text_weight double precision, vector_weight double precision, rrf_k integer, min_score double precision, p_k integer, exact_limit integer, with_vectors boolean, p_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_until timestamp with time zone DEFAULT NULL::timestamp with time zone, p_speaker text DEFAULT ''::text, p_role text DEFAULT ''::text, follow_weight double precision DEFAULT 0, min_relevance double precision DEFAULT 0, vector_baseline double precision DEFAULT 0, relevance_weight double precision DEFAULT 0)
 RETURNS TABLE(source text, id text, session_id uuid, seq bigint, role text, name text, content text, score double precision, metadata jsonb, created_at timestamp with time zone, relevance double precision, embedding extensions.vector)
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
    select b.src, coalesce(m.id::text, g.id), g.session_id, g.seq, g.role, g.name, coalesce(m.content, g.content),
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
$function$;
revoke all on function agentmem.recall_sources(text,text,extensions.vector,text,text,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,text,text,double precision,double precision,double precision,double precision) from public, anon, authenticated;

grant execute on function agentmem.recall_sources(text,text,extensions.vector,text,text,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,text,text,double precision,double precision,double precision,double precision) to agentmem_caller;

grant execute on function agentmem.recall_sources(text,text,extensions.vector,text,text,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,text,text,double precision,double precision,double precision,double precision) to service_role;

create function agentmem.store_memories(p_tenant_id text, p_user_id text, p_agent text, p_session_id uuid, p_contents text[], p_keys text[], p_metadata text[], p_embeddings text[], p_model text, p_ttl_seconds double precision, min_similarity double precision)
 RETURNS TABLE(fact_key text, memory_id uuid, merged boolean, content_changed boolean)
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  i integer;
  v extensions.vector;
  dims integer;
  target uuid;
  fresh uuid;
  prior text;
  stored text;
  expires timestamptz := pg_catalog.now() + pg_catalog.make_interval(secs => p_ttl_seconds);
begin
  -- Nothing is stored unless the turn's session, when there is one, is the caller's and this
  -- agent's: a turn refused for its session keeps none of its facts, even when it shares one
  -- implicit transaction with the statement that refused it.
  if p_session_id is not null
     and not exists (select 1 from agentmem.sessions s
                     where s.id = p_session_id and s.user_id = p_user_id and s.tenant_id = p_tenant_id
                       and s.agent = p_agent) then
    return;
  end if;
  perform pg_catalog.pg_advisory_xact_lock(
    pg_catalog.hashtextextended(p_user_id::text || '/' || p_tenant_id || '/' || p_agent, 7217));

  for i in 1 .. coalesce(pg_catalog.array_length(p_keys, 1), 0) loop
    v := p_embeddings[i]::extensions.vector;
    dims := extensions.vector_dims(v);
    target := null;
    merged := false;
    content_changed := false;
    -- the unexpired memory of the same text, if any: its text before this fact
    select m.content into prior
    from agentmem.memories m
    where m.user_id = p_user_id and m.tenant_id = p_tenant_id and m.agent = p_agent
      and m.content_key = p_keys[i] and m.expires_at > pg_catalog.now();
    if v is not null and min_similarity <= 1 and prior is null then
      select x.id, x.content into target, prior
      from (
        select m.id, m.content,
               case when m.embedding_model = p_model and m.embedding_dims = dims
                    then m.embedding operator(extensions.<=>) v end as d
        from agentmem.memories m
        where m.user_id = p_user_id and m.tenant_id = p_tenant_id and m.agent = p_agent
          and m.expires_at > pg_catalog.now()
          and m.embedding_model = p_model and m.embedding_dims = dims
      ) x
      -- a text without words embeds to the zero vector: its distance is NaN, it is near nothing
      where x.d <= 1 - min_similarity and x.d <> 'NaN'::float8
        and agentmem.word_order_overlap(x.content, p_contents[i]) >= 0.5
      order by x.d, x.id
      limit 1;
      if target is not null then
        begin
          -- a rephrasing gives its text unless it is less well formed than the memory's, final
          -- punctuation aside (a full stop added to both): its words may say something newer
          if agentmem.memory_text_form(p_contents[i] || '.') >= agentmem.memory_text_form(prior || '.') then
            delete from agentmem.memories m
            where m.user_id = p_user_id and m.tenant_id = p_tenant_id and m.agent = p_agent
              and m.content_key = p_keys[i] and m.expires_at <= pg_catalog.now();
            update agentmem.memories m
            set content = p_contents[i],
                content_key = p_keys[i],
                metadata = m.metadata operator(pg_catalog.||) p_metadata[i]::jsonb,
                embedding = v,
                embedding_model = p_model,
                expires_at = greatest(m.expires_at, expires),
                updated_at = pg_catalog.now()
            where m.id = target and m.expires_at > pg_catalog.now()
            returning m.id, m.content into target, stored;
          else
            update agentmem.memories m
            set metadata = m.metadata operator(pg_catalog.||) p_metadata[i]::jsonb,
                expires_at = greatest(m.expires_at, expires),
                updated_at = pg_catalog.now()
            where m.id = target and m.expires_at > pg_catalog.now()
            returning m.id, m.content into target, stored;
          end if;
        exception when unique_violation then
          -- Another writer (the memories function) gave the fact's text to a memory meanwhile:
          -- that exact match wins, below.
          target := null;
        end;
        merged := target is not null;
        content_changed := merged and stored is distinct from prior;
      end if;
    end if;
    if target is null then
      -- Storing a fact again refreshes it (embedding, expiry), merges its metadata and keeps the
      -- memory's text unless the fact's is better formed. A fact stored again without a vector
      -- keeps the vector it has when the text stays.
      select m.content into prior
      from agentmem.memories m
      where m.user_id = p_user_id and m.tenant_id = p_tenant_id and m.agent = p_agent
        and m.content_key = p_keys[i] and m.expires_at > pg_catalog.now();
      fresh := pg_catalog.gen_random_uuid();
      insert into agentmem.memories as m (id, tenant_id, user_id, agent, content, content_key, metadata,
        embedding, embedding_model, expires_at)
      values (fresh, p_tenant_id, p_user_id, p_agent, p_contents[i], p_keys[i], p_metadata[i]::jsonb,
        v, case when v is not null then p_model end, expires)
      on conflict (user_id, tenant_id, agent, content_key) do update
        set content = case when m.expires_at <= pg_catalog.now()
                             or agentmem.memory_text_form(excluded.content) > agentmem.memory_text_form(m.content)
                           then excluded.content else m.content end,
            -- an expired fact stored again starts afresh: nothing of the expired row comes back
            id = case when m.expires_at <= pg_catalog.now() then excluded.id else m.id end,
            metadata = case when m.expires_at <= pg_catalog.now() then excluded.metadata
                            else m.metadata operator(pg_catalog.||) excluded.metadata end,
            embedding = case when excluded.embedding is null and (m.content = excluded.content
                               or (m.expires_at > pg_catalog.now()
                                   and agentmem.memory_text_form(excluded.content) <= agentmem.memory_text_form(m.content)))
                             then m.embedding else excluded.embedding end,
            embedding_model = case when excluded.embedding is null and (m.content = excluded.content
                                     or (m.expires_at > pg_catalog.now()
                                         and agentmem.memory_text_form(excluded.content) <= agentmem.memory_text_form(m.content)))
                                   then m.embedding_model else excluded.embedding_model end,
            updated_at = pg_catalog.now(),
            expires_at = case when m.expires_at <= pg_catalog.now() then excluded.expires_at
                              else greatest(m.expires_at, excluded.expires_at) end,
            created_at = case when m.expires_at <= pg_catalog.now() then pg_catalog.now() else m.created_at end
      returning m.id, m.content into target, stored;
      -- the row kept its own id only when it was an unexpired memory already
      merged := target <> fresh;
      content_changed := merged and stored is distinct from prior;
    end if;
    fact_key := p_keys[i];
    memory_id := target;
    return next;
  end loop;
end
$function$;
revoke all on function agentmem.store_memories(text,text,text,uuid,text[],text[],text[],text[],text,double precision,double precision) from public, anon, authenticated;

grant execute on function agentmem.store_memories(text,text,text,uuid,text[],text[],text[],text[],text,double precision,double precision) to agentmem_caller;

grant execute on function agentmem.store_memories(text,text,text,uuid,text[],text[],text[],text[],text,double precision,double precision) to service_role;

create function agentmem.take_request_slot(p_tenant_id text, p_user_id text, p_user_limit integer, p_tenant_limit integer, p_period_ms integer, p_bucket text DEFAULT ''::text, OUT retry_after_ms integer, OUT limited_by text)
 RETURNS record
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
declare
  v_period interval := pg_catalog.make_interval(secs => p_period_ms / 1000.0);
  v_nobody constant text := '';
  v_by_tenant boolean := p_tenant_limit > 0 and p_tenant_id <> '' and p_period_ms > 0;
  v_by_user boolean := p_user_limit > 0 and p_period_ms > 0;
  v_tenant_tat timestamptz;
  v_user_tat timestamptz;
  v_now timestamptz;
  v_wait interval;
begin
  retry_after_ms := 0;
  if v_by_tenant then
    select r.tat into v_tenant_tat from agentmem.request_rates r
    where r.tenant_id = p_tenant_id and r.user_id = v_nobody and r.bucket = p_bucket for update;
    if not found then
      insert into agentmem.request_rates as r (tenant_id, user_id, bucket, tat)
      values (p_tenant_id, v_nobody, p_bucket, '-infinity')
      on conflict (tenant_id, user_id, bucket) do update set tat = r.tat
      returning r.tat into v_tenant_tat;
    end if;
  end if;
  if v_by_user then
    select r.tat into v_user_tat from agentmem.request_rates r
    where r.tenant_id = p_tenant_id and r.user_id = p_user_id and r.bucket = p_bucket for update;
    if not found then
      insert into agentmem.request_rates as r (tenant_id, user_id, bucket, tat)
      values (p_tenant_id, p_user_id, p_bucket, '-infinity')
      on conflict (tenant_id, user_id, bucket) do update set tat = r.tat
      returning r.tat into v_user_tat;
    end if;
  end if;
  v_now := pg_catalog.clock_timestamp();

  if v_by_tenant then
    v_wait := greatest(v_tenant_tat, v_now) + v_period / p_tenant_limit - v_now - v_period;
    if v_wait > interval '0' then
      retry_after_ms := greatest(1, pg_catalog.ceil(extract(epoch from v_wait) * 1000))::integer;
      limited_by := 'tenant';
    end if;
  end if;
  if v_by_user then
    v_wait := greatest(v_user_tat, v_now) + v_period / p_user_limit - v_now - v_period;
    if v_wait > interval '0' and pg_catalog.ceil(extract(epoch from v_wait) * 1000) > retry_after_ms then
      retry_after_ms := greatest(1, pg_catalog.ceil(extract(epoch from v_wait) * 1000))::integer;
      limited_by := 'user';
    end if;
  end if;
  if retry_after_ms > 0 then
    return;
  end if;

  -- The rows are locked by this transaction: a sweep skips them, so both updates find theirs.
  if v_by_tenant then
    update agentmem.request_rates r set tat = greatest(r.tat, v_now) + v_period / p_tenant_limit
    where r.tenant_id = p_tenant_id and r.user_id = v_nobody and r.bucket = p_bucket;
  end if;
  if v_by_user then
    update agentmem.request_rates r set tat = greatest(r.tat, v_now) + v_period / p_user_limit
    where r.tenant_id = p_tenant_id and r.user_id = p_user_id and r.bucket = p_bucket;
  end if;
end
$function$;
revoke all on function agentmem.take_request_slot(text,text,integer,integer,integer,text) from public, anon, authenticated;

grant execute on function agentmem.take_request_slot(text,text,integer,integer,integer,text) to service_role;

create function agentmem.write_turn_jobs(p_event_id uuid, p_session_id uuid, p_user_id text, p_tenant_id text, p_agent text, p_new_messages integer, p_memory_keys text[], p_adapters text[], p_job_ids uuid[])
 RETURNS integer
 LANGUAGE plpgsql
 SET search_path TO ''
AS $function$
declare
  v_memories jsonb := '[]'::jsonb;
  v_written integer;
begin
  if pg_catalog.cardinality(p_memory_keys) > 0 then
    select coalesce(pg_catalog.jsonb_agg(m.id), '[]'::jsonb) into v_memories
    from agentmem.memories m
    where m.user_id = p_user_id and m.tenant_id = p_tenant_id and m.agent = p_agent
      and m.content_key = any(p_memory_keys);
  end if;
  insert into agentmem.jobs (id, event_id, tenant_id, user_id, agent, session_id, intent, adapter, refs)
  select a.id, p_event_id, s.tenant_id, s.user_id, s.agent, s.id, 'onTurnCommitted', a.name,
    pg_catalog.jsonb_build_object('seq_from', s.last_seq - p_new_messages + 1, 'seq_to', s.last_seq,
      'memory_ids', v_memories)
  from agentmem.sessions s, unnest(p_adapters, p_job_ids) as a(name, id)
  where s.id = p_session_id and s.user_id = p_user_id and s.tenant_id = p_tenant_id and s.agent = p_agent;
  get diagnostics v_written = row_count;
  return v_written;
end
$function$;
revoke all on function agentmem.write_turn_jobs(uuid,uuid,text,text,text,integer,text[],text[],uuid[]) from public, anon, authenticated;

grant execute on function agentmem.write_turn_jobs(uuid,uuid,text,text,text,integer,text[],text[],uuid[]) to agentmem_caller;

grant execute on function agentmem.write_turn_jobs(uuid,uuid,text,text,text,integer,text[],text[],uuid[]) to service_role;

-- 5. The policies again, reading the caller's id as text.
do $$
declare
  t text;
begin
  foreach t in array array['sessions', 'messages', 'active_sessions', 'memories', 'user_memory',
                           'user_state', 'notes', 'idempotency_keys', 'session_summaries']
  loop
    execute pg_catalog.format($p$
      create policy caller_owner on agentmem.%I
        as permissive for all to agentmem_caller
        using (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()))
        with check (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()))
    $p$, t);
    if t <> 'idempotency_keys' then
      execute pg_catalog.format($p$
        create policy client_reads_own on agentmem.%I
          as permissive for select to authenticated
          using (user_id = (select auth.jwt() ->> 'sub') and tenant_id = (select agentmem.current_tenant()))
      $p$, t);
    end if;
  end loop;
end
$$;
-- The word counts: the functions' role only reads them, as before.
create policy caller_owner on agentmem.message_words
  as permissive for select to agentmem_caller
  using (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()));
create policy caller_inserts_own on agentmem.jobs
  as permissive for insert to agentmem_caller
  with check (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()));
