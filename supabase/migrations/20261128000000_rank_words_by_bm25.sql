-- Full-text ranking by BM25 (k1 1.2, b 0.75) instead of ts_rank_cd, for memories, messages and
-- the knowledge base; and a message's speaker (its name) searchable.
--
-- ts_rank_cd counts every matched word alike: a participant's name, present in most questions
-- and in many short replies, weighed as much as the one rare word that finds the answer. BM25
-- weighs each word by its inverse document frequency and saturates repeated words, with
-- document length normalised against the average.
--
-- The statistics are those of the caller's own scope, computed at query time from the rows the
-- query reads: the number of unexpired rows of the user (and agent) and their average length,
-- and for each word of the query the number of those rows that hold it. So they are always
-- exact as rows are added, expire and are erased, and one user's ranking reveals nothing of
-- another user's words (a corpus-wide frequency would). Knowledge, shared by a tenant, is
-- ranked with the tenant's statistics.
--
-- - A document's length for BM25 is its number of distinct lexemes, length(fts), read from
--   the tsvector the ranking reads anyway: a stored column of it would cost every commit a
--   second to_tsvector of each message. A scope smaller than the exact limit averages it over
--   all its rows; a larger one over the rows that match the query (the rows it reads), and
--   counts its rows on the owner index.
-- - messages.fts now also holds the speaker's name (messages.name, weight A): "what does
--   Melanie play?" matches Melanie's own messages, and BM25 gives her name the low weight of a
--   word that many messages hold. Changing the generated column rewrites messages once, under
--   an exclusive lock: on a large table apply this in a quiet hour.
-- - agentmem.query_terms(text) is the lexemes of a query (english configuration).
-- - agentmem.memory_bm25_hits and agentmem.message_bm25_hits replace memory_text_hits and
--   message_text_hits; recall_memories and recall_sources call them (same signatures as before).
--   A scope smaller than the exact limit is read row by row once (statistics and candidates in
--   one pass); a larger one counts its statistics on the owner index and finds its candidates
--   through the full-text index.

alter table agentmem.messages
  drop column fts,
  add column fts tsvector generated always as (
    pg_catalog.setweight(pg_catalog.to_tsvector('english'::regconfig, coalesce(name, '')), 'A')
    operator(pg_catalog.||) pg_catalog.to_tsvector('english'::regconfig, content)) stored;

create index messages_fts_idx on agentmem.messages using gin (fts);


-- The distinct lexemes of a query's text, as the stored tsvectors hold them; null when it has
-- none.
create function agentmem.query_terms(query text) returns text[]
  language plpgsql immutable parallel safe
  set search_path = ''
as $$
begin
  return (select pg_catalog.array_agg(u.lexeme order by u.lexeme)
          from pg_catalog.unnest(pg_catalog.to_tsvector('english'::pg_catalog.regconfig, query)) u);
end
$$;

-- The OR-query of some lexemes (null for none).
create function agentmem.terms_query(terms text[]) returns tsquery
  language plpgsql immutable parallel safe
  set search_path = ''
as $$
begin
  return (select pg_catalog.string_agg(pg_catalog.quote_literal(t), ' | ')::pg_catalog.tsquery
          from pg_catalog.unnest(terms) t);
end
$$;

-- The n messages of a user that best match some lexemes by BM25, best first, among the
-- unexpired ones of the scope (agent) that pass the filters (top-level metadata keys equal to
-- p_filter's; the speaker, its name case-insensitive, and role when given; created within
-- [p_since, p_until) when given). The statistics (number of messages, their average length,
-- each lexeme's document frequency) are the scope's own (user, tenant, agent, unexpired),
-- whatever the filters.
--
-- A message's term frequency is its presence (1 or 0): chat messages rarely say a word twice,
-- BM25's saturation makes a repeat worth little, and presence is a C-level match per word
-- (fts @@ 'word') where counting positions would unpack every candidate's tsvector, which made
-- a query naming a participant (a word half of the messages hold) several times slower. A word
-- of the speaker's name (weight A in fts) counts three times (a field weight, as BM25F gives
-- one), so that "what does Melanie play?" prefers what Melanie said to what others said to her.
--
-- follow_weight (0: none) credits a matching message with that share of the scores of its
-- matching neighbours in its session that point at it: the message before it when that one is
-- a question (it ends with "?"): the answer ranks beside the question, though it repeats few
-- of its words; and the message after it when neither is a question: the statement that a
-- reply repeats ("Way to go, John! A marathon!") ranks above the reply.
--
-- relevance is the message's own BM25 score over the highest any message could get for these
-- words (every word present, in the name too, in a short message), from 0 to 1.
--
-- The query is written for the words at hand (one column per word) and planned as it comes;
-- with exact (a scope smaller than the exact limit) the scope is read row by row once, for the
-- statistics and the candidates together, else the statistics are counted on the owner index
-- and the candidates found through the full-text index.
create function agentmem.message_bm25_hits(
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  p_speaker text, p_role text, p_since timestamptz, p_until timestamptz,
  terms text[], n integer, exact boolean, follow_weight double precision
)
returns table (session_id uuid, seq bigint, score double precision, relevance double precision)
language plpgsql stable
set search_path = ''
as $$
declare
  q tsquery := agentmem.terms_query(terms);
  -- each word's presence (h) and presence in the speaker's name (a), of row m or s
  hits_m text := '';
  hits_s text := '';
  dfs text := '';
  bm25 text := '0';
  best text := '0';
  i integer;
  -- the filters, with the function's arguments as $1.. (see using below)
  eligible constant text := $e$
    ($4 = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) $4
      and not exists (select 1 from pg_catalog.jsonb_each($4) x
                      where m.metadata operator(pg_catalog.->) x.key operator(pg_catalog.<>) x.value)))
    and ($7 = '' or pg_catalog.lower(m.name) = pg_catalog.lower($7))
    and ($8 = '' or m.role = $8)
    and ($9::timestamptz is null or m.created_at >= $9)
    and ($10::timestamptz is null or m.created_at < $10)$e$;
  scope constant text := $s$
    m.user_id = $1 and m.tenant_id = $2 and ($3 = '' or m.agent = $3)
    and m.expires_at > pg_catalog.now()$s$;
begin
  if q is null or n < 1 then
    return;
  end if;
  for i in 1 .. pg_catalog.array_length(terms, 1) loop
    hits_m := hits_m || pg_catalog.format(
      ', m.fts operator(pg_catalog.@@) %1$L::tsquery as h%2$s, m.fts operator(pg_catalog.@@) %3$L::tsquery as a%2$s',
      pg_catalog.quote_literal(terms[i]), i, pg_catalog.quote_literal(terms[i]) || ':A');
    hits_s := hits_s || pg_catalog.format(
      ', s.fts operator(pg_catalog.@@) %1$L::tsquery as h%2$s, s.fts operator(pg_catalog.@@) %3$L::tsquery as a%2$s',
      pg_catalog.quote_literal(terms[i]), i, pg_catalog.quote_literal(terms[i]) || ':A');
    dfs := dfs || pg_catalog.format(', pg_catalog.count(*) filter (where c.h%1$s)::float8 as d%1$s', i);
    -- idf x tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)), tf 1, or 3 in the speaker's name
    bm25 := bm25 || pg_catalog.format(
      ' + case when c.h%1$s then pg_catalog.ln(1 + (st.docs - df.d%1$s + 0.5) / (df.d%1$s + 0.5))'
      ' * (1 + 2 * c.a%1$s::int) * 2.2 / (1 + 2 * c.a%1$s::int + 1.2 * (0.25 + 0.75 * c.fts_len / st.avgdl)) else 0 end', i);
    best := best || pg_catalog.format(' + pg_catalog.ln(1 + (st.docs - df.d%1$s + 0.5) / (df.d%1$s + 0.5)) * 2.2', i);
  end loop;
  return query execute pg_catalog.format($q$
    with
    %1$s,
    df as (select 0 %3$s from cand c),
    scored as (
      select c.session_id, c.seq, c.eligible, c.question, (%4$s)::float8 as bm25
      from cand c cross join stats st cross join df
    ),
    best_possible as (select greatest(%5$s, 1e-9)::float8 as m from stats st cross join df)
    select s.session_id, s.seq,
           (s.bm25 + $12 * (case when b.question then b.bm25 else 0 end
                            + case when not s.question and not a.question then a.bm25 else 0 end))::float8,
           least(1, s.bm25 / bp.m)::float8
    from scored s cross join best_possible bp
      left join scored b on b.session_id = s.session_id and b.seq = s.seq - 1
      left join scored a on a.session_id = s.session_id and a.seq = s.seq + 1
    where s.eligible
    order by 3 desc, s.session_id, s.seq
    limit $6
    $q$,
    -- exact: one pass over the scope's rows; only the matching ones keep their tsvector (fts),
    -- and only those are matched word by word (cand)
    case when exact then pg_catalog.format($x$
      scope as materialized (
        select m.session_id, m.seq, pg_catalog.length(m.fts) as fts_len,
               case when (m.fts operator(pg_catalog.@@) $5) is true then m.fts end as fts,
               case when (m.fts operator(pg_catalog.@@) $5) is true
                    then pg_catalog.right(pg_catalog.rtrim(m.content), 1) = '?' end as question,
               (%2$s) is true as eligible
        from agentmem.messages m
        where %3$s
      ),
      stats as (
        select pg_catalog.count(*)::float8 as docs, greatest(pg_catalog.avg(s.fts_len), 1)::float8 as avgdl from scope s
      ),
      cand as (
        select s.session_id, s.seq, s.fts_len, s.question, s.eligible %1$s
        from scope s where s.fts is not null
      )$x$, hits_s, eligible, scope)
    else pg_catalog.format($x$
      cand as materialized (
        select m.session_id, m.seq, pg_catalog.length(m.fts) as fts_len,
               pg_catalog.right(pg_catalog.rtrim(m.content), 1) = '?' as question,
               (%2$s) is true as eligible %1$s
        from agentmem.messages m
        where %3$s and m.fts operator(pg_catalog.@@) $5
      ),
      stats as (
        select (select pg_catalog.count(*) from agentmem.messages m where %3$s)::float8 as docs,
               (select greatest(pg_catalog.avg(c.fts_len), 1) from cand c)::float8 as avgdl
      )$x$, hits_m, eligible, scope)
    end,
    null, dfs, bm25, best)
    using p_user_id, p_tenant_id, p_agent, p_filter, q, n, p_speaker, p_role, p_since, p_until, terms, follow_weight;
end
$$;

-- The n memories of a user that best match some lexemes by BM25, best first, among the
-- unexpired ones of the scope (agent: that agent's and agent-less ones; filter and time: as
-- memory_neighbours), with the scope's own statistics, as message_bm25_hits.
create function agentmem.memory_bm25_hits(
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  p_since timestamptz, p_until timestamptz, terms text[], n integer, exact boolean
)
returns table (id uuid, score double precision, relevance double precision)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
as $$
declare
  q tsquery := agentmem.terms_query(terms);
  docs double precision;
begin
  if q is null or n < 1 then
    return;
  end if;
  if exact then
    return query
      with scope as materialized (
        select m.id, pg_catalog.length(m.fts) as fts_len,
               case when (m.fts operator(pg_catalog.@@) q) is true
                     and (p_filter = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) p_filter
                          and not exists (select 1 from pg_catalog.jsonb_each(p_filter) f
                                          where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
                     and (p_since is null or m.created_at >= p_since)
                     and (p_until is null or m.created_at < p_until)
                    then pg_catalog.ts_filter(pg_catalog.setweight(pg_catalog.setweight(m.fts, 'D'), 'A', terms), '{a}')
               end as hit
        from agentmem.memories m
        where m.user_id = p_user_id and m.tenant_id = p_tenant_id
          and (p_agent = '' or m.agent in (p_agent, ''))
          and m.expires_at > pg_catalog.now()
      ),
      stats as (
        select pg_catalog.count(*)::float8 as docs, greatest(pg_catalog.avg(s.fts_len), 1)::float8 as avgdl from scope s
      ),
      tf as (
        select s.id, s.fts_len, u.lexeme, coalesce(pg_catalog.array_length(u.positions, 1), 1)::float8 as tf
        from scope s, pg_catalog.unnest(s.hit) u
        where s.hit is not null
      ),
      df as (select t.lexeme, pg_catalog.count(*)::float8 as df from tf t group by t.lexeme),
      best_possible as (
        select greatest(pg_catalog.sum(pg_catalog.ln(1 + (st.docs - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)) * 2.2),
                        1e-9)::float8 as m
        from pg_catalog.unnest(terms) x(lexeme) left join df d on d.lexeme = x.lexeme cross join stats st
      ),
      scored as (
        select t.id,
               pg_catalog.sum(pg_catalog.ln(1 + (st.docs - d.df + 0.5) / (d.df + 0.5))
                 * t.tf * 2.2 / (t.tf + 1.2 * (0.25 + 0.75 * t.fts_len / st.avgdl)))::float8 as bm25
        from tf t join df d on d.lexeme = t.lexeme cross join stats st
        group by t.id
      )
      select c.id, c.bm25, least(1, c.bm25 / bp.m)::float8
      from scored c cross join best_possible bp
      order by c.bm25 desc, c.id
      limit n;
    return;
  end if;
  -- the scope's rows are counted here; their average length is the matching rows' (lengths)
  select pg_catalog.count(*) into docs
  from agentmem.memories m
  where m.user_id = p_user_id and m.tenant_id = p_tenant_id
    and (p_agent = '' or m.agent in (p_agent, ''))
    and m.expires_at > pg_catalog.now();
  return query execute $q$
    with cand as materialized (
      select m.id, pg_catalog.length(m.fts) as fts_len,
             pg_catalog.ts_filter(pg_catalog.setweight(pg_catalog.setweight(m.fts, 'D'), 'A', $7), '{a}') as hit
      from agentmem.memories m
      where m.user_id = $1 and m.tenant_id = $2
        and ($3 = '' or m.agent in ($3, ''))
        and m.expires_at > pg_catalog.now()
        and ($4 = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) $4
             and not exists (select 1 from pg_catalog.jsonb_each($4) f
                             where m.metadata operator(pg_catalog.->) f.key operator(pg_catalog.<>) f.value)))
        and ($9 is null or m.created_at >= $9)
        and ($10 is null or m.created_at < $10)
        and m.fts operator(pg_catalog.@@) $5
    ),
    tf as (
      select c.id, c.fts_len, u.lexeme, coalesce(pg_catalog.array_length(u.positions, 1), 1)::float8 as tf
      from cand c, pg_catalog.unnest(c.hit) u
    ),
    df as (select t.lexeme, pg_catalog.count(*)::float8 as df from tf t group by t.lexeme),
    lengths as (select greatest(pg_catalog.avg(c.fts_len), 1)::float8 as avgdl from cand c),
    best_possible as (
      select greatest(pg_catalog.sum(pg_catalog.ln(1 + ($8 - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)) * 2.2),
                      1e-9)::float8 as m
      from pg_catalog.unnest($7) x(lexeme) left join df d on d.lexeme = x.lexeme
    ),
    scored as (
      select t.id,
             pg_catalog.sum(pg_catalog.ln(1 + ($8 - d.df + 0.5) / (d.df + 0.5))
               * t.tf * 2.2 / (t.tf + 1.2 * (0.25 + 0.75 * t.fts_len / l.avgdl)))::float8 as bm25
      from tf t join df d on d.lexeme = t.lexeme cross join lengths l
      group by t.id
    )
    select c.id, c.bm25, least(1, c.bm25 / bp.m)::float8
    from scored c cross join best_possible bp
    order by c.bm25 desc, c.id
    limit $6
    $q$
    using p_user_id, p_tenant_id, p_agent, p_filter, q, n, terms, docs, p_since, p_until;
end
$$;

-- The n chunks of a tenant's knowledge base that best match some lexemes by BM25, best first,
-- with the tenant's statistics.
create function agentmem.knowledge_bm25_hits(p_tenant_id text, terms text[], n integer)
returns table (id uuid, score double precision, relevance double precision)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
as $$
declare
  q tsquery := agentmem.terms_query(terms);
  docs double precision;
begin
  if q is null or n < 1 then
    return;
  end if;
  -- the tenant's chunks are counted here; their average length is the matching chunks' (lengths)
  select pg_catalog.count(*) into docs from agentmem.knowledge_chunks k where k.tenant_id = p_tenant_id;
  return query execute $q$
    with cand as materialized (
      select k.id, pg_catalog.length(k.fts) as fts_len,
             pg_catalog.ts_filter(pg_catalog.setweight(pg_catalog.setweight(k.fts, 'D'), 'A', $3), '{a}') as hit
      from agentmem.knowledge_chunks k
      where k.tenant_id = $1 and k.fts operator(pg_catalog.@@) $2
    ),
    tf as (
      select c.id, c.fts_len, u.lexeme, coalesce(pg_catalog.array_length(u.positions, 1), 1)::float8 as tf
      from cand c, pg_catalog.unnest(c.hit) u
    ),
    df as (select t.lexeme, pg_catalog.count(*)::float8 as df from tf t group by t.lexeme),
    lengths as (select greatest(pg_catalog.avg(c.fts_len), 1)::float8 as avgdl from cand c),
    best_possible as (
      select greatest(pg_catalog.sum(pg_catalog.ln(1 + ($5 - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)) * 2.2),
                      1e-9)::float8 as m
      from pg_catalog.unnest($3) x(lexeme) left join df d on d.lexeme = x.lexeme
    ),
    scored as (
      select t.id,
             pg_catalog.sum(pg_catalog.ln(1 + ($5 - d.df + 0.5) / (d.df + 0.5))
               * t.tf * 2.2 / (t.tf + 1.2 * (0.25 + 0.75 * t.fts_len / l.avgdl)))::float8 as bm25
      from tf t join df d on d.lexeme = t.lexeme cross join lengths l
      group by t.id
    )
    select c.id, c.bm25, least(1, c.bm25 / bp.m)::float8
    from scored c cross join best_possible bp
    order by c.bm25 desc, c.id
    limit $4
    $q$
    using p_tenant_id, q, terms, n, docs;
end
$$;

-- The vector sides, as before (migrations store_vectors_of_any_model and search_messages),
-- with the filters of time (and, for messages, of speaker and role).
drop function agentmem.memory_neighbours(uuid, text, text, jsonb, extensions.vector, text, integer, boolean);
drop function agentmem.message_neighbours(uuid, text, text, jsonb, extensions.vector, text, integer, boolean);

-- The n memories of a user nearest to query_embedding (cosine distance), nearest first, among
-- the unexpired ones of the scope (agent: that agent's and agent-less ones; filter: top-level
-- metadata keys equal; created within [p_since, p_until) when given) whose vector query_model made at the query's dimension. With exact (a
-- scope smaller than the exact limit, see memory_scope_is_small) the scope is ranked exactly;
-- else through the model's HNSW index, scanning on until n rows pass the filters (or
-- hnsw.max_scan_tuples), then re-sorted.
create function agentmem.memory_neighbours(
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  p_since timestamptz, p_until timestamptz,
  query_embedding extensions.vector, query_model text, n integer, exact boolean
)
returns table (id uuid, distance double precision)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
as $$
declare
  dims integer := extensions.vector_dims(query_embedding);
begin
  if query_embedding is null or n < 1 then
    return;
  end if;
  if exact then
    return query
      select x.id, x.d from (
        select m.id,
               case when m.embedding_model = query_model and m.embedding_dims = dims
                    then m.embedding operator(extensions.<=>) query_embedding end as d
        from agentmem.memories m
        where m.user_id = p_user_id and m.tenant_id = p_tenant_id
          and (p_agent = '' or m.agent in (p_agent, ''))
          and m.expires_at > pg_catalog.now()
          and (p_filter = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) p_filter
            and not exists (select 1 from pg_catalog.jsonb_each(p_filter) x
                            where m.metadata operator(pg_catalog.->) x.key operator(pg_catalog.<>) x.value)))
          and (p_since is null or m.created_at >= p_since)
          and (p_until is null or m.created_at < p_until)
      ) x
      -- a text without words embeds to the zero vector: its distance is NaN, it has no rank
      where x.d is not null and x.d <> 'NaN'::float8
      order by x.d, x.id
      limit n;
    return;
  end if;
  perform pg_catalog.set_config('hnsw.iterative_scan', 'relaxed_order', true);
  perform pg_catalog.set_config('hnsw.ef_search', greatest(n, 40)::text, true);
  return query execute pg_catalog.format($q$
    with near as materialized (
      select m.id,
             m.embedding::extensions.vector(%1$s) operator(extensions.<=>) $5::extensions.vector(%1$s) as d
      from agentmem.memories m
      where m.embedding_model = %2$L and m.embedding_dims = %1$s
        and m.user_id = $1 and m.tenant_id = $2
        and ($3 = '' or m.agent in ($3, ''))
        and m.expires_at > pg_catalog.now()
        and ($4 = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) $4
          and not exists (select 1 from pg_catalog.jsonb_each($4) x
                          where m.metadata operator(pg_catalog.->) x.key operator(pg_catalog.<>) x.value)))
        and ($7 is null or m.created_at >= $7)
        and ($8 is null or m.created_at < $8)
      order by d
      limit $6
    )
    select near.id, near.d from near where near.d <> 'NaN'::float8 order by near.d, near.id
    $q$, dims, query_model)
    using p_user_id, p_tenant_id, p_agent, p_filter, query_embedding, n, p_since, p_until;
end
$$;

-- The n messages of a user nearest to query_embedding (cosine distance), nearest first, among
-- the unexpired ones of the scope (agent: that agent's) that pass the filters (as
-- message_bm25_hits: metadata, speaker, role, time)
-- whose vector query_model made at the query's dimension. With exact (a scope smaller than the
-- exact limit) the scope is ranked exactly; else through the model's HNSW index, scanning on
-- until n rows pass the filters (or hnsw.max_scan_tuples), then re-sorted. A message is
-- (session_id, seq).
create function agentmem.message_neighbours(
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  p_speaker text, p_role text, p_since timestamptz, p_until timestamptz,
  query_embedding extensions.vector, query_model text, n integer, exact boolean
)
returns table (session_id uuid, seq bigint, distance double precision)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
as $$
declare
  dims integer := extensions.vector_dims(query_embedding);
begin
  if query_embedding is null or n < 1 then
    return;
  end if;
  if exact then
    return query
      select x.session_id, x.seq, x.d from (
        select m.session_id, m.seq,
               case when m.embedding_model = query_model and m.embedding_dims = dims
                    then m.embedding operator(extensions.<=>) query_embedding end as d
        from agentmem.messages m
        where m.user_id = p_user_id and m.tenant_id = p_tenant_id
          and (p_agent = '' or m.agent = p_agent)
          and m.expires_at > pg_catalog.now()
          and (p_filter = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) p_filter
            and not exists (select 1 from pg_catalog.jsonb_each(p_filter) x
                            where m.metadata operator(pg_catalog.->) x.key operator(pg_catalog.<>) x.value)))
          and (p_speaker = '' or pg_catalog.lower(m.name) = pg_catalog.lower(p_speaker))
          and (p_role = '' or m.role = p_role)
          and (p_since is null or m.created_at >= p_since)
          and (p_until is null or m.created_at < p_until)
      ) x
      -- a text without words embeds to the zero vector: its distance is NaN, it has no rank
      where x.d is not null and x.d <> 'NaN'::float8
      order by x.d, x.session_id, x.seq
      limit n;
    return;
  end if;
  perform pg_catalog.set_config('hnsw.iterative_scan', 'relaxed_order', true);
  perform pg_catalog.set_config('hnsw.ef_search', greatest(n, 40)::text, true);
  return query execute pg_catalog.format($q$
    with near as materialized (
      select m.session_id, m.seq,
             m.embedding::extensions.vector(%1$s) operator(extensions.<=>) $5::extensions.vector(%1$s) as d
      from agentmem.messages m
      where m.embedding_model = %2$L and m.embedding_dims = %1$s
        and m.user_id = $1 and m.tenant_id = $2
        and ($3 = '' or m.agent = $3)
        and m.expires_at > pg_catalog.now()
        and ($4 = '{}'::jsonb or (m.metadata operator(pg_catalog.@>) $4
          and not exists (select 1 from pg_catalog.jsonb_each($4) x
                          where m.metadata operator(pg_catalog.->) x.key operator(pg_catalog.<>) x.value)))
        and ($7 = '' or pg_catalog.lower(m.name) = pg_catalog.lower($7))
        and ($8 = '' or m.role = $8)
        and ($9 is null or m.created_at >= $9)
        and ($10 is null or m.created_at < $10)
      order by d
      limit $6
    )
    select near.session_id, near.seq, near.d from near where near.d <> 'NaN'::float8
    order by near.d, near.session_id, near.seq
    $q$, dims, query_model)
    using p_user_id, p_tenant_id, p_agent, p_filter, query_embedding, n, p_speaker, p_role, p_since, p_until;
end
$$;


-- Recall, as before (migrations fuse_ranks_once and search_messages), its full-text side ranked
-- by BM25, with a time range ([p_since, p_until), either end null: open) and, over messages,
-- speaker and role filters and follow_weight (message_bm25_hits).
drop function agentmem.recall_memories(text, extensions.vector, text, uuid, text, text, jsonb,
  text, integer, double precision, double precision, integer, double precision, integer, integer, boolean);
drop function agentmem.recall_sources(text, text, extensions.vector, text, uuid, text, text, jsonb,
  text, integer, double precision, double precision, integer, double precision, integer, integer, boolean);
drop function agentmem.memory_text_hits(uuid, text, text, jsonb, tsquery, integer, boolean);
drop function agentmem.message_text_hits(uuid, text, text, jsonb, tsquery, integer, boolean);

create function agentmem.recall_memories(
  p_query text, query_embedding extensions.vector, query_model text,
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  p_mode text, candidates integer, text_weight double precision, vector_weight double precision,
  rrf_k integer, min_score double precision, p_k integer, exact_limit integer, with_vectors boolean,
  p_since timestamptz default null, p_until timestamptz default null,
  min_relevance double precision default 0
)
returns table (id uuid, content text, score double precision, metadata jsonb,
               created_at timestamptz, relevance double precision, embedding extensions.vector)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
as $$
declare
  -- one count for both sides
  exact boolean := agentmem.memory_scope_is_small(
    p_user_id => p_user_id, p_tenant_id => p_tenant_id, exact_limit => exact_limit);
begin
  return query
    with
    text_hits as (
      select t.id, t.score, t.relevance, pg_catalog.row_number() over (order by t.score desc, t.id) as rank
      from agentmem.memory_bm25_hits(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_since => p_since, p_until => p_until, terms => case when p_mode <> 'vector' then agentmem.query_terms(p_query) end,
             n => candidates, exact => exact) t
    ),
    vector_hits as (
      select v.id, 1 - v.distance as score, pg_catalog.row_number() over (order by v.distance, v.id) as rank
      from agentmem.memory_neighbours(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_since => p_since, p_until => p_until, query_embedding => case when p_mode <> 'text' then query_embedding end,
             query_model => query_model, n => candidates, exact => exact) v
    ),
    fused as (
      select coalesce(t.id, v.id) as id,
             case p_mode
               when 'text' then t.score
               when 'vector' then v.score
               else agentmem.rrf_score(text_rank => t.rank, vector_rank => v.rank,
                      text_weight => text_weight, vector_weight => vector_weight, rrf_k => rrf_k)
             end as score,
             greatest(coalesce(t.relevance, 0), coalesce(v.score, 0)) as relevance
      from text_hits t full join vector_hits v on v.id = t.id
    ),
    best as (
      select f.id, f.score, f.relevance from fused f
      where f.score >= min_score and f.relevance >= min_relevance
      order by f.score desc, f.id limit p_k
    )
    select f.id, m.content, f.score, m.metadata, m.created_at, f.relevance,
           case when with_vectors and m.embedding_model = query_model
                 and m.embedding_dims = extensions.vector_dims(query_embedding) then m.embedding end
    from best f join agentmem.memories m on m.id = f.id
    order by f.score desc, f.id;
end
$$;

create function agentmem.recall_sources(
  p_source text, p_query text, query_embedding extensions.vector, query_model text,
  p_user_id uuid, p_tenant_id text, p_agent text, p_filter jsonb,
  p_mode text, candidates integer, text_weight double precision, vector_weight double precision,
  rrf_k integer, min_score double precision, p_k integer, exact_limit integer, with_vectors boolean,
  p_since timestamptz default null, p_until timestamptz default null, p_speaker text default '',
  p_role text default '', follow_weight double precision default 0, min_relevance double precision default 0
)
returns table (source text, id uuid, session_id uuid, seq bigint, role text, name text, content text,
               score double precision, metadata jsonb, created_at timestamptz, relevance double precision,
               embedding extensions.vector)
language plpgsql stable
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
as $$
declare
  -- memories have no speaker nor role: a filter of either keeps messages alone
  with_memories boolean := p_source in ('memories', 'all') and p_speaker = '' and p_role = '';
  with_messages boolean := p_source in ('messages', 'all');
  terms text[] := case when p_mode <> 'vector' then agentmem.query_terms(p_query) end;
  qv extensions.vector := case when p_mode <> 'text' then query_embedding end;
  -- one count per source for both sides
  memories_exact boolean;
  messages_exact boolean;
begin
  if with_memories then
    memories_exact := agentmem.memory_scope_is_small(
      p_user_id => p_user_id, p_tenant_id => p_tenant_id, exact_limit => exact_limit);
  end if;
  if with_messages then
    messages_exact := agentmem.message_scope_is_small(
      p_user_id => p_user_id, p_tenant_id => p_tenant_id, exact_limit => exact_limit);
  end if;
  return query
    with
    text_found as (
      select 'memory'::text as src, t.id as k1, 0::bigint as k2, t.score, t.relevance
      from agentmem.memory_bm25_hits(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_since => p_since, p_until => p_until, terms => case when with_memories then terms end, n => candidates, exact => memories_exact) t
      union all
      select 'message'::text, t.session_id, t.seq, t.score, t.relevance
      from agentmem.message_bm25_hits(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_speaker => p_speaker, p_role => p_role, p_since => p_since, p_until => p_until,
             terms => case when with_messages then terms end, n => candidates, exact => messages_exact,
             follow_weight => follow_weight) t
    ),
    text_hits as (
      select t.src, t.k1, t.k2, t.score, t.relevance,
             pg_catalog.row_number() over (order by t.score desc, t.src, t.k1, t.k2) as rank
      from text_found t
    ),
    vector_found as (
      select 'memory'::text as src, v.id as k1, 0::bigint as k2, v.distance
      from agentmem.memory_neighbours(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_since => p_since, p_until => p_until, query_embedding => case when with_memories then qv end,
             query_model => query_model, n => candidates, exact => memories_exact) v
      union all
      select 'message'::text, v.session_id, v.seq, v.distance
      from agentmem.message_neighbours(
             p_user_id => p_user_id, p_tenant_id => p_tenant_id, p_agent => p_agent, p_filter => p_filter,
             p_speaker => p_speaker, p_role => p_role, p_since => p_since, p_until => p_until,
             query_embedding => case when with_messages then qv end,
             query_model => query_model, n => candidates, exact => messages_exact) v
    ),
    vector_hits as (
      select v.src, v.k1, v.k2, 1 - v.distance as score,
             pg_catalog.row_number() over (order by v.distance, v.src, v.k1, v.k2) as rank
      from vector_found v
    ),
    fused as (
      select coalesce(t.src, v.src) as src, coalesce(t.k1, v.k1) as k1, coalesce(t.k2, v.k2) as k2,
             case p_mode
               when 'text' then t.score
               when 'vector' then v.score
               else agentmem.rrf_score(text_rank => t.rank, vector_rank => v.rank,
                      text_weight => text_weight, vector_weight => vector_weight, rrf_k => rrf_k)
             end as score,
             greatest(coalesce(t.relevance, 0), coalesce(v.score, 0)) as relevance
      from text_hits t full join vector_hits v on v.src = t.src and v.k1 = t.k1 and v.k2 = t.k2
    ),
    best as (
      select f.src, f.k1, f.k2, f.score, f.relevance from fused f
      where f.score >= min_score and f.relevance >= min_relevance
      order by f.score desc, f.src, f.k1, f.k2 limit p_k
    )
    select b.src, coalesce(m.id, g.id), g.session_id, g.seq, g.role, g.name, coalesce(m.content, g.content),
           b.score, coalesce(m.metadata, g.metadata), coalesce(m.created_at, g.created_at), b.relevance,
           case when with_vectors and m.embedding_model = query_model
                 and m.embedding_dims = extensions.vector_dims(query_embedding) then m.embedding
                when with_vectors and g.embedding_model = query_model
                 and g.embedding_dims = extensions.vector_dims(query_embedding) then g.embedding end
    from best b
      left join agentmem.memories m on b.src = 'memory' and m.id = b.k1
      left join agentmem.messages g on b.src = 'message' and g.session_id = b.k1 and g.seq = b.k2
    where m.id is not null or g.session_id is not null -- only rows the caller may read, as an inner join
    order by b.score desc, b.src, b.k1, b.k2;
end
$$;

-- For the functions' roles only, as every function of schema agentmem (migration
-- take_writes_from_client_roles): they run with the caller's rights, under row-level security.
do $$
declare
  f text;
begin
  foreach f in array array[
    'agentmem.query_terms(text)',
    'agentmem.terms_query(text[])',
    'agentmem.message_bm25_hits(uuid, text, text, jsonb, text, text, timestamptz, timestamptz, text[], integer, boolean, double precision)',
    'agentmem.memory_bm25_hits(uuid, text, text, jsonb, timestamptz, timestamptz, text[], integer, boolean)',
    'agentmem.knowledge_bm25_hits(text, text[], integer)',
    'agentmem.memory_neighbours(uuid, text, text, jsonb, timestamptz, timestamptz, extensions.vector, text, integer, boolean)',
    'agentmem.message_neighbours(uuid, text, text, jsonb, text, text, timestamptz, timestamptz, extensions.vector, text, integer, boolean)',
    'agentmem.recall_memories(text, extensions.vector, text, uuid, text, text, jsonb, text, integer, double precision, double precision, integer, double precision, integer, integer, boolean, timestamptz, timestamptz, double precision)',
    'agentmem.recall_sources(text, text, extensions.vector, text, uuid, text, text, jsonb, text, integer, double precision, double precision, integer, double precision, integer, integer, boolean, timestamptz, timestamptz, text, text, double precision, double precision)'
  ] loop
    execute pg_catalog.format('revoke all on function %s from public, anon, authenticated', f);
    execute pg_catalog.format('grant execute on function %s to agentmem_caller, service_role', f);
  end loop;
end
$$;
