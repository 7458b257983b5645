package main

// End-to-end tests: the real tmcp binary, started as an MCP client would
// start it, speaking MCP over stdio to the SDK's client, against a private
// tmux server per test. Effects are checked in tmux itself.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// What tools report, as the wire carries it.

type sessionOut struct {
	SessionID   string `json:"sessionId"`
	SessionName string `json:"sessionName"`
	Windows     int    `json:"windows"`
	Attached    int    `json:"attached"`
	Created     int64  `json:"created"`
}

type sessionsOut struct {
	Sessions []sessionOut `json:"sessions"`
	Total    int          `json:"total"`
}

type windowOut struct {
	WindowID    string `json:"windowId"`
	Index       int    `json:"index"`
	Name        string `json:"name"`
	SessionName string `json:"sessionName"`
	Active      bool   `json:"active"`
	Panes       int    `json:"panes"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
}

type windowsOut struct {
	Windows []windowOut `json:"windows"`
	Total   int         `json:"total"`
}

type paneOut struct {
	PaneID      string `json:"paneId"`
	SessionName string `json:"sessionName"`
	WindowID    string `json:"windowId"`
	Active      bool   `json:"active"`
	Command     string `json:"command"`
	PID         int    `json:"pid"`
	Path        string `json:"path"`
	Title       string `json:"title"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	Dead        bool   `json:"dead"`
	IsCaller    *bool  `json:"isCaller"`
}

type panesOut struct {
	Panes []paneOut `json:"panes"`
	Total int       `json:"total"`
}

type serverInfo struct {
	Version     string `json:"version"`
	SocketPath  string `json:"socketPath"`
	Running     bool   `json:"running"`
	Sessions    int    `json:"sessions"`
	Windows     int    `json:"windows"`
	Panes       int    `json:"panes"`
	CallerPane  string `json:"callerPane"`
	Tier        string `json:"tier"`
	ControlMode bool   `json:"controlMode"`
}

type paneInfo struct {
	paneOut
	ExitStatus      *int   `json:"exitStatus"`
	TTY             string `json:"tty"`
	HistorySize     int    `json:"historySize"`
	HistoryLimit    int    `json:"historyLimit"`
	InCopyMode      bool   `json:"inCopyMode"`
	Mode            string `json:"mode"`
	AlternateScreen bool   `json:"alternateScreen"`
}

type captureOut struct {
	PaneID       string `json:"paneId"`
	Lines        int    `json:"lines"`
	Truncated    bool   `json:"truncated"`
	DroppedLines int    `json:"droppedLines"`
	DroppedBytes int    `json:"droppedBytes"`
}

type createdOut struct {
	SessionID   string `json:"sessionId"`
	SessionName string `json:"sessionName"`
	WindowID    string `json:"windowId"`
	WindowIndex int    `json:"windowIndex"`
	WindowName  string `json:"windowName"`
	PaneID      string `json:"paneId"`
}

type sentOut struct {
	PaneID string `json:"paneId"`
	Bytes  int    `json:"bytes"`
	Enter  bool   `json:"enter"`
}

// The tools of each tier, by name.
var (
	readTools  = []string{"capture_pane", "display_message", "get_pane_info", "get_server_info", "list_panes", "list_sessions", "list_windows"}
	writeTools = []string{"create_session", "create_window", "paste_text", "rename_session", "rename_window", "send_keys", "split_window"}
	killTools  = []string{"kill_pane", "kill_server", "kill_session", "kill_window"}
)

func sorted(lists ...[]string) []string {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.Sort(all)
	return all
}

func paneIDs(srv *tmuxtest.Server) []string {
	return strings.Split(tmuxOne(srv, "list-panes", "-a", "-F", "#{pane_id}"), "\n")
}

func TestListSessionsFiltersByNameAndAttachedAndCountsAll(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	srv.Must("new-session", "-d", "-s", "other", "sh")
	srv.Must("new-session", "-d", "-s", "main-two", "sh")
	s := startTMCP(t, srv, "")

	var all sessionsOut
	s.ok("list_sessions", nil, &all)
	if all.Total != 3 || len(all.Sessions) != 3 {
		t.Fatalf("list_sessions: total %d, %d sessions, want 3 and 3: %+v", all.Total, len(all.Sessions), all.Sessions)
	}
	for _, ss := range all.Sessions {
		id := tmuxOne(srv, "display-message", "-p", "-t", "="+ss.SessionName+":", "#{session_id}")
		if ss.SessionID != id {
			t.Errorf("session %s: id %q, tmux says %q", ss.SessionName, ss.SessionID, id)
		}
		if ss.Attached != 0 {
			t.Errorf("session %s: attached %d with no client but tmcp's own, want 0", ss.SessionName, ss.Attached)
		}
		if ss.Windows != 1 || ss.Created == 0 {
			t.Errorf("session %s: windows %d, created %d; want 1 window and a creation time", ss.SessionName, ss.Windows, ss.Created)
		}
	}

	// A name matches exactly, never as a prefix.
	var named sessionsOut
	s.ok("list_sessions", map[string]any{"name": "main"}, &named)
	if named.Total != 3 || len(named.Sessions) != 1 || named.Sessions[0].SessionName != "main" {
		t.Errorf("list_sessions name=main: %+v, want only main and total 3", named)
	}
	s.ok("list_sessions", map[string]any{"name": "mai"}, &named)
	if len(named.Sessions) != 0 {
		t.Errorf("list_sessions name=mai: %+v, want none (no prefix matching)", named.Sessions)
	}

	attachClient(t, srv, "other")
	var attached, detached sessionsOut
	s.ok("list_sessions", map[string]any{"attached": true}, &attached)
	if len(attached.Sessions) != 1 || attached.Sessions[0].SessionName != "other" || attached.Sessions[0].Attached != 1 || attached.Total != 3 {
		t.Errorf("list_sessions attached=true: %+v, want only other with 1 client, total 3", attached)
	}
	s.ok("list_sessions", map[string]any{"attached": false}, &detached)
	var names []string
	for _, ss := range detached.Sessions {
		names = append(names, ss.SessionName)
	}
	slices.Sort(names)
	if !reflect.DeepEqual(names, []string{"main", "main-two"}) {
		t.Errorf("list_sessions attached=false: %v, want [main main-two]", names)
	}
}

func TestListWindowsFiltersBySessionNameNameAndActive(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	first := paneFormat(srv, "=main:", "#{window_id}")
	logs := tmuxOne(srv, "new-window", "-d", "-P", "-F", "#{window_id}", "-t", "=main:", "-n", "logs", "sh")
	srv.Must("new-session", "-d", "-s", "other", "-n", "logs", "sh")
	s := startTMCP(t, srv, "")

	var all windowsOut
	s.ok("list_windows", nil, &all)
	if all.Total != 3 || len(all.Windows) != 3 {
		t.Fatalf("list_windows: %+v, want 3 windows", all)
	}
	var inMain windowsOut
	s.ok("list_windows", map[string]any{"sessionName": "main"}, &inMain)
	if len(inMain.Windows) != 2 {
		t.Fatalf("list_windows sessionName=main: %+v, want 2 windows", inMain)
	}
	for _, w := range inMain.Windows {
		if w.SessionName != "main" || w.Panes != 1 || w.Width != tmuxtest.Width {
			t.Errorf("window %+v: want session main, 1 pane, width %d", w, tmuxtest.Width)
		}
	}
	var named windowsOut
	s.ok("list_windows", map[string]any{"sessionName": "main", "name": "logs"}, &named)
	if len(named.Windows) != 1 || named.Windows[0].WindowID != logs || named.Windows[0].Name != "logs" || named.Windows[0].Index != 1 {
		t.Errorf("list_windows main/logs: %+v, want only %s at index 1", named.Windows, logs)
	}
	s.ok("list_windows", map[string]any{"name": "logs"}, &named)
	if len(named.Windows) != 2 {
		t.Errorf("list_windows name=logs: %+v, want the logs windows of both sessions", named.Windows)
	}
	var active, inactive windowsOut
	s.ok("list_windows", map[string]any{"sessionName": "main", "active": true}, &active)
	if len(active.Windows) != 1 || active.Windows[0].WindowID != first || !active.Windows[0].Active {
		t.Errorf("list_windows main active=true: %+v, want only %s", active.Windows, first)
	}
	s.ok("list_windows", map[string]any{"sessionName": "main", "active": false}, &inactive)
	if len(inactive.Windows) != 1 || inactive.Windows[0].WindowID != logs || inactive.Windows[0].Active {
		t.Errorf("list_windows main active=false: %+v, want only %s", inactive.Windows, logs)
	}
}

func TestListPanesFiltersByEveryFieldAndMarksNoPaneAsTheCaller(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	srv.Must("set-option", "-g", "remain-on-exit", "on")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	first := mainPane(srv)
	sleeper := newWindow(srv, "exec sleep 300", "-c", dir)
	window := paneFormat(srv, sleeper, "#{window_id}")
	deadPane := tmuxOne(srv, "split-window", "-d", "-P", "-F", "#{pane_id}", "-c", "/", "-t", sleeper, "sh -c 'exit 3'")
	srv.Must("new-session", "-d", "-s", "other", "sh")
	other := paneFormat(srv, "=other:", "#{pane_id}")
	waitPane(t, srv, deadPane, "#{pane_dead}", "1")
	waitPane(t, srv, sleeper, "#{pane_current_command}", "sleep")
	s := startTMCP(t, srv, "")

	ids := func(p panesOut) []string {
		var out []string
		for _, x := range p.Panes {
			out = append(out, x.PaneID)
		}
		slices.Sort(out)
		return out
	}
	want := func(list ...string) []string { slices.Sort(list); return list }

	var all panesOut
	s.ok("list_panes", nil, &all)
	if all.Total != 4 || !reflect.DeepEqual(ids(all), want(first, sleeper, deadPane, other)) {
		t.Fatalf("list_panes: total %d, panes %v; want all four of %v", all.Total, ids(all), want(first, sleeper, deadPane, other))
	}
	for _, p := range all.Panes {
		if p.IsCaller == nil || *p.IsCaller {
			t.Errorf("pane %s: isCaller %v, want present and false (tmcp runs outside this server)", p.PaneID, p.IsCaller)
		}
		if pid := paneFormat(srv, p.PaneID, "#{pane_pid}"); strconv.Itoa(p.PID) != pid {
			t.Errorf("pane %s: pid %d, tmux says %s", p.PaneID, p.PID, pid)
		}
	}
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"sessionName", map[string]any{"sessionName": "main"}, want(first, sleeper, deadPane)},
		{"windowId", map[string]any{"windowId": window}, want(sleeper, deadPane)},
		{"command", map[string]any{"command": "sleep"}, want(sleeper)},
		{"pathUnder", map[string]any{"pathUnder": dir}, want(sleeper)},
		{"dead", map[string]any{"dead": true}, want(deadPane)},
		{"not dead", map[string]any{"dead": false}, want(first, sleeper, other)},
		{"active", map[string]any{"active": true}, want(first, sleeper, other)},
		{"inactive", map[string]any{"active": false}, want(deadPane)},
		{"session and command", map[string]any{"sessionName": "other", "command": "sh"}, want(other)},
	}
	for _, c := range cases {
		var got panesOut
		s.ok("list_panes", c.args, &got)
		if !reflect.DeepEqual(ids(got), c.want) {
			t.Errorf("list_panes %s %v: %v, want %v", c.name, c.args, ids(got), c.want)
		}
		if c.name != "sessionName" && c.name != "windowId" && c.name != "session and command" && got.Total != 4 {
			t.Errorf("list_panes %s: total %d, want 4 (panes before filtering)", c.name, got.Total)
		}
	}
	var bySleeper panesOut
	s.ok("list_panes", map[string]any{"command": "sleep"}, &bySleeper)
	if len(bySleeper.Panes) == 1 {
		p := bySleeper.Panes[0]
		if p.Path != dir || p.WindowID != window || p.SessionName != "main" {
			t.Errorf("sleep pane: %+v, want path %s, window %s, session main", p, dir, window)
		}
	}
}

func TestGetServerInfoReportsVersionSocketCountsTierAndControlMode(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	out, err := exec.Command("tmux", "-V").Output()
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimPrefix(strings.TrimSpace(string(out)), "tmux ")

	var info serverInfo
	s.ok("get_server_info", nil, &info)
	if info.Version != version || info.SocketPath != srv.Socket || info.Tier != "mutating" {
		t.Errorf("get_server_info: %+v; want version %q, socket %q, tier mutating", info, version, srv.Socket)
	}
	if !info.Running || info.Sessions != 1 || info.Windows != 1 || info.Panes != 1 || info.CallerPane != "" {
		t.Errorf("get_server_info: %+v; want running with 1 session, 1 window, 1 pane, no caller pane", info)
	}
	if !info.ControlMode {
		t.Errorf("get_server_info: controlMode false with a session to attach to")
	}

	newWindow(srv, "sh")
	srv.Must("split-window", "-d", "-t", "=main:0", "sh")
	srv.Must("new-session", "-d", "-s", "other", "sh")
	s.ok("get_server_info", nil, &info)
	if info.Sessions != 2 || info.Windows != 3 || info.Panes != 4 {
		t.Errorf("get_server_info after adding: %d sessions, %d windows, %d panes; want 2, 3, 4", info.Sessions, info.Windows, info.Panes)
	}

	destructive := startTMCP(t, srv, "destructive")
	destructive.ok("get_server_info", nil, &info)
	if info.Tier != "destructive" {
		t.Errorf("get_server_info with TMCP_SAFETY=destructive: tier %q", info.Tier)
	}
}

func TestGetPaneInfoReportsTheStateTmuxHolds(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	srv.Must("select-pane", "-t", pane, "-T", "e2e title")
	srv.Must("send-keys", "-t", pane, "seq 1 50; echo seq-done", "Enter")
	waitScreen(t, srv, pane, "seq-done", func(l []string) bool { return hasLine(l, "seq-done") })
	s := startTMCP(t, srv, "")

	var info paneInfo
	s.ok("get_pane_info", map[string]any{"paneId": pane}, &info)
	f := func(format string) string { return paneFormat(srv, pane, format) }
	if info.PaneID != pane || info.Command != "sh" || strconv.Itoa(info.PID) != f("#{pane_pid}") || info.TTY != f("#{pane_tty}") {
		t.Errorf("get_pane_info %s: %+v; want command sh, pid %s, tty %s", pane, info, f("#{pane_pid}"), f("#{pane_tty}"))
	}
	if info.Width != tmuxtest.Width || strconv.Itoa(info.Height) != f("#{pane_height}") || info.Path != f("#{pane_current_path}") || info.Title != "e2e title" {
		t.Errorf("get_pane_info %s: size %dx%d, path %q, title %q; want %dx%s, %q, \"e2e title\"",
			pane, info.Width, info.Height, info.Path, info.Title, tmuxtest.Width, f("#{pane_height}"), f("#{pane_current_path}"))
	}
	if info.HistorySize == 0 || strconv.Itoa(info.HistorySize) != f("#{history_size}") || strconv.Itoa(info.HistoryLimit) != f("#{history_limit}") {
		t.Errorf("get_pane_info %s: history %d of %d; tmux says %s of %s", pane, info.HistorySize, info.HistoryLimit, f("#{history_size}"), f("#{history_limit}"))
	}
	if info.Dead || info.ExitStatus != nil || info.InCopyMode || info.AlternateScreen || !info.Active {
		t.Errorf("get_pane_info %s: %+v; want a live, active pane, not in copy mode nor alternate screen, no exit status", pane, info)
	}
	if info.IsCaller == nil || *info.IsCaller {
		t.Errorf("get_pane_info %s: isCaller %v, want false", pane, info.IsCaller)
	}

	srv.Must("copy-mode", "-t", pane)
	s.ok("get_pane_info", map[string]any{"paneId": pane}, &info)
	if !info.InCopyMode || info.Mode != "copy-mode" {
		t.Errorf("get_pane_info after copy-mode: inCopyMode %v, mode %q", info.InCopyMode, info.Mode)
	}
}

func TestGetPaneInfoReportsTheExitStatusOfADeadPane(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	srv.Must("set-option", "-g", "remain-on-exit", "on")
	// tmux 3.3a now and then loses a pane's exit status (pane_dead_status
	// stays empty for good); take a pane whose status tmux holds.
	var pane string
	for range 5 {
		pane = newWindow(srv, "sh -c 'exit 7'")
		waitPane(t, srv, pane, "#{pane_dead}", "1")
		if paneFormat(srv, pane, "#{pane_dead_status}") == "7" {
			break
		}
	}
	s := startTMCP(t, srv, "")

	var info paneInfo
	s.ok("get_pane_info", map[string]any{"paneId": pane}, &info)
	if !info.Dead || info.ExitStatus == nil || *info.ExitStatus != 7 {
		t.Errorf("get_pane_info of a pane whose command exited 7: dead %v, exitStatus %s; tmux says dead %s, status %q",
			info.Dead, status(info.ExitStatus), paneFormat(srv, pane, "#{pane_dead}"), paneFormat(srv, pane, "#{pane_dead_status}"))
	}
	var dead panesOut
	s.ok("list_panes", map[string]any{"dead": true}, &dead)
	if len(dead.Panes) == 0 || !dead.Panes[len(dead.Panes)-1].Dead {
		t.Errorf("list_panes dead=true: %+v, want the dead panes", dead.Panes)
	}
}

func TestGetPaneInfoNeverReportsSuccessForAPaneKilledByASignal(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	srv.Must("set-option", "-g", "remain-on-exit", "on")
	pane := newWindow(srv, "kill -9 $$")
	waitPane(t, srv, pane, "#{pane_dead}", "1")
	s := startTMCP(t, srv, "")

	var info paneInfo
	s.ok("get_pane_info", map[string]any{"paneId": pane}, &info)
	// tmux has no exit status for it (pane_dead_status is empty, the signal
	// is in pane_dead_signal): 0 would tell a model the command succeeded.
	if !info.Dead || info.ExitStatus != nil && *info.ExitStatus == 0 {
		t.Errorf("get_pane_info of a pane killed by SIGKILL: dead %v, exitStatus %s; tmux says status %q, signal %q; want no exitStatus (or 137), never 0",
			info.Dead, status(info.ExitStatus), paneFormat(srv, pane, "#{pane_dead_status}"), paneFormat(srv, pane, "#{pane_dead_signal}"))
	}
}

func TestGetPaneInfoReportsTheAlternateScreen(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := newWindow(srv, `printf '\033[?1049h'; sleep 60`)
	waitPane(t, srv, pane, "#{alternate_on}", "1")
	s := startTMCP(t, srv, "")

	var info paneInfo
	s.ok("get_pane_info", map[string]any{"paneId": pane}, &info)
	if !info.AlternateScreen {
		t.Errorf("get_pane_info of a pane on the alternate screen: alternateScreen false")
	}
	s.ok("get_pane_info", map[string]any{"paneId": mainPane(srv)}, &info)
	if info.AlternateScreen {
		t.Errorf("get_pane_info of a shell pane: alternateScreen true")
	}
}

func TestCapturePaneReturnsTheScreenOrHistoryOnceAndKeepsTheLastLines(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	// Typed before the shell's first prompt, the line is echoed ahead of
	// it, and the prompt lands on the front of the first output row.
	waitPrompt(t, srv, pane)
	srv.Must("send-keys", "-t", pane, "echo visible-marker; seq 1 60; echo hist-done", "Enter")
	waitScreen(t, srv, pane, "hist-done", func(l []string) bool { return hasLine(l, "hist-done") })
	s := startTMCP(t, srv, "")

	capture := func(args map[string]any) (string, captureOut) {
		t.Helper()
		args["paneId"] = pane
		res := s.call("capture_pane", args)
		text := paneText(t, "capture_pane", res)
		var out captureOut
		decodeStructured(t, "capture_pane", res, &out)
		if out.PaneID != pane {
			t.Errorf("capture_pane %v: paneId %q, want %s", args, out.PaneID, pane)
		}
		if n := len(strings.Split(text, "\n")); text != "" && out.Lines != n {
			t.Errorf("capture_pane %v: lines %d, but the text has %d", args, out.Lines, n)
		}
		return text, out
	}

	t.Run("visible", func(t *testing.T) {
		text, out := capture(map[string]any{})
		want := bareCapture(srv, pane)
		if text != strings.Join(want, "\n") || out.Truncated {
			t.Errorf("capture_pane: %q (truncated %v), want the screen %q", text, out.Truncated, strings.Join(want, "\n"))
		}
		if lines := strings.Split(text, "\n"); hasLine(lines, "1") || !hasLine(lines, "60") {
			t.Errorf("capture_pane of the screen: %q, want rows up to 60 and no history (1)", text)
		}
	})
	t.Run("history", func(t *testing.T) {
		text, out := capture(map[string]any{"history": true})
		want := bareCapture(srv, pane, "-S", "-")
		if text != strings.Join(want, "\n") || out.Truncated {
			t.Errorf("capture_pane history: %q (truncated %v), want %q", text, out.Truncated, strings.Join(want, "\n"))
		}
		if lines := strings.Split(text, "\n"); !hasLine(lines, "visible-marker") || !hasLine(lines, "1") || !hasLine(lines, "60") {
			t.Errorf("capture_pane history: %q, want visible-marker and 1 to 60", text)
		}
	})
	t.Run("rows", func(t *testing.T) {
		text, _ := capture(map[string]any{"startLine": -5, "endLine": -1})
		want := bareCapture(srv, pane, "-S", "-5", "-E", "-1")
		if text != strings.Join(want, "\n") || len(want) != 5 {
			t.Errorf("capture_pane rows -5..-1: %q, want %q (5 rows)", text, strings.Join(want, "\n"))
		}
	})
	t.Run("maxLines keeps the last lines", func(t *testing.T) {
		text, out := capture(map[string]any{"history": true, "maxLines": 10})
		full := bareCapture(srv, pane, "-S", "-")
		kept, dropped := full[len(full)-10:], full[:len(full)-10]
		droppedBytes := 0
		for _, l := range dropped {
			droppedBytes += len(l) + 1
		}
		if text != strings.Join(kept, "\n") {
			t.Errorf("capture_pane maxLines 10: %q, want the last 10 lines %q", text, strings.Join(kept, "\n"))
		}
		if !out.Truncated || out.DroppedLines != len(dropped) || out.DroppedBytes != droppedBytes || out.Lines != 10 {
			t.Errorf("capture_pane maxLines 10: %+v, want truncated, droppedLines %d, droppedBytes %d, lines 10", out, len(dropped), droppedBytes)
		}
	})
	t.Run("maxBytes keeps the last bytes", func(t *testing.T) {
		text, out := capture(map[string]any{"history": true, "maxBytes": 20})
		full := strings.Join(bareCapture(srv, pane, "-S", "-"), "\n")
		if len(text) > 20 || !strings.HasSuffix(full, text) || !out.Truncated || out.DroppedBytes == 0 {
			t.Errorf("capture_pane maxBytes 20: %q (%+v), want at most 20 bytes from the end, truncated", text, out)
		}
	})
}

func TestCapturePaneKeepsColourEscapesOnlyWhenAskedForStyles(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := newWindow(srv, `printf '\033[31mred\033[0m\n'; sleep 60`)
	waitScreen(t, srv, pane, "red", func(l []string) bool { return hasLine(l, "red") })
	s := startTMCP(t, srv, "")

	styled := paneText(t, "capture_pane", s.call("capture_pane", map[string]any{"paneId": pane, "styles": true}))
	if !strings.Contains(styled, "\x1b[31m") || !strings.Contains(styled, "red") {
		t.Errorf("capture_pane styles: %q, want the ESC[31m sequence before red", styled)
	}
	plain := paneText(t, "capture_pane", s.call("capture_pane", map[string]any{"paneId": pane}))
	if plain != "red" {
		t.Errorf("capture_pane without styles: %q, want just \"red\"", plain)
	}
}

func TestDisplayMessageExpandsAFormatForATarget(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	window := paneFormat(srv, pane, "#{window_id}")
	s := startTMCP(t, srv, "")

	cases := []struct {
		args   map[string]any
		target string
		want   string
	}{
		{map[string]any{"paneId": pane, "format": "id=#{pane_id} cmd=#{pane_current_command} ##hash"}, pane, "id=" + pane + " cmd=sh #hash"},
		{map[string]any{"format": "#{pane_id}"}, pane, pane},
		{map[string]any{"windowId": window, "format": "#{window_id} #{window_width}"}, window, window + " " + strconv.Itoa(tmuxtest.Width)},
		{map[string]any{"sessionName": "main", "format": "#{session_name}"}, "main", "main"},
	}
	for _, c := range cases {
		res := s.call("display_message", c.args)
		text := paneText(t, "display_message", res)
		var out struct {
			Target string `json:"target"`
		}
		decodeStructured(t, "display_message", res, &out)
		if text != c.want || out.Target != c.target {
			t.Errorf("display_message %v: %q for target %q, want %q for %q", c.args, text, out.Target, c.want, c.target)
		}
	}
}

func TestDisplayMessageReportsWhatItsBoundDropped(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	s := startTMCP(t, srv, "")

	// The pane id padded to 40000 cells: one line over the 32 KiB bound.
	res := s.call("display_message", map[string]any{"paneId": pane, "format": "#{p40000:pane_id}"})
	text := paneText(t, "display_message", res)
	var out struct {
		Target       string `json:"target"`
		Truncated    bool   `json:"truncated"`
		DroppedBytes int    `json:"droppedBytes"`
	}
	decodeStructured(t, "display_message", res, &out)
	if !out.Truncated || out.DroppedBytes == 0 || len(text)+out.DroppedBytes != 40000 {
		t.Errorf("display_message of 40000 bytes: %d returned, reply %+v; want truncated with the rest counted as dropped", len(text), out)
	}
}

func TestDisplayMessageRunsNoShellCommandUnderAnyTier(t *testing.T) {
	t.Parallel()
	for _, tier := range []string{"readonly", "mutating", "destructive"} {
		t.Run(tier, func(t *testing.T) {
			t.Parallel()
			srv := tmuxtest.New(t)
			pane := mainPane(srv)
			dir := t.TempDir()
			file := func(name string) string { return filepath.Join(dir, name) }
			option := func(name, target string) string {
				srv.Must("set-option", "-g", name, "#(touch "+file(target)+")")
				return name
			}
			cases := []struct{ format, file string }{
				{"#(touch " + file("direct") + ")", "direct"},
				{"#{E:" + option("@e2e_e", "via-E") + "}", "via-E"},
				{"#{T:" + option("@e2e_t", "via-T") + "}", "via-T"},
				{"#{=40;E:" + option("@e2e_trim", "via-trimmed-E") + "}", "via-trimmed-E"},
				{"#{?1,#{E:" + option("@e2e_cond", "via-conditional-E") + "},no}", "via-conditional-E"},
				{"#{s/x/y/;E:" + option("@e2e_subst", "via-substituted-E") + "}", "via-substituted-E"},
				{"#{E;s/x/y/:" + option("@e2e_after", "via-E-first") + "}", "via-E-first"},
				{"#{l:#(touch " + file("via-literal") + ")}", "via-literal"},
				{"#{S:#(touch " + file("via-sessions-loop") + ")}", "via-sessions-loop"},
			}
			s := startTMCP(t, srv, tier)
			for _, c := range cases {
				res := s.call("display_message", map[string]any{"paneId": pane, "format": c.format})
				t.Logf("display_message %q: error %v: %s", c.format, res.IsError, allText(res))
			}
			// A control client of the test's own runs a job the same way: once
			// its file appears, tmux has run the jobs queued before it.
			ctl := attachClient(t, srv, "main")
			fmt.Fprintf(ctl, "display-message -p '#(touch %s)'\n", file("control"))
			if !tmuxtest.WaitFor(settle, func() bool { return exists(file("control")) }) {
				t.Fatalf("tmux never ran the control job: the test cannot see a hole")
			}
			// The point: an absence. A job queued earlier may still be
			// finishing; this long is given to it to show.
			time.Sleep(300 * time.Millisecond)
			for _, c := range cases {
				if exists(file(c.file)) {
					t.Errorf("TMCP_SAFETY=%s: display_message %q ran a shell command (%s was created)", tier, c.format, c.file)
				}
			}
		})
	}
}

func TestSendKeysTypesALineAndPressesEnter(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	dir := t.TempDir()
	s := startTMCP(t, srv, "")

	var sent sentOut
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "echo typed > " + filepath.Join(dir, "typed")}, &sent)
	if sent.PaneID != pane || sent.Bytes != len("echo typed > "+filepath.Join(dir, "typed")) || !sent.Enter {
		t.Errorf("send_keys: %+v, want pane %s, the byte count, enter true", sent, pane)
	}
	waitFile(t, filepath.Join(dir, "typed"), "typed\n")
}

func TestSendKeysCtrlCInterruptsARunningCommand(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	s := startTMCP(t, srv, "")

	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "sleep 100"}, nil)
	waitPane(t, srv, pane, "#{pane_current_command}", "sleep")
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "C-c", "enter": false}, nil)
	waitPane(t, srv, pane, "#{pane_current_command}", "sh")
}

func TestSendKeysLiteralTypesAKeyNameAsText(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	file := filepath.Join(t.TempDir(), "literal")
	s := startTMCP(t, srv, "")

	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "cat > " + file}, nil)
	waitPane(t, srv, pane, "#{pane_current_command}", "cat")
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "C-c", "literal": true}, nil)
	waitFile(t, file, "C-c\n")
	if cmd := paneFormat(srv, pane, "#{pane_current_command}"); cmd != "cat" {
		t.Errorf("after literal C-c the pane runs %q, want cat still running (not interrupted)", cmd)
	}
	srv.Must("send-keys", "-t", pane, "C-d")
	waitPane(t, srv, pane, "#{pane_current_command}", "sh")
}

func TestSendKeysWithoutEnterLeavesTheLineUnrun(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	file := filepath.Join(t.TempDir(), "not-yet")
	s := startTMCP(t, srv, "")

	var sent sentOut
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "touch " + file, "enter": false}, &sent)
	if sent.Enter {
		t.Errorf("send_keys enter=false: reply says enter true")
	}
	waitScreen(t, srv, pane, "the typed line", func(l []string) bool {
		return strings.Contains(strings.Join(l, "\n"), "touch "+file)
	})
	if tmuxtest.WaitFor(300*time.Millisecond, func() bool { return exists(file) }) {
		t.Fatalf("send_keys enter=false ran the line: %s exists", file)
	}
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": ""}, nil)
	if !tmuxtest.WaitFor(settle, func() bool { return exists(file) }) {
		t.Fatalf("Enter after the typed line did not run it: %s missing", file)
	}
}

func TestPasteTextDeliversExactBytes(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	dir := t.TempDir()
	file, hole := filepath.Join(dir, "pasted"), filepath.Join(dir, "hole")
	s := startTMCP(t, srv, "")

	text := "tab\there; semi $HOME ~ \"dq\" 'sq' \\back #{pane_id} #(touch " + hole + ") ##\n" +
		"kill-server\n" +
		"utf-8 é ✓ and \\044 octal-looking\n"
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "cat > " + file}, nil)
	waitPane(t, srv, pane, "#{pane_current_command}", "cat")
	var sent sentOut
	s.ok("paste_text", map[string]any{"paneId": pane, "text": text}, &sent)
	if sent.PaneID != pane || sent.Bytes != len(text) {
		t.Errorf("paste_text: %+v, want pane %s and %d bytes", sent, pane, len(text))
	}
	srv.Must("send-keys", "-t", pane, "C-d")
	waitFile(t, file, text)
	if exists(hole) {
		t.Errorf("paste_text ran #(…): %s exists", hole)
	}
	if out := srv.Must("list-buffers", "-F", "#{buffer_name}"); strings.Contains(out, "tmcp") {
		t.Errorf("paste_text left its buffer behind: %q", out)
	}
}

func TestCreateSessionReportsTheNameTmuxGave(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hole := filepath.Join(dir, "hole")
	s := startTMCP(t, srv, "")

	cases := []struct {
		args     map[string]any
		wantName string
	}{
		{map[string]any{"name": "a:b.c", "command": "sh"}, "a_b_c"},
		{map[string]any{"name": "x#y"}, "x#y"},
		{map[string]any{"name": "h#{session_id}#(touch " + hole + ")"}, "h#{session_id}#(touch " + hole + ")"},
	}
	for _, c := range cases {
		var got createdOut
		s.ok("create_session", c.args, &got)
		if got.SessionName != c.wantName {
			t.Errorf("create_session %v: sessionName %q, want %q", c.args, got.SessionName, c.wantName)
		}
		if !slices.Contains(sessionNames(srv), c.wantName) {
			t.Errorf("create_session %v: tmux has sessions %q, want %q among them", c.args, sessionNames(srv), c.wantName)
			continue
		}
		target := got.PaneID
		if target == "" {
			t.Errorf("create_session %v: no paneId in %+v", c.args, got)
			continue
		}
		want := tmuxOne(srv, "display-message", "-p", "-t", target, "#{session_id} #{session_name} #{window_id} #{pane_id}")
		if have := fmt.Sprintf("%s %s %s %s", got.SessionID, got.SessionName, got.WindowID, got.PaneID); have != want {
			t.Errorf("create_session %v: ids %q, tmux says %q", c.args, have, want)
		}
	}

	var sized createdOut
	s.ok("create_session", map[string]any{"name": "sized", "windowName": "ed#1", "width": 100, "height": 30, "startDirectory": dir}, &sized)
	if sized.WindowName != "ed#1" {
		t.Errorf("create_session windowName ed#1: windowName %q", sized.WindowName)
	}
	if got := paneFormat(srv, sized.PaneID, "#{window_width}x#{window_height} #{window_name}"); got != "100x30 ed#1" {
		t.Errorf("create_session 100x30 window ed#1: tmux says %q", got)
	}
	waitPane(t, srv, sized.PaneID, "#{pane_current_path}", dir)
	if tmuxtest.WaitFor(300*time.Millisecond, func() bool { return exists(hole) }) {
		t.Errorf("create_session ran #(…) in a name: %s exists", hole)
	}

	msg := s.fail("create_session", map[string]any{"name": "sized"})
	if !strings.Contains(msg, "duplicate session") {
		t.Errorf("create_session of an existing name: %q, want tmux's 'duplicate session'", msg)
	}
}

func TestCreateWindowAddsAWindowWithoutSwitchingToIt(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	first := paneFormat(srv, "=main:", "#{window_id}")
	s := startTMCP(t, srv, "")

	var got createdOut
	s.ok("create_window", map[string]any{"sessionName": "main", "name": "w#1", "startDirectory": dir, "command": "exec sleep 300"}, &got)
	if got.SessionName != "main" || got.WindowName != "w#1" || got.WindowID == "" || got.WindowID == first {
		t.Fatalf("create_window: %+v, want a new window w#1 in main", got)
	}
	if w := tmuxOne(srv, "display-message", "-p", "-t", got.WindowID, "#{window_id} #{window_name} #{window_active} #{pane_id}"); w != got.WindowID+" w#1 0 "+got.PaneID {
		t.Errorf("create_window: tmux says %q, want %q (inactive)", w, got.WindowID+" w#1 0 "+got.PaneID)
	}
	if active := paneFormat(srv, "=main:", "#{window_id}"); active != first {
		t.Errorf("create_window switched the session to %s, want %s to stay active", active, first)
	}
	waitPane(t, srv, got.PaneID, "#{pane_current_command}", "sleep")
	waitPane(t, srv, got.PaneID, "#{pane_current_path}", dir)

	var defaulted createdOut
	s.ok("create_window", map[string]any{}, &defaulted)
	if defaulted.SessionName != "main" {
		t.Errorf("create_window with the only session omitted: %+v, want it in main", defaulted)
	}
}

func TestSplitWindowPlacesSizesAndStartsTheNewPane(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := startTMCP(t, srv, "")

	geometry := func(pane string) (left, top int) {
		f := strings.Fields(paneFormat(srv, pane, "#{pane_left} #{pane_top}"))
		left, _ = strconv.Atoi(f[0])
		top, _ = strconv.Atoi(f[1])
		return left, top
	}
	for _, c := range []struct {
		direction string
		where     func(ol, ot, nl, nt int) bool
	}{
		{"right", func(ol, ot, nl, nt int) bool { return nl > ol && nt == ot }},
		{"left", func(ol, ot, nl, nt int) bool { return nl < ol && nt == ot }},
		{"below", func(ol, ot, nl, nt int) bool { return nt > ot && nl == ol }},
		{"above", func(ol, ot, nl, nt int) bool { return nt < ot && nl == ol }},
		{"", func(ol, ot, nl, nt int) bool { return nt > ot && nl == ol }},
	} {
		orig := newWindow(srv, "sh")
		var got createdOut
		s.ok("split_window", map[string]any{"paneId": orig, "direction": c.direction}, &got)
		window := paneFormat(srv, orig, "#{window_id}")
		if got.WindowID != window || got.PaneID == "" || got.PaneID == orig {
			t.Errorf("split_window %q: %+v, want a new pane in %s", c.direction, got, window)
			continue
		}
		ol, ot := geometry(orig)
		nl, nt := geometry(got.PaneID)
		if !c.where(ol, ot, nl, nt) {
			t.Errorf("split_window %q: new pane at (%d,%d), original at (%d,%d)", c.direction, nl, nt, ol, ot)
		}
	}

	orig := newWindow(srv, "sh")
	var got createdOut
	s.ok("split_window", map[string]any{"paneId": orig, "direction": "right", "size": "20", "startDirectory": dir, "command": "exec sleep 300"}, &got)
	if w := paneFormat(srv, got.PaneID, "#{pane_width}"); w != "20" {
		t.Errorf("split_window size 20: new pane is %s wide", w)
	}
	waitPane(t, srv, got.PaneID, "#{pane_current_command}", "sleep")
	waitPane(t, srv, got.PaneID, "#{pane_current_path}", dir)
	if active := paneFormat(srv, orig, "#{pane_active}"); active != "1" {
		t.Errorf("split_window made the new pane active; the original should stay active")
	}

	for _, bad := range []map[string]any{
		{"paneId": orig, "direction": "sideways"},
		{"paneId": orig, "size": "lots"},
	} {
		if msg := s.fail("split_window", bad); !strings.Contains(msg, "sideways") && !strings.Contains(msg, "lots") {
			t.Errorf("split_window %v: %q, want the bad value named", bad, msg)
		}
	}
}

func TestRenameSessionAndWindowReportTheNewName(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	hole := filepath.Join(t.TempDir(), "hole")
	window := paneFormat(srv, "=main:", "#{window_id}")
	s := startTMCP(t, srv, "")

	var renamed struct {
		Name string `json:"name"`
	}
	s.ok("rename_session", map[string]any{"sessionName": "main", "newName": "renamed#1"}, &renamed)
	if renamed.Name != "renamed#1" || !reflect.DeepEqual(sessionNames(srv), []string{"renamed#1"}) {
		t.Errorf("rename_session to renamed#1: reply %q, tmux has %q", renamed.Name, sessionNames(srv))
	}
	s.ok("rename_session", map[string]any{"newName": "r:x"}, &renamed)
	if renamed.Name != "r_x" || !reflect.DeepEqual(sessionNames(srv), []string{"r_x"}) {
		t.Errorf("rename_session to r:x: reply %q, tmux has %q; want r_x", renamed.Name, sessionNames(srv))
	}

	newName := "logs#(touch " + hole + ")"
	s.ok("rename_window", map[string]any{"windowId": window, "newName": newName}, &renamed)
	if got := paneFormat(srv, window, "#{window_name}"); renamed.Name != newName || got != newName {
		t.Errorf("rename_window to %q: reply %q, tmux says %q", newName, renamed.Name, got)
	}
	if tmuxtest.WaitFor(300*time.Millisecond, func() bool { return exists(hole) }) {
		t.Errorf("rename_window ran #(…) in the name: %s exists", hole)
	}
}

func TestTextStartingWithADashIsTextNotAnOption(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	window := paneFormat(srv, pane, "#{window_id}")
	file := filepath.Join(t.TempDir(), "dashes")
	s := startTMCP(t, srv, "")

	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "cat > " + file}, nil)
	waitPane(t, srv, pane, "#{pane_current_command}", "cat")
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "-rf"}, nil)
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "-l", "literal": true}, nil)
	s.ok("send_keys_batch", map[string]any{"paneId": pane, "keys": []string{"-t", "Enter"}}, nil)
	srv.Must("send-keys", "-t", pane, "C-d")
	waitFile(t, file, "-rf\n-l\n-t\n")

	var renamed struct {
		Name string `json:"name"`
	}
	s.ok("rename_window", map[string]any{"windowId": window, "newName": "-x"}, &renamed)
	if got := paneFormat(srv, window, "#{window_name}"); renamed.Name != "-x" || got != "-x" {
		t.Errorf("rename_window to -x: reply %q, tmux says %q", renamed.Name, got)
	}
	s.ok("rename_session", map[string]any{"sessionName": "main", "newName": "-s"}, &renamed)
	if renamed.Name != "-s" || !reflect.DeepEqual(sessionNames(srv), []string{"-s"}) {
		t.Errorf("rename_session to -s: reply %q, tmux has %q", renamed.Name, sessionNames(srv))
	}

	// A command starting with "-" is the pane's command, not tmux options
	// (the shell then fails on it; the dead pane stays to be read).
	srv.Must("set-option", "-g", "remain-on-exit", "on")
	var made struct {
		PaneID string `json:"paneId"`
	}
	s.ok("create_window", map[string]any{"sessionName": "-s", "command": "-d"}, &made)
	if got := paneFormat(srv, made.PaneID, "#{pane_start_command}"); got != `"-d"` && got != "-d" {
		t.Errorf("create_window with command -d: the pane started %q, want -d", got)
	}
}

func TestRenameSessionRenamesTheNamedSessionAmongSeveral(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	srv.Must("new-session", "-d", "-s", "other", "sh")
	srv.Must("new-session", "-d", "-s", "third", "sh")
	s := startTMCP(t, srv, "")

	ids := map[string]string{}
	for _, name := range []string{"main", "other", "third"} {
		ids[name] = tmuxOne(srv, "display-message", "-p", "-t", "="+name+":", "#{session_id}")
	}
	for _, name := range []string{"main", "other", "third"} {
		var renamed struct {
			Name string `json:"name"`
		}
		s.ok("rename_session", map[string]any{"sessionName": name, "newName": name + "-renamed"}, &renamed)
		got := tmuxOne(srv, "display-message", "-p", "-t", ids[name]+":", "#{session_name}")
		if renamed.Name != name+"-renamed" || got != name+"-renamed" {
			t.Errorf("rename_session %s: reply %q, tmux now names %s %q; sessions %q", name, renamed.Name, ids[name], got, sessionNames(srv))
		}
	}
}

func TestKillToolsRemoveExactlyTheirTarget(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	first := mainPane(srv)
	second := tmuxOne(srv, "split-window", "-d", "-P", "-F", "#{pane_id}", "-t", first, "sh")
	window := tmuxOne(srv, "new-window", "-d", "-P", "-F", "#{window_id}", "-t", "=main:", "sh")
	srv.Must("new-session", "-d", "-s", "doom", "sh")
	srv.Must("new-session", "-d", "-s", "doomed", "sh")
	s := startTMCP(t, srv, "destructive")

	var killed struct {
		Killed string `json:"killed"`
	}
	s.ok("kill_pane", map[string]any{"paneId": second}, &killed)
	if ids := paneIDs(srv); killed.Killed != second || slices.Contains(ids, second) || !slices.Contains(ids, first) {
		t.Errorf("kill_pane %s: reply %q, panes left %v", second, killed.Killed, ids)
	}
	s.ok("kill_window", map[string]any{"windowId": window}, &killed)
	if ws := tmuxOne(srv, "list-windows", "-a", "-F", "#{window_id}"); killed.Killed != window || strings.Contains(ws+"\n", window+"\n") {
		t.Errorf("kill_window %s: reply %q, windows left %q", window, killed.Killed, ws)
	}
	s.ok("kill_session", map[string]any{"sessionName": "doom"}, &killed)
	if names := sessionNames(srv); killed.Killed != "doom" || slices.Contains(names, "doom") || !slices.Contains(names, "doomed") {
		t.Errorf("kill_session doom: reply %q, sessions left %v (doomed must stay)", killed.Killed, names)
	}
}

func TestKillServerNeedsConfirmAndThenEndsTheServer(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "destructive")

	msg := s.fail("kill_server", nil)
	if !strings.Contains(msg, "confirm") {
		t.Errorf("kill_server without confirm: %q, want it to ask for confirm: true", msg)
	}
	if _, err := srv.Tmux("has-session", "-t", "=main"); err != nil {
		t.Fatalf("kill_server without confirm ended the server: %v", err)
	}
	var killed struct {
		Killed string `json:"killed"`
	}
	s.ok("kill_server", map[string]any{"confirm": true}, &killed)
	if killed.Killed != srv.Socket {
		t.Errorf("kill_server: killed %q, want the socket %s", killed.Killed, srv.Socket)
	}
	pid := srv.PID()
	if !tmuxtest.WaitFor(settle, func() bool { return ended(pid) }) {
		t.Fatalf("kill_server: tmux server %d still runs", pid)
	}
	if out, err := srv.Tmux("list-sessions"); err == nil {
		t.Errorf("kill_server: tmux still answers: %q", out)
	}
	var after sessionsOut
	s.ok("list_sessions", nil, &after)
	if after.Total != 0 {
		t.Errorf("list_sessions after kill_server: %+v, want none", after)
	}
}

func TestWithNoServerRunningCallsStartNoTmuxServer(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.Empty(t)
	// A tmux server started by tmcp would read the user's configuration:
	// this one leaves a mark.
	home := t.TempDir()
	marker := filepath.Join(home, "a-server-started")
	if err := os.WriteFile(filepath.Join(home, ".tmux.conf"), []byte("run-shell 'touch "+marker+"'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startTMCPWithEnv(t, srv, "", []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")})

	for range 3 {
		var sessions sessionsOut
		s.ok("list_sessions", nil, &sessions)
		if sessions.Total != 0 {
			t.Errorf("list_sessions with no server: %+v, want none", sessions)
		}
		var info serverInfo
		s.ok("get_server_info", nil, &info)
		if info.Running || info.ControlMode {
			t.Errorf("get_server_info with no server: %+v, want not running, no control mode", info)
		}
		time.Sleep(300 * time.Millisecond) // past tmcp's attach retry delay
	}
	if exists(marker) {
		t.Errorf("calls with no tmux server running started one (it read ~/.tmux.conf and ran its run-shell)")
	}
	if exists(srv.Socket) {
		t.Errorf("calls with no tmux server running created the socket %s", srv.Socket)
	}
}

func TestCreateSessionStartsTheServerWhenNoneRuns(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.Empty(t)
	s := startTMCP(t, srv, "")

	var got createdOut
	s.ok("create_session", map[string]any{"name": "first", "command": "sh"}, &got)
	if got.SessionName != "first" {
		t.Errorf("create_session on an empty socket: %+v", got)
	}
	defer func() { _, _ = srv.Tmux("kill-server") }()
	if names := sessionNames(srv); !reflect.DeepEqual(names, []string{"first"}) {
		t.Errorf("create_session on an empty socket: tmux has %q", names)
	}
	var info serverInfo
	s.ok("get_server_info", nil, &info)
	if !info.Running || info.Sessions != 1 {
		t.Errorf("get_server_info after create_session: %+v", info)
	}
}

func TestSafetyTierDecidesWhichToolsAreOffered(t *testing.T) {
	t.Parallel()
	// The tier of a tool follows from its annotations; tools added after
	// this test was written are placed by theirs.
	var readOnly, nonDestructive, everything []string
	for _, tool := range allTools(t) {
		everything = append(everything, tool.Name)
		a := tool.Annotations
		if a != nil && a.ReadOnlyHint {
			readOnly = append(readOnly, tool.Name)
		}
		if a != nil && (a.ReadOnlyHint || a.DestructiveHint != nil && !*a.DestructiveHint) {
			nonDestructive = append(nonDestructive, tool.Name)
		}
	}
	slices.Sort(readOnly)
	slices.Sort(nonDestructive)
	slices.Sort(everything)
	cases := []struct {
		tier     string
		want     []string // exactly these
		includes []string
		refused  []string // tools that must be unknown
		report   string   // tier get_server_info reports
	}{
		{"readonly", readOnly, readTools, sorted(writeTools, killTools), "readonly"},
		{"", nonDestructive, sorted(readTools, writeTools), killTools, "mutating"},
		{"mutating", nonDestructive, sorted(readTools, writeTools), killTools, "mutating"},
		{"destructive", everything, sorted(readTools, writeTools, killTools), nil, "destructive"},
		{"destructve", readOnly, readTools, sorted(writeTools, killTools), "readonly"},
		{"all", readOnly, readTools, sorted(writeTools, killTools), "readonly"},
	}
	for _, c := range cases {
		t.Run("TMCP_SAFETY="+c.tier, func(t *testing.T) {
			t.Parallel()
			srv := tmuxtest.New(t)
			s := startTMCP(t, srv, c.tier)
			got := s.toolNames()
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("tools/list: %v, want %v", got, c.want)
			}
			for _, name := range c.includes {
				if !slices.Contains(got, name) {
					t.Errorf("tools/list lacks %s: %v", name, got)
				}
			}
			for _, name := range c.refused {
				if slices.Contains(got, name) {
					t.Errorf("tools/list offers %s above the tier", name)
				}
			}
			var info serverInfo
			s.ok("get_server_info", nil, &info)
			if info.Tier != c.report {
				t.Errorf("get_server_info: tier %q, want %q", info.Tier, c.report)
			}
			pane := mainPane(srv)
			for _, name := range c.refused {
				args := map[string]any{"paneId": pane, "keys": "echo hi", "text": "hi", "confirm": true, "sessionName": "main", "newName": "x"}
				res, err := s.callErr(name, args)
				switch {
				case err != nil:
					if !strings.Contains(err.Error(), "unknown tool") {
						t.Errorf("%s above the tier: error %v, want unknown tool", name, err)
					}
				case res.IsError:
					if !strings.Contains(allText(res), "unknown tool") {
						t.Errorf("%s above the tier: %q, want unknown tool", name, allText(res))
					}
				default:
					t.Errorf("%s above the tier ran: %s", name, allText(res))
				}
			}
			if _, err := srv.Tmux("has-session", "-t", "=main"); err != nil {
				t.Errorf("the session is gone after refused calls: %v", err)
			}
		})
	}
}

func TestEveryToolCarriesAnnotationsAndAnOutputSchema(t *testing.T) {
	t.Parallel()
	for _, tool := range allTools(t) {
		a := tool.Annotations
		// The display title is the tool's own, not the annotations' too
		// (the same words twice in every tools/list).
		// Only wait_for_ready reaches past tmux (the network it probes).
		openWorld := tool.Name == "wait_for_ready"
		if a == nil || a.Title != "" || tool.Title == "" || a.OpenWorldHint == nil || *a.OpenWorldHint != openWorld || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("tool %s: title %q, annotations %+v, output schema %v, description %q", tool.Name, tool.Title, a, tool.OutputSchema != nil, tool.Description)
			continue
		}
		read := slices.Contains(readTools, tool.Name)
		kill := slices.Contains(killTools, tool.Name)
		if !read && !kill && !slices.Contains(writeTools, tool.Name) {
			continue // a tool this file does not know: its hints are its own
		}
		if a.ReadOnlyHint != read || (a.DestructiveHint != nil && *a.DestructiveHint) != kill {
			t.Errorf("tool %s: readOnlyHint %v, destructiveHint %v; want %v, %v", tool.Name, a.ReadOnlyHint, a.DestructiveHint, read, kill)
		}
	}
}

func TestErrorsNameTheTargetAndWhatToCallNext(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	first := mainPane(srv)
	s := startTMCP(t, srv, "destructive")

	t.Run("a missing pane", func(t *testing.T) {
		s := s.on(t)
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"get_pane_info", nil},
			{"capture_pane", nil},
			{"send_keys", map[string]any{"keys": "echo hi"}},
			{"paste_text", map[string]any{"text": "hi"}},
			{"split_window", nil},
			{"display_message", map[string]any{"format": "#{pane_id}"}},
			{"kill_pane", nil},
		} {
			args := map[string]any{"paneId": "%999"}
			for k, v := range c.args {
				args[k] = v
			}
			res := s.call(c.tool, args)
			msg := allText(res)
			if !res.IsError {
				t.Errorf("%s on the missing pane %%999 succeeded: %s", c.tool, msg)
				continue
			}
			if !strings.Contains(msg, "%999") || !strings.Contains(msg, "list_panes") {
				t.Errorf("%s on %%999: %q, want it to name %%999 and list_panes", c.tool, msg)
			}
		}
		msg := s.fail("kill_window", map[string]any{"windowId": "@999"})
		if !strings.Contains(msg, "@999") || !strings.Contains(msg, "list_windows") {
			t.Errorf("kill_window on @999: %q, want it to name @999 and list_windows", msg)
		}
		msg = s.fail("kill_session", map[string]any{"sessionName": "nosuch"})
		if !strings.Contains(msg, "nosuch") || !strings.Contains(msg, "list_sessions") {
			t.Errorf("kill_session on nosuch: %q, want it to name nosuch and list_sessions", msg)
		}
	})

	t.Run("an invalid pane id", func(t *testing.T) {
		s := s.on(t)
		for _, id := range []string{"3", "main:0.0", "%1;kill-server", "%1\nkill-server", "{last}"} {
			msg := s.fail("send_keys", map[string]any{"paneId": id, "keys": "echo hi"})
			if !strings.Contains(msg, "paneId") || !strings.Contains(msg, "list_panes") {
				t.Errorf("send_keys paneId %q: %q, want it refused naming paneId and list_panes", id, msg)
			}
		}
		if _, err := srv.Tmux("has-session", "-t", "=main"); err != nil {
			t.Fatalf("the server is gone after invalid ids: %v", err)
		}
		if lines := bareCapture(srv, first); strings.Contains(strings.Join(lines, "\n"), "echo hi") {
			t.Errorf("an invalid paneId still typed into %s: %q", first, lines)
		}
	})

	t.Run("an omitted pane among several", func(t *testing.T) {
		s := s.on(t)
		second := tmuxOne(srv, "split-window", "-d", "-P", "-F", "#{pane_id}", "-t", first, "sh")
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"send_keys", map[string]any{"keys": "echo hi"}},
			{"capture_pane", nil},
			{"get_pane_info", nil},
			{"kill_pane", nil},
		} {
			tool := c.tool
			msg := s.fail(tool, c.args)
			if !strings.Contains(msg, "paneId") || !strings.Contains(msg, first) || !strings.Contains(msg, second) || !strings.Contains(msg, "list_panes") {
				t.Errorf("%s without paneId among %s and %s: %q, want paneId, both ids and list_panes", tool, first, second, msg)
			}
		}
		srv.Must("new-session", "-d", "-s", "other", "sh")
		msg := s.fail("create_window", nil)
		if !strings.Contains(msg, "sessionName") || !strings.Contains(msg, "main") || !strings.Contains(msg, "other") {
			t.Errorf("create_window without sessionName among two: %q, want sessionName and both names", msg)
		}
	})
}

// outcome is what one concurrent call came back with.
type outcome struct {
	name string
	res  *mcp.CallToolResult
	err  error
	took time.Duration
}

func TestAStoppedTmuxFailsCallsByTheDeadlineWhileTmcpKeepsAnswering(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	s := startTMCP(t, srv, "")
	s.ok("list_sessions", nil, nil)

	srv.Stop()
	t.Cleanup(srv.Continue)
	start := time.Now()
	results := make(chan outcome, 5)
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"list_sessions", nil},
		{"capture_pane", map[string]any{"paneId": pane}},
		{"list_panes", nil},
		{"get_pane_info", map[string]any{"paneId": pane}},
		{"list_windows", nil},
	} {
		go func() {
			res, err := s.callErr(c.name, c.args)
			results <- outcome{c.name, res, err, time.Since(start)}
		}()
	}
	// While both hang on tmux, tmcp still answers what needs no tmux.
	for _, at := range []time.Duration{100 * time.Millisecond, time.Second, 3 * time.Second} {
		time.Sleep(time.Until(start.Add(at))) // the point: asked at these moments of the stall
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := s.cs.ListTools(ctx, nil)
		if err == nil {
			err = s.cs.Ping(ctx, nil)
		}
		cancel()
		if took := time.Since(t0); err != nil || took > time.Second {
			t.Errorf("tools/list and ping %v into the stall: took %v, error %v; want an answer within 1s", at, took, err)
		}
	}
	for range cap(results) {
		o := <-results
		switch {
		case o.err != nil:
			t.Errorf("%s on a stopped tmux: protocol error %v after %v, want a tool error", o.name, o.err, o.took)
		case !o.res.IsError:
			t.Errorf("%s on a stopped tmux succeeded after %v: %s", o.name, o.took, allText(o.res))
		default:
			msg := allText(o.res)
			if !strings.Contains(msg, "not answering") && !strings.Contains(msg, "no answer from tmux") {
				t.Errorf("%s on a stopped tmux: %q, want it to say tmux is not answering", o.name, msg)
			}
			if o.name == "list_sessions" && !strings.Contains(msg, "list-sessions") && !strings.Contains(msg, "listing sessions") {
				t.Errorf("list_sessions on a stopped tmux: %q, want it to name list-sessions", msg)
			}
		}
		if bound := commandTimeout + stallSlack; o.took > bound {
			t.Errorf("%s on a stopped tmux took %v, want within %v (the command timeout)", o.name, o.took, bound)
		}
		t.Logf("%s on a stopped tmux: %v", o.name, o.took)
	}

	srv.Continue()
	var after sessionsOut
	s.ok("list_sessions", nil, &after)
	if len(after.Sessions) != 1 || after.Sessions[0].SessionName != "main" {
		t.Errorf("list_sessions after SIGCONT: %+v, want main", after)
	}
	text := paneText(t, "capture_pane", s.call("capture_pane", map[string]any{"paneId": pane}))
	if want := strings.Join(bareCapture(srv, pane), "\n"); text != want {
		t.Errorf("capture_pane after SIGCONT: %q, want %q", text, want)
	}
}

func TestAfterTmuxRestartsCallsSucceedAndGoOverControlModeAgain(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	script, log := tmuxWrapper(t)
	s := startTMCP(t, srv, "", "-binary", script)
	s.ok("list_sessions", nil, nil)

	srv.Kill()
	srv.Start()
	res := s.call("list_sessions", nil)
	if res.IsError || strings.Contains(allText(res), "closed") {
		t.Fatalf("list_sessions after a tmux restart: %s", allText(res))
	}
	var sessions sessionsOut
	decodeStructured(t, "list_sessions", res, &sessions)
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].SessionName != "main" {
		t.Errorf("list_sessions after a tmux restart: %+v, want the new main", sessions)
	}
	var info serverInfo
	s.ok("get_server_info", nil, &info)
	if !info.ControlMode {
		t.Errorf("get_server_info after a tmux restart: controlMode false")
	}

	// Steady state: calls go over the control client, so no tmux process
	// is started for them.
	persistent := children(s.pid())
	before := invocations(log)
	seen := childrenDuring(s.pid(), persistent, func() {
		for range 20 {
			s.ok("list_sessions", nil, nil)
		}
	})
	after := invocations(log)
	if len(after) != len(before) {
		t.Errorf("20 list_sessions after a restart started %d tmux processes, want 0: %q", len(after)-len(before), after[len(before):])
	}
	for pid, cl := range seen {
		t.Errorf("a child process came and went during the calls: %d %q (persistent: %v)", pid, cl, persistent)
	}
	if len(persistent) == 0 {
		t.Errorf("tmcp has no child process: where is its control client?")
	}
	s.ok("get_server_info", nil, &info)
	if !info.ControlMode {
		t.Errorf("get_server_info after the calls: controlMode false")
	}
}

// unread returns how many bytes wait, unread, in the pipes the processes
// have as standard input: a tmux client hands its stdin to the server,
// so a command to a stopped server stays there.
func unread(pids []int) int {
	var n int
	for _, pid := range pids {
		in, err := os.OpenFile("/proc/"+strconv.Itoa(pid)+"/fd/0", os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		var k int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, in.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&k))); e == 0 {
			n += int(k)
		}
		in.Close()
	}
	return n
}

func TestTmcpExitsPromptlyWhileTmuxIsStoppedAndLeavesNoProcess(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		midCall bool // a call is waiting on the stopped tmux when tmcp is told to go
		sigint  bool // SIGINT instead of closing stdin
	}{
		{"stdin closed after a failed call", false, false},
		{"SIGINT after a failed call", false, true},
		{"stdin closed during a call", true, false},
		{"SIGINT during a call", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := tmuxtest.New(t)
			s := startTMCPOwningStdin(t, srv, "")
			s.ok("list_sessions", nil, nil)
			pid := s.pid()

			srv.Stop()
			t.Cleanup(srv.Continue)
			inFlight := make(chan error, 1)
			if c.midCall {
				go func() {
					_, err := s.callErr("list_sessions", nil)
					inFlight <- err
				}()
				// The call has reached tmux once its command waits in the
				// input of one of tmcp's tmux clients.
				if !tmuxtest.WaitFor(settle, func() bool { return unread(descendants(pid)) > 0 }) {
					t.Fatalf("the call never reached tmux: no command waits in the input of tmcp's tmux clients")
				}
			} else {
				s.fail("list_sessions", nil)
				inFlight <- nil
			}
			kids := descendants(pid)
			if len(kids) == 0 {
				t.Fatalf("tmcp %d has no child process: no control client to check", pid)
			}
			lines := map[int]string{}
			for _, k := range kids {
				lines[k] = cmdline(k)
			}

			start := time.Now()
			if c.sigint {
				if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
			} else {
				s.stdin.Close()
			}
			exited := tmuxtest.WaitFor(8*time.Second, func() bool { return ended(pid) })
			took := time.Since(start)
			if !exited {
				t.Fatalf("tmcp still runs %v after being told to exit", took)
			}
			if took > time.Second {
				t.Errorf("tmcp took %v to exit with tmux stopped, want under 1s", took)
			}
			t.Logf("tmcp exited in %v", took)
			for _, k := range kids {
				if !ended(k) && strings.Contains(cmdline(k), srv.Socket) {
					t.Errorf("tmcp's child %d (%s) outlived it", k, lines[k])
				}
			}
			select {
			case <-inFlight:
			case <-time.After(5 * time.Second):
				t.Errorf("the call in flight never returned to the client")
			}
		})
	}
}

// Make sure the JSON helpers stay honest about field names: a reply that
// carries a field this file does not know is fine, but the ones it reads
// must be there.
func TestReplyFieldsAreTheDocumentedNames(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	pane := mainPane(srv)
	check := func(tool string, args map[string]any, fields ...string) {
		t.Helper()
		var m map[string]any
		decodeStructured(t, tool, s.ok(tool, args, nil), &m)
		for _, f := range fields {
			if _, ok := m[f]; !ok {
				b, _ := json.Marshal(m)
				t.Errorf("%s: no field %q in %s", tool, f, b)
			}
		}
	}
	check("list_sessions", nil, "sessions", "total")
	check("list_windows", nil, "windows", "total")
	check("list_panes", nil, "panes", "total")
	check("get_server_info", nil, "version", "socketPath", "sessions", "windows", "panes", "tier", "controlMode", "running")
	check("get_pane_info", map[string]any{"paneId": pane}, "paneId", "command", "pid", "dead", "width", "height", "path", "historySize", "inCopyMode", "alternateScreen", "isCaller")
	check("capture_pane", map[string]any{"paneId": pane}, "paneId", "lines", "truncated")
	check("display_message", map[string]any{"paneId": pane, "format": "x"}, "target")
	check("send_keys", map[string]any{"paneId": pane, "keys": "true"}, "paneId", "bytes")
	check("create_window", map[string]any{"sessionName": "main"}, "sessionId", "sessionName", "windowId", "windowIndex", "windowName", "paneId")
}

func TestSendKeysOfAKeyNameOrOneLetterIsNotTakenForTheEchoOfALaterLine(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	tty := openTTY(t, srv, pane)
	s := startTMCP(t, srv, "")

	// With echo off, only the lines the test writes come out of the pane.
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "stty -echo; cat >/dev/null"}, nil)
	waitPane(t, srv, pane, "#{pane_current_command}", "cat")
	for _, c := range []struct{ keys, line, then string }{
		{"y", "ready", "cat"},
		{"C-c", "press C-c", "sh"},
	} {
		s.ok("send_keys", map[string]any{"paneId": pane, "keys": c.keys, "enter": false}, nil)
		// The terminal takes C-c on its own time, and as it does it drops
		// output not yet read from it: the line is written once the key
		// has ended cat, or the kernel may throw it away.
		waitPane(t, srv, pane, "#{pane_current_command}", c.then)
		start, _ := s.since(map[string]any{"paneId": pane})
		writeTTY(t, tty, "\r\n"+c.line+"\r\n")
		r, text := s.waitText(map[string]any{"paneId": pane, "cursor": start.Cursor, "patterns": []string{c.line}, "timeoutSeconds": 3})
		if r.Outcome != "matched" || r.Matched != c.line {
			t.Errorf("after send_keys %q, wait for the line %q: outcome %s matched %q reason %q cursorReset %v, want it matched (not taken for the echo); text %q",
				c.keys, c.line, r.Outcome, r.Matched, r.Reason, r.CursorReset, text)
		}
	}
}
