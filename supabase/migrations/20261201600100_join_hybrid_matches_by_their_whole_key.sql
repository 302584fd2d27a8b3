-- public.hybrid_match_memories reads its results by their whole key.
--
-- The function (the Supabase hybrid-search RPC that supabase-js calls) ranked the memories by
-- full text and by vector, then read the best by joining them to agentmem.memories on their id
-- alone. On tables partitioned by user (agentmem.partition_by_user) the memories' key is
-- (user_id, id) and no index has the id alone, so that join read every memory of every user:
-- 5,000 rows of 50 users for 10 results of one (EXPLAIN ANALYZE, 4 partitions). Each ranked
-- list now carries the user with the id, and the results are read by both.

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

select pg_temp.patch_function('public.hybrid_match_memories(text,extensions.vector,integer,double precision,double precision,integer,text,text,text)',
$p$  full_text as (
    select m.id,
$p$,
$p$  full_text as (
    select m.user_id, m.id,
$p$);

select pg_temp.patch_function('public.hybrid_match_memories(text,extensions.vector,integer,double precision,double precision,integer,text,text,text)',
$p$  distances as materialized (
    select m.id,
$p$,
$p$  distances as materialized (
    select m.user_id, m.id,
$p$);

select pg_temp.patch_function('public.hybrid_match_memories(text,extensions.vector,integer,double precision,double precision,integer,text,text,text)',
$p$    select x.id, pg_catalog.row_number() over (order by x.d, x.id) as rank_ix
$p$,
$p$    select x.user_id, x.id, pg_catalog.row_number() over (order by x.d, x.id) as rank_ix
$p$);

select pg_temp.patch_function('public.hybrid_match_memories(text,extensions.vector,integer,double precision,double precision,integer,text,text,text)',
$p$    full outer join semantic s on s.id = ft.id
    join agentmem.memories m on m.id = coalesce(ft.id, s.id)
$p$,
$p$    full outer join semantic s on s.user_id = ft.user_id and s.id = ft.id
    -- by the whole key: partitioned by user, no index has the id alone
    join agentmem.memories m on m.user_id = coalesce(ft.user_id, s.user_id) and m.id = coalesce(ft.id, s.id)
$p$);
