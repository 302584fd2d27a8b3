-- The Redis adapter's get-context cache (shared/adapter/redis) serves a cached answer only when
-- every change of the user has reached Redis: no job of the user for that adapter is still
-- undelivered (pending, running, or dead), nor was one delivered so recently that a look-up in
-- Redis made at the same time might have been answered before it (see the package's
-- documentation). get-context asks that as the caller, alongside its look-up in Redis, through
-- agentmem.cache_unsettled.
--
-- Security definer: agentmem_caller may only insert jobs (migration create_jobs_outbox), and a
-- user's erasure across every tenant is written under tenant '' that no caller's policy sees.
-- It answers one boolean about the caller's own user (the claims' sub), nothing else, and only
-- the functions' role may call it. PL/pgSQL rather than SQL: every get-context through the
-- cache calls it, and PL/pgSQL keeps its plans for the connection's life.
create function agentmem.cache_unsettled(p_adapter text, p_settle_ms integer)
returns boolean
language plpgsql stable
security definer
set search_path = ''
as $$
declare
  v_user uuid := agentmem.current_user_id();
begin
  return exists (
      select 1 from agentmem.jobs j
      where j.user_id = v_user and j.adapter = p_adapter and j.status <> 'done')
    or exists (
      select 1 from agentmem.jobs j
      where j.user_id = v_user and j.adapter = p_adapter and j.status = 'done'
        and j.updated_at > pg_catalog.now() - pg_catalog.make_interval(secs => p_settle_ms / 1000.0));
end
$$;

revoke execute on function agentmem.cache_unsettled(text, integer) from public, anon, authenticated;
grant execute on function agentmem.cache_unsettled(text, integer) to agentmem_caller, service_role;

-- A user's undelivered jobs, and delivered ones by when, by adapter: each look-up above stays a
-- probe however many jobs JOBS_DONE_RETENTION keeps. Both are empty when no adapter is enabled.
create index jobs_undelivered_owner_idx on agentmem.jobs (user_id, adapter) where status <> 'done';
create index jobs_done_owner_idx on agentmem.jobs (user_id, adapter, updated_at) where status = 'done';
