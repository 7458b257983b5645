package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// interruptReply bounds how long after the key (or, with no key, the call)
// an interrupted run_command may take to answer: well under the 20 s
// timeout the calls give, which is what it would wait out otherwise.
const interruptReply = 5 * time.Second

// interruptCase is one way a person or the model cuts a run_command short.
type interruptCase struct {
	name    string
	shell   string // the pane's program; "" is sh
	command string
	// before readies the pane, as a person would, before the call.
	before func(t *testing.T, srv *tmuxtest.Server, pane string)
	// act waits for the moment the case is about and presses the keys.
	// nil: the command itself is the interruption.
	act func(t *testing.T, s *session, srv *tmuxtest.Server, pane string)
	// check judges the reply to the interrupted call.
	check func(t *testing.T, r jobOut, text string)
}

func TestRunCommandEndsPromptlyOnEveryInterruptAndFreesThePane(t *testing.T) {
	t.Parallel()
	for _, tt := range []interruptCase{{
		// A shell script in the foreground has the same name as the shell
		// at its prompt, so tmcp types while it runs: the typed line waits,
		// unread, in the terminal's input until C-c discards it.
		name:    "C-c from send_keys before the shell read the typed line",
		command: "echo ran",
		before:  foregroundScript(""),
		act: func(t *testing.T, s *session, srv *tmuxtest.Server, pane string) {
			waitTypedLine(t, srv, pane)
			s.ok("send_keys", map[string]any{"paneId": pane, "keys": "C-c", "enter": false}, nil)
		},
		check: notRun("C-c"),
	}, {
		// Without the echo of ^C only tmcp knows of the key.
		name:    "C-c from send_keys before the shell read the typed line, where the terminal echoes no ^C",
		command: "echo ran",
		before:  foregroundScript("stty -echoctl; "),
		act: func(t *testing.T, s *session, srv *tmuxtest.Server, pane string) {
			waitTypedLine(t, srv, pane)
			s.ok("send_keys", map[string]any{"paneId": pane, "keys": "C-c", "enter": false}, nil)
		},
		check: notRun("C-c"),
	}, {
		name:    "C-c from a person before bash read the typed line",
		shell:   "bash --norc --noprofile",
		command: "echo ran",
		before:  foregroundScript(""),
		act: func(t *testing.T, s *session, srv *tmuxtest.Server, pane string) {
			waitTypedLine(t, srv, pane)
			srv.Must("send-keys", "-t", pane, "C-c")
		},
		check: notRun("C-c"),
	}, {
		name:    "C-c from a person before the shell read a long command's typed line",
		command: "echo ran # " + strings.Repeat("x", 300),
		before:  foregroundScript(""),
		act: func(t *testing.T, s *session, srv *tmuxtest.Server, pane string) {
			waitTypedLine(t, srv, pane)
			srv.Must("send-keys", "-t", pane, "C-c")
		},
		check: notRun("C-c"),
	}, {
		name:    "C-z from a person before the shell read the typed line",
		command: "echo ran",
		before:  foregroundScript(""),
		act: func(t *testing.T, s *session, srv *tmuxtest.Server, pane string) {
			waitTypedLine(t, srv, pane)
			srv.Must("send-keys", "-t", pane, "C-z")
		},
		check: notRun("C-z"),
	}, {
		// The key races the typing: it lands before the line, and the
		// command runs, or after it, and the line is discarded.
		name:    "C-c from send_keys right after the call",
		command: "echo ran",
		act: func(t *testing.T, s *session, srv *tmuxtest.Server, pane string) {
			s.ok("send_keys", map[string]any{"paneId": pane, "keys": "C-c", "enter": false}, nil)
		},
		check: func(t *testing.T, r jobOut, text string) {
			ran := status(r.ExitStatus) == "0" && text == "ran"
			if !r.Finished || !ran && (r.ExitStatus != nil || !strings.Contains(r.Reason, "did not run")) {
				t.Errorf("C-c racing the typed line: %+v output %q, want it run (status 0, %q) or not run (a reason saying so)", r, text, "ran")
			}
		},
	}, {
		name:    "C-c while the command runs",
		command: "echo started; sleep 30",
		act: func(t *testing.T, s *session, srv *tmuxtest.Server, pane string) {
			waitScreen(t, srv, pane, "started", func(l []string) bool { return hasLine(l, "started") })
			s.ok("send_keys", map[string]any{"paneId": pane, "keys": "C-c", "enter": false}, nil)
		},
		check: func(t *testing.T, r jobOut, text string) {
			if !r.Finished || status(r.ExitStatus) != "130" || !strings.Contains(r.Reason, "interrupted") || text != "started" {
				t.Errorf("C-c during sleep: %+v output %q, want finished, status 130, a reason saying interrupted, output %q", r, text, "started")
			}
		},
	}, {
		// A long command travels through a tmux buffer: another typed line.
		name:    "C-c while a long command runs",
		command: "echo started; sleep 30 # " + strings.Repeat("x", 300),
		act: func(t *testing.T, s *session, srv *tmuxtest.Server, pane string) {
			waitScreen(t, srv, pane, "started", func(l []string) bool { return hasLine(l, "started") })
			srv.Must("send-keys", "-t", pane, "C-c")
		},
		check: func(t *testing.T, r jobOut, text string) {
			if !r.Finished || status(r.ExitStatus) != "130" || !strings.Contains(r.Reason, "interrupted") || text != "started" {
				t.Errorf("C-c during sleep: %+v output %q, want finished, status 130, a reason saying interrupted, output %q", r, text, "started")
			}
		},
	}, {
		// C-s stops the terminal's output, so the shell cannot write the
		// end mark once the command has ended; C-c restarts the output and
		// interrupts the shell as it writes it.
		name:    "C-c after the command ended, before its end mark was written",
		command: "echo started; read x",
		act: func(t *testing.T, s *session, srv *tmuxtest.Server, pane string) {
			waitScreen(t, srv, pane, "started", func(l []string) bool { return hasLine(l, "started") })
			shell, _ := strconv.Atoi(paneFormat(srv, pane, "#{pane_pid}"))
			running := len(descendants(shell)) // the command's subshells
			srv.Must("send-keys", "-t", pane, "C-s")
			srv.Must("send-keys", "-t", pane, "Enter")
			if !tmuxtest.WaitFor(settle, func() bool { return len(descendants(shell)) < running }) {
				t.Fatalf("the command never ended: processes under the shell %v, want fewer than %d", descendants(shell), running)
			}
			srv.Must("send-keys", "-t", pane, "C-c")
		},
		check: func(t *testing.T, r jobOut, text string) {
			// The shell writes the end mark in front, where the key reaches
			// it too: the mark comes, or the job ends as interrupted with
			// no status.
			known := status(r.ExitStatus) == "0" || status(r.ExitStatus) == "130"
			cut := r.ExitStatus == nil && strings.Contains(r.Reason, "interrupted")
			if !r.Finished || !known && !cut || !strings.HasPrefix(text, "started") {
				t.Errorf("C-c between the end and its mark: %+v output %q, want finished with 0 or 130, or interrupted with no status, after %q", r, text, "started")
			}
			t.Logf("status %s, reason %q", status(r.ExitStatus), r.Reason)
		},
	}, {
		name:    "C-z while the command runs",
		command: "echo started; sleep 30",
		act:     stopAfterStarted,
		check:   stopped,
	}, {
		// bash prints its job message before the shell's mark: no output.
		name:    "C-z while the command runs in bash",
		shell:   "bash --norc --noprofile",
		command: "echo started; sleep 30",
		act:     stopAfterStarted,
		check:   stopped,
	}, {
		name:    "exec replacing the shell",
		command: "exec sh",
		check: func(t *testing.T, r jobOut, text string) {
			if !r.Finished || r.ExitStatus != nil || r.PaneDied || !strings.Contains(r.Reason, "replaced the shell") || text != "" {
				t.Errorf("exec sh: %+v output %q, want finished, no status, no output (the new prompt is none), a reason saying the shell was replaced", r, text)
			}
		},
	}, {
		name:    "C-d at the prompt of a shell the command started",
		command: "sh",
		act: func(t *testing.T, s *session, srv *tmuxtest.Server, pane string) {
			waitInnerShell(t, srv, pane)
			s.ok("send_keys", map[string]any{"paneId": pane, "keys": "C-d", "enter": false}, nil)
		},
		check: exited0,
	}, {
		name:    "exit typed by a person at the prompt of a shell the command started",
		command: "sh",
		act: func(t *testing.T, s *session, srv *tmuxtest.Server, pane string) {
			waitInnerShell(t, srv, pane)
			srv.Must("send-keys", "-t", pane, "exit", "Enter")
		},
		check: exited0,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := tmuxtest.New(t)
			pane := shellPaneRunning(t, srv, tt.shell)
			s := startTMCP(t, srv, "")
			if tt.before != nil {
				tt.before(t, srv, pane)
			}
			ch := s.async("run_command", map[string]any{"paneId": pane, "command": tt.command, "timeoutSeconds": 20})
			acted := time.Now()
			if tt.act != nil {
				tt.act(t, s, srv, pane)
				acted = time.Now()
			}
			res := awaitCall(t, "run_command", ch)
			if took := res.at.Sub(acted); took > interruptReply {
				t.Errorf("run_command answered %v after the interruption, want within %v (its timeout was 20s)", took, interruptReply)
			}
			r, text := decodeText[jobOut](t, "run_command", res.res)
			tt.check(t, r, text)

			// The pane is free: the job no longer holds it, and the shell
			// at its prompt runs the next command.
			waitPrompt(t, srv, pane)
			if r, text := s.runCmd(map[string]any{"paneId": pane, "command": "echo free", "timeoutSeconds": 20}); text != "free" || status(r.ExitStatus) != "0" {
				t.Errorf("the next run_command in %s: %+v output %q, want status 0 and %q", pane, r, text, "free")
			}
			// A long command's buffer goes, even when its line never ran.
			var buffers string
			if !tmuxtest.WaitFor(settle, func() bool {
				buffers = srv.Must("list-buffers", "-F", "#{buffer_name}")
				return !strings.Contains(buffers, "tmcp-")
			}) {
				t.Errorf("tmux buffers left behind: %q", buffers)
			}
		})
	}
}

// foregroundScript returns a set-up that types setup and then starts a
// shell script in the foreground of a pane, as a person would, and waits
// until it runs.
func foregroundScript(setup string) func(t *testing.T, srv *tmuxtest.Server, pane string) {
	return func(t *testing.T, srv *tmuxtest.Server, pane string) {
		t.Helper()
		srv.Must("send-keys", "-t", pane, setup+"sh -c 'sleep 30; :'", "Enter")
		shell, _ := strconv.Atoi(paneFormat(srv, pane, "#{pane_pid}"))
		if !tmuxtest.WaitFor(settle, func() bool {
			return slices.ContainsFunc(descendants(shell), func(pid int) bool { return cmdline(pid) == "sleep 30" })
		}) {
			t.Fatalf("the script never ran in %s: %q", pane, bareCapture(srv, pane))
		}
	}
}

// waitInnerShell waits until the shell a run started (sh) runs under the
// pane's shell and shows its prompt: keys sent before could reach the
// pane's shell instead.
func waitInnerShell(t *testing.T, srv *tmuxtest.Server, pane string) {
	t.Helper()
	shell, _ := strconv.Atoi(paneFormat(srv, pane, "#{pane_pid}"))
	// The shell the run started holds the terminal: an interactive sh
	// takes it for a process group of its own. The run's subshell, or a
	// process the helper's first line starts, is a group the pane's shell
	// made, its child; a person's keys typed then would reach that shell.
	if !tmuxtest.WaitFor(settle, func() bool {
		f := procStat(shell)
		if len(f) < 6 {
			return false
		}
		fg, _ := strconv.Atoi(f[5])
		inner := procStat(fg)
		return fg != shell && len(inner) > 1 && inner[1] != strconv.Itoa(shell) && cmdline(fg) == "sh" &&
			slices.Contains(descendants(shell), fg)
	}) {
		t.Fatalf("the shell the command started never ran in %s: %q", pane, bareCapture(srv, pane))
	}
	waitPrompt(t, srv, pane) // the prompt of the shell the command started
}

// waitTypedLine waits until a pane shows the echo of the line tmcp typed.
func waitTypedLine(t *testing.T, srv *tmuxtest.Server, pane string) {
	t.Helper()
	waitScreen(t, srv, pane, "the typed line", func(l []string) bool {
		// The echo of the helper's line, or of the run's, in all their forms.
		return strings.Contains(strings.Join(l, ""), "__tmcp")
	})
}

// notRun checks the reply to a run whose typed line key discarded.
func notRun(key string) func(t *testing.T, r jobOut, text string) {
	return func(t *testing.T, r jobOut, text string) {
		t.Helper()
		if !r.Finished || r.ExitStatus != nil || r.PaneDied || text != "" ||
			!strings.Contains(r.Reason, key) || !strings.Contains(r.Reason, "did not run") {
			t.Errorf("%s before the line was read: %+v output %q, want finished, no status, no output, a reason naming %s and saying the command did not run", key, r, text, key)
		}
	}
}

func exited0(t *testing.T, r jobOut, text string) {
	t.Helper()
	if !r.Finished || status(r.ExitStatus) != "0" || r.Reason != "" {
		t.Errorf("the shell the command started ended: %+v output %q, want finished with status 0 and no reason", r, text)
	}
}

func stopAfterStarted(t *testing.T, s *session, srv *tmuxtest.Server, pane string) {
	t.Helper()
	waitScreen(t, srv, pane, "started", func(l []string) bool { return hasLine(l, "started") })
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "C-z", "enter": false}, nil)
}

func stopped(t *testing.T, r jobOut, text string) {
	t.Helper()
	if !r.Finished || r.ExitStatus != nil || r.PaneDied || !strings.Contains(r.Reason, "stopped") || text != "started" {
		t.Errorf("C-z during sleep: %+v output %q, want finished, no status, a reason saying stopped, output %q", r, text, "started")
	}
}

func TestGetJobFinishesOnceCtrlCDiscardedTheTypedLine(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	s := startTMCP(t, srv, "")
	foregroundScript("")(t, srv, pane)

	// The line waits behind the script past the call's timeout: a job.
	r, _ := s.runCmd(map[string]any{"paneId": pane, "command": "echo ran", "timeoutSeconds": 1})
	if r.Finished || !r.TimedOut || r.JobID == "" {
		t.Fatalf("run_command behind a foreground script: %+v, want a running job that timed out", r)
	}
	waitTypedLine(t, srv, pane)
	ch := s.async("get_job", map[string]any{"jobId": r.JobID, "timeoutSeconds": 20})
	srv.Must("send-keys", "-t", pane, "C-c")
	pressed := time.Now()
	res := awaitCall(t, "get_job", ch)
	if took := res.at.Sub(pressed); took > interruptReply {
		t.Errorf("get_job answered %v after C-c, want within %v (its timeout was 20s)", took, interruptReply)
	}
	j, text := decodeText[jobOut](t, "get_job", res.res)
	notRun("C-c")(t, j, text)
	waitPrompt(t, srv, pane)
	if r, text := s.runCmd(map[string]any{"paneId": pane, "command": "echo free", "timeoutSeconds": 20}); text != "free" {
		t.Errorf("the next run_command in %s: %+v output %q, want %q", pane, r, text, "free")
	}
}
