package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// split makes a pane beside target with bare tmux and returns its id.
func split(srv *tmuxtest.Server, target string, args ...string) string {
	return tmuxOne(srv, append(append([]string{"split-window", "-d", "-P", "-F", "#{pane_id}", "-t", target}, args...), "sh")...)
}

type placed struct {
	PaneID   string `json:"paneId"`
	WindowID string `json:"windowId"`
}

type sized struct {
	Width  int  `json:"width"`
	Height int  `json:"height"`
	Zoomed bool `json:"zoomed"`
}

func TestArrangeSelectWindowAndPaneMakeThemCurrent(t *testing.T) {
	srv := tmuxtest.New(t)
	second := newWindow(srv, "sh")
	win2 := paneFormat(srv, second, "#{window_id}")
	other := split(srv, "%0")
	s := startTMCP(t, srv, "")

	var p placed
	s.ok("select_window", map[string]any{"windowId": win2}, &p)
	if got := paneFormat(srv, second, "#{window_active}"); got != "1" || p.WindowID != win2 || p.PaneID != second {
		t.Errorf("select_window %s: window_active %s, reply %+v; want 1 and pane %s", win2, got, p, second)
	}

	s.ok("select_pane", map[string]any{"paneId": other}, &p)
	if got := paneFormat(srv, other, "#{pane_active} #{window_active}"); got != "1 1" || p.PaneID != other || p.WindowID != "@0" {
		t.Errorf("select_pane %s: pane_active/window_active %q, reply %+v; want \"1 1\" in @0", other, got, p)
	}
	if got := paneFormat(srv, "%0", "#{pane_active}"); got != "0" {
		t.Errorf("after select_pane %s, %%0 is still active", other)
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"select_window", map[string]any{"windowId": "@77"}, []string{"@77", "list_windows"}},
		{"select_window", map[string]any{"windowId": "main"}, []string{"not a window id", "list_windows"}},
		{"select_window", map[string]any{}, []string{"windowId is required", "list_windows"}},
		{"select_pane", map[string]any{"paneId": "%77"}, []string{"%77", "list_panes"}},
		{"select_pane", map[string]any{}, []string{"paneId is required", "list_panes"}},
	} {
		if msg := s.fail(c.tool, c.args); !containsAll(msg, c.want...) {
			t.Errorf("%s %v: %q, want it to name %q", c.tool, c.args, msg, c.want)
		}
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func TestArrangeSelectLayoutTakesNamesAndLayoutStrings(t *testing.T) {
	srv := tmuxtest.New(t)
	split(srv, "%0", "-h")
	split(srv, "%0", "-v")
	original := paneFormat(srv, "%0", "#{window_layout}")
	s := startTMCP(t, srv, "")
	var out struct {
		Layout string `json:"layout"`
	}

	s.ok("select_layout", map[string]any{"windowId": "@0", "layout": "even-horizontal"}, &out)
	now := paneFormat(srv, "%0", "#{window_layout}")
	if out.Layout != now || now == original || paneFormat(srv, "%0", "#{pane_height}") != strconv.Itoa(tmuxtest.Height) {
		t.Errorf("even-horizontal: reply %q, window_layout %q (was %q); want three full-height columns", out.Layout, now, original)
	}

	// The string window_layout reported, and the same without its checksum.
	for _, layout := range []string{original, original[5:]} {
		srv.Must("select-layout", "-t", "@0", "tiled")
		s.ok("select_layout", map[string]any{"layout": layout, "windowId": "@0"}, &out)
		if now := paneFormat(srv, "%0", "#{window_layout}"); now != original || out.Layout != original {
			t.Errorf("select_layout %q: window_layout %q, reply %q; want %q", layout, now, out.Layout, original)
		}
	}

	for _, c := range []struct {
		layout string
		want   []string
	}{
		// tmux 3.3a's server crashes on these two if they reach it.
		{"main", []string{"neither a named layout", "tiled", "get_window_info"}},
		{"zzzz", []string{"neither a named layout"}},
		{"ffff," + original[5:], []string{"checksum ffff does not match", original[:4]}},
		{"80x24,0,0{40x24,0,0,1,39x24,41,0,2}", []string{"has 3 panes but the layout string has 2", "@0"}},
		{"80x24,0,0{40x24,0,0,1", []string{"'}' expected", "@0"}},
	} {
		if msg := s.fail("select_layout", map[string]any{"windowId": "@0", "layout": c.layout}); !containsAll(msg, c.want...) {
			t.Errorf("select_layout %q: %q, want it to say %q", c.layout, msg, c.want)
		}
	}
	if msg := s.fail("select_layout", map[string]any{"windowId": "@9", "layout": "tiled"}); !containsAll(msg, "@9", "list_windows") {
		t.Errorf("select_layout on a missing window: %q", msg)
	}
	if _, err := srv.Tmux("display-message", "-p", "alive"); err != nil {
		t.Fatalf("the tmux server died: %v", err)
	}
	if now := paneFormat(srv, "%0", "#{window_layout}"); now != original {
		t.Errorf("a refused layout changed the window: %q, want %q", now, original)
	}
}

func TestArrangeResizePaneSetsCellsAndZoom(t *testing.T) {
	srv := tmuxtest.New(t)
	right := split(srv, "%0", "-h")
	s := startTMCP(t, srv, "")
	var out sized

	s.ok("resize_pane", map[string]any{"paneId": "%0", "width": 30}, &out)
	if got := paneFormat(srv, "%0", "#{pane_width}x#{pane_height}"); got != "30x24" || out.Width != 30 || out.Height != 24 || out.Zoomed {
		t.Errorf("resize_pane width 30: pane is %s, reply %+v", got, out)
	}

	zoomed := func() string { return paneFormat(srv, right, "#{window_zoomed_flag}#{pane_active}") }
	// zoom: true twice stays zoomed (resize-pane -Z alone would toggle).
	for i := 0; i < 2; i++ {
		s.ok("resize_pane", map[string]any{"paneId": right, "zoom": true}, &out)
		if got := zoomed(); got != "11" || !out.Zoomed || out.Width != tmuxtest.Width {
			t.Errorf("zoom true (call %d): zoomed/active %q, reply %+v; want %s zoomed to the window", i+1, got, out, right)
		}
	}
	// Zooming another pane while one is zoomed moves the zoom.
	s.ok("resize_pane", map[string]any{"paneId": "%0", "zoom": true}, &out)
	if got := paneFormat(srv, "%0", "#{window_zoomed_flag}#{pane_active}"); got != "11" {
		t.Errorf("zoom %%0 while %s was zoomed: %q, want 11", right, got)
	}
	for i := 0; i < 2; i++ {
		out = sized{} // zoomed is left out when false
		s.ok("resize_pane", map[string]any{"paneId": right, "zoom": false}, &out)
		if got := paneFormat(srv, right, "#{window_zoomed_flag}"); got != "0" || out.Zoomed || out.Width == tmuxtest.Width {
			t.Errorf("zoom false (call %d): window_zoomed_flag %s, reply %+v", i+1, got, out)
		}
	}

	for _, c := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"paneId": "%0"}, []string{"%0", "give width, height or zoom"}},
		{map[string]any{"paneId": "%0", "width": -3}, []string{"%0", "at least 1"}},
		{map[string]any{"paneId": "%42", "width": 10}, []string{"%42", "list_panes"}},
		{map[string]any{"paneId": "%42", "zoom": true}, []string{"%42", "list_panes"}},
	} {
		if msg := s.fail("resize_pane", c.args); !containsAll(msg, c.want...) {
			t.Errorf("resize_pane %v: %q, want it to say %q", c.args, msg, c.want)
		}
	}
}

func TestArrangeResizeWindowSetsItsSize(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	var out sized
	s.ok("resize_window", map[string]any{"windowId": "@0", "width": 100, "height": 30}, &out)
	if got := paneFormat(srv, "%0", "#{window_width}x#{window_height}"); got != "100x30" || out.Width != 100 || out.Height != 30 {
		t.Errorf("resize_window 100x30: window is %s, reply %+v", got, out)
	}
	s.ok("resize_window", map[string]any{"windowId": "@0", "height": 20}, &out)
	if got := paneFormat(srv, "%0", "#{window_width}x#{window_height}"); got != "100x20" || out.Width != 100 || out.Height != 20 {
		t.Errorf("resize_window height 20: window is %s, reply %+v", got, out)
	}
	// Only this window's option changed; the global one must stay (tmux
	// 3.3a crashes with window-size manual set globally).
	if got := tmuxOne(srv, "show-options", "-gv", "window-size"); got == "manual" {
		t.Errorf("the global window-size became manual")
	}
	for _, c := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"windowId": "@0"}, []string{"@0", "width and/or height"}},
		{map[string]any{"windowId": "@0", "width": -1, "height": 5}, []string{"@0", "at least 1"}},
		{map[string]any{"windowId": "@0", "width": 20000}, []string{"@0", "too large"}},
		{map[string]any{"windowId": "@5", "width": 50}, []string{"@5", "list_windows"}},
	} {
		if msg := s.fail("resize_window", c.args); !containsAll(msg, c.want...) {
			t.Errorf("resize_window %v: %q, want it to say %q", c.args, msg, c.want)
		}
	}
}

func TestArrangeSwapPaneAcrossWindows(t *testing.T) {
	srv := tmuxtest.New(t)
	right := split(srv, "%0", "-h")
	far := newWindow(srv, "sh")
	farWin := paneFormat(srv, far, "#{window_id}")
	s := startTMCP(t, srv, "")
	var p placed

	s.ok("swap_pane", map[string]any{"paneId": "%0", "targetPaneId": right}, &p)
	if got := paneFormat(srv, "%0", "#{pane_index}"); got != "1" || paneFormat(srv, right, "#{pane_index}") != "0" || p.WindowID != "@0" {
		t.Errorf("swap in one window: %%0 has index %s, reply %+v; want 1", got, p)
	}
	s.ok("swap_pane", map[string]any{"paneId": "%0", "targetPaneId": far}, &p)
	if got := paneFormat(srv, "%0", "#{window_id}"); got != farWin || p.WindowID != farWin || paneFormat(srv, far, "#{window_id}") != "@0" {
		t.Errorf("swap across windows: %%0 is in %s, reply %+v; want %s, and %s in @0", got, p, farWin, far)
	}
	for _, c := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"paneId": "%0", "targetPaneId": "%88"}, []string{"%88", "list_panes"}},
		{map[string]any{"paneId": "%88", "targetPaneId": "%0"}, []string{"%88", "list_panes"}},
		{map[string]any{"paneId": "%0", "targetPaneId": "right"}, []string{"targetPaneId", "list_panes"}},
	} {
		if msg := s.fail("swap_pane", c.args); !containsAll(msg, c.want...) {
			t.Errorf("swap_pane %v: %q, want it to say %q", c.args, msg, c.want)
		}
	}
}

func TestArrangeMoveWindowToSessionAndIndex(t *testing.T) {
	srv := tmuxtest.New(t)
	mover := newWindow(srv, "sh")
	win := paneFormat(srv, mover, "#{window_id}")
	srv.Must("new-session", "-d", "-s", "other", "sh")
	s := startTMCP(t, srv, "")
	var out struct {
		SessionName string `json:"sessionName"`
		Index       int    `json:"index"`
	}

	s.ok("move_window", map[string]any{"windowId": win, "sessionName": "other"}, &out)
	if got := paneFormat(srv, win, "#{session_name}:#{window_index}"); got != "other:1" || out.SessionName != "other" || out.Index != 1 {
		t.Errorf("move_window to other: window is at %s, reply %+v; want other:1", got, out)
	}
	if got := paneFormat(srv, "=other:", "#{window_index}"); got != "0" {
		t.Errorf("move_window changed the current window of other to %s", got)
	}
	s.ok("move_window", map[string]any{"windowId": win, "index": 7}, &out)
	if got := paneFormat(srv, win, "#{session_name}:#{window_index}"); got != "other:7" || out.Index != 7 {
		t.Errorf("move_window index 7: window is at %s, reply %+v", got, out)
	}
	s.ok("move_window", map[string]any{"windowId": win, "sessionName": "main", "index": 3}, &out)
	if got := paneFormat(srv, win, "#{session_name}:#{window_index}"); got != "main:3" || out.SessionName != "main" || out.Index != 3 {
		t.Errorf("move_window main:3: window is at %s, reply %+v", got, out)
	}

	for _, c := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"windowId": win, "sessionName": "nosuch"}, []string{"nosuch", "list_sessions"}},
		{map[string]any{"windowId": win, "index": 0}, []string{"index in use", "list_windows"}},
		{map[string]any{"windowId": win}, []string{win, "sessionName, index"}},
		{map[string]any{"windowId": win, "index": -1}, []string{win, "negative"}},
		{map[string]any{"windowId": "@40", "sessionName": "other"}, []string{"@40", "list_windows"}},
	} {
		if msg := s.fail("move_window", c.args); !containsAll(msg, c.want...) {
			t.Errorf("move_window %v: %q, want it to say %q", c.args, msg, c.want)
		}
	}
}

func TestArrangeMovePaneJoinsAndBreaksOut(t *testing.T) {
	srv := tmuxtest.New(t)
	mover := split(srv, "%0")
	other := newWindow(srv, "sh")
	otherWin := paneFormat(srv, other, "#{window_id}")
	s := startTMCP(t, srv, "")
	var p placed

	s.ok("move_pane", map[string]any{"paneId": mover, "windowId": otherWin}, &p)
	if got := paneFormat(srv, mover, "#{window_id} #{window_panes}"); got != otherWin+" 2" || p.WindowID != otherWin || p.PaneID != mover {
		t.Errorf("move_pane into %s: pane is in %q, reply %+v", otherWin, got, p)
	}
	if got := paneFormat(srv, "%0", "#{window_panes}"); got != "1" {
		t.Errorf("@0 still has %s panes after the move", got)
	}

	s.ok("move_pane", map[string]any{"paneId": mover}, &p)
	got := paneFormat(srv, mover, "#{window_id} #{window_panes} #{session_name}")
	if p.WindowID == otherWin || p.WindowID == "@0" || got != p.WindowID+" 1 main" {
		t.Errorf("move_pane out: pane is at %q, reply %+v; want alone in a new window of main", got, p)
	}
	if cur := paneFormat(srv, "=main:", "#{window_id}"); cur == p.WindowID {
		t.Errorf("breaking out made the new window %s current", cur)
	}

	for _, c := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"paneId": mover, "windowId": "@61"}, []string{"@61", "list_windows"}},
		{map[string]any{"paneId": mover, "windowId": "main"}, []string{"not a window id", "list_windows"}},
		{map[string]any{"paneId": "%61"}, []string{"%61", "list_panes"}},
	} {
		if msg := s.fail("move_pane", c.args); !containsAll(msg, c.want...) {
			t.Errorf("move_pane %v: %q, want it to say %q", c.args, msg, c.want)
		}
	}
}

func TestArrangeSetPaneTitleKeepsTheTitleLiteral(t *testing.T) {
	srv := tmuxtest.New(t)
	other := split(srv, "%0")
	s := startTMCP(t, srv, "")
	var out struct {
		Title string `json:"title"`
	}
	for _, title := range []string{"build", "#{pane_id} #S %d ## #(echo hi)", "a;b 'q' \"d\" \\ é", ""} {
		s.ok("set_pane_title", map[string]any{"paneId": other, "title": title}, &out)
		if got := paneFormat(srv, other, "#{pane_title}"); got != title || out.Title != title {
			t.Errorf("set_pane_title %q: pane_title %q, reply %q", title, got, out.Title)
		}
	}
	if got := paneFormat(srv, other, "#{pane_active}"); got != "0" {
		t.Errorf("set_pane_title made %s active", other)
	}
	for _, c := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"paneId": other, "title": "a\tb"}, []string{other, "control character"}},
		{map[string]any{"paneId": "%55", "title": "x"}, []string{"%55", "list_panes"}},
	} {
		if msg := s.fail("set_pane_title", c.args); !containsAll(msg, c.want...) {
			t.Errorf("set_pane_title %v: %q, want it to say %q", c.args, msg, c.want)
		}
	}
}

func TestArrangeToolsNeedTheMutatingTier(t *testing.T) {
	srv := tmuxtest.New(t)
	names := strings.Join(startTMCP(t, srv, "readonly").toolNames(), " ")
	for _, tool := range []string{"select_window", "select_pane", "select_layout", "resize_pane", "resize_window", "swap_pane", "move_window", "move_pane", "set_pane_title"} {
		if strings.Contains(" "+names+" ", " "+tool+" ") {
			t.Errorf("%s is offered in the readonly tier", tool)
		}
	}
}
