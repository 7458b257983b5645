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

// marksIn lists the shell marks in output, in order: "A:/tmp" (with the
// directory it gives), "D;3", "7:/tmp"; a semantic mark that does not
// carry nonce ends in "?".
func marksIn(p []byte, nonce string) []string {
	var marks []string
	d := NewDecoder(0)
	d.Decode(p, func(ev Event) {
		m, ok := ParseShellMark(ev.Text)
		if !ok || ev.Kind != EventOSC {
			return
		}
		var mark string
		switch {
		case m.Kind == '7':
			marks = append(marks, "7:"+m.Dir)
			return
		case m.HasStatus:
			mark = fmt.Sprintf("D;%d", m.Status)
		case m.Dir != "":
			mark = string(m.Kind) + ":" + m.Dir
		default:
			mark = string(m.Kind)
		}
		if !m.Authentic(nonce) {
			mark += "?"
		}
		marks = append(marks, mark)
	})
	return marks
}

// TestShellSnippetsEmitEachMarkOnce types a command into bash, zsh and
// fish, each with the snippet loaded twice, and reads the marks from the
// pane's stream: C before the command's output, D with its status, then
// the working directory, A (with the directory) and B of the next prompt,
// each once, each with the nonce the shell left in the pane's option.
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
			var nonce string
			if !tmuxtest.WaitFor(5*time.Second, func() bool {
				out, _ := srv.Tmux("display", "-p", "-t", pane, "#{@tmcp_marks}")
				_, _, nonce, _ = ParseShellMarks(out)
				return len(nonce) >= 16
			}) {
				out, _ := srv.Tmux("display", "-p", "-t", pane, "#{@tmcp_marks}")
				t.Fatalf("%s: the pane's @tmcp_marks is %q, want its pid, name and a nonce", shell, out)
			}
			want := []string{"C", "D;3", "7:/tmp", "A:/tmp", "B"}
			var got []string
			if !tmuxtest.WaitFor(10*time.Second, func() bool {
				data, _, _ := s.ReadFrom(0, 0)
				got = marksIn(data, nonce)
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

// TestAStreamLearnsTheNonceOfAShellThatMarksBeforeItsOptionIsSet has a
// pane's sh print marks first with a nonce nobody knows, then with one a
// guesser made up, and only then sets the pane's option as a shell that
// loaded tmcp's integration does: the stream believes the marks that
// carry the option's nonce, and none of the others.
func TestAStreamLearnsTheNonceOfAShellThatMarksBeforeItsOptionIsSet(t *testing.T) {
	srv := tmuxtest.New(t)
	h := newHub(t, srv)
	s, release, err := h.Acquire(context.Background(), "%0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	const nonce = "f00dfeedcafe0123"
	marks := func(n string, status int) string {
		return fmt.Sprintf(`printf '\033]133;C;tmcp_n=%[1]s\007x\r\n\033]133;D;%[2]d;tmcp_n=%[1]s\007\033]133;A;tmcp_n=%[1]s\007'`, n, status)
	}
	srv.Must("send-keys", "-t", "%0", "-l", marks(nonce, 3)+"; "+marks("guess", 7)+"\r")
	if !tmuxtest.WaitFor(5*time.Second, func() bool {
		data, _, _ := s.ReadFrom(0, 0)
		return strings.Contains(string(data), "D;7;tmcp_n=guess\a")
	}) {
		t.Fatal("the marks never came")
	}
	if ps := s.Prompt(); ps.Marks {
		t.Fatalf("prompt state %+v before any nonce is known, want no marks believed", ps)
	}
	pid := strings.TrimSpace(srv.Must("display", "-p", "-t", "%0", "#{pane_pid}"))
	srv.Must("set", "-p", "-t", "%0", "@tmcp_marks", pid+" sh "+nonce)
	// The lookups go on for a while after a mark they could not place.
	srv.Must("send-keys", "-t", "%0", "-l", `printf '\033]133;B;tmcp_n=unknown\007'`+"\r")
	if !tmuxtest.WaitFor(5*time.Second, func() bool { return s.Prompt().Marks }) {
		t.Fatalf("prompt state %+v once the option names the nonce, want the held marks believed", s.Prompt())
	}
	if ps := s.Prompt(); ps.Running || !ps.HasStatus || ps.Status != 3 {
		t.Errorf("prompt state %+v, want the command of the shell's marks ended with 3, and nothing of the guessed ones", ps)
	}
}
