-- agentmem's memory model. Every row is scoped by tenant and user (and agent where it applies);
-- row-level security decides what a request may see, with the caller's claims set for the
-- transaction as PostgREST does. Tables live in their own schema so they never collide with an
-- application's tables in `public`.

create extension if not exists vector with schema extensions;

create schema if not exists agentmem;
grant usage on schema agentmem to authenticated, service_role;

-- The caller's tenant: app_metadata.tenant_id of the verified token, '' when there is none.
create function agentmem.current_tenant() returns text
  language sql stable
  set search_path = ''
as $$
  select coalesce(auth.jwt() -> 'app_metadata' ->> 'tenant_id', '')
$$;

-- An OR-query of the lexemes of a natural-language text, so that a question such as
-- "what units does the user like?" matches memories that share any of its words; the
-- ranking then prefers memories that share more of them.
create function agentmem.any_words_query(query text) returns tsquery
  language sql immutable parallel safe
  set search_path = ''
as $$
  select coalesce(
    (select string_agg(quote_literal(lexeme), ' | ')::pg_catalog.tsquery
       from pg_catalog.unnest(pg_catalog.to_tsvector('english'::pg_catalog.regconfig, query))),
    ''::pg_catalog.tsquery)
$$;

revoke execute on function agentmem.current_tenant() from public;
revoke execute on function agentmem.any_words_query(text) from public;
grant execute on function agentmem.current_tenant() to authenticated, service_role;
grant execute on function agentmem.any_words_query(text) to authenticated, service_role;

-- Sessions: one conversation of a user with an agent. last_seq orders the messages without
-- reading any clock: a commit takes the row lock and the next numbers.
create table agentmem.sessions (
  id uuid primary key,
  tenant_id text not null default '',
  user_id uuid not null,
  agent text not null check (agent ~ '^[A-Za-z0-9_.:-]{1,64}$'),
  title text,
  last_seq bigint not null default 0,
  created_at timestamptz not null default now(),
  last_active_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index sessions_owner_idx on agentmem.sessions (user_id, tenant_id, agent, last_active_at desc);
create index sessions_expires_idx on agentmem.sessions (expires_at);

create table agentmem.messages (
  session_id uuid not null references agentmem.sessions (id) on delete cascade,
  seq bigint not null,
  id uuid not null,
  tenant_id text not null default '',
  user_id uuid not null,
  agent text not null,
  role text not null check (role in ('user', 'assistant', 'system', 'tool')),
  content text not null,
  name text,
  tool_calls jsonb,
  tool_call_id text,
  metadata jsonb,
  token_estimate integer not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (session_id, seq),
  unique (session_id, id)
);
create index messages_owner_idx on agentmem.messages (user_id, tenant_id);
create index messages_expires_idx on agentmem.messages (expires_at);

-- The current session of (tenant, user, agent), shared by every device of the user.
create table agentmem.active_sessions (
  tenant_id text not null default '',
  user_id uuid not null,
  agent text not null,
  session_id uuid not null references agentmem.sessions (id) on delete cascade,
  updated_at timestamptz not null default now(),
  primary key (user_id, tenant_id, agent)
);
create index active_sessions_session_idx on agentmem.active_sessions (session_id);

-- Long-term memories. agent '' is a memory of the user that every agent may recall.
-- content_key is the digest of the normalised text: one row per fact and scope.
create table agentmem.memories (
  id uuid primary key default gen_random_uuid(),
  tenant_id text not null default '',
  user_id uuid not null,
  agent text not null default '',
  content text not null,
  content_key text not null,
  metadata jsonb not null default '{}'::jsonb,
  embedding extensions.vector(384),
  embedding_model text,
  fts tsvector generated always as (to_tsvector('english'::regconfig, content)) stored,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  expires_at timestamptz not null,
  unique (user_id, tenant_id, agent, content_key)
);
create index memories_fts_idx on agentmem.memories using gin (fts);
create index memories_embedding_idx on agentmem.memories
  using hnsw (embedding extensions.vector_cosine_ops);
create index memories_expires_idx on agentmem.memories (expires_at);

-- Key/value memory of a user; values are JSON objects.
create table agentmem.user_memory (
  tenant_id text not null default '',
  user_id uuid not null,
  key text not null check (char_length(key) between 1 and 128),
  value jsonb not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (user_id, tenant_id, key)
);

-- One mode string per user (e.g. active, halted).
create table agentmem.user_state (
  tenant_id text not null default '',
  user_id uuid not null,
  mode text not null,
  updated_at timestamptz not null default now(),
  primary key (user_id, tenant_id)
);

-- The agent's long-term Markdown notes about the user.
create table agentmem.notes (
  tenant_id text not null default '',
  user_id uuid not null,
  agent text not null,
  content text not null,
  updated_at timestamptz not null default now(),
  primary key (user_id, tenant_id, agent)
);

-- Responses of requests made with an Idempotency-Key, replayed on retry. Keys belong to their
-- caller: (tenant, user, caller role, function, key).
create table agentmem.idempotency_keys (
  tenant_id text not null default '',
  user_id uuid not null,
  caller_role text not null,
  function text not null,
  key text not null,
  request_hash bytea not null,
  response_status integer not null,
  response_body text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (user_id, tenant_id, caller_role, function, key)
);
create index idempotency_keys_expires_idx on agentmem.idempotency_keys (expires_at);

-- Row-level security: a request sees only the rows of its own user and tenant.
do $$
declare
  t text;
begin
  foreach t in array array['sessions', 'messages', 'active_sessions', 'memories', 'user_memory',
                           'user_state', 'notes', 'idempotency_keys']
  loop
    execute format('alter table agentmem.%I enable row level security', t);
    execute format($p$
      create policy owner_only on agentmem.%I
        as permissive for all to authenticated
        using (user_id = (select auth.uid()) and tenant_id = (select agentmem.current_tenant()))
        with check (user_id = (select auth.uid()) and tenant_id = (select agentmem.current_tenant()))
    $p$, t);
    execute format('grant select, insert, update, delete on agentmem.%I to authenticated, service_role', t);
  end loop;
end
$$;
