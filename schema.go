// Package agentmem holds the database schema files so that the tests and the operator command
// apply exactly the files the Supabase CLI applies.
package agentmem

import (
	"embed"
	"io/fs"
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

// LocalBootstrap is the SQL that creates, where absent, what every Supabase database already
// has (the API roles, the auth helpers and auth.users). It is for local databases only.
func LocalBootstrap() string { return localBootstrap }
