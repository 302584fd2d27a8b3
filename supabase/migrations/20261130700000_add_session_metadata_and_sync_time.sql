-- Sessions carry the client's metadata and the time the adapters last caught up with them.
--
-- metadata: a JSON object the client gives when the session is created (active-session,
-- commit-turn) or later (sessions set_metadata); '{}' when none. The functions bound it as they
-- bound a message's metadata (16 KiB of JSON).
--
-- last_synced_at: when the enabled adapters last caught up with the session, set by process-jobs
-- as it records a job of the session done while none of the session's adapter jobs is pending or
-- running, nor dead for that change or a later one (shared/store/jobs.go). Null while no adapter
-- has, and where none is enabled.
--
-- created_at needs nothing here: every session has had it since create_memory_schema, set when
-- the session was created and never changed (get-context's cache reads it as part of the
-- session's generation, so it must not be rewritten either).
--
-- On a large table: both columns come with a constant default ('{}', null), which PostgreSQL 11
-- and later keep in the catalog; no row is rewritten and no index rebuilt, the lock lasts as long
-- as the catalog change. The check is not validated against the existing rows: they all read the
-- default '{}', and validating would scan the table under this migration's lock. It holds for
-- every row written from now on.
alter table agentmem.sessions
  add column metadata jsonb not null default '{}'::jsonb,
  add column last_synced_at timestamptz;

alter table agentmem.sessions add constraint sessions_metadata_check
  check (jsonb_typeof(metadata) = 'object') not valid;
