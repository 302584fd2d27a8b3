package mcpserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Only the binaries that serve mcp import the MCP SDK: a package's init runs, and is linked, in
// every binary that imports it, whether or not the binary calls it.
func TestOnlyMCPImportsTheSDK(t *testing.T) {
	dirs, err := filepath.Glob("../../functions/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "main.go")); err != nil {
			continue
		}
		out, err := exec.Command("go", "list", "-deps", "./"+d).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", d, err, out)
		}
		imports := strings.Contains(string(out), "github.com/modelcontextprotocol/go-sdk")
		if want := filepath.Base(d) == "mcp"; imports != want {
			t.Errorf("functions/%s imports the MCP SDK: %v, want %v", filepath.Base(d), imports, want)
		}
	}
}
