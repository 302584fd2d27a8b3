-- The turns beside a message's matches are bounded from the matches alone.
--
-- agentmem.message_bm25_scored (the pass that reads the turns beside its matches) bounds what
-- each match, and each turn just before or after one, can score, to read only the turns that
-- can rank. It put the matches and those turns together (an anti-join of every match's two
-- neighbours with the matches, made distinct and sorted) and read each one's neighbours with a
-- window over all of them; and its answer paired every match with its neighbours, again with a
-- window over all of them. For a user of 100,000 messages whose question matched 1,429, that is
-- 4,236 rows bounded and 1,452 paired, to answer 20, and most of the 12 ms the list spends
-- after reading its matches.
--
-- A turn beside a match that is not a match has nothing of its own that the bounds read: its
-- credit comes from the matches on either side of it. So one window over the matches alone
-- (each with the match before and after it in its session) gives every bound: a match's, from
-- the matches next to it; the turn before a match (where that is not one), from the match and
-- the one two turns before; the turn after (where that is not one, nor the turn before the next
-- match), from the match, with the credit of the turn after it unknown (bounded by what a turn
-- without q_cand's words can score): that turn is no match of q_cand, but may match q. The
-- bounds are the same expressions of the same values: the same rows rank, with the same scores,
-- to the last bit. The answer pairs only the rows within a turn of a row that can rank.
--
-- That user's 200 questions, the text list inside the server: 18.3 to 20.7 ms p50 before, 14.9
-- to 15.2 after (15.5 to 15.6 with the bounds alone, 17.2 to 17.5 with the pairing alone). A
-- user of 6,790 messages, whose questions match a few hundred: 4.1 to 4.2 ms, before and after.
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
    ),$old$,
  $new$    -- each match beside the matches before (p) and after (n) it in its session
    linked as (
      select m.session_id, m.seq, m.question, m.eligible, m.bm25,
             pg_catalog.lag(m.seq) over w as p_seq, pg_catalog.lag(m.question) over w as p_question,
             pg_catalog.lag(m.bm25) over w as p_bm25,
             pg_catalog.lead(m.seq) over w as n_seq, pg_catalog.lead(m.question) over w as n_question,
             pg_catalog.lead(m.bm25) over w as n_bm25
      from matched m
      window w as (partition by m.session_id order by m.seq)
    ),
    -- the matches, and the turns just beside them that are not matches, known by their place
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
    ),$new$, 1);

select pg_temp.patch_function('agentmem.message_bm25_scored(text, text, text, jsonb, text, text, timestamp with time zone, timestamp with time zone, tsquery, tsquery, integer, tsquery[], tsquery[], double precision[], double precision, double precision, integer, double precision)',
  $old$    scored as (
      select m.session_id, m.seq, m.question, m.eligible, m.bm25 from matched m
      union all$old$,
  $new$    -- the rows a contender's score reads: within a turn of it (the window below reads no
    -- further)
    scored as (
      select m.session_id, m.seq, m.question, m.eligible, m.bm25 from matched m
      where (m.session_id, m.seq) in (select c.session_id, c.seq + d.d
                                      from contenders c cross join (values (-1), (0), (1)) d(d))
      union all$new$, 1);
