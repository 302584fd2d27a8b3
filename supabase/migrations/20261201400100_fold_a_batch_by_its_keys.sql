-- Folding a user's pending word counts without reading their messages once per message.
--
-- agentmem.fold_message_words (which a commit calls when a scope holds 256 messages whose words
-- are not yet counted) deleted the batch of pending rows through a join with the pending table
-- and read each batch row's message through a join with messages. The pending table's
-- statistics churn (its rows are added and deleted all day), and for a user they do not know
-- (one whose messages arrived since the last analyze) the batch was estimated at one row: the
-- plan then read the pending rows, and the user's messages by the owner index, whole, once per
-- row of the batch. Folding the 255 pending messages of such a user: 47 to 52 ms, with 32,385
-- rows removed by each join's filter and 19,996 index pages read (EXPLAIN ANALYZE).
--
-- The batch's keys and places (ctid) are now read first, into arrays, which a custom plan sees:
-- the delete finds the locked rows where they are, in the user's partition when partitioned by
-- user, and the read of the messages joins 255 known keys. The same fold: 6.4 to 6.6 ms. The
-- fold of every scope (no user given, which the sweep calls) is left as it was.

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
  '  folded integer;
begin
  if p_user_id is not null then
    with batch as (
      delete from agentmem.message_words_pending p
      using (
        -- a trigger passes the user''s id in its column''s collation ("C"), which every text
        -- parameter then takes: tenant and agent are compared in the index''s collation
        select q.user_id, q.tenant_id, q.agent, q.session_id, q.seq from agentmem.message_words_pending q
        where q.user_id = p_user_id and q.tenant_id = p_tenant_id collate "default" and q.agent = p_agent collate "default"
        order by q.session_id, q.seq
        limit max_rows
        for update skip locked
      ) l
      -- joined on the whole key: each pending row one index probe
      where p.user_id = p_user_id
        and p.user_id = l.user_id and p.tenant_id = l.tenant_id and p.agent = l.agent
        and p.session_id = l.session_id and p.seq = l.seq
      returning p.session_id, p.seq
    ),
    rows as (
      select m.fts from batch b
        join agentmem.messages m on m.user_id = p_user_id and m.session_id = b.session_id and m.seq = b.seq
',
  '  folded integer;
  sessions uuid[];
  seqs bigint[];
  places tid[];
begin
  if p_user_id is not null then
    -- the batch''s keys first, as arrays: the statements below know how many rows they hold
    -- (a custom plan sees the arrays), where the pending table''s statistics, which churn, may
    -- say one, and a plan for one reads all the user''s messages again for every row
    select pg_catalog.array_agg(l.session_id), pg_catalog.array_agg(l.seq), pg_catalog.array_agg(l.ctid)
    into sessions, seqs, places
    from (
      -- a trigger passes the user''s id in its column''s collation ("C"), which every text
      -- parameter then takes: tenant and agent are compared in the index''s collation
      select q.session_id, q.seq, q.ctid from agentmem.message_words_pending q
      where q.user_id = p_user_id and q.tenant_id = p_tenant_id collate "default" and q.agent = p_agent collate "default"
      order by q.session_id, q.seq
      limit max_rows
      for update skip locked
    ) l;
    if sessions is null then
      return 0;
    end if;
    with batch as (
      -- the rows locked above, where they are (the user''s partition, when partitioned by user)
      delete from agentmem.message_words_pending p
      where p.user_id = p_user_id and p.tenant_id = p_tenant_id collate "default" and p.agent = p_agent collate "default"
        and p.ctid = any(places)
      returning p.session_id, p.seq
    ),
    -- the rows of the keys locked above, which the batch deletes
    rows as (
      select m.fts from rows from (pg_catalog.unnest(sessions), pg_catalog.unnest(seqs)) b(session_id, seq)
        join agentmem.messages m on m.user_id = p_user_id and m.session_id = b.session_id and m.seq = b.seq
');
