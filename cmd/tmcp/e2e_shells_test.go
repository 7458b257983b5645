package main

// End-to-end tests of run_command in every shell it drives, each started
// with no user configuration, with and without tmcp's shell integration,
// over stdio against a private tmux server per shell.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// plainShells start each shell with no configuration and a "$ " prompt.
var plainShells = map[string]string{
	"bash": "env PS1='$ ' bash --norc --noprofile",
	"zsh":  "env PS1='$ ' zsh -f",
	"dash": "env PS1='$ ' dash -i",
	"mksh": "env ENV=/dev/null PS1='$ ' mksh -i",
	"fish": "fish --no-config -C 'function fish_prompt; printf \"\\$ \"; end'",
}

// needShell fails the test when shell is not installed.
func needShell(t *testing.T, shell string) {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		t.Fatalf("%s is not installed: scripts/install-deps.sh installs it", shell)
	}
}

// plainShellPane runs the test in parallel, on a tmux server of its own
// whose new window runs shell with no configuration, and returns the
// server and that window's pane once its prompt shows.
func plainShellPane(t *testing.T, shell string) (*tmuxtest.Server, string) {
	t.Helper()
	needShell(t, shell)
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := newWindow(srv, plainShells[shell])
	waitPrompt(t, srv, pane)
	return srv, pane
}

// everyShell runs test, in parallel, in each shell run_command drives,
// without and (bash, zsh, fish) with tmcp init; name is the subtest's.
func everyShell(t *testing.T, test func(t *testing.T, shell, name string, integrated bool)) {
	for _, shell := range []string{"bash", "zsh", "dash", "mksh", "fish"} {
		for _, integrated := range []bool{false, true} {
			if integrated && (shell == "dash" || shell == "mksh") {
				continue // tmcp init speaks bash, zsh and fish
			}
			name := shell + map[bool]string{false: "", true: " with tmcp init"}[integrated]
			t.Run(name, func(t *testing.T) {
				needShell(t, shell)
				t.Parallel()
				test(t, shell, name, integrated)
			})
		}
	}
}

// typedRun matches the line run_command types for a command typed as
// written (in zsh with nocorrect), and captures the command.
var typedRun = regexp.MustCompile(`^[$#]  ?\((?:nocorrect )?__tmcp ([0-9a-f]{5})&&\((.*)\)\);__tmcp ([0-9a-f]{5}) \$\?$`)

func TestRunCommandInEveryShellOverStdio(t *testing.T) {
	everyShell(t, func(t *testing.T, shell, name string, integrated bool) {
		srv := tmuxtest.New(t)
		home := t.TempDir()
		var pane string
		if integrated {
			// The shell's history in a file of the test's.
			rc := "HISTFILE=" + filepath.Join(home, "hist")
			if shell == "fish" {
				rc = "set -g fish_history tmcp_test"
			}
			pane = integratedPane(t, srv, shell, rc)
		} else {
			pane = newWindow(srv, "env HOME="+home+" HISTFILE="+filepath.Join(home, "hist")+" "+strings.TrimPrefix(plainShells[shell], "env "))
			waitPrompt(t, srv, pane)
		}
		s := startTMCP(t, srv, "")
		run := func(command string, wantStatus string, wantText string) {
			t.Helper()
			r, text := s.runCmd(map[string]any{"paneId": pane, "command": command, "timeoutSeconds": 15})
			if status(r.ExitStatus) != wantStatus || text != wantText {
				t.Fatalf("%s: run_command %.50q: %+v output %q, want %s and %q", name, command, r, text, wantStatus, wantText)
			}
		}
		run("echo 'build done'", "0", "build done")
		run("echo 'build done'", "0", "build done")
		if integrated {
			// tmcp has seen the shell's marks: the second run is the
			// command as written, alone, the last line typed.
			screen := bareCapture(srv, pane)
			i := slices.IndexFunc(screen, func(l string) bool { return strings.Contains(l, "echo 'build done'") && !strings.Contains(l, "__tmcp") })
			// fish shows the space typed after it (see fishPasted).
			if i < 0 || strings.TrimRight(screen[i], " ") != "$ echo 'build done'" || slices.ContainsFunc(screen[i:], func(l string) bool { return strings.Contains(l, "__tmcp") }) {
				t.Fatalf("%s: the second run is not the command alone on screen: %q", name, screen)
			}
		}
		// What the person sees: the command as written, 34 bytes more.
		if shell != "fish" && !integrated {
			screen := bareCapture(srv, pane)
			i := slices.IndexFunc(screen, func(l string) bool { return typedRun.MatchString(l) })
			if i < 0 {
				t.Fatalf("%s: no typed line of the form %s on screen: %q", name, typedRun, screen)
			}
			m := typedRun.FindStringSubmatch(screen[i])
			if m[2] != "echo 'build done'" || m[1] != m[3] {
				t.Errorf("%s: typed line %q, want the command as written", name, screen[i])
			}
			// mksh's line begins with a space; zsh's holds nocorrect.
			if extra := len(screen[i]) - len("$ ") - len(m[2]) - len(map[string]string{"zsh": "nocorrect "}[shell]); extra > 40 {
				t.Errorf("%s: %d bytes of tmcp's own on the typed line, want 40 at most, and zsh's nocorrect", name, extra)
			}
			if slices.ContainsFunc(screen, func(l string) bool { return strings.Contains(l, "__tmcp_l") }) {
				t.Errorf("%s: the line that handed the helper over stays on screen: %q", name, screen)
			}
		}
		// exit ends the command, not the shell, in fish too (it runs
		// the command in itself): the same process runs the next one.
		panePID := paneFormat(srv, pane, "#{pane_pid}")
		var fishPID string
		if shell == "fish" {
			_, fishPID = s.runCmd(map[string]any{"paneId": pane, "command": "echo $fish_pid", "timeoutSeconds": 15})
		}
		run("echo before; exit 3", "3", "before")
		if shell == "fish" {
			run("begin; exit 4; end; echo not-reached", "4", "")
			run("echo $fish_pid", "0", fishPID)
		}
		if now := paneFormat(srv, pane, "#{pane_pid} #{pane_dead}"); now != panePID+" 0" {
			t.Fatalf("%s: after exit 3 the pane's process and deadness are %q, want %s alive", name, now, panePID)
		}
		if shell == "fish" {
			run("for i in 1 2\n  echo line $i\nend", "0", "line 1\nline 2")
		} else {
			run("for i in 1 2\ndo\n  echo line $i\ndone", "0", "line 1\nline 2")
		}
		run("printf '%s|%s\\n' \"it's\" 'a\tb'", "0", "it's|a\tb")

		// C-c while the command runs, once sleep is in front.
		ch := s.async("run_command", map[string]any{"paneId": pane, "command": "echo started; sleep 30", "timeoutSeconds": 20})
		shellPID, _ := strconv.Atoi(paneFormat(srv, pane, "#{pane_pid}"))
		if !tmuxtest.WaitFor(settle, func() bool {
			return slices.ContainsFunc(descendants(shellPID), func(pid int) bool { return cmdline(pid) == "sleep 30" })
		}) {
			t.Fatalf("%s: sleep never ran: %q", name, bareCapture(srv, pane))
		}
		s.ok("send_keys", map[string]any{"paneId": pane, "keys": "C-c", "enter": false}, nil)
		r, text := decodeText[jobOut](t, "run_command", awaitCall(t, "run_command", ch).res)
		if status(r.ExitStatus) != "130" || text != "started" {
			t.Fatalf("%s: C-c: %+v output %q, want 130 and %q", name, r, text, "started")
		}
		run("echo alive", "0", "alive")

		history := map[string]string{"bash": "history", "zsh": "fc -ln 1", "fish": "history", "mksh": "fc -l 1 99999"}[shell]
		if history == "" {
			return
		}
		file := filepath.Join(t.TempDir(), "history")
		srv.Must("send-keys", "-t", pane, " "+history+" >"+file+".part; mv "+file+".part "+file, "Enter")
		var kept string
		if !tmuxtest.WaitFor(settle, func() bool {
			b, err := os.ReadFile(file)
			kept = string(b)
			return err == nil
		}) {
			t.Fatalf("%s: the history was never written", name)
		}
		for _, want := range []string{"echo 'build done'", "echo before;", "echo alive"} {
			if !strings.Contains(kept, want) {
				t.Errorf("%s: history lacks %q:\n%s", name, want, kept)
			}
		}
		for _, line := range strings.Split(kept, "\n") {
			// zsh keeps it, unless tmcp init is loaded (README).
			handing := shell == "zsh" && !integrated && strings.Contains(line, `eval "$__tmcp_l"`)
			if strings.Contains(line, "__tmcp") && !handing {
				t.Errorf("%s: history holds tmcp's text: %q", name, line)
			}
		}
	})
}

// TestRunCommandTypesIntoAShellReachedThroughSSHOnceItsMarksShowItsPrompt:
// a pane whose foreground program is ssh (here bash started under that
// name, with tmcp init loaded, as the shell on the far side would be)
// takes run_command once tmcp has seen that shell's prompt marks, and is
// refused, saying what to do, before.
func TestRunCommandTypesIntoAShellReachedThroughSSHOnceItsMarksShowItsPrompt(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	dir := t.TempDir()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	ssh := filepath.Join(dir, "ssh")
	if err := os.Symlink(bash, ssh); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(dir, "bashrc")
	// As on another machine, the shell cannot reach tmcp's tmux.
	if err := os.WriteFile(rc, []byte("PS1='remote$ '\nunset TMUX TMUX_PANE\nHISTFILE="+filepath.Join(dir, "hist")+"\neval \"$("+tmcpBinary+" init bash)\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pane := newWindow(srv, ssh+" --noprofile --rcfile "+rc)
	waitPrompt(t, srv, pane)
	waitPane(t, srv, pane, "#{pane_current_command}", "ssh")
	s := startTMCP(t, srv, "")

	msg := s.fail("run_command", map[string]any{"paneId": pane, "command": "echo hi", "timeoutSeconds": 5})
	for _, want := range []string{"ssh", "tmcp init", "capture_since"} {
		if !strings.Contains(msg, want) {
			t.Errorf("run_command in a pane at ssh before its marks were seen: %q, want it to say %q", msg, want)
		}
	}
	s.since(map[string]any{"paneId": pane}) // tmcp watches the pane from here
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "true"}, nil)
	waitScreen(t, srv, pane, "the far prompt again", func(l []string) bool { return len(l) > 1 && hasLine(l[1:], "remote$") })
	// Its marks carry a nonce tmcp cannot read there: no shell state.
	if sh := listedShell(s, pane); sh != nil {
		t.Fatalf("list_panes gives the shell behind ssh the state %+v from marks tmcp cannot authenticate", sh)
	}
	r, text := s.runCmd(map[string]any{"paneId": pane, "command": "echo over-ssh; exit 3", "timeoutSeconds": 15})
	if status(r.ExitStatus) != "3" || text != "over-ssh" {
		t.Fatalf("run_command through ssh: %+v output %q, want 3 and %q", r, text, "over-ssh")
	}
	// The helper gave the shell tmcp's nonce: its marks are believed.
	var sh *shellOut
	if !tmuxtest.WaitFor(settle, func() bool { sh = listedShell(s, pane); return sh != nil && sh.State == "prompt" }) {
		t.Fatalf("the shell behind ssh, with tmcp's nonce, shows no prompt state: %+v", sh)
	}
	if r, text := s.runCmd(map[string]any{"paneId": pane, "command": "echo still-there", "timeoutSeconds": 15}); status(r.ExitStatus) != "0" || text != "still-there" {
		t.Fatalf("the shell behind ssh after exit 3: %+v output %q", r, text)
	}
	// Typed alone, as the person would have: the far shell's own marks
	// bound it.
	if screen := bareCapture(srv, pane); !hasLine(screen, "remote$ echo still-there") {
		t.Errorf("the command through ssh is not typed alone: %q", screen)
	}
	// C-c ends it at once with 130, though the far shell leaves nothing in
	// the pane's option, and the pane is free again.
	ch := s.async("run_command", map[string]any{"paneId": pane, "command": "echo started; sleep 30", "timeoutSeconds": 20})
	waitScreen(t, srv, pane, "the command's first line", func(l []string) bool { return hasLine(l, "started") })
	time.Sleep(100 * time.Millisecond) // sleep in front
	start := time.Now()
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "C-c", "enter": false}, nil)
	r, text = decodeText[jobOut](t, "run_command", awaitCall(t, "run_command", ch).res)
	if status(r.ExitStatus) != "130" || text != "started" || time.Since(start) > 5*time.Second {
		t.Fatalf("C-c through ssh: %+v output %q after %v, want 130 and %q at once", r, text, time.Since(start), "started")
	}
	if r, text := s.runCmd(map[string]any{"paneId": pane, "command": "echo free", "timeoutSeconds": 15}); status(r.ExitStatus) != "0" || text != "free" {
		t.Fatalf("the pane after C-c through ssh: %+v output %q", r, text)
	}
}
