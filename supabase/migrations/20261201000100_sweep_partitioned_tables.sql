-- The sweep, right on tables partitioned by user (agentmem.partition_by_user).
--
-- A partitioned table's rows are told apart by (tableoid, ctid), not by ctid alone: each
-- partition numbers its own row versions, so a batch deleted by ctid could have taken another
-- partition's rows at the same place. The sweep's batches of messages, archived messages and
-- idempotency keys now join on both, and those of memories and sessions on their whole key
-- (user_id with the id), which each partition's primary key serves. On the migrations' layout
-- (one table each) the statements find the same rows as before.
--
-- The function is patched where it joins, not written out again, so that a change another
-- migration made to the rest of it stays: a patch whose text is not found once fails the
-- migration.
--
-- On a large table: nothing is rewritten; only the function changes.

create or replace function pg_temp.patch_function(fn regprocedure, old text, new text) returns void
language plpgsql
as $$
declare
  def text := pg_catalog.pg_get_functiondef(fn);
  found integer := (pg_catalog.length(def) - pg_catalog.length(pg_catalog.replace(def, old, ''))) / pg_catalog.length(old);
begin
  if found <> 1 then
    raise exception 'patch of %: the text to change is there % times, not once: %', fn, found, old;
  end if;
  execute pg_catalog.replace(def, old, new);
end
$$;

select pg_temp.patch_function('agentmem.sweep_expired(integer,integer)', x.old, x.new)
from (values
  ('select ctid from agentmem.messages where expires_at <= now() limit batch_size for update skip locked)
    delete from agentmem.messages m using doomed where m.ctid = doomed.ctid;',
   'select tableoid, ctid from agentmem.messages where expires_at <= now() limit batch_size for update skip locked)
    delete from agentmem.messages m using doomed where m.tableoid = doomed.tableoid and m.ctid = doomed.ctid;'),
  ('select ctid from agentmem.messages_archive where expires_at <= now() limit batch_size for update skip locked)
    delete from agentmem.messages_archive m using doomed where m.ctid = doomed.ctid;',
   'select tableoid, ctid from agentmem.messages_archive where expires_at <= now() limit batch_size for update skip locked)
    delete from agentmem.messages_archive m using doomed where m.tableoid = doomed.tableoid and m.ctid = doomed.ctid;'),
  ('select id from agentmem.memories where expires_at <= now() limit batch_size for update skip locked)
    delete from agentmem.memories m using doomed where m.id = doomed.id;',
   'select user_id, id from agentmem.memories where expires_at <= now() limit batch_size for update skip locked)
    delete from agentmem.memories m using doomed where m.user_id = doomed.user_id and m.id = doomed.id;'),
  ('select s.id from agentmem.sessions s
      where s.expires_at <= now()
        and not exists (select 1 from agentmem.messages m where m.session_id = s.id)
        and not exists (select 1 from agentmem.messages_archive a where a.session_id = s.id)
      limit batch_size for update of s skip locked)
    delete from agentmem.sessions s using doomed where s.id = doomed.id;',
   'select s.user_id, s.id from agentmem.sessions s
      where s.expires_at <= now()
        and not exists (select 1 from agentmem.messages m where m.user_id = s.user_id and m.session_id = s.id)
        and not exists (select 1 from agentmem.messages_archive a where a.user_id = s.user_id and a.session_id = s.id)
      limit batch_size for update of s skip locked)
    delete from agentmem.sessions s using doomed where s.user_id = doomed.user_id and s.id = doomed.id;'),
  ('select ctid from agentmem.idempotency_keys where expires_at <= now() limit batch_size for update skip locked)
    delete from agentmem.idempotency_keys k using doomed where k.ctid = doomed.ctid;',
   'select tableoid, ctid from agentmem.idempotency_keys where expires_at <= now() limit batch_size for update skip locked)
    delete from agentmem.idempotency_keys k using doomed where k.tableoid = doomed.tableoid and k.ctid = doomed.ctid;')
) as x(old, new);
