package wait

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/shellinit"
	"github.com/tmcp/tmcp/internal/tmux"
)

// startedShell makes a window whose shell (tmux's default-shell, set to
// shell) starts with tmcp's integration injected, in a home of the test's
// holding rc, and tells the hub, as tmcp does when it makes a pane. It
// does not wait for the shell's prompt.
func (f *fixture) startedShell(shell string, rc map[string]string) (string, string) {
	f.t.Helper()
	path, err := exec.LookPath(shell)
	if err != nil {
		f.t.Fatalf("%s is not installed: scripts/install-deps.sh installs it", shell)
	}
	home := f.t.TempDir()
	for name, text := range rc {
		file := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			f.t.Fatal(err)
		}
	}
	dir, err := shellinit.WriteDir()
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { dir.Remove() })
	in, ok := dir.Inject(path, func(string) (string, bool) { return "", false })
	if !ok {
		f.t.Fatalf("no injection for %s", path)
	}
	f.srv.Must("set-option", "-g", "default-shell", path)
	ctx := context.Background()
	c, err := f.tc.NewWindow(ctx, tmux.NewOptions{Target: "main", Env: append([]string{"HOME=" + home}, in.Env...)})
	if err != nil {
		f.t.Fatal(err)
	}
	f.hub.ExpectShell(c.PaneID, pane.ShellStart{PID: c.PanePID, Name: in.Shell, Nonce: in.Nonce})
	return c.PaneID, home
}

// injectedRC are the person's start-up files, read by a login shell, each
// with a prompt of its own and its history in a file of the home's.
var injectedRC = map[string]map[string]string{
	"bash": {".bash_profile": "PS1='mine$ '\nHISTFILE=~/hist\n"},
	"zsh":  {".zshrc": "PS1='mine$ '\nHISTFILE=~/hist\n"},
	"fish": {".config/fish/config.fish": "function fish_prompt; printf 'mine$ '; end\nset -g fish_history tmcp_test\n"},
}

// TestTheFirstRunInAShellTmcpStartedTypesOnlyTheCommand: a bash, zsh or
// fish tmcp starts with its integration injected marks its prompts from
// its first: the first run, made at once, types the command and Enter
// (and fish's space), no helper, as every later run does; made while a
// slow profile still runs, it waits for the prompt. Where the person's
// files replaced the shell with one that does not mark, the run takes
// tmcp's wrapper.
func TestTheFirstRunInAShellTmcpStartedTypesOnlyTheCommand(t *testing.T) {
	for _, tc := range []struct {
		name, shell string
		rc          map[string]string
		kept        bool // the person's files keep the integration out
	}{
		{"bash", "bash", injectedRC["bash"], false},
		{"zsh", "zsh", injectedRC["zsh"], false},
		{"fish", "fish", injectedRC["fish"], false},
		{"bash with a slow profile", "bash", map[string]string{".bash_profile": "sleep 1.5\nPS1='mine$ '\n"}, false},
		{"bash whose profile replaces it", "bash", map[string]string{".bash_profile": "PS1='mine$ ' exec bash --norc --noprofile\n"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			id, _ := f.startedShell(tc.shell, tc.rc)
			enter := int64(1)
			if tc.shell == "fish" {
				enter = 2
			}
			for i, want := range []string{"first", "second"} {
				before := f.hub.TypedBytes(id)
				begun := time.Now()
				r := f.runIn(id, "echo "+want, false)
				n := f.hub.TypedBytes(id) - before
				if status(r) != "0" || strings.Join(r.Lines, "|") != want {
					t.Fatalf("%s run %d: status %s lines %q (%s); screen:\n%s", tc.name, i+1, status(r), r.Lines, r.Reason, f.srv.Must("capture-pane", "-p", "-t", id))
				}
				t.Logf("%s run %d: %d bytes typed, %v", tc.name, i+1, n, time.Since(begun).Round(time.Millisecond))
				if tc.kept {
					// The run goes on without the integration: tmcp's wrapper.
					if i == 0 && n <= int64(len("echo "+want))+enter {
						t.Errorf("%s run %d typed %d bytes: alone, in a shell that does not mark its prompts", tc.name, i+1, n)
					}
					continue
				}
				if n != int64(len("echo "+want))+enter {
					t.Errorf("%s run %d typed %d bytes, want %d: the command alone; screen:\n%s", tc.name, i+1, n, int64(len("echo "+want))+enter,
						f.srv.Must("capture-pane", "-p", "-t", id))
				}
			}
		})
	}
}
