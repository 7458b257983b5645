package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/jobstate"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// killTMCP kills a tmcp process outright, as a crash would, and waits
// until it is gone.
func killTMCP(t *testing.T, s *session) {
	t.Helper()
	pid := s.pid()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatalf("killing tmcp: %v", err)
	}
	deadline := time.Now().Add(settle)
	for !ended(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("tmcp (pid %d) still runs %v after SIGKILL", pid, settle)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// detachAfterHelper runs command detached in pane as its shell's second
// run: the first hands the shell its helper, so the job's line is typed
// as it is. dash draws its prompt after a line typed ahead of it, so the
// job waits for the prompt the first run leaves.
func detachAfterHelper(t *testing.T, s *session, srv *tmuxtest.Server, pane, command string) jobOut {
	t.Helper()
	replyFields[jobOut](t, "run_command", s.call("run_command", map[string]any{"paneId": pane, "command": "true"}))
	waitPrompt(t, srv, pane)
	return replyFields[jobOut](t, "run_command", s.call("run_command", map[string]any{"paneId": pane, "command": command, "detach": true}))
}

// The new tmcp tells the job's end by its shell coming back to the front,
// whether the shell is the pane's process or a child of it.
func TestGetJobFollowsAJobOfAKilledTmcpToItsEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		command string // the pane's command; "": the fixture's shell pane
	}{
		{"the pane's own shell", ""},
		// The trailing exit keeps sh -c from replacing itself with the shell.
		{"a shell the pane's process started", "sh -c 'sh; exit'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := tmuxtest.New(t)
			pane := shellPaneRunning(t, srv, tc.command)
			first := startTMCP(t, srv, "")
			job := replyFields[jobOut](t, "run_command", first.call("run_command", map[string]any{"paneId": pane,
				"command": "echo before; sleep 2; echo after; (exit 3)", "detach": true}))
			waitScreen(t, srv, pane, "the line before the sleep", func(rows []string) bool { return hasLine(rows, "before") })
			killTMCPAndItsClients(t, first)

			second := startTMCP(t, srv, "")
			res := second.call("get_job", map[string]any{"jobId": job.JobID, "timeoutSeconds": 15})
			r := replyFields[jobOut](t, "get_job", res)
			text := paneText(t, "get_job", res)
			if !r.Finished || status(r.ExitStatus) != "3" || text != "before\nafter" || r.OutputLost {
				t.Logf("history: %q", bareCapture(srv, pane, "-S", "-", "-J"))
				t.Fatalf("get_job from a new tmcp: finished %v status %s lost %v output %q (%s); want the killed tmcp's job followed to its end: status 3, before and after",
					r.Finished, status(r.ExitStatus), r.OutputLost, text, r.Reason)
			}
			if !strings.Contains(r.Reason, "history") {
				t.Errorf("reason %q does not say the output came from the pane's history", r.Reason)
			}
			// The pane is free again for the new tmcp.
			again := replyFields[jobOut](t, "run_command", second.call("run_command", map[string]any{"paneId": pane, "command": "echo again"}))
			if !again.Finished || status(again.ExitStatus) != "0" {
				t.Fatalf("run_command after the adopted job: finished %v status %s (%s)", again.Finished, status(again.ExitStatus), again.Reason)
			}
		})
	}
}

func TestGetJobReportsAJobThatEndedWhileNoTmcpRan(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	first := startTMCP(t, srv, "")
	job := detachAfterHelper(t, first, srv, pane, "sleep 1; printf 'one\\ntwo\\n'; (exit 4)")
	killTMCPAndItsClients(t, first)
	// The job ends with no tmcp running: its shell leaves the status in
	// the pane's end file, with no tmux process of its own.
	ends := endFile(srv, pane)
	if !tmuxtest.WaitFor(settle, func() bool { b, _ := os.ReadFile(ends); return string(b) == job.JobID[:5]+" 4\n" }) {
		b, err := os.ReadFile(ends)
		t.Fatalf("the pane's end file %s holds %q (%v), want %q", ends, b, err, job.JobID[:5]+" 4\n")
	}
	if got := tmuxOne(srv, "show-options", "-pqv", "-t", pane, "@tmcp_end"); got != "" {
		t.Errorf("the pane's @tmcp_end option is %q, want it unset: a shell on tmcp's machine writes its file", got)
	}

	second := startTMCP(t, srv, "")
	// A new run in the pane writes the option anew: the earlier job's end
	// must be taken first.
	next := replyFields[jobOut](t, "run_command", second.call("run_command", map[string]any{"paneId": pane, "command": "echo next"}))
	if status(next.ExitStatus) != "0" {
		t.Fatalf("run_command in the pane: status %s (%s)", status(next.ExitStatus), next.Reason)
	}
	res := second.call("get_job", map[string]any{"jobId": job.JobID})
	r := replyFields[jobOut](t, "get_job", res)
	if text := paneText(t, "get_job", res); !r.Finished || status(r.ExitStatus) != "4" || text != "one\ntwo" || r.OutputLost {
		t.Logf("history: %q", bareCapture(srv, pane, "-S", "-", "-J"))
		t.Fatalf("get_job of a job that ended while no tmcp ran: finished %v status %s lost %v output %q (%s); want status 4, one and two",
			r.Finished, status(r.ExitStatus), r.OutputLost, text, r.Reason)
	}

	// A third tmcp reads the end the second one wrote.
	killTMCPAndItsClients(t, second)
	third := startTMCP(t, srv, "")
	r = replyFields[jobOut](t, "get_job", third.call("get_job", map[string]any{"jobId": job.JobID}))
	if !r.Finished || status(r.ExitStatus) != "4" {
		t.Fatalf("get_job from a third tmcp: finished %v status %s (%s); want status 4", r.Finished, status(r.ExitStatus), r.Reason)
	}
}

// A job that ended while no tmcp ran, in a shell that could not leave its
// status (its end file's directory gone, no tmux reachable from it), is
// reported ended once its shell is
// seen back in front, whether that shell is the pane's process or a child
// of it; the pane is free again.
func TestGetJobReportsAJobThatEndedUnrecordedWhileNoTmcpRan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, command string }{
		{"the pane's own shell", "unset TMUX_PANE; exec sh"},
		// The trailing exit keeps sh -c from replacing itself with the shell.
		{"a shell the pane's process started", "unset TMUX_PANE; sh; exit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := tmuxtest.New(t)
			pane := shellPaneRunning(t, srv, tc.command)
			first := startTMCP(t, srv, "")
			job := detachAfterHelper(t, first, srv, pane, "echo before; sleep 1; echo after")
			killTMCPAndItsClients(t, first)
			if err := os.RemoveAll(filepath.Dir(endFile(srv, pane))); err != nil {
				t.Fatal(err)
			}
			waitScreen(t, srv, pane, "the job's last line", func(rows []string) bool { return hasLine(rows, "after") })
			waitPrompt(t, srv, pane)

			second := startTMCP(t, srv, "")
			r := replyFields[jobOut](t, "get_job", second.call("get_job", map[string]any{"jobId": job.JobID, "timeoutSeconds": 5}))
			if !r.Finished || r.ExitStatus != nil {
				t.Fatalf("get_job of a job that ended unrecorded: finished %v status %s (%s); want it finished, its status unknown",
					r.Finished, status(r.ExitStatus), r.Reason)
			}
			again := replyFields[jobOut](t, "run_command", second.call("run_command", map[string]any{"paneId": pane, "command": "echo again"}))
			if !again.Finished || status(again.ExitStatus) != "0" {
				t.Fatalf("run_command after the job: finished %v status %s (%s)", again.Finished, status(again.ExitStatus), again.Reason)
			}
		})
	}
}

// A job whose pane is gone when a later tmcp is asked says its output is
// lost, whether the job ran on or had ended before its tmcp went.
func TestGetJobSaysWhenTheJobsPaneIsGone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		command string
		ended   bool
	}{
		{"running when its tmcp went", "sleep 30", false},
		{"ended before its tmcp went", "echo done", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := tmuxtest.New(t)
			pane := newShellWindow(t, srv)
			first := startTMCP(t, srv, "")
			job := replyFields[jobOut](t, "run_command", first.call("run_command", map[string]any{"paneId": pane, "command": tc.command, "detach": !tc.ended}))
			if tc.ended && (!job.Finished || status(job.ExitStatus) != "0") {
				t.Fatalf("run_command %q: finished %v status %s (%s)", tc.command, job.Finished, status(job.ExitStatus), job.Reason)
			}
			killTMCPAndItsClients(t, first)
			tmuxOne(srv, "kill-pane", "-t", pane)

			second := startTMCP(t, srv, "")
			r := replyFields[jobOut](t, "get_job", second.call("get_job", map[string]any{"jobId": job.JobID, "timeoutSeconds": 5}))
			switch {
			case !r.Finished || !r.OutputLost:
				t.Fatalf("get_job of a job whose pane was killed while no tmcp ran: finished %v lost %v (%s); want finished, output lost", r.Finished, r.OutputLost, r.Reason)
			case !tc.ended && (r.ExitStatus != nil || !strings.Contains(r.Reason, "gone")):
				t.Fatalf("get_job of a job running as its pane went: status %s (%s); want no status, the pane named gone", status(r.ExitStatus), r.Reason)
			case tc.ended && status(r.ExitStatus) != "0":
				t.Fatalf("get_job of a job that ended before its pane went: status %s (%s); want its status, 0", status(r.ExitStatus), r.Reason)
			}
		})
	}
}

func TestAnUnusableJobFileIsSetAsideAndReported(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	path := jobstate.Path(filepath.Join(srv.Dir, "state", "tmcp"), "", srv.Socket)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("\x00not a job file"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startTMCP(t, srv, "")
	if e := s.stderr.String(); !strings.Contains(e, "set aside") {
		t.Errorf("tmcp's stderr does not report the unusable job file: %q", e)
	}
	if aside, _ := filepath.Glob(path + ".unreadable-*"); len(aside) != 1 {
		t.Errorf("files set aside: %v, want one", aside)
	}
	job := replyFields[jobOut](t, "run_command", s.call("run_command", map[string]any{"paneId": pane, "command": "echo fine"}))
	if status(job.ExitStatus) != "0" {
		t.Fatalf("run_command with the job file set aside: status %s (%s)", status(job.ExitStatus), job.Reason)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), job.JobID) {
		t.Fatalf("the new job file (%v) does not hold job %s: %s", err, job.JobID, data)
	}
}

func TestACursorReadsOnAfterTmcpRestarts(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	first := startTMCP(t, srv, "")
	start, _ := first.since(map[string]any{"paneId": pane})
	tmuxOne(srv, "send-keys", "-t", pane, "-l", "printf 'one\\ntwo\\n'")
	tmuxOne(srv, "send-keys", "-t", pane, "Enter")
	waitScreen(t, srv, pane, "two", func(rows []string) bool { return hasLine(rows, "two") })
	read, _ := first.since(map[string]any{"cursor": start.Cursor})
	killTMCPAndItsClients(t, first)

	tmuxOne(srv, "send-keys", "-t", pane, "-l", "printf 'three\\nfour\\n'")
	tmuxOne(srv, "send-keys", "-t", pane, "Enter")
	waitScreen(t, srv, pane, "four", func(rows []string) bool { return hasLine(rows, "four") })
	second := startTMCP(t, srv, "")
	res := second.call("capture_since", map[string]any{"cursor": read.Cursor})
	r := replyFields[sinceOut](t, "capture_since", res)
	text := allText(res)
	if r.Reset || !strings.Contains(text, "three\nfour") || strings.Contains(text, "two") || !strings.Contains(r.Reason, "history") {
		t.Fatalf("capture_since with a cursor of a killed tmcp: reset %v reason %q text %q; want what came after the cursor (three, four) from the pane's history, nothing before it", r.Reset, r.Reason, text)
	}
	// And on from there, by the new tmcp's stream.
	tmuxOne(srv, "send-keys", "-t", pane, "-l", "echo five")
	tmuxOne(srv, "send-keys", "-t", pane, "Enter")
	waitScreen(t, srv, pane, "five", func(rows []string) bool { return hasLine(rows, "five") })
	res = second.call("capture_since", map[string]any{"cursor": r.Cursor})
	if r := replyFields[sinceOut](t, "capture_since", res); r.Reset || !strings.Contains(allText(res), "five") || strings.Contains(allText(res), "four") {
		t.Fatalf("capture_since with the new cursor: reset %v text %q; want five and nothing before it", r.Reset, allText(res))
	}

	// A cursor whose line the history lost is answered afresh.
	tmuxOne(srv, "send-keys", "-t", pane, "-l", "clear")
	tmuxOne(srv, "send-keys", "-t", pane, "Enter")
	waitPrompt(t, srv, pane)
	tmuxOne(srv, "clear-history", "-t", pane)
	killTMCPAndItsClients(t, second)
	third := startTMCP(t, srv, "")
	if r := replyFields[sinceOut](t, "capture_since", third.call("capture_since", map[string]any{"cursor": read.Cursor})); !r.Reset || !strings.Contains(r.Reason, "no longer holds") {
		t.Fatalf("capture_since with a cursor whose line is gone: reset %v reason %q; want a reset that says the history lost it", r.Reset, r.Reason)
	}
}

// A command typed alone (the pane's shell marks its prompts) outlives its
// tmcp too: a new tmcp follows one still running to its D, and its output
// from the pane's history; one that ended while no tmcp ran is reported
// ended, with its output, its status not known (the D went by unseen).
func TestGetJobOfACommandTypedAloneAfterTmcpRestarts(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := integratedPane(t, srv, "bash", "")
	first := startTMCP(t, srv, "")
	// The first run shows tmcp the shell's marks; the next are typed alone.
	replyFields[jobOut](t, "run_command", first.call("run_command", map[string]any{"paneId": pane, "command": "true"}))
	const running = "echo before; sleep 2; echo after; sh -c 'exit 3'"
	job := replyFields[jobOut](t, "run_command", first.call("run_command", map[string]any{"paneId": pane, "command": running, "detach": true}))
	waitScreen(t, srv, pane, "the command alone, and the line before the sleep", func(rows []string) bool {
		return hasLine(rows, "$ "+running) && hasLine(rows, "before")
	})
	killTMCPAndItsClients(t, first)

	second := startTMCP(t, srv, "")
	res := second.call("get_job", map[string]any{"jobId": job.JobID, "timeoutSeconds": 15})
	r := replyFields[jobOut](t, "get_job", res)
	if text := paneText(t, "get_job", res); !r.Finished || status(r.ExitStatus) != "3" || text != "before\nafter" || r.OutputLost {
		t.Logf("history: %q", bareCapture(srv, pane, "-S", "-", "-J"))
		t.Fatalf("get_job from a new tmcp: finished %v status %s lost %v output %q (%s); want followed to its D: status 3, before and after",
			r.Finished, status(r.ExitStatus), r.OutputLost, text, r.Reason)
	}

	const ends = "sleep 1; echo one; sh -c 'exit 4'"
	job = replyFields[jobOut](t, "run_command", second.call("run_command", map[string]any{"paneId": pane, "command": ends, "detach": true}))
	waitScreen(t, srv, pane, "the command alone", func(rows []string) bool { return hasLine(rows, "$ "+ends) })
	killTMCPAndItsClients(t, second)
	waitScreen(t, srv, pane, "its output and the next prompt", func(rows []string) bool {
		return len(rows) > 1 && rows[len(rows)-2] == "one" && strings.TrimSpace(rows[len(rows)-1]) == "$"
	})
	third := startTMCP(t, srv, "")
	res = third.call("get_job", map[string]any{"jobId": job.JobID})
	r = replyFields[jobOut](t, "get_job", res)
	if text := paneText(t, "get_job", res); !r.Finished || r.ExitStatus != nil || text != "one" || !strings.Contains(r.Reason, "typed alone") {
		t.Logf("history: %q", bareCapture(srv, pane, "-S", "-", "-J"))
		t.Fatalf("get_job of a command typed alone that ended while no tmcp ran: finished %v status %s output %q (%s); want ended, status unknown, said why, and one",
			r.Finished, status(r.ExitStatus), text, r.Reason)
	}
}

// endFile is where the helper of the shell in pane leaves its jobs' ends,
// for a tmcp started by startTMCP on srv.
func endFile(srv *tmuxtest.Server, pane string) string {
	jobs := jobstate.Path(filepath.Join(srv.Dir, "state", "tmcp"), "", srv.Socket)
	return filepath.Join(jobstate.EndsDir(jobs), strings.TrimPrefix(pane, "%"))
}
