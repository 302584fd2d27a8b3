-- Indexes for the keyset listings of the sessions and memories functions. A page is read in
-- index order from the cursor on, so its cost does not grow with the number of rows of the user.

-- Sessions of a user across all agents, newest activity first (sessions list without agent).
-- sessions_owner_idx serves the list of one agent.
create index sessions_owner_activity_idx
  on agentmem.sessions (user_id, tenant_id, last_active_at desc, id desc);

-- Long-term memories of a user, newest first (memories list).
create index memories_owner_created_idx
  on agentmem.memories (user_id, tenant_id, created_at desc, id desc);
