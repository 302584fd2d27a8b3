package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/store"
)

// A user's word lookups read the user's postings of the words, not every user's nor every row of
// the user: with 3,000 rows of 300 other users holding a word and the user's 5 among 2,000,
// finding the user's rows with that word (messages through agentmem.message_word_matches,
// memories through agentmem.memory_bm25_hits served by the index, under row-level security as
// a caller runs it) takes a few index entries, where a word index of all users gives 3,000 and
// a scan of the user's rows 2,000.
func TestWordLookupsReadTheUsersOwnPostings(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New()
	session := uuid.New()
	const seed = `
with others as (select gen_random_uuid() as session_id, gen_random_uuid()::text as user_id from generate_series(1, 300)),
s as (
  insert into agentmem.sessions (id, user_id, agent, expires_at)
  select session_id, user_id, 'chat', now() + interval '1 day' from others
  union all select $1, $2, 'chat', now() + interval '1 day'
  returning id, user_id
),
m as (
  insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, token_estimate, expires_at)
  select s.id, i, 'm' || i, s.user_id, 'chat', 'user',
         case when s.user_id <> $2 or i % 400 = 0 then 'the harbour at dawn, note ' || i else 'a quiet day in town, note ' || i end,
         8, now() + interval '1 day'
  from s, generate_series(1, case when s.user_id = $2 then 2000 else 10 end) i
  returning 1
)
insert into agentmem.memories (user_id, agent, content, content_key, expires_at)
select s.user_id, 'chat', c.content, c.content, now() + interval '1 day'
from s, lateral (
  select case when s.user_id <> $2 or i % 400 = 0 then 'the harbour at dawn, note ' || i else 'a quiet day in town, note ' || i end as content
  from generate_series(1, case when s.user_id = $2 then 2000 else 10 end) i) c
where (select count(*) from m) > 0`
	if _, err := e.conn.Exec(ctx, seed, session, user.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.conn.Exec(ctx, `vacuum analyze agentmem.messages, agentmem.memories`); err != nil {
		t.Fatal(err)
	}
	// memory_bm25_hits counts the scope's memories once (BM25's number of documents, from the
	// owner index alone, no row read): 2,000 entries allowed for that
	// memory_scope_is_small, whether the scope holds fewer memories than a limit (100 here, and
	// it does not: 0), reads up to the limit's entries and no row.
	for _, c := range []struct {
		name, table, find string
		counted, want     int64
	}{
		{"messages", "agentmem.messages", `select count(*) from agentmem.message_word_matches($1, '', '', 'harbour'::tsquery)`, 0, 5},
		{"memories", "agentmem.memories", `select count(*) from agentmem.memory_bm25_hits($1, '', '', '{}', null, null, array['harbour'], 10, false)`, 2000, 5},
		{"memories' size", "agentmem.memories", `select agentmem.memory_scope_is_small($1, '', 100)::int`, 100, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := pgx.BeginFunc(ctx, e.conn, func(tx pgx.Tx) error {
				// the entries the table's indexes (and its partitions', when partitioned by user) gave
				const read = `select coalesce(sum(pg_stat_get_xact_tuples_returned(i.indexrelid)), 0)::bigint from pg_index i
					where i.indrelid in (select $1::regclass union select relid from pg_partition_tree($1::regclass))`
				// and the rows fetched from the table (and its partitions) by those indexes
				const fetched = `select coalesce(sum(pg_stat_get_xact_tuples_fetched(t.relid)), 0)::bigint
					from (select $1::regclass as relid union select relid from pg_partition_tree($1::regclass)) t`
				var before, after, found, rowsBefore, rowsAfter int64
				if err := tx.QueryRow(ctx, read, c.table).Scan(&before); err != nil {
					return err
				}
				if err := tx.QueryRow(ctx, fetched, c.table).Scan(&rowsBefore); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `select set_config('role', 'agentmem_caller', true),
					set_config('request.jwt.claims', json_build_object('sub', $1::text)::text, true)`, user.String()); err != nil {
					return err
				}
				if err := tx.QueryRow(ctx, c.find, user.String()).Scan(&found); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `reset role`); err != nil {
					return err
				}
				if err := tx.QueryRow(ctx, read, c.table).Scan(&after); err != nil {
					return err
				}
				if err := tx.QueryRow(ctx, fetched, c.table).Scan(&rowsAfter); err != nil {
					return err
				}
				// the matching rows are read, and no other: the count reads the index alone
				if n := rowsAfter - rowsBefore; n > 50 {
					t.Errorf("%s: fetched %d rows of %s", c.name, n, c.table)
				}
				if found != c.want {
					t.Errorf("found %d, want %d", found, c.want)
				}
				// the user's 5, and a margin for the planner; not the other users' 3,000 (and no
				// fewer than it found: the matches come through an index, and the statistics
				// counted this lookup)
				if n := after - before; n < c.want {
					t.Errorf("%s: %d index entries of %s read, fewer than the %d found", c.name, n, c.table, c.want)
				}
				if n := after - before - c.counted; n > 50 {
					t.Errorf("%s: read %d index entries of %s beyond those it needs", c.name, n, c.table)
				} else {
					t.Logf("%s: %d index entries read", c.table, n)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// agentmem.memory_word_matches (and agentmem.memory_scope_count, which counts a scope for BM25)
// runs with its owner's rights so that an index can serve it: it answers the caller's own
// memories and, with the empty user id as the shared owner, the caller's tenant's shared ones,
// as row-level security lets the caller read them; never another user's (as the user or as the
// shared owner) nor another tenant's, and a client role may not call it at all.
func TestMemoryWordMatchesAnswerTheCallersOwnScope(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	const victim, attacker = "auth0|victim", "user_2attacker"
	if _, err := e.conn.Exec(ctx, `insert into agentmem.memories (user_id, tenant_id, agent, content, content_key, expires_at)
		values ($1, 'acme', 'chat', 'My locker code is in the blue notebook', 'k1', now() + interval '1 hour'),
		       ('', 'acme', 'chat', 'The office notebook is in the cupboard', 'k2', now() + interval '1 hour'),
		       ('', '', 'chat', 'The spare notebook is on the shelf', 'k3', now() + interval '1 hour')`, victim); err != nil {
		t.Fatal(err)
	}
	// no claims and no user (null): nothing, not even the shared memories of the tenant that
	// no claims name, which row-level security shows only to an identified user
	err := asRole(t, e.conn, store.CallerRole, nil, func(tx pgx.Tx) error {
		var n, count int
		if err := tx.QueryRow(ctx, `select (select count(*) from agentmem.memory_word_matches(null, agentmem.current_tenant(), '', '', 'notebook'::tsquery)),
			agentmem.memory_scope_count(null, agentmem.current_tenant(), '', '')`).Scan(&n, &count); err != nil {
			return err
		}
		if n != 0 || count != 0 {
			t.Errorf("without claims: %d matches and a count of %d, want none", n, count)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// the matches of a word, and the count of the scope (agentmem.memory_scope_count, which the
	// same rule guards): here the same number, as every memory holds the word
	matches := func(role string, claims map[string]any, user, tenant, shared string) (int, error) {
		var n, count int
		err := asRole(t, e.conn, role, claims, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `select (select count(*) from agentmem.memory_word_matches($1, $2, '', $3, 'notebook'::tsquery)),
				agentmem.memory_scope_count($1, $2, '', $3)`, user, tenant, shared).Scan(&n, &count)
		})
		if err == nil && count != n {
			t.Errorf("as %s: the scope counts %d memories, %d match", role, count, n)
		}
		return n, err
	}
	claims := func(sub, tenant string) map[string]any {
		return map[string]any{"role": "authenticated", "sub": sub, "app_metadata": map[string]any{"tenant_id": tenant}}
	}
	for _, c := range []struct {
		name                 string
		claims               map[string]any
		user, tenant, shared string
		want                 int
	}{
		{"the victim, own memories", claims(victim, "acme"), victim, "acme", victim, 1},
		{"the victim, with the tenant's shared ones", claims(victim, "acme"), victim, "acme", "", 2},
		{"another user of the tenant, shared ones", claims(attacker, "acme"), attacker, "acme", "", 1},
		{"another user naming the victim", claims(attacker, "acme"), victim, "acme", victim, 0},
		{"another user naming the victim as the shared owner", claims(attacker, "acme"), attacker, "acme", victim, 0},
		{"the victim's id in another tenant", claims(victim, "evil"), victim, "acme", "", 0},
		{"the victim's id asking another tenant", claims(victim, "evil"), victim, "evil", "", 0},
		{"no claims", nil, victim, "acme", "", 0},
	} {
		n, err := matches(store.CallerRole, c.claims, c.user, c.tenant, c.shared)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n != c.want {
			t.Errorf("%s: %d matches, want %d", c.name, n, c.want)
		}
	}
	// whether a scope holds fewer memories than one: the victim's and the tenant's shared ones
	// do not, to those who may read them; any other scope is small (nothing of it is visible)
	for _, c := range []struct {
		name         string
		claims       map[string]any
		user, tenant string
		want         bool
	}{
		{"the victim", claims(victim, "acme"), victim, "acme", false},
		{"another user of the tenant, shared ones", claims(attacker, "acme"), "", "acme", false},
		{"another user naming the victim", claims(attacker, "acme"), victim, "acme", true},
		{"the victim's id in another tenant", claims(victim, "evil"), victim, "acme", true},
		{"no claims", nil, victim, "acme", true},
	} {
		var small bool
		err := asRole(t, e.conn, store.CallerRole, c.claims, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `select agentmem.memory_scope_is_small($1, $2, 1)`, c.user, c.tenant).Scan(&small)
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if small != c.want {
			t.Errorf("%s: memory_scope_is_small %v, want %v", c.name, small, c.want)
		}
	}
	for _, role := range []string{"anon", "authenticated"} {
		if _, err := matches(role, claims(victim, "acme"), victim, "acme", ""); err == nil {
			t.Errorf("%s may call agentmem.memory_word_matches or agentmem.memory_scope_count", role)
		}
	}
}

// Above the exact limit, BM25 over memories takes the candidates agentmem.memory_word_matches
// answers, which all match the question, as they come: the plan that reads them tests no
// candidate against the question again (migration match_a_large_scopes_memories_once), with
// the statistics of the word counts (no filter) and with those of the matches (a filter).
func TestMemoryCandidatesAreNotMatchedAgain(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	user := uuid.New()
	e.seed(t, user, "", []string{"The harbour at dawn"}, []string{`{"a": 1}`})
	claims := fmt.Sprintf(`{"sub": %q, "role": "authenticated"}`, user)
	for _, filter := range []string{`{}`, `{"a": 1}`} {
		plans, got := explainAs(t, e.url, claims, `select h.id::text from agentmem.memory_bm25_hits($1, '', '', $2, null, null,
			array['harbour'], 10, false) h`, user.String(), filter)
		if len(got) != 1 {
			t.Errorf("filter %s: %d hits, want the user's memory", filter, len(got))
		}
		if !strings.Contains(plans, "Function Scan on memory_word_matches") {
			t.Fatalf("filter %s: no plan reading agentmem.memory_word_matches was logged:\n%s", filter, plans)
		}
		// each statement's plan, but that of the matching itself (agentmem.memory_word_matches)
		for _, plan := range strings.Split(plans, "Query Text:") {
			if strings.Contains(plan, "select m.id, m.fts, m.metadata, m.created_at from agentmem.memories m") {
				continue
			}
			for line := range strings.Lines(plan) {
				if l := strings.TrimSpace(line); strings.HasPrefix(l, "Filter:") && strings.Contains(l, "@@") {
					t.Errorf("filter %s: a candidate is matched against the question again: %s\n%s", filter, l, plans)
				}
			}
		}
	}
}
