-- Local stand-in for what every Supabase database already has: the API roles, the auth
-- helpers that row-level security policies call, and Auth's users table. Applied by `agentmem bootstrap` before the
-- migrations on a local database only; each piece is created only when it is absent, so running
-- it against a real Supabase database changes nothing. It is not a migration on purpose: on a
-- Supabase project these objects exist and belong to Supabase.

do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'service_role') then
    create role service_role nologin noinherit bypassrls;
  end if;
end
$$;

-- The login role a service connects as may switch to the API roles, as Supabase's postgres can.
do $$
begin
  execute format('grant anon, authenticated, service_role to %I', current_user);
end
$$;

create schema if not exists auth;
create schema if not exists extensions;
grant usage on schema auth to anon, authenticated, service_role;
grant usage on schema extensions to anon, authenticated, service_role;

do $$
begin
  if to_regprocedure('auth.uid()') is null then
    create function auth.uid() returns uuid
      language sql stable
      set search_path = ''
    as $f$
      select coalesce(
        nullif(current_setting('request.jwt.claim.sub', true), ''),
        (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
      )::uuid
    $f$;
  end if;
  if to_regprocedure('auth.role()') is null then
    create function auth.role() returns text
      language sql stable
      set search_path = ''
    as $f$
      select coalesce(
        nullif(current_setting('request.jwt.claim.role', true), ''),
        (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
      )::text
    $f$;
  end if;
  if to_regprocedure('auth.jwt()') is null then
    create function auth.jwt() returns jsonb
      language sql stable
      set search_path = ''
    as $f$
      select coalesce(
        nullif(current_setting('request.jwt.claim', true), ''),
        nullif(current_setting('request.jwt.claims', true), '')
      )::jsonb
    $f$;
  end if;
end
$$;

grant execute on function auth.uid(), auth.role(), auth.jwt() to anon, authenticated, service_role;

-- Supabase Auth's users, in the shape of Supabase's own auth.users where agentmem relies on it
-- (id is the uuid every access token's sub names; deleting a row is how Auth deletes a user).
-- Created only when absent, so a database bootstrapped before it existed gets it on the next
-- bootstrap, and a Supabase database keeps its own. Like on Supabase, the API roles get no
-- privilege on it. The name is checked before anything is created: on Supabase even a
-- "create table if not exists" in schema auth is refused.
do $$
begin
  if pg_catalog.to_regclass('auth.users') is null then
    create table auth.users (
      instance_id uuid,
      id uuid not null primary key,
      aud character varying(255),
      role character varying(255),
      email character varying(255),
      encrypted_password character varying(255),
      email_confirmed_at timestamptz,
      last_sign_in_at timestamptz,
      raw_app_meta_data jsonb,
      raw_user_meta_data jsonb,
      is_super_admin boolean,
      created_at timestamptz,
      updated_at timestamptz,
      phone text unique default null,
      phone_confirmed_at timestamptz,
      banned_until timestamptz,
      deleted_at timestamptz,
      is_sso_user boolean not null default false,
      is_anonymous boolean not null default false
    );
  end if;
end
$$;
