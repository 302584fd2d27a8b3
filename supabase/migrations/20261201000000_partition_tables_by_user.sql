-- Every user-owned table partitioned by the hash of its user, on demand.
--
-- agentmem.partition_by_user(n) turns each user-owned table of schema agentmem (a table with a
-- user_id column, and cache_generations, which keys users by owner) into a table partitioned by
-- hash of that column into n partitions, <table>_p0 .. <table>_p<n-1>, in place, with its rows.
-- n = 1 changes nothing: this migration itself changes no table, and a database nobody
-- partitions keeps exactly the layout of the migrations before it. `agentmem partition` (run
-- by scripts/migrate.sh when USER_PARTITIONS is more than 1) calls it after the migrations.
--
-- Everything is read from the catalog of the live table, not written down here, so the tables
-- and columns later migrations add are converted the same way: the columns with their defaults,
-- generated expressions, storage, compression, comments and statistics targets; check
-- constraints (a NOT VALID one stays NOT VALID); the primary key, unique and exclusion
-- constraints and the other indexes (HNSW, GIN, btree; made on the parent, so each partition
-- gets its own, and its own smaller HNSW graph); triggers; row-level security, its flags and
-- policies; privileges (of the table and its columns); owner; comments; publications; storage
-- options (on each partition: a partitioned table has no storage); foreign keys. A primary
-- key, unique constraint or unique index that lacks the user column gets it in front
-- (sessions (id) becomes (user_id, id)), and a foreign key between user-owned tables gets it on
-- both sides (messages (user_id, session_id) references sessions (user_id, id)): each
-- partition then enforces its own, and a user's rows only ever refer to the same user's rows.
-- The partitions have no privileges and row-level security without policies: every access goes
-- through the parent and its policies. The rows of user '' (the tenants' shared memories, the
-- rate limiter's tenant-wide counters) are rows of one more user: they all go to the partition
-- the hash of '' chooses, and a recall with the shared memories reads two partitions of
-- memories, the user's and that one (migration name_the_user_in_every_join).
--
-- On the partitioned layout session ids are unique per user by key; a trigger keeps them unique
-- across users (agentmem.keep_session_id_unique), so that another user's session still looks
-- missing (404) rather than becoming a second session of the same id. Sessions and jobs keep
-- an index on their id alone (sessions_id_idx, jobs_id_idx): that trigger, and the jobs
-- function, which reads and retries a job by its id, find a row without its user in one probe
-- of each partition.
--
-- It is idempotent: tables already partitioned into n are left alone (a table a later
-- migration adds is converted by the next call), and a call with another n than the tables
-- have fails: repartitioning is not implemented (dump and restore into a fresh database, or add
-- it here). n is at most 256.
--
-- For migrations after it: CREATE INDEX CONCURRENTLY is refused on a partitioned table (make
-- the index with CREATE INDEX ... ON ONLY the parent, CONCURRENTLY on each partition, then
-- ALTER INDEX ... ATTACH PARTITION, as agentmem.embedding_index_statements does, or plainly,
-- locking writes); a primary key or unique constraint of a user-owned table must include
-- user_id; a foreign key to a user-owned table must carry user_id; storage options go on the
-- partitions (ALTER TABLE ... SET on the parent is refused); a statement of one user names
-- user_id = <the user> on every user-owned table it reads, so that it reads one partition.
--
-- On a large table: the call copies each table into its partitions and builds the indexes
-- again, under an ACCESS EXCLUSIVE lock on every user-owned table for the whole transaction
-- (reads and writes wait); about as long as building the tables' indexes again, and room for a
-- second copy of the tables (docs/deploy.md has the figures). This migration itself only
-- creates functions.

-- The user-owned tables: those keyed by a user, with the column that names the user and the
-- number of partitions each has (1: not partitioned).
create function agentmem.user_owned_tables()
returns table (rel regclass, key_column name, partitions integer)
language sql stable
set search_path = ''
as $$
  select c.oid::regclass, a.attname,
         case when c.relkind = 'p'
              then (select pg_catalog.count(*)::integer from pg_catalog.pg_inherits i where i.inhparent = c.oid)
              else 1 end
  from pg_catalog.pg_class c
  join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
  join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    -- cache_generations names its user owner on purpose (it outlives an erasure)
    and (a.attname = 'user_id' or (c.relname = 'cache_generations' and a.attname = 'owner'))
  where ns.nspname = 'agentmem' and c.relkind in ('r', 'p') and not c.relispartition
  order by c.relname
$$;

revoke all on function agentmem.user_owned_tables() from public, anon, authenticated;
grant execute on function agentmem.user_owned_tables() to service_role;

-- A new session's id must be nobody else's: on the partitioned layout the primary key is
-- (user_id, id), so this keeps the id unique across users. Creators of one id wait for each
-- other (the advisory lock), and the look that follows takes its snapshot after the wait.
create function agentmem.keep_session_id_unique() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended(new.id::text, 7218));
  if exists (select 1 from agentmem.sessions s where s.id = new.id and s.user_id <> new.user_id) then
    -- what the unpartitioned layout's conflict answers: row-level security refuses the row
    raise exception using errcode = '42501',
      message = 'new row violates row-level security policy for table "sessions"';
  end if;
  return null;
end
$$;

revoke all on function agentmem.keep_session_id_unique() from public, anon, authenticated;

-- partition_table converts one table (see partition_by_user, which drops and adds the foreign
-- keys around it) and answers the rows it copied.
create function agentmem.partition_table(rel regclass, key_column name, n integer)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  nsp text;
  tbl text;
  qualified text;
  old_name text;
  owner_name text;
  opts text[];
  rls boolean;
  force_rls boolean;
  replident "char";
  key_num smallint;
  cols text;
  always_identity boolean;
  pre text[] := '{}';
  post text[] := '{}';
  drop_first text[] := '{}';
  s text;
  r record;
  def text;
  part text;
  copied bigint;
  started timestamptz := pg_catalog.clock_timestamp();
begin
  select ns.nspname, c.relname, pg_catalog.quote_ident(o.rolname), c.reloptions, c.relrowsecurity,
         c.relforcerowsecurity, c.relreplident
  into nsp, tbl, owner_name, opts, rls, force_rls, replident
  from pg_catalog.pg_class c
  join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
  join pg_catalog.pg_roles o on o.oid = c.relowner
  where c.oid = rel;
  qualified := pg_catalog.format('%I.%I', nsp, tbl);
  old_name := tbl || '__unpartitioned';
  if pg_catalog.length(tbl || '_p' || (n - 1)) > 63 or pg_catalog.length(old_name) > 63 then
    raise exception 'partition %: the name is too long for its partitions', qualified;
  end if;
  select a.attnum into key_num from pg_catalog.pg_attribute a where a.attrelid = rel and a.attname = key_column;

  -- Constraints: keys and exclusions with the user column, checks as they are.
  for r in
    select con.conname, con.contype, pg_catalog.pg_get_constraintdef(con.oid) as def, con.conkey,
           con.convalidated, con.connoinherit, pg_catalog.obj_description(con.oid, 'pg_constraint') as note
    from pg_catalog.pg_constraint con
    where con.conrelid = rel and con.contype in ('p', 'u', 'x', 'c')
    order by con.contype desc, con.conname
  loop
    def := r.def;
    if r.contype in ('p', 'u') and not (key_num = any (r.conkey)) then
      def := pg_catalog.regexp_replace(def, '^(PRIMARY KEY|UNIQUE NULLS NOT DISTINCT|UNIQUE) \(',
        '\1 (' || pg_catalog.quote_ident(key_column) || ', ');
    elsif r.contype = 'x' and not (key_num = any (r.conkey)) then
      raise exception 'partition %: exclusion constraint % does not include %', qualified, r.conname, key_column;
    elsif r.contype = 'c' and r.connoinherit then
      raise exception 'partition %: check constraint % is NO INHERIT', qualified, r.conname;
    end if;
    s := pg_catalog.format('alter table %s add constraint %I %s', qualified, r.conname, def);
    -- a valid check goes on before the rows (checked as they come), a NOT VALID one after
    if r.contype = 'c' and r.convalidated then
      pre := pre || s;
    else
      post := post || s;
    end if;
    if r.note is not null then
      post := post || pg_catalog.format('comment on constraint %I on %s is %L', r.conname, qualified, r.note);
    end if;
  end loop;

  -- Indexes of their own (not a constraint's), unique ones with the user column.
  for r in
    select ic.relname, pg_catalog.pg_get_indexdef(i.indexrelid) as def, i.indisunique, i.indisvalid,
           i.indkey::smallint[] as keys, pg_catalog.obj_description(i.indexrelid, 'pg_class') as note
    from pg_catalog.pg_index i
    join pg_catalog.pg_class ic on ic.oid = i.indexrelid
    where i.indrelid = rel
      and not exists (select 1 from pg_catalog.pg_constraint k where k.conindid = i.indexrelid and k.conrelid = rel)
    order by ic.relname
  loop
    if not r.indisvalid then
      -- an interrupted CREATE INDEX CONCURRENTLY: nothing to keep
      raise notice 'partition %: leaving out invalid index %', qualified, r.relname;
      continue;
    end if;
    def := r.def;
    if r.indisunique and not (key_num = any (r.keys)) then
      def := pg_catalog.regexp_replace(def, ' USING (\w+) \(', ' USING \1 (' || pg_catalog.quote_ident(key_column) || ', ');
    end if;
    post := post || def;
    if r.note is not null then
      post := post || pg_catalog.format('comment on index %I.%I is %L', nsp, r.relname, r.note);
    end if;
  end loop;

  -- Triggers, with their enabled state.
  for r in
    select t.tgname, pg_catalog.pg_get_triggerdef(t.oid) as def, t.tgenabled,
           pg_catalog.obj_description(t.oid, 'pg_trigger') as note
    from pg_catalog.pg_trigger t
    where t.tgrelid = rel and not t.tgisinternal
    order by t.tgname
  loop
    post := post || r.def;
    if r.tgenabled <> 'O' then
      post := post || pg_catalog.format('alter table %s %s trigger %I', qualified,
        case r.tgenabled when 'D' then 'disable' when 'R' then 'enable replica' else 'enable always' end, r.tgname);
    end if;
    if r.note is not null then
      post := post || pg_catalog.format('comment on trigger %I on %s is %L', r.tgname, qualified, r.note);
    end if;
  end loop;

  -- Row-level security and its policies.
  if rls then
    post := post || pg_catalog.format('alter table %s enable row level security', qualified);
  end if;
  if force_rls then
    post := post || pg_catalog.format('alter table %s force row level security', qualified);
  end if;
  for r in
    select pg_catalog.format('create policy %I on %s as %s for %s to %s', p.polname, qualified,
             case when p.polpermissive then 'permissive' else 'restrictive' end,
             case p.polcmd when 'r' then 'select' when 'a' then 'insert' when 'w' then 'update'
                           when 'd' then 'delete' else 'all' end,
             (select pg_catalog.string_agg(case when x = 0 then 'public' else pg_catalog.quote_ident(x::regrole::text) end, ', ')
              from pg_catalog.unnest(p.polroles) x))
           || coalesce(' using (' || pg_catalog.pg_get_expr(p.polqual, p.polrelid) || ')', '')
           || coalesce(' with check (' || pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid) || ')', '') as def
    from pg_catalog.pg_policy p where p.polrelid = rel order by p.polname
  loop
    post := post || r.def;
  end loop;

  -- Privileges of the table and of its columns, but the owner's.
  for r in
    select pg_catalog.format('grant %s on table %s to %s%s',
             pg_catalog.string_agg(a.privilege_type, ', ' order by a.privilege_type), qualified,
             case when a.grantee = 0 then 'public' else pg_catalog.quote_ident(a.grantee::regrole::text) end,
             case when a.is_grantable then ' with grant option' else '' end) as def
    from pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
    where c.oid = rel and a.grantee <> c.relowner
    group by a.grantee, a.is_grantable
  loop
    post := post || r.def;
  end loop;
  for r in
    select pg_catalog.format('grant %s (%I) on table %s to %s%s',
             pg_catalog.string_agg(x.privilege_type, ', ' order by x.privilege_type), a.attname, qualified,
             case when x.grantee = 0 then 'public' else pg_catalog.quote_ident(x.grantee::regrole::text) end,
             case when x.is_grantable then ' with grant option' else '' end) as def
    from pg_catalog.pg_attribute a, pg_catalog.aclexplode(a.attacl) x
    where a.attrelid = rel and a.attnum > 0 and not a.attisdropped and a.attacl is not null
    group by a.attname, x.grantee, x.is_grantable
  loop
    post := post || r.def;
  end loop;

  -- Comment, publications, statistics targets and options of columns, owned sequences.
  if pg_catalog.obj_description(rel, 'pg_class') is not null then
    post := post || pg_catalog.format('comment on table %s is %L', qualified, pg_catalog.obj_description(rel, 'pg_class'));
  end if;
  for r in
    select p.pubname from pg_catalog.pg_publication_rel pr
    join pg_catalog.pg_publication p on p.oid = pr.prpubid
    where pr.prrelid = rel order by p.pubname
  loop
    post := post || pg_catalog.format('alter publication %I add table %s', r.pubname, qualified);
  end loop;
  for r in
    select a.attname, a.attstattarget, a.attoptions from pg_catalog.pg_attribute a
    where a.attrelid = rel and a.attnum > 0 and not a.attisdropped
      and (coalesce(a.attstattarget, -1) >= 0 or a.attoptions is not null)
  loop
    if coalesce(r.attstattarget, -1) >= 0 then
      post := post || pg_catalog.format('alter table %s alter column %I set statistics %s', qualified, r.attname, r.attstattarget);
    end if;
    if r.attoptions is not null then
      post := post || pg_catalog.format('alter table %s alter column %I set (%s)', qualified, r.attname,
        pg_catalog.array_to_string(r.attoptions, ', '));
    end if;
  end loop;
  for r in
    select d.objid::regclass::text as seq, a.attname
    from pg_catalog.pg_depend d
    join pg_catalog.pg_class sq on sq.oid = d.objid and sq.relkind = 'S'
    join pg_catalog.pg_attribute a on a.attrelid = d.refobjid and a.attnum = d.refobjsubid
    where d.classid = 'pg_catalog.pg_class'::regclass and d.refobjid = rel and d.deptype = 'a'
  loop
    drop_first := drop_first || pg_catalog.format('alter sequence %s owned by none', r.seq);
    post := post || pg_catalog.format('alter sequence %s owned by %s.%I', r.seq, qualified, r.attname);
  end loop;
  for r in
    select a.attname, pg_catalog.pg_sequence_last_value(pg_catalog.pg_get_serial_sequence(qualified, a.attname)::regclass) as last
    from pg_catalog.pg_attribute a
    where a.attrelid = rel and a.attnum > 0 and not a.attisdropped and a.attidentity <> ''
  loop
    if r.last is not null then
      post := post || pg_catalog.format('select pg_catalog.setval(pg_catalog.pg_get_serial_sequence(%L, %L), %s)',
        qualified, r.attname, r.last);
    end if;
  end loop;
  select pg_catalog.string_agg(pg_catalog.quote_ident(a.attname), ', ' order by a.attnum),
         coalesce(pg_catalog.bool_or(a.attidentity = 'a'), false)
  into cols, always_identity
  from pg_catalog.pg_attribute a
  where a.attrelid = rel and a.attnum > 0 and not a.attisdropped and a.attgenerated = '';

  -- The partitioned table beside the old one, its partitions, the rows, then the rest.
  foreach s in array drop_first loop
    execute s;
  end loop;
  execute pg_catalog.format('alter table %s rename to %I', qualified, old_name);
  execute pg_catalog.format('create table %s (like %I.%I including defaults including generated including identity '
    'including storage including compression including comments including statistics) partition by hash (%I)',
    qualified, nsp, old_name, key_column);
  execute pg_catalog.format('alter table %s owner to %s', qualified, owner_name);
  perform agentmem.revoke_all_but_owner(qualified::regclass);
  for i in 0 .. n - 1 loop
    part := pg_catalog.format('%I.%I', nsp, tbl || '_p' || i);
    execute pg_catalog.format('create table %s partition of %s for values with (modulus %s, remainder %s)',
      part, qualified, n, i);
    execute pg_catalog.format('alter table %s owner to %s', part, owner_name);
    perform agentmem.revoke_all_but_owner(part::regclass);
    -- reachable only through the parent: no privileges, and no policy should one be granted
    execute pg_catalog.format('alter table %s enable row level security', part);
    if opts is not null then
      execute pg_catalog.format('alter table %s set (%s)', part, pg_catalog.array_to_string(opts, ', '));
    end if;
    if replident = 'f' then
      execute pg_catalog.format('alter table %s replica identity full', part);
    end if;
  end loop;
  if replident = 'f' then
    execute pg_catalog.format('alter table %s replica identity full', qualified);
  end if;
  foreach s in array pre loop
    execute s;
  end loop;
  execute pg_catalog.format('insert into %s (%s) %s select %s from %I.%I', qualified, cols,
    case when always_identity then 'overriding system value' else '' end, cols, nsp, old_name);
  get diagnostics copied = row_count;
  execute pg_catalog.format('drop table %I.%I', nsp, old_name);
  foreach s in array post loop
    execute s;
  end loop;
  perform agentmem.name_partition_indexes(qualified::regclass);
  execute pg_catalog.format('analyze %s', qualified);
  raise notice 'partitioned %: % rows into % partitions in % s', qualified, copied, n,
    pg_catalog.round(extract(epoch from pg_catalog.clock_timestamp() - started)::numeric, 1);
  return copied;
end
$$;

revoke all on function agentmem.partition_table(regclass, name, integer) from public, anon, authenticated, service_role;

-- name_partition_indexes names each index of a partition of rel after the parent's index it
-- belongs to, with the partition's number: messages_pkey_p3 is messages_pkey on messages_p3,
-- so that a plan says which index of the table it reads.
create function agentmem.name_partition_indexes(rel regclass) returns void
language plpgsql
set search_path = ''
as $$
declare
  r record;
begin
  for r in
    select ci.oid::regclass as idx, ci.relname as name,
           pg_catalog.left(pi.relname, 63 - pg_catalog.length(pg_catalog.substring(pc.relname, '_p[0-9]+$')))
             || pg_catalog.substring(pc.relname, '_p[0-9]+$') as wanted
    from pg_catalog.pg_index px
    join pg_catalog.pg_class pi on pi.oid = px.indexrelid
    join pg_catalog.pg_inherits ih on ih.inhparent = px.indexrelid
    join pg_catalog.pg_class ci on ci.oid = ih.inhrelid
    join pg_catalog.pg_index x on x.indexrelid = ci.oid
    join pg_catalog.pg_class pc on pc.oid = x.indrelid
    where px.indrelid = rel
  loop
    if r.wanted is not null and r.wanted <> r.name then
      execute pg_catalog.format('alter index %s rename to %I', r.idx, r.wanted);
    end if;
  end loop;
end
$$;

revoke all on function agentmem.name_partition_indexes(regclass) from public, anon, authenticated, service_role;

-- revoke_all_but_owner takes every privilege of a new table from everyone but its owner
-- (default privileges may have granted some).
create function agentmem.revoke_all_but_owner(rel regclass) returns void
language plpgsql
set search_path = ''
as $$
declare
  r record;
begin
  for r in
    select distinct a.grantee from pg_catalog.pg_class c,
      pg_catalog.aclexplode(coalesce(c.relacl, pg_catalog.acldefault('r', c.relowner))) a
    where c.oid = rel and a.grantee <> c.relowner
  loop
    execute pg_catalog.format('revoke all on table %s from %s', rel,
      case when r.grantee = 0 then 'public' else pg_catalog.quote_ident(r.grantee::regrole::text) end);
  end loop;
end
$$;

revoke all on function agentmem.revoke_all_but_owner(regclass) from public, anon, authenticated, service_role;

-- partition_by_user partitions every user-owned table into n partitions by hash of its user
-- (see the top of this file) and answers how many tables it converted (0 when there was
-- nothing to do). Run it as the tables' owner, in a transaction of its own.
create function agentmem.partition_by_user(n integer)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  r record;
  todo regclass[];
  keys name[];
  fks text[] := '{}';
  def text;
  src_key name;
  dst_key name;
  converted integer := 0;
begin
  if n is null or n < 1 or n > 256 then
    raise exception using errcode = '22023',
      message = pg_catalog.format('partitions: %s is not between 1 and 256', coalesce(n::text, 'null'));
  end if;
  -- one conversion at a time
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('agentmem.partition_by_user', 0));

  for r in select * from agentmem.user_owned_tables() u where u.partitions > 1 or n = 1 loop
    if r.partitions <> n then
      raise exception using errcode = '55000',
        message = pg_catalog.format('%s is partitioned into %s, not %s: changing the number of partitions is not supported',
          r.rel, r.partitions, n);
    end if;
  end loop;
  for r in
    select u.rel from agentmem.user_owned_tables() u
    join pg_catalog.pg_partitioned_table pt on pt.partrelid = u.rel
    join pg_catalog.pg_attribute a on a.attrelid = u.rel and a.attname = u.key_column
    where not (pt.partstrat = 'h' and pt.partnatts = 1 and pt.partattrs[0] = a.attnum)
  loop
    raise exception using errcode = '55000',
      message = pg_catalog.format('%s is partitioned, but not by hash of its user', r.rel);
  end loop;
  if n = 1 then
    return 0;
  end if;

  select pg_catalog.array_agg(u.rel order by u.rel::text), pg_catalog.array_agg(u.key_column order by u.rel::text)
  into todo, keys
  from agentmem.user_owned_tables() u where u.partitions = 1;

  if todo is not null then
    execute 'lock table ' || (select pg_catalog.string_agg(t::text, ', ') from pg_catalog.unnest(todo) t)
      || ' in access exclusive mode';

    -- The foreign keys from or to the tables converted go, and come back with the user column
    -- on both sides where both tables are user-owned.
    for r in
      select con.oid, con.conname, con.conrelid::regclass as src, con.confrelid::regclass as dst,
             con.conkey, con.confkey, con.confdeltype, pg_catalog.pg_get_constraintdef(con.oid) as def,
             pg_catalog.obj_description(con.oid, 'pg_constraint') as note
      from pg_catalog.pg_constraint con
      -- (a key that references a partitioned table has a copy per partition: those go with it)
      where con.contype = 'f' and con.conparentid = 0 and (con.conrelid = any (todo) or con.confrelid = any (todo))
      order by con.conrelid::regclass::text, con.conname
    loop
      select u.key_column into src_key from agentmem.user_owned_tables() u where u.rel = r.src;
      select u.key_column into dst_key from agentmem.user_owned_tables() u where u.rel = r.dst;
      def := r.def;
      if dst_key is not null and not exists (
           select 1 from pg_catalog.pg_attribute a
           where a.attrelid = r.dst and a.attname = dst_key and a.attnum = any (r.confkey)) then
        if src_key is null then
          raise exception using errcode = '55000',
            message = pg_catalog.format('%s references the user-owned %s without a user column', r.src, r.dst);
        end if;
        def := pg_catalog.regexp_replace(def, '^FOREIGN KEY \(', 'FOREIGN KEY (' || pg_catalog.quote_ident(src_key) || ', ');
        def := pg_catalog.regexp_replace(def, ' REFERENCES ([^(]+)\(', ' REFERENCES \1(' || pg_catalog.quote_ident(dst_key) || ', ');
        -- SET NULL or SET DEFAULT must leave the user column alone
        if r.confdeltype in ('n', 'd') and def !~ 'ON DELETE SET (NULL|DEFAULT) \(' then
          def := pg_catalog.regexp_replace(def, 'ON DELETE SET (NULL|DEFAULT)', 'ON DELETE SET \1 (' ||
            (select pg_catalog.string_agg(pg_catalog.quote_ident(a.attname), ', ' order by k.i)
             from pg_catalog.unnest(r.conkey) with ordinality k(num, i)
             join pg_catalog.pg_attribute a on a.attrelid = r.src and a.attnum = k.num) || ')');
        end if;
      end if;
      fks := fks || pg_catalog.format('alter table %s add constraint %I %s', r.src, r.conname, def);
      if r.note is not null then
        fks := fks || pg_catalog.format('comment on constraint %I on %s is %L', r.conname, r.src, r.note);
      end if;
      execute pg_catalog.format('alter table %s drop constraint %I', r.src, r.conname);
    end loop;

    for i in 1 .. pg_catalog.array_length(todo, 1) loop
      perform agentmem.partition_table(todo[i], keys[i], n);
      converted := converted + 1;
    end loop;
    foreach def in array fks loop
      execute def;
    end loop;
  end if;

  -- Rows found by their id alone: sessions (a client's id, unique across users: see
  -- agentmem.keep_session_id_unique) and jobs (the jobs function's get and retry).
  if (select u.partitions from agentmem.user_owned_tables() u where u.rel = 'agentmem.jobs'::regclass) > 1
     and pg_catalog.to_regclass('agentmem.jobs_id_idx') is null then
    create index jobs_id_idx on agentmem.jobs (id);
    perform agentmem.name_partition_indexes('agentmem.jobs'::regclass);
  end if;
  if (select u.partitions from agentmem.user_owned_tables() u where u.rel = 'agentmem.sessions'::regclass) > 1 then
    if pg_catalog.to_regclass('agentmem.sessions_id_idx') is null then
      create index sessions_id_idx on agentmem.sessions (id);
      perform agentmem.name_partition_indexes('agentmem.sessions'::regclass);
    end if;
    if not exists (select 1 from pg_catalog.pg_trigger t
                   where t.tgrelid = 'agentmem.sessions'::regclass and t.tgname = 'sessions_keep_id_unique') then
      create trigger sessions_keep_id_unique after insert on agentmem.sessions
        for each row execute function agentmem.keep_session_id_unique();
    end if;
  end if;
  return converted;
end
$$;

revoke all on function agentmem.partition_by_user(integer) from public, anon, authenticated, service_role;

comment on function agentmem.partition_by_user(integer) is
  'Partitions every user-owned table by hash of its user into n partitions, in place (n = 1: nothing changes). See migration partition_tables_by_user.';
