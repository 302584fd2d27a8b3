-- Words found through the full-text index under row-level security.
--
-- Row-level security lets an index serve a condition only when its operator is leakproof, and
-- tsvector @@ tsquery is not: under the functions' role, BM25 found a message's words by
-- reading every message of the user (through the owner index) and testing each, 6 ms for 6,000
-- messages, where the full-text index answers in a tenth of that. Now:
--
-- - agentmem.message_word_matches(user, tenant, agent, query) answers the unexpired messages of
--   one scope that match a query through the full-text index. It runs with its owner's rights
--   (as row-level security cannot serve it) and so checks what row-level security would: the
--   scope must be the caller's own (agentmem.current_user_id() and current_tenant() of the
--   request's claims), else it answers nothing; and it answers only where messages are, never
--   what they say. Only the functions' role and service_role may call it.
-- - agentmem.message_bm25_scored takes its candidates from it; the messages it then reads and
--   scores are read under row-level security, as before.
-- - The word counts' primary key puts the lexeme before the agent, so that a scope's counts of
--   the query's words are found directly whatever the agent.
--
-- On a large table: the counts' primary key is built again (the table holds one row per scope
-- and word, far fewer than the messages), under a lock that holds off commits while it lasts.

alter table agentmem.message_words drop constraint message_words_pkey,
  add constraint message_words_pkey primary key (user_id, tenant_id, lexeme, agent);

create function agentmem.message_word_matches(p_user_id text, p_tenant_id text, p_agent text, q tsquery)
returns table (session_id uuid, seq bigint)
language sql
stable
security definer
set search_path = ''
as $$
  select m.session_id, m.seq from agentmem.messages m
  where p_user_id = agentmem.current_user_id() and p_tenant_id = agentmem.current_tenant()
    and m.user_id = p_user_id and m.tenant_id = p_tenant_id and (p_agent = '' or m.agent = p_agent)
    and m.expires_at > pg_catalog.now() and m.fts operator(pg_catalog.@@) q
$$;

revoke all on function agentmem.message_word_matches(text, text, text, tsquery) from public, anon, authenticated;
grant execute on function agentmem.message_word_matches(text, text, text, tsquery) to agentmem_caller, service_role;

create or replace function agentmem.message_bm25_scored(p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_speaker text, p_role text, p_since timestamp with time zone, p_until timestamp with time zone, q tsquery, q_cand tsquery, reach integer, tqs tsquery[], tqas tsquery[], idfs double precision[], avgdl double precision, best double precision, n integer, follow_weight double precision)
 RETURNS TABLE(session_id uuid, seq bigint, score double precision, relevance double precision)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
begin
  return query
    with
    cand as materialized (
      select w.session_id, w.seq from agentmem.message_word_matches(p_user_id, p_tenant_id, p_agent, q_cand) w
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
$function$;
