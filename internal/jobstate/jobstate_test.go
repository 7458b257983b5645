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

func TestAFileKeepsTheNewestJobs(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "jobs.json"), "srv")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for k := range maxRecords + 5 {
		if err := s.Put(Record{ID: strconv.Itoa(k), Pane: "%0", Started: start.Add(time.Duration(k) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	for k := range maxRecords + 5 {
		_, ok := s.Get(strconv.Itoa(k))
		if want := k >= 5; ok != want {
			t.Errorf("job %d kept: %v, want %v", k, ok, want)
		}
	}
}

func TestAnUnusableFileIsSetAsideAndReported(t *testing.T) {
	cases := []struct {
		name, content, says string
	}{
		{"not JSON", "{{{ nonsense", "not a job file"},
		{"another version", `{"version":99,"server":"srv","jobs":[]}`, "version 99"},
		{"another server", `{"version":1,"server":"other","jobs":[]}`, `"other"`},
		{"too large", `{"version":1,"server":"srv","jobs":[]}` + strings.Repeat(" ", maxFileBytes), "at most"},
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
