package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

type workspaceReply struct {
	SessionName string `json:"sessionName"`
	Windows     []struct {
		WindowID string   `json:"windowId"`
		Panes    []string `json:"panes"`
	} `json:"windows"`
}

// realDir makes a directory under t's temporary one, its symlinks resolved
// as tmux reports pane_current_path.
func realDir(t *testing.T, parts ...string) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(append([]string{base}, parts...)...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBuildWorkspaceMakesWindowsPanesLayoutsDirectoriesAndCommands(t *testing.T) {
	srv := tmuxtest.New(t)
	root, logs := realDir(t, "sub"), realDir(t)
	root = filepath.Dir(root)
	doc := fmt.Sprintf(`session_name: ws
start_directory: %s
environment:
  WS_GREETING: hello-env
windows:
  - window_name: editor
    layout: even-horizontal
    panes:
      - echo left-$((2+3))
      - shell_command: echo right-$WS_GREETING
        start_directory: sub
  - window_name: logs
    start_directory: %s
    shell_command_before: echo before-1
    panes:
      - shell_command: [echo logs-$((1+1))]
`, root, logs)
	s := startTMCP(t, srv, "")
	var out workspaceReply
	s.ok("build_workspace", map[string]any{"yaml": doc}, &out)
	if out.SessionName != "ws" || len(out.Windows) != 2 || len(out.Windows[0].Panes) != 2 || len(out.Windows[1].Panes) != 1 {
		t.Fatalf("build_workspace: %+v, want session ws with windows of 2 and 1 panes", out)
	}
	if got := strings.Split(tmuxOne(srv, "list-windows", "-t", "=ws", "-F", "#{window_id} #{window_name} #{window_panes}"), "\n"); !slices.Equal(got,
		[]string{out.Windows[0].WindowID + " editor 2", out.Windows[1].WindowID + " logs 1"}) {
		t.Errorf("windows of ws: %q", got)
	}
	if got := tmuxOne(srv, "display-message", "-p", "-t", "=ws:", "#{window_name}"); got != "editor" {
		t.Errorf("the current window is %q, want the first, editor", got)
	}
	// even-horizontal: side by side, full height.
	left, right := out.Windows[0].Panes[0], out.Windows[0].Panes[1]
	geometry := func(pane string) []int {
		var g []int
		for _, f := range strings.Fields(paneFormat(srv, pane, "#{pane_left} #{pane_top} #{pane_height}")) {
			n, _ := strconv.Atoi(f)
			g = append(g, n)
		}
		return g
	}
	if l, r := geometry(left), geometry(right); l[0] != 0 || r[0] <= 0 || l[1] != 0 || r[1] != 0 || l[2] != r[2] {
		t.Errorf("panes %s and %s are at left/top/height %v and %v, want side by side", left, right, l, r)
	}
	for pane, dir := range map[string]string{left: root, right: filepath.Join(root, "sub"), out.Windows[1].Panes[0]: logs} {
		waitPane(t, srv, pane, "#{pane_current_path}", dir)
	}
	// Commands are typed once each pane's shell has drawn its prompt
	// (e2e_workspace_prompt_test.go shows the order).
	waitScreen(t, srv, left, "its command's output", func(l []string) bool { return rowEnding(l, "left-5") >= 0 })
	waitScreen(t, srv, right, "the session's environment", func(l []string) bool { return rowEnding(l, "right-hello-env") >= 0 })
	waitScreen(t, srv, out.Windows[1].Panes[0], "shell_command_before, then the command", func(l []string) bool {
		a, b := rowEnding(l, "before-1"), rowEnding(l, "logs-2")
		return a >= 0 && b > a
	})
}

func TestBuildWorkspaceRefusesBeforeMakingAnything(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"an existing session", "session_name: main\nwindows: [{}]\n", []string{"session main already exists", "kill_session"}},
		{"a bad layout", "session_name: new\nwindows:\n  - window_name: a\n    layout: diagonal\n", []string{"line 4", `layout "diagonal"`}},
		{"a YAML error", "session_name: new\nwindows: [\n", []string{"line 2"}},
		{"a missing directory", "session_name: new\nwindows:\n  - panes:\n      - start_directory: /no/such/dir\n", []string{"line 4", "/no/such/dir is not a directory"}},
		{"an unknown key", "session_name: new\nwindows:\n  - window_name: a\n    options: {}\n", []string{"line 4", `"options" is not supported`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := s.on(t).fail("build_workspace", map[string]any{"yaml": c.doc})
			for _, w := range append(c.want, "nothing was made") {
				if !strings.Contains(msg, w) {
					t.Errorf("%q, want it to say %q", msg, w)
				}
			}
			if got := sessionNames(srv); !slices.Equal(got, []string{"main"}) {
				t.Errorf("sessions after a refused workspace: %v, want main alone", got)
			}
		})
	}
}

// rowEnding returns the first row that ends with text (not as part of the
// typed command), or -1.
func rowEnding(lines []string, text string) int {
	for i, l := range lines {
		l = strings.TrimRight(l, " ")
		if strings.HasSuffix(l, text) && !strings.HasSuffix(l, "echo "+text) {
			return i
		}
	}
	return -1
}

func TestBuildWorkspaceRemovesAPartlyBuiltSessionWhenTmuxFails(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	// New sessions get a 12x6 window, too small for a sixth pane: tmux
	// refuses a split only once the session and its first window exist.
	srv.Must("set-option", "-g", "default-size", "12x6")
	doc := "session_name: half\nwindows:\n  - window_name: a\n  - window_name: b\n    panes: [a, b, c, d, e, f, g, h]\n"
	msg := s.fail("build_workspace", map[string]any{"yaml": doc})
	for _, w := range []string{"no space for new pane", `window "b"`, "the partly built session was removed"} {
		if !strings.Contains(msg, w) {
			t.Errorf("%q, want it to say %q", msg, w)
		}
	}
	if got := sessionNames(srv); !slices.Equal(got, []string{"main"}) {
		t.Errorf("sessions after a failed build: %v, want main alone", got)
	}
}
