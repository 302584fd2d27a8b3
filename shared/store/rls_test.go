package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// clientHidden are the tables a Supabase client (role authenticated) may not even read.
var clientHidden = map[string]bool{"idempotency_keys": true, "jobs": true, "message_words": true, "message_words_pending": true,
	"memory_words": true}

// callerInsertOnly are the tables the functions' role (store.CallerRole) may only insert into,
// rows of the caller's own: the outbox's jobs, written by a user's change in its transaction
// and read, claimed and deleted by service_role only.
var callerInsertOnly = map[string]bool{"jobs": true}

// hiddenFrom reports whether role may not read table at all.
func hiddenFrom(role, table string) bool {
	return role == "authenticated" && clientHidden[table] || role == store.CallerRole && callerInsertOnly[table]
}

// owner is whose row a fixture writes.
type owner struct {
	tenant string
	user   string
}

func (o owner) String() string { return fmt.Sprintf("(tenant %q, user %s)", o.tenant, o.user) }

// rlsFixtures write one row (and what it depends on) per table of schema agentmem, for tenant
// $1 and user $2 (tables shared by a tenant take $1 only). A table added to the schema without
// a fixture here fails TestRowLevelSecurity, so it cannot go untested.
var rlsFixtures = map[string]string{
	"sessions": `insert into agentmem.sessions (id, tenant_id, user_id, agent, expires_at)
		values (gen_random_uuid(), $1, $2, 'default', now() + interval '1 day')`,
	"messages": `with s as (
		  insert into agentmem.sessions (id, tenant_id, user_id, agent, expires_at)
		  values (gen_random_uuid(), $1, $2, 'default', now() + interval '1 day') returning id)
		insert into agentmem.messages (session_id, seq, id, tenant_id, user_id, agent, role, content,
		  token_estimate, expires_at)
		select s.id, 1, gen_random_uuid(), $1, $2, 'default', 'user', 'hello', 1, now() + interval '1 day' from s`,
	"messages_archive": `with s as (
		  insert into agentmem.sessions (id, tenant_id, user_id, agent, expires_at)
		  values (gen_random_uuid(), $1, $2, 'default', now() + interval '1 day') returning id)
		insert into agentmem.messages_archive (session_id, seq, id, tenant_id, user_id, agent, role, content,
		  token_estimate, created_at, expires_at)
		select s.id, 1, gen_random_uuid(), $1, $2, 'default', 'user', 'hello', 1, now(), now() + interval '1 day' from s`,
	"active_sessions": `with s as (
		  insert into agentmem.sessions (id, tenant_id, user_id, agent, expires_at)
		  values (gen_random_uuid(), $1, $2, 'default', now() + interval '1 day') returning id)
		insert into agentmem.active_sessions (tenant_id, user_id, agent, session_id)
		select $1, $2, 'rls-' || gen_random_uuid(), s.id from s`,
	"memories": `insert into agentmem.memories (tenant_id, user_id, agent, content, content_key, expires_at)
		values ($1, $2, '', 'a fact', gen_random_uuid()::text, now() + interval '1 day')`,
	"user_memory": `insert into agentmem.user_memory (tenant_id, user_id, key, value)
		values ($1, $2, gen_random_uuid()::text, '{}')`,
	"user_state": `insert into agentmem.user_state (tenant_id, user_id, mode) values ($1, $2, 'active')`,
	"notes": `insert into agentmem.notes (tenant_id, user_id, agent, content)
		values ($1, $2, 'rls-' || gen_random_uuid(), '# notes')`,
	"idempotency_keys": `insert into agentmem.idempotency_keys (tenant_id, user_id, caller_role, function, key,
		request_hash, response_status, response_body, expires_at)
		values ($1, $2, 'authenticated', 'commit-turn', gen_random_uuid()::text, '\x00', 201, '{}',
		  now() + interval '1 day')`,
	"knowledge_chunks": `insert into agentmem.knowledge_chunks (tenant_id, source, chunk_index, content)
		values ($1, gen_random_uuid()::text, 0, 'a chunk')`,
	"jobs": `insert into agentmem.jobs (id, event_id, tenant_id, user_id, intent, adapter)
		values (gen_random_uuid(), gen_random_uuid(), $1, $2, 'onTurnCommitted', 'webhook')`,
	"session_summaries": `with s as (
		  insert into agentmem.sessions (id, tenant_id, user_id, agent, expires_at)
		  values (gen_random_uuid(), $1, $2, 'default', now() + interval '1 day') returning id)
		insert into agentmem.session_summaries (session_id, tenant_id, user_id, agent, content, through_seq, prompt, model)
		select s.id, $1, $2, 'default', 'a summary', 1, 'summarise.v1', 'test' from s`,
	"message_words": `insert into agentmem.message_words (tenant_id, user_id, agent, lexeme, docs)
		values ($1, $2, 'rls-' || gen_random_uuid(), 'word', 1)`,
	"message_words_pending": `insert into agentmem.message_words_pending (tenant_id, user_id, agent, session_id, seq)
		values ($1, $2, 'rls-' || gen_random_uuid(), gen_random_uuid(), 1)`,
	"memory_words": `insert into agentmem.memory_words (tenant_id, user_id, agent, lexeme, docs)
		values ($1, $2, 'rls-' || gen_random_uuid(), 'word', 1)`,
}

// rlsIntoOwnSession write a row for ($1, $2) that hangs off a session the caller can see, so
// that only the table's own policy can refuse it.
var rlsIntoOwnSession = map[string]string{
	"messages": `insert into agentmem.messages (session_id, seq, id, tenant_id, user_id, agent, role, content,
		  token_estimate, expires_at)
		select id, 1000, gen_random_uuid(), $1, $2, 'default', 'user', 'x', 1, now() + interval '1 day'
		from agentmem.sessions limit 1`,
	"messages_archive": `insert into agentmem.messages_archive (session_id, seq, id, tenant_id, user_id, agent, role,
		  content, token_estimate, created_at, expires_at)
		select id, 1000, gen_random_uuid(), $1, $2, 'default', 'user', 'x', 1, now(), now() + interval '1 day'
		from agentmem.sessions limit 1`,
	"active_sessions": `insert into agentmem.active_sessions (tenant_id, user_id, agent, session_id)
		select $1, $2, 'rls-foreign', id from agentmem.sessions limit 1`,
	"session_summaries": `insert into agentmem.session_summaries (session_id, tenant_id, user_id, agent, content,
		  through_seq, prompt, model)
		select s.id, $1, $2, 'default', 'x', 1, 'summarise.v1', 'test' from agentmem.sessions s
		where not exists (select 1 from agentmem.session_summaries x where x.session_id = s.id) limit 1`,
}

// rlsTable is a table of schema agentmem and how its rows are scoped: per user and tenant
// (a user_id column), or shared by a tenant.
type rlsTable struct {
	name    string
	perUser bool
}

func rlsTables(t *testing.T, conn *pgx.Conn) []rlsTable {
	t.Helper()
	rows, err := conn.Query(t.Context(), `
		select p.tablename,
		       exists (select 1 from information_schema.columns c where c.table_schema = 'agentmem'
		               and c.table_name = p.tablename and c.column_name = 'user_id'),
		       exists (select 1 from information_schema.columns c where c.table_schema = 'agentmem'
		               and c.table_name = p.tablename and c.column_name = 'tenant_id')
		from pg_tables p
		-- a partition is reached through its parent, whose policies apply
		where p.schemaname = 'agentmem' and not exists (select 1 from pg_inherits i
		  where i.inhrelid = format('%I.%I', p.schemaname, p.tablename)::regclass)
		order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []rlsTable
	var name string
	var perUser, perTenant bool
	if _, err := pgx.ForEachRow(rows, []any{&name, &perUser, &perTenant}, func() error {
		if closedTables[name] != "" {
			return nil // TestClosedTablesRefuseClients
		}
		if !perTenant {
			t.Errorf("table agentmem.%s has no tenant_id: every row must be scoped", name)
		}
		tables = append(tables, rlsTable{name, perUser})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 8 {
		t.Fatalf("schema agentmem has %d tables: %v", len(tables), tables)
	}
	return tables
}

// closedTables are the tables of schema agentmem that no client role reads or writes at all:
// row-level security is on with no permissive policy (only a restrictive one that denies the
// client roles) and nothing is granted to anon or authenticated.
// The store reaches them through security definer functions (request_rates: the rate-limit
// counters, see take_request_slot; cache_generations: the get-context cache's generations,
// see advance_cache_generation and check_context_cache). Each names a column of its own.
var closedTables = map[string]string{"request_rates": "tenant_id", "cache_generations": "generation"}

// Every closed table refuses anon and authenticated whatever they try, with any claims.
func TestClosedTablesRefuseClients(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	conn := storetest.Admin(t, db.URL)
	for name, column := range closedTables {
		var rls bool
		var policies int
		if err := conn.QueryRow(t.Context(), `select c.relrowsecurity,
			(select count(*) from pg_policies p where p.schemaname = 'agentmem' and p.tablename = c.relname
			   and p.permissive = 'PERMISSIVE')
			from pg_class c where c.oid = ('agentmem.' || $1)::regclass`, name).Scan(&rls, &policies); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !rls || policies != 0 {
			t.Errorf("%s: row-level security %v, %d permissive policies; want on, none", name, rls, policies)
		}
		for _, role := range []string{"anon", "authenticated"} {
			for _, q := range []string{"select count(*) from agentmem." + name, "insert into agentmem." + name + " default values",
				"update agentmem." + name + " set " + column + " = " + column, "delete from agentmem." + name} {
				err := asRole(t, conn, role, userClaims(owner{"t1", uuid.NewString()}), func(tx pgx.Tx) error {
					_, err := tx.Exec(t.Context(), q)
					return err
				})
				if pgCode(err) != "42501" {
					t.Errorf("%s: %s: error %v; want permission denied", role, q, err)
				}
			}
		}
	}
}

// rlsArgs are the fixture arguments of a table for an owner.
func rlsArgs(tb rlsTable, o owner) []any {
	if tb.perUser {
		return []any{o.tenant, o.user}
	}
	return []any{o.tenant}
}

// rlsVisible is the condition, for a superuser, of the rows an owner may see, and its arguments.
func rlsVisible(tb rlsTable, o owner) (string, []any) {
	if tb.perUser {
		return "tenant_id = $1 and user_id = $2", []any{o.tenant, o.user}
	}
	return "tenant_id = $1", []any{o.tenant}
}

// asRole runs fn in a transaction under role with the claims set for the transaction, as the
// store and PostgREST do, and rolls it back.
func asRole(t *testing.T, conn *pgx.Conn, role string, claims map[string]any, fn func(tx pgx.Tx) error) error {
	t.Helper()
	ctx := t.Context()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	c := ""
	if claims != nil {
		b, _ := json.Marshal(claims)
		c = string(b)
	}
	if _, err := tx.Exec(ctx, `select set_config('role', $1, true), set_config('request.jwt.claims', $2, true)`, role, c); err != nil {
		t.Fatal(err)
	}
	return fn(tx)
}

func userClaims(o owner) map[string]any {
	c := map[string]any{"sub": o.user, "role": "authenticated"}
	if o.tenant != "" {
		c["app_metadata"] = map[string]any{"tenant_id": o.tenant}
	}
	return c
}

func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// Row-level security itself, without the store's own filters: under the functions' role
// (store.CallerRole) with a user's claims, every table of schema agentmem shows only that
// user's rows of that tenant (or, for a table shared by a tenant, the tenant's rows), takes no
// row for anyone else; the authenticated role of a Supabase client reads the same rows (but
// none of idempotency_keys), and the anon role reads nothing at all.
func TestRowLevelSecurity(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := t.Context()
	conn := storetest.Admin(t, db.URL)

	// Users of third-party auth (Clerk's and Auth0's ids) beside one of Supabase Auth (a UUID);
	// a's id is a prefix of c's, which must not let either read the other's rows.
	a, b, c := "auth0|123", uuid.NewString(), "auth0|1234"
	owners := []owner{{"", a}, {"", a}, {"", b}, {"t1", a}, {"t1", b}, {"t2", a}, {"t1", c}, {"", "user_2abc"}}
	tables := rlsTables(t, conn)
	for _, tb := range tables {
		fixture, ok := rlsFixtures[tb.name]
		if !ok {
			t.Errorf("table agentmem.%s has no fixture in rlsFixtures: add one so its policies are tested", tb.name)
			continue
		}
		seen := map[owner]bool{}
		for _, o := range owners {
			if tb.name == "user_state" && seen[o] {
				continue // one row per user and tenant
			}
			seen[o] = true
			if _, err := conn.Exec(ctx, fixture, rlsArgs(tb, o)...); err != nil {
				t.Fatalf("fixture %s for %v: %v", tb.name, o, err)
			}
		}
	}
	if t.Failed() {
		return
	}

	count := func(tb rlsTable, o owner) int {
		t.Helper()
		where, args := rlsVisible(tb, o)
		var n int
		if err := conn.QueryRow(ctx, "select count(*) from agentmem."+tb.name+" where "+where, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	total := func(tb rlsTable) int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, "select count(*) from agentmem."+tb.name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	for _, viewer := range []owner{{"", a}, {"", b}, {"t1", a}, {"t2", a}, {"t3", a}, {"t1", c}, {"", "user_2abc"}} {
		for _, tb := range tables {
			want := count(tb, viewer)
			where, args := rlsVisible(tb, viewer)
			for _, role := range []string{store.CallerRole, "authenticated"} {
				var got, foreign int
				err := asRole(t, conn, role, userClaims(viewer), func(tx pgx.Tx) error {
					if err := tx.QueryRow(ctx, "select count(*) from agentmem."+tb.name).Scan(&got); err != nil {
						return err
					}
					return tx.QueryRow(ctx, "select count(*) from agentmem."+tb.name+" where not ("+where+")", args...).Scan(&foreign)
				})
				if hiddenFrom(role, tb.name) {
					if pgCode(err) != "42501" {
						t.Errorf("%s as %s %v: %d rows, error %v; want permission denied", tb.name, role, viewer, got, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s as %s %v: %v", tb.name, role, viewer, err)
				}
				if got != want || foreign != 0 {
					t.Errorf("%s as %s %v: sees %d rows (%d of others), may see %d of %d", tb.name, role, viewer, got, foreign, want, total(tb))
				}
			}
			if viewer.tenant != "t3" && (want == 0 || want == total(tb)) {
				t.Errorf("%s: fixture gives %v %d of %d rows; the check would prove nothing", tb.name, viewer, want, total(tb))
			}
		}
	}

	// Under the functions' role, a user's claims never let it write a row of another user or
	// tenant (nor, in a table shared by a tenant, any row), nor move its rows to someone else,
	// nor touch others' rows. (The authenticated role writes nothing at all:
	// TestClientRolesCannotWrite.)
	me := owner{"t1", a}
	for _, tb := range tables {
		if callerInsertOnly[tb.name] {
			// Its own rows it may insert, and nothing more.
			err := asRole(t, conn, store.CallerRole, userClaims(me), func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, rlsFixtures[tb.name], rlsArgs(tb, me)...)
				return err
			})
			if err != nil {
				t.Errorf("insert into %s as %v of its own row: %v", tb.name, me, err)
			}
		}
		others := []owner{{"t1", b}, {"t2", a}, {"", a}}
		if !tb.perUser {
			others = append(others, me)
		}
		for _, other := range others {
			insert := rlsFixtures[tb.name]
			if q, ok := rlsIntoOwnSession[tb.name]; ok {
				insert = q
			}
			err := asRole(t, conn, store.CallerRole, userClaims(me), func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, insert, rlsArgs(tb, other)...)
				return err
			})
			if pgCode(err) != "42501" {
				t.Errorf("insert into %s as %v for %v: error %v, want a row-level security violation", tb.name, me, other, err)
			}
		}
		before := map[owner]int{}
		for _, o := range owners {
			before[o] = count(tb, o)
		}
		move := "update agentmem." + tb.name + " set tenant_id = 't2'"
		if tb.perUser {
			move = "update agentmem." + tb.name + " set user_id = '" + b + "'"
		}
		var moved, deleted int64
		err := asRole(t, conn, store.CallerRole, userClaims(me), func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, move)
			moved = tag.RowsAffected()
			return err
		})
		if pgCode(err) != "42501" && !(err == nil && moved == 0 && !tb.perUser) {
			t.Errorf("moving own %s rows to someone else: error %v (%d rows), want a row-level security violation", tb.name, err, moved)
		}
		err = asRole(t, conn, store.CallerRole, userClaims(me), func(tx pgx.Tx) error {
			where, args := rlsVisible(tb, owner{"t2", b})
			tag, err := tx.Exec(ctx, "delete from agentmem."+tb.name+" where "+where, args...)
			deleted = tag.RowsAffected()
			return err
		})
		if deleted != 0 || (err != nil && pgCode(err) != "42501") {
			t.Errorf("delete from %s of others' rows: %d rows, error %v", tb.name, deleted, err)
		}
		for _, o := range owners {
			if n := count(tb, o); n != before[o] {
				t.Errorf("%s rows of %v changed from %d to %d", tb.name, o, before[o], n)
			}
		}
	}

	// Either role without claims, and with claims naming no user, sees no user's rows (and of
	// a tenant's shared rows, those of no tenant).
	for _, role := range []string{store.CallerRole, "authenticated"} {
		for _, claims := range []map[string]any{nil, {"role": "authenticated"}} {
			for _, tb := range tables {
				if hiddenFrom(role, tb.name) {
					continue
				}
				want := 0
				if !tb.perUser {
					want = count(tb, owner{"", uuid.Nil.String()})
				}
				var n int
				err := asRole(t, conn, role, claims, func(tx pgx.Tx) error {
					return tx.QueryRow(ctx, "select count(*) from agentmem."+tb.name).Scan(&n)
				})
				if err != nil || n != want {
					t.Errorf("%s as %s with claims %v: %d rows, want %d; error %v", tb.name, role, claims, n, want, err)
				}
			}
		}
	}

	// anon may not even look, whatever its claims say.
	for _, tb := range tables {
		for _, claims := range []map[string]any{nil, userClaims(owner{"", a})} {
			var n int
			err := asRole(t, conn, "anon", claims, func(tx pgx.Tx) error {
				return tx.QueryRow(ctx, "select count(*) from agentmem."+tb.name).Scan(&n)
			})
			if pgCode(err) != "42501" {
				t.Errorf("anon reading %s: %d rows, error %v; want permission denied", tb.name, n, err)
			}
			err = asRole(t, conn, "anon", claims, func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, rlsFixtures[tb.name], rlsArgs(tb, owner{"", a})...)
				return err
			})
			if pgCode(err) != "42501" {
				t.Errorf("anon writing %s: error %v; want permission denied", tb.name, err)
			}
		}
	}
}
