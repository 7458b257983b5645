package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/mcpserver"
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
	stderr := &lockedBuffer{}
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
