package testdb_test

import (
	"context"
	"testing"

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
