-- Counting a large user's memories from their index, not their rows.
--
-- BM25 over a user above the exact limit needs the number of the user's unexpired memories (the
-- number of documents in its weights). agentmem.memory_bm25_hits counted them under row-level
-- security, whose policy (the user's own, or the tenant's shared ones) made the count a bitmap
-- scan that reads every row: for a user of 100,000 memories, 33,334 table pages and 137 ms a
-- recall (EXPLAIN ANALYZE as the functions' role), most of a text or hybrid recall of that user.
--
-- - memories_owner_created_idx now carries the agent and the expiry (INCLUDE), so the count is an
--   index-only scan: 29 ms for the same 100,000, no table page read (on a busy machine, load 3).
-- - agentmem.memory_scope_count counts them with its owner's rights, as row-level security
--   cannot serve an index-only scan through its policy's OR; so it checks what row-level
--   security would, as agentmem.memory_word_matches does (the scope must be the caller's own,
--   with_shared the tenant's shared memories too, else it counts nothing), and answers a number
--   only.
-- - agentmem.memory_scope_is_small, which decides between the exact and the index-served
--   ranking by reading up to the exact limit's number of the owner's memories, read them under
--   the same policy: a bitmap of all 100,000 index entries first, 36 ms. It now reads them with
--   its owner's rights, in the index's order, and stops at the limit (as messages' check does:
--   1.4 ms for a user of 100,000 messages); it answers for the caller's own memories or the
--   tenant's shared ones (owner ''), as row-level security would, and for any other scope, of
--   which the caller may read nothing, that it is small.
--
-- On a large table: the index is built again under a lock that holds back writes to memories;
-- build memories_owner_covering_idx first with CREATE INDEX CONCURRENTLY as below and this
-- migration only swaps the names.

create index if not exists memories_owner_covering_idx on agentmem.memories
  (user_id, tenant_id, created_at desc, id desc) include (agent, expires_at);
drop index if exists agentmem.memories_owner_created_idx;
alter index agentmem.memories_owner_covering_idx rename to memories_owner_created_idx;
select agentmem.name_partition_indexes('agentmem.memories'::regclass);

create function agentmem.memory_scope_count(p_user_id text, p_tenant_id text, p_agent text, shared_owner text)
returns bigint
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if agentmem.current_user_id() is null or p_user_id is distinct from agentmem.current_user_id()
     or p_tenant_id is distinct from agentmem.current_tenant() or shared_owner not in (p_user_id, '') then
    return 0;
  end if;
  return (select pg_catalog.count(*) from agentmem.memories m
          where m.user_id in (p_user_id, shared_owner) and m.tenant_id = p_tenant_id
            and (p_agent = '' or m.agent in (p_agent, ''))
            and m.expires_at > pg_catalog.now());
end
$$;

revoke all on function agentmem.memory_scope_count(text, text, text, text) from public, anon, authenticated;
grant execute on function agentmem.memory_scope_count(text, text, text, text) to agentmem_caller, service_role;

create or replace function agentmem.memory_scope_is_small(p_user_id text, p_tenant_id text, exact_limit integer)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if agentmem.current_user_id() is null or p_user_id not in (agentmem.current_user_id(), '')
     or p_tenant_id is distinct from agentmem.current_tenant() then
    return true;
  end if;
  return (select pg_catalog.count(*) < exact_limit
          from (select 1 from agentmem.memories m
                where m.user_id = p_user_id and m.tenant_id = p_tenant_id limit exact_limit) s);
end
$$;

revoke all on function agentmem.memory_scope_is_small(text, text, integer) from public, anon, authenticated;
grant execute on function agentmem.memory_scope_is_small(text, text, integer) to agentmem_caller, service_role;

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
  '  select pg_catalog.count(*) into docs
  from agentmem.memories m
  where m.user_id in (p_user_id, shared_owner) and m.tenant_id = p_tenant_id
    and (p_agent = '''' or m.agent in (p_agent, ''''))
    and m.expires_at > pg_catalog.now();',
  '  docs := agentmem.memory_scope_count(p_user_id, p_tenant_id, p_agent, shared_owner);');
