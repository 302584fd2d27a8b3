-- The shared knowledge base: documents split into chunks, shared by every user of a tenant (not
-- per user). Users read their own tenant's chunks; only service callers write. An ingest
-- replaces every chunk of its source in one transaction.

create table agentmem.knowledge_chunks (
  id uuid primary key default gen_random_uuid(),
  tenant_id text not null default '',
  source text not null check (char_length(source) between 1 and 512),
  chunk_index integer not null check (chunk_index >= 0),
  content text not null,
  metadata jsonb not null default '{}'::jsonb,
  embedding extensions.vector(384),
  embedding_model text,
  fts tsvector generated always as (to_tsvector('english'::regconfig, content)) stored,
  created_at timestamptz not null default now(),
  -- Also the index of (tenant_id, source): replacing and deleting a source use it.
  unique (tenant_id, source, chunk_index)
);
create index knowledge_chunks_fts_idx on agentmem.knowledge_chunks using gin (fts);
create index knowledge_chunks_embedding_idx on agentmem.knowledge_chunks
  using hnsw (embedding extensions.vector_cosine_ops);

alter table agentmem.knowledge_chunks enable row level security;

-- Users read the knowledge of their own tenant. There is no write policy: writes come from
-- service callers (service_role bypasses row-level security), never from users.
create policy tenant_read on agentmem.knowledge_chunks
  as permissive for select to authenticated
  using (tenant_id = (select agentmem.current_tenant()));

grant select on agentmem.knowledge_chunks to authenticated;
grant select, insert, update, delete on agentmem.knowledge_chunks to service_role;
