-- The built-in embedder's second version, agentmem-hash-384-v2 (shared/embedding: stems of
-- words without stop words or vocatives, and trigrams of their beginnings), gets its HNSW
-- indexes on memories, knowledge chunks and messages, as the migrations made version 1's
-- (store_vectors_of_any_model, search_messages). No row holds a vector of it yet, so they are
-- built at once.
--
-- Vectors of version 1 are not comparable with version 2's: only the configured model's vectors
-- rank, and the scheduled embed-pending run (or `agentmem backfill`) re-embeds rows of another
-- model. Version 1 can no longer be configured, so its vectors never rank again: its indexes are
-- dropped rather than kept up to date while the rows are re-embedded (each re-embedded row
-- would leave a dead entry in them for vacuum to clean).

do $$
declare
  s text;
  t text;
begin
  for s in select agentmem.embedding_index_statements(
             model => 'agentmem-hash-384-v2', dims => 384, build_concurrently => false) loop
    execute s;
  end loop;
  foreach t in array array['memories', 'knowledge_chunks', 'messages'] loop
    execute pg_catalog.format('drop index if exists agentmem.%I',
      t || '_embedding_' || pg_catalog.left(pg_catalog.md5('agentmem-hash-384-v1/384'), 12) || '_idx');
  end loop;
end
$$;
