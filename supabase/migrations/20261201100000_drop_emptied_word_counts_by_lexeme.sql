-- Deleting or rewriting messages no longer reads every word count of their scope.
--
-- count_message_words (the trigger of deleted messages) joined the counts of the scope to the
-- deleted messages' words, and then deleted the counts left at zero with `docs <= 0`;
-- recount_message_words (of rewritten ones) did the same for one message. Both read the
-- scope's whole vocabulary, every statement: some 50,000 rows for a user with 50,000 distinct
-- words, a quarter of a second for a sweep batch of five messages, and a sweep batch could
-- outlast the headroom it keeps before a Lambda's deadline. The words are now gathered into an
-- array first, and the counts are locked, updated and deleted by their lexemes through the
-- primary key (user_id, tenant_id, lexeme, agent); only the counts the update left at zero are
-- deleted. The counts are the same as before.
--
-- On a large table: nothing is rewritten; only the functions change.

create or replace function agentmem.count_message_words() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  sc record;
  gone_sessions uuid[];
  gone_seqs bigint[];
  gone_lexemes text[];
  gone_docs bigint[];
  gone_lengths bigint[];
  emptied text[];
begin
  if tg_op = 'INSERT' then
    insert into agentmem.message_words_pending (user_id, tenant_id, agent, session_id, seq)
    select a.user_id, a.tenant_id, a.agent, a.session_id, a.seq from added a
    order by 1, 2, 3, 4, 5;
    for sc in
      select distinct a.user_id, a.tenant_id, a.agent from added a where a.seq % 32 = 0 order by 1, 2, 3
    loop
      if (select pg_catalog.count(*) from (
            select 1 from agentmem.message_words_pending p
            where p.user_id = sc.user_id and p.tenant_id = sc.tenant_id and p.agent = sc.agent
            limit agentmem.fold_threshold()) x) >= agentmem.fold_threshold() then
        perform agentmem.fold_message_words(sc.user_id, sc.tenant_id, sc.agent, 100000);
      end if;
    end loop;
  else
    -- scope by scope, in key order: each statement names its scope
    for sc in
      select distinct r.user_id, r.tenant_id, r.agent from removed r order by 1, 2, 3
    loop
      with unpended as (
        delete from agentmem.message_words_pending p
        using removed r
        where p.user_id = sc.user_id and p.tenant_id = sc.tenant_id and p.agent = sc.agent
          and r.user_id = sc.user_id and r.tenant_id = sc.tenant_id and r.agent = sc.agent
          and p.session_id = r.session_id and p.seq = r.seq
        returning p.session_id, p.seq
      )
      select pg_catalog.array_agg(u.session_id), pg_catalog.array_agg(u.seq) into gone_sessions, gone_seqs
      from unpended u;
      with counted as (
        select r.* from removed r
          left join rows from (pg_catalog.unnest(coalesce(gone_sessions, '{}')), pg_catalog.unnest(coalesce(gone_seqs, '{}'))) g(session_id, seq)
            on g.session_id = r.session_id and g.seq = r.seq
        where g.session_id is null
          and r.user_id = sc.user_id and r.tenant_id = sc.tenant_id and r.agent = sc.agent
      ),
      c as (
        select u.lexeme, pg_catalog.count(*) as docs, 0::bigint as length
        from counted r, pg_catalog.unnest(r.fts) u
        group by 1
        union all
        select '', pg_catalog.count(*), pg_catalog.sum(pg_catalog.length(r.fts))
        from counted r
        having pg_catalog.count(*) > 0
      )
      select pg_catalog.array_agg(c.lexeme order by c.lexeme), pg_catalog.array_agg(c.docs order by c.lexeme),
             pg_catalog.array_agg(c.length order by c.lexeme)
      into gone_lexemes, gone_docs, gone_lengths
      from c;
      continue when gone_lexemes is null;
      -- in lexeme order, so that two deletions lock the counts in one order
      perform from agentmem.message_words w
      where w.user_id = sc.user_id and w.tenant_id = sc.tenant_id and w.agent = sc.agent
        and w.lexeme = any(gone_lexemes)
      order by w.lexeme
      for update of w;
      with subtracted as (
        update agentmem.message_words w
        set docs = w.docs - x.docs, length = w.length - x.length
        from rows from (pg_catalog.unnest(gone_lexemes), pg_catalog.unnest(gone_docs), pg_catalog.unnest(gone_lengths)) x(lexeme, docs, length)
        where w.user_id = sc.user_id and w.tenant_id = sc.tenant_id and w.agent = sc.agent
          and w.lexeme = any(gone_lexemes) and w.lexeme = x.lexeme
        returning w.lexeme, w.docs
      )
      select pg_catalog.array_agg(s.lexeme) into emptied from subtracted s where s.docs <= 0;
      if emptied is not null then
        delete from agentmem.message_words w
        where w.user_id = sc.user_id and w.tenant_id = sc.tenant_id and w.agent = sc.agent
          and w.lexeme = any(emptied) and w.docs <= 0;
      end if;
    end loop;
  end if;
  return null;
end
$$;

create or replace function agentmem.recount_message_words() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  emptied text[];
begin
  delete from agentmem.message_words_pending p
  where p.user_id = old.user_id and p.tenant_id = old.tenant_id and p.agent = old.agent
    and p.session_id = old.session_id and p.seq = old.seq;
  if found then
    insert into agentmem.message_words_pending (user_id, tenant_id, agent, session_id, seq)
    values (new.user_id, new.tenant_id, new.agent, new.session_id, new.seq);
    return null;
  end if;
  with subtracted as (
    update agentmem.message_words w
    set docs = w.docs - 1, length = w.length - case when w.lexeme = '' then pg_catalog.length(old.fts) else 0 end
    where w.user_id = old.user_id and w.tenant_id = old.tenant_id and w.agent = old.agent
      and w.lexeme = any(pg_catalog.array_append(pg_catalog.tsvector_to_array(old.fts), ''))
    returning w.lexeme, w.docs
  )
  select pg_catalog.array_agg(s.lexeme) into emptied from subtracted s where s.docs <= 0;
  if emptied is not null then
    delete from agentmem.message_words w
    where w.user_id = old.user_id and w.tenant_id = old.tenant_id and w.agent = old.agent
      and w.lexeme = any(emptied) and w.docs <= 0;
  end if;
  insert into agentmem.message_words as w (user_id, tenant_id, agent, lexeme, docs, length)
  select new.user_id, new.tenant_id, new.agent, x.lexeme, 1, case when x.lexeme = '' then pg_catalog.length(new.fts) else 0 end
  from (select u.lexeme from pg_catalog.unnest(new.fts) u union all select '') x
  order by x.lexeme
  on conflict (user_id, tenant_id, agent, lexeme) do update
    set docs = w.docs + excluded.docs, length = w.length + excluded.length;
  return null;
end
$$;
