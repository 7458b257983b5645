package wait

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/jobstate"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// testShells are the shells run_command drives, each started with no user
// configuration, and how to list its history (empty: it keeps none).
var testShells = []struct {
	name, command, history string
}{
	{"bash", "env HISTFILE=/dev/null PS1='$ ' bash --norc --noprofile", "history"},
	{"zsh", "env HISTFILE=/dev/null PS1='$ ' zsh -f", "fc -ln 1"},
	{"dash", "env PS1='$ ' dash -i", ""},
	{"mksh", "env ENV=/dev/null HISTFILE=/dev/null PS1='$ ' mksh -i", "fc -l 1 99999"},
	{"fish", "fish --no-config", "history"},
}

// shellPane opens a window running a shell and waits for its prompt.
func (f *fixture) shellPane(name, command string) string {
	f.t.Helper()
	id := strings.TrimSpace(f.srv.Must("new-window", "-d", "-P", "-F", "#{pane_id}", command))
	if !tmuxtest.WaitFor(10*time.Second, func() bool {
		if strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", id, "#{pane_current_command}")) != name {
			return false
		}
		screen := strings.TrimSpace(f.srv.Must("capture-pane", "-p", "-t", id))
		return strings.HasSuffix(screen, "$") || strings.HasSuffix(screen, "#") || strings.HasSuffix(screen, ">")
	}) {
		f.t.Fatalf("%s never showed a prompt: %q", command, f.srv.Must("capture-pane", "-p", "-t", id))
	}
	return id
}

// newShellFixture runs in parallel a fixture with a window running shell
// name by command, at its prompt; the shell keeps its history, if it
// saves one, in a home of its own.
func newShellFixture(t *testing.T, name, command string) (*fixture, string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is not installed: scripts/install-deps.sh installs it", name)
	}
	t.Parallel()
	f := newFixture(t)
	return f, f.shellPane(name, "env HOME="+t.TempDir()+" "+strings.TrimPrefix(command, "env "))
}

func (f *fixture) runIn(paneID, cmd string, suppress bool) JobResult {
	f.t.Helper()
	r, err := f.s.Run(context.Background(), RunRequest{PaneID: paneID, Command: cmd, SuppressHistory: suppress,
		Timeout: Timeout{Duration: 10 * time.Second}})
	if err != nil {
		f.t.Fatalf("Run(%.60q): %v (pane runs %s)", cmd, err, f.srv.Must("display-message", "-p", "-t", paneID, "#{pane_current_command} #{pane_pid}"))
	}
	return r
}

// TestRunCommandInEveryShell runs the same commands in each shell: the
// line typed is the command and at most 40 bytes more (the shell's helper
// is typed once, on the first run), the status and output are exact, a
// multi-line command is handed over under a short line, C-c gives 130,
// and the history holds the commands as written, and no tmcp text.
func TestRunCommandInEveryShell(t *testing.T) {
	for _, sh := range testShells {
		t.Run(sh.name, func(t *testing.T) {
			f, id := newShellFixture(t, sh.name, sh.command)
			fish := sh.name == "fish"

			before := f.hub.TypedBytes(id)
			if r := f.runIn(id, "echo 'build done'", false); status(r) != "0" || strings.Join(r.Lines, "|") != "build done" {
				t.Fatalf("first run: status %s lines %q", status(r), r.Lines)
			}
			first := f.hub.TypedBytes(id) - before
			typed := func(cmd string, suppress bool, status string, lines ...string) int64 {
				t.Helper()
				before := f.hub.TypedBytes(id)
				r := f.runIn(id, cmd, suppress)
				if got := statusOf(r); got != status || (lines != nil && strings.Join(r.Lines, "|") != strings.Join(lines, "|")) {
					t.Fatalf("%.40q: status %s lines %q (reason %q), want %s %q", cmd, got, r.Lines, r.Reason, status, lines)
				}
				return f.hub.TypedBytes(id) - before
			}
			short := typed("echo 'build done'", false, "0", "build done")
			quoted := typed(`printf '%s|%s\n' "it's" 'say "hi"'`, false, "0", `it's|say "hi"`)
			long := "echo " + strings.Repeat("y", 2043)
			long2k := typed(long, false, "0", strings.Repeat("y", 2043))
			t.Logf("%s: bytes typed for echo 'build done': %d on the first run (the helper with it), %d after; a quoted command +%d, a 2 KB one +%d",
				sh.name, first, short, quoted-int64(len(`printf '%s|%s\n' "it's" 'say "hi"'`)), long2k-int64(len(long)))
			for name, extra := range map[string]int64{"short": short - int64(len("echo 'build done'")), "2 KB": long2k - int64(len(long))} {
				// And the Enters, fish's spaces after the lines (see
				// fishPasted), and zsh's nocorrect.
				if extra > 40+2+int64(len(noCorrect(familyOf(sh.name)))) {
					t.Errorf("a %s command typed with %d bytes of tmcp's own, want 40 at most, and zsh's nocorrect", name, extra-2)
				}
			}

			// exit ends the command, not the shell: in fish too, where the
			// command runs in the shell itself.
			pane := func() string {
				return strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", id, "#{pane_pid} #{pane_dead}"))
			}
			shell := pane()
			var fishPID string
			if fish {
				fishPID = f.runIn(id, "echo $fish_pid", false).Lines[0]
			}
			typed("echo before; exit 3", false, "3", "before")
			if !fish {
				// "((" opens an arithmetic command in bash, zsh and mksh.
				typed("(echo in-subshell; exit 5)", false, "5", "in-subshell")
				if sh.name != "dash" { // dash has no arithmetic command
					typed("((1+1)) && echo arith", false, "0", "arith")
				}
			}
			if fish {
				typed("false; exit; echo not-reached", false, "1")
				typed("begin; echo in-block; exit 4; end; echo not-reached", false, "4", "in-block")           // handed over: a block
				typed("exit foo; echo went-on $status", false, "0", "exit: foo: invalid integer", "went-on 2") // as fish's: it ends nothing
				typed("echo $fish_pid", false, "0", fishPID)
				// fish cannot parse it, says so in its own words, and keeps
				// it in its editor: handed over, eval reports the error.
				typed("(exit 5)", false, "123")
				// Between runs exit is fish's own again.
				file := filepath.Join(t.TempDir(), "exit")
				f.srv.Must("send-keys", "-t", id, " functions -q exit; echo $status >"+file+".part; mv "+file+".part "+file, "Enter")
				var b []byte
				tmuxtest.WaitFor(5*time.Second, func() bool { b, _ = os.ReadFile(file); return b != nil })
				if strings.TrimSpace(string(b)) != "1" {
					t.Errorf("after the runs fish has an exit function (functions -q exit: %q), want its builtin alone", b)
				}
			}
			if now := pane(); now != shell {
				t.Fatalf("after exit 3 the pane's process and deadness are %q, want %q: the shell alive", now, shell)
			}
			multi := "for i in 1 2\ndo\n  echo line $i\ndone"
			if fish {
				multi = "for i in 1 2\n  echo line $i\nend"
			}
			typed(multi, false, "0", "line 1", "line 2")
			typed("echo \"tab\there\"", false, "0", "tab\there")
			typed(`printf '%s\n' 'a\b' # a comment: handed over`, false, "0", `a\b`)
			typed("echo secret-suppressed", true, "0", "secret-suppressed")
			if r := f.runIn(id, "if then", false); !r.Finished || r.ExitStatus == nil || *r.ExitStatus == 0 {
				t.Fatalf("a command the shell cannot parse: finished %v status %s (reason %q), want its error status", r.Finished, statusOf(r), r.Reason)
			}

			// The words of a shell that could not parse a line, in a
			// command it can: the command runs once.
			count := filepath.Join(t.TempDir(), "count")
			typed("echo ran >> "+count+"; echo 'a syntax error, a parse error'", false, "0", "a syntax error, a parse error")
			if b, _ := os.ReadFile(count); string(b) != "ran\n" {
				t.Errorf("a command that prints a syntax error's words ran %d times, want once", strings.Count(string(b), "ran"))
			}

			// C-c while the command runs.
			if j, took := f.interruptSleep(id); statusOf(j) != "130" || took > 2*time.Second {
				t.Fatalf("C-c: status %s after %v (reason %q), want 130 at once; screen:\n%s", statusOf(j), took, j.Reason,
					f.srv.Must("capture-pane", "-p", "-t", id))
			}
			if r := f.runIn(id, "echo alive", false); statusOf(r) != "0" {
				t.Fatalf("the shell did not survive: %+v", r)
			}

			if sh.history == "" {
				return
			}
			screen := f.history(id, sh.history)
			kept := []string{"echo 'build done'", "echo before;", "echo alive", `printf '%s|%s\n' "it's" 'say "hi"'`}
			if sh.name != "fish" {
				// fish keeps no command handed over (README).
				kept = append(kept, "(echo in-subshell; exit 5)", "echo \"tab\there\"", `printf '%s\n' 'a\b' # a comment`)
			}
			if sh.name == "mksh" {
				// mksh reads a command typed as written back from the
				// pane's option, and keeps one handed over as it read it.
				kept = append(kept, "for i in 1 2")
			}
			for _, want := range kept {
				if sh.name == "zsh" {
					want = strings.ReplaceAll(want, "\t", `\t`) // as fc lists it
				}
				if !strings.Contains(screen, want) {
					t.Errorf("%s history lacks %q:\n%s", sh.name, want, screen)
				}
			}
			for _, line := range strings.Split(screen, "\n") {
				// zsh cannot drop a line from its history: the line that hands
				// the helper over stays (see shellside.go).
				helper := sh.name == "zsh" && strings.Contains(line, `eval "$__tmcp_l"`)
				if strings.Contains(line, "__tmcp") && !helper || strings.Contains(line, "secret-suppressed") {
					t.Errorf("%s history holds %q", sh.name, line)
				}
			}
		})
	}
}

func statusOf(r JobResult) string { return status(r) }

// interruptSleep runs "echo started; sleep 30" in a pane, sends C-c once
// sleep runs, and returns the job as get_job tells its end, and how long
// after the key that took.
func (f *fixture) interruptSleep(id string) (JobResult, time.Duration) {
	f.t.Helper()
	r, err := f.s.Run(context.Background(), RunRequest{PaneID: id, Command: "echo started; sleep 30", Detach: true, Timeout: Timeout{Duration: time.Second}})
	if err != nil {
		f.t.Fatal(err)
	}
	// Once sleep runs: zsh defers a trap for C-c that comes between two
	// commands of a subshell to the end of the next one.
	tmuxtest.WaitFor(5*time.Second, func() bool { return f.runs(id, "sleep") })
	if err := f.hub.Keys(context.Background(), id, "C-c"); err != nil {
		f.t.Fatal(err)
	}
	start := time.Now()
	j, _ := f.s.Job(context.Background(), r.JobID, Timeout{Duration: 5 * time.Second}, 0, 0, nil)
	return j, time.Since(start)
}

// history returns what a pane's shell lists with command (its history
// command), written to a file: a long command fills more than a screen.
func (f *fixture) history(id, command string) string {
	f.t.Helper()
	file := filepath.Join(f.t.TempDir(), "history")
	f.srv.Must("send-keys", "-t", id, " "+command+" >"+file+".part; mv "+file+".part "+file, "Enter")
	var kept string
	tmuxtest.WaitFor(5*time.Second, func() bool {
		b, err := os.ReadFile(file)
		kept = string(b)
		return err == nil
	})
	return kept
}

// TestEveryShellLeavesItsJobsEndInAFile: with the jobs kept, the helper
// of a shell on tmcp's machine leaves each job's token and status in the
// pane's end file with its own printf, and starts no tmux process for it
// (the pane's option stays unset); the next job's end replaces it.
func TestEveryShellLeavesItsJobsEndInAFile(t *testing.T) {
	for _, sh := range testShells {
		t.Run(sh.name, func(t *testing.T) {
			f, id := newShellFixture(t, sh.name, sh.command)
			store, err := jobstate.Open(jobstate.Path(t.TempDir(), "", f.srv.Socket), f.srv.Socket)
			if err != nil {
				t.Fatal(err)
			}
			f.s.KeepJobs(store)
			file := filepath.Join(jobstate.EndsDir(store.Path()), strings.TrimPrefix(id, "%"))
			for _, st := range []string{"5", "0"} {
				r := f.runIn(id, "sh -c 'exit "+st+"'", false)
				want := r.JobID[:5] + " " + st + "\n"
				if !tmuxtest.WaitFor(5*time.Second, func() bool { b, _ := os.ReadFile(file); return string(b) == want }) {
					b, err := os.ReadFile(file)
					t.Fatalf("after exit %s the end file holds %q (%v), want %q", st, b, err, want)
				}
			}
			for _, option := range []string{"@tmcp_end", "@tmcp_typed"} {
				if opt := strings.TrimSpace(f.srv.Must("show-options", "-pqv", "-t", id, option)); opt != "" {
					t.Errorf("the pane's %s is %q, want it unset", option, opt)
				}
			}
			// mksh reads the command back for its history from a file
			// beside the end's, not through the pane's option.
			if sh.history != "" {
				if kept := f.history(id, sh.history); !strings.Contains(kept, "sh -c 'exit 0'") {
					t.Errorf("%s history lacks the command run: %q", sh.name, kept)
				}
			}
		})
	}
}

// TestRunsOneAfterAnotherShowEachLineOnceAfterItsPrompt: a run sent as
// soon as the last one ended waits for the shell's prompt, so the person
// sees each typed line once, after the prompt; typed before it, the line
// was echoed by the terminal and again by bash's and zsh's line editors
// (5 of 6 runs shown twice), and shown before the prompt in dash.
func TestRunsOneAfterAnotherShowEachLineOnceAfterItsPrompt(t *testing.T) {
	for _, sh := range testShells {
		t.Run(sh.name, func(t *testing.T) {
			f, id := newShellFixture(t, sh.name, sh.command)
			commands := []string{"echo one", "echo two", "echo three", "echo four", "echo five", "echo six"}
			for _, c := range commands {
				f.runIn(id, c, false)
			}
			screen := f.srv.Must("capture-pane", "-p", "-S", "-", "-t", id)
			for _, c := range commands {
				var rows []string
				for _, row := range strings.Split(screen, "\n") {
					// The wrapper's "echo one))", or fish's line as typed.
					if strings.Contains(row, c+"))") || strings.HasSuffix(strings.TrimRight(row, " "), "# "+c) {
						rows = append(rows, row)
					}
				}
				if len(rows) != 1 {
					t.Errorf("%s: %q typed shows on %d rows, want 1:\n%s", sh.name, c, len(rows), screen)
					continue
				}
				before := rows[0][:strings.Index(rows[0], c)]
				if !strings.Contains(before, "$ ") && !strings.Contains(before, "# ") {
					t.Errorf("%s: %q typed shows with no prompt before it: %q", sh.name, c, rows[0])
				}
			}
		})
	}
}

// TestRunCommandRefusesAPromptWithALineTypedAtIt leaves a line typed at
// each shell's prompt, not run, as a person (or send_keys without Enter)
// would: run_command refuses, naming it, and leaves it as it was; cleared
// with C-u, the pane takes the run.
func TestRunCommandRefusesAPromptWithALineTypedAtIt(t *testing.T) {
	for _, sh := range testShells {
		t.Run(sh.name, func(t *testing.T) {
			f, id := newShellFixture(t, sh.name, sh.command)
			f.runIn(id, "true", false)
			// Typed once the prompt is drawn after the run: the row ends
			// with the prompt's sign.
			if !tmuxtest.WaitFor(5*time.Second, func() bool {
				return strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", id, "#{cursor_x}")) != "0"
			}) {
				t.Fatalf("no prompt after the run: %q", f.srv.Must("capture-pane", "-p", "-t", id))
			}
			f.srv.Must("send-keys", "-t", id, "-l", "echo half-typed")
			f.screenShows(id, "echo half-typed")
			_, err := f.s.Run(context.Background(), RunRequest{PaneID: id, Command: "echo hi", Timeout: Timeout{Duration: 5 * time.Second}})
			if err == nil || !strings.Contains(err.Error(), `"echo half-typed" typed at its prompt`) || !strings.Contains(err.Error(), "C-u") {
				t.Fatalf("run_command at a prompt with a line typed at it: %v, want a refusal naming the line and C-u", err)
			}
			if screen := f.srv.Must("capture-pane", "-p", "-t", id); !strings.HasSuffix(strings.TrimSpace(screen), "$ echo half-typed") &&
				!strings.HasSuffix(strings.TrimSpace(screen), "# echo half-typed") {
				t.Errorf("the line typed at the prompt is not left as it was:\n%s", screen)
			}
			f.srv.Must("send-keys", "-t", id, "C-u")
			if !tmuxtest.WaitFor(5*time.Second, func() bool {
				row := f.srv.Must("capture-pane", "-p", "-t", id)
				return !strings.HasSuffix(strings.TrimSpace(row), "echo half-typed")
			}) {
				t.Fatalf("C-u did not clear the line: %q", f.srv.Must("capture-pane", "-p", "-t", id))
			}
			if r := f.runIn(id, "echo hi", false); status(r) != "0" || strings.Join(r.Lines, "|") != "hi" {
				t.Fatalf("run_command after C-u: status %s lines %q (reason %q)", status(r), r.Lines, r.Reason)
			}
		})
	}
}
