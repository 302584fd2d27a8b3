-- A model's HNSW indexes built without blocking writes on tables partitioned by user.
--
-- CREATE INDEX CONCURRENTLY is refused on a partitioned table (agentmem.partition_by_user).
-- agentmem.embedding_index_statements, which `agentmem index` and `agentmem backfill` run one by
-- one, now writes for such a table: the index on the parent only (ON ONLY: no rows, invalid
-- until every partition has its own), the index of each partition CONCURRENTLY (named after
-- the parent's, with the partition's number, as partition_by_user names them), then each
-- attached to the parent's, which becomes valid with the last. A run stopped half-way is taken
-- up by the next: every statement does nothing when its index is there. A table of one piece
-- gets the one statement it got before; so does every table when build_concurrently is false
-- (a plain CREATE INDEX on a partitioned table makes every partition's).
--
-- On a large table: nothing is built here; only the function changes.

create or replace function agentmem.embedding_index_statements(model text, dims integer, build_concurrently boolean)
returns setof text
language plpgsql stable
set search_path = ''
as $$
declare
  t text;
  idx text;
  rest text;
  part record;
begin
  if dims is null or dims not between 1 and 2000 then
    return;
  end if;
  foreach t in array array['memories', 'knowledge_chunks', 'messages'] loop
    idx := t || '_embedding_' || pg_catalog.left(pg_catalog.md5(model || '/' || dims), 12) || '_idx';
    rest := pg_catalog.format('using hnsw ((embedding::extensions.vector(%s)) '
      'extensions.vector_cosine_ops) with (m = 16, ef_construction = 200) '
      'where embedding_model = %L and embedding_dims = %s', dims, model, dims);
    if not build_concurrently or (select c.relkind from pg_catalog.pg_class c
                                  where c.oid = pg_catalog.to_regclass('agentmem.' || t)) is distinct from 'p' then
      return next pg_catalog.format('create index %s if not exists %I on agentmem.%I %s',
        case when build_concurrently then 'concurrently' else '' end, idx, t, rest);
      continue;
    end if;
    return next pg_catalog.format('create index if not exists %I on only agentmem.%I %s', idx, t, rest);
    for part in
      select c.relname, pg_catalog.left(idx, 63 - pg_catalog.length(pg_catalog.substring(c.relname, '_p[0-9]+$')))
               || pg_catalog.substring(c.relname, '_p[0-9]+$') as name
      from pg_catalog.pg_inherits i join pg_catalog.pg_class c on c.oid = i.inhrelid
      where i.inhparent = ('agentmem.' || t)::regclass
      order by pg_catalog.length(c.relname), c.relname
    loop
      return next pg_catalog.format('create index concurrently if not exists %I on agentmem.%I %s',
        coalesce(part.name, part.relname || '_embedding_idx'), part.relname, rest);
    end loop;
    for part in
      select c.relname, pg_catalog.left(idx, 63 - pg_catalog.length(pg_catalog.substring(c.relname, '_p[0-9]+$')))
               || pg_catalog.substring(c.relname, '_p[0-9]+$') as name
      from pg_catalog.pg_inherits i join pg_catalog.pg_class c on c.oid = i.inhrelid
      where i.inhparent = ('agentmem.' || t)::regclass
      order by pg_catalog.length(c.relname), c.relname
    loop
      return next pg_catalog.format('alter index agentmem.%I attach partition agentmem.%I', idx,
        coalesce(part.name, part.relname || '_embedding_idx'));
    end loop;
  end loop;
end
$$;
