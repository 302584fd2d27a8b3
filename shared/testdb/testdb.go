// Package testdb gives tests a real PostgreSQL database with the project's migrations applied.
//
// The server comes from AGENTMEM_TEST_DATABASE_URL (a superuser URL; `make test` provides it).
// The migrations are applied once per migration set into a template database; every New clones
// that template, so each test (or test package) gets a database of its own in milliseconds.
package testdb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/shared/schema"
)

// EnvURL names the variable holding the superuser URL of the test server.
const EnvURL = "AGENTMEM_TEST_DATABASE_URL"

// EnvPoolerURL names the variable holding the same server behind PgBouncer in transaction mode.
const EnvPoolerURL = "AGENTMEM_TEST_POOLER_URL"

// EnvUserPartitions names the variable holding the number of partitions of the user-owned
// tables in the databases New and Create make (agentmem.partition_by_user; default 1, the
// migrations' layout), so that a suite runs on the partitioned layout too (make
// test-partitioned).
const EnvUserPartitions = "AGENTMEM_TEST_USER_PARTITIONS"

// UserPartitions is the number of partitions EnvUserPartitions asks for (1 when unset),
// failing the test when it is not a valid USER_PARTITIONS.
func UserPartitions(t testing.TB) int {
	t.Helper()
	n, err := schema.ParseUserPartitions(os.Getenv(EnvUserPartitions))
	if err != nil {
		t.Fatalf("%s: %v", EnvUserPartitions, err)
	}
	return n
}

// DB is a fresh database for a test.
type DB struct {
	// Name is the database name.
	Name string
	// URL connects to it directly as the superuser.
	URL string

	server string
}

// PoolerURL is the URL of the same database through the transaction-mode pooler, or "" when
// no pooler is configured.
func (d DB) PoolerURL() string {
	p := os.Getenv(EnvPoolerURL)
	if p == "" {
		return ""
	}
	return URLOf(p, d.Name)
}

// ServerURL returns the test server's superuser URL, failing the test when it is not set.
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		t.Fatalf("%s is not set: run the tests with `make test`, which starts PostgreSQL with pgvector", EnvURL)
	}
	return u
}

// New creates a database with the migrations applied and drops it when the test ends. Its
// user-owned tables have the partitions EnvUserPartitions asks for.
func New(t testing.TB) DB {
	t.Helper()
	return NewPartitioned(t, UserPartitions(t))
}

// NewPartitioned is New with the user-owned tables partitioned by user into n partitions
// (n = 1: the migrations' layout), whatever EnvUserPartitions says.
func NewPartitioned(t testing.TB, n int) DB {
	t.Helper()
	server := ServerURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	name := "agentmem_test_" + randomHex(8)
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("connect to test server: %v", err)
	}
	defer conn.Close(ctx)
	if err := createMigrated(ctx, conn, server, name, n); err != nil {
		t.Fatal(err)
	}
	db := DB{Name: name, URL: URLOf(server, name), server: server}
	t.Cleanup(func() {
		if err := db.Drop(); err != nil {
			t.Logf("drop test database: %v", err)
		}
	})
	return db
}

// Create makes the database name on the server at serverURL (a superuser URL) from the
// template of the current migration set, replacing a database of that name, and returns its
// URL. It is New for tests outside Go (the TypeScript client's): the caller drops it with Drop.
// The user-owned tables have the partitions EnvUserPartitions asks for.
func Create(ctx context.Context, serverURL, name string) (DB, error) {
	n, err := schema.ParseUserPartitions(os.Getenv(EnvUserPartitions))
	if err != nil {
		return DB{}, fmt.Errorf("%s: %w", EnvUserPartitions, err)
	}
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return DB{}, fmt.Errorf("connect to test server: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "drop database if exists "+pgx.Identifier{name}.Sanitize()+" with (force)"); err != nil {
		return DB{}, err
	}
	if err := createMigrated(ctx, conn, serverURL, name, n); err != nil {
		return DB{}, err
	}
	return DB{Name: name, URL: URLOf(serverURL, name), server: serverURL}, nil
}

// Open names an existing database on the server at serverURL, to Drop it.
func Open(serverURL, name string) DB {
	return DB{Name: name, URL: URLOf(serverURL, name), server: serverURL}
}

// Drop removes the database, closing any connection still open to it.
func (d DB) Drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, d.server)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "drop database if exists "+pgx.Identifier{d.Name}.Sanitize()+" with (force)")
	return err

}

// createFromTemplate retries briefly: PostgreSQL refuses to copy a template while another
// session is connected to it, which happens when packages create their databases at once.
// createMigrated creates the database name from the template of the current migration set,
// building the template first where it is missing. A checkout with other migrations that
// builds its own template on the same server drops ours; the template is then built again.
// partitions is the number of partitions of the user-owned tables (1: as the migrations make
// them); each number has a template of its own.
func createMigrated(ctx context.Context, conn *pgx.Conn, server, name string, partitions int) error {
	for attempt := 0; ; attempt++ {
		tmpl, err := ensureTemplate(ctx, server, partitions)
		if err != nil {
			return fmt.Errorf("prepare template database: %w", err)
		}
		err = createFromTemplate(ctx, conn, name, tmpl)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "3D000" && attempt < 3 { // invalid_catalog_name
			continue
		}
		if err != nil {
			return fmt.Errorf("create database: %w", err)
		}
		return nil
	}
}

func createFromTemplate(ctx context.Context, conn *pgx.Conn, name, tmpl string) error {
	var err error
	for i := 0; i < 100; i++ {
		_, err = conn.Exec(ctx, fmt.Sprintf("create database %s template %s",
			pgx.Identifier{name}.Sanitize(), pgx.Identifier{tmpl}.Sanitize()))
		if err == nil || !strings.Contains(err.Error(), "is being accessed by other users") {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// ensureTemplate creates the template database for the current migration set (and number of
// partitions) once per server.
func ensureTemplate(ctx context.Context, server string, partitions int) (string, error) {
	migs, err := agentmem.Migrations()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(agentmem.LocalBootstrap()))
	for _, m := range migs {
		h.Write([]byte(m.Name))
		h.Write([]byte(m.SQL))
	}
	// The templates of one migration set share this prefix; one partitioned into n ends in _p<n>.
	prefix := "agentmem_template_" + hex.EncodeToString(h.Sum(nil))[:16]
	tmpl := prefix
	if partitions > 1 {
		tmpl = fmt.Sprintf("%s_p%d", prefix, partitions)
	}

	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return "", fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	// One process builds the template; the others wait for it.
	if _, err := conn.Exec(ctx, "select pg_advisory_lock(7214031)"); err != nil {
		return "", fmt.Errorf("lock: %w", err)
	}
	defer conn.Exec(context.Background(), "select pg_advisory_unlock(7214031)") //nolint:errcheck

	// A database of that name only ever comes from a finished build (renamed below). Another
	// checkout's clean-up may have cleared its template flag and then failed to drop it (a clone
	// was being made from it): it is whole, so it is flagged again and used.
	// A drop interrupted half-way (another checkout's clean-up, while a clone was being made)
	// leaves it invalid (datconnlimit -2): it is dropped and built again.
	var exists, isTemplate, invalid bool
	if err := conn.QueryRow(ctx, `select count(*) > 0, coalesce(bool_or(datistemplate), false), coalesce(bool_or(datconnlimit = -2), false)
		from pg_database where datname = $1`, tmpl).Scan(&exists, &isTemplate, &invalid); err != nil {
		return "", err
	}
	if invalid {
		if _, err := conn.Exec(ctx, "drop database if exists "+pgx.Identifier{tmpl}.Sanitize()+" with (force)"); err != nil {
			return "", err
		}
		exists = false
	}
	if exists {
		if !isTemplate {
			if _, err := conn.Exec(ctx, "alter database "+pgx.Identifier{tmpl}.Sanitize()+" is_template true"); err != nil {
				return "", err
			}
		}
		return tmpl, nil
	}
	building := tmpl + "_building"
	if _, err := conn.Exec(ctx, "drop database if exists "+pgx.Identifier{building}.Sanitize()+" with (force)"); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "create database "+pgx.Identifier{building}.Sanitize()+" template template0"); err != nil {
		return "", err
	}
	if err := Migrate(ctx, URLOf(server, building), true); err != nil {
		return "", err
	}
	if partitions > 1 {
		if err := partition(ctx, URLOf(server, building), partitions); err != nil {
			return "", err
		}
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("alter database %s rename to %s",
		pgx.Identifier{building}.Sanitize(), pgx.Identifier{tmpl}.Sanitize())); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "alter database "+pgx.Identifier{tmpl}.Sanitize()+" is_template true"); err != nil {
		return "", err
	}
	// Templates of earlier migration sets are of no further use; those of this set with
	// another number of partitions are.
	rows, err := conn.Query(ctx, `select datname from pg_database
		where datname like 'agentmem\_template\_%' and datname not like $1`, prefix+"%")
	if err != nil {
		return "", err
	}
	stale, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	for _, name := range stale {
		id := pgx.Identifier{name}.Sanitize()
		conn.Exec(ctx, "alter database "+id+" is_template false")     //nolint:errcheck
		conn.Exec(ctx, "drop database if exists "+id+" with (force)") //nolint:errcheck
	}
	return tmpl, nil
}

// Migrate applies the local bootstrap (when bootstrap is true) and every migration to the
// database at url.
func Migrate(ctx context.Context, url string, bootstrap bool) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	if bootstrap {
		if err := schema.Bootstrap(ctx, conn); err != nil {
			return err
		}
	}
	return schema.Migrate(ctx, conn)
}

// partition partitions the user-owned tables of the database at url into n.
func partition(ctx context.Context, url string, n int) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	_, err = schema.PartitionByUser(ctx, conn, n, 0)
	return err
}

// URLOf is the server URL raw with its database replaced by name (raw itself when it does not
// parse).
func URLOf(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = "/" + name
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
