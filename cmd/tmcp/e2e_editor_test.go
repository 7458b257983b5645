package main

// End-to-end tests of run_command in shells whose line editors a person
// configured to rewrite what is typed at their prompt, or to stop and ask
// about it, over stdio against a private tmux server per shell.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// editorRun is a command, and the status and output of the command as
// given; asks marks one that zsh's spelling correction would stop on,
// which is on in zsh without tmcp init.
type editorRun struct {
	command, status, text string
	asks                  bool
}

func TestRunCommandRunsTheCommandAsGivenWhateverTheLineEditorOverStdio(t *testing.T) {
	for _, sh := range []struct {
		shell, setup string
		runs         []editorRun
	}{
		{"fish", "function gs; echo real-gs; end; abbr -a gs 'echo EXPANDED'; abbr -a --position anywhere AW ANYWHERE" +
			"; abbr -a --position anywhere --regex '^[0-9a-f]{5}$' hex HEXWORD",
			[]editorRun{
				{command: "gs", status: "0", text: "real-gs"},
				{command: "echo gs AW; gs", status: "0", text: "gs AW\nreal-gs"},
				{command: "echo 1a2b3 AW", status: "0", text: "1a2b3 AW"},
				{command: "echo before AW; exit 3", status: "3", text: "before AW"},
				{command: "echo AW\ngs", status: "0", text: "AW\nreal-gs"},
			}},
		{"zsh", "alias -g G='| tr a-z A-Z'; bindkey -s _ -; rw(){ BUFFER=rewritten; }; zle -N rw; bindkey Z rw",
			[]editorRun{
				{command: "lss; echo after $?", status: "0", text: "zsh: command not found: lss\nafter 127", asks: true},
				{command: "echo a_b Z", status: "0", text: "a_b Z"},
				{command: "echo one G", status: "0", text: "ONE"},
				{command: "echo two G\necho three", status: "0", text: "TWO\nthree"},
				{command: "^x^y", status: "127", text: "zsh: command not found: ^x^y"}, // not history's ^old^new
			}},
		{"bash", "alias ll='echo LL'; bind '\" \": magic-space'; bind '\"_\": \"-\"'; bind -x '\"Z\": READLINE_LINE=rewritten'",
			[]editorRun{
				{command: "ll", status: "0", text: "LL"},
				{command: "echo a_b Z", status: "0", text: "a_b Z"},
				{command: "echo a_b Z; exit 3", status: "3", text: "a_b Z"},
				{command: "^x^y", status: "127", text: "bash: ^x^y: command not found"},
			}},
	} {
		for _, integrated := range []bool{false, true} {
			name := sh.shell + map[bool]string{false: "", true: " with tmcp init"}[integrated]
			t.Run(name, func(t *testing.T) {
				if _, err := exec.LookPath(sh.shell); err != nil {
					t.Fatalf("%s is not installed: scripts/install-deps.sh installs it", sh.shell)
				}
				t.Parallel()
				srv := tmuxtest.New(t)
				var pane string
				if integrated {
					pane = integratedPane(t, srv, sh.shell, "")
				} else {
					pane = newWindow(srv, "env HOME="+t.TempDir()+" "+strings.TrimPrefix(plainShells[sh.shell], "env "))
					waitPrompt(t, srv, pane)
				}
				// Configured as a person would, at the prompt.
				setup := sh.setup
				if sh.shell == "zsh" && !integrated {
					setup = "setopt correct correct_all; " + setup
				}
				done := filepath.Join(t.TempDir(), "configured")
				srv.Must("send-keys", "-t", pane, "-l", setup+"; touch "+done)
				srv.Must("send-keys", "-t", pane, "Enter")
				if !tmuxtest.WaitFor(settle, func() bool { _, err := os.Stat(done); return err == nil }) {
					t.Fatalf("%s: the shell was never configured: %q", name, bareCapture(srv, pane))
				}
				s := startTMCP(t, srv, "")
				for _, r := range sh.runs {
					if r.asks && integrated {
						// Typed alone it would meet zsh's spelling
						// correction, as the person's own would (README).
						continue
					}
					got, text := s.runCmd(map[string]any{"paneId": pane, "command": r.command, "timeoutSeconds": 15})
					if status(got.ExitStatus) != r.status || text != r.text {
						t.Fatalf("%s: run_command %q: %+v output %q, want %s and %q; screen:\n%s", name, r.command, got, text, r.status, r.text,
							strings.Join(bareCapture(srv, pane), "\n"))
					}
				}
			})
		}
	}
}
