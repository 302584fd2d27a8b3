-- agentmem.store_memories also stores a fact remembered without a turn (memories create), and
-- says whether each fact merged into an existing memory.
--
-- Two changes to the function of migration merge_near_duplicate_memories, whose rules
-- (exact text first, then the nearest near-duplicate, then a row of its own; the scope's
-- advisory lock; facts in order) stay exactly as they were:
--
-- * p_session_id may be null: the fact belongs to no turn, so no session is checked. With a
--   session id the check is as before (the turn's session must be the caller's and this
--   agent's). The function runs with the caller's rights (not security definer): as
--   agentmem_caller, row-level security still refuses any row of another user or tenant,
--   session or not; the client roles still may not call it.
-- * a third column, merged: true when the fact went into an unexpired memory that existed
--   before (the same text stored again, or a near-duplicate), false when it took a row of its
--   own (new, or an expired row of the same text that starts afresh). A fresh row's id is
--   chosen here, so the insert's answer tells the two apart.
--
-- The return type changes, so the function is dropped and created again, with the grants of
-- migration take_writes_from_client_roles. Callers name the columns they read: commit-turn's
-- statement (fact_key, memory_id) reads the new function unchanged.
drop function agentmem.store_memories(text, uuid, text, uuid, text[], text[], text[], text[],
  text, double precision, double precision);

create function agentmem.store_memories(
  p_tenant_id text, p_user_id uuid, p_agent text, p_session_id uuid,
  p_contents text[], p_keys text[], p_metadata text[], p_embeddings text[],
  p_model text, p_ttl_seconds double precision, min_similarity double precision
)
returns table (fact_key text, memory_id uuid, merged boolean)
language plpgsql volatile
set search_path = ''
as $$
declare
  i integer;
  v extensions.vector;
  dims integer;
  target uuid;
  fresh uuid;
  expires timestamptz := pg_catalog.now() + pg_catalog.make_interval(secs => p_ttl_seconds);
begin
  -- Nothing is stored unless the turn's session, when there is one, is the caller's and this
  -- agent's: a turn refused for its session keeps none of its facts, even when it shares one
  -- implicit transaction with the statement that refused it.
  if p_session_id is not null
     and not exists (select 1 from agentmem.sessions s
                     where s.id = p_session_id and s.user_id = p_user_id and s.tenant_id = p_tenant_id
                       and s.agent = p_agent) then
    return;
  end if;
  perform pg_catalog.pg_advisory_xact_lock(
    pg_catalog.hashtextextended(p_user_id::text || '/' || p_tenant_id || '/' || p_agent, 7217));

  for i in 1 .. coalesce(pg_catalog.array_length(p_keys, 1), 0) loop
    v := p_embeddings[i]::extensions.vector;
    dims := extensions.vector_dims(v);
    target := null;
    merged := false;
    if v is not null and min_similarity <= 1
       and not exists (select 1 from agentmem.memories m
                       where m.user_id = p_user_id and m.tenant_id = p_tenant_id and m.agent = p_agent
                         and m.content_key = p_keys[i] and m.expires_at > pg_catalog.now()) then
      select x.id into target
      from (
        select m.id, m.content,
               case when m.embedding_model = p_model and m.embedding_dims = dims
                    then m.embedding operator(extensions.<=>) v end as d
        from agentmem.memories m
        where m.user_id = p_user_id and m.tenant_id = p_tenant_id and m.agent = p_agent
          and m.expires_at > pg_catalog.now()
          and m.embedding_model = p_model and m.embedding_dims = dims
      ) x
      -- a text without words embeds to the zero vector: its distance is NaN, it is near nothing
      where x.d <= 1 - min_similarity and x.d <> 'NaN'::float8
        and agentmem.word_order_overlap(x.content, p_contents[i]) >= 0.5
      order by x.d, x.id
      limit 1;
      if target is not null then
        begin
          delete from agentmem.memories m
          where m.user_id = p_user_id and m.tenant_id = p_tenant_id and m.agent = p_agent
            and m.content_key = p_keys[i] and m.expires_at <= pg_catalog.now();
          update agentmem.memories m
          set content = p_contents[i],
              content_key = p_keys[i],
              metadata = m.metadata operator(pg_catalog.||) p_metadata[i]::jsonb,
              embedding = v,
              embedding_model = p_model,
              expires_at = greatest(m.expires_at, expires),
              updated_at = pg_catalog.now()
          where m.id = target and m.expires_at > pg_catalog.now()
          returning m.id into target;
        exception when unique_violation then
          -- Another writer (the memories function) gave the fact's text to a memory meanwhile:
          -- that exact match wins, below.
          target := null;
        end;
        merged := target is not null;
      end if;
    end if;
    if target is null then
      -- Storing a fact again refreshes it (content, embedding, expiry) and merges its metadata.
      -- A fact stored again without a vector keeps the vector it has when its text is unchanged.
      fresh := pg_catalog.gen_random_uuid();
      insert into agentmem.memories as m (id, tenant_id, user_id, agent, content, content_key, metadata,
        embedding, embedding_model, expires_at)
      values (fresh, p_tenant_id, p_user_id, p_agent, p_contents[i], p_keys[i], p_metadata[i]::jsonb,
        v, case when v is not null then p_model end, expires)
      on conflict (user_id, tenant_id, agent, content_key) do update
        set content = excluded.content,
            -- an expired fact stored again starts afresh: nothing of the expired row comes back
            id = case when m.expires_at <= pg_catalog.now() then excluded.id else m.id end,
            metadata = case when m.expires_at <= pg_catalog.now() then excluded.metadata
                            else m.metadata operator(pg_catalog.||) excluded.metadata end,
            embedding = case when excluded.embedding is null and m.content = excluded.content
                             then m.embedding else excluded.embedding end,
            embedding_model = case when excluded.embedding is null and m.content = excluded.content
                                   then m.embedding_model else excluded.embedding_model end,
            updated_at = pg_catalog.now(),
            expires_at = case when m.expires_at <= pg_catalog.now() then excluded.expires_at
                              else greatest(m.expires_at, excluded.expires_at) end,
            created_at = case when m.expires_at <= pg_catalog.now() then pg_catalog.now() else m.created_at end
      returning m.id into target;
      -- the row kept its own id only when it was an unexpired memory already
      merged := target <> fresh;
    end if;
    fact_key := p_keys[i];
    memory_id := target;
    return next;
  end loop;
end
$$;

revoke all on function agentmem.store_memories(text, uuid, text, uuid, text[], text[], text[], text[],
  text, double precision, double precision) from public, anon, authenticated;
grant execute on function agentmem.store_memories(text, uuid, text, uuid, text[], text[], text[], text[],
  text, double precision, double precision) to agentmem_caller, service_role;
