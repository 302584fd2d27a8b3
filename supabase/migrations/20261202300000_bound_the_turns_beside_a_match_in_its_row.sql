-- The turns beside a match are bounded in the match's row.
--
-- agentmem.message_bm25_scored (the pass that reads the turns beside its matches) bounds what
-- each match, and each turn just before or after one that is not a match, can score, to read
-- only the turns that can rank. It wrote those turns as rows of their own beside the matches'
-- (a union of three selections of the matches), kept them all, and found the turns a
-- contender reads that are not matches with an anti-join of every contender's three turns
-- against the matches. For a user of 100,000 messages whose question matched 1,429: 4,236 rows
-- bounded, and the 1,429 matches sorted again for the anti-join.
--
-- Each match's row now carries the three bounds: its own, the turn before it's and the turn
-- after it's (null where that turn is a match, or is bounded as the turn before the next
-- match). The contenders are the three bounds above the bar, each a selection of the matches'
-- rows; and which of the turns a contender reads are not matches is known from its place, as
-- the window over the matches already tells: the turn before a match is one when it is the
-- match before it, and so on. The bounds are the same expressions of the same values, so the
-- same rows rank, with the same scores, to the last bit.
--
-- That user's 200 questions, the text list inside the server: 16.2 to 20.4 ms p50 before,
-- 15.1 to 16.3 after (alternated six times). A user of 6,790 messages: 3.8 to 3.9 ms, before
-- and after.
--
-- On a large table: nothing is rewritten; only the function changes.

create or replace function pg_temp.patch_function(fn regprocedure, old text, new text, times integer) returns void
language plpgsql
as $$
declare
  def text := pg_catalog.pg_get_functiondef(fn);
  found integer := (pg_catalog.length(def) - pg_catalog.length(pg_catalog.replace(def, old, ''))) / pg_catalog.length(old);
begin
  if found <> times then
    raise exception 'patch of %: the text to change is there % times, not %: %', fn, found, times, old;
  end if;
  execute pg_catalog.replace(def, old, new);
end
$$;

select pg_temp.patch_function('agentmem.message_bm25_scored(text, text, text, jsonb, text, text, timestamp with time zone, timestamp with time zone, tsquery, tsquery, integer, tsquery[], tsquery[], double precision[], double precision, double precision, integer, double precision)',
  $old$    -- the matches, and the turns just beside them that are not matches, known by their place
    -- only (bm25 null: they may not exist, or not match q); with the credit of the turn before
    -- (b) and after (a) each, where those are matches (a scored match: bm25 not null)
    known as (
      select l.session_id, l.seq, l.eligible, l.bm25,
             case when l.p_seq = l.seq - 1 and l.p_bm25 is not null
                  then case when l.p_question then l.p_bm25 else 0 end end as b_credit,
             case when l.question then 0
                  when l.n_seq = l.seq + 1 and l.n_bm25 is not null
                  then case when l.n_question then 0 else l.n_bm25 end end as a_credit
      from linked l
      union all
      -- the turn before a match, where that is not one
      select l.session_id, l.seq - 1, null::boolean, null::float8,
             case when l.p_seq = l.seq - 2 and l.p_bm25 is not null
                  then case when l.p_question then l.p_bm25 else 0 end end,
             case when l.bm25 is not null then case when l.question then 0 else l.bm25 end end
      from linked l
      where l.p_seq is distinct from l.seq - 1
      union all
      -- the turn after a match, where that is not one, nor the turn before the next match
      -- (known above): the turn after it is no match of q_cand, its credit unknown (null)
      select l.session_id, l.seq + 1, null::boolean, null::float8,
             case when l.bm25 is not null then case when l.question then l.bm25 else 0 end end,
             null::float8
      from linked l
      where l.n_seq is distinct from l.seq + 1 and l.n_seq is distinct from l.seq + 2
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
    ),$old$,
  $new$    -- what each match can score at most (ceiling) and at least (floor, where it may be
    -- returned), from the credit of the turn before (b) and after (a) it where those are
    -- matches (a scored match: bm25 not null); and what the turn before it and the turn after
    -- it can score at most, where that turn is not a match (before_ceiling, after_ceiling; null
    -- where it is one, and for the turn after, where it is the turn before the next match,
    -- bounded there). Such a turn is known by its place only (it may not exist, or not match q);
    -- its credit comes from the matches beside it: the turn after the one after a match is no
    -- match of q_cand, its credit unknown.
    bounded as materialized (
      select l.session_id, l.seq, l.p_seq, l.n_seq,
             coalesce(l.bm25, others) + fw * (coalesce(l.b_credit, others) + coalesce(l.a_credit, others)) as ceiling,
             case when l.eligible then l.bm25 + fw * (coalesce(l.b_credit, 0) + coalesce(l.a_credit, 0)) end as floor,
             case when l.p_seq is distinct from l.seq - 1 then
               others + fw * (coalesce(case when l.p_seq = l.seq - 2 and l.p_bm25 is not null
                                            then case when l.p_question then l.p_bm25 else 0 end end, others)
                              + coalesce(case when l.bm25 is not null then case when l.question then 0 else l.bm25 end end, others))
             end as before_ceiling,
             case when l.n_seq is distinct from l.seq + 1 and l.n_seq is distinct from l.seq + 2 then
               others + fw * (coalesce(case when l.bm25 is not null then case when l.question then l.bm25 else 0 end end, others)
                              + others)
             end as after_ceiling
      from (
        select l.*,
               case when l.p_seq = l.seq - 1 and l.p_bm25 is not null
                    then case when l.p_question then l.p_bm25 else 0 end end as b_credit,
               case when l.question then 0
                    when l.n_seq = l.seq + 1 and l.n_bm25 is not null
                    then case when l.n_question then 0 else l.n_bm25 end end as a_credit
        from linked l) l
    ),
    -- a score n of the matches reach (none: every turn can rank; so too when the credit is
    -- negative, which turns the bounds over, or no n is given)
    bar as (
      select coalesce(case when follow_weight >= 0 and n is not null then
                        (select b.floor from bounded b where b.floor is not null
                         order by b.floor desc offset greatest(n - 1, 0) limit 1) end,
                      '-infinity'::float8) as v
    ),
    -- the turns that can rank, a little below the bar for the rounding of a sum; with which of
    -- the turns their score reads are not matches (itself, the turn before, the turn after),
    -- known from their place: the turn two before a match is one when it is the match before
    -- it, and the turn two after it is none where the turn after it is bounded
    contenders as materialized (
      select b.session_id, b.seq - 1 as seq, true as reads_own, b.p_seq is distinct from b.seq - 2 as reads_before,
             false as reads_after
      from bounded b, bar where b.before_ceiling >= bar.v - 1e-9 * greatest(pg_catalog.abs(bar.v), 1)
      union all
      select b.session_id, b.seq, false, b.p_seq is distinct from b.seq - 1, b.n_seq is distinct from b.seq + 1
      from bounded b, bar where b.ceiling >= bar.v - 1e-9 * greatest(pg_catalog.abs(bar.v), 1)
      union all
      select b.session_id, b.seq + 1, true, false, true
      from bounded b, bar where b.after_ceiling >= bar.v - 1e-9 * greatest(pg_catalog.abs(bar.v), 1)
    ),
    -- the turns a contender's score reads that are not matches
    wanted as (
      select distinct c.session_id, c.seq + d.d as seq
      from contenders c cross join lateral (values (-1, c.reads_before), (0, c.reads_own), (1, c.reads_after)) d(d, wanted)
      where d.wanted
    ),$new$, 1);
