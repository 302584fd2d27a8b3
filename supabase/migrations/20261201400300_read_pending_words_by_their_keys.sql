-- Reading a user's not yet counted messages by their keys in BM25's statistics.
--
-- agentmem.message_word_stats adds to a scope's word counts the words of its messages still
-- pending (at most the fold threshold's 256 per scope). It joined the pending rows to messages
-- in a generic plan, which estimates a user's messages at the table's rows over its users: with
-- many users, a handful. For a user of 6,120 messages, 120 of them pending, in a table whose
-- statistics count 10,000 users, the plan hashed all 6,120 (read by the owner index) to join
-- the 120: 7.1 ms of the statistics' 9 to 11 ms, against 0.5 ms through the primary key, as it
-- ran with the actual number of users (47). Each pending message is now read by its key in a
-- subquery kept whole (`offset 0`), which a join cannot turn into a scan of the user's rows.

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
  'agentmem.message_word_stats(text,text,text,text[])',
  '  fresh as (
    select m.fts from agentmem.message_words_pending p
      join agentmem.messages m on m.session_id = p.session_id and m.seq = p.seq
    where p.user_id = p_user_id and p.tenant_id = p_tenant_id and (p_agent = '''' or p.agent = p_agent)
      and m.user_id = p_user_id and m.tenant_id = p_tenant_id
      and m.expires_at > pg_catalog.now()
  ),
',
  '  -- each pending message read by its key (a subquery the planner keeps whole): as a join,
  -- planned for a user of average size, it could read all of a large user''s messages
  fresh as (
    select m.fts from agentmem.message_words_pending p
      cross join lateral (
        select x.fts from agentmem.messages x
        where x.session_id = p.session_id and x.seq = p.seq
          and x.user_id = p_user_id and x.tenant_id = p_tenant_id
          and x.expires_at > pg_catalog.now()
        offset 0) m
    where p.user_id = p_user_id and p.tenant_id = p_tenant_id and (p_agent = '''' or p.agent = p_agent)
  ),
');
