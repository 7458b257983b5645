package mcpserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/hosts"
)

// withHosts gives s a set of remote hosts that are never connected.
func withHosts(t *testing.T, s *Server, names ...string) {
	t.Helper()
	var hs []hosts.Host
	for _, n := range names {
		hs = append(hs, hosts.Host{Name: n, Destination: n + ".example"})
	}
	set, err := hosts.New(s.tmux, hs, hosts.SSH{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(set.Close)
	s.cfg.Hosts = set
}

func TestTakeHostFindsTheOneHostACallNames(t *testing.T) {
	s := &Server{hostViews: &hostViews{}}
	withHosts(t, s, "build", "gpu")
	tests := []struct {
		name     string
		args     string
		host     string
		wantArgs string
		fails    bool
	}{
		{name: "no host", args: `{"paneId":"%3"}`, wantArgs: `{"paneId":"%3"}`},
		{name: "host argument", args: `{"host":"gpu","paneId":"%3"}`, host: "gpu", wantArgs: `{"paneId":"%3"}`},
		{name: "prefixed pane", args: `{"paneId":"build:%3"}`, host: "build", wantArgs: `{"paneId":"%3"}`},
		{name: "prefixed cursor and pane agree", args: `{"paneId":"gpu:%1","cursor":"gpu:AbC"}`, host: "gpu", wantArgs: `{"paneId":"%1","cursor":"AbC"}`},
		{name: "local named", args: `{"host":"local","paneId":"local:%3"}`, host: "local", wantArgs: `{"paneId":"%3"}`},
		{name: "inside a batch", args: `{"calls":[{"tool":"capture_pane","arguments":{"paneId":"gpu:%2"}}]}`, host: "gpu",
			wantArgs: `{"calls":[{"tool":"capture_pane","arguments":{"paneId":"%2"}}]}`},
		{name: "an unknown prefix is left alone", args: `{"sessionName":"x:y","paneId":"%1"}`, wantArgs: `{"sessionName":"x:y","paneId":"%1"}`},
		{name: "a prefixed session name", args: `{"sessionName":"gpu:main"}`, host: "gpu", wantArgs: `{"sessionName":"main"}`},
		{name: "unknown host", args: `{"host":"nowhere"}`, fails: true},
		{name: "an option for a host", args: `{"host":"-oProxyCommand=x"}`, fails: true},
		{name: "two hosts", args: `{"paneId":"build:%1","targetPaneId":"gpu:%2"}`, fails: true},
		{name: "host and ids disagree", args: `{"host":"gpu","paneId":"build:%1"}`, fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tt.args), &args); err != nil {
				t.Fatal(err)
			}
			host, err := s.takeHost(args)
			if tt.fails {
				if err == nil {
					t.Errorf("takeHost(%s) = %q, want an error", tt.args, host)
				}
				return
			}
			var want map[string]any
			_ = json.Unmarshal([]byte(tt.wantArgs), &want)
			if err != nil || host != tt.host || !reflect.DeepEqual(args, want) {
				t.Errorf("takeHost(%s) = %q, %v, args %v; want %q, args %s", tt.args, host, err, args, tt.host, tt.wantArgs)
			}
		})
	}
}

func TestPrefixResultMarksEveryIdOfARemoteReply(t *testing.T) {
	fields := map[string]any{
		"panes":  []any{map[string]any{"paneId": "%1", "windowId": "@2", "title": "%3"}},
		"jobId":  "j1",
		"cursor": "c",
	}
	repeat, _ := json.Marshal(fields)
	r := &mcp.CallToolResult{StructuredContent: fields,
		Content: []mcp.Content{&mcp.TextContent{Text: string(repeat)}, &mcp.TextContent{Text: "%1 text"}}}
	prefixResult(r, "gpu")
	b, _ := json.Marshal(r.StructuredContent)
	want := `{"cursor":"gpu:c","jobId":"gpu:j1","panes":[{"paneId":"gpu:%1","title":"%3","windowId":"gpu:@2"}]}`
	if string(b) != want {
		t.Errorf("structured = %s, want %s", b, want)
	}
	if got := r.Content[0].(*mcp.TextContent).Text; got != want {
		t.Errorf("fields block = %s, want %s", got, want)
	}
	if got := r.Content[1].(*mcp.TextContent).Text; got != "%1 text" {
		t.Errorf("pane text changed: %q", got)
	}
	// A fields block that leaves out a field holding pane text, or fences
	// it in place, is the fields still, and is prefixed.
	partial, _ := json.Marshal(fence("$ "))
	for _, block := range []string{`{"paneId":"%1"}`, `{"paneId":"%1","partial":` + string(partial) + `}`} {
		r = &mcp.CallToolResult{StructuredContent: map[string]any{"paneId": "%1", "matched": "{\"paneId\":\"%2\"}", "partial": "$ "},
			Content: []mcp.Content{&mcp.TextContent{Text: block}}}
		prefixResult(r, "gpu")
		if got, want := r.Content[0].(*mcp.TextContent).Text, strings.Replace(block, "%1", "gpu:%1", 1); got != want {
			t.Errorf("fields block %s prefixed = %s, want %s", block, got, want)
		}
	}
	// Pane text that is JSON, not the fields, is left as it is.
	paneJSON := `{"paneId":"%9"}`
	r = &mcp.CallToolResult{StructuredContent: map[string]any{"paneId": "%1"}, Content: []mcp.Content{&mcp.TextContent{Text: paneJSON}}}
	prefixResult(r, "gpu")
	if got := r.Content[0].(*mcp.TextContent).Text; got != paneJSON {
		t.Errorf("pane text rewritten: %s", got)
	}
}

// TestTheHostArgumentCostsBytesOnlyWhenHostsAreConfigured measures the
// wire with two hosts: the default (no hosts) is held to the budget by
// TestToolsListStaysWithinTheWireBudget.
func TestTheHostArgumentCostsBytesOnlyWhenHostsAreConfigured(t *testing.T) {
	measure := func(names ...string) WireCost {
		s := newTestServer(t, DefaultTier)
		if len(names) > 0 {
			withHosts(t, s, names...)
		}
		return measureServer(t, s)
	}
	without, with := measure(), measure("build", "gpu")
	extra := with.ModelVisible - without.ModelVisible
	t.Logf("model-visible %d bytes without hosts, %d with two (+%d for %d tools); whole %d -> %d",
		without.ModelVisible, with.ModelVisible, extra, with.Tools, without.Whole(), with.Whole())
	if extra <= 0 || extra > with.Tools*30+200 {
		t.Errorf("the host argument adds %d model-visible bytes for %d tools; want some, at most ~30 a tool", extra, with.Tools)
	}
}
