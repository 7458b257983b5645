package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/mcpserver"
	"github.com/tmcp/tmcp/internal/syncbuf"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// measureWire starts tmcp at tier and measures its tools/list as a client
// pays for it, reading the raw bytes tmcp writes to stdout.
func measureWire(t *testing.T, tier string) mcpserver.WireCost {
	t.Helper()
	srv := tmuxtest.New(t)
	cmd := exec.Command(tmcpBinary, "-socket-path", srv.Socket)
	for _, kv := range srv.Env() {
		if !strings.HasPrefix(kv, "TMCP_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "TMCP_SAFETY="+tier)
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting tmcp: %v", err)
	}
	// Killing tmcp ends a read that would otherwise block for ever.
	stop := time.AfterFunc(connectTimeout, func() { _ = cmd.Process.Kill() })
	defer stop.Stop()
	cost, err := mcpserver.MeasureWire(stdin, stdout)
	stdin.Close()
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		t.Fatalf("measuring tools/list at %s: %v; stderr: %s", tier, err, stderr.String())
	}
	return cost
}

func TestToolsListFitsTheWireBudgetsAsAClientPaysThem(t *testing.T) {
	c := measureWire(t, "mutating")
	t.Logf("mutating: %d tools; tools/list response %d bytes + instructions %d = %d (budget %d), output schemas %d of it; model-visible %d (budget %d)",
		c.Tools, c.ToolsList, c.Instructions, c.Whole(), mcpserver.WireBudget, c.OutputSchemas, c.ModelVisible, mcpserver.ModelVisibleBudget)
	if c.Tools == 0 || c.Instructions == 0 {
		t.Fatalf("measured %d tools and %d bytes of instructions; want some of each", c.Tools, c.Instructions)
	}
	if c.ModelVisible > mcpserver.ModelVisibleBudget {
		t.Errorf("names, descriptions and input schemas plus instructions take %d bytes, over the %d budget", c.ModelVisible, mcpserver.ModelVisibleBudget)
	}
	if c.Whole() > mcpserver.WireBudget {
		t.Errorf("the tools/list response plus instructions takes %d bytes, over the %d budget", c.Whole(), mcpserver.WireBudget)
	}
}

// TestWaitsAnswerWithinAClientsMinuteByDefault: with TMCP_WAIT_MAX_SECONDS
// unset, every wait ends by 45 s, under the 60 s after which many clients
// cancel a call; run_command's own default sits under that ceiling, and
// the wait tools say how a longer wait is done.
func TestWaitsAnswerWithinAClientsMinuteByDefault(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	s := startTMCP(t, srv, "")

	if ins := s.cs.InitializeResult().Instructions; !strings.Contains(ins, "Waits end by 45s") || !strings.Contains(ins, "call again") {
		t.Errorf("instructions %q: want the 45s ceiling and how to wait longer", ins)
	}
	r, _ := s.runCmd(map[string]any{"paneId": pane, "command": "true"})
	if !r.Finished || r.EffectiveTimeoutSeconds != 40 || r.TimeoutClamped {
		t.Errorf("run_command without timeoutSeconds: %+v, want finished with effectiveTimeoutSeconds 40, not clamped", r)
	}
	r, _ = s.runCmd(map[string]any{"paneId": pane, "command": "true", "timeoutSeconds": 100})
	if !r.Finished || r.EffectiveTimeoutSeconds != 45 || !r.TimeoutClamped {
		t.Errorf("run_command asking 100s: %+v, want effectiveTimeoutSeconds 45, clamped", r)
	}
	for name, want := range map[string]string{"run_command": "get_job", "get_job": "again", "wait_for_text": "again with the returned cursor", "wait_for_channel": "again"} {
		if d := s.tool(name).Description; !strings.Contains(d, want) {
			t.Errorf("%s description %q does not say how to wait longer (%q)", name, d, want)
		}
	}
}
