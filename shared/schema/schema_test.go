package schema_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/schema"
	"github.com/agentmem/agentmem/shared/testdb"
)

// emptyDatabase creates a database with nothing in it, dropped when the test ends, and
// connects to it.
func emptyDatabase(t *testing.T) *pgx.Conn {
	t.Helper()
	server := testdb.ServerURL(t)
	admin, err := pgx.Connect(t.Context(), server)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	name := "agentmem_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	if _, err := admin.Exec(t.Context(), "create database "+pgx.Identifier{name}.Sanitize()+" template template0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), server)
		if err != nil {
			t.Log(err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "drop database if exists "+pgx.Identifier{name}.Sanitize()+" with (force)"); err != nil {
			t.Log(err)
		}
	})
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	conn, err := pgx.Connect(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func exists(t *testing.T, conn *pgx.Conn, q string, args ...any) bool {
	t.Helper()
	var ok bool
	if err := conn.QueryRow(t.Context(), "select exists ("+q+")", args...).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

const eraseTrigger = `select 1 from pg_trigger where tgrelid = to_regclass('auth.users')
	and tgname = 'agentmem_erase_deleted_user' and not tgisinternal`

// The local bootstrap gives auth.users to a database bootstrapped before the table was part of
// it, keeps the table and its rows when applied again, and the migrations then put the
// erasure trigger on it.
func TestBootstrapAddsAuthUsersToAnEarlierBootstrap(t *testing.T) {
	t.Parallel()
	conn := emptyDatabase(t)
	ctx := t.Context()
	if err := schema.Bootstrap(ctx, conn); err != nil {
		t.Fatal(err)
	}
	// What an earlier bootstrap left: the roles, schema auth and its helpers, no users table.
	if _, err := conn.Exec(ctx, `drop table auth.users`); err != nil {
		t.Fatal(err)
	}
	if err := schema.Bootstrap(ctx, conn); err != nil {
		t.Fatalf("bootstrap over an earlier bootstrap: %v", err)
	}
	if !exists(t, conn, `select 1 from pg_attribute where attrelid = to_regclass('auth.users') and attname = 'id'
		and atttypid = 'uuid'::regtype`) {
		t.Fatal("auth.users (id uuid) is missing after the bootstrap")
	}
	id := uuid.New()
	if _, err := conn.Exec(ctx, `insert into auth.users (id, aud, role, email) values ($1, 'authenticated', 'authenticated', 'a@example.com')`, id); err != nil {
		t.Fatal(err)
	}
	if err := schema.Bootstrap(ctx, conn); err != nil {
		t.Fatalf("bootstrap applied again: %v", err)
	}
	if !exists(t, conn, `select 1 from auth.users where id = $1`, id) {
		t.Fatal("bootstrap applied again lost a user")
	}
	for _, role := range []string{"anon", "authenticated"} {
		if exists(t, conn, `select 1 where has_table_privilege($1, 'auth.users', 'select')`, role) {
			t.Errorf("%s may read auth.users", role)
		}
	}
	if err := schema.Migrate(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if !exists(t, conn, eraseTrigger) {
		t.Error("no erasure trigger on auth.users after the migrations")
	}
}

// A database without auth.users (Postgres that is not Supabase) takes the migrations: the
// erasure is there, with no trigger to call it.
func TestMigrationsWithoutAuthUsers(t *testing.T) {
	t.Parallel()
	conn := emptyDatabase(t)
	ctx := t.Context()
	if err := schema.Bootstrap(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `drop table auth.users`); err != nil {
		t.Fatal(err)
	}
	if err := schema.Migrate(ctx, conn); err != nil {
		t.Fatalf("migrations without auth.users: %v", err)
	}
	if !exists(t, conn, `select 1 from pg_proc where oid = to_regprocedure('agentmem.erase_user(text)')`) {
		t.Error("agentmem.erase_user is missing")
	}
}
