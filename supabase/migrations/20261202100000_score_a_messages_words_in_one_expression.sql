-- BM25 over messages scores each candidate in one expression, and a text list over messages
-- alone no longer counts the scope.
--
-- agentmem.message_bm25_scored scored each candidate message with a subquery: the question's
-- words unnested, each tested against the message, the weights summed. A question of three
-- words whose matches are 816 of a user's 6,790 messages spent 1.1 ms in those subqueries, of a
-- text list of about 4.5 ms. A subquery per row pays for its own executor state and its own
-- sum; the same tests as one expression, a term per word, take 0.65 ms.
--
-- Each word's term tests the word and, only in a message that holds it, the word in the name
-- (its ':A' tsquery), once: before, the name was tested twice. A question of up to eight words
-- is scored this way; a longer one by the subquery, as before. The terms are the subquery's
-- terms, summed in the same order, each computed from the same operations on the same values
-- (the name's test is 1 or 0 in place of the test itself): the scores are the same to the last
-- bit. A word past a question's last tests a null tsquery: null, so it adds 0. The text list
-- of that user's first 200 labelled questions: 4.4 ms p50 before, 3.6 ms after.
--
-- agentmem.recall_text_arm counted the scope's messages (up to RECALL_EXACT_LIMIT index
-- entries) to tell message_bm25_hits whether the scope is small, which it does not use: the
-- words' statistics and the index serve every scope alike. It now counts only for memories,
-- whose BM25 does use it.
--
-- On a large table: nothing is rewritten; only the functions change.

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

do $do$
declare
  -- a row's (m) own BM25, by a subquery over the words
  by_subquery constant text := $e$(select pg_catalog.sum(case when m.fts operator(pg_catalog.@@) w.tq
                       then w.idf * (1 + 2 * (m.fts operator(pg_catalog.@@) w.tqa)::int) * 2.2
                            / (1 + 2 * (m.fts operator(pg_catalog.@@) w.tqa)::int + 1.2 * (0.25 + 0.75 * pg_catalog.length(m.fts) / avgdl))
                       else 0 end)
              from rows from (pg_catalog.unnest(tqs), pg_catalog.unnest(tqas), pg_catalog.unnest(idfs)) w(tq, tqa, idf))::float8$e$;
  -- the same, a term per word for up to eight words
  by_terms text;
begin
  select pg_catalog.format($e$(case when pg_catalog.cardinality(tqs) <= 8 then
               %s
             else %s end)::float8$e$,
           pg_catalog.string_agg(pg_catalog.format($t$case when m.fts operator(pg_catalog.@@) tqs[%1$s] then
                 case when m.fts operator(pg_catalog.@@) tqas[%1$s]
                      then idfs[%1$s] * (1 + 2 * 1) * 2.2 / (1 + 2 * 1 + 1.2 * (0.25 + 0.75 * pg_catalog.length(m.fts) / avgdl))
                      else idfs[%1$s] * (1 + 2 * 0) * 2.2 / (1 + 2 * 0 + 1.2 * (0.25 + 0.75 * pg_catalog.length(m.fts) / avgdl)) end
               else 0 end$t$, i), $s$
             + $s$ order by i),
           by_subquery)
  into by_terms
  from pg_catalog.generate_series(1, 8) i;
  -- the matches' scores (each branch) and those of the turns read beside them
  perform pg_temp.patch_function('agentmem.message_bm25_scored(text, text, text, jsonb, text, text, timestamp with time zone, timestamp with time zone, tsquery, tsquery, integer, tsquery[], tsquery[], double precision[], double precision, double precision, integer, double precision)',
    by_subquery, by_terms, 3);
end
$do$;

select pg_temp.patch_function('agentmem.recall_text_arm(text, text, text, text, text, jsonb, timestamp with time zone, timestamp with time zone, text, text, integer, integer, double precision, boolean, boolean, boolean, boolean)',
  $old$  if own_exact is null and shared_exact is null and messages_exact is null then$old$,
  $new$  -- message_bm25_hits serves every scope alike: only memories need the count
  if with_memories and own_exact is null and shared_exact is null and messages_exact is null then$new$, 1);
