package pane

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/shellinit"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// integratedShell starts a window running shell with no user
// configuration but tmcp's integration snippet, loaded twice, and returns
// its pane id once its prompt shows.
func integratedShell(t *testing.T, srv *tmuxtest.Server, shell string) string {
	t.Helper()
	// bash before 5 has no EPOCHREALTIME: bash 5 without it takes the
	// snippet's path for those.
	bash4 := shell == bashWithoutClock
	if bash4 {
		shell = "bash"
	}
	if _, err := exec.LookPath(shell); err != nil {
		t.Skipf("%s not installed: run scripts/install-deps.sh", shell)
	}
	script, err := shellinit.Script(shell)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var rc, command string
	switch shell {
	case "bash":
		rc, command = filepath.Join(dir, "bashrc"), "bash --noprofile --rcfile "+filepath.Join(dir, "bashrc")
		script = "PS1='$ '\n" + script + script
		if bash4 {
			script = "unset EPOCHREALTIME\n" + script
		}
	case "zsh":
		rc, command = filepath.Join(dir, ".zshrc"), "env ZDOTDIR="+dir+" zsh -d"
		script = "PS1='$ '\n" + script + script
	case "fish":
		rc, command = filepath.Join(dir, "config.fish"), "fish --no-config -C 'source "+filepath.Join(dir, "config.fish")+"'"
		script = "function fish_prompt; printf '$ '; end\n" + script + script
	}
	if err := os.WriteFile(rc, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	pane := strings.TrimSpace(srv.Must("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "=main:", command))
	if !tmuxtest.WaitFor(5*time.Second, func() bool {
		out, _ := srv.Tmux("capture-pane", "-p", "-t", pane)
		return strings.HasSuffix(strings.TrimRight(out, "\n "), "$")
	}) {
		out, _ := srv.Tmux("capture-pane", "-p", "-t", pane)
		t.Fatalf("%s in pane %s showed no prompt:\n%s", shell, pane, out)
	}
	return pane
}

// marksIn lists the shell marks in output, in order: "A", "D;3", "7:/tmp".
func marksIn(p []byte) []string {
	var marks []string
	d := NewDecoder(0)
	d.Decode(p, func(ev Event) {
		if m, ok := ParseShellMark(ev.Text); ok && ev.Kind == EventOSC {
			switch {
			case m.Kind == '7':
				marks = append(marks, "7:"+m.Dir)
			case m.HasStatus:
				marks = append(marks, fmt.Sprintf("D;%d", m.Status))
			default:
				marks = append(marks, string(m.Kind))
			}
		}
	})
	return marks
}

// TestShellSnippetsEmitEachMarkOnce types a command into bash, zsh and
// fish, each with the snippet loaded twice, and reads the marks from the
// pane's stream: C before the command's output, D with its status, then
// the working directory, A and B of the next prompt, each once.
// bashWithoutClock names, for integratedShell, bash with its snippet
// loaded as bash 4.4 would load it, with no EPOCHREALTIME.
const bashWithoutClock = "bash 4.4"

func TestShellSnippetsEmitEachMarkOnce(t *testing.T) {
	for _, shell := range []string{"bash", bashWithoutClock, "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			srv := tmuxtest.New(t)
			pane := integratedShell(t, srv, shell)
			h := newHub(t, srv)
			s, release, err := h.Acquire(context.Background(), pane, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			srv.Must("send-keys", "-t", pane, "cd /tmp && sh -c 'echo out; exit 3'", "Enter")
			want := []string{"C", "D;3", "7:/tmp", "A", "B"}
			var got []string
			if !tmuxtest.WaitFor(10*time.Second, func() bool {
				data, _, _ := s.ReadFrom(0, 0)
				got = marksIn(data)
				return len(got) >= len(want)
			}) {
				t.Fatalf("%s: marks in the stream %q, want %q", shell, got, want)
			}
			if strings.Join(got[:len(want)], " ") != strings.Join(want, " ") {
				t.Errorf("%s: marks in the stream %q, want %q first", shell, got, want)
			}
			st := s.Prompt()
			if !st.Marks || st.Running || !st.HasStatus || st.Status != 3 || st.Cwd != "/tmp" || st.CommandEnd <= st.OutputStart {
				t.Errorf("%s: prompt state %+v, want at the prompt, status 3, cwd /tmp", shell, st)
			}
			// The shell measured the run itself (bash 5, zsh/datetime,
			// fish); bash 4.4 cannot, and its D says nothing of it.
			if shell == bashWithoutClock {
				if st.HasTook {
					t.Errorf("%s: prompt state %+v, want no run time from its D", shell, st)
				}
			} else if !st.HasTook || st.Took < 0 || st.Took > 5*time.Second {
				t.Errorf("%s: prompt state %+v, want the command's run time from its D", shell, st)
			}
		})
	}
}
