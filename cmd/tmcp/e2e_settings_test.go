package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// setting is one item of the settings tools' replies.
type setting struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Inherited bool   `json:"inherited"`
	Removed   bool   `json:"removed"`
}

type settings struct {
	Items   []setting `json:"items"`
	Dropped int       `json:"dropped"`
}

func (s settings) find(name string) (setting, bool) {
	for _, it := range s.Items {
		if it.Name == name {
			return it, true
		}
	}
	return setting{}, false
}

func TestSettingsSetOptionAtEveryScopeIsReadBackByTmux(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	marker := filepath.Join(t.TempDir(), "ran")
	hostile := "#{session_name} #(touch " + marker + ") %d $HOME ~ ; \"q\" 'x'"
	cases := []struct {
		scope, target, name, value string
		readBack                   []string // bare tmux show-options flags
	}{
		{"server", "", "escape-time", "42", []string{"-s"}},
		{"session", "main", "status-left", hostile, []string{"-t", "=main:"}},
		{"session", "", "@global-probe", hostile, []string{"-g"}},
		{"window", "@0", "mode-keys", "vi", []string{"-w", "-t", "@0"}},
		{"window", "", "automatic-rename", "off", []string{"-w", "-g"}},
		{"pane", "%0", "allow-rename", "on", []string{"-p", "-t", "%0"}},
		{"pane", "", "@pane-probe", "p v", []string{"-p", "-t", "%0"}},
	}
	for _, c := range cases {
		args := map[string]any{"scope": c.scope, "name": c.name, "value": c.value}
		if c.target != "" {
			args["target"] = c.target
		}
		var out settings
		s.ok("set_option", args, &out)
		if len(out.Items) != 1 || out.Items[0] != (setting{Name: c.name, Value: c.value}) {
			t.Errorf("set_option %v answered %+v, want the value in force", args, out)
		}
		got := strings.TrimSuffix(srv.Must(append(append([]string{"show-options", "-v"}, c.readBack...), c.name)...), "\n")
		if got != c.value {
			t.Errorf("%s option %s on %q: tmux holds %q, want %q", c.scope, c.name, c.target, got, c.value)
		}
		delete(args, "value")
		s.ok("show_option", args, &out)
		if len(out.Items) != 1 || out.Items[0].Value != c.value || out.Items[0].Inherited {
			t.Errorf("show_option %v: %+v, want %q set here", args, out, c.value)
		}
	}
	if exists(marker) {
		t.Errorf("a value holding #(touch …) ran the command")
	}

	// Unset: the session falls back to the global value, marked inherited.
	var out settings
	s.ok("set_option", map[string]any{"scope": "session", "target": "main", "name": "status-left", "unset": true}, &out)
	global := strings.TrimSuffix(srv.Must("show-options", "-gv", "status-left"), "\n")
	if len(out.Items) != 1 || !out.Items[0].Inherited || out.Items[0].Value != global {
		t.Errorf("after unsetting status-left of main: %+v, want the global %q, inherited", out, global)
	}
	if local := srv.Must("show-options", "-t", "=main:", "status-left"); local != "" {
		t.Errorf("tmux still holds a local status-left: %q", local)
	}
	s.ok("set_option", map[string]any{"scope": "session", "name": "@global-probe", "unset": true}, &out)
	if len(out.Items) != 0 {
		t.Errorf("an unset user option is reported as %+v", out)
	}
	if _, err := srv.Tmux("show-options", "-g", "@global-probe"); err == nil {
		t.Errorf("@global-probe is still set in tmux")
	}
}

func TestSettingsShowOptionListsAndMarksInherited(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("set-option", "-t", "=main:", "base-index", "3")
	s := startTMCP(t, srv, "readonly")
	var out settings
	s.ok("show_option", map[string]any{"scope": "session", "target": "main"}, &out)
	base, ok1 := out.find("base-index")
	status, ok2 := out.find("status")
	if !ok1 || base.Value != "3" || base.Inherited || !ok2 || !status.Inherited || out.Dropped != 0 || len(out.Items) < 20 {
		t.Errorf("show_option of session main: base-index %+v, status %+v, %d items, dropped %d", base, status, len(out.Items), out.Dropped)
	}
	s.ok("show_option", map[string]any{"scope": "server", "name": "command-alias"}, &out)
	if len(out.Items) < 2 || !strings.HasPrefix(out.Items[0].Name, "command-alias[") {
		t.Errorf("an array option: %+v", out)
	}
}

func TestSettingsOptionErrorsNameTheTargetAndTheNextCall(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("new-window", "-d", "-t", "=main:", "sh")
	s := startTMCP(t, srv, "")
	cases := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"show_option", map[string]any{"scope": "session", "name": "no-such-option"}, []string{"invalid option", "no-such-option", "show_option without name"}},
		{"set_option", map[string]any{"scope": "session", "target": "main", "name": "no-such-option", "value": "1"}, []string{"invalid option", "session main"}},
		{"show_option", map[string]any{"scope": "session", "target": "nosuch", "name": "status"}, []string{"nosuch", "list_sessions"}},
		{"show_option", map[string]any{"scope": "window", "target": "@77", "name": "mode-keys"}, []string{"@77", "list_windows"}},
		{"show_option", map[string]any{"scope": "pane", "name": "allow-rename"}, []string{"paneId is required", "list_panes"}},
		{"set_option", map[string]any{"scope": "pane", "target": "%99", "name": "allow-rename", "value": "on"}, []string{"%99", "list_panes"}},
		{"show_option", map[string]any{"scope": "pane", "target": "3", "name": "allow-rename"}, []string{"not a pane id"}},
		{"show_option", map[string]any{"scope": "galaxy"}, []string{"galaxy", "server, session, window, pane"}},
		{"show_option", map[string]any{"scope": "server", "target": "main"}, []string{"no target"}},
		{"set_option", map[string]any{"scope": "session", "name": "status left", "value": "x"}, []string{"not an option name"}},
		{"set_option", map[string]any{"scope": "session", "target": "main", "name": "status", "value": "maybe"}, []string{"status", "maybe"}},
		{"set_option", map[string]any{"scope": "session", "name": "status", "value": "on", "unset": true}, []string{"not both"}},
	}
	for _, c := range cases {
		msg := s.fail(c.tool, c.args)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s %v: %q does not say %q", c.tool, c.args, msg, w)
			}
		}
	}
	before := tmuxOne(srv, "show-options", "-gwv", "window-size")
	// tmux takes any unambiguous prefix of an option's name.
	for _, name := range []string{"window-size", "window-siz", "window-si", "window-siz[0]"} {
		for _, scope := range []string{"window", "session", "server"} {
			msg := s.fail("set_option", map[string]any{"scope": scope, "name": name, "value": "manual"})
			if !strings.Contains(msg, "refusing") || !strings.Contains(msg, "scope window, target @N") {
				t.Errorf("%s manual at %s scope: %q", name, scope, msg)
			}
		}
	}
	if after := tmuxOne(srv, "show-options", "-gwv", "window-size"); after != before {
		t.Errorf("global window-size changed from %q to %q", before, after)
	}
	var out settings
	s.ok("set_option", map[string]any{"scope": "window", "target": "@0", "name": "window-size", "value": "manual"}, &out)
	if got := tmuxOne(srv, "show-options", "-wv", "-t", "@0", "window-size"); got != "manual" {
		t.Errorf("window-size of @0 is %q, want manual", got)
	}
}

func TestSettingsEnvironmentSetUnsetAndRemoved(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("set-environment", "-g", "TMCP_GLOBAL", "from-global")
	s := startTMCP(t, srv, "")
	dir := t.TempDir()
	value := "a b $HOME #{session_name} %d ~ \"q\""

	var out settings
	s.ok("set_environment", map[string]any{"sessionName": "main", "name": "TMCP_VAR", "value": value}, &out)
	if len(out.Items) != 1 || out.Items[0] != (setting{Name: "TMCP_VAR", Value: value}) {
		t.Errorf("set_environment answered %+v", out)
	}
	if got := tmuxOne(srv, "show-environment", "-t", "=main:", "TMCP_VAR"); got != "TMCP_VAR="+value {
		t.Errorf("tmux holds %q, want TMCP_VAR=%s", got, value)
	}
	// A pane started afterwards gets it, literally.
	file := filepath.Join(dir, "env")
	newWindow(srv, `printf %s "$TMCP_VAR" > `+file)
	waitFile(t, file, value)

	s.ok("show_environment", map[string]any{"sessionName": "main", "name": "TMCP_VAR"}, &out)
	if len(out.Items) != 1 || out.Items[0].Value != value {
		t.Errorf("show_environment TMCP_VAR: %+v", out)
	}

	// Unset in the session: a session-only variable is deleted; one the
	// global environment has is marked removed so it does not show through.
	s.ok("set_environment", map[string]any{"sessionName": "main", "name": "TMCP_VAR", "unset": true}, &out)
	if len(out.Items) != 0 {
		t.Errorf("after unsetting TMCP_VAR: %+v", out)
	}
	if _, err := srv.Tmux("show-environment", "-t", "=main:", "TMCP_VAR"); err == nil {
		t.Errorf("TMCP_VAR is still in main's environment")
	}
	s.ok("set_environment", map[string]any{"sessionName": "main", "name": "TMCP_GLOBAL", "unset": true}, &out)
	if len(out.Items) != 1 || !out.Items[0].Removed {
		t.Errorf("after unsetting TMCP_GLOBAL in main: %+v, want it removed", out)
	}
	if got := tmuxOne(srv, "show-environment", "-t", "=main:", "TMCP_GLOBAL"); got != "-TMCP_GLOBAL" {
		t.Errorf("tmux shows %q, want -TMCP_GLOBAL", got)
	}
	file = filepath.Join(dir, "removed")
	newWindow(srv, `printf %s "${TMCP_GLOBAL-unset}" > `+file)
	waitFile(t, file, "unset")
	s.ok("show_environment", map[string]any{"sessionName": "main"}, &out)
	if v, ok := out.find("TMCP_GLOBAL"); !ok || !v.Removed {
		t.Errorf("show_environment of main: TMCP_GLOBAL is %+v, want removed", v)
	}

	// The global environment.
	s.ok("set_environment", map[string]any{"global": true, "name": "TMCP_G2", "value": "g2"}, &out)
	if got := tmuxOne(srv, "show-environment", "-g", "TMCP_G2"); got != "TMCP_G2=g2" {
		t.Errorf("global TMCP_G2: tmux holds %q", got)
	}
	s.ok("show_environment", map[string]any{"global": true}, &out)
	if v, ok := out.find("TMCP_G2"); !ok || v.Value != "g2" {
		t.Errorf("show_environment global: TMCP_G2 is %+v", v)
	}
	s.ok("set_environment", map[string]any{"global": true, "name": "TMCP_G2", "unset": true}, &out)
	if _, err := srv.Tmux("show-environment", "-g", "TMCP_G2"); err == nil || len(out.Items) != 0 {
		t.Errorf("global TMCP_G2 still set after unset (reply %+v)", out)
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"set_environment", map[string]any{"sessionName": "main", "name": "A=B", "value": "x"}, "not a variable name"},
		{"set_environment", map[string]any{"sessionName": "nosuch", "name": "A", "value": "x"}, "list_sessions"},
		{"show_environment", map[string]any{"sessionName": "main", "name": "TMCP_NEVER"}, "unknown variable"},
		{"show_environment", map[string]any{"sessionName": "main", "global": true}, "not both"},
	} {
		if msg := s.fail(c.tool, c.args); !strings.Contains(msg, c.want) {
			t.Errorf("%s %v: %q does not say %q", c.tool, c.args, msg, c.want)
		}
	}
}

func TestSettingsShowHooksListsHooksSetInTmux(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("set-hook", "-t", "=main:", "after-new-window", "display-message 'made #{window_id}'")
	srv.Must("set-hook", "-g", "client-attached", "set-option -g @attached 1")
	srv.Must("set-hook", "-g", "pane-exited", "display-message bye")
	s := startTMCP(t, srv, "readonly")
	var out settings
	s.ok("show_hooks", map[string]any{"sessionName": "main"}, &out)
	if len(out.Items) != 1 || out.Items[0].Name != "after-new-window[0]" || !strings.Contains(out.Items[0].Value, "made #{window_id}") {
		t.Errorf("show_hooks of main: %+v", out)
	}
	s.ok("show_hooks", map[string]any{"global": true}, &out)
	attached, ok1 := out.find("client-attached[0]")
	exited, ok2 := out.find("pane-exited[0]")
	if !ok1 || !strings.Contains(attached.Value, "@attached") || !ok2 || !strings.Contains(exited.Value, "bye") || len(out.Items) != 2 {
		t.Errorf("show_hooks global: %+v", out)
	}
	if msg := s.fail("show_hooks", map[string]any{"sessionName": "nosuch"}); !strings.Contains(msg, "nosuch") || !strings.Contains(msg, "list_sessions") {
		t.Errorf("show_hooks of a missing session: %q", msg)
	}
}

func TestSettingsPipePaneKeepsHashAndPercentInThePathLiteral(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	dir := t.TempDir()
	path := filepath.Join(dir, "out-#S-%d-#{pane_id}.log")
	var out struct {
		PaneID string `json:"paneId"`
		Piped  bool   `json:"piped"`
	}
	s.ok("pipe_pane", map[string]any{"paneId": "%0", "command": "cat > '" + path + "'"}, &out)
	if !out.Piped || out.PaneID != "%0" || paneFormat(srv, "%0", "#{pane_pipe}") != "1" {
		t.Fatalf("pipe_pane answered %+v; tmux says pane_pipe %s", out, paneFormat(srv, "%0", "#{pane_pipe}"))
	}
	srv.Must("send-keys", "-t", "%0", "echo piped-line-$((6*7))", "Enter")
	var got []byte
	if !tmuxtest.WaitFor(settle, func() bool {
		got, _ = os.ReadFile(path)
		return strings.Contains(string(got), "piped-line-42")
	}) {
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("%s holds %q; the directory has %v", path, got, names)
	}

	s.ok("pipe_pane", map[string]any{"paneId": "%0"}, &out)
	if out.Piped || paneFormat(srv, "%0", "#{pane_pipe}") != "0" {
		t.Errorf("after stopping: %+v, pane_pipe %s", out, paneFormat(srv, "%0", "#{pane_pipe}"))
	}
	if msg := s.fail("pipe_pane", map[string]any{"paneId": "%99", "command": "cat"}); !strings.Contains(msg, "%99") || !strings.Contains(msg, "list_panes") {
		t.Errorf("pipe_pane on a missing pane: %q", msg)
	}
	if msg := s.fail("pipe_pane", map[string]any{"paneId": "%0", "command": strings.Repeat("#", 5000)}); !strings.Contains(msg, "at most") {
		t.Errorf("pipe_pane with a command too long: %q", msg)
	}
}

func TestSettingsTiers(t *testing.T) {
	srv := tmuxtest.New(t)
	names := startTMCP(t, srv, "readonly").toolNames()
	for _, n := range []string{"show_option", "show_environment", "show_hooks"} {
		if !slices.Contains(names, n) {
			t.Errorf("readonly tier lacks %s", n)
		}
	}
	for _, n := range []string{"set_option", "set_environment", "pipe_pane"} {
		if slices.Contains(names, n) {
			t.Errorf("readonly tier offers %s", n)
		}
	}
}
