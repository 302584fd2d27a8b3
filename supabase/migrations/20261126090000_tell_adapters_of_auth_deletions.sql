-- Three changes to the outbox (migration create_jobs_outbox) and the get-context cache
-- (migration cache_context_in_redis).
--
-- 1. A user deleted in Supabase Auth is an erasure the adapters learn of, as forget-user's is.
--    The trigger's erasure (agentmem.erase_user) deleted the user's rows, their undelivered
--    jobs among them, and told no adapter: Mem0 kept the turns it had been sent, and the
--    Redis cache could serve windows of the erased user until they expired. The database does
--    not know which adapters a deployment enables (ADAPTERS is the functions' setting), so the
--    erasure now writes one job for the adapter name 'fanout', in its own transaction, after
--    the deletes: process-jobs expands it into one onUserForgotten job per enabled adapter
--    (every tenant), in the statement that marks it done. A deployment without adapters
--    finishes it without delivering anything. An erasure no longer deletes the jobs of an
--    earlier erasure (intent onUserForgotten, no content) still waiting, in either path
--    (erase_user, forget-user): a forget-user of one tenant right after an Auth deletion must
--    not cancel the adapters' erasure of every tenant.
--
-- 2. get-context's cache check becomes one statement that needs neither the caller's claims
--    nor the user's advisory lock: agentmem.check_context_cache answers, for the user, tenant
--    and session get-context already verified, whether a job of the cache's adapter (or a
--    fan-out not yet expanded) is unsettled, and the latest expiry already passed among the
--    session's stored messages. It replaces agentmem.cache_unsettled, whose caller set up
--    the request's transaction first (role, claims, statement timeout, the user's lock): as
--    many statements as get-context's own read, which left a cached answer no faster than
--    the database's. Security definer for the reason cache_unsettled was (agentmem_caller may
--    not read jobs); it answers a boolean and a time about one user's rows, never their
--    content, and only the functions' role may call it, never a client role.
--
-- 3. Purging done or dead jobs counts their age from when they finished (updated_at), not from
--    when they were written: a job delivered after an hour of retries is kept its whole
--    retention after delivery, which the cache's settle time relies on.

create or replace function agentmem.erase_user(p_user_id uuid) returns jsonb
  language plpgsql
  set search_path = ''
as $$
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
        when 'uuid' then 'user_id = $1'
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
$$;

create function agentmem.check_context_cache(p_user_id uuid, p_tenant_id text, p_session_id uuid,
  p_adapter text, p_settle_ms integer)
returns table (unsettled boolean, last_expired timestamptz)
language plpgsql stable
security definer
set search_path = ''
as $$
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
        and m.expires_at <= pg_catalog.now());
end
$$;

comment on function agentmem.check_context_cache(uuid, text, uuid, text, integer) is
  'Whether a get-context answer cached by the adapter p_adapter may be served: see shared/adapter/redis.';

revoke execute on function agentmem.check_context_cache(uuid, text, uuid, text, integer) from public, anon, authenticated;
grant execute on function agentmem.check_context_cache(uuid, text, uuid, text, integer) to agentmem_caller, service_role;

drop function agentmem.cache_unsettled(text, integer);

-- Finished jobs by when they finished, for the purge (oldest first, no sort).
create index jobs_finished_idx on agentmem.jobs (status, updated_at) where status in ('done', 'dead');
