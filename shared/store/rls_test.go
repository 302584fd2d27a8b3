package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentmem/agentmem/shared/testdb"
)

// owner is whose row a fixture writes.
type owner struct {
	tenant string
	user   uuid.UUID
}

// rlsFixtures write one row (and what it depends on) per table of schema agentmem. A table
// added to the schema without a fixture here fails TestRowLevelSecurity, so it cannot go
// untested.
var rlsFixtures = map[string]string{
	"sessions": `insert into agentmem.sessions (id, tenant_id, user_id, agent, expires_at)
		values (gen_random_uuid(), $1, $2, 'default', now() + interval '1 day')`,
	"messages": `with s as (
		  insert into agentmem.sessions (id, tenant_id, user_id, agent, expires_at)
		  values (gen_random_uuid(), $1, $2, 'default', now() + interval '1 day') returning id)
		insert into agentmem.messages (session_id, seq, id, tenant_id, user_id, agent, role, content,
		  token_estimate, expires_at)
		select s.id, 1, gen_random_uuid(), $1, $2, 'default', 'user', 'hello', 1, now() + interval '1 day' from s`,
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
}

// rlsIntoOwnSession write a row for ($1, $2) that hangs off a session the caller can see, so
// that only the table's own policy can refuse it.
var rlsIntoOwnSession = map[string]string{
	"messages": `insert into agentmem.messages (session_id, seq, id, tenant_id, user_id, agent, role, content,
		  token_estimate, expires_at)
		select id, 1000, gen_random_uuid(), $1, $2, 'default', 'user', 'x', 1, now() + interval '1 day'
		from agentmem.sessions limit 1`,
	"active_sessions": `insert into agentmem.active_sessions (tenant_id, user_id, agent, session_id)
		select $1, $2, 'rls-foreign', id from agentmem.sessions limit 1`,
}

func rlsTables(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(t.Context(), `select tablename from pg_tables where schemaname = 'agentmem' order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 8 {
		t.Fatalf("schema agentmem has %d tables: %v", len(tables), tables)
	}
	return tables
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
	c := map[string]any{"sub": o.user.String(), "role": "authenticated"}
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

// Row-level security itself, without the store's own filters: under the authenticated role
// with a user's claims, every table of schema agentmem shows only that user's rows of that
// tenant, takes no row for anyone else, and the anon role reads nothing at all.
func TestRowLevelSecurity(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	a, b := uuid.New(), uuid.New()
	owners := []owner{{"", a}, {"", a}, {"", b}, {"t1", a}, {"t1", b}, {"t2", a}}
	tables := rlsTables(t, conn)
	for _, table := range tables {
		fixture, ok := rlsFixtures[table]
		if !ok {
			t.Errorf("table agentmem.%s has no fixture in rlsFixtures: add one so its policies are tested", table)
			continue
		}
		seen := map[owner]bool{}
		for _, o := range owners {
			if table == "user_state" && seen[o] {
				continue // one row per user and tenant
			}
			seen[o] = true
			if _, err := conn.Exec(ctx, fixture, o.tenant, o.user); err != nil {
				t.Fatalf("fixture %s for %v: %v", table, o, err)
			}
		}
	}
	if t.Failed() {
		return
	}

	count := func(table string, o owner) int {
		var n int
		if err := conn.QueryRow(ctx, "select count(*) from agentmem."+table+" where tenant_id = $1 and user_id = $2",
			o.tenant, o.user).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	for _, viewer := range []owner{{"", a}, {"", b}, {"t1", a}, {"t2", a}, {"t3", a}} {
		for _, table := range tables {
			want := count(table, viewer)
			var total int
			if err := conn.QueryRow(ctx, "select count(*) from agentmem."+table).Scan(&total); err != nil {
				t.Fatal(err)
			}
			var got, foreign int
			err := asRole(t, conn, "authenticated", userClaims(viewer), func(tx pgx.Tx) error {
				if err := tx.QueryRow(ctx, "select count(*) from agentmem."+table).Scan(&got); err != nil {
					return err
				}
				return tx.QueryRow(ctx, "select count(*) from agentmem."+table+
					" where user_id <> $1 or tenant_id <> $2", viewer.user, viewer.tenant).Scan(&foreign)
			})
			if err != nil {
				t.Fatalf("%s as %v: %v", table, viewer, err)
			}
			if got != want || foreign != 0 {
				t.Errorf("%s as %v: sees %d rows (%d of others), owns %d of %d", table, viewer, got, foreign, want, total)
			}
			if viewer.tenant != "t3" && (want == 0 || want == total) {
				t.Errorf("%s: fixture gives %v %d of %d rows; the check would prove nothing", table, viewer, want, total)
			}
		}
	}

	// A user's claims never let it write a row of another user or tenant, nor move its rows
	// to one, nor touch another's rows.
	me := owner{"t1", a}
	for _, table := range tables {
		for _, other := range []owner{{"t1", b}, {"t2", a}, {"", a}} {
			insert := rlsFixtures[table]
			if q, ok := rlsIntoOwnSession[table]; ok {
				insert = q
			}
			err := asRole(t, conn, "authenticated", userClaims(me), func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, insert, other.tenant, other.user)
				return err
			})
			if pgCode(err) != "42501" {
				t.Errorf("insert into %s as %v for %v: error %v, want a row-level security violation", table, me, other, err)
			}
		}
		err := asRole(t, conn, "authenticated", userClaims(me), func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "update agentmem."+table+" set user_id = $1", b)
			return err
		})
		if pgCode(err) != "42501" {
			t.Errorf("moving own %s rows to another user: error %v, want a row-level security violation", table, err)
		}
		before := count(table, owner{"t1", b})
		err = asRole(t, conn, "authenticated", userClaims(me), func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, "delete from agentmem."+table+" where user_id = $1", b)
			if err == nil && tag.RowsAffected() != 0 {
				t.Errorf("deleted %d of another user's %s rows", tag.RowsAffected(), table)
			}
			return err
		})
		if err != nil {
			t.Errorf("delete from %s: %v", table, err)
		}
		if count(table, owner{"t1", b}) != before {
			t.Errorf("%s rows of another user changed", table)
		}
	}

	// The authenticated role without claims, and with claims naming no user, sees nothing.
	for _, claims := range []map[string]any{nil, {"role": "authenticated"}} {
		for _, table := range tables {
			var n int
			err := asRole(t, conn, "authenticated", claims, func(tx pgx.Tx) error {
				return tx.QueryRow(ctx, "select count(*) from agentmem."+table).Scan(&n)
			})
			if err != nil || n != 0 {
				t.Errorf("%s with claims %v: %d rows, error %v", table, claims, n, err)
			}
		}
	}

	// anon may not even look, whatever its claims say.
	for _, table := range tables {
		for _, claims := range []map[string]any{nil, userClaims(owner{"", a})} {
			var n int
			err := asRole(t, conn, "anon", claims, func(tx pgx.Tx) error {
				return tx.QueryRow(ctx, "select count(*) from agentmem."+table).Scan(&n)
			})
			if pgCode(err) != "42501" {
				t.Errorf("anon reading %s: %d rows, error %v; want permission denied", table, n, err)
			}
			err = asRole(t, conn, "anon", claims, func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, rlsFixtures[table], "", a)
				return err
			})
			if pgCode(err) != "42501" {
				t.Errorf("anon writing %s: error %v; want permission denied", table, err)
			}
		}
	}
}
