-- A merge keeps the better-formed text, and says whether the memory's text changed.
--
-- Until now a fact that merged into a memory always gave it its own wording, so "user lives in
-- lisbon!" replaced "User lives in Lisbon.". Now, of the memory's text and the fact's:
--
-- * the same fact (the same normalised text, content_key: it differs in case, spacing or final
--   punctuation only): the memory keeps its text, unless the fact's is better formed;
-- * a near-duplicate (a rephrasing, which may say something newer: "User lives in Lisbon now"):
--   the fact's text, unless it is less well formed than the memory's, final punctuation aside.
--
-- How well formed a text is: agentmem.memory_text_form, 2 for a capital first letter, 1 for a
-- final full stop, exclamation or question mark, less 2 for a text in capitals only. The key
-- follows the text kept. A memory that expired starts afresh with the fact's text, as before.
--
-- store_memories answers a fourth column, content_changed: true when a merge gave the memory
-- the fact's text (a text that differs from the one it had), false when it kept its own and for
-- a new row. The return type changes, so the function is dropped and created again with the
-- grants it had; every other rule (the session check, the scope's advisory lock, exact text
-- first, then the nearest near-duplicate, metadata merged, the later expiry) is unchanged.
create function agentmem.memory_text_form(t text)
returns integer
language sql immutable parallel safe
set search_path = ''
as $$
  select case when pg_catalog.left(s, 1) <> pg_catalog.lower(pg_catalog.left(s, 1))
              then 2 else 0 end
       + case when s ~ '[.!?]$' then 1 else 0 end
       - case when s = pg_catalog.upper(s) and s <> pg_catalog.lower(s) then 2 else 0 end
  from (select pg_catalog.btrim(t, E' \t\r\n') as s) x
$$;

revoke all on function agentmem.memory_text_form(text) from public, anon, authenticated;
grant execute on function agentmem.memory_text_form(text) to agentmem_caller, service_role;

drop function agentmem.store_memories(text, uuid, text, uuid, text[], text[], text[], text[],
  text, double precision, double precision);

create function agentmem.store_memories(
  p_tenant_id text, p_user_id uuid, p_agent text, p_session_id uuid,
  p_contents text[], p_keys text[], p_metadata text[], p_embeddings text[],
  p_model text, p_ttl_seconds double precision, min_similarity double precision
)
returns table (fact_key text, memory_id uuid, merged boolean, content_changed boolean)
language plpgsql volatile
set search_path = ''
as $$
declare
  i integer;
  v extensions.vector;
  dims integer;
  target uuid;
  fresh uuid;
  prior text;
  stored text;
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
    content_changed := false;
    -- the unexpired memory of the same text, if any: its text before this fact
    select m.content into prior
    from agentmem.memories m
    where m.user_id = p_user_id and m.tenant_id = p_tenant_id and m.agent = p_agent
      and m.content_key = p_keys[i] and m.expires_at > pg_catalog.now();
    if v is not null and min_similarity <= 1 and prior is null then
      select x.id, x.content into target, prior
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
          -- a rephrasing gives its text unless it is less well formed than the memory's, final
          -- punctuation aside (a full stop added to both): its words may say something newer
          if agentmem.memory_text_form(p_contents[i] || '.') >= agentmem.memory_text_form(prior || '.') then
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
            returning m.id, m.content into target, stored;
          else
            update agentmem.memories m
            set metadata = m.metadata operator(pg_catalog.||) p_metadata[i]::jsonb,
                expires_at = greatest(m.expires_at, expires),
                updated_at = pg_catalog.now()
            where m.id = target and m.expires_at > pg_catalog.now()
            returning m.id, m.content into target, stored;
          end if;
        exception when unique_violation then
          -- Another writer (the memories function) gave the fact's text to a memory meanwhile:
          -- that exact match wins, below.
          target := null;
        end;
        merged := target is not null;
        content_changed := merged and stored is distinct from prior;
      end if;
    end if;
    if target is null then
      -- Storing a fact again refreshes it (embedding, expiry), merges its metadata and keeps the
      -- memory's text unless the fact's is better formed. A fact stored again without a vector
      -- keeps the vector it has when the text stays.
      select m.content into prior
      from agentmem.memories m
      where m.user_id = p_user_id and m.tenant_id = p_tenant_id and m.agent = p_agent
        and m.content_key = p_keys[i] and m.expires_at > pg_catalog.now();
      fresh := pg_catalog.gen_random_uuid();
      insert into agentmem.memories as m (id, tenant_id, user_id, agent, content, content_key, metadata,
        embedding, embedding_model, expires_at)
      values (fresh, p_tenant_id, p_user_id, p_agent, p_contents[i], p_keys[i], p_metadata[i]::jsonb,
        v, case when v is not null then p_model end, expires)
      on conflict (user_id, tenant_id, agent, content_key) do update
        set content = case when m.expires_at <= pg_catalog.now()
                             or agentmem.memory_text_form(excluded.content) > agentmem.memory_text_form(m.content)
                           then excluded.content else m.content end,
            -- an expired fact stored again starts afresh: nothing of the expired row comes back
            id = case when m.expires_at <= pg_catalog.now() then excluded.id else m.id end,
            metadata = case when m.expires_at <= pg_catalog.now() then excluded.metadata
                            else m.metadata operator(pg_catalog.||) excluded.metadata end,
            embedding = case when excluded.embedding is null and (m.content = excluded.content
                               or (m.expires_at > pg_catalog.now()
                                   and agentmem.memory_text_form(excluded.content) <= agentmem.memory_text_form(m.content)))
                             then m.embedding else excluded.embedding end,
            embedding_model = case when excluded.embedding is null and (m.content = excluded.content
                                     or (m.expires_at > pg_catalog.now()
                                         and agentmem.memory_text_form(excluded.content) <= agentmem.memory_text_form(m.content)))
                                   then m.embedding_model else excluded.embedding_model end,
            updated_at = pg_catalog.now(),
            expires_at = case when m.expires_at <= pg_catalog.now() then excluded.expires_at
                              else greatest(m.expires_at, excluded.expires_at) end,
            created_at = case when m.expires_at <= pg_catalog.now() then pg_catalog.now() else m.created_at end
      returning m.id, m.content into target, stored;
      -- the row kept its own id only when it was an unexpired memory already
      merged := target <> fresh;
      content_changed := merged and stored is distinct from prior;
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
