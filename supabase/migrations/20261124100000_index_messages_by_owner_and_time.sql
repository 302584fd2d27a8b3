-- A user's messages across every session, in creation order: the user-wide history of the
-- sessions function (history without session_id), its total, and clear.
--
-- One index serves all of them, and replaces messages_owner_idx (user_id, tenant_id), whose
-- every use (forget-user, the policies' owner filter) its leading columns still serve, so a
-- committed message maintains as many indexes as before:
--
-- * history pages in (created_at, session_id, seq) order from a cursor, which the index serves
--   as a range bound after the owner's equality, forwards (oldest first) or backwards (newest
--   first), and stops after a page: a deep page costs what the first one does;
-- * agent, the last key column, is checked inside the index (a scan key of the btree), so the
--   history of one agent skips other agents' entries without reading their rows;
-- * expires_at, included, lets the total be counted by an index-only scan.
--
-- On a large table, build it first without blocking writes, then apply this migration, which
-- finds it in place:
--   create index concurrently if not exists messages_owner_created_idx on agentmem.messages
--     (user_id, tenant_id, created_at, session_id, seq, agent) include (expires_at);
create index if not exists messages_owner_created_idx on agentmem.messages
  (user_id, tenant_id, created_at, session_id, seq, agent) include (expires_at);

drop index if exists agentmem.messages_owner_idx;
