-- BM25 over a large scope's memories without scoring every memory that holds a common word.
--
-- Above the exact limit, agentmem.memory_bm25_hits scored every memory of the scope that holds
-- a word of the question: for a user of 100,000 memories, a question of four words matched
-- 40,920 of them (one of its words is in 40,585), 196 ms in all, where its three other words
-- are in 134, 195 and 257. As messages do (migration count_message_words):
--
-- - agentmem.memory_words counts, per scope (user, tenant, agent), how many memories hold each
--   lexeme, and (lexeme '') how many memories there are and their total length (length(fts)).
--   Triggers keep it as memories are inserted, deleted (the sweep, an erasure, a deletion) or
--   rewritten; a count that falls to 0 is deleted; a truncation of memories empties it. The
--   functions' role reads its own counts only (row-level security, as for messages'); BM25
--   reads them through agentmem.memory_word_stats, which answers the caller's own scope (and
--   their tenant's shared memories) as agentmem.memory_word_matches does, and subtracts the memories
--   that expired but are not yet swept: the statistics are exactly those of the unexpired
--   memories of the scope, which the exact path computes from the rows.
-- - agentmem.memory_bm25_hits, above the exact limit and without a metadata or time filter
--   (whose matches the counts cannot know), scores with those statistics, as the exact path
--   does (the scope's own average length, rather than the matching memories'), and prunes as
--   MaxScore does: the words held by more than a twentieth of the scope are "common"; the
--   memories that hold a rarer word are scored in full, and if the n-th best of them beats the
--   most a memory could score from the common words alone, they are the answer; else every
--   memory that holds a word of the question is scored. With a filter, as before.
--
-- Filling the table reads every memory once: on a large table apply this in a quiet hour.

create table agentmem.memory_words (
  user_id text collate "C" not null,
  tenant_id text not null,
  agent text not null,
  -- '' counts the scope's memories (docs) and their total length
  lexeme text not null,
  docs bigint not null,
  length bigint not null default 0,
  primary key (user_id, tenant_id, lexeme, agent)
);
alter table agentmem.memory_words set (fillfactor = 50);

alter table agentmem.memory_words enable row level security;
create policy caller_owner on agentmem.memory_words as permissive for select to agentmem_caller
  using (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()));
create policy no_client_access on agentmem.memory_words as restrictive for all to anon, authenticated
  using (false) with check (false);
revoke all on agentmem.memory_words from public, anon, authenticated, agentmem_caller, service_role;
grant select on agentmem.memory_words to agentmem_caller;
grant select, delete on agentmem.memory_words to service_role;

-- Adds each scope's counts of the memories inserted (added) or deleted (removed) by a
-- statement, from its transition table; counts that fall to 0 are deleted. The rows are
-- written in one order by every writer (scope, then lexeme; recount_memory_words too), so two
-- writers never deadlock on them.
create function agentmem.count_memory_words() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  sc record;
  e_users text[];
  e_tenants text[];
  e_agents text[];
  e_lexemes text[];
begin
  -- one statement for every scope of the rows (an import or a sweep holds many), the counts in
  -- (user, tenant, agent, lexeme) order
  if tg_op = 'INSERT' then
    insert into agentmem.memory_words as w (user_id, tenant_id, agent, lexeme, docs, length)
    select c.* from (
      select a.user_id, a.tenant_id, a.agent, u.lexeme, pg_catalog.count(*) as docs, 0::bigint as length
      from added a, pg_catalog.unnest(a.fts) u
      group by 1, 2, 3, 4
      union all
      select a.user_id, a.tenant_id, a.agent, '', pg_catalog.count(*), pg_catalog.sum(pg_catalog.length(a.fts))
      from added a
      group by 1, 2, 3) c
    order by 1, 2, 3, 4
    on conflict (user_id, tenant_id, lexeme, agent) do update
      set docs = w.docs + excluded.docs, length = w.length + excluded.length;
  else
    -- the same upsert, less (an erasure may have taken the counts first: they come and go)
    with subtracted as (
      insert into agentmem.memory_words as w (user_id, tenant_id, agent, lexeme, docs, length)
      select c.* from (
        select r.user_id, r.tenant_id, r.agent, u.lexeme, -pg_catalog.count(*) as docs, 0::bigint as length
        from removed r, pg_catalog.unnest(r.fts) u
        group by 1, 2, 3, 4
        union all
        select r.user_id, r.tenant_id, r.agent, '', -pg_catalog.count(*), -pg_catalog.sum(pg_catalog.length(r.fts))
        from removed r
        group by 1, 2, 3) c
      order by 1, 2, 3, 4
      on conflict (user_id, tenant_id, lexeme, agent) do update
        set docs = w.docs + excluded.docs, length = w.length + excluded.length
      returning w.user_id, w.tenant_id, w.agent, w.lexeme, w.docs
    )
    select pg_catalog.array_agg(s.user_id), pg_catalog.array_agg(s.tenant_id), pg_catalog.array_agg(s.agent),
           pg_catalog.array_agg(s.lexeme)
    into e_users, e_tenants, e_agents, e_lexemes
    from subtracted s where s.docs <= 0;
    -- the emptied counts, scope by scope: each statement names its scope (on tables
    -- partitioned by user, its partition)
    for sc in
      select e.user_id, e.tenant_id, e.agent, pg_catalog.array_agg(e.lexeme) as lexemes
      from rows from (pg_catalog.unnest(e_users), pg_catalog.unnest(e_tenants), pg_catalog.unnest(e_agents),
                      pg_catalog.unnest(e_lexemes)) e(user_id, tenant_id, agent, lexeme)
      group by 1, 2, 3 order by 1, 2, 3
    loop
      delete from agentmem.memory_words w
      where w.user_id = sc.user_id and w.tenant_id = sc.tenant_id and w.agent = sc.agent
        and w.lexeme = any (sc.lexemes) and w.docs <= 0;
    end loop;
  end if;
  return null;
end
$$;

-- A memory rewritten (a merge, an edit) moves its counts.
create function agentmem.recount_memory_words() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into agentmem.memory_words as w (user_id, tenant_id, agent, lexeme, docs, length)
  select c.user_id, c.tenant_id, c.agent, c.lexeme, pg_catalog.sum(c.docs)::bigint, pg_catalog.sum(c.length)::bigint
  from (
    select old.user_id, old.tenant_id, old.agent, x.lexeme, -1::bigint,
           case when x.lexeme = '' then -pg_catalog.length(old.fts) else 0 end::bigint
    from (select u.lexeme from pg_catalog.unnest(old.fts) u union all select '') x
    union all
    select new.user_id, new.tenant_id, new.agent, x.lexeme, 1::bigint,
           case when x.lexeme = '' then pg_catalog.length(new.fts) else 0 end::bigint
    from (select u.lexeme from pg_catalog.unnest(new.fts) u union all select '') x) c(user_id, tenant_id, agent, lexeme, docs, length)
  -- one row per key: a lexeme kept by the rewrite nets to 0
  group by 1, 2, 3, 4
  order by 1, 2, 3, 4
  on conflict (user_id, tenant_id, lexeme, agent) do update
    set docs = w.docs + excluded.docs, length = w.length + excluded.length;
  delete from agentmem.memory_words w
  where w.user_id = old.user_id and w.tenant_id = old.tenant_id and w.agent = old.agent
    and w.lexeme in (select u.lexeme from pg_catalog.unnest(old.fts) u union all select '') and w.docs <= 0;
  return null;
end
$$;

-- A truncation of memories (none but a test's) takes the counts with it.
create function agentmem.truncate_memory_words() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  truncate agentmem.memory_words;
  return null;
end
$$;

revoke all on function agentmem.count_memory_words() from public, anon, authenticated;
revoke all on function agentmem.recount_memory_words() from public, anon, authenticated;
revoke all on function agentmem.truncate_memory_words() from public, anon, authenticated;

create trigger memories_count_inserted_words
  after insert on agentmem.memories
  referencing new table as added
  for each statement
  execute function agentmem.count_memory_words();

create trigger memories_count_deleted_words
  after delete on agentmem.memories
  referencing old table as removed
  for each statement
  execute function agentmem.count_memory_words();

create trigger memories_count_updated_words
  after update of content, user_id, tenant_id, agent on agentmem.memories
  for each row
  when (old.fts is distinct from new.fts or old.user_id <> new.user_id
        or old.tenant_id <> new.tenant_id or old.agent <> new.agent)
  execute function agentmem.recount_memory_words();

create trigger memories_truncate_words
  after truncate on agentmem.memories
  for each statement
  execute function agentmem.truncate_memory_words();

insert into agentmem.memory_words (user_id, tenant_id, agent, lexeme, docs, length)
select m.user_id, m.tenant_id, m.agent, u.lexeme, pg_catalog.count(*), 0
from agentmem.memories m, pg_catalog.unnest(m.fts) u
group by 1, 2, 3, 4
union all
select m.user_id, m.tenant_id, m.agent, '', pg_catalog.count(*), pg_catalog.sum(pg_catalog.length(m.fts))
from agentmem.memories m
group by 1, 2, 3;

-- The statistics of BM25 over a scope's unexpired memories (the user's, and with shared_owner
-- '' the tenant's shared ones; of agent p_agent and agent '', or every agent): how many there
-- are, their average length, and how many hold each of terms. Only the caller's own scope, as
-- agentmem.memory_word_matches: else no row. The counts, less the memories that expired and
-- are not yet swept (found through the expiry index).
create function agentmem.memory_word_stats(p_user_id text, p_tenant_id text, p_agent text, shared_owner text,
  terms text[], out docs double precision, out avgdl double precision, out dfs double precision[])
returns setof record
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if agentmem.current_user_id() is null or p_user_id is distinct from agentmem.current_user_id()
     or p_tenant_id is distinct from agentmem.current_tenant() or shared_owner not in (p_user_id, '') then
    return;
  end if;
  return query
    with expired as (
      select m.fts from agentmem.memories m
      where m.expires_at <= pg_catalog.now()
        and m.user_id in (p_user_id, shared_owner) and m.tenant_id = p_tenant_id
        and (p_agent = '' or m.agent in (p_agent, ''))
    ),
    stored as (
      select w.lexeme, pg_catalog.sum(w.docs) as docs, pg_catalog.sum(w.length) as length
      from agentmem.memory_words w
      where w.user_id in (p_user_id, shared_owner) and w.tenant_id = p_tenant_id
        and (p_agent = '' or w.agent in (p_agent, ''))
        and w.lexeme = any (terms operator(pg_catalog.||) ''::text)
      group by w.lexeme
    ),
    gone as (
      select u.lexeme, pg_catalog.count(*) as docs from expired e, pg_catalog.unnest(e.fts) u
      where u.lexeme = any (terms) group by u.lexeme
      union all
      select '', pg_catalog.count(*) from expired e
    ),
    gone_length as (select coalesce(pg_catalog.sum(pg_catalog.length(e.fts)), 0) as length from expired e)
    select (coalesce(st.docs, 0) - coalesce(g.docs, 0))::float8,
           case when coalesce(st.docs, 0) - coalesce(g.docs, 0) > 0
                then greatest((coalesce(st.length, 0) - gl.length)::numeric / (coalesce(st.docs, 0) - coalesce(g.docs, 0))::numeric, 1)::float8 end,
           array(select (coalesce(s2.docs, 0) - coalesce(g2.docs, 0))::float8
                 from pg_catalog.unnest(terms) with ordinality t(lexeme, k)
                   left join stored s2 on s2.lexeme = t.lexeme left join gone g2 on g2.lexeme = t.lexeme
                 order by t.k)
    from (select 1) one
      left join stored st on st.lexeme = ''
      left join gone g on g.lexeme = ''
      cross join gone_length gl;
end
$$;

revoke all on function agentmem.memory_word_stats(text, text, text, text, text[]) from public, anon, authenticated;
grant execute on function agentmem.memory_word_stats(text, text, text, text, text[]) to agentmem_caller, service_role;

-- The n best of the scope's memories that match q_cand (agentmem.memory_word_matches), by BM25
-- over terms with the statistics given (idfs, avgdl; best is the most a memory can score, for
-- relevance): the scores of memory_bm25_hits.
create function agentmem.memory_bm25_scored(p_user_id text, p_tenant_id text, p_agent text, shared_owner text,
  q_cand tsquery, terms text[], idfs double precision[], avgdl double precision, best double precision, n integer)
returns table(id uuid, score double precision, relevance double precision)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
begin
  return query
    with cand as materialized (
      select m.id, pg_catalog.length(m.fts) as fts_len,
             pg_catalog.ts_filter(pg_catalog.setweight(pg_catalog.setweight(m.fts, 'D'), 'A', terms), '{a}') as hit
      from agentmem.memory_word_matches(p_user_id, p_tenant_id, p_agent, shared_owner, q_cand) m
    ),
    weights as (
      select w.lexeme, w.idf from rows from (pg_catalog.unnest(terms), pg_catalog.unnest(idfs)) w(lexeme, idf)
    ),
    scored as (
      select c.id,
             pg_catalog.sum(w.idf * t.tf * 2.2 / (t.tf + 1.2 * (0.25 + 0.75 * c.fts_len / avgdl)))::float8 as bm25
      from cand c
        cross join lateral (
          select u.lexeme, coalesce(pg_catalog.array_length(u.positions, 1), 1)::float8 as tf
          from pg_catalog.unnest(c.hit) u) t
        join weights w on w.lexeme = t.lexeme
      group by c.id
    )
    select s.id, s.bm25, least(1, s.bm25 / best)::float8
    from scored s
    order by s.bm25 desc, s.id
    limit n;
end
$$;

revoke all on function agentmem.memory_bm25_scored(text, text, text, text, tsquery, text[], double precision[], double precision, double precision, integer) from public, anon, authenticated;
grant execute on function agentmem.memory_bm25_scored(text, text, text, text, tsquery, text[], double precision[], double precision, double precision, integer) to agentmem_caller, service_role;

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
  'agentmem.memory_bm25_hits(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,text[],integer,boolean,boolean)',
$p$  docs double precision;
begin
$p$,
$p$  docs double precision;
  avgdl double precision;
  dfs double precision[];
  idfs double precision[] := array[]::double precision[];
  best double precision := 0;
  -- the words held by more than a twentieth of the scope, the most they can add, and how many
  -- memories hold a rare word and any word (sums of the words' counts: bounds)
  rare text[];
  common_bound double precision := 0;
  rare_docs double precision := 0;
  all_docs double precision := 0;
  i integer;
  found integer;
begin
$p$);

select pg_temp.patch_function(
  'agentmem.memory_bm25_hits(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,text[],integer,boolean,boolean)',
$p$  -- the scope's rows are counted here; their average length is the matching rows' (lengths)
  docs := agentmem.memory_scope_count(p_user_id, p_tenant_id, p_agent, shared_owner);
$p$,
$p$  -- Without a filter: the scope's statistics from its word counts (agentmem.memory_word_stats),
  -- as the exact path computes them from the rows, and the memories of the rarer words first.
  if p_filter = '{}'::jsonb and p_since is null and p_until is null then
    select s.docs, s.avgdl, s.dfs into docs, avgdl, dfs
    from agentmem.memory_word_stats(p_user_id, p_tenant_id, p_agent, shared_owner, terms) s;
    if docs is null or docs <= 0 then
      return;
    end if;
    for i in 1 .. pg_catalog.array_length(terms, 1) loop
      idfs := idfs || pg_catalog.ln(1 + (docs - dfs[i] + 0.5) / (dfs[i] + 0.5));
      best := best + idfs[i] * 2.2;
      all_docs := all_docs + dfs[i];
      if dfs[i] > docs / 20 then
        -- a word's score is below idf x 2.2 whatever its count and the memory's length
        common_bound := common_bound + idfs[i] * 2.2;
      elsif dfs[i] > 0 then
        rare := rare || terms[i];
        rare_docs := rare_docs + dfs[i];
      end if;
    end loop;
    best := greatest(best, 1e-9);
    -- a memory without a rare word scores below common_bound: when the n best of those with
    -- one score above it, they are the answer
    if rare is not null and common_bound > 0 and rare_docs * 4 <= all_docs then
      return query
        with hits as (select * from agentmem.memory_bm25_scored(p_user_id, p_tenant_id, p_agent, shared_owner,
          agentmem.terms_query(rare), terms, idfs, avgdl, best, n) h)
        select h.id, h.score, h.relevance from hits h
        where (select pg_catalog.count(*) from hits) >= n
          and (select pg_catalog.min(x.score) from hits x) > common_bound;
      get diagnostics found = row_count;
      if found > 0 then
        return;
      end if;
    end if;
    return query
      select * from agentmem.memory_bm25_scored(p_user_id, p_tenant_id, p_agent, shared_owner, q, terms, idfs, avgdl, best, n);
    return;
  end if;
  -- With a filter: the scope's rows are counted here; their average length is the matching
  -- rows' (lengths), their words' counts the matching rows'
  docs := agentmem.memory_scope_count(p_user_id, p_tenant_id, p_agent, shared_owner);
$p$);

-- An erasure takes the counts before the memories (and the messages' before the messages), as
-- if they referenced them, so that its answer counts their rows rather than the triggers of
-- memories taking them unseen.
select pg_temp.patch_function('agentmem.erase_user(text)',
$p$      where con.contype = 'f' and con.conrelid <> con.confrelid
        and con.conrelid in (select oid from user_tables) and con.confrelid in (select oid from user_tables)
    ),
$p$,
$p$      where con.contype = 'f' and con.conrelid <> con.confrelid
        and con.conrelid in (select oid from user_tables) and con.confrelid in (select oid from user_tables)
      union all
      -- the word counts, which triggers of their source keep, before it
      select x.src::regclass::oid, x.dst::regclass::oid
      from (values ('agentmem.memory_words', 'agentmem.memories'), ('agentmem.message_words', 'agentmem.messages'),
                   ('agentmem.message_words_pending', 'agentmem.messages')) x(src, dst)
    ),
$p$);

-- Before it takes the counts, it locks the rows they count, as every writer of the counts does
-- (the row first, then its counts): the sweep, which takes no user's lock, could otherwise hold
-- a memory and wait for counts the erasure had taken, while the erasure waited for the memory.
select pg_temp.patch_function('agentmem.erase_user(text)',
$p$  perform 1 from agentmem.sessions s where s.user_id = p_user_id for update;
$p$,
$p$  perform 1 from agentmem.sessions s where s.user_id = p_user_id for update;
  perform 1 from agentmem.memories m where m.user_id = p_user_id for update;
  perform 1 from agentmem.messages m where m.user_id = p_user_id for update;
$p$);
