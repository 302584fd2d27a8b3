-- Near-duplicate facts merge when they are stored.
--
-- agentmem.store_memories stores the facts of one turn (commit-turn) in one statement. A fact
-- goes, in this order of preference:
-- 1. into the unexpired memory of its scope (user, tenant, agent) holding the same normalised
--    text (content_key): the exact match always wins, as before;
-- 2. else, when it has a vector and min_similarity is at most 1, into the unexpired memory of
--    its scope whose vector, of the same model and dimension, is nearest to its own, if their
--    cosine similarity is at least min_similarity and their texts say their words in much the
--    same order (agentmem.word_order_overlap at least 0.5: "Alice owes Bob" never merges into
--    "Bob owes Alice", however near their vectors): that memory takes the fact's text, key and
--    vector (the newest phrasing wins), its later expiry, and the fact's metadata over its own;
--    an expired memory holding the fact's key (invisible already) is deleted to make room;
-- 3. else into a row of its own (or an expired row of the same key, which starts afresh).
-- Facts are taken in the order given, each seeing what the previous ones wrote: near-duplicates
-- of one turn end in one memory, holding the text of the last of them.
--
-- Concurrency: before it reads anything, the function takes a transaction-scoped advisory lock
-- on the scope (the scope hashed with seed 7217), and each of its statements reads a fresh
-- snapshot (read committed, the store's isolation; a volatile function). Two turns writing facts
-- to one scope thus write them one after the other, the second seeing what the first committed:
-- near-duplicates committed at once still end in one memory, and no two live memories of a scope
-- are near-duplicates because their turns ran concurrently. The lock is held to the end of the
-- turn's transaction (a few statements); only this function takes it, after every other lock of
-- the commit (the user's, the session row's), so it adds no deadlock. Other writers do not take
-- it: the memories function's update may make a memory a near-duplicate of another; a fact stored
-- without a vector (provider down) is embedded later by embed-pending and not merged then; a new
-- threshold or model applies to the facts stored afterwards.
-- The share of adjacent word pairs two texts have in common (Jaccard index of their sets of
-- lower-cased word bigrams), 0 when either has fewer than two words. It tells a rewording apart
-- from the same words in another order, which bag-of-words embedders cannot.
create function agentmem.word_order_overlap(a text, b text)
returns double precision
language sql immutable parallel safe
set search_path = ''
as $$
  with pairs as (
    select t.which, w.word || ' ' || w.next as pair
    from (values (1, a), (2, b)) as t(which, txt),
         lateral (
           select x.word, pg_catalog.lead(x.word) over (order by x.n) as next
           from pg_catalog.regexp_split_to_table(pg_catalog.lower(t.txt), '[^[:alnum:]]+')
                with ordinality as x(word, n)
           where x.word <> ''
         ) w
    where w.next is not null
  ),
  counts as (
    select count(distinct pair) filter (where which = 1) as na,
           count(distinct pair) filter (where which = 2) as nb,
           count(distinct pair) as n_union
    from pairs
  )
  select case when na = 0 or nb = 0 then 0
              else (na + nb - n_union)::float8 / n_union end
  from counts
$$;

create function agentmem.store_memories(
  p_tenant_id text, p_user_id uuid, p_agent text, p_session_id uuid,
  p_contents text[], p_keys text[], p_metadata text[], p_embeddings text[],
  p_model text, p_ttl_seconds double precision, min_similarity double precision
)
returns table (fact_key text, memory_id uuid)
language plpgsql volatile
set search_path = ''
as $$
declare
  i integer;
  v extensions.vector;
  dims integer;
  target uuid;
  expires timestamptz := pg_catalog.now() + pg_catalog.make_interval(secs => p_ttl_seconds);
begin
  -- Nothing is stored unless the turn's session is the caller's and this agent's: a turn
  -- refused for its session keeps none of its facts, even when it shares one implicit
  -- transaction with the statement that refused it.
  if not exists (select 1 from agentmem.sessions s
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
      end if;
    end if;
    if target is null then
      -- Storing a fact again refreshes it (content, embedding, expiry) and merges its metadata.
      -- A fact stored again without a vector keeps the vector it has when its text is unchanged.
      insert into agentmem.memories as m (tenant_id, user_id, agent, content, content_key, metadata,
        embedding, embedding_model, expires_at)
      values (p_tenant_id, p_user_id, p_agent, p_contents[i], p_keys[i], p_metadata[i]::jsonb,
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
    end if;
    fact_key := p_keys[i];
    memory_id := target;
    return next;
  end loop;
end
$$;

revoke execute on function agentmem.store_memories(text, uuid, text, uuid, text[], text[], text[], text[],
  text, double precision, double precision) from public, anon;
grant execute on function agentmem.store_memories(text, uuid, text, uuid, text[], text[], text[], text[],
  text, double precision, double precision) to authenticated, service_role;
