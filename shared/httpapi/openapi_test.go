package httpapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/shared/httpapi"
)

// openAPIPath is the project's API reference, relative to this package.
const openAPIPath = "../../docs/openapi.yaml"

// TestOpenAPIDocumentsEveryFunction checks that docs/openapi.yaml has a path for every function
// the server serves, and none for a function it does not.
func TestOpenAPIDocumentsEveryFunction(t *testing.T) {
	lines := openAPILines(t)
	var documented []string
	pathRE := regexp.MustCompile(`^  (/\S*):\s*$`)
	for _, l := range block(t, lines, "paths") {
		if m := pathRE.FindStringSubmatch(l); m != nil {
			documented = append(documented, m[1])
		}
	}
	var served []string
	for _, name := range httpapi.NewServer(nil, nil, slog.Default(), httpapi.Config{}).Functions() {
		served = append(served, "/v1/"+name)
	}
	slices.Sort(documented)
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		t.Errorf("docs/openapi.yaml documents paths %v; the server serves %v", documented, served)
	}
}

// TestOpenAPIDocumentsEveryErrorCode checks that the ErrorCode enum of docs/openapi.yaml lists
// exactly the codes declared in package apierror.
func TestOpenAPIDocumentsEveryErrorCode(t *testing.T) {
	lines := openAPILines(t)
	var documented []string
	inEnum, enumIndent := false, 0
	for _, l := range block(t, lines, "ErrorCode") {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		switch {
		case strings.TrimSpace(l) == "enum:":
			inEnum, enumIndent = true, indent
		case inEnum && indent > enumIndent && strings.HasPrefix(strings.TrimSpace(l), "- "):
			documented = append(documented, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- ")))
		case strings.TrimSpace(l) != "" && indent <= enumIndent:
			inEnum = false
		}
	}
	declared := errorCodes(t)
	slices.Sort(documented)
	slices.Sort(declared)
	if len(declared) == 0 {
		t.Fatal("found no error codes in package apierror")
	}
	if !slices.Equal(documented, declared) {
		t.Errorf("docs/openapi.yaml ErrorCode enum is %v; package apierror declares %v", documented, declared)
	}
}

func openAPILines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(openAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
}

// block returns the lines nested under the first mapping key named key (the lines after it
// that are blank or indented deeper than it).
func block(t *testing.T, lines []string, key string) []string {
	t.Helper()
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		if strings.TrimRight(trimmed, " ") != key+":" {
			continue
		}
		indent := len(l) - len(trimmed)
		end := i + 1
		for ; end < len(lines); end++ {
			next := lines[end]
			if strings.TrimSpace(next) != "" && len(next)-len(strings.TrimLeft(next, " ")) <= indent {
				break
			}
		}
		return lines[i+1 : end]
	}
	t.Fatalf("docs/openapi.yaml has no %q key", key)
	return nil
}

// errorCodes returns the values of the constants of type Code declared in package apierror.
func errorCodes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../apierror/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if typ, ok := vs.Type.(*ast.Ident); !ok || typ.Name != "Code" {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: a Code constant that is not a string literal", fset.Position(v.Pos()))
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					codes = append(codes, s)
				}
			}
		}
	}
	return codes
}
