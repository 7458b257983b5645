package main

// End-to-end tests of steering a terminal agent in another pane:
// submit_prompt and wait_for_screen over stdio, against stand-ins for the
// agents (testdata/standin) that take keys as the agents do.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

type submitOut struct {
	Profile    string `json:"profile"`
	PasteShown bool   `json:"pasteShown"`
	Attempts   int    `json:"attempts"`
	Verified   bool   `json:"verified"`
	How        string `json:"how"`
}

type screenOut struct {
	Outcome        string  `json:"outcome"`
	Pattern        string  `json:"pattern"`
	Profile        string  `json:"profile"`
	ElapsedSeconds float64 `json:"elapsedSeconds"`
}

var (
	standinOnce sync.Once
	standinDir  string
	standinErr  error
)

// standin returns the path of the stand-in agent under a name (claude,
// codex or bellapp), built once per run beside the tmcp binary.
func standin(t *testing.T, name string) string {
	t.Helper()
	standinOnce.Do(func() {
		standinDir = filepath.Join(filepath.Dir(tmcpBinary), "standin")
		bin := filepath.Join(standinDir, "standin")
		out, err := exec.Command("go", "build", "-o", bin, "./testdata/standin").CombinedOutput()
		if err != nil {
			standinErr = fmt.Errorf("building the stand-in agent: %v\n%s", err, out)
			return
		}
		for _, n := range []string{"claude", "codex", "bellapp"} {
			if standinErr = os.Symlink(bin, filepath.Join(standinDir, n)); standinErr != nil {
				return
			}
		}
	})
	if standinErr != nil {
		t.Fatal(standinErr)
	}
	return filepath.Join(standinDir, name)
}

// agentPane starts a stand-in agent in a new window of srv, recording to
// a file of its own, and returns its pane and the record.
func agentPane(t *testing.T, srv *tmuxtest.Server, name string, flags ...string) (pane string, rec *agentRecord) {
	t.Helper()
	rec = &agentRecord{path: filepath.Join(t.TempDir(), name+".jsonl")}
	pane = newWindow(srv, strings.Join(append([]string{standin(t, name), "-record", rec.path}, flags...), " "))
	waitScreen(t, srv, pane, name+" drawn", func(rows []string) bool {
		return strings.Contains(strings.Join(rows, "\n"), "? for shortcuts")
	})
	return pane, rec
}

// agentRecord reads what a stand-in recorded.
type agentRecord struct{ path string }

type agentEvent struct {
	Submitted *string `json:"submitted"`
	Done      int     `json:"done"`
	At        int64   `json:"at"`
	Escape    bool    `json:"escape"`
}

func (r *agentRecord) events(t *testing.T) []agentEvent {
	t.Helper()
	f, err := os.Open(r.path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []agentEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e agentEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %q: %v", r.path, sc.Text(), err)
		}
		events = append(events, e)
	}
	return events
}

// submitted returns the prompts the stand-in took, in order, and how many
// Escape keys it received.
func (r *agentRecord) submitted(t *testing.T) (prompts []string, escapes int) {
	t.Helper()
	for _, e := range r.events(t) {
		if e.Submitted != nil {
			prompts = append(prompts, *e.Submitted)
		}
		if e.Escape {
			escapes++
		}
	}
	return prompts, escapes
}

// done returns when the stand-in finished turn n (zero if it has not).
func (r *agentRecord) done(t *testing.T, n int) time.Time {
	t.Helper()
	for _, e := range r.events(t) {
		if e.Done == n {
			return time.Unix(0, e.At)
		}
	}
	return time.Time{}
}

// trialPrompt is the prompt of trial i: one line, or several with blank
// lines, leading spaces and characters a shell or tmux would read.
func trialPrompt(i int) string {
	switch i % 3 {
	case 0:
		return fmt.Sprintf("trial %d: fix the failing test", i)
	case 1:
		return fmt.Sprintf("trial %d: three lines\n  indented $HOME `x` #{pane_id} ; \"q\"\nlast line", i)
	}
	return fmt.Sprintf("trial %d:\n\nafter a blank line\n- a list\n- of items", i)
}

// TestSubmitPromptReachesEveryAgentInTwoHundredTrials: each stand-in
// takes keys as its agent does — keys within 100 ms of a paste joined to
// it (claude), an Enter within 120 ms of a burst of keys made a newline
// (codex), or a full-screen program on the alternate screen (bellapp) —
// and is sent 200 prompts, a third of one line, the rest of several: each
// is submitted once, exactly as sent, with no Escape. One tmcp steers the
// three at once, each from its own goroutine.
func TestSubmitPromptReachesEveryAgentInTwoHundredTrials(t *testing.T) {
	t.Parallel() // mostly waiting out gaps: it shares the machine well
	trials := 200
	if testing.Short() {
		trials = 20
	}
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	var wg sync.WaitGroup
	for _, agent := range []struct{ name, profile string }{
		{"claude", "claude"}, {"codex", "codex"}, {"bellapp", "generic"},
	} {
		pane, rec := agentPane(t, srv, agent.name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			var sent []string
			retried := 0
			for i := range trials {
				prompt := trialPrompt(i)
				out, err := submitPrompt(s, pane, prompt)
				sent = append(sent, prompt)
				if err != nil || !out.Verified || out.Profile != agent.profile || !out.PasteShown {
					t.Errorf("%s, trial %d: submit_prompt %+v, %v; want verified with profile %s; screen:\n%s", agent.name, i, out, err,
						agent.profile, strings.Join(bareCapture(srv, pane), "\n"))
					return
				}
				if out.Attempts > 1 {
					retried++
				}
			}
			took := time.Since(start)
			if !tmuxtest.WaitFor(settle, func() bool { return !rec.done(t, trials).IsZero() }) {
				t.Errorf("%s never finished turn %d", agent.name, trials)
				return
			}
			got, escapes := rec.submitted(t)
			t.Logf("%s: %d prompts in %v (%v each), %d needing more than one submit key", agent.name, trials,
				took.Round(time.Millisecond), (took / time.Duration(trials)).Round(time.Millisecond), retried)
			if escapes != 0 {
				t.Errorf("%s received %d Escape keys, want none", agent.name, escapes)
			}
			if len(got) != len(sent) {
				t.Errorf("%s took %d prompts, want %d", agent.name, len(got), len(sent))
				return
			}
			for i := range sent {
				if got[i] != sent[i] {
					t.Errorf("trial %d: %s took %q, want %q", i, agent.name, got[i], sent[i])
				}
			}
		}()
	}
	wg.Wait()
}

// submitPrompt calls submit_prompt from any goroutine: a failure is
// returned, not fatal.
func submitPrompt(s *session, pane, text string) (submitOut, error) {
	var out submitOut
	res, err := s.callErr("submit_prompt", map[string]any{"paneId": pane, "text": text})
	if err != nil {
		return out, err
	}
	if res.IsError {
		return out, fmt.Errorf("tool error: %s", allText(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	return out, json.Unmarshal(b, &out)
}

// TestSubmitPromptShowsWhyTheKeysOfAPasteAndEnterGoAstray is the failure
// submit_prompt exists for, reproduced: the text and Enter sent at once
// leave the prompt unsent in both stand-ins.
func TestSubmitPromptShowsWhyTheKeysOfAPasteAndEnterGoAstray(t *testing.T) {
	srv := tmuxtest.New(t)
	for _, name := range []string{"claude", "codex"} {
		pane, rec := agentPane(t, srv, name)
		srv.Must("set-buffer", "-b", "p", "first line\nsecond line")
		// One tmux command line: the Enter reaches the program right after the paste.
		srv.Must("paste-buffer", "-p", "-d", "-b", "p", "-t", pane, ";", "send-keys", "-t", pane, "Enter")
		waitScreen(t, srv, pane, "the paste shown", func(rows []string) bool {
			return strings.Contains(strings.Join(rows, "\n"), "second line") || strings.Contains(strings.Join(rows, "\n"), "[Pasted text #1 +2 lines]")
		})
		time.Sleep(300 * time.Millisecond) // what a submission would have recorded by now
		if got, _ := rec.submitted(t); len(got) != 0 {
			t.Errorf("%s: paste then Enter at once submitted %q; the stand-in should leave it unsent", name, got)
		}
	}
}

func TestSubmitPromptRefusesAShellAtItsPromptNamingRunCommand(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	msg := s.fail("submit_prompt", map[string]any{"paneId": mainPane(srv), "text": "ls"})
	if !strings.Contains(msg, "run_command") {
		t.Errorf("submit_prompt into a shell: %q, want it to name run_command", msg)
	}
}

// TestWaitForScreenEndsTheTurnOnlyOnceTheBusyLineIsGone: the stand-in
// shows its prompt sign throughout and, while it works, a busy line that
// stays still for longer than the wait's still time; the wait ends after
// the turn is done, never while the busy line shows. Without the busy
// markers, stillness alone ends it while the agent still works: the
// false positive the markers are for.
func TestWaitForScreenEndsTheTurnOnlyOnceTheBusyLineIsGone(t *testing.T) {
	t.Parallel() // mostly waiting out gaps: it shares the machine well
	trials := 20
	if testing.Short() {
		trials = 5
	}
	srv := tmuxtest.New(t)
	pane, rec := agentPane(t, srv, "claude", "-spin", "150ms", "-still", "700ms")
	s := startTMCP(t, srv, "")
	for i := 1; i <= trials; i++ {
		s.ok("submit_prompt", map[string]any{"paneId": pane, "text": fmt.Sprintf("turn %d", i)}, nil)
		var out screenOut
		text := paneText(t, "wait_for_screen", s.ok("wait_for_screen", map[string]any{"paneId": pane, "stillSeconds": 0.3, "timeoutSeconds": 10}, &out))
		ended := time.Now()
		done := rec.done(t, i)
		if out.Outcome != "idle" || out.Profile != "claude" || done.IsZero() || ended.Before(done) {
			t.Fatalf("turn %d: wait_for_screen %+v at %v, turn done at %v; screen:\n%s", i, out, ended, done, text)
		}
		if strings.Contains(text, "esc to interrupt") || !strings.Contains(text, fmt.Sprintf("answer %d: turn %d", i, i)) {
			t.Fatalf("turn %d: the final screen shows the busy line or lacks the answer:\n%s", i, text)
		}
	}
	// The same turn, with no busy markers: stillness ends it early.
	s.ok("submit_prompt", map[string]any{"paneId": pane, "text": "unmarked"}, nil)
	var out screenOut
	text := paneText(t, "wait_for_screen", s.ok("wait_for_screen", map[string]any{"paneId": pane, "busy": []string{}, "stillSeconds": 0.3, "timeoutSeconds": 10}, &out))
	if out.Outcome != "idle" || !strings.Contains(text, "esc to interrupt") {
		t.Errorf("without busy markers: %+v, screen:\n%s\nwant idle while the busy line still shows", out, text)
	}
}

// TestWaitForScreenEndsAtTheBellOfAFullScreenProgram: a program on the
// alternate screen that sets its title (an OSC ended by BEL) while it
// works and rings the bell when done: the wait ends at the bell, after
// the turn is done, not at a title.
func TestWaitForScreenEndsAtTheBellOfAFullScreenProgram(t *testing.T) {
	t.Parallel() // mostly waiting out gaps: it shares the machine well
	trials := 20
	if testing.Short() {
		trials = 5
	}
	srv := tmuxtest.New(t)
	pane, rec := agentPane(t, srv, "bellapp", "-spin", "300ms")
	s := startTMCP(t, srv, "")
	for i := 1; i <= trials; i++ {
		s.ok("submit_prompt", map[string]any{"paneId": pane, "text": fmt.Sprintf("job %d", i)}, nil)
		var out screenOut
		text := paneText(t, "wait_for_screen", s.ok("wait_for_screen", map[string]any{"paneId": pane, "stillSeconds": 5, "timeoutSeconds": 10}, &out))
		ended := time.Now()
		done := rec.done(t, i)
		if out.Outcome != "bell" || done.IsZero() || ended.Before(done) {
			t.Fatalf("job %d: wait_for_screen %+v at %v, done at %v; screen:\n%s", i, out, ended, done, text)
		}
	}
	if got := paneFormat(srv, pane, "#{alternate_on}"); got != "1" {
		t.Errorf("alternate_on is %q: the stand-in should be on the alternate screen", got)
	}
	// A pattern on the alternate screen's rows ends it too, at once.
	var out screenOut
	s.ok("wait_for_screen", map[string]any{"paneId": pane, "patterns": []string{fmt.Sprintf(`^answer \d+: job %d$`, trials)}, "timeoutSeconds": 5}, &out)
	if out.Outcome != "matched" {
		t.Errorf("a pattern on the screen: %+v, want matched", out)
	}
}

// TestAnOperatorsProfilesFilePicksTheProfileAndABadOneStopsTmcp: the file
// TMCP_AGENT_PROFILES names gives the codex stand-in a profile of its own,
// whose busy marker the wait then honours; a file with a misspelt field
// stops tmcp at start, naming the variable.
func TestAnOperatorsProfilesFilePicksTheProfileAndABadOneStopsTmcp(t *testing.T) {
	srv := tmuxtest.New(t)
	pane, rec := agentPane(t, srv, "codex", "-spin", "150ms", "-still", "700ms")
	file := filepath.Join(t.TempDir(), "profiles.json")
	if err := os.WriteFile(file, []byte(`{"profiles": [{"name": "mine", "programs": ["codex"], "busy": ["Working ("], "gapMs": 250}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startTMCPWithEnv(t, srv, "", []string{"TMCP_AGENT_PROFILES=" + file})
	var sub submitOut
	s.ok("submit_prompt", map[string]any{"paneId": pane, "text": "job 1"}, &sub)
	var out screenOut
	// Still for 0.3 s while "Working (" shows: the turn is not over.
	s.ok("wait_for_screen", map[string]any{"paneId": pane, "stillSeconds": 0.3, "timeoutSeconds": 10}, &out)
	ended, done := time.Now(), rec.done(t, 1)
	if sub.Profile != "mine" || out.Profile != "mine" || out.Outcome != "idle" || done.IsZero() || ended.Before(done) {
		t.Errorf("with the operator's file: submit_prompt %+v, wait_for_screen %+v ended at %v, the turn at %v; want profile mine, idle after the turn",
			sub, out, ended, done)
	}
	if err := os.WriteFile(file, []byte(`{"profiles": [{"name": "mine", "gap": 250}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	msg, err := runCLI(t, srv, []string{"TMCP_AGENT_PROFILES=" + file}, "-socket-path", srv.Socket)
	if err == nil || !strings.Contains(msg, "TMCP_AGENT_PROFILES") || !strings.Contains(msg, `unknown field "gap"`) {
		t.Errorf("a bad profiles file: %v: %q, want tmcp to stop naming TMCP_AGENT_PROFILES and the field", err, msg)
	}
}
