package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// insidePane starts tmcp inside a pane of srv, with TMUX and TMUX_PANE
// removed from its environment so that it must find its pane by walking
// its process ancestry, and connects an MCP client to it through FIFOs.
// elicit, if not nil, is the client's answer to a confirmation request.
func insidePane(t *testing.T, srv *tmuxtest.Server, pane string, elicit func() string, asked *atomic.Int32) *mcp.ClientSession {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	for _, p := range []string{in, out} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	line := fmt.Sprintf("env -u TMUX -u TMUX_PANE TMCP_SAFETY=destructive %s -socket-path %s <%s >%s 2>%s",
		tmcpBinary, srv.Socket, in, out, filepath.Join(dir, "err"))
	srv.Must("send-keys", "-t", pane, "-l", line)
	srv.Must("send-keys", "-t", pane, "Enter")
	// The shell opens the pane's stdin FIFO first, then its stdout FIFO.
	w, err := os.OpenFile(in, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(out, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	opts := &mcp.ClientOptions{}
	if elicit != nil {
		opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			action := elicit()
			if action == "fail" {
				return nil, errors.New("the client could not show the question")
			}
			res := &mcp.ElicitResult{Action: action}
			if action == "accept" {
				res.Content = map[string]any{"allow": true}
			}
			return res, nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "guard-test"}, opts).Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, nil)
	if err != nil {
		t.Fatalf("connecting to tmcp inside pane %s: %v", pane, err)
	}
	// The SDK's client speaks the latest protocol, where the guard's
	// question comes back as an input request in the call's result, and
	// the client calls again with the answer.
	if v := cs.InitializeResult().ProtocolVersion; v != currentProtocol {
		t.Fatalf("tmcp inside pane %s negotiated protocol %s, want %s", pane, v, currentProtocol)
	}
	t.Cleanup(func() {
		cs.Close()
		w.Close()
		r.Close()
	})
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	text := string(b)
	if res.IsError {
		text = res.Content[0].(*mcp.TextContent).Text
	}
	return res, text
}

func TestTheCallersPaneIsFoundByAncestryAndGuarded(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("split-window", "-t", "main", "sh")
	waitScreen(t, srv, "%0", "a prompt", func(l []string) bool {
		return strings.Contains(strings.Join(l, ""), "#") || strings.Contains(strings.Join(l, ""), "$")
	})

	t.Run("a client without elicitation", func(t *testing.T) {
		cs := insidePane(t, srv, "%0", nil, nil)
		_, info := callTool(t, cs, "get_server_info", nil)
		if !strings.Contains(info, `"callerPane":"%0"`) {
			t.Fatalf("get_server_info: %s, want callerPane %%0", info)
		}
		_, panes := callTool(t, cs, "list_panes", nil)
		var listed struct {
			Panes []struct {
				PaneID   string `json:"paneId"`
				IsCaller bool   `json:"isCaller"`
			} `json:"panes"`
		}
		if err := json.Unmarshal([]byte(panes), &listed); err != nil || len(listed.Panes) != 2 {
			t.Fatalf("list_panes: %s (%v)", panes, err)
		}
		for _, p := range listed.Panes {
			if p.IsCaller != (p.PaneID == "%0") {
				t.Errorf("pane %s isCaller %v", p.PaneID, p.IsCaller)
			}
		}
		for position, want := range map[string]string{"top": "%0", "bottom": "%1"} {
			_, text := callTool(t, cs, "find_pane_by_position", map[string]any{"position": position})
			var found struct {
				PaneID   string `json:"paneId"`
				IsCaller bool   `json:"isCaller"`
			}
			if err := json.Unmarshal([]byte(text), &found); err != nil || found.PaneID != want || found.IsCaller != (want == "%0") {
				t.Errorf("find_pane_by_position %s: %s, want pane %s, isCaller only for %%0", position, text, want)
			}
		}
		res, text := callTool(t, cs, "kill_pane", map[string]any{"paneId": "%0"})
		if !res.IsError || !strings.Contains(text, "cannot ask") {
			t.Fatalf("kill_pane of the caller's pane without a way to ask: %s, want a refusal", text)
		}
		res, text = callTool(t, cs, "kill_session", map[string]any{"sessionName": "main"})
		if !res.IsError || !strings.Contains(text, "%0") {
			t.Fatalf("kill_session of the caller's session: %s, want a refusal", text)
		}
		res, text = callTool(t, cs, "kill_server", map[string]any{"confirm": true})
		if !res.IsError {
			t.Fatalf("kill_server from inside it without a way to ask: %s, want a refusal", text)
		}
		res, text = callTool(t, cs, "send_keys", map[string]any{"paneId": "%1", "keys": "echo other"})
		if res.IsError || strings.Contains(text, "isCaller") {
			t.Fatalf("send_keys to another pane: %s", text)
		}
		// Typing, which is harmless, goes ahead unasked and says so. The
		// text waits in the terminal while tmcp runs; C-u clears it.
		res, text = callTool(t, cs, "send_keys", map[string]any{"paneId": "%0", "keys": "x", "enter": false, "literal": true})
		srv.Must("send-keys", "-t", "%0", "C-u")
		if res.IsError || !strings.Contains(text, `"isCaller":true`) {
			t.Fatalf("send_keys into the caller's pane from a client that cannot ask: %s, want it done with isCaller", text)
		}
		if got := srv.Must("list-panes", "-a", "-F", "#{pane_id}"); !strings.Contains(got, "%0") {
			t.Fatalf("the caller's pane was killed: %q", got)
		}
	})

	t.Run("a person who declines", func(t *testing.T) {
		var asked atomic.Int32
		cs := insidePane(t, srv, "%0", func() string { return "decline" }, &asked)
		res, text := callTool(t, cs, "send_keys", map[string]any{"paneId": "%0", "keys": "echo typed", "enter": false})
		if !res.IsError || !strings.Contains(text, "declined") || asked.Load() != 1 {
			t.Fatalf("send_keys into the caller's pane, declined: %s (asked %d times)", text, asked.Load())
		}
		res, text = callTool(t, cs, "kill_window", map[string]any{"windowId": "@0"})
		if !res.IsError || !strings.Contains(text, "declined") || asked.Load() != 2 {
			t.Fatalf("kill_window of the caller's window, declined: %s (asked %d times)", text, asked.Load())
		}
		if _, text = callTool(t, cs, "send_keys", map[string]any{"paneId": "%1", "keys": "echo fine"}); asked.Load() != 2 {
			t.Fatalf("typing into another pane asked the person: %s", text)
		}
		res, text = callTool(t, cs, "paste_text", map[string]any{"paneId": "%0", "text": "echo pasted"})
		if !res.IsError || !strings.Contains(text, "declined") || asked.Load() != 3 {
			t.Fatalf("paste_text into the caller's pane, declined: %s (asked %d times)", text, asked.Load())
		}
		res, text = callTool(t, cs, "run_command", map[string]any{"paneId": "%0", "command": "echo ran"})
		if !res.IsError || !strings.Contains(text, "declined") || asked.Load() != 4 {
			t.Fatalf("run_command in the caller's pane, declined: %s (asked %d times)", text, asked.Load())
		}
	})

	t.Run("a client whose asking fails", func(t *testing.T) {
		var asked atomic.Int32
		cs := insidePane(t, srv, "%0", func() string { return "fail" }, &asked)
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "kill_pane", Arguments: map[string]any{"paneId": "%0"}})
		if err == nil && !res.IsError {
			t.Fatalf("kill_pane of the caller's pane when asking failed: %+v, want a refusal", res)
		}
		if asked.Load() != 1 {
			t.Fatalf("asked %d times, want 1", asked.Load())
		}
		if got := srv.Must("list-panes", "-a", "-F", "#{pane_id}"); !strings.Contains(got, "%0") {
			t.Fatalf("the caller's pane was killed although asking failed: %q", got)
		}
	})

	t.Run("a person who accepts", func(t *testing.T) {
		var asked atomic.Int32
		cs := insidePane(t, srv, "%0", func() string { return "accept" }, &asked)
		res, text := callTool(t, cs, "send_keys", map[string]any{"paneId": "%0", "keys": "ACCEPTED-TEXT", "enter": false, "literal": true})
		if res.IsError || !strings.Contains(text, `"isCaller":true`) || asked.Load() != 1 {
			t.Fatalf("send_keys into the caller's pane, accepted: %s (asked %d times)", text, asked.Load())
		}
		// tmcp reads its stdin from a FIFO, so the typed text sits in the
		// pane's input, not echoed; the pane still exists and tmcp answers.
		if _, text := callTool(t, cs, "get_server_info", nil); !strings.Contains(text, `"callerPane":"%0"`) {
			t.Fatalf("after the accepted call: %s", text)
		}
	})
}

func TestTheCallersPaneIsFoundFromTheEnvironment(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	other := strings.TrimSpace(srv.Must("split-window", "-d", "-t", "main", "-P", "-F", "#{pane_id}", "sh"))
	// The same socket written other ways: tmcp must see it is its server.
	dotted := filepath.Dir(srv.Socket) + "/./" + filepath.Base(srv.Socket)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(srv.Socket, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, tmux, pane, want string
	}{
		{"this server's socket", srv.Socket + ",1,0", other, other},
		{"this server's socket with a dot", dotted + ",1,0", other, other},
		{"this server's socket through a link", link + ",1,0", other, other},
		{"another server's socket", srv.Socket + "-elsewhere,1,0", other, ""},
		{"a pane this server does not have", srv.Socket + ",1,0", "%99", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startTMCPWithEnv(t, srv, "", []string{"TMUX=" + c.tmux, "TMUX_PANE=" + c.pane})
			var info struct {
				CallerPane string `json:"callerPane"`
			}
			s.ok("get_server_info", nil, &info)
			if info.CallerPane != c.want {
				t.Errorf("TMUX=%s TMUX_PANE=%s: callerPane %q, want %q", c.tmux, c.pane, info.CallerPane, c.want)
			}
			instructions := s.cs.InitializeResult().Instructions
			if named := strings.Contains(instructions, "You run inside pane "+c.want+" "); named != (c.want != "") || c.want == "" && strings.Contains(instructions, "You run inside") {
				t.Errorf("instructions with callerPane %q: %q", c.want, instructions)
			}
		})
	}
}
