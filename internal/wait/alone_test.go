package wait

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/shellinit"
	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// markedShellPane opens a window running a shell, with no user
// configuration but tmcp's shell integration and its history in a file of
// the test's, and waits for its prompt.
func (f *fixture) markedShellPane(shell string) string {
	f.t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		f.t.Fatalf("%s is not installed: scripts/install-deps.sh installs it", shell)
	}
	script, err := shellinit.Script(shell)
	if err != nil {
		f.t.Fatal(err)
	}
	dir := f.t.TempDir()
	var file, command, rc string
	switch shell {
	case "bash":
		file, command = filepath.Join(dir, "bashrc"), "bash --noprofile --rcfile "+filepath.Join(dir, "bashrc")
		rc = "PS1='$ '\nHISTFILE=" + filepath.Join(dir, "hist") + "\n"
	case "zsh":
		file, command = filepath.Join(dir, ".zshrc"), "env ZDOTDIR="+dir+" zsh -d"
		rc = "PS1='$ '\nHISTFILE=" + filepath.Join(dir, "hist") + "\n"
	case "fish":
		file, command = filepath.Join(dir, "config.fish"), "env HOME="+dir+" fish --no-config -C 'source "+filepath.Join(dir, "config.fish")+"'"
		rc = "function fish_prompt; printf '$ '; end\nset -g fish_history tmcp_test\n"
	}
	if err := os.WriteFile(file, []byte(rc+script), 0o644); err != nil {
		f.t.Fatal(err)
	}
	id := f.shellPane(shell, command)
	// The snippet names its shell in the pane's option in the background,
	// as the shell starts: under load that can come after the prompt.
	if !tmuxtest.WaitFor(5*time.Second, func() bool {
		return strings.TrimSpace(f.srv.Must("show-options", "-pqv", "-t", id, tmux.ShellMarksOption)) != ""
	}) {
		f.t.Fatalf("%s with tmcp init never set the pane's %s", shell, tmux.ShellMarksOption)
	}
	return id
}

// TestRunCommandTypesTheCommandAloneWhereTheShellMarksItsPrompt: in a
// pane whose shell emits the semantic prompt marks (tmcp init), once tmcp
// has seen the shell at its prompt, run_command types the command and
// Enter, nothing more, and takes its status from the shell's D mark and
// its output from between C and D. A command that would act on the shell
// itself (exit), a multi-line one, or one to keep out of the history
// takes the wrapper still; a line the shell cannot parse is handed over.
func TestRunCommandTypesTheCommandAloneWhereTheShellMarksItsPrompt(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			id := f.markedShellPane(shell)
			typed := func(cmd string, suppress bool, status string, lines ...string) (int64, JobResult) {
				t.Helper()
				before := f.hub.TypedBytes(id)
				r := f.runIn(id, cmd, suppress)
				if got := statusOf(r); got != status || strings.Join(r.Lines, "|") != strings.Join(lines, "|") {
					t.Fatalf("%.40q: status %s lines %q (reason %q), want %s %q; screen:\n%s", cmd, got, r.Lines, r.Reason, status, lines,
						f.srv.Must("capture-pane", "-p", "-t", id))
				}
				return f.hub.TypedBytes(id) - before, r
			}
			// The first run finds the pane unwatched, its marks not seen
			// yet: the pane's option, which the snippet set as the shell
			// started, names the shell in front.
			// Enter, and in fish the space that leaves no abbreviation at the
			// cursor (see fishPasted).
			enter := 1
			if shell == "fish" {
				enter = 2
			}
			first, _ := typed("echo 'build done'", false, "0", "build done")
			short, _ := typed("echo 'build done'", false, "0", "build done")
			if want := int64(len("echo 'build done'") + enter); short != want || first != want {
				t.Errorf("typed %d bytes for echo 'build done' at a marked prompt, %d on the first run, want %d: the command and Enter", short, first, want)
			}
			long := "echo " + strings.Repeat("y", 2043)
			if n, _ := typed(long, false, "0", strings.Repeat("y", 2043)); n != int64(len(long)+enter) {
				t.Errorf("typed %d bytes for a 2 KB command, want %d", n, len(long)+enter)
			}
			t.Logf("%s with tmcp init: bytes typed for echo 'build done': %d on the first run, %d after", shell, first, short)
			if n, _ := typed("sh -c 'echo out; echo err >&2; exit 7'", false, "7", "out", "err"); n != int64(len("sh -c 'echo out; echo err >&2; exit 7'")+enter) {
				t.Errorf("typed %d bytes for a command exiting 7, want it alone", n)
			}

			// exit would end the shell typed alone: it takes the wrapper.
			pid := f.srv.Must("display-message", "-p", "-t", id, "#{pane_pid}")
			if n, _ := typed("echo before; exit 3", false, "3", "before"); n <= int64(len("echo before; exit 3")+1) {
				t.Errorf("exit typed with %d bytes: alone, it would have ended the shell", n)
			}
			if now := f.srv.Must("display-message", "-p", "-t", id, "#{pane_pid}"); now != pid {
				t.Fatalf("after exit 3 the pane runs %q, want %q", now, pid)
			}
			multi := "for i in 1 2\ndo\n  echo line $i\ndone"
			if shell == "fish" {
				multi = "for i in 1 2\n  echo line $i\nend"
			}
			typed(multi, false, "0", "line 1", "line 2")
			typed("echo secret-suppressed", true, "0", "secret-suppressed")
			// fish takes empty commands: the line parses there.
			if r := f.runIn(id, "echo a ;; echo b", false); shell != "fish" && (!r.Finished || r.ExitStatus == nil || *r.ExitStatus == 0) {
				t.Errorf("a line the shell cannot parse: finished %v status %s (reason %q), want its error status", r.Finished, statusOf(r), r.Reason)
			}
			if shell == "fish" {
				// fish cannot parse it, says so and keeps it in its editor:
				// handed over, eval reports the error.
				for _, line := range []string{"(exit 5)", "echo $?"} {
					r := f.runIn(id, line, false)
					if st := statusOf(r); st == "none" || st == "0" || len(r.Lines) == 0 || !strings.HasPrefix(r.Lines[0], "fish: ") {
						t.Errorf("%s in fish: status %s lines %q (reason %q), want fish's error and its status; screen:\n%s", line, st, r.Lines, r.Reason,
							f.srv.Must("capture-pane", "-p", "-t", id))
					}
				}
			}

			// C-c while the command runs: the shell's D says 130.
			if j, took := f.interruptSleep(id); statusOf(j) != "130" || strings.Join(j.Lines, "|") != "started" || took > 2*time.Second {
				t.Fatalf("C-c: status %s lines %q after %v (reason %q), want 130 and started at once; screen:\n%s", statusOf(j), j.Lines, took, j.Reason,
					f.srv.Must("capture-pane", "-p", "-t", id))
			}
			if n, _ := typed("echo alive", false, "0", "alive"); n != int64(len("echo alive")+enter) {
				t.Errorf("after C-c, typed %d bytes for echo alive, want it alone", n)
			}

			kept := f.history(id, map[string]string{"bash": "history", "zsh": "fc -ln 1", "fish": "history"}[shell])
			for _, want := range []string{"echo 'build done'", "echo before; exit 3", "echo alive", "sh -c 'echo out;"} {
				if !strings.Contains(kept, want) {
					t.Errorf("%s history lacks %q:\n%s", shell, want, kept)
				}
			}
			for _, line := range strings.Split(kept, "\n") {
				if strings.Contains(line, "__tmcp") || strings.Contains(line, "secret-suppressed") {
					t.Errorf("%s history holds %q", shell, line)
				}
			}
		})
	}
}

// TestWaitForCommandAfterARunDoesNotReportTheRunsLine: in a pane whose
// shell marks its commands, the line run_command typed (alone, or in its
// wrapper, whose end comes before the shell's) is a command of the
// shell's; a wait_for_command called once the run is reported waits for
// the next command, not that one.
func TestWaitForCommandAfterARunDoesNotReportTheRunsLine(t *testing.T) {
	f := newFixture(t)
	id := f.markedShellPane("bash")
	for _, cmd := range []string{"echo wrapped", "echo alone", "echo before; exit 2"} {
		f.runIn(id, cmd, false)
		r, err := f.s.WaitForCommand(context.Background(), CommandRequest{PaneID: id, Timeout: Timeout{Duration: 300 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome != OutcomeTimeout {
			t.Errorf("wait_for_command right after run_command %q: %s (status %v, output %q), want a timeout: no command ran since", cmd, r.Outcome, r.ExitStatus, r.Lines)
		}
	}
}

// TestAMarksOptionNamingAnotherShellLeavesTheRunWrapped: a plain shell
// whose pane's option names another process, or its own process under
// another shell's name (the snippet's shell replaced by exec), takes the
// wrapper on its first run, and the run ends.
func TestAMarksOptionNamingAnotherShellLeavesTheRunWrapped(t *testing.T) {
	for _, tc := range []struct{ name, option string }{
		{"another process", "1 bash 0123abcd"},
		{"its own process under another name", "%d zsh 0123abcd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, id := newShellFixture(t, "bash", "env HISTFILE=/dev/null PS1='$ ' bash --norc --noprofile")
			pid := strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", id, "#{pane_pid}"))
			option := strings.ReplaceAll(tc.option, "%d", pid)
			f.srv.Must("set-option", "-p", "-t", id, tmux.ShellMarksOption, option)
			before := f.hub.TypedBytes(id)
			r := f.runIn(id, "echo plain", false)
			if status(r) != "0" || strings.Join(r.Lines, "|") != "plain" {
				t.Fatalf("first run with %s %q: status %s lines %q (reason %q)", tmux.ShellMarksOption, option, status(r), r.Lines, r.Reason)
			}
			if n := f.hub.TypedBytes(id) - before; n <= int64(len("echo plain")+1) {
				t.Errorf("typed %d bytes with %s %q: alone, in a shell that marks nothing", n, tmux.ShellMarksOption, option)
			}
		})
	}
}
