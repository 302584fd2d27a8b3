-- The sweep, in the database: agentmem.sweep_expired() deletes expired rows in batches, as the
-- sweep-expired function does, so that a database scheduler (pg_cron, which every Supabase
-- project can enable) can run it with no function deployed and no HTTP call.
-- agentmem.schedule_sweep() and agentmem.unschedule_sweep() install and remove that pg_cron job
-- (`agentmem schedule` calls them); they need the pg_cron extension only when called.
--
-- One call is one transaction: each kind of row is deleted in batches of batch_size, at most
-- max_batches batches per kind, skipping rows a live request holds (for update skip locked) so
-- that no commit or read waits on the sweep. More expired rows than that are left for the next
-- run, and reported by "more". Sessions go after their messages: only sessions left empty go.
--
-- It does not embed pending rows (the scheduled sweep-expired function does, calling the
-- embedding provider): with pg_cron alone, run `agentmem embed-pending` when the provider was
-- down or the model changed.
--
-- security definer: it deletes every user's rows, as the table owner, whatever role calls it;
-- so only the owner (the role the migrations and pg_cron jobs run as) and service_role may
-- call it, and its search_path is empty.

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
    'deleted', jsonb_build_object('messages', deleted_messages, 'memories', deleted_memories,
                                  'sessions', deleted_sessions, 'idempotency_keys', deleted_keys),
    'batches', batches,
    'more', more);
end
$$;

revoke all on function agentmem.sweep_expired(integer, integer) from public, anon, authenticated;
grant execute on function agentmem.sweep_expired(integer, integer) to service_role;

-- agentmem.schedule_sweep installs (or replaces) the pg_cron job "agentmem-sweep-expired",
-- which runs agentmem.sweep_expired(batch_size, max_batches) on schedule (cron syntax, or
-- pg_cron's '<n> seconds'), and returns its job id. pg_cron must be enabled in this database
-- (on Supabase: Database, Extensions, pg_cron; or `create extension pg_cron`).
create or replace function agentmem.schedule_sweep(
  schedule text default '*/15 * * * *', batch_size integer default 5000, max_batches integer default 20)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  job bigint;
begin
  if to_regnamespace('cron') is null then
    raise exception 'pg_cron is not enabled in this database'
      using errcode = '55000',
            hint = 'On Supabase enable it under Database, Extensions (pg_cron); elsewhere add pg_cron to shared_preload_libraries and run create extension pg_cron.';
  end if;
  if batch_size is null or batch_size < 1 or max_batches is null or max_batches < 1 then
    raise exception 'agentmem.schedule_sweep: batch_size and max_batches must be positive'
      using errcode = '22023';
  end if;
  execute 'select cron.schedule($1, $2, $3)'
    into job
    using 'agentmem-sweep-expired', schedule,
          format('select agentmem.sweep_expired(%s, %s)', batch_size, max_batches);
  return job;
end
$$;

-- agentmem.unschedule_sweep removes the job; false when there was none (or no pg_cron).
create or replace function agentmem.unschedule_sweep()
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  found_job boolean;
begin
  if to_regnamespace('cron') is null then
    return false;
  end if;
  execute 'select exists (select 1 from cron.job where jobname = $1)' into found_job using 'agentmem-sweep-expired';
  if not found_job then
    return false;
  end if;
  execute 'select cron.unschedule($1)' using 'agentmem-sweep-expired';
  return true;
end
$$;

revoke all on function agentmem.schedule_sweep(text, integer, integer) from public, anon, authenticated;
revoke all on function agentmem.unschedule_sweep() from public, anon, authenticated;
