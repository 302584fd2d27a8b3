-- Writes come through agentmem's functions only, never straight from a Supabase client.
--
-- The hole this closes: schema agentmem is exposed through PostgREST (supabase/config.toml, or a
-- project's "Exposed schemas" setting), and every table was granted insert, update and delete
-- to `authenticated`, the role the functions themselves took for a user's request. The policies
-- checked only the new row's own user_id and tenant_id, and foreign keys are checked without
-- row-level security. Any signed-in user of the project, with supabase-js or plain REST, could
-- therefore put a message of their own into another user's session (whose next commit then
-- collided on seq), probe which session ids and seqs exist through unique and foreign-key
-- errors, plant an idempotency record in a service caller's name, and write rows past every
-- limit the functions enforce (sizes, expiry, seq order).
--
-- The design: the functions run a user's request as a role of their own, agentmem_caller, which
-- no client can hold. PostgREST switches only to roles its `authenticator` login is a member of
-- (anon, authenticated, service_role); agentmem_caller is granted to the login that applies the
-- migrations, the one the functions connect as, and to nobody else. Row-level security still
-- decides every row agentmem_caller reads or writes, with the caller's claims set for the
-- transaction as before. The client roles keep only what cannot hurt anyone:
--
--   anon           nothing at all;
--   authenticated  select of its own rows (sessions, messages, active_sessions, memories,
--                  user_memory, user_state, notes) and of its tenant's knowledge_chunks, and the
--                  read-only match RPCs in public; no insert, update or delete anywhere, and no
--                  access to idempotency_keys;
--   service_role   unchanged (it is the project's own key and bypasses row-level security).
--
-- Designs weighed and not taken:
--   * composite foreign keys carrying the owner and policies that check the referenced row:
--     they stop the foreign session, but unique keys (session ids, seqs) stay an oracle of other
--     users' rows, and the functions' limits (sizes, seq order, expiry, who an idempotency record
--     belongs to) cannot all be written as constraints;
--   * every write through security definer functions: moves every statement of the store into
--     PL/pgSQL, for the same guarantee;
--   * not exposing the schema: exposure is a setting of the hosted project that a migration
--     cannot enforce; grants hold whatever that setting says.
--
-- The policies of agentmem_caller read the claims with agentmem's own helpers, so the role
-- needs no privilege on Supabase's auth schema.

-- The role, once per cluster. Several databases of one server may be migrated at once (tests
-- do), hence the tolerance of a concurrent creation.
do $$
begin
  if not exists (select 1 from pg_catalog.pg_roles where rolname = 'agentmem_caller') then
    begin
      create role agentmem_caller nologin;
    exception when duplicate_object or unique_violation then
      null;
    end;
  end if;
end
$$;

comment on role agentmem_caller is
  'agentmem''s functions run a user''s request as this role, under row-level security; no API client can take it';

-- The login that applies the migrations (postgres on Supabase) may switch to it. A deployment
-- whose functions connect as another login grants it to that login too.
do $$
begin
  if not pg_catalog.pg_has_role(current_user, 'agentmem_caller', 'member') then
    begin
      execute format('grant agentmem_caller to %I', current_user);
    exception when unique_violation then
      null; -- granted at the same moment by a concurrent migration
    end;
  end if;
end
$$;

grant usage on schema agentmem to agentmem_caller;
grant usage on schema extensions to agentmem_caller;

do $$
begin
  if not pg_catalog.has_schema_privilege('agentmem_caller', 'extensions', 'usage') then
    raise exception 'agentmem_caller could not be granted usage on schema extensions'
      using hint = 'run as the owner of schema extensions: grant usage on schema extensions to agentmem_caller';
  end if;
end
$$;

-- The caller's user id, as auth.uid() reads it, for the policies of agentmem_caller.
create function agentmem.current_user_id() returns uuid
  language sql stable
  set search_path = ''
as $$
  select coalesce(
    nullif(pg_catalog.current_setting('request.jwt.claim.sub', true), ''),
    (nullif(pg_catalog.current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
  )::uuid
$$;

-- The caller's tenant, read from the claims as auth.jwt() reads them (no longer through it).
create or replace function agentmem.current_tenant() returns text
  language sql stable
  set search_path = ''
as $$
  select coalesce(
    coalesce(
      nullif(pg_catalog.current_setting('request.jwt.claim', true), ''),
      nullif(pg_catalog.current_setting('request.jwt.claims', true), '')
    )::jsonb -> 'app_metadata' ->> 'tenant_id',
    '')
$$;

-- Tables: no client role writes; agentmem_caller writes under the same owner rule as before.
do $$
declare
  t text;
begin
  foreach t in array array['sessions', 'messages', 'active_sessions', 'memories', 'user_memory',
                           'user_state', 'notes', 'idempotency_keys']
  loop
    execute format('revoke all on agentmem.%I from public, anon, authenticated', t);
    execute format('drop policy owner_only on agentmem.%I', t);
    execute format($p$
      create policy caller_owner on agentmem.%I
        as permissive for all to agentmem_caller
        using (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()))
        with check (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()))
    $p$, t);
    execute format('grant select, insert, update, delete on agentmem.%I to agentmem_caller', t);
    if t <> 'idempotency_keys' then
      execute format($p$
        create policy client_reads_own on agentmem.%I
          as permissive for select to authenticated
          using (user_id = (select auth.uid()) and tenant_id = (select agentmem.current_tenant()))
      $p$, t);
      execute format('grant select on agentmem.%I to authenticated', t);
    end if;
  end loop;
end
$$;

revoke all on agentmem.knowledge_chunks from public, anon, authenticated;
grant select on agentmem.knowledge_chunks to authenticated, agentmem_caller;
create policy caller_tenant_read on agentmem.knowledge_chunks
  as permissive for select to agentmem_caller
  using (tenant_id = (select agentmem.current_tenant()));

-- Functions: every function of schema agentmem is for the functions' own roles; the client
-- roles keep only the two that their select policies and the public match RPCs call.
do $$
declare
  f regprocedure;
begin
  for f in
    select p.oid::regprocedure
    from pg_catalog.pg_proc p
    join pg_catalog.pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'agentmem'
  loop
    execute format('revoke all on function %s from public, anon, authenticated', f);
    execute format('grant execute on function %s to agentmem_caller, service_role', f);
  end loop;
end
$$;

grant execute on function agentmem.current_tenant() to authenticated;
grant execute on function agentmem.any_words_query(text) to authenticated;
