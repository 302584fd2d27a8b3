-- Rolling summaries: the gist of a session's older messages, up to through_seq, that a job of
-- the outbox (adapter 'summarize') advances once the messages after it pass a token threshold.
-- get-context answers the summary and the messages after its through_seq; no message is ever
-- both left out and unsummarised.
--
-- One row per session, deleted with it (the foreign key cascades: session delete, forget-user,
-- the sweep of expired sessions). A reset, a clear and the deletion of a summarised message
-- delete it in their own transactions (the store), so no summary outlives the messages it
-- tells of.
--
-- Who may do what, as for the other tables of a user (migration
-- take_writes_from_client_roles): agentmem_caller reads and writes the rows of the caller's
-- own user and tenant (the summarize job writes as the session's user); authenticated may only
-- read its own rows; anon nothing; service_role everything.
create table agentmem.session_summaries (
  session_id uuid primary key references agentmem.sessions (id) on delete cascade,
  tenant_id text not null default '',
  user_id uuid not null,
  agent text not null,
  content text not null check (char_length(content) between 1 and 20000),
  -- The last message the summary covers: every message of the session up to it.
  through_seq bigint not null check (through_seq > 0),
  -- What made it: the prompt's version, the model, and the tokens it cost so far (every
  -- advance added up).
  prompt text not null,
  model text not null,
  input_tokens bigint not null default 0,
  output_tokens bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- A user's summaries (row-level security's filter, clear, forget-user).
create index session_summaries_owner_idx on agentmem.session_summaries (user_id, tenant_id, agent);

alter table agentmem.session_summaries enable row level security;
revoke all on agentmem.session_summaries from public, anon, authenticated;
grant select, insert, update, delete on agentmem.session_summaries to agentmem_caller, service_role;
grant select on agentmem.session_summaries to authenticated;

create policy caller_owner on agentmem.session_summaries
  as permissive for all to agentmem_caller
  using (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()))
  with check (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()));

create policy client_reads_own on agentmem.session_summaries
  as permissive for select to authenticated
  using (user_id = (select auth.uid()) and tenant_id = (select agentmem.current_tenant()));
