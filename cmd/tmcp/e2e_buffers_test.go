package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// rawReader starts a window whose program puts its terminal in raw mode
// and copies every byte it receives into a file, so the keys a pane gets
// can be checked byte for byte. It returns the pane and the file.
func rawReader(t *testing.T, srv *tmuxtest.Server) (pane, file string) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "keys")
	pane = newWindow(srv, "sh -c 'stty raw -echo; exec cat > "+file+"'")
	if !tmuxtest.WaitFor(settle, func() bool { return exists(file) }) {
		t.Fatalf("pane %s never started reading keys into %s", pane, file)
	}
	return pane, file
}

func TestKeyBatchSendsKeysInOrderAndNothingElse(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane, file := rawReader(t, srv)
	s := startTMCP(t, srv, "")

	keys := []string{"Escape", ":wq", "Enter", "C-c", "Down", "-l", "q", "Space", "é", "#{pane_id};"}
	var out struct {
		PaneID string `json:"paneId"`
		Keys   int    `json:"keys"`
	}
	s.ok("send_keys_batch", map[string]any{"paneId": pane, "keys": keys}, &out)
	if out.PaneID != pane || out.Keys != len(keys) {
		t.Errorf("send_keys_batch: %+v, want pane %s and %d keys", out, pane, len(keys))
	}
	// Escape, text, Enter as a carriage return, C-c as its control byte,
	// Down as its cursor sequence, a key that looks like a flag as text, and
	// no Enter added at the end.
	waitFile(t, file, "\x1b:wq\r\x03\x1b[B-lq é#{pane_id};")

	// The one-key uses of the issue: a pager's q, an interrupt, a menu.
	pager := newWindow(srv, "sh -c 'printf \"%s\\n\" one two three | less; touch "+file+".quit'")
	waitScreen(t, srv, pager, "less showing its input", func(l []string) bool { return hasLine(l, "three") })
	s.ok("send_keys_batch", map[string]any{"paneId": pager, "keys": []string{"q"}}, nil)
	if !tmuxtest.WaitFor(settle, func() bool { return exists(file + ".quit") }) {
		t.Errorf("send_keys_batch [q] did not quit less in pane %s", pager)
	}
}

func TestKeyBatchRefusesBadCallsNamingWhatToDo(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	many := make([]any, 257)
	for i := range many {
		many[i] = "q"
	}
	cases := []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"paneId": "%0", "keys": []any{}}, []string{"keys is empty", "%0"}},
		{map[string]any{"paneId": "%0", "keys": many}, []string{"257 keys", "several calls"}},
		{map[string]any{"paneId": "%0", "keys": []any{"a", ""}}, []string{"keys[1] is empty"}},
		{map[string]any{"paneId": "%99", "keys": []any{"q"}}, []string{"%99", "list_panes"}},
		{map[string]any{"paneId": "3", "keys": []any{"q"}}, []string{`"3"`, "list_panes"}},
	}
	for _, c := range cases {
		msg := s.fail("send_keys_batch", c.args)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("send_keys_batch %.60v: %q, want it to mention %q", c.args, msg, w)
			}
		}
	}
}

func TestKeyBatchAndPasteBufferAskBeforeTypingIntoTheCallersPane(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	other := strings.TrimSpace(srv.Must("split-window", "-d", "-t", "main", "-P", "-F", "#{pane_id}", "sh"))
	waitScreen(t, srv, "%0", "a prompt", func(l []string) bool {
		return strings.Contains(strings.Join(l, ""), "#") || strings.Contains(strings.Join(l, ""), "$")
	})
	srv.Must("set-buffer", "-b", "cmd", "echo pasted")
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"send_keys_batch", map[string]any{"keys": []string{"x"}}},
		{"paste_buffer", map[string]any{"name": "cmd", "bracketed": false}},
	}
	withPane := func(args map[string]any, pane string) map[string]any {
		out := map[string]any{"paneId": pane}
		for k, v := range args {
			out[k] = v
		}
		return out
	}

	t.Run("declined", func(t *testing.T) {
		var asked atomic.Int32
		cs := insidePane(t, srv, "%0", func() string { return "decline" }, &asked)
		for i, c := range calls {
			res, text := callTool(t, cs, c.tool, withPane(c.args, "%0"))
			if !res.IsError || !strings.Contains(text, "declined") || !strings.Contains(text, "%0") || asked.Load() != int32(i+1) {
				t.Errorf("%s into the caller's pane, declined: %s (asked %d times)", c.tool, text, asked.Load())
			}
			if res, text := callTool(t, cs, c.tool, withPane(c.args, other)); res.IsError || asked.Load() != int32(i+1) {
				t.Errorf("%s into another pane: %s (asked %d times)", c.tool, text, asked.Load())
			}
		}
	})

	t.Run("accepted", func(t *testing.T) {
		var asked atomic.Int32
		cs := insidePane(t, srv, "%0", func() string { return "accept" }, &asked)
		for i, c := range calls {
			res, text := callTool(t, cs, c.tool, withPane(c.args, "%0"))
			// tmcp reads a FIFO: what it typed waits in the pane's input; C-u clears it.
			srv.Must("send-keys", "-t", "%0", "C-u")
			if res.IsError || !strings.Contains(text, `"isCaller":true`) || asked.Load() != int32(i+1) {
				t.Errorf("%s into the caller's pane, accepted: %s (asked %d times)", c.tool, text, asked.Load())
			}
		}
	})
}

type bufferReply struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

func TestBufferToolsLoadShowPasteAndDeleteExactText(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "destructive")
	text := "tab\there; semi $HOME ~ \"dq\" 'sq' \\back #{pane_id} #(false) ##\n" +
		"\\044 octal-looking, utf-8 é ✓\n\nlast line, then a newline\n"

	// load_buffer: the named buffer holds exactly the text.
	var loaded bufferReply
	s.ok("load_buffer", map[string]any{"name": "notes", "text": text}, &loaded)
	if loaded != (bufferReply{"notes", len(text)}) {
		t.Errorf("load_buffer: %+v, want notes of %d bytes", loaded, len(text))
	}
	if got := srv.Must("show-buffer", "-b", "notes"); got != text {
		t.Errorf("tmux buffer notes holds %q, want %q", got, text)
	}
	// With no name, tmux names it, and it becomes the most recent.
	var auto bufferReply
	s.ok("load_buffer", map[string]any{"text": "auto"}, &auto)
	if got := srv.Must("show-buffer", "-b", auto.Name); auto.Name == "" || got != "auto" {
		t.Errorf("load_buffer with no name: %+v, tmux has %q under it", auto, got)
	}

	// show_buffer: exact text, once, as the second block.
	var shown struct {
		Name         string   `json:"name"`
		Truncated    bool     `json:"truncated"`
		DroppedBytes int      `json:"droppedBytes"`
		Buffers      []string `json:"buffers"`
	}
	res := s.ok("show_buffer", map[string]any{"name": "notes"}, &shown)
	if got := paneText(t, "show_buffer", res); got != text || shown.Name != "notes" || shown.Truncated || shown.Buffers != nil {
		t.Errorf("show_buffer notes: %+v, text %q; want %q", shown, got, text)
	}
	res = s.ok("show_buffer", map[string]any{"name": "notes", "maxBytes": 10}, &shown)
	if got := paneText(t, "show_buffer", res); got != text[len(text)-10:] || !shown.Truncated || shown.DroppedBytes != len(text)-10 {
		t.Errorf("show_buffer maxBytes 10: %+v, text %q; want the last 10 bytes", shown, got)
	}
	res = s.ok("show_buffer", nil, &shown)
	if got := paneText(t, "show_buffer", res); got != "auto" || shown.Name != auto.Name || !slices.Equal(shown.Buffers, []string{auto.Name, "notes"}) {
		t.Errorf("show_buffer with no name: %+v, text %q; want the latest (%s) and both names", shown, got, auto.Name)
	}

	// paste_buffer: the pane receives the text; the buffer stays.
	pane := mainPane(srv)
	file := filepath.Join(t.TempDir(), "pasted")
	srv.Must("send-keys", "-t", pane, "cat > "+file, "Enter")
	waitPane(t, srv, pane, "#{pane_current_command}", "cat")
	var pasted struct {
		Name   string `json:"name"`
		Bytes  int    `json:"bytes"`
		PaneID string `json:"paneId"`
	}
	s.ok("paste_buffer", map[string]any{"paneId": pane, "name": "notes"}, &pasted)
	if pasted.Name != "notes" || pasted.Bytes != len(text) || pasted.PaneID != pane {
		t.Errorf("paste_buffer: %+v", pasted)
	}
	srv.Must("send-keys", "-t", pane, "C-d")
	waitFile(t, file, text)
	if got := srv.Must("show-buffer", "-b", "notes"); got != text {
		t.Errorf("after paste_buffer, buffer notes holds %q", got)
	}

	// delete_buffer: gone from tmux, the other kept.
	var deleted bufferReply
	s.ok("delete_buffer", map[string]any{"name": "notes"}, &deleted)
	names := strings.Fields(srv.Must("list-buffers", "-F", "#{buffer_name}"))
	if deleted.Name != "notes" || !slices.Equal(names, []string{auto.Name}) {
		t.Errorf("delete_buffer: %+v; tmux has %q, want only %s", deleted, names, auto.Name)
	}
}

func TestBufferToolsRefuseBadCallsNamingWhatToDo(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "destructive")
	for tool, args := range map[string]map[string]any{"show_buffer": {}, "paste_buffer": {"paneId": "%0"}} {
		if msg := s.fail(tool, args); !strings.Contains(msg, "no paste buffers") || !strings.Contains(msg, "load_buffer") {
			t.Errorf("%s with no buffers: %q", tool, msg)
		}
	}
	s.ok("load_buffer", map[string]any{"name": "kept", "text": "x"}, nil)
	cases := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"show_buffer", map[string]any{"name": "nope"}, []string{`"nope"`, `"kept"`, "show_buffer"}},
		{"paste_buffer", map[string]any{"paneId": "%0", "name": "nope"}, []string{`"nope"`, `"kept"`}},
		{"delete_buffer", map[string]any{"name": "nope"}, []string{`"nope"`, `"kept"`}},
		{"delete_buffer", map[string]any{"name": ""}, []string{"name is required"}},
		{"paste_buffer", map[string]any{"paneId": "%99", "name": "kept"}, []string{"%99", "list_panes"}},
		{"load_buffer", map[string]any{"name": "two\nlines", "text": "x"}, []string{"control character"}},
		{"load_buffer", map[string]any{"name": strings.Repeat("n", 129), "text": "x"}, []string{"more than 128"}},
		{"load_buffer", map[string]any{"name": "empty", "text": ""}, []string{"text is empty"}},
		{"load_buffer", map[string]any{"name": "nul", "text": "a\x00b"}, []string{"NUL"}},
	}
	for _, c := range cases {
		msg := s.fail(c.tool, c.args)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s %.60v: %q, want it to mention %q", c.tool, c.args, msg, w)
			}
		}
	}
	if got := strings.Fields(srv.Must("list-buffers", "-F", "#{buffer_name}")); !slices.Equal(got, []string{"kept"}) {
		t.Errorf("after refused calls tmux has buffers %q, want only kept", got)
	}
}

func TestBufferToolsFollowTheSafetyTier(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	want := map[string][]string{
		"readonly":    {"list_servers", "show_buffer"},
		"mutating":    {"list_servers", "load_buffer", "paste_buffer", "send_keys_batch", "show_buffer"},
		"destructive": {"delete_buffer", "list_servers", "load_buffer", "paste_buffer", "send_keys_batch", "show_buffer"},
	}
	ours := []string{"delete_buffer", "list_servers", "load_buffer", "paste_buffer", "send_keys_batch", "show_buffer"}
	for tier, w := range want {
		var got []string
		for _, name := range startTMCP(t, srv, tier).toolNames() {
			if slices.Contains(ours, name) {
				got = append(got, name)
			}
		}
		if !slices.Equal(got, w) {
			t.Errorf("tier %s offers %q of the buffer tools, want %q", tier, got, w)
		}
	}
}

// serverAt starts a private tmux server on a socket named name in dir,
// as tmux -L name would place it with TMUX_TMPDIR set.
func serverAt(t *testing.T, dir, name string) *tmuxtest.Server {
	t.Helper()
	srv := tmuxtest.Empty(t)
	srv.Socket = filepath.Join(dir, name)
	srv.Start()
	return srv
}

func TestListServersTellsLiveStaleAndStuckServersAndMarksTheCurrentOne(t *testing.T) {
	t.Parallel()
	a := tmuxtest.Empty(t)
	dir := filepath.Join(a.Dir, "tmux-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	a.Socket = filepath.Join(dir, "a")
	a.Start()
	b := serverAt(t, dir, "b")
	b.Must("new-session", "-d", "-s", "second", "sh")
	// tmux 3.3a leaves its socket file behind after kill-server.
	c := serverAt(t, dir, "c")
	c.Must("kill-server")
	if !tmuxtest.WaitFor(settle, func() bool {
		_, err := c.Tmux("list-sessions")
		return err != nil && exists(c.Socket)
	}) {
		t.Fatalf("the server on %s did not end leaving its socket", c.Socket)
	}
	if err := os.WriteFile(filepath.Join(dir, "not-a-socket"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startTMCP(t, a, "readonly") // TMUX_TMPDIR is a.Dir

	type server struct {
		Path     string `json:"path"`
		State    string `json:"state"`
		Sessions int    `json:"sessions"`
		Current  bool   `json:"current"`
	}
	var out struct {
		Servers []server `json:"servers"`
	}
	s.ok("list_servers", nil, &out)
	want := []server{{a.Socket, "live", 1, true}, {b.Socket, "live", 2, false}, {c.Socket, "stale", 0, false}}
	if !slices.Equal(out.Servers, want) {
		t.Errorf("list_servers: %+v, want %+v", out.Servers, want)
	}

	// A stopped server is reported as not answering, within the probe's bound.
	b.Stop()
	defer b.Continue()
	start := time.Now()
	s.ok("list_servers", nil, &out)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("list_servers took %v with a stopped server", took)
	}
	want[1] = server{b.Socket, "not answering", 0, false}
	if !slices.Equal(out.Servers, want) {
		t.Errorf("list_servers with %s stopped: %+v, want %+v", b.Socket, out.Servers, want)
	}
}
