package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// castEvent is one event line of an asciicast v2 file.
type castEvent struct {
	time       float64
	code, data string
	offset     int64 // of its line in the file
}

// castHeader is the header line of an asciicast v2 file.
type castHeader struct {
	Version   int    `json:"version"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	Timestamp int64  `json:"timestamp"`
	Title     string `json:"title"`
}

// readCast reads an asciicast v2 file, failing the test unless it is one:
// a header of version 2 with a size and a time first, then events of
// [time, code, data] whose times never go back, each line JSON and whole.
func readCast(t *testing.T, path string) (castHeader, []castEvent) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("%s does not end in a whole line", path)
	}
	var h castHeader
	var events []castEvent
	r := bufio.NewReader(bytes.NewReader(b))
	var off int64
	for n := 0; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			break
		}
		if n == 0 {
			if json.Unmarshal(line, &h) != nil || h.Version != 2 || h.Width <= 0 || h.Height <= 0 || h.Timestamp <= 0 {
				t.Fatalf("%s: first line %q is not an asciicast v2 header", path, line)
			}
		} else {
			var raw [3]any
			if err := json.Unmarshal(line, &raw); err != nil {
				t.Fatalf("%s: line %d %q is not JSON: %v", path, n+1, line, err)
			}
			e := castEvent{offset: off}
			var ok [3]bool
			e.time, ok[0] = raw[0].(float64)
			e.code, ok[1] = raw[1].(string)
			e.data, ok[2] = raw[2].(string)
			if ok != [3]bool{true, true, true} {
				t.Fatalf("%s: line %d %q is not [time, code, data]", path, n+1, line)
			}
			if len(events) > 0 && e.time < events[len(events)-1].time {
				t.Fatalf("%s: line %d goes back in time, from %v to %v", path, n+1, events[len(events)-1].time, e.time)
			}
			events = append(events, e)
		}
		off += int64(len(line))
	}
	return h, events
}

// castOutput joins the output events' data.
func castOutput(events []castEvent) string {
	var b strings.Builder
	for _, e := range events {
		if e.code == "o" {
			b.WriteString(e.data)
		}
	}
	return b.String()
}

// markers lists the markers' labels.
func markers(events []castEvent) []string {
	var out []string
	for _, e := range events {
		if e.code == "m" {
			out = append(out, e.data)
		}
	}
	return out
}

// marker returns the first event that is a marker beginning with prefix.
func marker(events []castEvent, prefix string) (castEvent, bool) {
	for _, e := range events {
		if e.code == "m" && strings.HasPrefix(e.data, prefix) {
			return e, true
		}
	}
	return castEvent{}, false
}

// castFiles lists the recordings in dir.
func castFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.cast"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// asciinemaCat replays a recording with `asciinema cat` in a pane of srv
// (it wants a terminal) and returns what it printed.
func asciinemaCat(t *testing.T, srv *tmuxtest.Server, file string) string {
	t.Helper()
	if _, err := exec.LookPath("asciinema"); err != nil {
		t.Fatal("asciinema is not installed: scripts/install-deps.sh installs it")
	}
	out := filepath.Join(t.TempDir(), "cat.out")
	newWindow(srv, fmt.Sprintf("asciinema cat '%s' > '%s'; echo $? > '%s.rc'", file, out, out))
	waitFileFor(t, out+".rc", "0\n", 20*time.Second)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitFileFor polls until the file holds want, failing the test after d.
func waitFileFor(t *testing.T, path, want string, d time.Duration) {
	t.Helper()
	var got []byte
	if !tmuxtest.WaitFor(d, func() bool {
		got, _ = os.ReadFile(path)
		return string(got) == want
	}) {
		t.Fatalf("%s holds %q, want %q", path, got, want)
	}
}

// waitCast polls until the one recording in dir has a marker beginning
// with prefix, and returns its path.
func waitCast(t *testing.T, dir, prefix string) string {
	t.Helper()
	var files []string
	if !tmuxtest.WaitFor(settle, func() bool {
		files = castFiles(t, dir)
		if len(files) != 1 {
			return false
		}
		b, _ := os.ReadFile(files[0])
		return bytes.Contains(b, []byte(`"m", "`+prefix))
	}) {
		t.Fatalf("recordings in %s: %q; want one with a marker %q", dir, files, prefix)
	}
	return files[0]
}

func TestARecordingReplaysARunCommandAndAWaitForText(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	dir := t.TempDir()
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	s := startTMCPWithEnv(t, srv, "", []string{"TMCP_AUDIT=" + audit}, "--record", dir)

	r, _ := s.runCmd(map[string]any{"paneId": pane, "command": "printf 'REC-%s\\n' one two three"})
	if r.ExitStatus == nil || *r.ExitStatus != 0 {
		t.Fatalf("run_command: %+v", r)
	}
	s.runCmd(map[string]any{"paneId": pane, "command": "sleep 0.5; printf 'REC-%s\\n' DONE", "detach": true})
	w, _ := s.waitText(map[string]any{"paneId": pane, "patterns": []string{"REC-DONE"}, "timeoutSeconds": 10})
	if w.Outcome != "matched" {
		t.Fatalf("wait_for_text: %+v", w)
	}

	// Written as it goes: the file is complete while tmcp still runs.
	file := waitCast(t, dir, "wait_for_text ended: matched")
	h, events := readCast(t, file)
	if !strings.Contains(h.Title, pane) || !strings.Contains(h.Title, "main") {
		t.Errorf("title %q does not name pane %s and session main", h.Title, pane)
	}
	if want := paneFormat(srv, pane, "#{pane_width}x#{pane_height}"); fmt.Sprintf("%dx%d", h.Width, h.Height) != want {
		t.Errorf("header size %dx%d, want the pane's %s", h.Width, h.Height, want)
	}
	out := castOutput(events)
	for _, line := range []string{"REC-one\r\n", "REC-two\r\n", "REC-three\r\n", "REC-DONE\r\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("the recording's output lacks %q:\n%q", line, out)
		}
	}
	var order []float64
	for _, m := range []string{`run_command {"command":"printf`, "run_command ended: exit status 0", `wait_for_text {`, "wait_for_text ended: matched"} {
		e, ok := marker(events, m)
		if !ok {
			t.Errorf("no marker %q among %q", m, markers(events))
			continue
		}
		order = append(order, e.time)
	}
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			t.Errorf("markers out of order: %q", markers(events))
		}
	}

	// Each call on the pane names the file and where its events begin:
	// after the begin marker of the call before, at or before its own.
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	cast, _ := os.ReadFile(file)
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var line struct {
			Tool       string `json:"tool"`
			Recordings []struct {
				PaneID string `json:"paneId"`
				File   string `json:"file"`
				Offset int64  `json:"offset"`
			} `json:"recordings"`
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		if len(line.Recordings) != 1 || line.Recordings[0].File != file || line.Recordings[0].PaneID != pane {
			t.Errorf("audit line %s: recordings %+v, want one in %s for pane %s", line.Tool, line.Recordings, file, pane)
			continue
		}
		off := line.Recordings[0].Offset
		if off <= 0 || off >= int64(len(cast)) || cast[off-1] != '\n' {
			t.Errorf("audit line %s: offset %d is not the start of a line of %s", line.Tool, off, file)
			continue
		}
		begins := markersAt(events, line.Tool+" {")
		k := seen[line.Tool]
		seen[line.Tool]++
		if k >= len(begins) || begins[k] < off || k > 0 && begins[k-1] >= off {
			t.Errorf("audit line %d of %s: offset %d, want it between the call's begin marker (of those at %v) and the one before", k+1, line.Tool, off, begins)
		}
	}
	if seen["run_command"] != 2 || seen["wait_for_text"] != 1 {
		t.Errorf("audit lines with a recording: %v; want run_command twice and wait_for_text", seen)
	}

	// Once tmcp has ended, asciinema plays the file back as it was written.
	s.cs.Close()
	_, events = readCast(t, file)
	if cat, out := asciinemaCat(t, srv, file), castOutput(events); cat != out {
		t.Errorf("asciinema cat printed %q, want the recorded output %q", cat, out)
	}
}

// markersAt lists the offsets of the markers beginning with prefix.
func markersAt(events []castEvent, prefix string) []int64 {
	var out []int64
	for _, e := range events {
		if e.code == "m" && strings.HasPrefix(e.data, prefix) {
			out = append(out, e.offset)
		}
	}
	return out
}
