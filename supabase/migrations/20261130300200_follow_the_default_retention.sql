-- A row's expiry follows DEFAULT_RETENTION when it came from it. Until now every row was stamped
-- at write with expires_at = now + (ttl_seconds, or the deployment's default), so a lower
-- default left the rows written under the old one to live on. Now each row of messages,
-- messages_archive, memories and sessions records, in default_retention, the default its expiry
-- was stamped with (null: an explicit ttl_seconds, or a row written before this migration,
-- whose expiry stays as stamped). The sweep re-stamps the rows stamped under another default
-- than the deployment's: expires_at - default_retention + the new default (the time of the
-- write plus the new default), before it deletes what has expired. expires_at stays the one
-- expiry every read compares, so no read changes and every index on it stays in use.
--
-- Who stamps it: a write whose ttl is the deployment's default sets the transaction's
-- agentmem.default_retention (the store does, see shared/store/retention.go), and the trigger
-- agentmem.stamp_default_retention records it on every row whose expiry that write sets to now
-- + it; an expiry set otherwise (an explicit ttl_seconds; a merge or an upsert that keeps the
-- later expiry) clears it, and an expiry left as it was keeps it. So sessions and memories, whose
-- expiry only grows (greatest of the old and the new), carry the default of the write that set
-- it.
--
-- On a large table: the columns are nullable without a default (no rewrite, a brief lock); the
-- triggers cost a comparison per row written. The indexes hold only the rows stamped with a
-- default, so that a sweep finds the rows of another default without reading the others; on a
-- large table, build them first without blocking writes, then apply this migration, which finds
-- them in place:
--   create index concurrently if not exists messages_default_retention_idx
--     on agentmem.messages (default_retention) where default_retention is not null;
--   (and the same for messages_archive, memories and sessions)

alter table agentmem.messages add column if not exists default_retention interval;
alter table agentmem.messages_archive add column if not exists default_retention interval;
alter table agentmem.memories add column if not exists default_retention interval;
alter table agentmem.sessions add column if not exists default_retention interval;

create index if not exists messages_default_retention_idx
  on agentmem.messages (default_retention) where default_retention is not null;
create index if not exists messages_archive_default_retention_idx
  on agentmem.messages_archive (default_retention) where default_retention is not null;
create index if not exists memories_default_retention_idx
  on agentmem.memories (default_retention) where default_retention is not null;
create index if not exists sessions_default_retention_idx
  on agentmem.sessions (default_retention) where default_retention is not null;

-- stamp_default_retention records where a row's expiry came from (see above). The write's
-- expiry is now() + ttl computed from seconds, the setting a count of microseconds: they are
-- compared to the millisecond.
create or replace function agentmem.stamp_default_retention()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  d interval := nullif(pg_catalog.current_setting('agentmem.default_retention', true), '')::interval;
begin
  if tg_op = 'UPDATE' and new.expires_at is not distinct from old.expires_at then
    return new;
  end if;
  if d is not null
     and new.expires_at between pg_catalog.now() + d - interval '1 millisecond'
                            and pg_catalog.now() + d + interval '1 millisecond' then
    new.default_retention := d;
  elsif tg_op = 'INSERT' or new.default_retention is not distinct from old.default_retention then
    -- An explicit expiry; on insert, a row copied as it was (the archive) keeps its own.
    if tg_op = 'UPDATE' or d is not null then
      new.default_retention := null;
    end if;
  end if;
  return new;
end
$$;

revoke all on function agentmem.stamp_default_retention() from public, anon, authenticated;

create trigger messages_stamp_default_retention
  before insert or update of expires_at on agentmem.messages
  for each row execute function agentmem.stamp_default_retention();
create trigger messages_archive_stamp_default_retention
  before insert or update of expires_at on agentmem.messages_archive
  for each row execute function agentmem.stamp_default_retention();
create trigger memories_stamp_default_retention
  before insert or update of expires_at on agentmem.memories
  for each row execute function agentmem.stamp_default_retention();
create trigger sessions_stamp_default_retention
  before insert or update of expires_at on agentmem.sessions
  for each row execute function agentmem.stamp_default_retention();
