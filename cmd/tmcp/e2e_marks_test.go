package main

// End-to-end tests of shell integration: "tmcp init SHELL" loaded into
// bash, zsh and fish started with no user configuration, and
// wait_for_command reading the marks it emits, over stdio against a
// private tmux server per test.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

type commandOut struct {
	Outcome         string  `json:"outcome"`
	ExitStatus      *int    `json:"exitStatus"`
	DurationSeconds float64 `json:"durationSeconds"`
	Running         bool    `json:"running"`
	Partial         bool    `json:"partial"`
	Cwd             string  `json:"cwd"`
	Cursor          string  `json:"cursor"`
	Reason          string  `json:"reason"`
	Lines           int     `json:"lines"`
	truncation
	waitTiming
}

// waitCommand calls wait_for_command, which must succeed.
func (s *session) waitCommand(args map[string]any) (commandOut, string) {
	s.t.Helper()
	return decodeText[commandOut](s.t, "wait_for_command", s.call("wait_for_command", args))
}

// shellOut is what list_panes says of a pane's shell from its marks.
type shellOut struct {
	State          string  `json:"state"`
	RunningSeconds float64 `json:"runningSeconds"`
	LastStatus     *int    `json:"lastStatus"`
	Cwd            string  `json:"cwd"`
}

// listedShell returns what list_panes reports of a pane's shell.
func listedShell(s *session, pane string) *shellOut {
	s.t.Helper()
	var out struct {
		Panes []struct {
			PaneID string    `json:"paneId"`
			Shell  *shellOut `json:"shell"`
		} `json:"panes"`
	}
	s.ok("list_panes", nil, &out)
	for _, p := range out.Panes {
		if p.PaneID == pane {
			return p.Shell
		}
	}
	s.t.Fatalf("list_panes lacks pane %s", pane)
	return nil
}

// integratedPane starts a window running shell with no user configuration
// but an rc file that holds rc and then loads tmcp's integration twice,
// as "tmcp init" prints it, and returns its pane id once its prompt shows.
func integratedPane(t *testing.T, srv *tmuxtest.Server, shell, rc string) string {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		t.Skipf("%s not installed: run scripts/install-deps.sh", shell)
	}
	dir := t.TempDir()
	var file, command, load string
	switch shell {
	case "bash":
		file = filepath.Join(dir, "bashrc")
		command = "bash --noprofile --rcfile " + file
		load = "eval \"$(" + tmcpBinary + " init bash)\"\n"
	case "zsh":
		file = filepath.Join(dir, ".zshrc")
		command = "env ZDOTDIR=" + dir + " zsh -d"
		load = "eval \"$(" + tmcpBinary + " init zsh)\"\n"
	case "fish":
		file = filepath.Join(dir, "config.fish")
		command = "fish --no-config -C 'source " + file + "'"
		rc = "function fish_prompt; printf '$ '; end\n" + rc
		load = tmcpBinary + " init fish | source\n"
	}
	if shell != "fish" {
		rc = "PS1='$ '\n" + rc
	}
	if err := os.WriteFile(file, []byte(rc+"\n"+load+load), 0o644); err != nil {
		t.Fatal(err)
	}
	pane := newWindow(srv, command)
	waitPrompt(t, srv, pane)
	return pane
}

// TestWaitForCommandReportsTheStatusDurationAndOutputInEachShell types a
// command with send_keys that writes two lines and exits 7 after a second,
// in bash, zsh and fish with the integration loaded, and waits for it:
// its status, its exact output, a duration of at least that second. Then
// a command already running when the wait begins is reported whole.
func TestWaitForCommandReportsTheStatusDurationAndOutputInEachShell(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			srv := tmuxtest.New(t)
			pane := integratedPane(t, srv, shell, "")
			s := startTMCP(t, srv, "")
			// The stream starts here: what follows is seen from its C.
			since, _ := s.since(map[string]any{"paneId": pane})
			s.ok("send_keys", map[string]any{"paneId": pane, "keys": "cd /tmp && sh -c 'echo one; sleep 1; echo two; exit 7'"}, nil)
			r, text := s.waitCommand(map[string]any{"paneId": pane, "cursor": since.Cursor, "timeoutSeconds": 10})
			if r.Outcome != "ended" || status(r.ExitStatus) != "7" || text != "one\ntwo" || r.Partial || r.Running {
				t.Fatalf("%s pane %s: wait_for_command %+v with output %q; want ended, exit 7, \"one\\ntwo\", whole", shell, pane, r, text)
			}
			if r.DurationSeconds < 1 || r.Lines != 2 || r.DroppedLines != 0 {
				t.Errorf("%s pane %s: duration %vs, lines %d (%d dropped); want at least 1s (the command sleeps 1s), 2 (none)", shell, pane, r.DurationSeconds, r.Lines, r.DroppedLines)
			}

			// The prompt that follows the command's end reports the directory.
			var sh *shellOut
			if !tmuxtest.WaitFor(settle, func() bool {
				sh = listedShell(s, pane)
				return sh != nil && sh.State == "prompt" && status(sh.LastStatus) == "7" && sh.Cwd == "/tmp"
			}) {
				t.Errorf("%s pane %s: list_panes shell %+v, want at the prompt, last status 7, cwd /tmp", shell, pane, sh)
			}

			s.ok("send_keys", map[string]any{"paneId": pane, "keys": "sh -c 'echo three; sleep 3'"}, nil)
			waitPane(t, srv, pane, "#{pane_current_command}", "sh")
			if sh := listedShell(s, pane); sh == nil || sh.State != "running" {
				t.Errorf("%s pane %s: list_panes shell %+v while a command runs, want running", shell, pane, sh)
			}
			r, text = s.waitCommand(map[string]any{"paneId": pane, "timeoutSeconds": 10})
			if r.Outcome != "ended" || status(r.ExitStatus) != "0" || text != "three" || r.Partial || r.Cwd != "/tmp" {
				t.Errorf("%s pane %s: wait_for_command begun while a command ran: %+v with output %q; want ended, exit 0, \"three\", whole, run in /tmp", shell, pane, r, text)
			}
		})
	}
}

// TestWaitForCommandTimesOutAtAPromptAndContinuesFromItsCursor waits at a
// prompt where nothing runs, then types a command and waits again from
// the cursor the timeout returned.
func TestWaitForCommandTimesOutAtAPromptAndContinuesFromItsCursor(t *testing.T) {
	srv := tmuxtest.New(t)
	pane := integratedPane(t, srv, "bash", "")
	s := startTMCP(t, srv, "")
	r, _ := s.waitCommand(map[string]any{"paneId": pane, "timeoutSeconds": 1})
	if r.Outcome != "timeout" || r.Running || r.ExitStatus != nil || r.Cursor == "" {
		t.Fatalf("wait_for_command at an idle prompt: %+v, want timeout with a cursor", r)
	}
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "printf 'a\\nb'; false"}, nil)
	r, text := s.waitCommand(map[string]any{"paneId": pane, "cursor": r.Cursor, "timeoutSeconds": 10})
	if r.Outcome != "ended" || status(r.ExitStatus) != "1" || text != "a\nb" {
		t.Errorf("wait_for_command from the cursor: %+v with output %q, want ended, exit 1, \"a\\nb\"", r, text)
	}
}

// TestWaitForCommandInAPaneWithoutIntegrationSaysHowToAddIt waits in a
// bash that emits no marks, once it has drawn a prompt under tmcp's eyes.
func TestWaitForCommandInAPaneWithoutIntegrationSaysHowToAddIt(t *testing.T) {
	srv := tmuxtest.New(t)
	pane := newWindow(srv, "bash --norc --noprofile")
	waitPrompt(t, srv, pane)
	s := startTMCP(t, srv, "")
	s.since(map[string]any{"paneId": pane})
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "echo plain"}, nil)
	waitScreen(t, srv, pane, "the echo's output and a new prompt", func(lines []string) bool {
		lines = trimBlank(lines)
		return hasLine(lines, "plain") && strings.HasSuffix(strings.TrimRight(lines[len(lines)-1], " "), "#")
	})
	r, _ := s.waitCommand(map[string]any{"paneId": pane, "timeoutSeconds": 10})
	if r.Outcome != "no_marks" || !strings.Contains(r.Reason, `eval "$(tmcp init bash)"`) || r.ExitStatus != nil {
		t.Errorf("wait_for_command in a pane without integration: %+v, want no_marks with the line to add", r)
	}
}

// TestShellIntegrationKeepsAPromptCommandThatWasThere loads the
// integration into a bash whose PROMPT_COMMAND is set, as a string and as
// an array: it still runs after each command, and still sees the
// command's status in $?.
func TestShellIntegrationKeepsAPromptCommandThatWasThere(t *testing.T) {
	for _, tc := range []struct{ name, rc string }{
		{"string", `PROMPT_COMMAND='echo "pc $?" >> LOG'`},
		{"array", `PROMPT_COMMAND=('echo "pc $?" >> LOG')`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tmuxtest.New(t)
			log := filepath.Join(t.TempDir(), "log")
			pane := integratedPane(t, srv, "bash", strings.ReplaceAll(tc.rc, "LOG", log))
			s := startTMCP(t, srv, "")
			since, _ := s.since(map[string]any{"paneId": pane})
			s.ok("send_keys", map[string]any{"paneId": pane, "keys": "sh -c 'exit 4'"}, nil)
			r, _ := s.waitCommand(map[string]any{"paneId": pane, "cursor": since.Cursor, "timeoutSeconds": 10})
			if r.Outcome != "ended" || status(r.ExitStatus) != "4" {
				t.Errorf("wait_for_command: %+v, want ended, exit 4", r)
			}
			waitFile(t, log, "pc 0\npc 4\n")
		})
	}
}

func TestInitPrintsASnippetPerShellAndRefusesOthers(t *testing.T) {
	srv := tmuxtest.New(t)
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out, err := runCLI(t, srv, nil, "init", shell)
		if err != nil || !strings.Contains(out, "133;D;") || !strings.Contains(out, "__tmcp_init") {
			t.Errorf("tmcp init %s: %v\n%s", shell, err, out)
		}
	}
	out, err := runCLI(t, srv, nil, "init", "tcsh")
	if err == nil || !strings.Contains(out, `"tcsh"`) || !strings.Contains(out, "bash, zsh, fish") {
		t.Errorf("tmcp init tcsh: %v, %q; want an error naming tcsh and the shells supported", err, out)
	}
}

// TestWaitForCommandIsBoundedAsEveryWaitIs checks what wait_for_command
// shares with the other waits: the ceiling clamps its timeout, progress
// keeps a client that resets its timeout on progress waiting, and a pane
// that dies ends it as pane_died.
func TestWaitForCommandIsBoundedAsEveryWaitIs(t *testing.T) {
	t.Run("ceiling", func(t *testing.T) {
		srv := tmuxtest.New(t)
		pane := integratedPane(t, srv, "bash", "")
		s := ceilingTMCP(t, srv)
		start := time.Now()
		r, _ := s.waitCommand(map[string]any{"paneId": pane, "timeoutSeconds": 30})
		if r.Outcome != "timeout" {
			t.Errorf("wait_for_command: outcome %s, want timeout", r.Outcome)
		}
		checkClamped(t, "wait_for_command", r.waitTiming, time.Since(start))
	})
	t.Run("progress", func(t *testing.T) {
		srv := tmuxtest.New(t)
		pane := integratedPane(t, srv, "bash", "")
		progress := &progressLog{watchers: map[any]func(){}}
		s := startTMCPWith(t, srv, &mcp.ClientOptions{ProgressNotificationHandler: progress.handle}, nil)
		since, _ := s.since(map[string]any{"paneId": pane})
		s.ok("send_keys", map[string]any{"paneId": pane, "keys": "sleep 5; echo woke; (exit 2)"}, nil)
		res, err := patientCall(t, s, progress, "wait_for_command", map[string]any{"paneId": pane, "cursor": since.Cursor, "timeoutSeconds": 10})
		if err != nil {
			t.Fatalf("wait_for_command under a %v client timeout that resets on progress: %v", clientPatience, err)
		}
		r := replyFields[commandOut](t, "wait_for_command", res)
		if text := paneText(t, "wait_for_command", res); r.Outcome != "ended" || status(r.ExitStatus) != "2" || text != "woke" {
			t.Errorf("wait_for_command: %+v with output %q, want ended, exit 2, woke", r, text)
		}
	})
	t.Run("pane dies", func(t *testing.T) {
		srv := tmuxtest.New(t)
		pane := integratedPane(t, srv, "bash", "")
		s := startTMCP(t, srv, "")
		s.since(map[string]any{"paneId": pane})
		s.ok("send_keys", map[string]any{"paneId": pane, "keys": "sleep 30"}, nil)
		waitPane(t, srv, pane, "#{pane_current_command}", "sleep")
		ch := s.async("wait_for_command", map[string]any{"paneId": pane, "timeoutSeconds": 10})
		// The wait must be underway when the pane dies; nothing outside shows
		// a wait begun on a pane already streamed.
		time.Sleep(300 * time.Millisecond)
		srv.Must("kill-pane", "-t", pane)
		r := replyFields[commandOut](t, "wait_for_command", awaitCall(t, "wait_for_command", ch).res)
		if r.Outcome != "pane_died" || r.ExitStatus != nil {
			t.Errorf("wait_for_command on a pane killed while its command ran: %+v, want pane_died, no status", r)
		}
	})
}

// TestWaitForCommandAnswersByItsTimeoutWhileTmuxIsStopped stops tmux
// before the call, during the wait and at its final read, as
// TestEveryWaitAnswersByItsTimeoutWhileTmuxIsStopped does for the others.
func TestWaitForCommandAnswersByItsTimeoutWhileTmuxIsStopped(t *testing.T) {
	for _, phase := range stallPhases {
		t.Run(phase.name, func(t *testing.T) {
			srv := tmuxtest.New(t)
			pane := integratedPane(t, srv, "bash", "")
			spare := newShellWindow(t, srv)
			s := startTMCP(t, srv, "")
			t.Cleanup(srv.Continue)
			if phase.at < 0 {
				srv.Stop()
			}
			sent := time.Now()
			ch := s.async("wait_for_command", map[string]any{"paneId": pane, "timeoutSeconds": stallTimeout.Seconds()})
			if phase.at >= 0 {
				time.Sleep(time.Until(sent.Add(phase.at))) // the moment of the stop is the point of the case
				srv.Stop()
			}
			pingWhileStalled(t, s)
			r := awaitCall(t, "wait_for_command", ch)
			if took := r.at.Sub(sent); took > stallTimeout+stallSlack {
				t.Errorf("wait_for_command with timeoutSeconds %v, tmux stopped %s: answered after %v, want within %v", stallTimeout.Seconds(), phase.name, took, stallTimeout+stallSlack)
			}
			if out := replyFields[commandOut](t, "wait_for_command", r.res); out.Outcome != "timeout" {
				t.Errorf("wait_for_command, tmux stopped %s: %+v, want timeout", phase.name, out)
			}
			srv.Continue()
			checkWorksAgain(t, s, spare)
		})
	}
}

// commandPanesOut is wait_for_command's reply over several panes.
type commandPanesOut struct {
	commandOut
	PaneID string `json:"paneId"`
	Panes  []struct {
		PaneID     string `json:"paneId"`
		Outcome    string `json:"outcome"`
		ExitStatus *int   `json:"exitStatus"`
	} `json:"panes"`
}

// TestWaitForCommandAcrossPanes waits on two bash panes with the
// integration loaded: with mode any, the pane whose command ends first
// decides, with its status and output, and the other is still waiting;
// with mode all, the wait ends once both commands have, each pane with
// its own status. A wait called at once after another has reported a
// command (within the arrival slack of its end) does not report it again.
func TestWaitForCommandAcrossPanes(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	a, b := integratedPane(t, srv, "bash", ""), integratedPane(t, srv, "bash", "")
	s := startTMCP(t, srv, "")
	// The streams start here, so that each command is seen from its C.
	s.since(map[string]any{"paneId": a})
	s.since(map[string]any{"paneId": b})
	outcomes := func(r commandPanesOut) string {
		var each []string
		for _, p := range r.Panes {
			each = append(each, p.PaneID+" "+p.Outcome+" "+status(p.ExitStatus))
		}
		return strings.Join(each, ", ")
	}

	ch := s.async("wait_for_command", map[string]any{"paneIds": []string{a, b}, "timeoutSeconds": 10})
	s.ok("send_keys", map[string]any{"paneId": b, "keys": "sh -c 'echo bee; sleep 1; exit 7'"}, nil)
	r, text := decodeText[commandPanesOut](t, "wait_for_command", awaitCall(t, "wait_for_command", ch).res)
	want := a + " waiting absent, " + b + " ended 7"
	if r.Outcome != "ended" || r.PaneID != b || status(r.ExitStatus) != "7" || outcomes(r) != want || !strings.Contains(text, "bee") {
		t.Errorf("mode any (%d lines): %s in %s, exit %s, panes %q, output %q; want ended in %s, exit 7, panes %q, output with bee",
			r.Lines, r.Outcome, r.PaneID, status(r.ExitStatus), outcomes(r), text, b, want)
	}

	ch = s.async("wait_for_command", map[string]any{"paneIds": []string{a, b}, "mode": "all", "timeoutSeconds": 10})
	s.ok("send_keys", map[string]any{"paneId": a, "keys": "sh -c 'sleep 1; exit 3'"}, nil)
	s.ok("send_keys", map[string]any{"paneId": b, "keys": "sh -c 'sleep 2; echo late'"}, nil)
	r, text = decodeText[commandPanesOut](t, "wait_for_command", awaitCall(t, "wait_for_command", ch).res)
	want = a + " ended 3, " + b + " ended 0"
	if r.Outcome != "ended" || r.PaneID != b || outcomes(r) != want || !strings.Contains(text, "late") {
		t.Errorf("mode all: %s in %s, panes %q, output %q; want ended, decided by %s, panes %q, output with late",
			r.Outcome, r.PaneID, outcomes(r), text, b, want)
	}

	again, _ := s.waitCommand(map[string]any{"paneId": b, "timeoutSeconds": 0.5})
	if again.Outcome != "timeout" {
		t.Errorf("a wait on %s at once after the last reported its command: %s, exit %s; want timeout (nothing new ran)",
			b, again.Outcome, status(again.ExitStatus))
	}
}

// TestWaitForCommandRightAfterRunCommandWaitsForTheNextCommand: the line
// run_command typed into a shell that marks its commands is a command of
// that shell's, typed alone or in tmcp's wrapper; a wait_for_command sent
// the moment run_command answers is for the next command, so it reports
// the one typed after it, not tmcp's.
func TestWaitForCommandRightAfterRunCommandWaitsForTheNextCommand(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			srv := tmuxtest.New(t)
			pane := integratedPane(t, srv, shell, "")
			s := startTMCP(t, srv, "")
			// The first run is wrapped (tmcp has not seen the prompt yet),
			// the second typed alone, the third wrapped (exit).
			for i, cmd := range []string{"echo first", "echo second", "echo third; exit 4"} {
				s.runCmd(map[string]any{"paneId": pane, "command": cmd, "timeoutSeconds": 10})
				ch := s.async("wait_for_command", map[string]any{"paneId": pane, "timeoutSeconds": 10})
				next := fmt.Sprintf("sh -c 'exit %d'", 10+i)
				srv.Must("send-keys", "-t", pane, "-l", next)
				srv.Must("send-keys", "-t", pane, "Enter")
				r, _ := decodeText[commandOut](t, "wait_for_command", awaitCall(t, "wait_for_command", ch).res)
				if r.Outcome != "ended" || status(r.ExitStatus) != fmt.Sprint(10+i) {
					t.Fatalf("%s: wait_for_command sent as run_command %q answered: %+v; want the next command's end, status %d", shell, cmd, r, 10+i)
				}
			}
		})
	}
}
