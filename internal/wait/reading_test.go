package wait

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// panePID returns the process of a pane.
func (f *fixture) panePID(id string) int {
	f.t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", id, "#{pane_pid}")))
	if err != nil {
		f.t.Fatal(err)
	}
	return pid
}

// TestShellReadingTellsALineEditorFromAShellAtWork: in every shell, at its
// prompt the shell in front waits for input; running a command in front,
// or reading a command substitution's pipe itself, it does not.
func TestShellReadingTellsALineEditorFromAShellAtWork(t *testing.T) {
	for _, sh := range testShells {
		t.Run(sh.name, func(t *testing.T) {
			f, id := newShellFixture(t, sh.name, sh.command)
			pid := f.panePID(id)
			reading := func() bool {
				t.Helper()
				r, known := f.s.shellReading(pid)
				if !known {
					t.Fatalf("%s pane %s: /proc cannot tell", sh.name, id)
				}
				return r
			}
			// As the shell starts, no group may hold its terminal yet:
			// /proc cannot tell until one does.
			if !tmuxtest.WaitFor(5*time.Second, func() bool { r, known := f.s.shellReading(pid); return known && r }) {
				r, known := f.s.shellReading(pid)
				t.Fatalf("%s at its prompt: reading %v (known %v); /proc/%d/syscall: %s", sh.name, r, known, pid, procFile(pid, "syscall"))
			}
			substitution := "x=$(sleep 3)"
			if sh.name == "fish" {
				substitution = "set x (sleep 3)"
			}
			for _, line := range []string{"sleep 3", substitution} {
				f.srv.Must("send-keys", "-t", id, line, "Enter")
				if !tmuxtest.WaitFor(5*time.Second, func() bool { return f.runs(id, "sleep") }) {
					t.Fatalf("%s: %s never ran", sh.name, line)
				}
				if reading() {
					t.Errorf("%s running %s: taken for a shell at its line editor", sh.name, line)
				}
				f.srv.Must("send-keys", "-t", id, "C-c")
				if !tmuxtest.WaitFor(5*time.Second, reading) {
					t.Fatalf("%s after C-c: not back at its line editor", sh.name)
				}
			}
		})
	}
}

// procFile returns a /proc file of a process, for failure messages.
func procFile(pid int, name string) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + name)
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(b))
}

// TestARunRightAfterBackgroundOutputDoesNotStall: a background job prints
// below the prompt just after a run ended, which leaves the cursor at the
// start of an empty row, where the screen shows no prompt; the next run
// goes at once, the shell being at its line editor, where it used to wait
// out promptWait (a second). The time is reported; the bound only catches
// that wait.
func TestARunRightAfterBackgroundOutputDoesNotStall(t *testing.T) {
	for _, sh := range testShells {
		t.Run(sh.name, func(t *testing.T) {
			f, id := newShellFixture(t, sh.name, sh.command)
			// The output is not the typed line: the screen shows both.
			if r := f.runIn(id, `sh -c "sleep 0.2; printf 'bg-%s\n' done" &`, false); !r.Finished {
				t.Fatalf("%s: the background job's run: %+v", sh.name, r)
			}
			f.screenShows(id, "bg-done")
			begun := time.Now()
			r := f.runIn(id, "echo next", false)
			took := time.Since(begun)
			if status(r) != "0" || strings.Join(r.Lines, "|") != "next" {
				t.Fatalf("%s: echo next after background output: status %s lines %q (%s)", sh.name, status(r), r.Lines, r.Reason)
			}
			t.Logf("%s: run right after background output took %v", sh.name, took.Round(time.Millisecond))
			if took >= 900*time.Millisecond {
				t.Errorf("%s: the run after background output took %v: it waited for a prompt the screen does not show", sh.name, took)
			}
		})
	}
}
