-- The outbox of the orchestrator: one job per enabled adapter (webhook, cache, ...) for every
-- change an adapter must learn of, written in the same transaction as the change itself, so no
-- acknowledged change is ever missing from an adapter; process-jobs delivers them afterwards,
-- with retries and a dead state.
--
-- A job holds references, never content: the change's kind (intent), whose it is (tenant, user,
-- agent, session) and refs, a small JSON object of what changed (a turn's seq range and the
-- content keys of its facts, a memory's id, ...). The content is read when the job is delivered,
-- so the table holds no message or memory text, a user's erasure leaves none behind in it, and a
-- commit writes one small row per adapter.
--
-- Status and time:
--   pending  waits for next_attempt_at;
--   running  claimed by a worker until next_attempt_at, its lease: a worker that dies mid-delivery
--            leaves it to be claimed again once the lease has passed;
--   done     delivered;
--   dead     failed max-attempts times; last_error says why (never content). jobs retry makes it
--            pending again.
-- attempts counts the claims; a worker records its result only while attempts is still the
-- value it claimed, so a late worker whose lease was taken over changes nothing.
--
-- Who may do what:
--   anon, authenticated   nothing at all (no grant; a restrictive policy denies them too);
--   agentmem_caller       insert only, rows of the caller's own user and tenant (the change
--                         paths of a user's request write them, in the request's transaction);
--                         it cannot read, update or delete a job, not even its own;
--   service_role          everything: process-jobs claims and records, the jobs function lists,
--                         retries and purges, forget-user erases a user's jobs.
create table agentmem.jobs (
  id uuid primary key,
  -- The change: every adapter's job of one change carries the same event id, which receivers
  -- use to drop a delivery they already have.
  event_id uuid not null,
  tenant_id text not null default '',
  user_id uuid not null,
  -- '' for a change of the user as a whole (forget-user).
  agent text not null default '',
  session_id uuid,
  intent text not null check (intent ~ '^[A-Za-z]{1,64}$'),
  adapter text not null check (adapter ~ '^[a-z0-9_-]{1,32}$'),
  refs jsonb not null default '{}'::jsonb,
  status text not null default 'pending' check (status in ('pending', 'running', 'done', 'dead')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_error text check (char_length(last_error) <= 1000),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- What process-jobs claims: pending and running jobs by the time they are due.
create index jobs_due_idx on agentmem.jobs (next_attempt_at) where status in ('pending', 'running');
-- Listing by status, newest first, and purging done and dead jobs.
create index jobs_status_created_idx on agentmem.jobs (status, created_at desc, id desc);
-- A user's jobs (row-level security's filter, forget-user).
create index jobs_owner_idx on agentmem.jobs (user_id, tenant_id);

alter table agentmem.jobs enable row level security;
revoke all on agentmem.jobs from public, anon, authenticated, agentmem_caller, service_role;
grant insert on agentmem.jobs to agentmem_caller;
grant select, insert, update, delete on agentmem.jobs to service_role;

create policy caller_inserts_own on agentmem.jobs
  as permissive for insert to agentmem_caller
  with check (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()));

create policy no_client_access on agentmem.jobs
  as restrictive for all to anon, authenticated
  using (false)
  with check (false);

-- agentmem.write_turn_jobs writes the jobs of a committed turn, in the turn's transaction after
-- its messages (p_new_messages new ones, numbered up to the session's last_seq) and facts
-- (p_memory_keys, their content keys): one job per adapter (p_adapters, with the job ids
-- p_job_ids), whose refs hold the turn's seq range and the ids of the memories its facts went
-- to (stored anew or merged into), looked up by key while the transaction still holds them. It
-- writes nothing when the session is not the caller's and this agent's, as the turn's own
-- statements then store nothing, and answers how many jobs it wrote.
--
-- A function rather than a statement of the store: every commit with an adapter enabled runs
-- it, and PL/pgSQL keeps its plans for the connection's life, where a statement sent through a
-- transaction-mode pooler is planned anew at every call. It runs with the caller's rights:
-- row-level security applies as to the statement it replaces.
create function agentmem.write_turn_jobs(
  p_event_id uuid, p_session_id uuid, p_user_id uuid, p_tenant_id text, p_agent text,
  p_new_messages integer, p_memory_keys text[], p_adapters text[], p_job_ids uuid[])
returns integer
language plpgsql volatile
set search_path = ''
as $$
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
$$;

revoke all on function agentmem.write_turn_jobs(uuid, uuid, uuid, text, text, integer, text[], text[], uuid[])
  from public, anon, authenticated;
grant execute on function agentmem.write_turn_jobs(uuid, uuid, uuid, text, text, integer, text[], text[], uuid[])
  to agentmem_caller, service_role;
