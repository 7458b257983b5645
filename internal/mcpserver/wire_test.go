package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// listTools connects an in-memory client and returns the tools and the
// instructions a client is given at tier.
func listTools(t *testing.T, tier Tier) ([]*mcp.Tool, string) {
	t.Helper()
	srv := tmuxtest.New(t)
	tc, err := tmux.New(context.Background(), tmux.Options{SocketPath: srv.Socket})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	s := New(tc, Config{Tier: tier, Version: "test"})
	defer s.Close()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCPServer(ctx).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wire-test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools, cs.InitializeResult().Instructions
}

func TestToolsListStaysWithinTheWireBudget(t *testing.T) {
	tools, instructions := listTools(t, DefaultTier)
	whole, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	visible, outputs := len(instructions), 0
	for _, tool := range tools {
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		visible += len(tool.Name) + len(tool.Description) + len(in)
		outputs += len(`,"outputSchema":`) + len(out)
	}
	total := len(whole) + len(instructions)
	t.Logf("%d tools: tools/list %d bytes + instructions %d = %d (budget %d), of which output schemas %d; model-visible %d (budget %d)",
		len(tools), len(whole), len(instructions), total, WireBudget, outputs, visible, ModelVisibleBudget)
	if visible > ModelVisibleBudget {
		t.Errorf("the model-visible part is %d bytes, over the %d budget", visible, ModelVisibleBudget)
	}
	switch {
	case total-outputs > WireBudget:
		t.Errorf("tools/list plus instructions is %d bytes, over the %d budget even without its %d bytes of output schemas", total, WireBudget, outputs)
	case total > WireBudget:
		t.Logf("over the %d budget by %d bytes, less than its %d bytes of output schemas, which are kept", WireBudget, total-WireBudget, outputs)
	}
	for _, tool := range tools {
		if tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("%s: output schema or annotations missing", tool.Name)
		}
	}
}

// TestToolSizesAreListed logs what each tool costs on the wire, largest
// first, to show where the budget goes (go test -run ToolSizes -v).
func TestToolSizesAreListed(t *testing.T) {
	tools, _ := listTools(t, Destructive)
	type size struct {
		name                         string
		whole, desc, in, out, annots int
	}
	var sizes []size
	for _, tool := range tools {
		whole, _ := json.Marshal(tool)
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		annots, _ := json.Marshal(tool.Annotations)
		sizes = append(sizes, size{tool.Name, len(whole), len(tool.Description), len(in), len(out), len(annots)})
	}
	slices.SortFunc(sizes, func(a, b size) int { return b.whole - a.whole })
	for _, s := range sizes {
		t.Logf("%-28s whole %5d  description %4d  input %4d  output %4d  annotations %4d", s.name, s.whole, s.desc, s.in, s.out, s.annots)
	}
}
