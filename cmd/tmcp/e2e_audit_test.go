package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

func TestAuditLinesCarryNoPayloadText(t *testing.T) {
	srv := tmuxtest.New(t)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	s := startTMCPWithEnv(t, srv, "mutating", []string{"TMCP_AUDIT=" + audit})
	const secret = "SECRET-7f3a9c"
	s.ok("send_keys", map[string]any{"paneId": "%0", "keys": "echo " + secret}, nil)
	s.ok("run_command", map[string]any{"paneId": "%0", "command": "echo " + secret}, nil)
	s.ok("paste_text", map[string]any{"paneId": "%0", "text": secret, "bracketed": false}, nil)
	s.fail("display_message", map[string]any{"paneId": "%0", "format": "#(echo " + secret + ")"})
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secret) {
		t.Fatalf("the audit log holds payload text:\n%s", data)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	want := []string{"send_keys", "run_command", "paste_text", "display_message"}
	if len(lines) != len(want) {
		t.Fatalf("%d audit lines, want %d:\n%s", len(lines), len(want), data)
	}
	for i, l := range lines {
		var line struct {
			Tool       string         `json:"tool"`
			Outcome    string         `json:"outcome"`
			DurationMS float64        `json:"durationMs"`
			Arguments  map[string]any `json:"arguments"`
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("line %d is not JSON: %q", i, l)
		}
		if line.Tool != want[i] || line.Arguments["paneId"] != "%0" || line.DurationMS <= 0 {
			t.Errorf("line %d: %+v, want tool %s with paneId %%0 and a duration", i, line, want[i])
		}
	}
	if !strings.Contains(lines[1], `"outcome":"exit status 0"`) || !strings.Contains(lines[3], `"outcome":"error"`) {
		t.Errorf("outcomes not recorded:\n%s", data)
	}
	for _, payload := range []string{"echo " + secret, secret} {
		if !strings.Contains(string(data), digest(payload)) {
			t.Errorf("no digest of a payload of %d bytes in the log", len(payload))
		}
	}
}

// digest is what the audit log writes for a payload, worked out here
// independently of the product's code.
func digest(s string) string {
	out, _ := exec.Command("sh", "-c", "printf %s \"$0\" | sha256sum", s).Output()
	return "len=" + strconv.Itoa(len(s)) + " sha256=" + string(out[:12])
}

func TestAClientThatSetsALogLevelHearsWhyAWaitEnded(t *testing.T) {
	srv := tmuxtest.New(t)
	var mu sync.Mutex
	var logs []string
	client := mcp.NewClient(&mcp.Implementation{Name: "log-test"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			logs = append(logs, string(req.Params.Level)+" "+toString(req.Params.Data))
		},
	})
	cmd := exec.Command(tmcpBinary, "-socket-path", srv.Socket)
	cmd.Env = srv.Env()
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The current protocol carries the level on each request; older ones
	// set it once for the session.
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	level := mcp.Meta{mcp.MetaKeyLogLevel: "info"}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: level, Name: "wait_for_text", Arguments: map[string]any{"paneId": "%0", "patterns": []string{"never"}, "timeoutSeconds": 0.2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: level, Name: "capture_pane", Arguments: map[string]any{"paneId": "%999"}}); err != nil {
		t.Fatal(err)
	}
	if !tmuxtest.WaitFor(settle, func() bool {
		mu.Lock()
		got := strings.Join(logs, "\n")
		mu.Unlock()
		return strings.Contains(got, "info wait_for_text: timeout") && strings.Contains(got, "warning capture_pane: error") && strings.Contains(got, "%999")
	}) {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("log messages: %q, want why the wait ended and why the call failed", logs)
	}
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
