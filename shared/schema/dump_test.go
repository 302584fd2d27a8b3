package schema_test

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/schema"
	"github.com/agentmem/agentmem/shared/testdb"
)

// schemaFile is supabase/schema.sql, relative to this package.
const schemaFile = "../../supabase/schema.sql"

var update = flag.Bool("update", false, "write supabase/schema.sql from the migrations (make schema)")

// dumpMigrated describes the schema of a database made by the migrations (a copy of the test
// template), its tables of one piece whatever AGENTMEM_TEST_USER_PARTITIONS says.
func dumpMigrated(t *testing.T) string {
	t.Helper()
	return dumpURL(t, testdb.NewPartitioned(t, 1).URL)
}

func dumpURL(t *testing.T, dbURL string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	dump, err := schema.Dump(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	return dump
}

// supabase/schema.sql is what the migrations produce: a migration that changes the schema
// comes with the regenerated file (make schema).
func TestSchemaFileIsCurrent(t *testing.T) {
	got := dumpMigrated(t)
	if *update {
		if err := os.WriteFile(schemaFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", schemaFile)
		return
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatalf("read %s: %v; run make schema", schemaFile, err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	i := 0
	for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
		i++
	}
	line := func(ls []string) string {
		if i < len(ls) {
			return ls[i]
		}
		return "(end of file)"
	}
	t.Fatalf("supabase/schema.sql differs from what the migrations produce: run make schema\n"+
		"first difference at line %d:\n  file:       %s\n  migrations: %s", i+1, line(wl), line(gl))
}

// The description does not depend on the database (object ids, order of creation), and covers
// what it must.
func TestDumpIsDeterministicAndComplete(t *testing.T) {
	t.Parallel()
	a := dumpMigrated(t)

	// A database migrated afresh, not copied from the template: other object ids.
	ctx := context.Background()
	server := testdb.ServerURL(t)
	name := fmt.Sprintf("agentmem_test_dump_%d", time.Now().UnixNano())
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "create database "+name+" template template0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), server)
		if err == nil {
			defer c.Close(context.Background())
			_, err = c.Exec(context.Background(), "drop database if exists "+name+" with (force)")
		}
		if err != nil {
			t.Logf("drop %s: %v", name, err)
		}
	})
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	if err := testdb.Migrate(ctx, u.String(), true); err != nil {
		t.Fatal(err)
	}
	if b := dumpURL(t, u.String()); a != b {
		t.Fatal("two databases made by the same migrations are described differently")
	}
	for _, want := range []string{
		"create table agentmem.memories (",
		"alter table agentmem.memories enable row level security;",
		"create policy caller_reads on agentmem.memories as permissive for select to agentmem_caller",
		"grant delete, insert, select, update on table agentmem.memories to agentmem_caller;",
		"grant select on table agentmem.memories to authenticated;",
		"CREATE OR REPLACE FUNCTION agentmem.recall_memories(",
		"CREATE OR REPLACE FUNCTION public.hybrid_match_memories(",
		"grant execute on function public.match_memories(",
		"create extension if not exists vector with schema extensions;",
	} {
		if !strings.Contains(a, want) {
			t.Errorf("the description lacks %q", want)
		}
	}
	if strings.Contains(a, "pg_toast") || strings.Contains(a, "vector_in(") {
		t.Error("the description holds objects that are not the project's")
	}
}
