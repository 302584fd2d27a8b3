-- Old history, capped and archived: how many messages of a session stay live (the deployment's
-- HISTORY_KEEP_MESSAGES, or a session's own keep_messages that a service sets with
-- commit-turn), and a table for the older ones (HISTORY_OVERFLOW=archive; with delete they go).
-- The sweep moves them (store.Sweep, "cap histories"): what stays live is everything
-- get-context and the rolling summaries may still read (see shared/store/history_cap.go for the
-- rule); sessions history exports the archive with include_archived; forget-user, session
-- delete (the foreign key), reset, clear and delete_message erase it, and the sweep deletes its
-- expired rows.
--
-- On a large table: the columns added to sessions are nullable or have a constant default
-- (no rewrite, a brief lock); the constraint is NOT VALID (checked for new rows only, no scan).
-- sessions_history_unchecked_idx holds only the sessions with 100 or more messages since their
-- last check, a few at a time in a deployment that uses the cap; on a large sessions table,
-- build it first without blocking writes, then apply this migration, which finds it in place:
--   create index concurrently if not exists sessions_history_unchecked_idx on agentmem.sessions
--     (keep_messages) where last_seq - history_checked_seq >= 100;
-- messages_archive is new, so its indexes cost nothing now.

-- keep_messages: this session's cap (null: the deployment's; 0: none). history_checked_seq: the
-- session's last_seq when the sweep last capped it; the sweep looks again once 100 more
-- messages came.
alter table agentmem.sessions
  add column if not exists keep_messages integer,
  add column if not exists history_checked_seq bigint not null default 0;
alter table agentmem.sessions
  add constraint sessions_keep_messages_check
  check (keep_messages is null or keep_messages = 0 or keep_messages between 500 and 1000000) not valid;

create index if not exists sessions_history_unchecked_idx on agentmem.sessions (keep_messages)
  where last_seq - history_checked_seq >= 100;

-- The archive: a message's columns as stored, less its vector and full-text columns (nothing
-- searches the archive), plus when it moved. A message is in one table or the other, never
-- both: the move is one statement.
create table agentmem.messages_archive (
  session_id uuid not null references agentmem.sessions (id) on delete cascade,
  seq bigint not null,
  id text collate "C" not null,
  tenant_id text not null default '',
  user_id text collate "C" not null,
  agent text not null,
  role text not null,
  content text not null,
  parts jsonb,
  name text,
  tool_calls jsonb,
  tool_call_id text,
  metadata jsonb,
  token_estimate integer not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  archived_at timestamptz not null default now(),
  primary key (session_id, seq),
  -- A client's id stays taken in its session: commit-turn stores an archived message again no
  -- more than a live one.
  unique (session_id, id)
);
alter table agentmem.messages_archive set (toast_tuple_target = 8160);

comment on table agentmem.messages_archive is
  'Messages moved out of agentmem.messages by the sweep''s history cap: see migration archive_old_history.';

-- The user's archive across sessions (history without session_id, forget-user, clear, the
-- policies' owner filter); a message by its id alone (delete_message); the sweep of expired rows.
create index messages_archive_owner_created_idx on agentmem.messages_archive
  (user_id, tenant_id, created_at, session_id, seq, agent) include (expires_at);
create index messages_archive_id_owner_idx on agentmem.messages_archive (id, user_id, tenant_id);
create index messages_archive_expires_idx on agentmem.messages_archive (expires_at);

-- Who may do what, as for agentmem.messages (migrations take_writes_from_client_roles and
-- accept_any_user_id), except that only the sweep (service_role) moves messages in:
-- agentmem_caller reads and deletes the caller's own rows; authenticated only reads its own;
-- anon nothing.
alter table agentmem.messages_archive enable row level security;
revoke all on agentmem.messages_archive from public, anon, authenticated;
grant select, delete on agentmem.messages_archive to agentmem_caller;
grant select on agentmem.messages_archive to authenticated;
grant select, insert, update, delete on agentmem.messages_archive to service_role;

create policy caller_owner on agentmem.messages_archive
  as permissive for all to agentmem_caller
  using (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()))
  with check (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()));

create policy client_reads_own on agentmem.messages_archive
  as permissive for select to authenticated
  using (user_id = (select (auth.jwt() ->> 'sub')) and tenant_id = (select agentmem.current_tenant()));

-- The sweep in the database (migration sweep_in_the_database) also deletes expired archived
-- messages, and deletes only sessions left with neither live nor archived messages. It does
-- not cap histories: the functions' sweep does (it knows the deployment's settings).
create or replace function agentmem.sweep_expired(batch_size integer default 5000, max_batches integer default 20)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  n bigint;
  b integer;
  batches integer := 0;
  deleted_messages bigint := 0;
  deleted_archived bigint := 0;
  deleted_memories bigint := 0;
  deleted_sessions bigint := 0;
  deleted_keys bigint := 0;
  more boolean := false;
begin
  if batch_size is null or batch_size < 1 or max_batches is null or max_batches < 1 then
    raise exception 'agentmem.sweep_expired: batch_size and max_batches must be positive'
      using errcode = '22023';
  end if;

  b := 0;
  loop
    with doomed as (
      select ctid from agentmem.messages where expires_at <= now() limit batch_size for update skip locked)
    delete from agentmem.messages m using doomed where m.ctid = doomed.ctid;
    get diagnostics n = row_count;
    deleted_messages := deleted_messages + n; b := b + 1; batches := batches + 1;
    exit when n < batch_size;
    if b >= max_batches then more := true; exit; end if;
  end loop;

  b := 0;
  loop
    with doomed as (
      select ctid from agentmem.messages_archive where expires_at <= now() limit batch_size for update skip locked)
    delete from agentmem.messages_archive m using doomed where m.ctid = doomed.ctid;
    get diagnostics n = row_count;
    deleted_archived := deleted_archived + n; b := b + 1; batches := batches + 1;
    exit when n < batch_size;
    if b >= max_batches then more := true; exit; end if;
  end loop;

  b := 0;
  loop
    with doomed as (
      select id from agentmem.memories where expires_at <= now() limit batch_size for update skip locked)
    delete from agentmem.memories m using doomed where m.id = doomed.id;
    get diagnostics n = row_count;
    deleted_memories := deleted_memories + n; b := b + 1; batches := batches + 1;
    exit when n < batch_size;
    if b >= max_batches then more := true; exit; end if;
  end loop;

  b := 0;
  loop
    with doomed as (
      select s.id from agentmem.sessions s
      where s.expires_at <= now()
        and not exists (select 1 from agentmem.messages m where m.session_id = s.id)
        and not exists (select 1 from agentmem.messages_archive a where a.session_id = s.id)
      limit batch_size for update of s skip locked)
    delete from agentmem.sessions s using doomed where s.id = doomed.id;
    get diagnostics n = row_count;
    deleted_sessions := deleted_sessions + n; b := b + 1; batches := batches + 1;
    exit when n < batch_size;
    if b >= max_batches then more := true; exit; end if;
  end loop;

  b := 0;
  loop
    with doomed as (
      select ctid from agentmem.idempotency_keys where expires_at <= now() limit batch_size for update skip locked)
    delete from agentmem.idempotency_keys k using doomed where k.ctid = doomed.ctid;
    get diagnostics n = row_count;
    deleted_keys := deleted_keys + n; b := b + 1; batches := batches + 1;
    exit when n < batch_size;
    if b >= max_batches then more := true; exit; end if;
  end loop;

  return jsonb_build_object(
    'deleted', jsonb_build_object('messages', deleted_messages, 'archived_messages', deleted_archived,
                                  'memories', deleted_memories, 'sessions', deleted_sessions,
                                  'idempotency_keys', deleted_keys),
    'batches', batches,
    'more', more);
end
$$;

revoke all on function agentmem.sweep_expired(integer, integer) from public, anon, authenticated;
grant execute on function agentmem.sweep_expired(integer, integer) to service_role;
