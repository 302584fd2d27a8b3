-- A user deleted in Supabase Auth leaves nothing behind in agentmem.
--
-- Deleting a user (dashboard, auth.admin.deleteUser, or a plain `delete from auth.users`)
-- deletes their row of auth.users. A trigger on that table now erases, in the same
-- transaction, every row agentmem holds for the user, in every table and every tenant: the
-- delete and the erasure commit together or not at all.
--
-- agentmem.erase_user is that erasure. It finds its tables as ForgetUser does
-- (shared/store/forget.go): every table of schema agentmem with a user_id column, read from the
-- catalog at run time, so a table added later is erased without anyone listing it here. It
-- keeps ForgetUser's lock discipline too: the user's advisory lock in exclusive mode first
-- (key hashtextextended(user_id::text, 7216), which every request of the user takes in shared
-- mode), so requests of the user in flight finish first and those that start meanwhile wait
-- until the delete commits, and a concurrent commit cannot slip a row in behind the erasure;
-- then the user's sessions, in the order a commit takes its locks; then the deletes, each table
-- before the tables it references.
--
-- The trigger function is security definer (Supabase Auth deletes as supabase_auth_admin,
-- which has no privilege on agentmem), with an empty search_path, and neither function can be
-- executed by the API roles. A project without auth.users (a plain Postgres) gets the function
-- and no trigger; the local stand-in (supabase/local/bootstrap.sql) has the table.

create function agentmem.erase_user(p_user_id uuid) returns jsonb
  language plpgsql
  set search_path = ''
as $$
declare
  t record;
  n bigint;
  deleted jsonb := '{}'::jsonb;
begin
  if p_user_id is null then
    return deleted;
  end if;
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended(p_user_id::text, 7216));
  perform 1 from agentmem.sessions s where s.user_id = p_user_id for update;
  for t in
    with recursive user_tables as (
      select c.oid, c.relname::text as name, pg_catalog.format_type(u.atttypid, u.atttypmod) as user_type
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      join pg_catalog.pg_attribute u
        on u.attrelid = c.oid and u.attname = 'user_id' and u.attnum > 0 and not u.attisdropped
      where ns.nspname = 'agentmem' and c.relkind in ('r', 'p') and not c.relispartition
    ),
    refs as (
      select con.conrelid as src, con.confrelid as dst
      from pg_catalog.pg_constraint con
      where con.contype = 'f' and con.conrelid <> con.confrelid
        and con.conrelid in (select oid from user_tables) and con.confrelid in (select oid from user_tables)
    ),
    -- depth: the longest chain of references that leads to a table (bounded, for cycles).
    depth (oid, d) as (
      select oid, 0 from user_tables
      union
      select r.dst, depth.d + 1 from depth join refs r on r.src = depth.oid where depth.d < 32
    )
    select ut.name, ut.user_type
    from user_tables ut
    join (select oid, max(d) as d from depth group by oid) x on x.oid = ut.oid
    order by x.d, ut.name
  loop
    execute pg_catalog.format('delete from agentmem.%I where %s', t.name,
      case t.user_type
        when 'uuid' then 'user_id = $1'
        when 'text' then 'user_id = $1::text'
        else 'user_id::text = $1::text'
      end)
      using p_user_id;
    get diagnostics n = row_count;
    deleted := deleted || pg_catalog.jsonb_build_object(t.name, n);
  end loop;
  return deleted;
end
$$;

comment on function agentmem.erase_user(uuid) is
  'Erases every row of a user in every agentmem table and tenant; returns the rows deleted per table. Called when Supabase Auth deletes the user.';

create function agentmem.erase_deleted_auth_user() returns trigger
  language plpgsql
  security definer
  set search_path = ''
as $$
begin
  perform agentmem.erase_user(old.id);
  return old;
end
$$;

revoke execute on function agentmem.erase_user(uuid) from public, anon, authenticated, service_role, agentmem_caller;
revoke execute on function agentmem.erase_deleted_auth_user() from public, anon, authenticated, service_role, agentmem_caller;

do $$
begin
  if pg_catalog.to_regclass('auth.users') is not null then
    drop trigger if exists agentmem_erase_deleted_user on auth.users;
    create trigger agentmem_erase_deleted_user
      after delete on auth.users
      for each row execute function agentmem.erase_deleted_auth_user();
  end if;
end
$$;
