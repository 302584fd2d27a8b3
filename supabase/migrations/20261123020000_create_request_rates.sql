-- Request rate limits, per user (tenant, user) and per tenant, shared by every container.
--
-- Each limit is a GCRA (generic cell rate algorithm, the token bucket kept as one timestamp):
-- a limit of n requests per period lets a burst of n through, then one more every period / n.
-- A counter's row holds its theoretical arrival time, tat: the moment its bucket is full again.
-- A request at time t is allowed when greatest(tat, t) + period / n - t <= period, and then
-- moves tat to greatest(tat, t) + period / n. A row whose tat has passed is a full bucket,
-- exactly like a missing row, so sweep-expired may delete it at any time.
--
-- The table is unlogged: counters are written on every limited request and need no WAL; a
-- crash empties them, which only forgives the requests of the last period. No client role can
-- read or write it: row-level security is on with no policy, and nothing is granted to anon or
-- authenticated. Requests take their slot through agentmem.take_request_slot (security
-- definer, executable by service_role only); sweep-expired, as service_role, deletes full
-- buckets.
create unlogged table agentmem.request_rates (
  tenant_id text not null,
  -- The user, or the nil UUID for the row of the tenant as a whole.
  user_id uuid not null,
  tat timestamptz not null,
  primary key (tenant_id, user_id)
);

alter table agentmem.request_rates enable row level security;
revoke all on agentmem.request_rates from public, anon, authenticated, service_role;
grant select, delete on agentmem.request_rates to service_role;

-- agentmem.take_request_slot takes one slot of a request of user p_user_id in tenant
-- p_tenant_id ('' for none) from the user's counter (p_user_limit requests per p_period_ms) and
-- from the tenant's (p_tenant_limit per p_period_ms; never for the tenant ''), or from neither:
-- a limit of 0 or less is no limit. retry_after_ms is 0 when the slot was taken, else the
-- milliseconds until one is free, and limited_by says which counter is full ('user' or
-- 'tenant'); a refused request changes no counter.
--
-- Concurrency: the function locks the tenant's row, then the user's, always in that order (so
-- two requests never wait for each other in a cycle), and reads the clock once it holds them.
-- Requests of one user, or one tenant, take their slots one after the other; a row that does
-- not exist yet is created by the first of them (the others wait for it on the primary key).
-- Run it as a statement of its own, outside a request's transaction, so its locks last a few
-- microseconds.
create function agentmem.take_request_slot(
  p_tenant_id text, p_user_id uuid, p_user_limit integer, p_tenant_limit integer, p_period_ms integer,
  out retry_after_ms integer, out limited_by text)
language plpgsql volatile
security definer
set search_path = ''
as $$
declare
  v_period interval := pg_catalog.make_interval(secs => p_period_ms / 1000.0);
  v_nobody constant uuid := '00000000-0000-0000-0000-000000000000';
  v_by_tenant boolean := p_tenant_limit > 0 and p_tenant_id <> '' and p_period_ms > 0;
  v_by_user boolean := p_user_limit > 0 and p_period_ms > 0;
  v_tenant_tat timestamptz;
  v_user_tat timestamptz;
  v_now timestamptz;
  v_wait interval;
begin
  retry_after_ms := 0;
  if v_by_tenant then
    select r.tat into v_tenant_tat from agentmem.request_rates r
    where r.tenant_id = p_tenant_id and r.user_id = v_nobody for update;
    if not found then
      insert into agentmem.request_rates as r (tenant_id, user_id, tat)
      values (p_tenant_id, v_nobody, '-infinity')
      on conflict (tenant_id, user_id) do update set tat = r.tat
      returning r.tat into v_tenant_tat;
    end if;
  end if;
  if v_by_user then
    select r.tat into v_user_tat from agentmem.request_rates r
    where r.tenant_id = p_tenant_id and r.user_id = p_user_id for update;
    if not found then
      insert into agentmem.request_rates as r (tenant_id, user_id, tat)
      values (p_tenant_id, p_user_id, '-infinity')
      on conflict (tenant_id, user_id) do update set tat = r.tat
      returning r.tat into v_user_tat;
    end if;
  end if;
  v_now := pg_catalog.clock_timestamp();

  if v_by_tenant then
    v_wait := greatest(v_tenant_tat, v_now) + v_period / p_tenant_limit - v_now - v_period;
    if v_wait > interval '0' then
      retry_after_ms := greatest(1, pg_catalog.ceil(extract(epoch from v_wait) * 1000))::integer;
      limited_by := 'tenant';
    end if;
  end if;
  if v_by_user then
    v_wait := greatest(v_user_tat, v_now) + v_period / p_user_limit - v_now - v_period;
    if v_wait > interval '0' and pg_catalog.ceil(extract(epoch from v_wait) * 1000) > retry_after_ms then
      retry_after_ms := greatest(1, pg_catalog.ceil(extract(epoch from v_wait) * 1000))::integer;
      limited_by := 'user';
    end if;
  end if;
  if retry_after_ms > 0 then
    return;
  end if;

  -- The rows are locked by this transaction: a sweep skips them, so both updates find theirs.
  if v_by_tenant then
    update agentmem.request_rates r set tat = greatest(r.tat, v_now) + v_period / p_tenant_limit
    where r.tenant_id = p_tenant_id and r.user_id = v_nobody;
  end if;
  if v_by_user then
    update agentmem.request_rates r set tat = greatest(r.tat, v_now) + v_period / p_user_limit
    where r.tenant_id = p_tenant_id and r.user_id = p_user_id;
  end if;
end
$$;

revoke execute on function agentmem.take_request_slot(text, uuid, integer, integer, integer) from public, anon, authenticated;
grant execute on function agentmem.take_request_slot(text, uuid, integer, integer, integer) to service_role;
