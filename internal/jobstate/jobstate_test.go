package jobstate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPutAndGetKeepAJobAcrossStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "jobs.json")
	a, err := Open(path, "srv")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	if err := a.Put(Record{ID: "j1", Pane: "%1", Command: "make", Started: start}); err != nil {
		t.Fatal(err)
	}
	// Another process on the same server, opened afterwards.
	b, err := Open(path, "srv")
	if err != nil {
		t.Fatal(err)
	}
	status := 3
	if err := b.Put(Record{ID: "j2", Pane: "%2", Command: "false", Started: start.Add(time.Second), Ended: start.Add(2 * time.Second), Status: &status}); err != nil {
		t.Fatal(err)
	}
	got, ok := a.Get("j2")
	if !ok || got.Status == nil || *got.Status != 3 || got.Pane != "%2" || !got.Ended.Equal(start.Add(2*time.Second)) {
		t.Fatalf("a.Get(j2) = %+v, %v; want b's record with status 3", got, ok)
	}
	if got, ok := b.Get("j1"); !ok || got.Command != "make" || !got.Started.Equal(start) {
		t.Fatalf("b.Get(j1) = %+v, %v; want a's record", got, ok)
	}
	if _, ok := a.Get("j3"); ok {
		t.Fatal("a.Get(j3) found a job never put")
	}
	if u := a.Unended("%1"); len(u) != 1 || u[0].ID != "j1" {
		t.Fatalf("Unended(%%1) = %+v, want j1", u)
	}
	if u := a.Unended("%2"); len(u) != 0 {
		t.Fatalf("Unended(%%2) = %+v, want none: j2 ended", u)
	}
	if err := b.Put(Record{ID: "j1", Pane: "%1", Command: "make", Started: start, Ended: start.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if u := a.Unended("%1"); len(u) != 0 {
		t.Fatalf("Unended(%%1) = %+v once b put j1's end, want none", u)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the job file: %v, %v; want mode 0600", info, err)
	}
}

func TestConcurrentPutsFromTwoStoresLoseNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.json")
	var stores [2]*Store
	for i := range stores {
		s, err := Open(path, "srv")
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = s
	}
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() {
			for k := range 40 {
				if err := s.Put(Record{ID: strconv.Itoa(i) + "-" + strconv.Itoa(k), Pane: "%0", Started: time.Now()}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i := range stores {
		for k := range 40 {
			if _, ok := stores[0].Get(strconv.Itoa(i) + "-" + strconv.Itoa(k)); !ok {
				t.Errorf("job %d-%d was lost", i, k)
			}
		}
	}
}

// Rewritten once it passes its bound, the file keeps every job with no
// end, however old, and the newest ended ones; a store that read the
// file before the rewrite reads the new one.
func TestARewriteKeepsUnendedJobsAndTheNewestEnded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.json")
	s, err := Open(path, "srv")
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(path, "srv")
	if err != nil {
		t.Fatal(err)
	}
	s.compactAt = 64 << 10 // a few hundred changes
	start := time.Now()
	if err := s.Put(Record{ID: "running", Pane: "%0", Started: start.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, ok := other.Get("running"); !ok {
		t.Fatal("another store does not see the first job")
	}
	n := maxEnded + 5
	for k := range n {
		at := start.Add(time.Duration(k) * time.Second)
		r := Record{ID: strconv.Itoa(k), Pane: "%0", Started: at}
		if err := s.Put(r); err != nil {
			t.Fatal(err)
		}
		r.Ended = at.Add(time.Millisecond)
		if err := s.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if lines := strings.Count(string(data), "\n"); err != nil || lines > n+maxEnded {
		t.Fatalf("the job file after %d changes: %d lines (%v); want it rewritten on the way", 2*n+1, lines, err)
	}
	// The last rewrite may have come before the oldest ended jobs were
	// past the newest maxEnded: one more, as the next change would make.
	if err := s.locked(func() error { _ = s.catchUp(); return s.rewrite() }); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*Store{s, other} {
		if r, ok := st.Get("running"); !ok || !r.Ended.IsZero() {
			t.Errorf("the unended job: %+v, %v; want it kept", r, ok)
		}
		for k := range n {
			r, ok := st.Get(strconv.Itoa(k))
			if want := k >= n-maxEnded; ok != want || ok && r.Ended.IsZero() {
				t.Errorf("ended job %d kept: %v (%+v), want %v", k, ok, r, want)
			}
		}
	}
}

// A line that a tmcp died writing is skipped, and the changes after it are
// read.
func TestAnUnfinishedLineIsSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.json")
	s, err := Open(path, "srv")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(Record{ID: "a", Pane: "%0", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"id":"cut","pane":"%0","comm`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := s.Put(Record{ID: "b", Pane: "%0", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	later, err := Open(path, "srv")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"a": true, "cut": false, "b": true} {
		if _, ok := later.Get(id); ok != want {
			t.Errorf("job %s found: %v, want %v", id, ok, want)
		}
	}
}

// A file of version 1, one JSON object, is taken over and rewritten.
func TestAFileOfVersionOneIsTakenOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.json")
	old := `{"version":1,"server":"srv","jobs":[{"id":"j1","pane":"%1","command":"make","started":"2026-12-02T10:00:00Z"}]}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, "srv")
	if err != nil {
		t.Fatal(err)
	}
	if u := s.Unended("%1"); len(u) != 1 || u[0].Command != "make" {
		t.Fatalf("Unended(%%1) = %+v, want the job of the old file", u)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), `{"version":2,`) {
		t.Fatalf("the file after Open: %q; want it rewritten as version 2", data)
	}
}

func TestAnUnusableFileIsSetAsideAndReported(t *testing.T) {
	cases := []struct {
		name, content, says string
	}{
		{"not JSON", "{{{ nonsense", "not a job file"},
		{"another version", `{"version":99,"server":"srv","jobs":[]}`, "version 99"},
		{"another server", `{"version":2,"server":"other"}` + "\n", `"other"`},
		{"another server, version 1", `{"version":1,"server":"other","jobs":[]}`, `"other"`},
		{"too large", `{"version":2,"server":"srv"}` + "\n" + strings.Repeat(" ", maxFileBytes), "at most"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "jobs.json")
			if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(path, "srv")
			if err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "set aside") {
				t.Fatalf("Open = %v; want an error saying %q and that the file was set aside", err, c.says)
			}
			if s == nil {
				t.Fatal("Open returned no store with its report")
			}
			aside, _ := filepath.Glob(path + ".unreadable-*")
			if len(aside) != 1 {
				t.Fatalf("files set aside: %v, want one", aside)
			}
			if kept, _ := os.ReadFile(aside[0]); string(kept) != c.content {
				t.Fatal("the file set aside is not the file as it was")
			}
			if err := s.Put(Record{ID: "j", Pane: "%0", Started: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if _, ok := s.Get("j"); !ok {
				t.Fatal("the store does not work after setting its file aside")
			}
		})
	}
}

func TestPathTellsServersApart(t *testing.T) {
	paths := map[string]bool{}
	for _, p := range []string{
		Path("/d", "", "/tmp/tmux-0/default"),
		Path("/d", "", "/tmp/tmux-0/other"),
		Path("/d", "far", "/tmp/tmux-0/default"),
		Path("/d", "far/../x", "/tmp/tmux-0/default"),
	} {
		if filepath.Dir(p) != "/d" {
			t.Errorf("Path = %s, not in /d", p)
		}
		paths[p] = true
	}
	if len(paths) != 4 {
		t.Fatalf("paths %v: want four different ones", paths)
	}
}

func TestEndsDirIsBesideItsServersFile(t *testing.T) {
	dir := t.TempDir()
	a, b := Path(dir, "", "/tmp/a/sock"), Path(dir, "", "/tmp/b/sock")
	tests := []struct{ path, want string }{
		{a, strings.TrimSuffix(a, ".json") + ".ends"},
		{b, strings.TrimSuffix(b, ".json") + ".ends"},
		{"/state/jobs", "/state/jobs.ends"},
	}
	for _, tt := range tests {
		if got := EndsDir(tt.path); got != tt.want {
			t.Errorf("EndsDir(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
	if EndsDir(a) == EndsDir(b) {
		t.Errorf("two servers share the ends directory %q", EndsDir(a))
	}
	if filepath.Dir(EndsDir(a)) != dir {
		t.Errorf("EndsDir(%q) = %q, not beside the file", a, EndsDir(a))
	}
}
