package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
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
	fset, files := parseStore(t)
	for _, f := range files {
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
}

// The store takes params structs and returns domain values (package memory), whose JSON form
// is the API's: a type of the store that carried JSON tags would be one a handler renders, so
// that a change of the store would change the API. This keeps it so: no exported type of the
// store's non-test files has a field with a json tag. An unexported type may have them only as
// a stored format (a jsonb column's shape), and says so in its comment.
func TestStoreTypesCarryNoJSONTags(t *testing.T) {
	t.Parallel()
	fset, files := parseStore(t)
	exported, stored := 0, 0
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				tags := jsonTagged(ts.Type)
				if ts.Name.IsExported() {
					exported++
					for _, field := range tags {
						t.Errorf("%s: exported type %s has a json tag on %s: return a type of package memory instead",
							fset.Position(field.Pos()), ts.Name.Name, fieldName(field))
					}
					continue
				}
				if len(tags) == 0 {
					continue
				}
				stored++
				if !strings.Contains(ts.Doc.Text()+gd.Doc.Text(), "stored format") {
					t.Errorf("%s: type %s has json tags but its comment does not say they are a stored format",
						fset.Position(ts.Pos()), ts.Name.Name)
				}
			}
		}
	}
	// The store declares params types and a few results of its own; the job refs are a stored
	// format. Finding none would mean the files were not read.
	if exported == 0 || stored == 0 {
		t.Fatalf("found %d exported types and %d stored formats in the store's files", exported, stored)
	}
}

// jsonTagged lists the fields of a type expression, nested ones included, that have a json
// tag.
func jsonTagged(expr ast.Expr) []*ast.Field {
	var out []*ast.Field
	ast.Inspect(expr, func(n ast.Node) bool {
		field, ok := n.(*ast.Field)
		if !ok || field.Tag == nil {
			return true
		}
		tag, err := strconv.Unquote(field.Tag.Value)
		if err != nil {
			tag = field.Tag.Value
		}
		if _, ok := reflect.StructTag(tag).Lookup("json"); ok {
			out = append(out, field)
		}
		return true
	})
	return out
}

func fieldName(f *ast.Field) string {
	if len(f.Names) == 0 {
		return "an embedded field"
	}
	return f.Names[0].Name
}

// parseStore parses the store's non-test Go files, with their comments.
func parseStore(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatal("no source file of the store was found")
	}
	return fset, files
}
