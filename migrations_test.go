package agentmem

import (
	"strings"
	"testing"
)

// The migrations on disk are all named as the Supabase CLI takes them, each version once.
func TestMigrationsHaveVersionsOfTheirOwn(t *testing.T) {
	migs, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(migs) == 0 {
		t.Fatal("no migrations")
	}
}

func TestCheckVersions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  string // a part of the error; empty: accepted
	}{
		{"distinct", []string{"supabase/migrations/20261126000000_a.sql", "supabase/migrations/20261126080000_b.sql"}, ""},
		{"shared version", []string{"supabase/migrations/20261126000000_cache.sql", "supabase/migrations/20261126000000_summaries.sql"},
			"share version 20261126000000"},
		{"no version", []string{"supabase/migrations/summaries.sql"}, "want <14-digit version>"},
		{"short version", []string{"supabase/migrations/2026112600_a.sql"}, "want <14-digit version>"},
		{"capitals", []string{"supabase/migrations/20261126000000_Cache.sql"}, "want <14-digit version>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkVersions(tc.files)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
