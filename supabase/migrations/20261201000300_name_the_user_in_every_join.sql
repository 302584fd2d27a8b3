-- Every statement of a user's request names the user on every user-owned table it reads.
--
-- On tables partitioned by user (agentmem.partition_by_user) a statement reads one partition
-- when it says which user's rows it wants; a join by a key without the user (a memory by its
-- id, a message by its session and seq) reads every partition, which is also what a
-- distributed Postgres would have to send to every shard. These functions joined so:
--
-- - recall_memories and recall_sources read the ranked memories and messages back by id;
-- - memory_bm25_hits read the memories of its owners (the user's, and with_shared the tenant's
--   shared memories, user '') through an array in a variable, which the planner cannot prune
--   partitions by (it prunes by a list it can read, or by a constant array);
-- - fold_message_words read the messages it counts by session and seq, and deleted the
--   pending rows it counted by a join alone;
-- - count_message_words (the trigger of deleted messages) subtracted the deleted messages'
--   words from the counts through joins over every scope at once; it now does so scope by scope
--   (in the same order, so two deletions still lock the counts in one order).
--
-- Each now names the user (row-level security already kept every other user's rows out; the
-- results do not change). Where shared memories may be read, the owners are named as a list,
-- m.user_id in (p_user_id, shared_owner), shared_owner being '' with_shared and the user again
-- without: a statement reads the user's partition and, with_shared, the partition of '' where
-- every tenant's shared memories are, and no other. The functions are patched where they join, not written out again, so
-- that a change another migration made to the rest of a function stays: a patch whose text is
-- not found once fails the migration.
--
-- On a large table: nothing is rewritten; only the functions change.

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
  'agentmem.recall_memories(text,extensions.vector,text,text,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,double precision,double precision,double precision,boolean)',
  'from best f join agentmem.memories m on m.id = f.id',
  'from best f join agentmem.memories m
      on m.user_id in (p_user_id, shared_owner) and m.id = f.id');

select pg_temp.patch_function(
  'agentmem.recall_sources(text,text,extensions.vector,text,text,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,text,text,double precision,double precision,double precision,double precision,boolean)',
  'left join agentmem.memories m on b.src = ''memory'' and m.id = b.k1',
  'left join agentmem.memories m on b.src = ''memory''
        and m.user_id in (p_user_id, shared_owner) and m.id = b.k1');

select pg_temp.patch_function(
  'agentmem.memory_bm25_hits(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,text[],integer,boolean,boolean)',
  'from agentmem.memories m
        where m.user_id = any(owners) and',
  'from agentmem.memories m
        where m.user_id in (p_user_id, shared_owner) and');

select pg_temp.patch_function(
  'agentmem.memory_bm25_hits(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,text[],integer,boolean,boolean)',
  'from agentmem.memories m
  where m.user_id = any(owners) and',
  'from agentmem.memories m
  where m.user_id in (p_user_id, shared_owner) and');

select pg_temp.patch_function(
  'agentmem.memory_bm25_hits(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,text[],integer,boolean,boolean)',
  'where m.user_id = any($11) and',
  'where m.user_id in ($1, $11) and');

select pg_temp.patch_function(
  'agentmem.memory_bm25_hits(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,text[],integer,boolean,boolean)',
  'using p_user_id, p_tenant_id, p_agent, p_filter, q, n, terms, docs, p_since, p_until, owners;',
  'using p_user_id, p_tenant_id, p_agent, p_filter, q, n, terms, docs, p_since, p_until, shared_owner;');

select pg_temp.patch_function(
  'agentmem.memory_bm25_hits(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,text[],integer,boolean,boolean)',
  '  owners text[] := agentmem.memory_owners(p_user_id, with_shared);',
  '  -- '''' with_shared, else the user again: the owners as a list, which prunes partitions
  shared_owner text := case when with_shared and p_user_id <> '''' then '''' else p_user_id end;');

select pg_temp.patch_function(
  'agentmem.recall_memories(text,extensions.vector,text,text,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,double precision,double precision,double precision,boolean)',
  '  exact boolean := own_exact and shared_exact;',
  '  exact boolean := own_exact and shared_exact;
  -- '''' with_shared, else the user again: the owners as a list, which prunes partitions
  shared_owner text := case when with_shared and p_user_id <> '''' then '''' else p_user_id end;');

select pg_temp.patch_function(
  'agentmem.recall_sources(text,text,extensions.vector,text,text,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,text,text,double precision,double precision,double precision,double precision,boolean)',
  '  messages_exact boolean;',
  '  messages_exact boolean;
  -- '''' with_shared, else the user again: the owners as a list, which prunes partitions
  shared_owner text := case when with_shared and p_user_id <> '''' then '''' else p_user_id end;');

select pg_temp.patch_function(
  'agentmem.recall_sources(text,text,extensions.vector,text,text,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,text,text,double precision,double precision,double precision,double precision,boolean)',
  'left join agentmem.messages g on b.src = ''message'' and g.session_id = b.k1 and g.seq = b.k2',
  'left join agentmem.messages g on b.src = ''message'' and g.user_id = p_user_id and g.session_id = b.k1 and g.seq = b.k2');

select pg_temp.patch_function(
  'agentmem.fold_message_words(text,text,text,integer)',
  'from batch b join agentmem.messages m on m.session_id = b.session_id and m.seq = b.seq',
  'from batch b join agentmem.messages m on m.user_id = b.user_id and m.session_id = b.session_id and m.seq = b.seq
      and (p_user_id is null or m.user_id = p_user_id)');

select pg_temp.patch_function(
  'agentmem.fold_message_words(text,text,text,integer)',
  '    where p.user_id = l.user_id and p.tenant_id = l.tenant_id and p.agent = l.agent',
  '    where (p_user_id is null or p.user_id = p_user_id)
      and p.user_id = l.user_id and p.tenant_id = l.tenant_id and p.agent = l.agent');

select pg_temp.patch_function('agentmem.count_message_words()', $old$
    with unpended as (
      delete from agentmem.message_words_pending p
      using removed r
      where p.user_id = r.user_id and p.tenant_id = r.tenant_id and p.agent = r.agent
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
    ),
    c as (
      select r.user_id, r.tenant_id, r.agent, u.lexeme, pg_catalog.count(*) as docs, 0::bigint as length
      from counted r, pg_catalog.unnest(r.fts) u
      group by 1, 2, 3, 4
      union all
      select r.user_id, r.tenant_id, r.agent, '', pg_catalog.count(*), pg_catalog.sum(pg_catalog.length(r.fts))
      from counted r
      group by 1, 2, 3
    ),
    locked as (
      select w.user_id, w.tenant_id, w.agent, w.lexeme from agentmem.message_words w
      join c using (user_id, tenant_id, agent, lexeme)
      order by 1, 2, 3, 4
      for update of w
    )
    update agentmem.message_words w
    set docs = w.docs - c.docs, length = w.length - c.length
    from c join locked l using (user_id, tenant_id, agent, lexeme)
    where (w.user_id, w.tenant_id, w.agent, w.lexeme) = (c.user_id, c.tenant_id, c.agent, c.lexeme);
    delete from agentmem.message_words w
    using (select distinct r.user_id, r.tenant_id, r.agent from removed r) s
    where w.user_id = s.user_id and w.tenant_id = s.tenant_id and w.agent = s.agent and w.docs <= 0;
$old$, $new$
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
      ),
      locked as (
        select w.lexeme from agentmem.message_words w
        join c using (lexeme)
        where w.user_id = sc.user_id and w.tenant_id = sc.tenant_id and w.agent = sc.agent
        order by 1
        for update of w
      )
      update agentmem.message_words w
      set docs = w.docs - c.docs, length = w.length - c.length
      from c join locked l using (lexeme)
      where w.user_id = sc.user_id and w.tenant_id = sc.tenant_id and w.agent = sc.agent and w.lexeme = c.lexeme;
      delete from agentmem.message_words w
      where w.user_id = sc.user_id and w.tenant_id = sc.tenant_id and w.agent = sc.agent and w.docs <= 0;
    end loop;
$new$);
