package wait

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// tty returns a writer to a pane's terminal: what the test writes there
// is output of the pane, at a moment the test controls.
func (f *fixture) tty(id string) *os.File {
	f.t.Helper()
	path := strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", id, "#{pane_tty}"))
	tty, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		f.t.Fatalf("opening %s: %v", path, err)
	}
	f.t.Cleanup(func() { tty.Close() })
	return tty
}

// withDefaults fills in what the tests leave out of a wait request.
func withDefaults(req TextRequest) TextRequest {
	if req.PaneID == "" {
		req.PaneID = "%0"
	}
	if req.Timeout.Duration == 0 {
		req.Timeout.Duration = 5 * time.Second
	}
	req.MaxLines, req.MaxBytes = 100, 1<<16
	return req
}

func (f *fixture) waitText(req TextRequest) TextResult {
	f.t.Helper()
	r, err := f.s.WaitForText(context.Background(), withDefaults(req))
	if err != nil {
		f.t.Fatalf("WaitForText: %v", err)
	}
	return r
}

// waitAsync starts a wait and returns its result channel.
func (f *fixture) waitAsync(req TextRequest) <-chan TextResult {
	ch := make(chan TextResult, 1)
	go func() {
		r, err := f.s.WaitForText(context.Background(), withDefaults(req))
		if err != nil {
			r.Outcome, r.Reason = "error", err.Error()
		}
		ch <- r
	}()
	return ch
}

// begin starts a wait and returns its result channel once the wait has
// taken its start and waits for output: what the pane does from then on
// is what the wait is for.
func (f *fixture) begin(req TextRequest) <-chan TextResult {
	f.t.Helper()
	select {
	case <-f.waiting: // a wait begun earlier
	default:
	}
	ch := f.waitAsync(req)
	select {
	case <-f.waiting:
	case r := <-ch:
		f.t.Fatalf("the wait on %s ended before it waited: outcome %s reason %q", withDefaults(req).PaneID, r.Outcome, r.Reason)
	case <-time.After(10 * time.Second):
		f.t.Fatalf("the wait on %s never began to wait", withDefaults(req).PaneID)
	}
	return ch
}

func TestWaitForTextNeverMissesALineWrittenJustAfterTheCall(t *testing.T) {
	if tmuxtest.RaceEnabled {
		// scripts/test.sh runs this test again without the race detector.
		t.Skip("timing-sensitive: runs in the build without the race detector")
	}
	f := newFixture(t)
	tty := f.tty("%0")
	trials := 100
	if testing.Short() {
		trials = 10
	}
	for _, delay := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond} {
		misses := 0
		for i := 0; i < trials; i++ {
			token := fmt.Sprintf("LINE-%v-%d", delay, i)
			ch := f.waitAsync(TextRequest{Patterns: []string{token}})
			time.Sleep(delay) // the point: the line comes this long after the call
			fmt.Fprintf(tty, "%s\r\n", token)
			if r := <-ch; r.Outcome != OutcomeMatched || !strings.Contains(r.Matched, token) {
				misses++
				t.Logf("delay %v trial %d: outcome %s matched %q reason %q", delay, i, r.Outcome, r.Matched, r.Reason)
			}
		}
		if misses > 0 {
			t.Errorf("delay %v: %d of %d lines missed", delay, misses, trials)
		}
	}
}

func TestWaitForTextMatchesDecodedLines(t *testing.T) {
	f := newFixture(t)
	tty := f.tty("%0")
	tests := []struct {
		name    string
		write   string
		pattern string
		regex   bool
		want    string
	}{
		{"anchored with CRLF", "READY\r\n", "^READY$", true, "READY"},
		{"coloured words", "\x1b[32mREADY\x1b[0m to \x1b[1mgo\x1b[0m\r\n", "READY to go", false, "READY to go"},
		{"prompt without newline", "Password: ", "Password:", false, "Password: "},
		{"progress bar", "10%\r50%\r100% done\r\n", "^100% done$", true, "100% done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := f.begin(TextRequest{Patterns: []string{tt.pattern}, Regex: tt.regex})
			fmt.Fprint(tty, tt.write)
			r := <-ch
			if r.Outcome != OutcomeMatched || r.Matched != tt.want {
				t.Fatalf("outcome %s matched %q, want %q (lines %q)", r.Outcome, r.Matched, tt.want, r.Lines)
			}
			for _, l := range r.Lines {
				if strings.ContainsRune(l, 0x1b) {
					t.Fatalf("returned line %q carries an escape sequence", l)
				}
			}
			fmt.Fprint(tty, "\r\n")
		})
	}
}

// TestWaitForTextFindsALineThatScrolledAwayBeforeItsStreamWasAttached:
// the screen is read as the call arrives; the pane then writes the line
// and enough lines after it to push it into the history before the wait
// attaches its stream (as when tmcp is slow to carry a busy session),
// within the rows the bracketing reads hold or far past them. The wait
// still finds it; a line written before the arrival read is still old.
func TestWaitForTextFindsALineThatScrolledAwayBeforeItsStreamWasAttached(t *testing.T) {
	for _, filler := range []int{60, 3 * rowsBack} {
		t.Run(fmt.Sprintf("%d lines after it", filler), func(t *testing.T) {
			f := newFixture(t)
			tty := f.tty("%0")
			fmt.Fprint(tty, "OLD-LINE\r\n")
			tmuxtest.WaitFor(2*time.Second, func() bool { return strings.Contains(f.srv.Must("capture-pane", "-p"), "OLD-LINE") })
			arrived := f.s.ArrivalScreen(context.Background(), "%0")
			if arrived == nil {
				t.Fatal("no screen read at arrival")
			}
			fmt.Fprint(tty, "NEW-LINE\r\n")
			for i := range filler {
				fmt.Fprintf(tty, "filler %d\r\n", i)
			}
			last := fmt.Sprintf("filler %d", filler-1)
			if !tmuxtest.WaitFor(2*time.Second, func() bool {
				screen := f.srv.Must("capture-pane", "-p")
				return strings.Contains(screen, last) && !strings.Contains(screen, "NEW-LINE")
			}) {
				t.Fatal("the line never scrolled off the screen: the test proves nothing")
			}
			// The old line, were it taken for new, would match first.
			ctx := WithArrival(context.Background(), Arrival{Screens: map[string][]string{"%0": arrived}})
			r, err := f.s.WaitForText(ctx, withDefaults(TextRequest{Patterns: []string{"OLD-LINE", "NEW-LINE"}, Timeout: Timeout{Duration: 300 * time.Millisecond}}))
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != OutcomeMatched || r.Matched != "NEW-LINE" {
				t.Errorf("outcome %s matched %q, want NEW-LINE matched", r.Outcome, r.Matched)
			}
		})
	}
}

func TestWaitForTextIgnoresTextAlreadyOnScreen(t *testing.T) {
	f := newFixture(t)
	fmt.Fprint(f.tty("%0"), "OLDTEXT\r\n")
	tmuxtest.WaitFor(2*time.Second, func() bool { return strings.Contains(f.srv.Must("capture-pane", "-p"), "OLDTEXT") })
	r := f.waitText(TextRequest{Patterns: []string{"OLDTEXT"}, Timeout: Timeout{Duration: 300 * time.Millisecond}})
	if r.Outcome != OutcomeTimeout || !r.AlreadyOnScreen || len(r.Screen) == 0 {
		t.Fatalf("outcome %s alreadyOnScreen %v screen %d rows, want timeout, true, the screen", r.Outcome, r.AlreadyOnScreen, len(r.Screen))
	}
}

func TestWaitForTextSkipsTheEchoOfTypedKeys(t *testing.T) {
	f := newFixture(t)
	ch := f.begin(TextRequest{Patterns: []string{"MARK"}})
	keys := "sleep 1; echo MARK"
	if err := f.hub.Keys(context.Background(), "%0", keys, "Enter"); err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.Outcome != OutcomeMatched || r.Matched != "MARK" || r.Elapsed < 800*time.Millisecond {
		t.Fatalf("outcome %s matched %q after %v, want MARK after about a second", r.Outcome, r.Matched, r.Elapsed)
	}
}

func TestWaitForTextStopWinsInTheSameChunk(t *testing.T) {
	f := newFixture(t)
	tty := f.tty("%0")
	ch := f.begin(TextRequest{Patterns: []string{"OK"}, Stop: []string{"FAIL"}})
	fmt.Fprint(tty, "OK so far\r\nFAIL: broken\r\n")
	if r := <-ch; r.Outcome != OutcomeStopped || r.Matched != "FAIL: broken" || r.Pattern != "FAIL" {
		t.Fatalf("outcome %s matched %q pattern %q, want stopped on FAIL", r.Outcome, r.Matched, r.Pattern)
	}
}

func TestWaitForTextWithPatternsEndsOnQuietToo(t *testing.T) {
	f := newFixture(t)
	tty := f.tty("%0")
	ch := f.waitAsync(TextRequest{Patterns: []string{"NEVER-PRINTED"}, Idle: 300 * time.Millisecond})
	fmt.Fprint(tty, "some output\r\n")
	r := <-ch
	if r.Outcome != OutcomeIdle || r.Matched != "" {
		t.Fatalf("outcome %s matched %q, want idle: the pattern never came and the pane went quiet", r.Outcome, r.Matched)
	}
}

func TestWaitForTextIdleAndAnyOutput(t *testing.T) {
	f := newFixture(t)
	tty := f.tty("%0")
	ch := f.waitAsync(TextRequest{Idle: 300 * time.Millisecond})
	for i := 0; i < 5; i++ {
		fmt.Fprintf(tty, "tick %d\r\n", i)
		// The point: output 100 ms apart, under the 300 ms of quiet
		// that would end the wait.
		time.Sleep(100 * time.Millisecond)
	}
	r := <-ch
	if r.Outcome != OutcomeIdle || r.Elapsed < 700*time.Millisecond || !strings.Contains(strings.Join(r.Lines, ","), "tick 4") {
		t.Fatalf("outcome %s after %v lines %q, want idle after the last tick", r.Outcome, r.Elapsed, r.Lines)
	}
	ch = f.begin(TextRequest{})
	fmt.Fprint(tty, "anything\r\n")
	if r := <-ch; r.Outcome != OutcomeOutput || r.Matched != "anything" {
		t.Fatalf("outcome %s matched %q, want output", r.Outcome, r.Matched)
	}
}

func TestWaitForTextReportsTheAlternateScreen(t *testing.T) {
	f := newFixture(t)
	tty := f.tty("%0")
	ch := f.begin(TextRequest{Patterns: []string{"PAINT"}, Timeout: Timeout{Duration: 500 * time.Millisecond}})
	fmt.Fprint(tty, "\x1b[?1049hPAINT\r\n")
	r := <-ch
	fmt.Fprint(tty, "\x1b[?1049l")
	if r.Outcome != OutcomeTimeout || !r.AlternateScreen {
		t.Fatalf("outcome %s alternateScreen %v, want a timeout on the alternate screen", r.Outcome, r.AlternateScreen)
	}
}

func TestWaitForTextEndsWhenThePaneDies(t *testing.T) {
	f := newFixture(t)
	f.srv.Must("split-window", "-t", "%0", "sh")
	ch := f.begin(TextRequest{PaneID: "%1", Patterns: []string{"never"}, Timeout: Timeout{Duration: 10 * time.Second}})
	start := time.Now()
	f.srv.Must("kill-pane", "-t", "%1")
	if r := <-ch; r.Outcome != OutcomePaneDied || time.Since(start) > 2*time.Second {
		t.Fatalf("outcome %s after %v, want pane_died at once", r.Outcome, time.Since(start))
	}
}

// A wait whose stream tmcp closes as it shuts down ends cancelled, not
// with the death of a pane that lives on.
func TestWaitForTextEndsCancelledWhenTmcpShutsDown(t *testing.T) {
	f := newFixture(t)
	ch := f.begin(TextRequest{Patterns: []string{"never"}, Timeout: Timeout{Duration: 10 * time.Second}})
	start := time.Now()
	f.hub.Close()
	r := <-ch
	if r.Outcome != OutcomeCancelled || !strings.Contains(r.Reason, "shutting down") || time.Since(start) > 2*time.Second {
		t.Fatalf("outcome %s (reason %q) after %v, want cancelled at once, saying tmcp shuts down", r.Outcome, r.Reason, time.Since(start))
	}
}

func TestWaitForTextResumesFromACursor(t *testing.T) {
	f := newFixture(t)
	tty := f.tty("%0")
	ch := f.begin(TextRequest{Patterns: []string{"FIRST"}})
	fmt.Fprint(tty, "FIRST\r\nSECOND\r\n")
	r := <-ch
	if r.Outcome != OutcomeMatched {
		t.Fatalf("first wait: %s", r.Outcome)
	}
	r2 := f.waitText(TextRequest{Patterns: []string{"SECOND"}, Cursor: r.Cursor, Timeout: Timeout{Duration: 500 * time.Millisecond}})
	if r2.Outcome != OutcomeMatched || r2.Matched != "SECOND" {
		t.Fatalf("resumed wait: outcome %s matched %q, want SECOND from the cursor", r2.Outcome, r2.Matched)
	}
}

func TestWaitForTextBegunOnTheAlternateScreenMatchesOnceTheProgramLeavesIt(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		t.Run(fmt.Sprintf("streamed %v", streamed), func(t *testing.T) {
			f := newFixture(t)
			tty := f.tty("%0")
			if streamed {
				_, release, err := f.hub.Acquire(context.Background(), "%0", time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				defer release()
			}
			fmt.Fprint(tty, "\x1b[?1049hFULL SCREEN\r\n")
			if !tmuxtest.WaitFor(2*time.Second, func() bool {
				return strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", "%0", "#{alternate_on}")) == "1"
			}) {
				t.Fatal("the pane never showed the alternate screen")
			}
			ch := f.begin(TextRequest{Patterns: []string{"AFTER"}, Timeout: Timeout{Duration: 3 * time.Second}})
			fmt.Fprint(tty, "\x1b[?1049lAFTER\r\n")
			if r := <-ch; r.Outcome != OutcomeMatched || r.Matched != "AFTER" || r.AlternateScreen {
				t.Fatalf("outcome %s matched %q alternateScreen %v (reason %q), want AFTER matched on the main screen", r.Outcome, r.Matched, r.AlternateScreen, r.Reason)
			}
		})
	}
}

func TestWaitForTextTakesNoRepaintOfAFullScreenProgramForOutput(t *testing.T) {
	f := newFixture(t)
	fmt.Fprint(f.tty("%0"), "\x1b[?1049hPAINT\r\n")
	if !tmuxtest.WaitFor(2*time.Second, func() bool { return strings.Contains(f.srv.Must("capture-pane", "-p"), "PAINT") }) {
		t.Fatal("the pane never showed PAINT")
	}
	// The screen read as the request arrived was blank: PAINT was drawn
	// after it, by a program that repaints, before the stream was attached.
	ctx := WithArrival(context.Background(), Arrival{Screens: map[string][]string{"%0": {}}})
	r, err := f.s.WaitForText(ctx, withDefaults(TextRequest{Patterns: []string{"PAINT"}, Timeout: Timeout{Duration: 300 * time.Millisecond}}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != OutcomeTimeout || !r.AlternateScreen {
		t.Fatalf("outcome %s matched %q alternateScreen %v, want a timeout reporting the alternate screen", r.Outcome, r.Matched, r.AlternateScreen)
	}
}

func TestWaitForTextReturnsInTimeWhenTmuxStalls(t *testing.T) {
	f := newFixture(t)
	// 2.5 s lets the liveness check (every second) start on the stalled
	// tmux before the timeout; 1 s times out while it would still begin.
	for _, timeout := range []time.Duration{time.Second, 2500 * time.Millisecond} {
		t.Run(timeout.String(), func(t *testing.T) {
			ch := f.begin(TextRequest{Patterns: []string{"never printed"}, Timeout: Timeout{Duration: timeout}})
			f.srv.Stop()
			defer f.srv.Continue()
			r := <-ch
			if r.Outcome != OutcomeTimeout || r.Elapsed > timeout+600*time.Millisecond {
				t.Fatalf("a %v wait on a stalled tmux: outcome %s after %v, want a timeout within %v", timeout, r.Outcome, r.Elapsed, timeout+600*time.Millisecond)
			}
		})
	}
}

// TestWaitForTextJoinedInsideAMarkReadsNoneOfItAsText begins waits where
// the pane's stream stands inside a shell's mark, as a wait that arrives
// between two of tmux's chunks of output can: the rest of the mark is not
// part of the line the wait matches.
func TestWaitForTextJoinedInsideAMarkReadsNoneOfItAsText(t *testing.T) {
	f := newFixture(t)
	tty := f.tty("%0")
	warm := f.begin(TextRequest{Patterns: []string{"WARM"}}) // the stream is kept a while after
	fmt.Fprint(tty, "WARM\r\n")
	if r := <-warm; r.Outcome != OutcomeMatched {
		t.Fatalf("warming the stream: outcome %s", r.Outcome)
	}
	stream := f.hub.Stream("%0")
	if stream == nil {
		t.Fatal("the pane has no stream after a wait")
	}
	for i, how := range []string{"from the stream's end", "from a cursor"} {
		head := fmt.Sprintf("\x1b]133;C;tmcp-%d1", i)
		end := stream.End() + int64(len(head))
		fmt.Fprint(tty, head)
		if !tmuxtest.WaitFor(2*time.Second, func() bool { return stream.End() >= end }) {
			t.Fatalf("%s: the stream never reached %d (at %d)", how, end, stream.End())
		}
		req := TextRequest{Patterns: []string{"ready-ok"}}
		if how == "from a cursor" {
			req.Cursor = stream.CursorAt(end).String()
		}
		ch := f.begin(req)
		fmt.Fprint(tty, "23abcd\aready-ok\r\n")
		if r := <-ch; r.Outcome != OutcomeMatched || r.Matched != "ready-ok" {
			t.Errorf("%s: outcome %s matched %q, want the line ready-ok alone", how, r.Outcome, r.Matched)
		}
	}
}

// TestACursorFromAMatchInAPanesFirstOutputResumesRightAfterIt: a pane
// nobody watched, in a session whose output tmcp carries, writes two lines
// at once after a wait's call began; they reach tmcp as the output that
// got the pane muted, before its stream began. The wait matches the first,
// and a wait from its cursor finds the second at once.
func TestACursorFromAMatchInAPanesFirstOutputResumesRightAfterIt(t *testing.T) {
	f := newFixture(t)
	id := strings.TrimSpace(f.srv.Must("new-window", "-d", "-P", "-F", "#{pane_id}", "sh"))
	f.waitForPrompt(id)
	// Streaming %0 makes tmcp carry the session's output from here.
	_, release, err := f.hub.Acquire(context.Background(), "%0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	called := time.Now()
	fmt.Fprint(f.tty(id), "FIRST\r\nSECOND\r\n")
	f.screenShows(id, "SECOND")
	// tmux sends the output on to tmcp as it shows it; the grace covers a
	// loaded machine.
	time.Sleep(200 * time.Millisecond)
	ctx := WithArrival(context.Background(), Arrival{Read: called, At: called})
	r, err := f.s.WaitForText(ctx, withDefaults(TextRequest{PaneID: id, Patterns: []string{"FIRST"}, Timeout: Timeout{Duration: 2 * time.Second}}))
	if err != nil || r.Outcome != OutcomeMatched || r.Matched != "FIRST" {
		t.Fatalf("a wait begun before the pane's first output: %+v, %v; want FIRST matched", r, err)
	}
	r2 := f.waitText(TextRequest{PaneID: id, Patterns: []string{"SECOND"}, Cursor: r.Cursor, Timeout: Timeout{Duration: 500 * time.Millisecond}})
	if r2.Outcome != OutcomeMatched || r2.Matched != "SECOND" || r2.CursorReset {
		t.Fatalf("the wait from FIRST's cursor: outcome %s matched %q reset %v alreadyOnScreen %v, want SECOND", r2.Outcome, r2.Matched, r2.CursorReset, r2.AlreadyOnScreen)
	}
}

// TestAWaitOnAPaneNobodyWatchesTellsNewFromOldOnceReArmed: panes of the
// session tmcp's command client carries, never waited on, are paused at
// their first output and continued (re-armed) after a while. A line a
// pane writes after a wait's call, once re-armed, is output, though the
// screen read as the call arrived shows it; a line a pane writes while
// paused at the call is taken for old only with the reason that says why.
func TestAWaitOnAPaneNobodyWatchesTellsNewFromOldOnceReArmed(t *testing.T) {
	f := newFixture(t)
	newPane := func() (string, *os.File) {
		id := strings.TrimSpace(f.srv.Must("new-window", "-d", "-P", "-F", "#{pane_id}", "sh"))
		f.waitForPrompt(id)
		return id, f.tty(id)
	}
	paused := func(id string) func() bool {
		return func() bool { return f.tc.PausedAt(id, time.Now()) }
	}
	// waitOn writes line to a pane after a call, shown on the screen read
	// as the call arrived, and returns the reply of the wait begun once
	// the line reached tmcp.
	waitOn := func(id string, tty *os.File, line string) TextResult {
		t.Helper()
		called := time.Now()
		// tmux tells when it read output to the millisecond (its age, in
		// whole ms, of a clock it also reads in whole ms): a line written
		// within the call's millisecond may be taken for one before it,
		// and is then reported so. After the call means a little after.
		time.Sleep(5 * time.Millisecond)
		fmt.Fprint(tty, line+"\r\n")
		f.screenShows(id, line)
		if !tmuxtest.WaitFor(5*time.Second, func() bool { return paused(id)() || !f.tc.PausedAt(id, called) }) {
			t.Fatalf("%s never reached tmcp", line)
		}
		screen, err := f.s.readRows(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		ctx := WithArrival(context.Background(), Arrival{Read: called, At: called, Screens: map[string][]string{id: screen}})
		r, err := f.s.WaitForText(ctx, withDefaults(TextRequest{PaneID: id, Patterns: []string{"OLD-LINE", line}, Timeout: Timeout{Duration: 300 * time.Millisecond}}))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	id, tty := newPane()
	fmt.Fprint(tty, "OLD-LINE\r\n")
	if !tmuxtest.WaitFor(5*time.Second, paused(id)) {
		t.Fatal("the pane was never paused at its output")
	}
	if !tmuxtest.WaitFor(5*time.Second, func() bool { return !paused(id)() }) {
		t.Fatal("the pane was never re-armed")
	}
	if r := waitOn(id, tty, "NEW-LINE"); r.Outcome != OutcomeMatched || r.Matched != "NEW-LINE" {
		t.Fatalf("a line written after the call on a re-armed pane: outcome %s matched %q alreadyOnScreen %v reason %q, want NEW-LINE matched",
			r.Outcome, r.Matched, r.AlreadyOnScreen, r.Reason)
	}

	id, tty = newPane()
	fmt.Fprint(tty, "OLD-LINE\r\n")
	if !tmuxtest.WaitFor(5*time.Second, paused(id)) {
		t.Fatal("the pane was never paused at its output")
	}
	switch r := waitOn(id, tty, "LATE-LINE"); {
	case r.Outcome == OutcomeMatched && r.Matched == "LATE-LINE":
		t.Log("the pane was re-armed before the line came: matched")
	case r.Outcome != OutcomeTimeout || !r.AlreadyOnScreen || r.Reason != pausedAtCallReason:
		t.Errorf("a line written after the call on a pane paused at it: outcome %s matched %q alreadyOnScreen %v reason %q, want LATE-LINE matched or a timeout that says the pane was paused",
			r.Outcome, r.Matched, r.AlreadyOnScreen, r.Reason)
	}
}
