-- Matching a large scope's memories once.
--
-- agentmem.memory_bm25_hits, above the exact limit, takes its candidates from
-- agentmem.memory_word_matches, which answers only the memories that match the question, and
-- then tested each of them against the question again. For a question matching 68,077 of a
-- user's 100,000 memories, that second test was 25 ms (37 ms for the 68,077 rows with it, 12 ms
-- without; three runs each, warm). The candidates are now taken as they come.

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
  'agentmem.memory_bm25_hits(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,text[],integer,boolean,boolean)',
  '        and ($10 is null or m.created_at < $10)
        and m.fts operator(pg_catalog.@@) $5
',
  '        and ($10 is null or m.created_at < $10)
');
