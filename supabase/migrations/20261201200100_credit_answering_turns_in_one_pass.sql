-- The answering-turn credit in linear time.
--
-- agentmem.message_bm25_scored credits a matching question to the answer after it, and a
-- repeating reply to the statement before it, by finding each scored turn's neighbours. It found
-- them by joining the scored turns to themselves twice; the planner cannot estimate a
-- materialized set returned by a function and joined them in nested loops, so the cost grew with
-- the square of the turns that match the question. On a user of 6,790 messages of natural
-- conversation, a question whose words are in a thousand of them ("When did Caroline go to the
-- support group?") spent 450 ms in those joins alone; questions of rarer words, or a user whose
-- matching turns are few, never showed it.
--
-- The neighbours are now read in one pass with lag and lead over each session's scored turns in
-- order, and used only when they are the turn just before or after (seq - 1, seq + 1), exactly
-- as the joins matched them: the same scores, in the same order.

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
    ),
    -- each row beside the turns just before (b) and after (a) it, when they were scored
    paired as (
      select s.session_id, s.seq, s.dist, s.question, s.eligible, s.bm25,
             case when pg_catalog.lag(s.seq) over w = s.seq - 1 then pg_catalog.lag(s.question) over w end as b_question,
             case when pg_catalog.lag(s.seq) over w = s.seq - 1 then pg_catalog.lag(s.bm25) over w end as b_bm25,
             case when pg_catalog.lead(s.seq) over w = s.seq + 1 then pg_catalog.lead(s.question) over w end as a_question,
             case when pg_catalog.lead(s.seq) over w = s.seq + 1 then pg_catalog.lead(s.bm25) over w end as a_bm25
      from scored s
      window w as (partition by s.session_id order by s.seq)
    )
    select s.session_id, s.seq,
           (s.bm25 + follow_weight * (case when s.b_question then s.b_bm25 else 0 end
                            + case when not s.question and not s.a_question then s.a_bm25 else 0 end))::float8,
           least(1, s.bm25 / best)::float8
    from paired s
    where s.eligible and s.dist < greatest(reach, 1)
    order by 3 desc, s.session_id, s.seq
    limit n;
end
$function$;
