package mcpserver

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/TOOLS.md from the tool definitions")

// TestToolsReferenceIsFresh fails when docs/TOOLS.md no longer matches the
// tool definitions; -update rewrites it.
func TestToolsReferenceIsFresh(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "TOOLS.md")
	want := (&Server{}).Reference()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v (run: go test ./internal/mcpserver -run Reference -update)", path, err)
	}
	if string(got) != want {
		t.Fatalf("%s is stale: run go test ./internal/mcpserver -run Reference -update", path)
	}
}
