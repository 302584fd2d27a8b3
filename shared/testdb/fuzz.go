package testdb

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Fuzz gives the database fuzz targets share: one per migration set ("agentmem_fuzz_" and the
// template's key), made from the template on first use and kept, like the template, for every
// later run. A fuzz run starts a process per worker and each would otherwise copy a database
// of its own, which costs seconds per target and leaves the copies behind (a worker is stopped,
// not ended, so its cleanups do not run). Fuzz inputs write rows of fresh users only.
func Fuzz(t testing.TB) DB {
	t.Helper()
	server := ServerURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tmpl, err := ensureTemplate(ctx, server, UserPartitions(t))
	if err != nil {
		t.Fatalf("prepare template database: %v", err)
	}
	name := strings.Replace(tmpl, "agentmem_template_", "agentmem_fuzz_", 1)
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("connect to test server: %v", err)
	}
	defer conn.Close(ctx)
	// One process creates it; the others wait, then find it there.
	if _, err := conn.Exec(ctx, "select pg_advisory_lock(7214032)"); err != nil {
		t.Fatalf("lock: %v", err)
	}
	defer conn.Exec(context.Background(), "select pg_advisory_unlock(7214032)") //nolint:errcheck
	var exists bool
	if err := conn.QueryRow(ctx, "select exists (select from pg_database where datname = $1)", name).Scan(&exists); err != nil {
		t.Fatalf("look for the fuzz database: %v", err)
	}
	if !exists {
		if err := createFromTemplate(ctx, conn, name, tmpl); err != nil {
			t.Fatalf("create fuzz database: %v", err)
		}
	}
	return DB{Name: name, URL: URLOf(server, name), server: server}
}
