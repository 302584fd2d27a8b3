-- Rate-limit counters of their own for costly requests: each counter of agentmem.request_rates
-- now belongs to a bucket, '' for the requests as a whole (as before) or the name of a kind of
-- request that has a limit of its own (the backfillSession intent). A request of such a kind
-- takes a slot of both: the general counters when it arrives, its bucket's when it is known to
-- be of that kind. The counters of one user and tenant, in every bucket, go together with the
-- user's other rows (forget-user, by user_id and tenant_id), and a full one is swept as before.
alter table agentmem.request_rates add column bucket text not null default '';
alter table agentmem.request_rates drop constraint request_rates_pkey;
alter table agentmem.request_rates add primary key (tenant_id, user_id, bucket);

-- agentmem.take_request_slot as before (see create_request_rates), on the counters of bucket
-- p_bucket; '' (the default, so a call without it means what it meant) is the general one.
drop function agentmem.take_request_slot(text, uuid, integer, integer, integer);
create function agentmem.take_request_slot(
  p_tenant_id text, p_user_id uuid, p_user_limit integer, p_tenant_limit integer, p_period_ms integer,
  p_bucket text default '',
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
    where r.tenant_id = p_tenant_id and r.user_id = v_nobody and r.bucket = p_bucket for update;
    if not found then
      insert into agentmem.request_rates as r (tenant_id, user_id, bucket, tat)
      values (p_tenant_id, v_nobody, p_bucket, '-infinity')
      on conflict (tenant_id, user_id, bucket) do update set tat = r.tat
      returning r.tat into v_tenant_tat;
    end if;
  end if;
  if v_by_user then
    select r.tat into v_user_tat from agentmem.request_rates r
    where r.tenant_id = p_tenant_id and r.user_id = p_user_id and r.bucket = p_bucket for update;
    if not found then
      insert into agentmem.request_rates as r (tenant_id, user_id, bucket, tat)
      values (p_tenant_id, p_user_id, p_bucket, '-infinity')
      on conflict (tenant_id, user_id, bucket) do update set tat = r.tat
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
    where r.tenant_id = p_tenant_id and r.user_id = v_nobody and r.bucket = p_bucket;
  end if;
  if v_by_user then
    update agentmem.request_rates r set tat = greatest(r.tat, v_now) + v_period / p_user_limit
    where r.tenant_id = p_tenant_id and r.user_id = p_user_id and r.bucket = p_bucket;
  end if;
end
$$;

revoke execute on function agentmem.take_request_slot(text, uuid, integer, integer, integer, text) from public, anon, authenticated;
grant execute on function agentmem.take_request_slot(text, uuid, integer, integer, integer, text) to service_role;
