-- Finding a user's matching messages and memories among their own rows, not everyone's.
--
-- The word indexes held each word's rows of every user (gin (fts)). A recall reads the posting
-- lists of its words, and a word common among all users ("play", a shared first name) has tens
-- of thousands of rows: the index scan read them all, and a BitmapAnd with the user's rows
-- (messages_owner_created_idx) threw away all but the user's. For a user of 6,790 messages
-- among 52,790, a question of three words spent 7.5 to 10 ms reading 35,402 postings of one word
-- to keep 868 rows; the time grows with the table, not with the user.
--
-- The indexes now key each row by its user as well (btree_gin, which Supabase offers under
-- Database, Extensions): the scan intersects the user's postings with the words' and reads the
-- rest of a posting list only where the user's rows are. The same query: 0.4 to 0.6 ms in the
-- index, 1.4 to 2.0 ms in all (EXPLAIN ANALYZE, warm, three runs each).
--
-- Building the indexes locks the tables against writes while it runs, as any index made in a
-- migration does; on a large table build them first with CREATE INDEX CONCURRENTLY under these
-- names and this migration only drops the old ones.

create extension if not exists btree_gin with schema extensions;

create index if not exists messages_user_fts_idx on agentmem.messages using gin (user_id, fts);
drop index if exists agentmem.messages_fts_idx;

create index if not exists memories_user_fts_idx on agentmem.memories using gin (user_id, fts);
drop index if exists agentmem.memories_fts_idx;

-- A user above the exact limit found their matching memories under row-level security, which
-- cannot use a word index (the match operator may not run before the policies' checks): the
-- scan read every memory of the user and tested each, 2,000 index entries and rows for a user of
-- 2,000 memories with 5 matches. agentmem.memory_word_matches answers the matching memories of
-- the user (and, with_shared, the tenant's shared ones) through the index, with what BM25 reads
-- of them (their words, metadata and time, not their text): with its owner's rights, so it
-- checks what row-level security would (a signed-in caller's own scope, else it answers
-- nothing). Planned with its values, so that one owner named twice (no shared memories) is one
-- index condition. (Reading the matches again by id under row-level security cost a probe of
-- the primary key each: 1 s for a question matching 93,000 of a user's 100,000 memories.)

create function agentmem.memory_word_matches(p_user_id text, p_tenant_id text, p_agent text, shared_owner text, q tsquery)
returns table (id uuid, fts tsvector, metadata jsonb, created_at timestamp with time zone)
language plpgsql
stable
security definer
set search_path = ''
set plan_cache_mode = 'force_custom_plan'
as $$
begin
  if agentmem.current_user_id() is null or p_user_id is distinct from agentmem.current_user_id()
     or p_tenant_id is distinct from agentmem.current_tenant() or shared_owner not in (p_user_id, '') then
    return;
  end if;
  return query
    select m.id, m.fts, m.metadata, m.created_at from agentmem.memories m
    where (m.user_id = p_user_id or m.user_id = shared_owner) and m.tenant_id = p_tenant_id
      and (p_agent = '' or m.agent in (p_agent, ''))
      and m.expires_at > pg_catalog.now() and m.fts operator(pg_catalog.@@) q;
end
$$;

revoke all on function agentmem.memory_word_matches(text, text, text, text, tsquery) from public, anon, authenticated;
grant execute on function agentmem.memory_word_matches(text, text, text, text, tsquery) to agentmem_caller, service_role;

create or replace function pg_temp.patch_function(fn regprocedure, old text, new text) returns void
language plpgsql
as $$
declare
  def text := pg_catalog.pg_get_functiondef(fn);
  found integer := (pg_catalog.length(def) - pg_catalog.length(pg_catalog.replace(def, old, ''))) / pg_catalog.length(old);
begin
  if found <> 1 then
    raise exception 'patch of %: the text to change is there % times, not once: %', fn, found, old;
  end if;
  execute pg_catalog.replace(def, old, new);
end
$$;

select pg_temp.patch_function(
  'agentmem.memory_bm25_hits(text,text,text,jsonb,timestamp with time zone,timestamp with time zone,text[],integer,boolean,boolean)',
  'from agentmem.memories m
      where m.user_id in ($1, $11) and m.tenant_id = $2
        and ($3 = '''' or m.agent in ($3, ''''))
        and m.expires_at > pg_catalog.now()
        and ($4',
  'from agentmem.memory_word_matches($1, $2, $3, $11, $5) m
      where ($4');
