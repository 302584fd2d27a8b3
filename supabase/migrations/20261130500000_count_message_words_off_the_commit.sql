-- Word counts for BM25 off the commit's path.
--
-- Every commit used to add its messages' lexemes to agentmem.message_words at once: some 70
-- upserts for a turn of two messages, and every commit of a user updated the same row (the
-- scope's totals) and held it to the end of its transaction, so that one user's concurrent
-- commits waited for each other's disk flush. Now:
--
-- - A commit adds one narrow row per message to agentmem.message_words_pending (the messages
--   not yet counted), and counts nothing.
-- - agentmem.fold_message_words(user, tenant, agent, max_rows) counts pending messages into
--   agentmem.message_words and deletes their pending rows, scope by scope in key order, skipping
--   rows another fold holds. A commit calls it for its scope when the scope holds
--   fold_threshold() pending messages or more (checked only when the commit's messages cross a
--   multiple of 32 in their session), so a scope's pending messages stay few; the sweep folds
--   the rest (any scope, with max_rows a batch).
-- - agentmem.message_bm25_hits adds a scope's pending, unexpired messages to the counts at
--   query time, so the statistics are exactly those of the stored, unexpired messages, as
--   before.
-- - A deleted message that was still pending leaves the pending rows, and only the counted ones
--   are subtracted; a rewritten message that is pending needs no recount.
--
-- On a large table: nothing is rewritten or read; the pending table starts empty.

create table agentmem.message_words_pending (
  user_id text collate "C" not null,
  tenant_id text not null,
  agent text not null,
  session_id uuid not null,
  seq bigint not null,
  primary key (user_id, tenant_id, agent, session_id, seq)
);

alter table agentmem.message_words_pending enable row level security;
create policy caller_owner on agentmem.message_words_pending as permissive for select to agentmem_caller
  using (user_id = (select agentmem.current_user_id()) and tenant_id = (select agentmem.current_tenant()));
create policy no_client_access on agentmem.message_words_pending as restrictive for all to anon, authenticated
  using (false) with check (false);
revoke all on agentmem.message_words_pending from public, anon, authenticated, agentmem_caller, service_role;
grant select on agentmem.message_words_pending to agentmem_caller;
grant select, delete on agentmem.message_words_pending to service_role;

-- How many pending messages a scope may hold before a commit folds them.
create function agentmem.fold_threshold() returns integer
language sql immutable parallel safe
set search_path = ''
as $$ select 256 $$;

revoke all on function agentmem.fold_threshold() from public, anon, authenticated;
grant execute on function agentmem.fold_threshold() to service_role;

-- Counts up to max_rows pending messages (of one scope, or of any when p_user_id is null) into
-- agentmem.message_words, in key order, and answers how many it counted. Pending rows another
-- fold holds are skipped. The counts' rows are written in one order by every writer, so two
-- folds, or a fold and a delete, never deadlock on them.
create function agentmem.fold_message_words(p_user_id text, p_tenant_id text, p_agent text, max_rows integer)
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
  with batch as (
    delete from agentmem.message_words_pending p
    using (
      select q.user_id, q.tenant_id, q.agent, q.session_id, q.seq from agentmem.message_words_pending q
      where p_user_id is null
         or (q.user_id = p_user_id and q.tenant_id = p_tenant_id and q.agent = p_agent)
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
    from batch b join agentmem.messages m on m.session_id = b.session_id and m.seq = b.seq
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

revoke all on function agentmem.fold_message_words(text, text, text, integer) from public, anon, authenticated;
grant execute on function agentmem.fold_message_words(text, text, text, integer) to service_role;

-- Inserted messages become pending (and a scope with many pending is folded); deleted ones
-- leave the pending rows, and those already counted are subtracted.
create or replace function agentmem.count_message_words() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  sc record;
  gone_sessions uuid[];
  gone_seqs bigint[];
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
  end if;
  return null;
end
$$;

-- A message rewritten (none is today) moves its counts; a pending one moves its pending row.
create or replace function agentmem.recount_message_words() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from agentmem.message_words_pending p
  where p.user_id = old.user_id and p.tenant_id = old.tenant_id and p.agent = old.agent
    and p.session_id = old.session_id and p.seq = old.seq;
  if found then
    insert into agentmem.message_words_pending (user_id, tenant_id, agent, session_id, seq)
    values (new.user_id, new.tenant_id, new.agent, new.session_id, new.seq);
    return null;
  end if;
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

create or replace function agentmem.truncate_message_words() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  truncate agentmem.message_words, agentmem.message_words_pending;
  return null;
end
$$;

-- The n messages of a user that best match some lexemes by BM25, as before, with the pending
-- messages counted at query time.
create or replace function agentmem.message_bm25_hits(p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_speaker text, p_role text, p_since timestamp with time zone, p_until timestamp with time zone, terms text[], n integer, exact boolean, follow_weight double precision)
 RETURNS TABLE(session_id uuid, seq bigint, score double precision, relevance double precision)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
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
  -- the scope's counted messages, less those expired and not yet swept, plus those not yet
  -- counted (agentmem.message_words_pending) and unexpired
  with expired as (
    select m.fts from agentmem.sessions s
      join agentmem.messages m on m.session_id = s.id
    where s.user_id = p_user_id and s.tenant_id = p_tenant_id
      and m.user_id = p_user_id and m.tenant_id = p_tenant_id
      and (p_agent = '' or m.agent = p_agent)
      and m.expires_at <= pg_catalog.now()
      and not exists (select 1 from agentmem.message_words_pending p
                      where p.user_id = m.user_id and p.tenant_id = m.tenant_id and p.agent = m.agent
                        and p.session_id = m.session_id and p.seq = m.seq)
  ),
  fresh as (
    select m.fts from agentmem.message_words_pending p
      join agentmem.messages m on m.session_id = p.session_id and m.seq = p.seq
    where p.user_id = p_user_id and p.tenant_id = p_tenant_id and (p_agent = '' or p.agent = p_agent)
      and m.user_id = p_user_id and m.tenant_id = p_tenant_id
      and m.expires_at > pg_catalog.now()
  ),
  counted as (
    select w.lexeme, w.docs, w.length
    from agentmem.message_words w
    where w.user_id = p_user_id and w.tenant_id = p_tenant_id and (p_agent = '' or w.agent = p_agent)
      and w.lexeme = any (terms operator(pg_catalog.||) ''::text)
    union all
    select u.lexeme, pg_catalog.count(*), 0 from fresh f, pg_catalog.unnest(f.fts) u
    where u.lexeme = any (terms) group by u.lexeme
    union all
    select '', pg_catalog.count(*), coalesce(pg_catalog.sum(pg_catalog.length(f.fts)), 0) from fresh f
  ),
  stored as (
    select c.lexeme, pg_catalog.sum(c.docs) as docs, pg_catalog.sum(c.length) as length
    from counted c group by c.lexeme
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
$function$;
