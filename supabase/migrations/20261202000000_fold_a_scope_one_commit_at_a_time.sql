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
--   batch in a plan of the same kind (10 ms for 284 rows): it reads through the index too.
-- - Commits that looked while another one's fold was not yet committed saw the scope still past
--   the threshold and folded too: 588 folds where 180 were needed, in 20 s, each waiting for
--   the word counts the others held locked, then adding its few rows' words to them. A commit
--   now folds only when it takes the scope's fold lock (an advisory lock, without waiting); a
--   commit that does not get it leaves its rows to the fold under way, or to the next look.
--
-- W1 with 8 clients (store.CommitTurn, 12 s each, alternated twice on one database): p99 16 to
-- 27 ms against 55 to 57, 1,468 to 1,530 turns/s against 1,333 to 1,377.
--
-- On a large table: nothing is rewritten; only the trigger's function changes.

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
  select pg_catalog.count(*) >= n from (
    select 1 from agentmem.message_words_pending p
    where p.user_id = p_user_id and p.tenant_id = p_tenant_id and p.agent = p_agent
    limit n) x
$$;
revoke all on function agentmem.message_words_pending_reach(text, text, text, integer) from public, anon, authenticated;
grant execute on function agentmem.message_words_pending_reach(text, text, text, integer) to service_role;

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

-- A fold reads its batch, the scope's pending rows, in the primary key's order (every scope's,
-- at the sweep: the whole key's): through that index, whatever the statistics say. Its other
-- statements read by key already (the batch's rows by their places, the messages by theirs).
alter function agentmem.fold_message_words(text, text, text, integer)
  set enable_seqscan = off set enable_bitmapscan = off;

-- The scope's fold lock: a transaction-level advisory lock on the scope (7219), taken without
-- waiting, after the look, so that only a commit that would fold asks for it. (Two scopes whose
-- keys hash alike share it: one of them folds at its next look.)
select pg_temp.patch_function('agentmem.count_message_words()',
  $old$      if (select pg_catalog.count(*) from (
            select 1 from agentmem.message_words_pending p
            where p.user_id = sc.user_id and p.tenant_id = sc.tenant_id and p.agent = sc.agent
            limit agentmem.fold_threshold()) x) >= agentmem.fold_threshold() then$old$,
  $new$      -- past the threshold, and no other commit folding the scope now
      if agentmem.message_words_pending_reach(sc.user_id, sc.tenant_id, sc.agent, agentmem.fold_threshold())
         and pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtextextended(
               pg_catalog.concat_ws('/', sc.user_id, sc.tenant_id, sc.agent), 7219)) then$new$);
