package hosts

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestSocketsInListsOnlySockets(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b", "a"} {
		l, err := net.Listen("unix", filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}
	if err := os.WriteFile(filepath.Join(dir, "plain"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := socketsIn(dir)
	want := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("socketsIn: %q, %v; want %q", got, err, want)
	}
	if got, err := socketsIn(filepath.Join(dir, "missing")); err != nil || got != nil {
		t.Errorf("socketsIn of a missing dir: %q, %v; want none", got, err)
	}
}
