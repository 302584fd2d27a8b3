-- The policy helpers agentmem.current_user_id() and agentmem.current_tenant() become PL/pgSQL.
-- As SQL functions with their own search_path they were never inlined, so every statement
-- under row-level security parsed and planned each helper's body again, once per reference in
-- its policies (four of each in a commit). A PL/pgSQL function is compiled once per connection
-- and evaluates its one expression through a cached plan. Same results, same search_path, same
-- grants (create or replace keeps them); the policies, which call each helper in a scalar
-- subquery, still evaluate it once per statement.

create or replace function agentmem.current_user_id() returns uuid
  language plpgsql stable
  set search_path = ''
as $$
begin
  return coalesce(
    nullif(pg_catalog.current_setting('request.jwt.claim.sub', true), ''),
    (nullif(pg_catalog.current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
  )::uuid;
end
$$;

create or replace function agentmem.current_tenant() returns text
  language plpgsql stable
  set search_path = ''
as $$
begin
  return coalesce(
    coalesce(
      nullif(pg_catalog.current_setting('request.jwt.claim', true), ''),
      nullif(pg_catalog.current_setting('request.jwt.claims', true), '')
    )::jsonb -> 'app_metadata' ->> 'tenant_id',
    '');
end
$$;
