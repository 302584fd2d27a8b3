// Package agentmem holds the database schema files so that the tests and the operator command
// apply exactly the files the Supabase CLI applies.
package agentmem

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
)

//go:embed supabase/migrations/*.sql
var migrations embed.FS

//go:embed supabase/local/bootstrap.sql
var localBootstrap string

// Migration is one file of supabase/migrations.
type Migration struct {
	Name string
	SQL  string
}

// Migrations returns the files of supabase/migrations in the order they are applied.
func Migrations() ([]Migration, error) {
	names, err := fs.Glob(migrations, "supabase/migrations/*.sql")
	if err != nil {
		return nil, err
	}
	if err := checkVersions(names); err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]Migration, 0, len(names))
	for _, n := range names {
		b, err := migrations.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Name: n, SQL: string(b)})
	}
	return out, nil
}

// migrationName is how the Supabase CLI names a migration: its version (a UTC timestamp, the
// key of supabase_migrations.schema_migrations) and a name.
var migrationName = regexp.MustCompile(`^([0-9]{14})_[a-z0-9_]+\.sql$`)

// checkVersions refuses a file the Supabase CLI would not take: a name without a version, or a
// version two files share (the CLI applies one of them and stops at the other, while a fresh
// database made from the files has both).
func checkVersions(names []string) error {
	seen := map[string]string{}
	for _, n := range names {
		base := path.Base(n)
		m := migrationName.FindStringSubmatch(base)
		if m == nil {
			return fmt.Errorf("migration %s: want <14-digit version>_<snake_case_name>.sql", base)
		}
		if other, ok := seen[m[1]]; ok {
			return fmt.Errorf("migrations %s and %s share version %s: give the newer one a version of its own", other, base, m[1])
		}
		seen[m[1]] = base
	}
	return nil
}

// LocalBootstrap is the SQL that creates, where absent, what every Supabase database already
// has (the API roles, the auth helpers and auth.users). It is for local databases only.
func LocalBootstrap() string { return localBootstrap }
