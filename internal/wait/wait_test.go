package wait

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxserver"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// fixture is a private tmux server with a Service on it.
type fixture struct {
	t   *testing.T
	srv *tmuxtest.Server
	tc  *tmux.Client
	hub *pane.Hub
	s   *Service
	// waiting gets the pane of each text wait that is waiting for output.
	waiting chan string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := tmuxtest.New(t)
	tc, err := tmux.New(context.Background(), tmux.Options{SocketPath: srv.Socket})
	if err != nil {
		t.Fatal(err)
	}
	hub := pane.NewHub(tc)
	s := New(tc, hub, 30*time.Second)
	t.Cleanup(func() { s.Close(); hub.Close(); tc.Close() })
	f := &fixture{t: t, srv: srv, tc: tc, hub: hub, s: s, waiting: make(chan string, 1)}
	s.waiting = func(paneID string) {
		select {
		case f.waiting <- paneID:
		default: // nobody is told of a wait begun without begin
		}
	}
	f.waitForPrompt("%0")
	// As tmcp does at start-up, attach the control client before any call.
	if _, err := tc.Run(context.Background(), "list-sessions"); err != nil {
		t.Fatal(err)
	}
	return f
}

// waitForPrompt waits until a pane's shell shows its prompt.
func (f *fixture) waitForPrompt(id string) {
	f.t.Helper()
	if !tmuxtest.WaitFor(5*time.Second, func() bool {
		return strings.Contains(f.srv.Must("capture-pane", "-p", "-t", id), "#") ||
			strings.Contains(f.srv.Must("capture-pane", "-p", "-t", id), "$")
	}) {
		f.t.Fatalf("pane %s never showed a prompt", id)
	}
}

// screenShows waits until a pane's screen holds text.
func (f *fixture) screenShows(id, text string) {
	f.t.Helper()
	if !tmuxtest.WaitFor(5*time.Second, func() bool {
		return strings.Contains(f.srv.Must("capture-pane", "-p", "-J", "-t", id), text)
	}) {
		f.t.Fatalf("pane %s never showed %q: %q", id, text, f.srv.Must("capture-pane", "-p", "-t", id))
	}
}

func (f *fixture) run(cmd string, timeout time.Duration) JobResult {
	f.t.Helper()
	r, err := f.s.Run(context.Background(), RunRequest{PaneID: "%0", Command: cmd, Timeout: Timeout{Duration: timeout}})
	if err != nil {
		f.t.Fatalf("Run(%q): %v", cmd, err)
	}
	return r
}

func status(r JobResult) string {
	if r.ExitStatus == nil {
		return "none"
	}
	return fmt.Sprint(*r.ExitStatus)
}

func TestRunCommandReportsStatusAndExactOutput(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, cmd string
		status    string
		lines     []string
	}{
		{"true", "true", "0", nil},
		{"echo", "echo hello", "0", []string{"hello"}},
		{"exit in the command", "echo before; exit 3", "3", []string{"before"}},
		{"no trailing newline", "printf abc", "0", []string{"abc"}},
		{"quotes and tabs", "printf '%s\\t%s\\n' \"a'b\" 'c\"d'", "0", []string{"a'b\tc\"d"}},
		{"control bytes in the text", "echo 'x\x03y\x04z' | od -An -c | tr -s ' '", "0", []string{" x 003 y 004 z \\n"}},
		{"multi-line", "for i in 1 2\ndo\n  echo line $i\ndone", "0", []string{"line 1", "line 2"}},
		{"heredoc", "cat <<'EOF'\n$HOME stays\nEOF", "0", []string{"$HOME stays"}},
		{"syntax error", "if then", "2", nil},
		{"stderr", "echo oops >&2; false", "1", []string{"oops"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.run(tt.cmd, 10*time.Second)
			if status(r) != tt.status || !r.Finished {
				t.Fatalf("status %s finished %v (reason %q), want %s; lines %q", status(r), r.Finished, r.Reason, tt.status, r.Lines)
			}
			if tt.lines != nil && strings.Join(r.Lines, "\n") != strings.Join(tt.lines, "\n") {
				t.Fatalf("lines %q, want %q", r.Lines, tt.lines)
			}
		})
	}
	// The pane's shell survived every exit.
	if r := f.run("echo alive", 10*time.Second); status(r) != "0" {
		t.Fatalf("shell did not survive: %+v", r)
	}
}

func TestRunCommandKeepsTheLastLinesOfALongOutput(t *testing.T) {
	f := newFixture(t)
	b, err := f.s.Run(context.Background(), RunRequest{PaneID: "%0", Command: "seq 1 100000", Timeout: Timeout{Duration: 30 * time.Second}, MaxLines: 500, MaxBytes: 1 << 20})
	if err != nil || status(b) != "0" || b.TotalLines != 100000 {
		t.Fatalf("status %s, totalLines %d (%v), want 0 and 100000", status(b), b.TotalLines, err)
	}
	if len(b.Lines) != 500 || b.Lines[0] != "99501" || b.Lines[499] != "100000" || !b.Truncation.Truncated || b.Truncation.DroppedLines != 99500 {
		t.Fatalf("last lines %q…%q (%d), truncation %+v", b.Lines[0], b.Lines[len(b.Lines)-1], len(b.Lines), b.Truncation)
	}
}

// TestRunCommandOutputLongerThanTheRingStaysExact: the output is counted
// and its tail kept as it streams by, so it stays exact when the command
// writes far more than the pane's byte ring holds.
func TestRunCommandOutputLongerThanTheRingStaysExact(t *testing.T) {
	f := newFixture(t)
	b, err := f.s.Run(context.Background(), RunRequest{PaneID: "%0", Command: "seq 1 300000", Timeout: Timeout{Duration: 60 * time.Second}, MaxLines: 500, MaxBytes: 1 << 20})
	if err != nil || status(b) != "0" || b.TotalLines != 300000 || b.OutputLost {
		t.Fatalf("status %s, totalLines %d, outputLost %v (%v), want 0, 300000, false", status(b), b.TotalLines, b.OutputLost, err)
	}
	if b.TotalBytes <= pane.DefaultRingSize {
		t.Fatalf("the output was %d bytes, not more than the %d-byte ring: the test proves nothing", b.TotalBytes, pane.DefaultRingSize)
	}
	if len(b.Lines) != 500 || b.Lines[0] != "299501" || b.Lines[499] != "300000" || b.Truncation.DroppedLines != 299500 {
		t.Fatalf("last lines %q…%q (%d), truncation %+v", b.Lines[0], b.Lines[len(b.Lines)-1], len(b.Lines), b.Truncation)
	}
}

func TestRunCommandAfterHistoryIsFull(t *testing.T) {
	f := newFixture(t)
	f.srv.Must("set-option", "-g", "history-limit", "100")
	f.run("seq 1 3000", 10*time.Second)
	r, err := f.s.Run(context.Background(), RunRequest{PaneID: "%0", Command: "seq 1 5000", Timeout: Timeout{Duration: 10 * time.Second}, MaxLines: 500, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Lines) != 500 || r.Lines[499] != "5000" || r.Lines[0] != "4501" {
		t.Fatalf("got %d lines, first %q last %q", len(r.Lines), r.Lines[0], r.Lines[len(r.Lines)-1])
	}
}

func TestRunCommandRefusesABusyPaneNamingTheJob(t *testing.T) {
	f := newFixture(t)
	first, err := f.s.Run(context.Background(), RunRequest{PaneID: "%0", Command: "sleep 2", Detach: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.s.Run(context.Background(), RunRequest{PaneID: "%0", Command: "echo no", Timeout: Timeout{Duration: time.Second}})
	if err == nil || !strings.Contains(err.Error(), first.JobID) {
		t.Fatalf("second run: err %v, want a refusal naming %s", err, first.JobID)
	}
	r, err := f.s.Job(context.Background(), first.JobID, Timeout{Duration: 10 * time.Second}, 0, 0, nil)
	if err != nil || status(r) != "0" {
		t.Fatalf("get_job: %+v %v", r, err)
	}
	again, _ := f.s.Job(context.Background(), first.JobID, Timeout{}, 0, 0, nil)
	if !reflect.DeepEqual(again, r) {
		t.Fatalf("second read differs:\n%+v\n%+v", again, r)
	}
}

func TestRunCommandInterruptedByCtrlCReturnsAtOnce(t *testing.T) {
	f := newFixture(t)
	var r JobResult
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r = f.run("echo started; sleep 30", 20*time.Second)
	}()
	// The line "started" itself, not the typed command line that contains
	// the word: a C-c sent before the command runs cancels the typed line.
	tmuxtest.WaitFor(5*time.Second, func() bool {
		return slices.Contains(strings.Split(f.srv.Must("capture-pane", "-p"), "\n"), "started")
	})
	start := time.Now()
	f.srv.Must("send-keys", "-t", "%0", "C-c")
	wg.Wait()
	if status(r) != "130" || time.Since(start) > 3*time.Second {
		t.Fatalf("after C-c: status %s after %v, reason %q", status(r), time.Since(start), r.Reason)
	}
}

func TestRunCommandInAKilledPaneReturnsPaneDied(t *testing.T) {
	f := newFixture(t)
	f.srv.Must("split-window", "-t", "%0", "sh")
	var r JobResult
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r = f.run("sleep 30", 20*time.Second)
	}()
	if !tmuxtest.WaitFor(5*time.Second, func() bool { return f.runs("%0", "sleep") }) {
		t.Fatal("sleep 30 never ran in pane %0")
	}
	start := time.Now()
	f.srv.Must("kill-pane", "-t", "%0")
	wg.Wait()
	if !r.PaneDied || time.Since(start) > 3*time.Second {
		t.Fatalf("after kill-pane: %+v after %v", r, time.Since(start))
	}
}

func TestRunCommandTimeoutThenGetJob(t *testing.T) {
	f := newFixture(t)
	r := f.run("sleep 1; echo done", 200*time.Millisecond)
	if !r.TimedOut || r.Finished || r.JobID == "" {
		t.Fatalf("want a timed-out running job, got %+v", r)
	}
	j, err := f.s.Job(context.Background(), r.JobID, Timeout{Duration: 10 * time.Second}, 0, 0, nil)
	if err != nil || status(j) != "0" || strings.Join(j.Lines, ",") != "done" {
		t.Fatalf("get_job: %+v %v", j, err)
	}
}

func TestRunCommandRefusesAPaneNotAtAShell(t *testing.T) {
	f := newFixture(t)
	f.srv.Must("send-keys", "-t", "%0", "sleep 30", "Enter")
	tmuxtest.WaitFor(5*time.Second, func() bool {
		return strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", "%0", "#{pane_current_command}")) == "sleep"
	})
	_, err := f.s.Run(context.Background(), RunRequest{PaneID: "%0", Command: "true", Timeout: Timeout{Duration: time.Second}})
	if err == nil || !strings.Contains(err.Error(), `"sleep"`) {
		t.Fatalf("err %v, want a refusal naming sleep", err)
	}
}

func TestRunCommandOfEveryLengthAndByte(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("x", 3*handoverLine)
	for name, c := range map[string]struct{ cmd, want string }{
		"as written":        {"echo short", "short"},
		"handed over":       {"echo " + long + " # " + long, long},
		"long, as written":  {"echo " + long, long},
		"quote and escape":  {`printf '%s\n' "it's" '\t'`, "it's\n\\t"},
		"bytes above ASCII": {"echo 'é日本'", "é日本"},
	} {
		t.Run(name, func(t *testing.T) {
			r := f.run(c.cmd, 10*time.Second)
			if status(r) != "0" || strings.Join(r.Lines, "\n") != c.want {
				t.Fatalf("status %s lines %q, want %q", status(r), r.Lines, c.want)
			}
		})
	}
}

func FuzzPrintfEncodeRoundTripsThroughSh(f *testing.F) {
	for _, s := range []string{"", "a'b", `\n`, "\t\x03\x04", "é", "%s%%", "$(id)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.IndexByte(s, 0) >= 0 {
			return
		}
		enc := printfEncode(s)
		for i := 0; i < len(enc); i++ {
			if enc[i] < 0x20 || enc[i] >= 0x7f || enc[i] == '\'' {
				t.Fatalf("encoding of %q holds byte %#x", s, enc[i])
			}
		}
		out, err := exec.Command("sh", "-c", "printf %b '"+enc+"'").Output()
		if err != nil || string(out) != s {
			t.Fatalf("sh decoded %q as %q (%v)", s, out, err)
		}
	})
}

// runs reports whether a process named comm descends from a pane's shell.
func (f *fixture) runs(id, comm string) bool {
	pid, err := strconv.Atoi(strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", id, "#{pane_pid}")))
	if err != nil {
		return false
	}
	for todo := []int{pid}; len(todo) > 0; {
		kids, _ := tmuxserver.Children(todo[0])
		todo = append(todo[1:], kids...)
		for _, k := range kids {
			if b, _ := os.ReadFile("/proc/" + strconv.Itoa(k) + "/comm"); strings.TrimSpace(string(b)) == comm {
				return true
			}
		}
	}
	return false
}
