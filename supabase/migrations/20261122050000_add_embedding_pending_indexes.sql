-- Rows waiting for an embedding, which store.EmbedPending finds and embeds in batches:
--
-- - rows stored while the embedding provider was down keep embedding (and embedding_model)
--   null: full-text search finds them meanwhile;
-- - rows embedded by another model than the configured one (embedding_model differs) are not
--   ranked by vector distance, since vectors of two models do not compare, until re-embedded.
--
-- The first kind is found through a partial index that stays empty while the provider is up;
-- the second through an index on embedding_model, probed with `< model or > model` so that a
-- table whose rows all have the configured model costs two empty range scans.
create index memories_embedding_pending_idx on agentmem.memories (id) where embedding is null;
create index memories_embedding_model_idx on agentmem.memories (embedding_model);

create index knowledge_chunks_embedding_pending_idx on agentmem.knowledge_chunks (id)
  where embedding is null;
create index knowledge_chunks_embedding_model_idx on agentmem.knowledge_chunks (embedding_model);
