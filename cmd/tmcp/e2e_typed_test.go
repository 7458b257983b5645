package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// farSession makes a session named far with a sh pane, once tmcp's
// command client is attached to the server's first session, so that no
// client of tmcp's carries far's output; it returns the pane.
func farSession(t *testing.T, srv *tmuxtest.Server, s *session) string {
	t.Helper()
	s.call("list_sessions", map[string]any{}) // the command client attaches to main
	pane := tmuxOne(srv, "new-session", "-d", "-s", "far", "-P", "-F", "#{pane_id}", "sh")
	waitPrompt(t, srv, pane)
	if clients := tmuxOne(srv, "list-clients", "-F", "#{client_session}"); strings.Contains(clients, "far") {
		t.Fatalf("a client already carries session far: %q", clients)
	}
	return pane
}

// typeInto sends a line to a pane with send_keys: the shell echoes it
// and draws its prompt again, as after any command an agent types.
func typeInto(t *testing.T, s *session, pane, line string) {
	t.Helper()
	if res, err := s.callErr("send_keys", map[string]any{"paneId": pane, "keys": line}); err != nil || res.IsError {
		t.Fatalf("send_keys into %s: %v %s", pane, err, allText(res))
	}
}

// TestSendKeysThenWaitNeverMissesALineOnPanesTmcpNeverWatched: on each of
// many panes of a session no client of tmcp's carries, and never waited
// on, send_keys types a line, then a wait begins and the pane writes a line
// 0 to 2 ms after the wait's request was sent: the line is output. Keys
// typed into a pane of a carried session get it muted at the echo, so
// without its stream taken before the keys a wait begins blind there.
func TestSendKeysThenWaitNeverMissesALineOnPanesTmcpNeverWatched(t *testing.T) {
	if tmuxtest.RaceEnabled {
		// scripts/test.sh runs this test again without the race detector.
		t.Skip("timing-sensitive: runs in the build without the race detector")
	}
	const fresh = 42
	srv := tmuxtest.New(t)
	sent := make(chan time.Time, 1)
	s := startTMCPWith(t, srv, nil, func(tr mcp.Transport) mcp.Transport { return sentTransport{tr, sent} })
	panes := []string{farSession(t, srv, s)}
	for range fresh - 1 {
		panes = append(panes, tmuxOne(srv, "new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "=far:", "sh"))
	}
	for _, p := range panes {
		waitPrompt(t, srv, p)
	}
	misses := 0
	for i, pane := range panes {
		delay := time.Duration(i%21) * 100 * time.Microsecond
		token := fmt.Sprintf("FRESH-%02d", i)
		tty := openTTY(t, srv, pane)
		typeInto(t, s, pane, fmt.Sprintf(": typed %02d", i))
		select {
		case <-sent:
		default:
		}
		ch := s.async("wait_for_text", map[string]any{"paneId": pane, "patterns": []string{token}, "timeoutSeconds": 2})
		select {
		case <-sent:
		case <-time.After(callTimeout):
			t.Fatalf("the wait_for_text request was never written")
		}
		// The delay after the request was written is the point.
		time.Sleep(delay)
		writeTTY(t, tty, token+"\r\n")
		r, text := decodeText[waitTextOut](t, "wait_for_text", awaitCall(t, "wait_for_text", ch).res)
		if r.Outcome != "matched" || !strings.Contains(r.Matched, token) {
			misses++
			t.Errorf("a line written %v after the call on pane %s, typed into just before: outcome %s matched %q alreadyOnScreen %v reason %q; text %q",
				delay, pane, r.Outcome, r.Matched, r.AlreadyOnScreen, r.Reason, lastLines(text, 3))
		}
	}
	t.Logf("%d panes never watched, typed into, lines 0 to 2 ms after the wait's call: %d missed", fresh, misses)
}

// TestSendKeysThenWaitNeverMissesALineInTenThousandTrials: ten thousand
// waits on a pane of a session no client of tmcp's carried when they
// began, every other one (the first among them) right after send_keys
// typed into the pane, each
// for a line written 0 to 2 ms after the wait's request was sent (in
// steps of 0.1 ms). Every line is matched; and every oldEvery trials the
// pane first writes a line well before the call, which the wait is also
// given and must not take for new.
func TestSendKeysThenWaitNeverMissesALineInTenThousandTrials(t *testing.T) {
	if tmuxtest.RaceEnabled {
		// scripts/test.sh runs this test again without the race detector.
		t.Skip("timing-sensitive: runs in the build without the race detector")
	}
	trials := 10000
	if testing.Short() {
		trials = 500
	}
	const oldEvery = 50
	srv := tmuxtest.New(t)
	sent := make(chan time.Time, 1)
	s := startTMCPWith(t, srv, nil, func(tr mcp.Transport) mcp.Transport { return sentTransport{tr, sent} })
	pane := farSession(t, srv, s)
	tty := openTTY(t, srv, pane)
	start := time.Now()
	var missed, oldTaken [2]int // without send_keys, after it
	for i := range trials {
		typed := i%2 == 0
		k := 1 - i%2
		delay := time.Duration(i/2%21) * 100 * time.Microsecond
		token := fmt.Sprintf("T%05d", i)
		if typed {
			typeInto(t, s, pane, fmt.Sprintf(": k%05d", i))
		}
		patterns := []string{token}
		if i%oldEvery == oldEvery-1 {
			old := fmt.Sprintf("OLD%05d", i)
			writeTTY(t, tty, old+"\r\n")
			// Well before the call: past the arrival slack, as for any
			// line a model could have read before it asked.
			time.Sleep(50 * time.Millisecond)
			patterns = append(patterns, old)
		}
		select {
		case <-sent:
		default:
		}
		ch := s.async("wait_for_text", map[string]any{"paneId": pane, "patterns": patterns, "timeoutSeconds": 2})
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
			missed[k]++
			if strings.HasPrefix(r.Matched, "OLD") {
				oldTaken[k]++
			}
			if missed[0]+missed[1] <= 5 {
				t.Errorf("trial %d (send_keys first: %v): a line written %v after the call: outcome %s, matched %q, alreadyOnScreen %v, reason %q",
					i, typed, delay, r.Outcome, r.Matched, r.AlreadyOnScreen, r.Reason)
			}
		}
	}
	t.Logf("%d trials on a pane of a session not carried at first, lines 0 to 2 ms after the call, in %v: without send_keys %d of %d missed (%d an old line taken for new), after it %d of %d (%d)",
		trials, time.Since(start).Round(time.Millisecond), missed[0], trials/2, oldTaken[0], missed[1], trials-trials/2, oldTaken[1])
	if n := missed[0] + missed[1]; n > 0 {
		t.Errorf("%d of %d lines missed, want none", n, trials)
	}
}
