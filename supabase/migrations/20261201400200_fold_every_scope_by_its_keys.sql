-- Folding every scope's pending word counts (the sweep's fold) by the batch's keys as well.
--
-- Migration fold_a_batch_by_its_keys read a scope's batch into arrays first, so that a plan for
-- a batch estimated at one row could not read the pending rows once per row of the batch. The
-- fold of every scope, which the sweep calls, had the same shape: with statistics taken while
-- the pending table was empty, folding one user's 255 pending messages (beside 3,000 deleted
-- pending rows of other users) read 68,300 pending rows and index entries. It now reads its
-- batch's keys into arrays first too, and deletes and reads the messages by them: 6,510.
-- (Partitioned by user into 4, the plan was not quadratic: about 3,500 before and after.)

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

select pg_temp.patch_function(
  'agentmem.fold_message_words(text,text,text,integer)',
  '  places tid[];
begin',
  '  places tid[];
  users text[];
  tenants text[];
  agents text[];
begin');

select pg_temp.patch_function(
  'agentmem.fold_message_words(text,text,text,integer)',
  '  end if;
  with batch as (
    delete from agentmem.message_words_pending p
    using (
      select q.user_id, q.tenant_id, q.agent, q.session_id, q.seq from agentmem.message_words_pending q
      order by 1, 2, 3, 4, 5
      limit max_rows
      for update skip locked
    ) l
    where p.user_id = l.user_id and p.tenant_id = l.tenant_id and p.agent = l.agent
      and p.session_id = l.session_id and p.seq = l.seq
    returning p.user_id, p.tenant_id, p.agent, p.session_id, p.seq
  ),
  rows as (
    select b.user_id, b.tenant_id, b.agent, m.fts
    from batch b join agentmem.messages m on m.user_id = b.user_id and m.session_id = b.session_id and m.seq = b.seq
  ),
',
  '  end if;
  -- every scope''s: the batch''s keys first, as arrays, for the same reason
  select pg_catalog.array_agg(l.user_id), pg_catalog.array_agg(l.tenant_id), pg_catalog.array_agg(l.agent),
         pg_catalog.array_agg(l.session_id), pg_catalog.array_agg(l.seq)
  into users, tenants, agents, sessions, seqs
  from (
    select q.user_id, q.tenant_id, q.agent, q.session_id, q.seq from agentmem.message_words_pending q
    order by 1, 2, 3, 4, 5
    limit max_rows
    for update skip locked
  ) l;
  if users is null then
    return 0;
  end if;
  with keys as (
    select k.user_id, k.tenant_id, k.agent, k.session_id, k.seq
    from rows from (pg_catalog.unnest(users), pg_catalog.unnest(tenants), pg_catalog.unnest(agents),
                    pg_catalog.unnest(sessions), pg_catalog.unnest(seqs)) k(user_id, tenant_id, agent, session_id, seq)
  ),
  batch as (
    delete from agentmem.message_words_pending p
    using keys l
    where p.user_id = l.user_id and p.tenant_id = l.tenant_id and p.agent = l.agent
      and p.session_id = l.session_id and p.seq = l.seq
    returning p.user_id, p.tenant_id, p.agent, p.session_id, p.seq
  ),
  -- the rows of the keys locked above, which the batch deletes
  rows as (
    select l.user_id, l.tenant_id, l.agent, m.fts
    from keys l join agentmem.messages m on m.user_id = l.user_id and m.session_id = l.session_id and m.seq = l.seq
  ),
');
