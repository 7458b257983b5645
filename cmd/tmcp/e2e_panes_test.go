package main

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// Tests of respawn_pane, clear_pane, enter_copy_mode, exit_copy_mode and
// find_pane_by_position.

// Keys typed into a new shell before its prompt are echoed by the terminal
// first, and their output then lands on the prompt's line: the tests wait
// for the prompt (waitPrompt) after each respawn.

// printLines makes pane print n numbered lines and waits until the last one shows.
func printLines(t *testing.T, srv *tmuxtest.Server, pane, tag string, n int) {
	t.Helper()
	last := tag + strconv.Itoa(n)
	srv.Must("send-keys", "-t", pane, "i=1; while [ $i -le "+strconv.Itoa(n)+" ]; do echo "+tag+"$i; i=$((i+1)); done", "Enter")
	waitScreen(t, srv, pane, last, func(l []string) bool { return hasLine(l, last) })
}

func nonBlank(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func TestRespawnPaneRestartsTheProcessAndResetsCursors(t *testing.T) {
	srv := tmuxtest.New(t)
	other := newWindow(srv, "sh")
	s := startTMCP(t, srv, "destructive")
	// Each reply is read into a fresh value: a field it omits is false.
	type sinceOut struct {
		Cursor string `json:"cursor"`
		Reset  bool   `json:"reset"`
		Reason string `json:"reason"`
	}
	type waitOut struct {
		Outcome     string `json:"outcome"`
		CursorReset bool   `json:"cursorReset"`
		Reason      string `json:"reason"`
	}
	captureSince := func(s *session, args map[string]any) (r sinceOut) {
		s.t.Helper()
		s.ok("capture_since", args, &r)
		return r
	}
	waitForText := func(s *session, args map[string]any) (r waitOut) {
		s.t.Helper()
		s.ok("wait_for_text", args, &r)
		return r
	}
	var since sinceOut
	var waited waitOut
	var out struct {
		PID int `json:"pid"`
	}

	// Cursors taken before the respawn, on a stream that carried output.
	since = captureSince(s, map[string]any{"paneId": "%0"})
	srv.Must("send-keys", "-t", "%0", "echo before-respawn", "Enter")
	waitScreen(t, srv, "%0", "the echo", func(l []string) bool { return hasLine(l, "before-respawn") })
	since = captureSince(s, map[string]any{"cursor": since.Cursor})
	forCapture, forWait := since.Cursor, since.Cursor

	oldPID := paneFormat(srv, "%0", "#{pane_pid}")
	s.ok("respawn_pane", map[string]any{"paneId": "%0"}, &out)
	newPID := paneFormat(srv, "%0", "#{pane_pid}")
	if newPID == oldPID || strconv.Itoa(out.PID) != newPID {
		t.Fatalf("respawn_pane: pane %%0 pid %s before, %s after, reply %d; want a new pid, reported", oldPID, newPID, out.PID)
	}
	if cmd := paneFormat(srv, "%0", "#{pane_start_command}"); cmd != "sh" {
		t.Errorf("respawn_pane with no command: pane %%0 runs %q, want its own command sh", cmd)
	}
	waitPrompt(t, srv, "%0")
	srv.Must("send-keys", "-t", "%0", "echo after-respawn", "Enter")
	waitScreen(t, srv, "%0", "the echo", func(l []string) bool { return hasLine(l, "after-respawn") })

	// wait_for_text first: capture_since, read first, could notice the
	// respawn on its own and end the stream for both.
	waited = waitForText(s, map[string]any{"paneId": "%0", "cursor": forWait, "patterns": []string{"after-respawn"}, "timeoutSeconds": 1})
	if !waited.CursorReset || waited.Outcome == "matched" {
		t.Errorf("wait_for_text with a cursor from before respawn_pane: %+v, want cursorReset and no match on the old stream", waited)
	}
	since = captureSince(s, map[string]any{"cursor": forCapture})
	if !since.Reset || !strings.Contains(since.Reason, "respawned") {
		t.Errorf("capture_since with a cursor from before respawn_pane: %+v, want a reset naming the respawn", since)
	}

	t.Run("a wait in progress ends", func(t *testing.T) {
		type result struct {
			res *mcp.CallToolResult
			err error
		}
		done := make(chan result, 1)
		go func() {
			res, err := s.callErr("wait_for_text", map[string]any{"paneId": "%0", "patterns": []string{"never-printed"}, "timeoutSeconds": 15})
			done <- result{res, err}
		}()
		// The wait attaches to the stream. Kept a fixed pause: the pane is
		// streamed already, and nothing outside tmcp shows a wait begun.
		time.Sleep(500 * time.Millisecond)
		s.on(t).ok("respawn_pane", map[string]any{"paneId": "%0"}, &out)
		select {
		case r := <-done:
			if r.err != nil || r.res.IsError {
				t.Fatalf("wait_for_text across a respawn: %v %s", r.err, allText(r.res))
			}
			waited = waitOut{}
			decodeStructured(t, "wait_for_text", r.res, &waited)
			if waited.Outcome != "pane_died" || !strings.Contains(waited.Reason, "respawned") {
				t.Errorf("wait_for_text across respawn_pane: %+v, want pane_died naming the respawn", waited)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("wait_for_text went on past respawn_pane")
		}
	})

	t.Run("a respawn made outside tmcp", func(t *testing.T) {
		s := s.on(t)
		// cursorAfterOutput returns a cursor into %0's stream past some output.
		cursorAfterOutput := func(tag string) string {
			waitPrompt(t, srv, "%0")
			since = captureSince(s, map[string]any{"paneId": "%0"})
			srv.Must("send-keys", "-t", "%0", "echo "+tag, "Enter")
			waitScreen(t, srv, "%0", "the echo", func(l []string) bool { return hasLine(l, tag) })
			since = captureSince(s, map[string]any{"cursor": since.Cursor})
			if since.Reset {
				t.Fatalf("capture_since reset with nothing respawned (%s): %+v", tag, since)
			}
			return since.Cursor
		}

		// Asked at once, before anything else saw the new process.
		cursor := cursorAfterOutput("before-outside")
		srv.Must("respawn-pane", "-k", "-t", "%0")
		waited = waitForText(s, map[string]any{"paneId": "%0", "cursor": cursor, "timeoutSeconds": 1})
		if !waited.CursorReset {
			t.Errorf("wait_for_text with a cursor from before a respawn, at once: %+v, want cursorReset, not the new shell's output read as the old stream's", waited)
		}

		cursor = cursorAfterOutput("before-again")
		srv.Must("respawn-pane", "-k", "-t", "%0")
		waitPrompt(t, srv, "%0") // the new shell wrote something
		since = captureSince(s, map[string]any{"cursor": cursor})
		if !since.Reset || !strings.Contains(since.Reason, "respawned") {
			t.Errorf("capture_since with a cursor from before a respawn: %+v, want a reset naming the respawn", since)
		}
	})

	t.Run("with a command and a directory", func(t *testing.T) {
		s := s.on(t)
		dir := t.TempDir() + "/with#hash"
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		s.ok("respawn_pane", map[string]any{"paneId": other, "command": "echo RESPAWNED-$((1+1)); pwd; exec sh", "startDirectory": dir}, &out)
		waitScreen(t, srv, other, "the new command's output", func(l []string) bool { return hasLine(l, "RESPAWNED-2") && hasLine(l, dir) })
		if pid := paneFormat(srv, other, "#{pane_pid}"); pid != strconv.Itoa(out.PID) {
			t.Errorf("respawn_pane %s: reply pid %d, tmux says %s", other, out.PID, pid)
		}
	})

	t.Run("errors", func(t *testing.T) {
		s := s.on(t)
		if msg := s.fail("respawn_pane", map[string]any{"paneId": "%999"}); !strings.Contains(msg, "%999") || !strings.Contains(msg, "list_panes") {
			t.Errorf("respawn_pane of a missing pane: %q", msg)
		}
		if msg := s.fail("respawn_pane", map[string]any{"paneId": "3"}); !strings.Contains(msg, "not a pane id") {
			t.Errorf("respawn_pane with a malformed id: %q", msg)
		}
		if msg := s.fail("respawn_pane", nil); !strings.Contains(msg, "paneId is required") || !strings.Contains(msg, "list_panes") {
			t.Errorf("respawn_pane with no pane and several: %q", msg)
		}
	})
}

func TestClearPaneEmptiesTheScreenAndOnRequestTheHistory(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "destructive")
	var out struct {
		HistorySize *int `json:"historySize"`
	}
	history := func() int {
		n, _ := strconv.Atoi(paneFormat(srv, "%0", "#{history_size}"))
		return n
	}

	printLines(t, srv, "%0", "row", 40)
	before := history()
	s.ok("clear_pane", map[string]any{"paneId": "%0"}, &out)
	if screen := nonBlank(bareCapture(srv, "%0")); len(screen) != 0 {
		t.Errorf("clear_pane: the screen still shows %q", screen)
	}
	if h := history(); h <= before || out.HistorySize == nil || *out.HistorySize != h {
		t.Errorf("clear_pane without history: history %d lines before, %d after, reply %v; want the screen's rows kept in history, reported", before, h, out.HistorySize)
	}
	if all := strings.Join(bareCapture(srv, "%0", "-S", "-"), "\n"); !strings.Contains(all, "row40") {
		t.Errorf("clear_pane without history lost the scrollback:\n%s", all)
	}
	if cmd := paneFormat(srv, "%0", "#{pane_current_command}"); cmd != "sh" {
		t.Errorf("after clear_pane pane %%0 runs %q, want sh untouched", cmd)
	}

	printLines(t, srv, "%0", "again", 30)
	srv.Must("copy-mode", "-t", "%0")
	s.ok("clear_pane", map[string]any{"paneId": "%0", "history": true}, &out)
	if h := history(); h != 0 || out.HistorySize == nil || *out.HistorySize != 0 {
		t.Errorf("clear_pane with history: %d lines of history left, reply %v; want 0", h, out.HistorySize)
	}
	if all := nonBlank(bareCapture(srv, "%0", "-S", "-")); len(all) != 0 {
		t.Errorf("clear_pane with history: the pane still holds %q", all)
	}
	if m := paneFormat(srv, "%0", "#{pane_in_mode}"); m != "0" {
		t.Errorf("clear_pane of a pane in copy mode left it in the mode (pane_in_mode %s), showing the old text", m)
	}
	// The shell goes on: it was sent nothing, and still runs what it is given.
	srv.Must("send-keys", "-t", "%0", "echo still-here", "Enter")
	waitScreen(t, srv, "%0", "the echo", func(l []string) bool { return hasLine(l, "still-here") })

	t.Run("a full-screen program is not reset under it", func(t *testing.T) {
		s := s.on(t)
		full := newWindow(srv, `printf '\033[?1049hFULLSCREEN'; sleep 600`)
		waitPane(t, srv, full, "#{alternate_on}", "1")
		msg := s.fail("clear_pane", map[string]any{"paneId": full})
		if !strings.Contains(msg, full) || !strings.Contains(msg, "full-screen") || !strings.Contains(msg, "send_keys") {
			t.Errorf("clear_pane of a full-screen program: %q", msg)
		}
		waitScreen(t, srv, full, "the program's text", func(l []string) bool { return strings.Contains(strings.Join(l, ""), "FULLSCREEN") })
	})

	t.Run("errors", func(t *testing.T) {
		s := s.on(t)
		if msg := s.fail("clear_pane", map[string]any{"paneId": "%999"}); !strings.Contains(msg, "%999") || !strings.Contains(msg, "list_panes") {
			t.Errorf("clear_pane of a missing pane: %q", msg)
		}
		if msg := s.fail("clear_pane", map[string]any{"paneId": "%0", "history": "yes"}); !strings.Contains(msg, "history") {
			t.Errorf("clear_pane with a string for history: %q", msg)
		}
	})
}

func TestCopyModeToolsEnterScrollAndLeave(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	type modeOut struct {
		InMode bool `json:"inMode"`
		Scroll int  `json:"scroll"` // omitted when 0
	}
	var mode modeOut
	call := func(tool string, args map[string]any) (r modeOut) {
		t.Helper()
		s.ok(tool, args, &r)
		return r
	}
	printLines(t, srv, "%0", "hist", 60)

	mode = call("enter_copy_mode", map[string]any{"paneId": "%0", "scrollUp": 5})
	if got := paneFormat(srv, "%0", "#{pane_in_mode} #{pane_mode} #{scroll_position}"); got != "1 copy-mode 5" || !mode.InMode || mode.Scroll != 5 {
		t.Errorf("enter_copy_mode scrollUp 5: tmux says %q, reply %+v; want copy mode scrolled up 5", got, mode)
	}

	msg := s.fail("run_command", map[string]any{"paneId": "%0", "command": "true", "timeoutSeconds": 2})
	if !strings.Contains(msg, "exit_copy_mode") || !strings.Contains(msg, "%0") {
		t.Errorf("run_command on a pane in copy mode: %q, want it to name exit_copy_mode", msg)
	}

	// Far past the history: stops at its top, promptly.
	start := time.Now()
	mode = call("enter_copy_mode", map[string]any{"paneId": "%0", "scrollUp": 100000000})
	hist := paneFormat(srv, "%0", "#{history_size}")
	if got := paneFormat(srv, "%0", "#{scroll_position}"); got != hist || strconv.Itoa(mode.Scroll) != hist || time.Since(start) > 5*time.Second {
		t.Errorf("enter_copy_mode past the history: scroll_position %s, reply %+v, history %s, took %v", got, mode, hist, time.Since(start))
	}

	mode = call("exit_copy_mode", map[string]any{"paneId": "%0"})
	if got := paneFormat(srv, "%0", "#{pane_in_mode}"); got != "0" || mode.InMode {
		t.Errorf("exit_copy_mode: pane_in_mode %s, reply %+v; want out of the mode", got, mode)
	}
	mode = call("exit_copy_mode", map[string]any{"paneId": "%0"})
	if mode.InMode {
		t.Errorf("exit_copy_mode of a pane in no mode: %+v", mode)
	}

	// Any mode, not only copy mode.
	srv.Must("clock-mode", "-t", "%0")
	waitPane(t, srv, "%0", "#{pane_mode}", "clock-mode")
	mode = call("exit_copy_mode", map[string]any{"paneId": "%0"})
	if got := paneFormat(srv, "%0", "#{pane_in_mode}"); got != "0" {
		t.Errorf("exit_copy_mode of a pane in clock mode: pane_in_mode %s", got)
	}

	mode = call("enter_copy_mode", map[string]any{"paneId": "%0"})
	if got := paneFormat(srv, "%0", "#{pane_in_mode} #{scroll_position}"); got != "1 0" || !mode.InMode || mode.Scroll != 0 {
		t.Errorf("enter_copy_mode with no scroll: tmux says %q, reply %+v", got, mode)
	}
	mode = call("exit_copy_mode", map[string]any{"paneId": "%0"})

	if msg := s.fail("enter_copy_mode", map[string]any{"paneId": "%0", "scrollUp": -1}); !strings.Contains(msg, "scrollUp") {
		t.Errorf("enter_copy_mode scrollUp -1: %q", msg)
	}
	for _, tool := range []string{"enter_copy_mode", "exit_copy_mode"} {
		if msg := s.fail(tool, map[string]any{"paneId": "%999"}); !strings.Contains(msg, "%999") || !strings.Contains(msg, "list_panes") {
			t.Errorf("%s of a missing pane: %q", tool, msg)
		}
	}
}

func TestFindPaneByPositionReadsTheWindowsLayout(t *testing.T) {
	srv := tmuxtest.New(t)
	// A main pane on the left, two stacked on the right.
	right := tmuxOne(srv, "split-window", "-h", "-d", "-t", "%0", "-P", "-F", "#{pane_id}", "sh")
	lower := tmuxOne(srv, "split-window", "-v", "-d", "-t", right, "-P", "-F", "#{pane_id}", "sh")
	s := startTMCP(t, srv, "readonly")
	var found struct {
		PaneID string `json:"paneId"`
	}
	want := map[string]string{
		"left": "%0", "top-left": "%0", "bottom-left": "%0", "center": "%0",
		"top-right": right, "right": right, "bottom-right": lower,
	}
	for pos, id := range want {
		s.ok("find_pane_by_position", map[string]any{"position": pos}, &found)
		if found.PaneID != id {
			t.Errorf("find_pane_by_position %s: %s, want %s; layout:\n%s", pos, found.PaneID, id,
				srv.Must("list-panes", "-F", "#{pane_id} #{pane_left},#{pane_top} #{pane_right},#{pane_bottom}"))
		}
	}

	srv.Must("resize-pane", "-Z", "-t", lower)
	s.ok("find_pane_by_position", map[string]any{"windowId": "@0", "position": "top-left"}, &found)
	if found.PaneID != lower {
		t.Errorf("find_pane_by_position in a window zoomed on %s: %s", lower, found.PaneID)
	}

	newWindow(srv, "sh")
	if msg := s.fail("find_pane_by_position", map[string]any{"position": "top"}); !strings.Contains(msg, "windowId is required") || !strings.Contains(msg, "list_windows") {
		t.Errorf("find_pane_by_position with several windows and no windowId: %q", msg)
	}
	if msg := s.fail("find_pane_by_position", map[string]any{"windowId": "@0", "position": "north"}); !strings.Contains(msg, "north") || !strings.Contains(msg, "bottom-right") {
		t.Errorf("find_pane_by_position with a bad position: %q", msg)
	}
	if msg := s.fail("find_pane_by_position", map[string]any{"windowId": "@99", "position": "top"}); !strings.Contains(msg, "@99") || !strings.Contains(msg, "list_windows") {
		t.Errorf("find_pane_by_position in a missing window: %q", msg)
	}
}

func TestPaneToolsAreOfferedByTier(t *testing.T) {
	srv := tmuxtest.New(t)
	for _, c := range []struct {
		tier        string
		has, hasNot []string
	}{
		{"readonly", []string{"find_pane_by_position"}, []string{"enter_copy_mode", "exit_copy_mode", "respawn_pane", "clear_pane"}},
		{"", []string{"find_pane_by_position", "enter_copy_mode", "exit_copy_mode"}, []string{"respawn_pane", "clear_pane"}},
		{"destructive", []string{"find_pane_by_position", "enter_copy_mode", "exit_copy_mode", "respawn_pane", "clear_pane"}, nil},
	} {
		s := startTMCP(t, srv, c.tier)
		names := strings.Join(s.toolNames(), " ") + " "
		for _, n := range c.has {
			if !strings.Contains(names, n+" ") {
				t.Errorf("tier %q does not offer %s", c.tier, n)
			}
		}
		for _, n := range c.hasNot {
			if strings.Contains(names, n+" ") {
				t.Errorf("tier %q offers %s", c.tier, n)
			}
		}
	}
	s := startTMCP(t, srv, "")
	pid := paneFormat(srv, "%0", "#{pane_pid}")
	if res, err := s.callErr("respawn_pane", map[string]any{"paneId": "%0"}); err == nil && !res.IsError {
		t.Errorf("respawn_pane in the mutating tier succeeded")
	}
	if paneFormat(srv, "%0", "#{pane_pid}") != pid {
		t.Errorf("respawn_pane in the mutating tier respawned the pane")
	}
}

func TestRespawnAndClearAskBeforeTouchingTheCallersPane(t *testing.T) {
	srv := tmuxtest.New(t)
	other := tmuxOne(srv, "split-window", "-d", "-t", "%0", "-P", "-F", "#{pane_id}", "sh")
	waitPrompt(t, srv, "%0")
	pid := func(pane string) string { return paneFormat(srv, pane, "#{pane_pid}") }
	// The caller's pane shows the line that started tmcp: what clearing removes.
	shows := func() bool { return strings.Contains(strings.Join(bareCapture(srv, "%0"), ""), "TMUX_PANE") }

	t.Run("a client that cannot ask", func(t *testing.T) {
		cs := insidePane(t, srv, "%0", nil, nil)
		before := pid("%0")
		for _, tool := range []string{"respawn_pane", "clear_pane"} {
			res, text := callTool(t, cs, tool, map[string]any{"paneId": "%0"})
			if !res.IsError || !strings.Contains(text, "cannot ask") || !strings.Contains(text, "%0") {
				t.Errorf("%s of the caller's pane from a client that cannot ask: %s, want a refusal", tool, text)
			}
		}
		if pid("%0") != before || !shows() {
			t.Fatalf("the caller's pane was touched: pid %s (was %s), screen %q", pid("%0"), before, bareCapture(srv, "%0"))
		}
	})

	t.Run("a person who declines", func(t *testing.T) {
		var asked atomic.Int32
		cs := insidePane(t, srv, "%0", func() string { return "decline" }, &asked)
		before := pid("%0")
		for i, tool := range []string{"respawn_pane", "clear_pane"} {
			args := map[string]any{"paneId": "%0"}
			if tool == "clear_pane" {
				args["history"] = true
			}
			res, text := callTool(t, cs, tool, args)
			if !res.IsError || !strings.Contains(text, "declined") || asked.Load() != int32(i+1) {
				t.Errorf("%s of the caller's pane, declined: %s (asked %d times)", tool, text, asked.Load())
			}
		}
		if pid("%0") != before || !shows() {
			t.Fatalf("the caller's pane was touched though the person declined: pid %s (was %s), screen %q", pid("%0"), before, bareCapture(srv, "%0"))
		}
		// Another pane is not the person's to guard: no question.
		otherPID := pid(other)
		res, text := callTool(t, cs, "respawn_pane", map[string]any{"paneId": other})
		if res.IsError || asked.Load() != 2 || pid(other) == otherPID {
			t.Errorf("respawn_pane of another pane: %s (asked %d times; pid %s, was %s)", text, asked.Load(), pid(other), otherPID)
		}
	})

	t.Run("a person who accepts", func(t *testing.T) {
		var asked atomic.Int32
		cs := insidePane(t, srv, "%0", func() string { return "accept" }, &asked)
		res, text := callTool(t, cs, "clear_pane", map[string]any{"paneId": "%0", "history": true})
		if res.IsError || asked.Load() != 1 {
			t.Fatalf("clear_pane of the caller's pane, accepted: %s (asked %d times)", text, asked.Load())
		}
		if screen := nonBlank(bareCapture(srv, "%0", "-S", "-")); len(screen) != 0 || paneFormat(srv, "%0", "#{history_size}") != "0" {
			t.Errorf("clear_pane of the caller's pane, accepted: the pane still holds %q", screen)
		}

		// Respawning the pane ends tmcp itself, which runs in it: the call
		// may get no answer; what counts is that tmux did it.
		before := pid("%0")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "respawn_pane", Arguments: map[string]any{"paneId": "%0"}})
		if err == nil && r.IsError {
			b, _ := json.Marshal(r.Content)
			t.Fatalf("respawn_pane of the caller's pane, accepted: %s", b)
		}
		waitScreen(t, srv, "%0", "a new shell", func([]string) bool { return pid("%0") != before })
		if asked.Load() != 2 {
			t.Errorf("respawn_pane of the caller's pane: asked %d times in all, want 2", asked.Load())
		}
	})
}
