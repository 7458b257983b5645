package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/record"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// readCast reads an asciicast v2 file, failing the test unless it is one
// (see record.Read).
func readCast(t *testing.T, path string) (record.Header, []record.Event) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, events, err := record.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return h, events
}

// castOutput joins the output events' data.
func castOutput(events []record.Event) string {
	var b strings.Builder
	for _, e := range events {
		if e.Code == "o" {
			b.WriteString(e.Data)
		}
	}
	return b.String()
}

// markers lists the markers' labels.
func markers(events []record.Event) []string {
	var out []string
	for _, e := range events {
		if e.Code == "m" {
			out = append(out, e.Data)
		}
	}
	return out
}

// marker returns the first event that is a marker beginning with prefix.
func marker(events []record.Event, prefix string) (record.Event, bool) {
	for _, e := range events {
		if e.Code == "m" && strings.HasPrefix(e.Data, prefix) {
			return e, true
		}
	}
	return record.Event{}, false
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
		order = append(order, e.Time)
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
func markersAt(events []record.Event, prefix string) []int64 {
	var out []int64
	for _, e := range events {
		if e.Code == "m" && strings.HasPrefix(e.Data, prefix) {
			out = append(out, e.Offset)
		}
	}
	return out
}

func TestPipePaneRecordStartsAndStopsARecordingOfOnePane(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	other := newShellWindow(t, srv)
	state := t.TempDir()
	s := startTMCPWithEnv(t, srv, "", []string{"XDG_STATE_HOME=" + state})
	dir := filepath.Join(state, "tmcp", "recordings")

	var started, again, stopped struct {
		File string `json:"file"`
	}
	s.ok("pipe_pane", map[string]any{"paneId": pane, "record": true}, &started)
	if filepath.Dir(started.File) != dir {
		t.Fatalf("recording file %q, want one in %s (no --record: the default directory)", started.File, dir)
	}
	s.ok("pipe_pane", map[string]any{"paneId": pane, "record": true}, &again)
	if again.File != started.File {
		t.Errorf("recording a recorded pane again gave %q, want the same file %q", again.File, started.File)
	}
	// Recorded with no wait on the pane: the recording holds its stream.
	srv.Must("send-keys", "-t", pane, "echo REC-$((40+2))", "Enter")
	waitFileContains(t, started.File, "REC-42\\r\\n")
	// Without --record, waits on other panes are not recorded.
	s.runCmd(map[string]any{"paneId": other, "command": "echo elsewhere"})

	s.ok("pipe_pane", map[string]any{"paneId": pane, "record": false}, &stopped)
	if stopped.File != started.File {
		t.Errorf("stopping gave %q, want the file written, %q", stopped.File, started.File)
	}
	// Output tmcp's stream carries after the stop is not recorded.
	if _, text := s.runCmd(map[string]any{"paneId": pane, "command": "echo AFTER-$((40+2))"}); text != "AFTER-42" {
		t.Fatalf("run_command after the stop printed %q", text)
	}

	_, events := readCast(t, started.File)
	out := castOutput(events)
	if !strings.Contains(out, "REC-42\r\n") || strings.Contains(out, "AFTER-42") {
		t.Errorf("recording output %q: want REC-42 and nothing after the stop", out)
	}
	if m := markers(events); len(m) == 0 || m[len(m)-1] != "tmcp stopped recording" {
		t.Errorf("markers %q: want the last to say the recording stopped", m)
	}
	if files := castFiles(t, dir); len(files) != 1 {
		t.Errorf("recordings %q, want only the one asked for", files)
	}
}

// waitFileContains polls until a file holds want, failing after settle.
func waitFileContains(t *testing.T, path, want string) {
	t.Helper()
	if !tmuxtest.WaitFor(settle, func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), want)
	}) {
		b, _ := os.ReadFile(path)
		t.Fatalf("%s does not hold %q:\n%s", path, want, b)
	}
}

func TestRecordingsGoOnInANewFileWithItsOwnHeaderPastMaxBytes(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	dir := t.TempDir()
	const maxBytes = 4096
	s := startTMCP(t, srv, "", "--record", dir, "--record-max-bytes", fmt.Sprint(maxBytes))

	r, _ := s.runCmd(map[string]any{"paneId": pane, "command": "seq 1 3000"})
	if r.ExitStatus == nil || *r.ExitStatus != 0 {
		t.Fatalf("run_command: %+v", r)
	}
	s.cs.Close() // every line written
	files := castFiles(t, dir)
	if len(files) < 3 {
		t.Fatalf("recordings %q of about 20 KB at %d bytes a file: want several", files, maxBytes)
	}
	// Named in order: BASE.cast, BASE.2.cast, BASE.3.cast …
	base := ""
	for _, f := range files {
		if b, ok := strings.CutSuffix(f, ".cast"); ok && (base == "" || len(b) < len(base)) {
			base = b
		}
	}
	var out strings.Builder
	var last []record.Event
	for i := range files {
		name := record.PartPath(base, i+1)
		info, err := os.Stat(name)
		if err != nil {
			t.Fatalf("part %d: %v (files %q)", i+1, err, files)
		}
		h, events := readCast(t, name)
		if info.Size() > maxBytes && len(events) > 1 {
			t.Errorf("%s is %d bytes in %d events, over %d", name, info.Size(), len(events), maxBytes)
		}
		if !strings.Contains(h.Title, pane) {
			t.Errorf("%s: header %+v does not name the pane", name, h)
		}
		out.WriteString(castOutput(events))
		last = events
	}
	var want strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&want, "%d\r\n", i)
	}
	if !strings.Contains(out.String(), want.String()) {
		t.Errorf("the parts together do not hold seq's output in order")
	}
	if _, ok := marker(last, "run_command ended: exit status 0"); !ok {
		t.Errorf("the last part's markers %q lack the command's end", markers(last))
	}
}

func TestRecordRefusesADirectoryItCannotWriteAtStartUp(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tmcpBinary, "--record", filepath.Join(file, "dir"), "-socket-name", "tmcp-no-such-server")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--record") || !strings.Contains(string(out), file) {
		t.Errorf("tmcp --record under a file: %v, %q; want it to exit at once saying why", err, out)
	}
}
