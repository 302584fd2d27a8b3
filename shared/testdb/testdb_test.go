package testdb_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/testdb"
)

// The migrations apply to an empty database and leave every table under row-level security.
func TestMigrationsApplyWithRLSEverywhere(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	var version string
	if err := conn.QueryRow(ctx, "select extversion from pg_extension where extname = 'vector'").Scan(&version); err != nil {
		t.Fatalf("pgvector not installed: %v", err)
	}
	rows, err := conn.Query(ctx, `
		select c.relname, c.relrowsecurity,
		       (select count(*) from pg_policies p where p.schemaname = 'agentmem' and p.tablename = c.relname),
		       (select count(*) from information_schema.role_table_grants g where g.table_schema = 'agentmem'
		        and g.table_name = c.relname and g.grantee in ('anon', 'authenticated'))
		from pg_class c join pg_namespace n on n.oid = c.relnamespace
		where n.nspname = 'agentmem' and c.relkind = 'r' order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	type tbl struct {
		name     string
		rls      bool
		policies int64
		// clientGrants counts the privileges anon and authenticated hold on the table.
		clientGrants int64
	}
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tbl, error) {
		var x tbl
		return x, r.Scan(&x.name, &x.rls, &x.policies, &x.clientGrants)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 8 {
		t.Fatalf("expected at least 8 tables in schema agentmem, got %d", len(tables))
	}
	for _, x := range tables {
		// A table without policies must be closed to clients altogether (request_rates).
		if !x.rls || (x.policies == 0 && x.clientGrants > 0) {
			t.Errorf("table %s: rls=%v policies=%d client grants=%d", x.name, x.rls, x.policies, x.clientGrants)
		}
	}
	var anonGrants int
	if err := conn.QueryRow(ctx, `select count(*) from information_schema.role_table_grants
		where table_schema = 'agentmem' and grantee = 'anon'`).Scan(&anonGrants); err != nil {
		t.Fatal(err)
	}
	if anonGrants != 0 {
		t.Errorf("anon has %d grants on agentmem tables", anonGrants)
	}
}

// Create makes a migrated database under a given name, replacing one of that name; Drop ends it.
func TestCreateReplacesAndDrops(t *testing.T) {
	t.Parallel()
	server := testdb.ServerURL(t)
	ctx := context.Background()
	name := fmt.Sprintf("agentmem_jstest_create_%d", time.Now().UnixNano())
	exists := func() bool {
		t.Helper()
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var ok bool
		if err := conn.QueryRow(ctx, "select exists(select 1 from pg_database where datname = $1)", name).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for i := 0; i < 2; i++ {
		db, err := testdb.Create(ctx, server, name)
		if err != nil {
			t.Fatalf("Create #%d: %v", i+1, err)
		}
		t.Cleanup(func() { _ = db.Drop() })
		conn, err := pgx.Connect(ctx, db.URL)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		err = conn.QueryRow(ctx, "select count(*) from agentmem.sessions").Scan(&n)
		if err != nil || n != 0 {
			t.Fatalf("Create #%d: agentmem.sessions: %d rows, %v", i+1, n, err)
		}
		if i == 0 {
			// Something to be gone when the second Create replaces the database.
			if _, err := conn.Exec(ctx, "create table public.leftover (id int)"); err != nil {
				t.Fatal(err)
			}
		} else {
			var left bool
			if err := conn.QueryRow(ctx, "select to_regclass('public.leftover') is not null").Scan(&left); err != nil || left {
				t.Fatalf("the second Create kept the first database (leftover %v, %v)", left, err)
			}
		}
		conn.Close(ctx)
	}
	if err := testdb.Open(server, name).Drop(); err != nil {
		t.Fatal(err)
	}
	if exists() {
		t.Fatalf("database %s still exists after Drop", name)
	}
}
