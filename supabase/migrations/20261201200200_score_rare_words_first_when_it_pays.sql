-- Full-text recall over messages without a first pass that cannot pay.
--
-- agentmem.message_bm25_hits scores the messages of the question's rare words (and their
-- neighbours, two turns either side, for the answering-turn credit) first, and all the
-- messages of any of its words only when that first pass cannot prove its top n. When a
-- question names a participant and a few everyday words, the rare words' messages with their
-- neighbours are as many as all the matching messages, or more, and the first pass mostly
-- failed: on a user of 6,790 messages of natural conversation, 1,447 messages scored and thrown
-- away before the 1,039 that answer.
--
-- The first pass now runs only when the rare words' messages, five times over when neighbours
-- are credited, are fewer than the messages of all the words (both from the word counts the
-- statistics already read). Both passes answer exactly BM25's top n, so only the work changes.

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
  -- how many messages hold a rare word, and any word (sums of the words' counts: bounds)
  rare_docs double precision := 0;
  all_docs double precision := 0;
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
    all_docs := all_docs + dfs[i];
    if dfs[i] > docs / 20 then
      -- tf 1 in the name (3) of a message of length 0: 3 x 2.2 / (3 + 1.2 x 0.25) = 2
      common_bound := common_bound + idfs[i] * 2;
    elsif dfs[i] > 0 then
      rare := rare || terms[i];
      rare_docs := rare_docs + dfs[i];
    end if;
  end loop;
  best := greatest(best, 1e-9);
  -- a message two places or more from every rare word's message: its own score from the
  -- common words, and the credit of each neighbour, no more than that
  common_bound := common_bound * (1 + 2 * greatest(follow_weight, 0));

  -- the rare words' messages first, when they and the neighbours they reach are fewer than the
  -- messages of all the words: else scoring them first cannot save work, only add a pass
  if rare is not null and common_bound > 0
     and rare_docs * (case when follow_weight > 0 then 5 else 1 end) < all_docs then
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
