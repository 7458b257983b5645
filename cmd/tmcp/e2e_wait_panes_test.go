package main

// End-to-end tests of wait_for_text across panes (paneIds, mode): the real
// tmcp binary over stdio, two sh panes of one session, lines written to
// their terminals once the wait is underway.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// waitPanesOut is wait_for_text's reply, with what a wait across panes adds.
type waitPanesOut struct {
	waitTextOut
	PaneID string `json:"paneId"`
	Panes  []struct {
		PaneID  string `json:"paneId"`
		Outcome string `json:"outcome"`
		Matched string `json:"matched"`
		Pattern string `json:"pattern"`
		Cursor  string `json:"cursor"`
	} `json:"panes"`
}

// outcomes returns each pane's outcome, by pane.
func (r waitPanesOut) outcomes() map[string]string {
	m := map[string]string{}
	for _, p := range r.Panes {
		m[p.PaneID] = p.Outcome
	}
	return m
}

// TestWaitForTextAcrossPanes waits on two panes, writes lines to them (to
// the second pane first) once the wait is underway, and checks who
// decided, how each pane went, and what the reply's text holds.
func TestWaitForTextAcrossPanes(t *testing.T) {
	cases := []struct {
		name   string
		args   map[string]any // paneIds is filled in: the two panes
		window bool           // the second pane is named by its window id
		// session names the second pane by its session's name: the first
		// pane's too, which is waited on once
		session bool
		writes  []string // "a:line" or "b:line", in order
		// want: the outcome, the deciding pane ("a", "b" or ""), and each
		// pane's outcome
		outcome, decider string
		each             map[string]string
	}{
		{name: "any: the second pane matches first", args: map[string]any{"patterns": []string{"ready"}, "timeoutSeconds": 1e6},
			writes: []string{"b:ready two"}, outcome: "matched", decider: "b",
			each: map[string]string{"a": "waiting", "b": "matched"}},
		{name: "any: a window names its panes", args: map[string]any{"patterns": []string{"ready"}}, window: true,
			writes: []string{"b:ready two"}, outcome: "matched", decider: "b",
			each: map[string]string{"a": "waiting", "b": "matched"}},
		{name: "all: a session names its panes, each once", args: map[string]any{"patterns": []string{"ready"}, "mode": "all"}, session: true,
			writes: []string{"a:ready one", "b:ready two"}, outcome: "matched",
			each: map[string]string{"a": "matched", "b": "matched"}},
		{name: "all: both panes must match", args: map[string]any{"patterns": []string{"ready"}, "mode": "all"},
			writes: []string{"b:ready two", "a:ready one"}, outcome: "matched",
			each: map[string]string{"a": "matched", "b": "matched"}},
		{name: "all: a timeout names the pane that did not match", args: map[string]any{"patterns": []string{"ready"}, "mode": "all", "timeoutSeconds": 1.5},
			writes: []string{"b:ready two"}, outcome: "timeout", decider: "",
			each: map[string]string{"a": "timeout", "b": "matched"}},
		{name: "all: a stop pattern in one pane ends it", args: map[string]any{"patterns": []string{"ready"}, "stop": []string{"FATAL"}, "mode": "all"},
			writes: []string{"a:FATAL: no disk"}, outcome: "stopped", decider: "a",
			each: map[string]string{"a": "stopped", "b": "waiting"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newWaitFixture(t)
			panes := map[string]string{"a": f.pane, "b": newShellWindow(t, f.srv)}
			second := panes["b"]
			switch {
			case tc.window:
				second = paneFormat(f.srv, panes["b"], "#{window_id}")
			case tc.session:
				second = paneFormat(f.srv, panes["b"], "#{session_name}")
			}
			args := map[string]any{"paneIds": []string{panes["a"], second}}
			for k, v := range tc.args {
				args[k] = v
			}
			f.forget()
			ch := f.s.async("wait_for_text", args)
			f.underway(t, panes["a"])
			for _, w := range tc.writes {
				writeTTY(t, f.tty(panes[w[:1]]), w[2:]+"\r\n")
			}
			r, text := decodeText[waitPanesOut](t, "wait_for_text", awaitCall(t, "wait_for_text", ch).res)
			each := map[string]string{}
			for name, id := range panes {
				each[name] = r.outcomes()[id]
			}
			if r.Outcome != tc.outcome || fmt.Sprint(each) != fmt.Sprint(tc.each) || len(r.Panes) != 2 {
				t.Fatalf("outcome %s, panes %v (reason %q); want %s, each %v\n%s", r.Outcome, r.Panes, r.Reason, tc.outcome, tc.each, text)
			}
			if tc.decider != "" && r.PaneID != panes[tc.decider] || tc.decider == "" && tc.outcome != "matched" && r.PaneID != "" {
				t.Errorf("the reply names pane %q as deciding, want %q", r.PaneID, panes[tc.decider])
			}
			if long, _ := tc.args["timeoutSeconds"].(float64); long > 1000 && (!r.TimeoutClamped || r.EffectiveTimeoutSeconds >= long) {
				t.Errorf("timeoutSeconds %g: effective %g, clamped %v; want it clamped to the ceiling", long, r.EffectiveTimeoutSeconds, r.TimeoutClamped)
			}
			for _, p := range r.Panes {
				if p.Cursor == "" {
					t.Errorf("pane %s has no cursor", p.PaneID)
				}
				var wrote string
				for _, w := range tc.writes {
					if panes[w[:1]] == p.PaneID {
						wrote = w[2:]
					}
				}
				if (p.Outcome == "matched" || p.Outcome == "stopped") != (p.Matched == wrote && wrote != "") {
					t.Errorf("pane %s: outcome %s with matched %q; it was written %q", p.PaneID, p.Outcome, p.Matched, wrote)
				}
				// Each pane that got somewhere has its part in the text.
				if p.Outcome != "waiting" && !strings.Contains(text, "--- "+p.PaneID+": "+p.Outcome+" ---") {
					t.Errorf("the text has no part for pane %s (%s):\n%s", p.PaneID, p.Outcome, text)
				}
			}
			if tc.outcome == "timeout" && !strings.Contains(r.Reason, "no match yet in "+panes["a"]) {
				t.Errorf("a timeout waiting for all gave reason %q; want it to name pane %s", r.Reason, panes["a"])
			}
			if tc.outcome == "matched" && r.Cursor == "" {
				t.Errorf("a match left no cursor at the top of the reply")
			}
		})
	}
}

// TestWaitForTextAcrossPanesRefusesWhatItCannotDo: each refusal names
// what was wrong.
func TestWaitForTextAcrossPanesRefusesWhatItCannotDo(t *testing.T) {
	f := newWaitFixture(t)
	other := newShellWindow(t, f.srv)
	cursor := f.s.call("capture_since", map[string]any{"paneId": f.pane})
	var since sinceOut
	decodeStructured(t, "capture_since", cursor, &since)
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("%%%d", i+100)
	}
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"an unknown mode", map[string]any{"paneIds": []string{f.pane, other}, "mode": "both"}, `mode "both"`},
		{"an unknown mode on one pane", map[string]any{"paneId": f.pane, "mode": "every"}, `mode "every"`},
		{"a cursor beside paneIds", map[string]any{"paneIds": []string{f.pane, other}, "cursor": since.Cursor}, "a cursor resumes one pane"},
		{"a window that is not there", map[string]any{"paneIds": []string{f.pane, "@99"}}, "@99"},
		{"a session that is not there", map[string]any{"paneIds": []string{"no-such-session"}}, "no-such-session"},
		{"a pane id that is not one", map[string]any{"paneIds": []string{"%x"}}, `"%x" is not a pane id`},
		{"more panes than one wait takes", map[string]any{"paneIds": many}, "at most 100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := f.s.fail("wait_for_text", c.args)
			if !strings.Contains(msg, c.want) {
				t.Errorf("wait_for_text %v failed with %q, want it to say %q", c.args, msg, c.want)
			}
		})
	}
}

// TestTmuxSendsTmcpNothingOfAFloodInAPaneNobodyWatches floods a pane
// nobody watches while tmcp waits on another pane of its session, so that
// tmcp's client carries that session's output. tmux writes to its control
// clients itself (their output pipes are handed to the server), so the
// kernel's count of what the tmux server wrote is an upper bound on what
// tmcp received: over a second of flood, once the pane was muted, it must
// stay within what answering this test's own tmux commands takes, and the
// piece of output each re-arm lets through before its mute takes effect
// (tmcp continues a muted pane after 250 ms, then after twice as long each
// time it still writes: at most two re-arms in a second), against the
// megabytes the pane writes. (The count of %output lines is made where
// tmcp reads them, in internal/tmux's
// TestAnUnwatchedFloodingPaneSendsNothingOnceMuted.)
func TestTmuxSendsTmcpNothingOfAFloodInAPaneNobodyWatches(t *testing.T) {
	// quiet bounds the bytes the server writes in that second: replies to
	// the test's own commands, a few hundred bytes, and two re-arms' pieces,
	// each at most eight of tmux's 8 KiB refills of a control client; the flood is
	// megabytes.
	const quiet = 4096 + 2*(64<<10)
	f := newWaitFixture(t)
	flooding := newShellWindow(t, f.srv)
	f.forget()
	ch := f.s.async("wait_for_text", map[string]any{"paneId": f.pane, "patterns": []string{"never printed"}, "timeoutSeconds": 4})
	f.underway(t, f.pane)
	io := func(field string) int {
		t.Helper()
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", f.srv.PID()))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, field+": "); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		t.Fatalf("no %s in /proc/%d/io:\n%s", field, f.srv.PID(), b)
		return 0
	}
	written := func() int { return io("wchar") }
	f.srv.Must("send-keys", "-t", flooding, "yes flood-line-of-some-length", "Enter")
	if !tmuxtest.WaitFor(settle, func() bool { // the history fills: it floods
		n, _ := strconv.Atoi(paneFormat(f.srv, flooding, "#{history_size}"))
		return n >= 1000
	}) {
		t.Fatalf("pane %s never flooded its history", flooding)
	}
	f.srv.Must("clear-history", "-t", flooding)
	before, readBefore := written(), io("rchar")
	// The point of the sleep: an absence, over a second of flood.
	time.Sleep(time.Second)
	after, read := written(), io("rchar")-readBefore
	if read < 20*quiet {
		t.Fatalf("the tmux server read %d bytes in the second: too little flood for the test to prove anything", read)
	}
	if history := paneFormat(f.srv, flooding, "#{history_size}"); history == "0" {
		t.Fatalf("the pane stopped writing: the test proves nothing")
	}
	if after-before > quiet {
		t.Errorf("the tmux server wrote %d bytes during a second of flood in a pane nobody watches, want at most %d", after-before, quiet)
	}
	t.Logf("the tmux server wrote %d bytes during a second of flood, and read %d", after-before, read)
	if r, _ := decodeText[waitTextOut](t, "wait_for_text", awaitCall(t, "wait_for_text", ch).res); r.Outcome != "timeout" {
		t.Errorf("the wait on %s: outcome %s, want timeout", f.pane, r.Outcome)
	}
}

// Pairs of panes tmcp has never watched, in a session whose output it
// carries (it waited on another pane there), each pair waited on once
// across both panes: a line written to the second pane 0 to 2 ms after
// the request was sent is output, as it is for a wait on that pane alone
// (see e2e_blind_test.go).
func TestWaitForTextAcrossPanesNeverMissesALineWrittenJustAfterTheCall(t *testing.T) {
	if tmuxtest.RaceEnabled {
		// scripts/test.sh runs this test again without the race detector.
		t.Skip("timing-sensitive: runs in the build without the race detector")
	}
	const pairs = 21
	srv := tmuxtest.New(t)
	var panes []string
	for range 2 * pairs {
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
	misses := 0
	for i := range pairs {
		first, second := panes[2*i], panes[2*i+1]
		delay := time.Duration(i%21) * 100 * time.Microsecond
		token := fmt.Sprintf("FRESH-%02d", i)
		tty := openTTY(t, srv, second)
		select {
		case <-sent:
		default:
		}
		ch := s.async("wait_for_text", map[string]any{"paneIds": []string{first, second}, "patterns": []string{token}, "timeoutSeconds": 2})
		select {
		case <-sent:
		case <-time.After(callTimeout):
			t.Fatalf("the wait_for_text request was never written")
		}
		// The delay after the request was written is the point.
		time.Sleep(delay)
		writeTTY(t, tty, token+"\r\n")
		r, text := decodeText[waitPanesOut](t, "wait_for_text", awaitCall(t, "wait_for_text", ch).res)
		if r.Outcome != "matched" || r.PaneID != second || !strings.Contains(r.Matched, token) {
			misses++
			t.Errorf("a line written %v after the call to pane %s, never watched, waited on with %s: outcome %s in %q matched %q; text %q",
				delay, second, first, r.Outcome, r.PaneID, r.Matched, lastLines(text, 3))
		}
	}
	t.Logf("%d pairs of panes never watched, lines 0 to 2 ms after the call: %d missed", pairs, misses)
}
