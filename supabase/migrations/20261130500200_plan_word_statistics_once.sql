-- BM25's statistics planned once per connection.
--
-- agentmem.message_bm25_hits is planned for its arguments at every call (its candidates' plan
-- depends on them), and so was its first statement, which reads the scope's word counts: a
-- millisecond of planning for a fifth of one of running. That statement is now
-- agentmem.message_word_stats, planned once per connection: the same counts, the same answer.
--
-- On a large table: only functions change.

create function agentmem.message_word_stats(p_user_id text, p_tenant_id text, p_agent text, terms text[],
  out docs double precision, out avgdl double precision, out dfs double precision[])
language plpgsql
stable
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
as $function$
begin
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
end
$function$;

revoke all on function agentmem.message_word_stats(text, text, text, text[]) from public, anon, authenticated;
grant execute on function agentmem.message_word_stats(text, text, text, text[]) to agentmem_caller, service_role;

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
  select s.docs, s.avgdl, s.dfs into docs, avgdl, dfs
  from agentmem.message_word_stats(p_user_id, p_tenant_id, p_agent, terms) s;
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
