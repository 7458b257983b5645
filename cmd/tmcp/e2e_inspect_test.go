package main

import (
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

func TestSearchPanesFindsWhichPanesShowText(t *testing.T) {
	srv := tmuxtest.New(t)
	other := strings.TrimSpace(srv.Must("split-window", "-d", "-t", "main", "-P", "-F", "#{pane_id}", "sh"))
	srv.Must("send-keys", "-t", "%0", "clear; printf 'needle-one\\ntag#\\n'", "Enter")
	srv.Must("send-keys", "-t", other, "clear; printf 'hay\\n'", "Enter")
	waitScreen(t, srv, "%0", "the needle", func(l []string) bool { return hasLine(l, "tag#") })
	waitScreen(t, srv, other, "the hay", func(l []string) bool { return hasLine(l, "hay") })
	s := startTMCP(t, srv, "")
	type match struct {
		PaneID string   `json:"paneId"`
		Lines  []string `json:"lines"`
	}
	var out struct {
		Matches  []match `json:"matches"`
		Searched int     `json:"searched"`
	}
	cases := []struct {
		args map[string]any
		want string // the one line expected, in pane %0 only
	}{
		{map[string]any{"pattern": "needle-one"}, "needle-one"},
		// A pattern ending in '#' would silently match nothing in a tmux format.
		{map[string]any{"pattern": "tag#"}, "tag#"},
		{map[string]any{"pattern": "^NEEDLE-[a-z]+$", "regex": true, "matchCase": false}, "needle-one"},
	}
	for _, c := range cases {
		s.ok("search_panes", c.args, &out)
		if out.Searched != 2 || len(out.Matches) != 1 || out.Matches[0].PaneID != "%0" || !hasLine(out.Matches[0].Lines, c.want) {
			t.Errorf("search_panes %v: %+v, want only %%0 with the line %q", c.args, out, c.want)
		}
	}
	s.ok("search_panes", map[string]any{"pattern": "not on any screen"}, &out)
	if len(out.Matches) != 0 {
		t.Errorf("a pattern on no screen matched: %+v", out)
	}
	if msg := s.fail("search_panes", map[string]any{"pattern": "(", "regex": true}); !strings.Contains(msg, "RE2") {
		t.Errorf("a bad regex: %q", msg)
	}
}

func TestSnapshotAndInfoTools(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("send-keys", "-t", "%0", "clear; echo snapshot-text", "Enter")
	waitScreen(t, srv, "%0", "the text", func(l []string) bool { return hasLine(l, "snapshot-text") })
	srv.Must("new-window", "-d", "-t", "=main:", "-n", "second", "sh")
	s := startTMCP(t, srv, "")

	res := s.call("snapshot_pane", map[string]any{"paneId": "%0"})
	var snap struct {
		PaneID  string `json:"paneId"`
		Command string `json:"command"`
		Width   int    `json:"width"`
		Lines   int    `json:"lines"`
	}
	decodeStructured(t, "snapshot_pane", res, &snap)
	text := paneText(t, "snapshot_pane", res)
	if snap.PaneID != "%0" || snap.Command != "sh" || snap.Width != tmuxtest.Width || !strings.Contains(text, "snapshot-text") || snap.Lines != len(strings.Split(text, "\n")) {
		t.Errorf("snapshot_pane: %+v, text %q", snap, text)
	}

	var session struct {
		SessionName string `json:"sessionName"`
		Windows     int    `json:"windows"`
		WindowList  []struct {
			Name string `json:"name"`
		} `json:"windowList"`
	}
	s.ok("get_session_info", map[string]any{"sessionName": "main"}, &session)
	if session.SessionName != "main" || session.Windows != 2 || len(session.WindowList) != 2 || session.WindowList[1].Name != "second" {
		t.Errorf("get_session_info: %+v", session)
	}
	if msg := s.fail("get_session_info", map[string]any{"sessionName": "nope"}); !strings.Contains(msg, "nope") || !strings.Contains(msg, "list_sessions") {
		t.Errorf("a missing session: %q", msg)
	}

	window := strings.TrimSpace(srv.Must("display-message", "-p", "-t", "%0", "#{window_id}"))
	srv.Must("split-window", "-d", "-t", "%0", "sh")
	var win struct {
		WindowID string `json:"windowId"`
		Layout   string `json:"layout"`
		Panes    int    `json:"panes"`
		PaneList []struct {
			PaneID string `json:"paneId"`
		} `json:"paneList"`
	}
	s.ok("get_window_info", map[string]any{"windowId": window}, &win)
	wantLayout := strings.TrimSpace(srv.Must("display-message", "-p", "-t", window, "#{window_layout}"))
	if win.WindowID != window || win.Layout != wantLayout || win.Panes != 2 || len(win.PaneList) != 2 {
		t.Errorf("get_window_info: %+v, want layout %q and 2 panes", win, wantLayout)
	}
	if msg := s.fail("get_window_info", map[string]any{"windowId": "@999"}); !strings.Contains(msg, "@999") {
		t.Errorf("a missing window: %q", msg)
	}
}
