package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The store reads and writes; it calls no embedding provider. Every vector it stores or ranks
// with is a parameter, embedded by the use-case layer (shared/app), which owns the time budget
// and what happens when the provider is down. This keeps it so: the package (its non-test
// files) depends on no embedding package, so it cannot name the Embedder interface or build a
// provider, and it calls no method named Embed on anything.
func TestStoreCallsNoProvider(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %v", len(deps), deps)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/agentmem/agentmem/shared/embedding") {
			t.Errorf("shared/store depends on %s: the store must take vectors, not call a provider", d)
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if n.Sel.Name == "Embed" {
					t.Errorf("%s: the store calls Embed", fset.Position(n.Pos()))
				}
			case *ast.InterfaceType:
				for _, m := range n.Methods.List {
					for _, id := range m.Names {
						if id.Name == "Embed" {
							t.Errorf("%s: the store declares an interface with Embed", fset.Position(id.Pos()))
						}
					}
				}
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no source file of the store was checked")
	}
}
