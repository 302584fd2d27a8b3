-- BM25 over a user's messages without reading every message that holds a common word.
--
-- A question names a participant, and a participant's name is in most of the user's messages:
-- counting that word's document frequency meant reading three quarters of the user's messages
-- (and, through the full-text index, every other user's that hold it), and scoring them. Now:
--
-- - agentmem.message_words counts, per scope (user, tenant, agent), how many stored messages
--   hold each lexeme, and (lexeme '') how many messages there are and their total length
--   (length(fts)). Triggers keep it as messages are inserted, deleted (a sweep, a clear, an
--   erasure, a cascade from sessions) or rewritten; a count that falls to 0 is deleted, so an
--   erased user leaves no words behind; a truncation of messages empties it. Messages that
--   expired but are not yet swept are subtracted at query time (found through the user's
--   sessions), so the statistics are exactly those of the unexpired messages, as before; and
--   they are the user's own, as before: row-level security reads them as it reads messages.
-- - agentmem.message_bm25_hits scores with those statistics (the same BM25 and the same
--   scores as the exact path of migration rank_words_by_bm25, whatever the scope's size: a
--   large scope's average length is now its own rather than the matching rows') and prunes as
--   MaxScore does: the words held by more than a twentieth of the scope are "common"; the
--   messages that hold a rarer word, and those up to two places from them in their session
--   (for the credit of follow_weight), are scored in full; if the n-th best of them beats the
--   most any other message could score from the common words alone (with both credits), they
--   are the answer, else every message that holds a word of the query is scored.
--
-- Filling the table reads every message once: on a large table apply this in a quiet hour.

create table agentmem.message_words (
  user_id uuid not null,
  tenant_id text not null,
  agent text not null,
  -- '' counts the scope's messages (docs) and their total length
  lexeme text not null,
  docs bigint not null,
  length bigint not null default 0,
  primary key (user_id, tenant_id, agent, lexeme)
);

alter table agentmem.message_words enable row level security;
create policy caller_owner on agentmem.message_words as permissive for select to agentmem_caller
  using (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()));
create policy no_client_access on agentmem.message_words as restrictive for all to anon, authenticated
  using (false) with check (false);
revoke all on agentmem.message_words from public, anon, authenticated, agentmem_caller, service_role;
grant select on agentmem.message_words to agentmem_caller;
grant select, delete on agentmem.message_words to service_role;

-- Adds each scope's counts of the messages inserted (added) or deleted (removed) by a
-- statement, from its transition table; counts that fall to 0 are deleted. The scopes are
-- written in one order by every writer, so two commits never deadlock on them.
create function agentmem.count_message_words() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    insert into agentmem.message_words as w (user_id, tenant_id, agent, lexeme, docs, length)
    select c.* from (
      select a.user_id, a.tenant_id, a.agent, u.lexeme, pg_catalog.count(*) as docs, 0::bigint as length
      from added a, pg_catalog.unnest(a.fts) u
      group by 1, 2, 3, 4
      union all
      select a.user_id, a.tenant_id, a.agent, '', pg_catalog.count(*), pg_catalog.sum(pg_catalog.length(a.fts))
      from added a
      group by 1, 2, 3) c
    order by 1, 2, 3, 4
    on conflict (user_id, tenant_id, agent, lexeme) do update
      set docs = w.docs + excluded.docs, length = w.length + excluded.length;
  else
    with c as (
      select r.user_id, r.tenant_id, r.agent, u.lexeme, pg_catalog.count(*) as docs, 0::bigint as length
      from removed r, pg_catalog.unnest(r.fts) u
      group by 1, 2, 3, 4
      union all
      select r.user_id, r.tenant_id, r.agent, '', pg_catalog.count(*), pg_catalog.sum(pg_catalog.length(r.fts))
      from removed r
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
  end if;
  return null;
end
$$;

-- A message rewritten (none is today) moves its counts.
create function agentmem.recount_message_words() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  update agentmem.message_words w
  set docs = w.docs - 1, length = w.length - case when w.lexeme = '' then pg_catalog.length(old.fts) else 0 end
  where w.user_id = old.user_id and w.tenant_id = old.tenant_id and w.agent = old.agent
    and w.lexeme in (select u.lexeme from pg_catalog.unnest(old.fts) u union all select '');
  delete from agentmem.message_words w
  where w.user_id = old.user_id and w.tenant_id = old.tenant_id and w.agent = old.agent and w.docs <= 0;
  insert into agentmem.message_words as w (user_id, tenant_id, agent, lexeme, docs, length)
  select new.user_id, new.tenant_id, new.agent, x.lexeme, 1, case when x.lexeme = '' then pg_catalog.length(new.fts) else 0 end
  from (select u.lexeme from pg_catalog.unnest(new.fts) u union all select '') x
  order by x.lexeme
  on conflict (user_id, tenant_id, agent, lexeme) do update
    set docs = w.docs + excluded.docs, length = w.length + excluded.length;
  return null;
end
$$;

revoke all on function agentmem.count_message_words() from public, anon, authenticated;
revoke all on function agentmem.recount_message_words() from public, anon, authenticated;

create trigger messages_count_inserted_words
  after insert on agentmem.messages
  referencing new table as added
  for each statement
  execute function agentmem.count_message_words();

create trigger messages_count_deleted_words
  after delete on agentmem.messages
  referencing old table as removed
  for each statement
  execute function agentmem.count_message_words();

-- A truncation of messages (none but a test's) takes the counts with it.
create function agentmem.truncate_message_words() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  truncate agentmem.message_words;
  return null;
end
$$;

revoke all on function agentmem.truncate_message_words() from public, anon, authenticated;

create trigger messages_truncate_words
  after truncate on agentmem.messages
  for each statement
  execute function agentmem.truncate_message_words();

create trigger messages_count_updated_words
  after update of content, name, user_id, tenant_id, agent on agentmem.messages
  for each row
  when (old.fts is distinct from new.fts or old.user_id <> new.user_id
        or old.tenant_id <> new.tenant_id or old.agent <> new.agent)
  execute function agentmem.recount_message_words();

insert into agentmem.message_words (user_id, tenant_id, agent, lexeme, docs, length)
select m.user_id, m.tenant_id, m.agent, u.lexeme, pg_catalog.count(*), 0
from agentmem.messages m, pg_catalog.unnest(m.fts) u
group by 1, 2, 3, 4
union all
select m.user_id, m.tenant_id, m.agent, '', pg_catalog.count(*), pg_catalog.sum(pg_catalog.length(m.fts))
from agentmem.messages m
group by 1, 2, 3;

-- The n best of the messages of a scope (as message_bm25_hits) that match q_cand and those up
-- to reach places from them in their session, by BM25 with the statistics given (per word:
-- tqs its query, tqas its query in the speaker's name, idfs its inverse document frequency),
-- each with the credit follow_weight gives it from its neighbours; the messages reach places
-- from a match only lend credit (their own credit is not known). Only messages that match q
-- are scored or returned.
create function agentmem.message_bm25_scored(
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  p_speaker text, p_role text, p_since timestamptz, p_until timestamptz,
  q tsquery, q_cand tsquery, reach integer, tqs tsquery[], tqas tsquery[], idfs double precision[],
  avgdl double precision, best double precision, n integer, follow_weight double precision
)
returns table (session_id uuid, seq bigint, score double precision, relevance double precision)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
begin
  return query
    with
    cand as materialized (
      select m.session_id, m.seq from agentmem.messages m
      where m.user_id = p_user_id and m.tenant_id = p_tenant_id and (p_agent = '' or m.agent = p_agent)
        and m.expires_at > pg_catalog.now() and m.fts operator(pg_catalog.@@) q_cand
    ),
    near as (
      select c.session_id, c.seq + d.d as seq, pg_catalog.min(pg_catalog.abs(d.d)) as dist
      from cand c cross join pg_catalog.generate_series(-reach, reach) d(d)
      group by 1, 2
    ),
    scored as materialized (
      select m.session_id, m.seq, x.dist,
             pg_catalog.right(pg_catalog.rtrim(m.content), 1) = '?' as question,
             ((p_filter = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) p_filter
                and not exists (select 1 from pg_catalog.jsonb_each(p_filter) f
                                where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
              and (p_speaker = '' or pg_catalog.lower(m.name) = pg_catalog.lower(p_speaker))
              and (p_role = '' or m.role = p_role)
              and (p_since is null or m.created_at >= p_since)
              and (p_until is null or m.created_at < p_until)) is true as eligible,
             (select pg_catalog.sum(case when m.fts operator(pg_catalog.@@) w.tq
                       then w.idf * (1 + 2 * (m.fts operator(pg_catalog.@@) w.tqa)::int) * 2.2
                            / (1 + 2 * (m.fts operator(pg_catalog.@@) w.tqa)::int + 1.2 * (0.25 + 0.75 * pg_catalog.length(m.fts) / avgdl))
                       else 0 end)
              from rows from (pg_catalog.unnest(tqs), pg_catalog.unnest(tqas), pg_catalog.unnest(idfs)) w(tq, tqa, idf))::float8 as bm25
      from near x join agentmem.messages m on m.session_id = x.session_id and m.seq = x.seq
      where m.user_id = p_user_id and m.tenant_id = p_tenant_id and (p_agent = '' or m.agent = p_agent)
        and m.expires_at > pg_catalog.now() and m.fts operator(pg_catalog.@@) q
    )
    select s.session_id, s.seq,
           (s.bm25 + follow_weight * (case when b.question then b.bm25 else 0 end
                            + case when not s.question and not a.question then a.bm25 else 0 end))::float8,
           least(1, s.bm25 / best)::float8
    from scored s
      left join scored b on b.session_id = s.session_id and b.seq = s.seq - 1
      left join scored a on a.session_id = s.session_id and a.seq = s.seq + 1
    where s.eligible and s.dist < greatest(reach, 1)
    order by 3 desc, s.session_id, s.seq
    limit n;
end
$$;

-- The n messages of a user that best match some lexemes by BM25, as before (migration
-- rank_words_by_bm25: the same arguments, filters, scores, follow_weight and relevance), with
-- the statistics of agentmem.message_words, and pruned: see the top of this file. exact is no
-- longer read: every scope is ranked exactly.
create or replace function agentmem.message_bm25_hits(
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  p_speaker text, p_role text, p_since timestamptz, p_until timestamptz,
  terms text[], n integer, exact boolean, follow_weight double precision
)
returns table (session_id uuid, seq bigint, score double precision, relevance double precision)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
declare
  q tsquery := agentmem.terms_query(terms);
  docs double precision;
  avgdl double precision;
  dfs double precision[];
  idfs double precision[];
  best double precision := 0;
  -- the words held by more than a twentieth of the scope, and the most they can add
  rare text[];
  common_bound double precision := 0;
  tqs tsquery[];
  tqas tsquery[];
  i integer;
  found integer;
  nth double precision;
begin
  if q is null or n < 1 then
    return;
  end if;
  -- the scope's stored messages, less those expired and not yet swept
  with expired as (
    select m.fts from agentmem.sessions s
      join agentmem.messages m on m.session_id = s.id
    where s.user_id = p_user_id and s.tenant_id = p_tenant_id
      and m.user_id = p_user_id and m.tenant_id = p_tenant_id
      and (p_agent = '' or m.agent = p_agent)
      and m.expires_at <= pg_catalog.now()
  ),
  stored as (
    select w.lexeme, pg_catalog.sum(w.docs) as docs, pg_catalog.sum(w.length) as length
    from agentmem.message_words w
    where w.user_id = p_user_id and w.tenant_id = p_tenant_id and (p_agent = '' or w.agent = p_agent)
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
  into docs, avgdl, dfs
  from (select 1) one
    left join stored st on st.lexeme = ''
    left join gone g on g.lexeme = ''
    cross join gone_length gl;
  if docs is null or docs <= 0 then
    return;
  end if;
  idfs := array[]::float8[];
  tqs := array[]::tsquery[];
  tqas := array[]::tsquery[];
  for i in 1 .. pg_catalog.array_length(terms, 1) loop
    idfs := idfs || pg_catalog.ln(1 + (docs - dfs[i] + 0.5) / (dfs[i] + 0.5));
    best := best + pg_catalog.ln(1 + (docs - dfs[i] + 0.5) / (dfs[i] + 0.5)) * 2.2;
    tqs := tqs || pg_catalog.quote_literal(terms[i])::tsquery;
    tqas := tqas || (pg_catalog.quote_literal(terms[i]) || ':A')::tsquery;
    if dfs[i] > docs / 20 then
      -- tf 1 in the name (3) of a message of length 0: 3 x 2.2 / (3 + 1.2 x 0.25) = 2
      common_bound := common_bound + idfs[i] * 2;
    elsif dfs[i] > 0 then
      rare := rare || terms[i];
    end if;
  end loop;
  best := greatest(best, 1e-9);
  -- a message two places or more from every rare word's message: its own score from the
  -- common words, and the credit of each neighbour, no more than that
  common_bound := common_bound * (1 + 2 * greatest(follow_weight, 0));

  if rare is not null and common_bound > 0 then
    return query
      with hits as (select * from agentmem.message_bm25_scored(
        p_user_id, p_tenant_id, p_agent, p_filter, p_speaker, p_role, p_since, p_until,
        q, agentmem.terms_query(rare), case when follow_weight > 0 then 2 else 0 end,
        tqs, tqas, idfs, avgdl, best, n, follow_weight) h)
      select h.session_id, h.seq, h.score, h.relevance from hits h
      where (select pg_catalog.count(*) from hits) >= n
        and (select pg_catalog.min(x.score) from hits x) > common_bound;
    get diagnostics found = row_count;
    if found > 0 then
      return;
    end if;
  end if;
  return query
    select * from agentmem.message_bm25_scored(
      p_user_id, p_tenant_id, p_agent, p_filter, p_speaker, p_role, p_since, p_until,
      q, q, 0, tqs, tqas, idfs, avgdl, best, n, follow_weight);
end
$$;

do $$
declare
  f text;
begin
  foreach f in array array[
    'agentmem.message_bm25_scored(uuid, text, text, jsonb, text, text, timestamptz, timestamptz, tsquery, tsquery, integer, tsquery[], tsquery[], double precision[], double precision, double precision, integer, double precision)',
    'agentmem.message_bm25_hits(uuid, text, text, jsonb, text, text, timestamptz, timestamptz, text[], integer, boolean, double precision)'
  ] loop
    execute pg_catalog.format('revoke all on function %s from public, anon, authenticated', f);
    execute pg_catalog.format('grant execute on function %s to agentmem_caller, service_role', f);
  end loop;
end
$$;
