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
