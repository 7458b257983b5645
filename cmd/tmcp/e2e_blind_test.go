package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// Panes tmcp has never watched, in a session whose output it carries (it
// waited on another pane there), each waited on once: a line written 0 to
// 2 ms after the request was sent is output, however soon it lands on the
// screen; a line written well before it is not.
func TestWaitForTextNeverMissesALineWrittenJustAfterTheCallOnAPaneNeverWatched(t *testing.T) {
	if tmuxtest.RaceEnabled {
		// scripts/test.sh runs this test again without the race detector.
		t.Skip("timing-sensitive: runs in the build without the race detector")
	}
	// Not in parallel: it times events to the millisecond, and the other
	// such tests would load the machine for it (scripts/test.sh).
	const fresh, old = 42, 6 // panes for lines after the call, and before it
	srv := tmuxtest.New(t)
	var panes []string
	for range fresh + old {
		panes = append(panes, newWindow(srv, "sh"))
	}
	for _, p := range panes {
		waitPrompt(t, srv, p)
	}
	sent := make(chan time.Time, 1)
	s := startTMCPWith(t, srv, nil, func(tr mcp.Transport) mcp.Transport { return sentTransport{tr, sent} })
	// A wait on the session's first pane makes tmcp carry its output.
	s.waitText(map[string]any{"paneId": mainPane(srv), "patterns": []string{"never printed"}, "timeoutSeconds": 0.5})
	waitStreamClient(t, srv, panes[0])

	call := func(pane, token string, timeout float64) <-chan callResult {
		t.Helper()
		select {
		case <-sent:
		default:
		}
		ch := s.async("wait_for_text", map[string]any{"paneId": pane, "patterns": []string{token}, "timeoutSeconds": timeout})
		select {
		case <-sent:
		case <-time.After(callTimeout):
			t.Fatalf("the wait_for_text request was never written")
		}
		return ch
	}
	misses := 0
	for i, pane := range panes[:fresh] {
		delay := time.Duration(i%21) * 100 * time.Microsecond
		token := fmt.Sprintf("FRESH-%02d", i)
		tty := openTTY(t, srv, pane)
		ch := call(pane, token, 2)
		// The delay after the request was written is the point.
		time.Sleep(delay)
		writeTTY(t, tty, token+"\r\n")
		r, text := decodeText[waitTextOut](t, "wait_for_text", awaitCall(t, "wait_for_text", ch).res)
		if r.Outcome != "matched" || !strings.Contains(r.Matched, token) {
			misses++
			t.Errorf("a line written %v after the call on pane %s, never watched: outcome %s matched %q alreadyOnScreen %v; text %q",
				delay, pane, r.Outcome, r.Matched, r.AlreadyOnScreen, lastLines(text, 3))
		}
	}
	t.Logf("%d panes never watched, lines 0 to 2 ms after the call: %d missed", fresh, misses)
	for i, pane := range panes[fresh:] {
		token := fmt.Sprintf("OLD-%02d", i)
		writeTTY(t, openTTY(t, srv, pane), token+"\r\n")
		// Well before the call, past the arrival slack.
		time.Sleep(50 * time.Millisecond)
		r, _ := decodeText[waitTextOut](t, "wait_for_text", awaitCall(t, "wait_for_text", call(pane, token, 0.3)).res)
		if r.Outcome != "timeout" || !r.AlreadyOnScreen {
			t.Errorf("a line written 50ms before the call on pane %s, never watched: outcome %s matched %q alreadyOnScreen %v, want a timeout with the line already on screen",
				pane, r.Outcome, r.Matched, r.AlreadyOnScreen)
		}
	}
}

// TestWaitForTextNeverMissesALineInTenThousandTrials: ten thousand waits
// on a pane tmcp watches, each for a line written 0 to 2 ms after its
// request was sent (in steps of 0.1 ms): every line is matched.
func TestWaitForTextNeverMissesALineInTenThousandTrials(t *testing.T) {
	if tmuxtest.RaceEnabled {
		// scripts/test.sh runs this test again without the race detector.
		t.Skip("timing-sensitive: runs in the build without the race detector")
	}
	trials := 10000
	if testing.Short() {
		trials = 500
	}
	f := newWaitFixture(t)
	pane, s, sent := f.pane, f.s, f.sent
	tty := f.tty(pane)
	// The first wait makes tmcp watch the pane.
	s.waitText(map[string]any{"paneId": pane, "patterns": []string{"never printed"}, "timeoutSeconds": 0.2})
	start := time.Now()
	misses := 0
	for i := range trials {
		delay := time.Duration(i%21) * 100 * time.Microsecond
		token := fmt.Sprintf("T%05d", i)
		f.forget()
		ch := s.async("wait_for_text", map[string]any{"paneId": pane, "patterns": []string{token}, "timeoutSeconds": 2})
		select {
		case <-sent:
		case <-time.After(callTimeout):
			t.Fatalf("trial %d: the wait_for_text request was never written", i)
		}
		if delay > 0 {
			time.Sleep(delay)
		}
		writeTTY(t, tty, token+"\r\n")
		r, _ := decodeText[waitTextOut](t, "wait_for_text", awaitCall(t, "wait_for_text", ch).res)
		if r.Outcome != "matched" || !strings.Contains(r.Matched, token) {
			misses++
			if misses <= 5 {
				t.Errorf("trial %d: a line written %v after the call: outcome %s, matched %q, alreadyOnScreen %v", i, delay, r.Outcome, r.Matched, r.AlreadyOnScreen)
			}
		}
	}
	t.Logf("%d trials, lines 0 to 2 ms after the call, in %v: %d missed", trials, time.Since(start).Round(time.Millisecond), misses)
	if misses > 0 {
		t.Errorf("%d of %d lines missed, want none", misses, trials)
	}
}
