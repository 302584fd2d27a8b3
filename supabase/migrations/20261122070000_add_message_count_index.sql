-- Counting a session's unexpired messages (the message_count of the sessions list, the total of
-- a history page) reads this index alone: an index-only scan instead of every row of the session.
-- The owner columns are included because the count runs under row-level security, whose policy
-- compares user_id and tenant_id on every row: without them each count would still visit the
-- table.
create index messages_session_expiry_idx on agentmem.messages (session_id, expires_at)
  include (user_id, tenant_id);
