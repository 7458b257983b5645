package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// newTestServer returns a Server at tier on a private tmux server.
func newTestServer(t testing.TB, tier Tier) *Server {
	t.Helper()
	srv := tmuxtest.New(t)
	tc, err := tmux.New(context.Background(), tmux.Options{SocketPath: srv.Socket})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.Close() })
	s := New(tc, Config{Tier: tier, Version: "test"})
	t.Cleanup(s.Close)
	return s
}

// connectInMemory connects an in-memory client to a new server at tier;
// both are closed when the test ends.
func connectInMemory(t *testing.T, tier Tier) *mcp.ClientSession {
	t.Helper()
	s := newTestServer(t, tier)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCPServer(ctx).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wire-test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// listTools connects an in-memory client and returns the tools a client
// is given at tier.
func listTools(t *testing.T, tier Tier) []*mcp.Tool {
	t.Helper()
	cs := connectInMemory(t, tier)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// measureServer measures what s costs a client on the wire, served over
// a byte stream framed as on stdio.
func measureServer(t *testing.T, s *Server) WireCost {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.MCPServer(ctx).Run(ctx, &mcp.IOTransport{Reader: inR, Writer: outW})
		outW.Close()
	}()
	c, err := MeasureWire(inW, outR)
	inW.Close()
	cancel()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestToolsListStaysWithinTheWireBudget measures the server over a byte
// stream, framed as on stdio, with the function the bench and the
// end-to-end test use (the latter against the binary).
func TestToolsListStaysWithinTheWireBudget(t *testing.T) {
	c := measureServer(t, newTestServer(t, DefaultTier))
	t.Logf("%d tools: tools/list %d bytes + instructions %d = %d (budget %d), output schemas %d of it; model-visible %d (budget %d)",
		c.Tools, c.ToolsList, c.Instructions, c.Whole(), WireBudget, c.OutputSchemas, c.ModelVisible, ModelVisibleBudget)
	if c.Tools == 0 || c.OutputSchemas == 0 {
		t.Fatalf("measured %d tools and %d bytes of output schemas; want some of each", c.Tools, c.OutputSchemas)
	}
	if c.ModelVisible > ModelVisibleBudget {
		t.Errorf("the model-visible part is %d bytes, over the %d budget", c.ModelVisible, ModelVisibleBudget)
	}
	if c.Whole() > WireBudget {
		t.Errorf("tools/list plus instructions is %d bytes, over the %d budget", c.Whole(), WireBudget)
	}
}

// TestSchemasAreCompactedAsSchemaForSays checks every tool's schemas as a
// client receives them against what schemaFor and advertised promise:
// input schemas open objects (the server checks the fields itself: see
// TestEveryToolRefusesAnArgumentItDoesNotName) without nullable types;
// output schemas an object that names its fields and says nothing of them.
func TestSchemasAreCompactedAsSchemaForSays(t *testing.T) {
	for _, tool := range listTools(t, Destructive) {
		var in struct {
			Type                 string          `json:"type"`
			AdditionalProperties json.RawMessage `json:"additionalProperties"`
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &in); err != nil || in.Type != "object" || in.AdditionalProperties != nil || strings.Contains(string(b), "additionalProperties") {
			t.Errorf("%s: input schema %s, want an object without additionalProperties", tool.Name, b)
		}
		if nullable(tool.InputSchema) {
			t.Errorf("%s: input schema %s has a nullable type", tool.Name, b)
		}
		var out struct {
			Type       string                                `json:"type"`
			Properties map[string]map[string]json.RawMessage `json:"properties"`
		}
		ob, _ := json.Marshal(tool.OutputSchema)
		if err := json.Unmarshal(ob, &out); err != nil || out.Type != "object" {
			t.Errorf("%s: output schema %s, want an object", tool.Name, ob)
			continue
		}
		var keys map[string]json.RawMessage
		_ = json.Unmarshal(ob, &keys)
		for k := range keys {
			if k != "type" && k != "properties" {
				t.Errorf("%s: output schema has %q; want only type and properties", tool.Name, k)
			}
		}
		for name, p := range out.Properties {
			if len(p) != 0 {
				t.Errorf("%s: output field %s is %v; want it named alone", tool.Name, name, p)
			}
		}
	}
}

// TestEveryToolRefusesAnArgumentItDoesNotName: the input schemas clients
// are shown are open, but every call is checked against the closed one,
// so a misspelt argument is an error that names it, never ignored.
func TestEveryToolRefusesAnArgumentItDoesNotName(t *testing.T) {
	ctx := context.Background()
	cs := connectInMemory(t, Destructive)
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: map[string]any{"noSuchArgument": 1}})
		if err != nil {
			t.Errorf("%s: %v, want a failed call", tool.Name, err)
			continue
		}
		text := ""
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		if !r.IsError || !strings.Contains(text, `unexpected additional properties ["noSuchArgument"]`) {
			t.Errorf("%s with noSuchArgument: %q (error %v), want it refused by name", tool.Name, text, r.IsError)
		}
	}
}

// maxToolTitleBytes bounds a tool's display title: a few words, as a
// client shows it in a list or a permission prompt.
const maxToolTitleBytes = 32

// TestEveryToolHasAShortDistinctTitle checks the title of every tool tmcp
// has, whatever the tier or configuration offers: present, a few words
// and no more, each its own, and on the tool alone (not its annotations).
func TestEveryToolHasAShortDistinctTitle(t *testing.T) {
	s := &Server{cfg: Config{Tier: Destructive, PromptsAsTools: true}}
	byTitle := map[string]string{}
	for _, d := range s.definitions() {
		title := d.tool.Title
		switch {
		case strings.TrimSpace(title) != title || title == "":
			t.Errorf("%s: title %q, want one without surrounding spaces", d.tool.Name, title)
		case len(title) > maxToolTitleBytes:
			t.Errorf("%s: title %q is %d bytes, want at most %d", d.tool.Name, title, len(title), maxToolTitleBytes)
		}
		if other, ok := byTitle[strings.ToLower(title)]; ok {
			t.Errorf("%s and %s have the same title %q", other, d.tool.Name, title)
		}
		byTitle[strings.ToLower(title)] = d.tool.Name
		if d.tool.Annotations.Title != "" {
			t.Errorf("%s: annotations title %q; the title belongs to the tool alone", d.tool.Name, d.tool.Annotations.Title)
		}
	}
	if len(byTitle) == 0 {
		t.Fatal("no tools")
	}
}

// nullable reports whether a schema, decoded as JSON, has a type list.
func nullable(schema any) bool {
	b, _ := json.Marshal(schema)
	var v any
	_ = json.Unmarshal(b, &v)
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["type"].([]any); ok {
				return true
			}
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}
