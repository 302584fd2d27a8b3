-- BM25 over messages reads the turns beside its matches only where they can rank.
--
-- A message's score is its own BM25 plus a share of the turn before it (when that asks a
-- question) and of the turn after it (when neither asks one). The first pass of
-- agentmem.message_bm25_hits scores the messages of the question's rare words and the turns
-- beside them, and it read two turns either side of every such message by key, to have each
-- neighbour's own neighbours. For a question of the W3-sources user (100,000 messages) whose
-- rare words are in 1,496 of them: 5,768 reads by key, 23,000 buffers, 30 of the pass's 60 ms.
-- And because those reads cost five times the matches, the pass ran only when the rare words'
-- messages were under a twentieth of all the words' messages: a question of four rare words
-- (3,684 messages) beside a word held by half the user's messages scored 58,610 messages, 340 ms.
--
-- agentmem.message_bm25_scored now scores the matches first, from what the matches bring. A
-- turn beside a match that is not a match itself holds none of the rare words, so its own score
-- is at most what q's other words can give (each word's weight times 2: present once, in the
-- name, in a message of length 0). From that, every match and every turn beside one has a
-- bound on its score; every match has a floor (its own score and what the matches beside it
-- give). The n-th highest floor of the matches that may be returned is a score the answer
-- reaches; only the matches and turns whose bound reaches it can be in the answer. Their turns
-- either side are read by key, and they alone are scored in full. The answer is the same,
-- to the last bit: the same rows, the same sums in the same order. (A negative credit turns the
-- bounds over, and without n every candidate is wanted: then every spot is scored, as before.)
--
-- The first pass now runs when the rare words' messages are under a quarter of all the words'
-- messages (it was a twentieth), so that a pass that cannot prove its answer costs at most a
-- quarter more, and when it is likely to prove it: under a twentieth, as before, when the rare
-- words' weights together exceed what the common words could add to a message; else when the
-- weight of the rare word with which the rarest words' messages reach n exceeds it. Of the
-- W3-sources questions, 19 run the first pass where they scored every match before (one of
-- them 58,610 messages instead of 3,684). Of a user of natural conversation's 200 questions,
-- 14 waste a first pass, as before; the quarter alone wasted 92, a tenth 55.
--
-- On a large table: nothing is rewritten; only the functions change.

do $do$
declare
  -- whether a row (m) may be returned: the caller's filters
  eligible constant text := $e$
             ((p_filter = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) p_filter
                and not exists (select 1 from pg_catalog.jsonb_each(p_filter) f
                                where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
              and (p_speaker = '' or pg_catalog.lower(m.name) = pg_catalog.lower(p_speaker))
              and (p_role = '' or m.role = p_role)
              and (p_since is null or m.created_at >= p_since)
              and (p_until is null or m.created_at < p_until)) is true$e$;
  -- a row's (m) own BM25: each word's weight, tripled in the name, saturated by the length
  bm25 constant text := $e$
             (select pg_catalog.sum(case when m.fts operator(pg_catalog.@@) w.tq
                       then w.idf * (1 + 2 * (m.fts operator(pg_catalog.@@) w.tqa)::int) * 2.2
                            / (1 + 2 * (m.fts operator(pg_catalog.@@) w.tqa)::int + 1.2 * (0.25 + 0.75 * pg_catalog.length(m.fts) / avgdl))
                       else 0 end)
              from rows from (pg_catalog.unnest(tqs), pg_catalog.unnest(tqas), pg_catalog.unnest(idfs)) w(tq, tqa, idf))::float8$e$;
  -- q_cand's matches, with what scoring reads of them (cand), scored alone (matched)
  matches constant text := $e$
    cand as materialized (
      select w.session_id, w.seq, w.fts, w.question, w.metadata, w.name, w.role, w.created_at
      from agentmem.message_word_matches(p_user_id, p_tenant_id, p_agent, q_cand) w
    ),
    matched as materialized (
      select m.session_id, m.seq, m.question, %1$s as eligible,
             %2$s as bm25
      from cand m
    )$e$;
  -- the scored rows (scored) with the credit of the turns just before (b) and after (a) each,
  -- when those were scored: the final scores of the rows that may be returned
  ranked constant text := $e$
    paired as (
      select s.session_id, s.seq, s.question, s.eligible, s.bm25,
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
    where s.eligible$e$;
begin
  execute pg_catalog.format($f$
create or replace function agentmem.message_bm25_scored(p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_speaker text, p_role text, p_since timestamp with time zone, p_until timestamp with time zone, q tsquery, q_cand tsquery, reach integer, tqs tsquery[], tqas tsquery[], idfs double precision[], avgdl double precision, best double precision, n integer, follow_weight double precision)
 returns table(session_id uuid, seq bigint, score double precision, relevance double precision)
 language plpgsql
 stable
 set search_path to ''
 set plan_cache_mode to 'force_custom_plan'
as $body$
-- The top n messages matching q by their score: own BM25 plus follow_weight times the credit
-- of the turns beside them. The candidates are q_cand's matches and, when reach is above 0, the
-- turns just beside them that match q; the caller bounds what the others could score (none
-- when q_cand is q).
declare
  -- the most a message that holds none of q_cand's words can score alone: q's other words
  others double precision := 0;
  fw double precision := greatest(follow_weight, 0);
  i integer;
begin
  if reach <= 0 then
    return query
      with %4$s,
      scored as (select * from matched),
      %3$s
      order by 3 desc, s.session_id, s.seq
      limit n;
    return;
  end if;

  for i in 1 .. coalesce(pg_catalog.array_length(tqs, 1), 0) loop
    if q operator(pg_catalog.@>) tqs[i] and not q_cand operator(pg_catalog.@>) tqs[i] then
      others := others + idfs[i] * 2;
    end if;
  end loop;

  return query
    with %4$s,
    -- the matches, and the turns just beside them that are not matches, known by their place
    -- only (bm25 null): they may not exist, or not match q
    spots as (
      select m.session_id, m.seq, m.question, m.eligible, m.bm25 from matched m
      union all
      select distinct m.session_id, m.seq + d.d, null::boolean, null::boolean, null::float8
      from matched m cross join (values (-1), (1)) d(d)
      where not exists (select 1 from matched x where x.session_id = m.session_id and x.seq = m.seq + d.d)
    ),
    -- the credit of the turn before (b) and after (a) each spot, where those are matches
    known as (
      select s.session_id, s.seq, s.eligible, s.bm25,
             case when pg_catalog.lag(s.seq) over w = s.seq - 1 and pg_catalog.lag(s.bm25) over w is not null
                  then case when pg_catalog.lag(s.question) over w then pg_catalog.lag(s.bm25) over w else 0 end end as b_credit,
             case when s.question then 0
                  when pg_catalog.lead(s.seq) over w = s.seq + 1 and pg_catalog.lead(s.bm25) over w is not null
                  then case when pg_catalog.lead(s.question) over w then 0 else pg_catalog.lead(s.bm25) over w end end as a_credit
      from spots s
      window w as (partition by s.session_id order by s.seq)
    ),
    -- the most each spot can score, and the least each match that may be returned does
    bounded as materialized (
      select k.session_id, k.seq,
             coalesce(k.bm25, others) + fw * (coalesce(k.b_credit, others) + coalesce(k.a_credit, others)) as ceiling,
             case when k.eligible then k.bm25 + fw * (coalesce(k.b_credit, 0) + coalesce(k.a_credit, 0)) end as floor
      from known k
    ),
    -- a score n of the matches reach (none: every spot can rank; so too when the credit is
    -- negative, which turns the bounds over, or no n is given)
    bar as (
      select coalesce(case when follow_weight >= 0 and n is not null then
                        (select b.floor from bounded b where b.floor is not null
                         order by b.floor desc offset greatest(n - 1, 0) limit 1) end,
                      '-infinity'::float8) as v
    ),
    -- the spots that can rank, a little below the bar for the rounding of a sum
    contenders as materialized (
      select b.session_id, b.seq from bounded b, bar
      where b.ceiling >= bar.v - 1e-9 * greatest(pg_catalog.abs(bar.v), 1)
    ),
    -- the turns a contender's score reads that are not matches: itself, before and after
    wanted as (
      select distinct c.session_id, c.seq + d.d as seq
      from contenders c cross join (values (-1), (0), (1)) d(d)
      where not exists (select 1 from matched x where x.session_id = c.session_id and x.seq = c.seq + d.d)
    ),
    -- each read by its key (a subquery the planner keeps whole): as a join, planned from a guess
    -- at how many are wanted, it could read all of the user's messages
    near as materialized (
      select m.session_id, m.seq, m.question,
             %1$s as eligible,
             %2$s as bm25
      from wanted x cross join lateral (
        select y.session_id, y.seq, pg_catalog.right(pg_catalog.rtrim(y.content), 1) = '?' as question,
               y.fts, y.metadata, y.name, y.role, y.created_at
        from agentmem.messages y
        where y.session_id = x.session_id and y.seq = x.seq
          and y.user_id = p_user_id and y.tenant_id = p_tenant_id and (p_agent = '' or y.agent = p_agent)
          and y.expires_at > pg_catalog.now() and y.fts operator(pg_catalog.@@) q
        offset 0) m
    ),
    scored as (
      select m.session_id, m.seq, m.question, m.eligible, m.bm25 from matched m
      union all
      select m.session_id, m.seq, m.question, m.eligible, m.bm25 from near m
    ),
    %3$s
      and exists (select 1 from contenders c where c.session_id = s.session_id and c.seq = s.seq)
    order by 3 desc, s.session_id, s.seq
    limit n;
end
$body$
$f$, eligible, bm25, ranked, pg_catalog.format(matches, eligible, bm25));
end
$do$;


-- The first pass's q names only the words some message holds (the rare and the common ones):
-- a word none holds adds nothing to what a turn beside a match can score.
create or replace function agentmem.message_bm25_hits(p_user_id text, p_tenant_id text, p_agent text, p_filter jsonb, p_speaker text, p_role text, p_since timestamp with time zone, p_until timestamp with time zone, terms text[], n integer, exact boolean, follow_weight double precision)
 RETURNS TABLE(session_id uuid, seq bigint, score double precision, relevance double precision)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO ''
 SET plan_cache_mode TO 'force_custom_plan'
AS $$
declare
  q tsquery := agentmem.terms_query(terms);
  docs double precision;
  avgdl double precision;
  dfs double precision[];
  idfs double precision[];
  best double precision := 0;
  -- the words held by more than a twentieth of the scope, and the most they can add
  rare text[];
  common text[];
  common_bound double precision := 0;
  -- how many messages hold a rare word, and any word (sums of the words' counts: bounds)
  rare_docs double precision := 0;
  all_docs double precision := 0;
  -- the rare words' weights together, and each rare word's count and weight
  rare_weight double precision := 0;
  rare_dfs double precision[];
  rare_idfs double precision[];
  -- the weight of the rare word with which the rarest words' messages reach n: about what the
  -- n-th best of them scores
  nth_weight double precision;
  first_pass boolean := false;
  tqs tsquery[];
  tqas tsquery[];
  i integer;
  found integer;
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
    all_docs := all_docs + dfs[i];
    if dfs[i] > docs / 20 then
      -- tf 1 in the name (3) of a message of length 0: 3 x 2.2 / (3 + 1.2 x 0.25) = 2
      common_bound := common_bound + idfs[i] * 2;
      common := common || terms[i];
    elsif dfs[i] > 0 then
      rare := rare || terms[i];
      rare_docs := rare_docs + dfs[i];
      rare_weight := rare_weight + idfs[i];
      rare_dfs := rare_dfs || dfs[i];
      rare_idfs := rare_idfs || idfs[i];
    end if;
  end loop;
  best := greatest(best, 1e-9);
  -- a message two places or more from every rare word's message: its own score from the
  -- common words, and the credit of each neighbour, no more than that
  common_bound := common_bound * (1 + 2 * greatest(follow_weight, 0));

  -- the rare words' messages first (the turns beside them are read only where they can rank:
  -- agentmem.message_bm25_scored), when they are under a quarter of the messages of all the
  -- words, so that a pass that cannot prove its answer costs at most a quarter more, and when
  -- it is likely to prove it: under a twentieth (or without credit, when the pass reads no turn
  -- beside its matches), their weights together above what the common words could add to a
  -- message; or the weight of the rare word with which the rarest words' messages reach n
  -- above it
  if rare is not null and common_bound > 0 and rare_docs * 4 < all_docs then
    first_pass := (rare_docs * 20 < all_docs or follow_weight <= 0) and rare_weight > common_bound;
    if not first_pass then
      select coalesce(
        (select x.idf from (
           select u.idf, pg_catalog.sum(u.df) over (order by u.df, u.idf desc rows unbounded preceding) as reached
           from rows from (pg_catalog.unnest(rare_dfs), pg_catalog.unnest(rare_idfs)) u(df, idf)) x
         where x.reached >= n order by x.reached limit 1),
        (select pg_catalog.min(u.idf) from pg_catalog.unnest(rare_idfs) u(idf)))
      into nth_weight;
      first_pass := nth_weight > common_bound;
    end if;
  end if;
  if first_pass then
    return query
      with hits as (select * from agentmem.message_bm25_scored(
        p_user_id, p_tenant_id, p_agent, p_filter, p_speaker, p_role, p_since, p_until,
        agentmem.terms_query(rare || common), agentmem.terms_query(rare), case when follow_weight > 0 then 2 else 0 end,
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
