-- Recall reads its results by their keys.
--
-- agentmem.recall_memories and agentmem.recall_sources, on their generic plans, read the best
-- results' rows by joining them to the user's memories (and messages). A generic plan expects a
-- user of average size, so the join took all of the user's memories, kept them in a
-- materialized scan and filtered them once per result. For a user of 100,000 memories that is
-- a million rows a recall, spilled to disk: 300 to 450 ms of every recall, whatever its source
-- (agentmem-bench -only w3sources, clustered texts; auto_explain: "Rows Removed by Join Filter:
-- 1000000", 194,742 temporary blocks read). Each result is now read by its key, in a subquery
-- the planner keeps whole.

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

select pg_temp.patch_function('agentmem.recall_memories(text,extensions.vector,text,text,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,double precision,double precision,double precision,boolean)',
$p$    from best f join agentmem.memories m
      on m.user_id in (p_user_id, shared_owner) and m.id = f.id
$p$,
$p$    -- each by its key (a subquery kept whole): a join on the generic plan, which expects a user
    -- of average size, read all of a large user's memories once per result, spilling them to disk
    from best f cross join lateral (
      select x.* from agentmem.memories x
      where x.user_id in (p_user_id, shared_owner) and x.id = f.id
      offset 0) m
$p$);

select pg_temp.patch_function('agentmem.recall_sources(text,text,extensions.vector,text,text,text,text,jsonb,text,integer,double precision,double precision,integer,double precision,integer,integer,boolean,timestamp with time zone,timestamp with time zone,text,text,double precision,double precision,double precision,double precision,boolean)',
$p$    from best b
      left join agentmem.memories m on b.src = 'memory'
        and m.user_id in (p_user_id, shared_owner) and m.id = b.k1
      left join agentmem.messages g on b.src = 'message' and g.user_id = p_user_id and g.session_id = b.k1 and g.seq = b.k2
$p$,
$p$    -- each by its key (subqueries kept whole): a join on the generic plan, which expects a user of
    -- average size, read all of a large user's memories once per result, spilling them to disk
    from best b
      left join lateral (
        select x.* from agentmem.memories x
        where b.src = 'memory' and x.user_id in (p_user_id, shared_owner) and x.id = b.k1
        offset 0) m on true
      left join lateral (
        select y.* from agentmem.messages y
        where b.src = 'message' and y.user_id = p_user_id and y.session_id = b.k1 and y.seq = b.k2
        offset 0) g on true
$p$);
