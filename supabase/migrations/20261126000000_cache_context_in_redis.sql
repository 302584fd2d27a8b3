-- The Redis adapter's get-context cache (shared/adapter/redis) serves a cached window only when
-- every change of the user has reached Redis: no job of the user for that adapter is still
-- undelivered (pending, running, or dead). get-context asks that as the caller, in the batch
-- that reads the user's own rows, through agentmem.undelivered_jobs.
--
-- Security definer: agentmem_caller may only insert jobs (migration create_jobs_outbox), and a
-- user's erasure across every tenant is written under tenant '' that no caller's policy sees.
-- It answers one boolean about the caller's own user (the claims' sub), nothing else, and only
-- the functions' role may call it.
create function agentmem.undelivered_jobs(p_adapter text)
returns boolean
language sql stable
security definer
set search_path = ''
as $$
  select exists (
    select 1 from agentmem.jobs j
    where j.user_id = (select agentmem.current_user_id()) and j.adapter = p_adapter and j.status <> 'done')
$$;

revoke execute on function agentmem.undelivered_jobs(text) from public, anon, authenticated;
grant execute on function agentmem.undelivered_jobs(text) to agentmem_caller, service_role;

-- The undelivered jobs of a user, by adapter: only those rows, so the look-up stays a probe
-- however many delivered jobs JOBS_DONE_RETENTION keeps; empty when no adapter is enabled.
create index jobs_undelivered_owner_idx on agentmem.jobs (user_id, adapter) where status <> 'done';
