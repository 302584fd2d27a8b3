-- BM25 over messages scores each candidate in one expression, planned once a connection, and a
-- text list over messages alone no longer counts the scope.
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
-- bit. A word past a question's last tests a null tsquery: null, so it adds 0. The terms serve
-- only the arrays message_bm25_hits passes (one dimension from 1, as long as each other, no
-- null weight or name test) and a known average length; other values, from a direct call, take
-- the subquery. Which way is decided once a call, from the arguments alone.
--
-- message_bm25_scored was also planned for its values at every call (force_custom_plan), since
-- it read the messages itself; agentmem.message_word_matches reads them now, in a call of its
-- own (planned there without the outer statement's values, under either setting). Nothing the
-- values could change is left in message_bm25_scored's statements' plans, and the first pass's
-- statement, the larger, took longer to plan than to run for a user of 6,000 messages: its
-- statements are now planned once a connection. So are agentmem.message_bm25_hits' (each reads
-- functions alone: about 0.2 ms of the text list below).
--
-- The text list of a user of 6,790 messages, their first 200 labelled questions, inside the
-- server: 4.5 to 4.6 ms p50 before, 3.6 to 3.9 ms after. Of a user of 6,000 messages whose
-- questions name a speaker held by three quarters of them, through the store: 3.4 to 3.6 ms
-- before, 2.1 to 2.3 after.
--
-- agentmem.recall_text_arm counted the scope's messages (up to RECALL_EXACT_LIMIT index
-- entries) to tell message_bm25_hits whether the scope is small, which it does not use: the
-- words' statistics and the index serve every scope alike. It now counts memories alone, and
-- only when it searches them: their BM25 does use it. agentmem.recall_sources (the one
-- statement) counts messages only when it ranks them by vector too.
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
  by_words text;
begin
  select pg_catalog.format($e$(case when by_terms then
               %s
             else %s end)::float8$e$,
           pg_catalog.string_agg(pg_catalog.format($t$case when m.fts operator(pg_catalog.@@) tqs[%1$s] then
                 case when m.fts operator(pg_catalog.@@) tqas[%1$s]
                      then idfs[%1$s] * (1 + 2 * 1) * 2.2 / (1 + 2 * 1 + 1.2 * (0.25 + 0.75 * pg_catalog.length(m.fts) / avgdl))
                      else idfs[%1$s] * (1 + 2 * 0) * 2.2 / (1 + 2 * 0 + 1.2 * (0.25 + 0.75 * pg_catalog.length(m.fts) / avgdl)) end
               else 0 end$t$, i), $s$
             + $s$ order by i),
           by_subquery)
  into by_words
  from pg_catalog.generate_series(1, 8) i;
  -- the matches' scores (each branch) and those of the turns read beside them
  perform pg_temp.patch_function('agentmem.message_bm25_scored(text, text, text, jsonb, text, text, timestamp with time zone, timestamp with time zone, tsquery, tsquery, integer, tsquery[], tsquery[], double precision[], double precision, double precision, integer, double precision)',
    by_subquery, by_words, 3);
  -- whether the arrays are scored a term a word, decided once a call; and the statements
  -- planned once a connection
  perform pg_temp.patch_function('agentmem.message_bm25_scored(text, text, text, jsonb, text, text, timestamp with time zone, timestamp with time zone, tsquery, tsquery, integer, tsquery[], tsquery[], double precision[], double precision, double precision, integer, double precision)',
    $e$  i integer;
begin$e$, $e$  i integer;
  -- a term a word (the arrays message_bm25_hits passes, of up to eight words), else a subquery
  by_terms constant boolean := avgdl is not null and pg_catalog.cardinality(tqs) between 1 and 8
    and pg_catalog.array_ndims(tqs) = 1 and pg_catalog.array_lower(tqs, 1) = 1
    and pg_catalog.array_ndims(tqas) = 1 and pg_catalog.array_lower(tqas, 1) = 1
    and pg_catalog.array_ndims(idfs) = 1 and pg_catalog.array_lower(idfs, 1) = 1
    and pg_catalog.cardinality(tqas) = pg_catalog.cardinality(tqs)
    and pg_catalog.cardinality(idfs) = pg_catalog.cardinality(tqs)
    and pg_catalog.array_position(tqas, null) is null
    and pg_catalog.array_position(idfs, null) is null;
begin$e$, 1);
  perform pg_temp.patch_function('agentmem.message_bm25_scored(text, text, text, jsonb, text, text, timestamp with time zone, timestamp with time zone, tsquery, tsquery, integer, tsquery[], tsquery[], double precision[], double precision, double precision, integer, double precision)',
    $e$ SET plan_cache_mode TO 'force_custom_plan'$e$, $e$ SET plan_cache_mode TO 'force_generic_plan'$e$, 1);
end
$do$;

select pg_temp.patch_function('agentmem.recall_text_arm(text, text, text, text, text, jsonb, timestamp with time zone, timestamp with time zone, text, text, integer, integer, double precision, boolean, boolean, boolean, boolean)',
  $old$  if own_exact is null and shared_exact is null and messages_exact is null then
    select e.own_exact, e.shared_exact, e.messages_exact into own_exact, shared_exact, messages_exact
    from agentmem.recall_scope_exact(p_source, p_user_id, p_tenant_id, p_speaker, p_role, exact_limit, with_shared) e;$old$,
  $new$  -- message_bm25_hits serves every scope alike: only memories need the count
  if with_memories and own_exact is null and shared_exact is null and messages_exact is null then
    select e.own_exact, e.shared_exact into own_exact, shared_exact
    from agentmem.recall_scope_exact('memories', p_user_id, p_tenant_id, p_speaker, p_role, exact_limit, with_shared) e;$new$, 1);

select pg_temp.patch_function('agentmem.message_bm25_hits(text, text, text, jsonb, text, text, timestamp with time zone, timestamp with time zone, text[], integer, boolean, double precision)',
  $old$ SET plan_cache_mode TO 'force_custom_plan'$old$, $new$ SET plan_cache_mode TO 'force_generic_plan'$new$, 1);

-- the one statement, too: messages are counted for their vector list alone
select pg_temp.patch_function('agentmem.recall_sources(text, text, extensions.vector, text, text, text, text, jsonb, text, integer, double precision, double precision, integer, double precision, integer, integer, boolean, timestamp with time zone, timestamp with time zone, text, text, double precision, double precision, double precision, double precision, boolean)',
  $old$  from agentmem.recall_scope_exact(p_source, p_user_id, p_tenant_id, p_speaker, p_role, exact_limit, with_shared) e;$old$,
  $new$  from agentmem.recall_scope_exact(
         case when p_mode <> 'text' and query_embedding is not null then p_source
              when p_source in ('memories', 'all') then 'memories' end,
         p_user_id, p_tenant_id, p_speaker, p_role, exact_limit, with_shared) e;$new$, 1);
