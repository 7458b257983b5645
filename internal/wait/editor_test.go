package wait

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// editorCase is a command run in a shell the person configured, and the
// status and output of the command as given.
type editorCase struct {
	command  string
	suppress bool
	status   string
	lines    []string
}

// editorShells are shells configured, as a person might, with what
// rewrites or stops a typed line: fish's abbreviations (in command
// position, anywhere, and by a regexp that matches every run's token),
// zsh's spelling correction, global aliases and key bindings, bash's
// aliases and key bindings (a macro on "_", which tmcp's own lines hold,
// and a widget that rewrites the line). Aliases are the shell's own language: a command runs
// them as the person's typing would, typed as written or handed over.
var editorShells = []struct {
	name, command string
	setup         string // typed, with a file of the test's to touch, %s
	cases         []editorCase
}{
	{"fish", "fish --no-config",
		"function gs; echo real-gs; end; abbr -a gs 'echo EXPANDED'; abbr -a --position anywhere AW ANYWHERE" +
			"; abbr -a --position anywhere --regex '^[0-9a-f]{5}$' hex HEXWORD; abbr -a eval 'echo EVAL'; abbr -a --position anywhere head HEAD",
		[]editorCase{
			{command: "gs", status: "0", lines: []string{"real-gs"}},
			{command: "echo AW", status: "0", lines: []string{"AW"}},
			{command: "echo gs AW; gs", status: "0", lines: []string{"gs AW", "real-gs"}},
			{command: "true; gs x|cat", status: "0", lines: []string{"real-gs"}},
			{command: "echo 1a2b3 AW>/dev/stdout", status: "0", lines: []string{"1a2b3 AW"}},
			{command: "echo AW", suppress: true, status: "0", lines: []string{"AW"}},
			{command: "echo AW\ngs", status: "0", lines: []string{"AW", "real-gs"}}, // handed over
		}},
	{"zsh", "env PS1='$ ' zsh -f",
		"setopt correct correct_all; alias -g G='| tr a-z A-Z'; gs(){ echo real-gs; }" +
			"; bindkey ' ' magic-space; bindkey -s _ -; rw(){ BUFFER=rewritten; }; zle -N rw; bindkey Z rw",
		[]editorCase{
			// Spelling correction would ask, and wait for a key.
			{command: "lss; echo after $?", status: "0", lines: []string{"zsh: command not found: lss", "after 127"}},
			{command: "cat hello.tx 2>/dev/null; echo $?", status: "0", lines: []string{"1"}},
			{command: "cat hello.tx 2>/dev/null; echo $?", suppress: true, status: "0", lines: []string{"1"}},
			{command: "gs", status: "0", lines: []string{"real-gs"}},
			{command: "echo a_b Z", status: "0", lines: []string{"a_b Z"}},
			// A global alias is the shell's: typed, or handed over (eval), and
			// the words naming the command handed over are not expanded.
			{command: "echo one G", status: "0", lines: []string{"ONE"}},
			{command: "echo two G\necho fo G", status: "0", lines: []string{"TWO", "FO"}},
		}},
	{"bash", "env HISTFILE=/dev/null PS1='$ ' bash --norc --noprofile",
		"alias ll='echo LL'; bind '\" \": magic-space'; shopt -s histverify; bind '\"_\": \"-\"'; bind -x '\"Z\": READLINE_LINE=rewritten'",
		[]editorCase{
			{command: "ll", status: "0", lines: []string{"LL"}},
			{command: "echo a b; (exit 3)", status: "3", lines: []string{"a b"}},
			{command: "echo x\nll", status: "0", lines: []string{"x", "LL"}},
			{command: "echo a_b Z", status: "0", lines: []string{"a_b Z"}},
			{command: "echo a_b Z", suppress: true, status: "0", lines: []string{"a_b Z"}},
		}},
}

// TestRunCommandRunsTheCommandAsGivenWhateverTheLineEditor: in a shell
// configured to rewrite what is typed at its prompt, or to stop and ask
// about it, each run's status and output are those of the command as
// given, from the first run (the helper's) on.
func TestRunCommandRunsTheCommandAsGivenWhateverTheLineEditor(t *testing.T) {
	for _, sh := range editorShells {
		t.Run(sh.name, func(t *testing.T) {
			f, id := newShellFixture(t, sh.name, sh.command)
			f.configure(id, sh.name, sh.setup)
			for _, c := range sh.cases {
				r := f.runIn(id, c.command, c.suppress)
				if got := statusOf(r); got != c.status || strings.Join(r.Lines, "|") != strings.Join(c.lines, "|") {
					t.Errorf("%s: %q (suppressHistory %v): status %s lines %q (reason %q), want %s %q; screen:\n%s",
						sh.name, c.command, c.suppress, got, r.Lines, r.Reason, c.status, c.lines, f.srv.Must("capture-pane", "-p", "-t", id))
				}
			}
		})
	}
}

// configure types setup at a shell's prompt as a person would, in a
// directory of the test's that holds a file hello.txt, and waits for it
// to have run.
func (f *fixture) configure(id, shell, setup string) {
	f.t.Helper()
	dir := f.t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), nil, 0o600); err != nil {
		f.t.Fatal(err)
	}
	done := filepath.Join(dir, "configured")
	f.srv.Must("send-keys", "-t", id, "-l", "cd "+dir+"; "+setup+"; touch "+done)
	f.srv.Must("send-keys", "-t", id, "Enter")
	if !tmuxtest.WaitFor(5*time.Second, func() bool { _, err := os.Stat(done); return err == nil }) {
		f.t.Fatalf("the shell was never configured: %q", f.srv.Must("capture-pane", "-p", "-t", id))
	}
	// touch made the file, and may still hold the terminal: the runs are
	// for the shell, back in front.
	if !tmuxtest.WaitFor(5*time.Second, func() bool {
		return strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", id, "#{pane_current_command}")) == shell
	}) {
		f.t.Fatalf("%s never came back in front after its set-up: %q", shell, f.srv.Must("display-message", "-p", "-t", id, "#{pane_current_command}"))
	}
}
