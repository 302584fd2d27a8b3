-- Scoring the rare words' messages first only when they can prove the answer.
--
-- agentmem.message_bm25_hits scores the messages of a question's rare words (and their
-- neighbours) first, and keeps that answer when its last candidate scores above the most the
-- common words could give a message without a rare word (common_bound: each common word's
-- weight at its most, twice, with the neighbours' credit). Else it scores every message of the
-- question's words again. A question naming both speakers and a few everyday words ("What did
-- Tomas say about his weekend hike with Grace?") has a bound of four common words, which a
-- message of one rare word cannot pass: the first pass was wasted every time, 15 of 42 ms for
-- that question over a user of 6,790 messages (auto_explain).
--
-- A rare word's message scores about the word's weight (one occurrence in a message of average
-- length: idf x 2.2 / 2.2), so the first pass is now tried only when the rare words' weights
-- together exceed the bound; otherwise the question goes straight to the full pass. Only the
-- work changes: the full pass is exact, and the first pass's answer is kept only when proven,
-- as before.

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
  '     and rare_docs * (case when follow_weight > 0 then 5 else 1 end) < all_docs
     -- and when their messages can score above what the common words could add
     and rare_weight > common_bound then');
