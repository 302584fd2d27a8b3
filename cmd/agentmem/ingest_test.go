package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

func knWriteTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestCollectFiles(t *testing.T) {
	t.Parallel()
	root := knWriteTree(t, map[string]string{
		"README.MD":               "# Read me",
		"guide/intro.md":          "Intro",
		"guide/deep/faq.txt":      "FAQ",
		"guide/deep/notes.rst":    "Notes",
		"guide/image.png":         "\x89PNG",
		"guide/.draft.md":         "hidden file",
		".git/HEAD.md":            "hidden folder",
		"node_modules/pkg/doc.md": "dependency",
		"main.go":                 "package main",
	})
	if err := os.Symlink(filepath.Join(root, "guide", "intro.md"), filepath.Join(root, "link.md")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		path   string
		prefix string
		want   []string
	}{
		{"a folder", root, "", []string{"README.MD", "guide/deep/faq.txt", "guide/deep/notes.rst", "guide/intro.md"}},
		{"a folder with a prefix", root, "handbook/", []string{"handbook/README.MD", "handbook/guide/deep/faq.txt",
			"handbook/guide/deep/notes.rst", "handbook/guide/intro.md"}},
		{"a subfolder", filepath.Join(root, "guide", "deep"), "kb:", []string{"kb:faq.txt", "kb:notes.rst"}},
		{"a file is taken whatever its extension", filepath.Join(root, "main.go"), "src/", []string{"src/main.go"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, err := collectFiles(tc.path, tc.prefix)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range files {
				got = append(got, f.source)
				if b, err := os.ReadFile(f.path); err != nil || int64(len(b)) != f.size {
					t.Errorf("%s: path %s, size %d: %v", f.source, f.path, f.size, err)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("sources %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := collectFiles(filepath.Join(root, "missing"), ""); err == nil {
		t.Error("a missing path gives no error")
	}
}

// The ingest and forget commands against a real database: files land as sources, a second run
// replaces them, a failing file is reported while the others are stored, and forget erases.
func TestIngestAndForgetCommands(t *testing.T) {
	ctx := context.Background()
	conn := commandDB(t)
	sources := func() map[string]int {
		rows, err := conn.Query(ctx, `select source, count(*)::int from agentmem.knowledge_chunks
			where tenant_id = 'acme' group by source`)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		var s string
		var n int
		if _, err := pgx.ForEachRow(rows, []any{&s, &n}, func() error { out[s] = n; return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}

	root := knWriteTree(t, map[string]string{"a.md": "Alpha document.", "sub/b.txt": "Beta document."})
	if err := ingest(ctx, []string{"--tenant", "acme", "--source-prefix", "kb/", root}); err != nil {
		t.Fatal(err)
	}
	if got := sources(); len(got) != 2 || got["kb/a.md"] != 1 || got["kb/sub/b.txt"] != 1 {
		t.Fatalf("after ingest: %v", got)
	}
	// A blank file fails alone; the changed file replaces its earlier ingest.
	if err := os.WriteFile(filepath.Join(root, "blank.md"), []byte(" \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.md"), []byte("Alpha, second edition."), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ingest(ctx, []string{"--tenant", "acme", "--source-prefix", "kb/", root}); err == nil {
		t.Error("a run with a failing file exits without an error")
	}
	var content string
	if err := conn.QueryRow(ctx, `select content from agentmem.knowledge_chunks where tenant_id = 'acme' and source = 'kb/a.md'`).Scan(&content); err != nil || content != "Alpha, second edition." {
		t.Errorf("re-ingested a.md: %q, %v", content, err)
	}
	if got := sources(); len(got) != 2 {
		t.Errorf("after the second run: %v", got)
	}

	user := uuid.New()
	for _, tenant := range []string{"acme", "other"} {
		if _, err := conn.Exec(ctx, `insert into agentmem.user_state (tenant_id, user_id, mode) values ($1, $2, 'active')`, tenant, user); err != nil {
			t.Fatal(err)
		}
	}
	if err := forget(ctx, []string{"--user", user.String(), "--tenant", "acme"}); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := conn.QueryRow(ctx, `select count(*) from agentmem.user_state where user_id = $1`, user).Scan(&left); err != nil || left != 1 {
		t.Errorf("forget --tenant left %d rows (want the other tenant's 1): %v", left, err)
	}
	if err := forget(ctx, []string{"--user", user.String()}); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `select count(*) from agentmem.user_state where user_id = $1`, user).Scan(&left); err != nil || left != 0 {
		t.Errorf("forget without --tenant left %d rows: %v", left, err)
	}
	if err := forget(ctx, []string{"--user", "no\x01pe"}); err == nil {
		t.Error("forget --user nope: no error")
	}
}
