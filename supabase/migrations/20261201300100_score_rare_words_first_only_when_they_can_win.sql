-- Scoring the rare words' messages first only when that is likely to pay.
--
-- agentmem.message_bm25_hits scores the messages of a question's rare words (and their
-- neighbours) first, and keeps that answer when its last candidate scores above the most the
-- common words could give a message without a rare word (common_bound: each common word's
-- weight at its most, twice, with the neighbours' credit). Else it scores every message of the
-- question's words again, and the first pass was wasted. It was tried whenever it read fewer
-- messages than the full pass. On the labelled conversations (a user of 6,790 messages, 300 of
-- their questions, asked of the function directly) 229 of them had to be scored again: a
-- question naming both speakers and a few everyday words ("What did Tomas say about his weekend
-- hike with Grace?") has a bound a message of one rare word cannot pass.
--
-- It is now tried only when both:
-- - the rare words' weights together exceed the bound (a message of one rare word scores about
--   that word's weight: one occurrence at the average length, idf x 2.2 / 2.2); and
-- - the first pass reads at most a quarter of the messages the full pass reads (the rare words'
--   messages and the neighbours they reach against the messages of every word): under the
--   first rule alone, 130 of the 154 questions it let through were scored again, so a larger
--   first pass costs more than it saves.
--
-- The same 300 questions, the three versions asked in turn, question by question: p50 23.9 ms
-- before, 17.7 ms now (mean 24.9 and 19.9); second passes 229, now 24. The synthetic user of
-- the words workload, whose every question names a speaker found in three quarters of the
-- messages, keeps its first passes: p50 6.69 ms before, 6.75 now. Only the work changes: the
-- full pass is exact, and a first pass's answer is kept only when proven, as before: the
-- answers to all 591 labelled questions and the 220 synthetic ones are the same, to the ninth
-- digit of every score.

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
  'agentmem.message_bm25_hits(text,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,text[],integer,boolean,double precision)',
  '  all_docs double precision := 0;',
  '  all_docs double precision := 0;
  -- the rare words'' weights together: about what a message of them scores
  rare_weight double precision := 0;');

select pg_temp.patch_function(
  'agentmem.message_bm25_hits(text,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,text[],integer,boolean,double precision)',
  '      rare_docs := rare_docs + dfs[i];',
  '      rare_docs := rare_docs + dfs[i];
      rare_weight := rare_weight + idfs[i];');

select pg_temp.patch_function(
  'agentmem.message_bm25_hits(text,text,text,jsonb,text,text,timestamp with time zone,timestamp with time zone,text[],integer,boolean,double precision)',
  '     and rare_docs * (case when follow_weight > 0 then 5 else 1 end) < all_docs then',
  '     and rare_docs * (case when follow_weight > 0 then 5 else 1 end) * 4 < all_docs
     -- (at most a quarter of them), and when their messages can score above what the common
     -- words could add
     and rare_weight > common_bound then');
