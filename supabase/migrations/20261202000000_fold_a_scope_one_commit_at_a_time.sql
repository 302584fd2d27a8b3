-- A commit looks at its scope's pending words through their index, and folds them only when no
-- other commit is folding them.
--
-- A commit of messages counts its scope's pending words (agentmem.message_words_pending) once
-- the scope holds agentmem.fold_threshold() of them; it looks when one of its messages is the
-- 1st, 33rd, 65th... of its session. Two things made that look and that fold cost more than the
-- words they count, with many commits into one user at once (W1: 8 clients, one user):
--
-- - The look counted the scope's pending rows, up to the threshold, in a plan chosen from the
--   pending table's statistics. The table churns (every message is a row, every fold deletes
--   a batch) and keeps the size its largest backlog gave it (a history imported at once): for
--   270 live rows in 5,600 pages the planner took a sequential scan of all 5,600 (45 ms), at one
--   commit in 16. agentmem.message_words_pending_reach counts through the primary key's index,
--   which starts with the scope, and stops at the threshold. The fold that follows read its
--   batch in a plan of the same kind (10 ms for 284 rows): it reads it through the index too
--   (agentmem.message_words_pending_batch).
-- - Commits that looked while another one's fold was not yet committed saw the scope still past
--   the threshold and folded too: 588 folds where 180 were needed, in 20 s, each waiting for
--   the word counts the others held locked, then adding its few rows' words to them. A commit
--   now folds only when it can lock the scope's row of totals in agentmem.message_words (lexeme
--   '') without waiting: a fold under way holds it (every fold writes it), and so does a
--   deletion or an edit of the scope's counted messages; a commit that cannot lock it leaves its
--   rows to that fold, or to the next look, or to the sweep.
-- - An edit of a message's words now takes the counts in lexeme order too (at the end of this
--   file): it deadlocked with a fold holding the row of totals.
--
-- W1 with 8 clients (store.CommitTurn, 12 s each, alternated twice on one database): p99 20.3 and
-- 20.4 ms against 49.3 and 46.7, 1,563 and 1,595 turns/s against 1,364 and 1,506.
--
-- On a large table: nothing is rewritten; only the triggers' functions change.

-- Whether the scope holds at least n pending messages: through the primary key's index, which
-- starts with the scope, whatever the table's statistics say (a plan chosen from them scanned
-- the whole table, which keeps the size of its largest backlog).
create function agentmem.message_words_pending_reach(p_user_id text, p_tenant_id text, p_agent text, n integer)
returns boolean
language sql
stable
set search_path = ''
set enable_seqscan = off
set enable_bitmapscan = off
as $$
  -- a trigger passes the user's id in its column's collation ("C"), which every text parameter
  -- then takes: tenant and agent are compared in the index's collation, so that the index
  -- bounds the scan by the whole scope, not by the user alone
  select pg_catalog.count(*) >= n from (
    select 1 from agentmem.message_words_pending p
    where p.user_id = p_user_id and p.tenant_id = p_tenant_id collate "default" and p.agent = p_agent collate "default"
    limit n) x
$$;
-- (called by the word counts' trigger, as its owner: no one else runs it)
revoke all on function agentmem.message_words_pending_reach(text, text, text, integer) from public, anon, authenticated;

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

-- The batch of a scope's fold (agentmem.fold_message_words): the scope's pending rows, at most
-- max_rows, in the primary key's order, locked (those another fold holds are passed over), and
-- where they are. Through the primary key's index, whatever the statistics say; tenant and
-- agent compared in the index's collation, as in the look.
create function agentmem.message_words_pending_batch(p_user_id text, p_tenant_id text, p_agent text, max_rows integer)
returns table (session_id uuid, seq bigint, place tid)
language sql
volatile
set search_path = ''
set enable_seqscan = off
set enable_bitmapscan = off
as $$
  select q.session_id, q.seq, q.ctid from agentmem.message_words_pending q
  where q.user_id = p_user_id and q.tenant_id = p_tenant_id collate "default" and q.agent = p_agent collate "default"
  order by q.session_id, q.seq
  limit max_rows
  for update skip locked
$$;
revoke all on function agentmem.message_words_pending_batch(text, text, text, integer) from public, anon, authenticated;

select pg_temp.patch_function('agentmem.fold_message_words(text, text, text, integer)',
  $old$    from (
      -- a trigger passes the user's id in its column's collation ("C"), which every text
      -- parameter then takes: tenant and agent are compared in the index's collation
      select q.session_id, q.seq, q.ctid from agentmem.message_words_pending q
      where q.user_id = p_user_id and q.tenant_id = p_tenant_id collate "default" and q.agent = p_agent collate "default"
      order by q.session_id, q.seq
      limit max_rows
      for update skip locked
    ) l;$old$,
  $new$    from agentmem.message_words_pending_batch(p_user_id, p_tenant_id, p_agent, max_rows) l(session_id, seq, ctid);$new$);

-- Whether a commit may fold the scope's pending words now: it locks the scope's row of totals
-- (lexeme '', which every fold writes, and which a deletion of the scope's counted messages writes),
-- without waiting. Locked by another transaction: a fold (or a deletion, or an edit) is under
-- way, and the commit leaves the fold to it, or to the next look, or to the sweep. The row comes
-- first in the order in which every writer locks a scope's counts (by lexeme), so that a writer
-- that holds it has the scope's counts to itself (agentmem.recount_message_words, below, now
-- takes its rows in that order too; the sweep's fold of every scope locks its batch's pending
-- rows before the counts, as before). A scope not yet counted has no such row: its first folds
-- may run at once, as before. (A row lock, not an advisory one: a transaction that folds many
-- scopes, an import's, holds no entry of the server's lock table for each.)
create function agentmem.take_fold_turn(p_user_id text, p_tenant_id text, p_agent text)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  -- tenant and agent in the index's collation, as in the look
  perform from agentmem.message_words w
  where w.user_id = p_user_id and w.tenant_id = p_tenant_id collate "default"
    and w.agent = p_agent collate "default" and w.lexeme = ''
  for update skip locked;
  if found then
    return true;
  end if;
  return not exists (
    select from agentmem.message_words w
    where w.user_id = p_user_id and w.tenant_id = p_tenant_id collate "default"
      and w.agent = p_agent collate "default" and w.lexeme = '');
end
$$;
revoke all on function agentmem.take_fold_turn(text, text, text) from public, anon, authenticated;

select pg_temp.patch_function('agentmem.count_message_words()',
  $old$      if (select pg_catalog.count(*) from (
            select 1 from agentmem.message_words_pending p
            where p.user_id = sc.user_id and p.tenant_id = sc.tenant_id and p.agent = sc.agent
            limit agentmem.fold_threshold()) x) >= agentmem.fold_threshold() then$old$,
  $new$      -- past the threshold, and no other commit folding the scope now
      if agentmem.message_words_pending_reach(sc.user_id, sc.tenant_id, sc.agent, agentmem.fold_threshold())
         and agentmem.take_fold_turn(sc.user_id, sc.tenant_id, sc.agent) then$new$);

-- An edit of a message's words (agentmem.recount_message_words) took the counts of its old words
-- in the order of its update's plan (a sequential scan's, on a small table), then the row of
-- totals wherever that put it: an edit could hold a word's count and wait for the totals while a
-- fold held the totals and waited for the word. It now locks its old words' counts first, in
-- lexeme order (the totals first), as a deletion does.
select pg_temp.patch_function('agentmem.recount_message_words()',
  $old$  with subtracted as (
    update agentmem.message_words w$old$,
  $new$  -- in lexeme order, the totals ('') first, as every writer of the counts takes them
  perform from agentmem.message_words w
  where w.user_id = old.user_id and w.tenant_id = old.tenant_id and w.agent = old.agent
    and w.lexeme = any(pg_catalog.array_append(pg_catalog.tsvector_to_array(old.fts), ''))
  order by w.lexeme
  for update of w;
  with subtracted as (
    update agentmem.message_words w$new$);
