-- A large scope is told by its words' totals before its rows are counted.
--
-- Every vector list (and every one-statement recall) asks whether the caller's scope is small
-- (under RECALL_EXACT_LIMIT rows: ranked exactly) or large (served by the HNSW index), by
-- counting the scope's index entries up to the limit: 2,000 entries, 0.17 ms, for every recall
-- of a large user, the users for whom recall is slowest.
--
-- The row of totals of each of the scope's agents (lexeme '' of agentmem.message_words and of
-- agentmem.memory_words) holds how many of its rows are counted: each counted row is a row of
-- the table, in the same snapshot (a row's count changes in the transaction that writes or
-- deletes it). So when the totals reach the limit, the rows do: the scope is large, and
-- nothing is counted. Below it (rows not yet counted, or a small scope), the rows are counted
-- as before. The answer is the same either way.
--
-- One write escapes the counts' triggers: on tables partitioned by user, an UPDATE that moves a
-- row to another partition (a new user_id) fires none of them, and leaves the row's counts with
-- its old scope, as it leaves BM25's statistics. No function does that (a message's user is
-- also held by its session's key). After such a write by hand, a small scope may be answered
-- as large: ranked through the index rather than exactly.

create or replace function agentmem.message_scope_is_small(p_user_id text, p_tenant_id text, exact_limit integer)
 returns boolean
 language plpgsql
 stable
 set search_path to ''
as $$
begin
  -- counted rows are rows: totals at the limit are a large scope
  if (select pg_catalog.sum(w.docs) >= exact_limit from agentmem.message_words w
      where w.user_id = p_user_id and w.tenant_id = p_tenant_id and w.lexeme = '') then
    return false;
  end if;
  return (select pg_catalog.count(*) < exact_limit
          from (select 1 from agentmem.messages m
                where m.user_id = p_user_id and m.tenant_id = p_tenant_id limit exact_limit) s);
end
$$;

create or replace function agentmem.memory_scope_is_small(p_user_id text, p_tenant_id text, exact_limit integer)
 returns boolean
 language plpgsql
 stable security definer
 set search_path to ''
as $$
begin
  if agentmem.current_user_id() is null or p_user_id not in (agentmem.current_user_id(), '')
     or p_tenant_id is distinct from agentmem.current_tenant() then
    return true;
  end if;
  -- counted rows are rows: totals at the limit are a large scope
  if (select pg_catalog.sum(w.docs) >= exact_limit from agentmem.memory_words w
      where w.user_id = p_user_id and w.tenant_id = p_tenant_id and w.lexeme = '') then
    return false;
  end if;
  return (select pg_catalog.count(*) < exact_limit
          from (select 1 from agentmem.memories m
                where m.user_id = p_user_id and m.tenant_id = p_tenant_id limit exact_limit) s);
end
$$;
