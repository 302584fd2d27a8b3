-- A generation of the get-context cache that the database holds (migrations
-- cache_context_in_redis and tell_adapters_of_auth_deletions; shared/adapter/redis).
--
-- The generations in Redis are only as current as Redis: a Redis that comes back with older
-- data (a snapshot restored, a replica promoted while behind) holds windows under generations
-- that no delivered job advanced past, and served them, without turns the database had
-- acknowledged, once the jobs of those turns were settled. A cached window now also carries
-- the database's generation read by the check that preceded its fill, and is served only while
-- the check still reads the same: a Redis that lost or rolled back writes costs misses, never
-- an older answer.
--
-- The database's generation of a session's window is
--   * the user's row of agentmem.cache_generations: a value of agentmem.cache_generation_seq,
--     drawn anew by every job for the cache (adapter 'redis', or an erasure's 'fanout') other
--     than a committed turn's, in the job's own transaction (trigger jobs_advance_cache_generation):
--     key/value memory, state, notes, memories, messages deleted or cleared, a session reset or
--     deleted, a summary, an erasure (syncSession and backfillSession change nothing). Sequence
--     values are never handed out twice, and the row is never deleted, so a generation never
--     returns to a value, nor to none, that a window was labelled with. That is why the
--     user's id is in a column named owner, not user_id: an erasure deletes the rows of every
--     table with a user_id column, and this one must outlive it (the erasure's own job
--     advances it instead). It holds no content: the user's id and a number;
--   * the session's last_seq and created_at: a committed turn adds messages, which advances
--     last_seq in the same statement, so the hottest write writes nothing more.
-- The check reads both (two rows by primary key) in the statement it already was.

create sequence agentmem.cache_generation_seq;

create table agentmem.cache_generations (
  -- The user's id (see above for the name).
  owner uuid primary key,
  generation bigint not null
);

comment on table agentmem.cache_generations is
  'The get-context cache''s generation of each user: see migration count_cache_generations.';

-- No client role reads or writes it; the trigger and the check are security definer.
alter table agentmem.cache_generations enable row level security;
revoke all on agentmem.cache_generations from public, anon, authenticated, agentmem_caller, service_role;
grant select on agentmem.cache_generations to service_role;
create policy no_client_access on agentmem.cache_generations
  as restrictive for all to anon, authenticated
  using (false)
  with check (false);
revoke all on sequence agentmem.cache_generation_seq from public, anon, authenticated;

create function agentmem.advance_cache_generation() returns trigger
  language plpgsql
  security definer
  set search_path = ''
as $$
begin
  insert into agentmem.cache_generations (owner, generation)
  values (new.user_id, pg_catalog.nextval('agentmem.cache_generation_seq'))
  on conflict (owner) do update set generation = excluded.generation;
  return null;
end
$$;

revoke all on function agentmem.advance_cache_generation() from public, anon, authenticated;

create trigger jobs_advance_cache_generation
  after insert on agentmem.jobs
  for each row
  when (new.adapter in ('redis', 'fanout')
        and new.intent not in ('onTurnCommitted', 'syncSession', 'backfillSession'))
  execute function agentmem.advance_cache_generation();

drop function agentmem.check_context_cache(uuid, text, uuid, text, integer);

-- generation: the user's generation, the session's last_seq and created_at (microseconds since
-- the epoch), '-' for a missing one, joined with ':'.
create function agentmem.check_context_cache(p_user_id uuid, p_tenant_id text, p_session_id uuid,
  p_adapter text, p_settle_ms integer)
returns table (unsettled boolean, last_expired timestamptz, generation text)
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
        and m.expires_at <= pg_catalog.now()),
    coalesce((select g.generation::text from agentmem.cache_generations g where g.owner = p_user_id), '-')
      || ':' || coalesce((select s.last_seq::text || ':'
          || (extract(epoch from s.created_at) * 1000000)::bigint::text
        from agentmem.sessions s
        where s.id = p_session_id and s.user_id = p_user_id and s.tenant_id = p_tenant_id), '-');
end
$$;

comment on function agentmem.check_context_cache(uuid, text, uuid, text, integer) is
  'Whether a get-context answer cached by the adapter p_adapter may be served: see shared/adapter/redis.';

revoke execute on function agentmem.check_context_cache(uuid, text, uuid, text, integer) from public, anon, authenticated;
grant execute on function agentmem.check_context_cache(uuid, text, uuid, text, integer) to agentmem_caller, service_role;
