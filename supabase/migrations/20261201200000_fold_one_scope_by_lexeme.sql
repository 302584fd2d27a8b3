-- Folding one scope's pending messages into its word counts for less CPU.
--
-- A commit that finds its scope holding fold_threshold() pending messages folds them in the
-- same statement (agentmem.fold_message_words with the scope given). For one busy user that is
-- one commit in about 128, and the fold was most of the CPU the word counts cost a commit: for
-- 256 messages of about 35 words, 3,300 distinct words, 40 to 60 ms. Most of it went to
-- grouping and sorting rows keyed by user, tenant, agent and lexeme (the scope's three keys
-- compared again on every row though they are the same on all of them) and to unpacking each
-- message's positions and weights that the count does not read.
--
-- With the scope given, the fold now groups and orders by lexeme alone and reads the lexemes
-- with tsvector_to_array. It writes the same counts, locks them in the same order (lexeme
-- order, as every other writer of a scope's counts does), and answers the same number. For
-- 256 pending messages of 30 and 40 words (4,000 distinct): 46 ms against 61 ms (medians of 5,
-- alternated, the same rows, on a quiet machine). A statement that inserts 40,000 messages of
-- one scope at once (a bulk load, whose trigger folds them): 6.8 s against 7.7 s. A fold of any
-- scope (p_user_id null, the sweep's) is unchanged.
--
-- The pending rows are found and deleted through their whole key. A trigger passes the user's
-- id in its column's collation ("C"), and PL/pgSQL gives every text parameter the call's
-- collation: compared with a parameter, tenant and agent would not be in the index's collation
-- and a probe would read all the user's pending rows (40,000 messages at once took 46 s).

create or replace function agentmem.fold_message_words(p_user_id text, p_tenant_id text, p_agent text, max_rows integer)
returns integer
language plpgsql
security definer
set search_path = ''
-- planned for the scope given: a generic plan would read every scope's pending rows
set plan_cache_mode = 'force_custom_plan'
as $$
declare
  folded integer;
begin
  if p_user_id is not null then
    with batch as (
      delete from agentmem.message_words_pending p
      using (
        -- a trigger passes the user's id in its column's collation ("C"), which every text
        -- parameter then takes: tenant and agent are compared in the index's collation
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
    ),
    counted as (
      insert into agentmem.message_words as w (user_id, tenant_id, agent, lexeme, docs, length)
      select p_user_id, p_tenant_id, p_agent, c.lexeme, c.docs, c.length from (
        select u.lexeme, pg_catalog.count(*) as docs, 0::bigint as length
        from rows r, pg_catalog.unnest(pg_catalog.tsvector_to_array(r.fts)) u(lexeme)
        group by 1
        union all
        select '', pg_catalog.count(*), pg_catalog.sum(pg_catalog.length(r.fts))
        from rows r
        having pg_catalog.count(*) > 0) c
      order by c.lexeme
      on conflict (user_id, tenant_id, agent, lexeme) do update
        set docs = w.docs + excluded.docs, length = w.length + excluded.length
      returning 1
    )
    select pg_catalog.count(*) into folded from batch;
    return folded;
  end if;
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
  counted as (
    insert into agentmem.message_words as w (user_id, tenant_id, agent, lexeme, docs, length)
    select c.* from (
      select r.user_id, r.tenant_id, r.agent, u.lexeme, pg_catalog.count(*) as docs, 0::bigint as length
      from rows r, pg_catalog.unnest(r.fts) u
      group by 1, 2, 3, 4
      union all
      select r.user_id, r.tenant_id, r.agent, '', pg_catalog.count(*), pg_catalog.sum(pg_catalog.length(r.fts))
      from rows r
      group by 1, 2, 3) c
    order by 1, 2, 3, 4
    on conflict (user_id, tenant_id, agent, lexeme) do update
      set docs = w.docs + excluded.docs, length = w.length + excluded.length
    returning 1
  )
  select pg_catalog.count(*) into folded from batch;
  return folded;
end
$$;
