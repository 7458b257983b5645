package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/mcpserver"
	"github.com/tmcp/tmcp/internal/tmux"
)

// demoTimeout bounds the whole demo.
const demoTimeout = 30 * time.Second

// runDemo plays a short agent session against a private tmux server, with
// an MCP client connected to tmcp in the same process, and prints each call,
// its reply and its latency.
func runDemo(w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), demoTimeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "tmcp-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "sock")
	tc, err := tmux.New(ctx, tmux.Options{SocketPath: socket})
	if err != nil {
		return err
	}
	defer func() {
		// Whatever happened, the private server goes.
		_, _ = tc.RunProcess(context.Background(), "kill-server")
		tc.Close()
	}()
	srv := mcpserver.New(tc, mcpserver.Config{Tier: mcpserver.Destructive, Version: version})
	defer srv.Close()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := srv.MCPServer(ctx).Connect(ctx, srv.Transport(serverT), nil)
	if err != nil {
		return err
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "tmcp-demo"}, nil)
	cs, err := client.Connect(ctx, clientT, nil)
	if err != nil {
		return err
	}
	defer cs.Close()

	fmt.Fprintf(w, "tmcp demo: a private tmux %s server at %s\n\n", tc.Version(), socket)
	d := &demo{w: w, cs: cs}
	d.call(ctx, "get_server_info", nil)
	created := d.call(ctx, "create_session", map[string]any{"name": "demo", "command": "sh", "width": 80, "height": 24})
	pane, _ := created["paneId"].(string)
	d.call(ctx, "send_keys", map[string]any{"paneId": pane, "keys": "echo hello from tmcp"})
	// The waiting tools are the right way to wait; here, a few reads suffice.
	for i := 0; i < 50 && !d.shows(ctx, pane, "hello from tmcp", 2); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	d.call(ctx, "capture_pane", map[string]any{"paneId": pane})
	d.call(ctx, "run_command", map[string]any{"paneId": pane, "command": "printf 'one\\ntwo\\n'; ls /nonexistent"})
	d.call(ctx, "run_command", map[string]any{"paneId": pane, "command": "(sleep 0.3; echo 'server: listening on :8080') &"})
	d.call(ctx, "wait_for_text", map[string]any{"paneId": pane, "patterns": []string{"listening on"}, "timeoutSeconds": 5})
	d.call(ctx, "run_command", map[string]any{"paneId": pane, "command": "(sleep 0.3; echo 'build: error: missing ;'; sleep 1; echo 'build: ok') &"})
	d.call(ctx, "wait_for_text", map[string]any{"paneId": pane, "patterns": []string{"build: ok"}, "stop": []string{"error"}, "timeoutSeconds": 5})
	since := d.call(ctx, "capture_since", map[string]any{"paneId": pane})
	d.call(ctx, "run_command", map[string]any{"paneId": pane, "command": "echo only this is new"})
	d.call(ctx, "capture_since", map[string]any{"cursor": since["cursor"]})
	d.call(ctx, "split_window", map[string]any{"paneId": pane, "direction": "right", "command": "sh"})
	d.call(ctx, "call_mutating_tools_batch", map[string]any{"calls": []map[string]any{
		{"tool": "select_layout", "arguments": map[string]any{"layout": "even-vertical"}},
		{"tool": "set_pane_title", "arguments": map[string]any{"paneId": pane, "title": "build #1"}},
		{"tool": "find_pane_by_position", "arguments": map[string]any{"position": "bottom"}},
	}})
	d.call(ctx, "list_panes", map[string]any{"sessionName": "demo"})
	d.call(ctx, "list_sessions", nil)
	d.call(ctx, "display_message", map[string]any{"paneId": pane, "format": "#(echo refused)"})
	d.call(ctx, "kill_server", map[string]any{"confirm": true})
	if d.failed > 0 {
		return fmt.Errorf("%d demo calls failed unexpectedly", d.failed)
	}
	fmt.Fprintln(w, "done: the private tmux server is gone.")
	return nil
}

type demo struct {
	w      io.Writer
	cs     *mcp.ClientSession
	failed int
}

// shows reports whether the pane shows text on at least n lines, quietly.
func (d *demo) shows(ctx context.Context, pane, text string, n int) bool {
	res, err := d.cs.CallTool(ctx, &mcp.CallToolParams{Name: "capture_pane", Arguments: map[string]any{"paneId": pane}})
	if err != nil || res.IsError || len(res.Content) < 2 {
		return false
	}
	return strings.Count(res.Content[1].(*mcp.TextContent).Text, text) >= n
}

// call makes one tool call and prints it, its latency and a compact reply.
func (d *demo) call(ctx context.Context, name string, args map[string]any) map[string]any {
	a, _ := json.Marshal(args)
	if args == nil {
		a = []byte("{}")
	}
	fmt.Fprintf(d.w, "→ %s %s\n", name, a)
	start := time.Now()
	res, err := d.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	took := time.Since(start)
	if err != nil {
		d.failed++
		fmt.Fprintf(d.w, "← %s  protocol error: %v\n\n", ms(took), err)
		return nil
	}
	var fields map[string]any
	if b, err := json.Marshal(res.StructuredContent); err == nil {
		_ = json.Unmarshal(b, &fields)
	}
	switch {
	case res.IsError:
		if name != "display_message" {
			d.failed++
		}
		fmt.Fprintf(d.w, "← %s  error: %s\n", ms(took), res.Content[0].(*mcp.TextContent).Text)
	case len(res.Content) > 1:
		fmt.Fprintf(d.w, "← %s  %s\n", ms(took), compact(res.Content[0].(*mcp.TextContent).Text))
		for _, line := range strings.Split(res.Content[1].(*mcp.TextContent).Text, "\n") {
			fmt.Fprintf(d.w, "   │ %s\n", line)
		}
	default:
		b, _ := json.Marshal(res.StructuredContent)
		fmt.Fprintf(d.w, "← %s  %s\n", ms(took), compact(string(b)))
	}
	fmt.Fprintln(d.w)
	return fields
}

func ms(d time.Duration) string { return fmt.Sprintf("%6.2f ms", float64(d.Microseconds())/1000) }

// compact cuts a reply to what fits on a couple of lines.
func compact(s string) string {
	const limit = 300
	if len(s) > limit {
		return s[:limit] + "…"
	}
	return s
}
