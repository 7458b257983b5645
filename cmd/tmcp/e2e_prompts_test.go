package main

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// promptNames lists the prompts tmcp offers, sorted.
func (s *session) promptNames() []string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := s.cs.ListPrompts(ctx, nil)
	if err != nil {
		s.t.Fatalf("prompts/list: %v", err)
	}
	var names []string
	for _, p := range res.Prompts {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// getPrompt renders a prompt and returns its one message's text.
func (s *session) getPrompt(name string, args map[string]string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		s.t.Fatalf("prompts/get %s: %d messages, want one from the user: %+v", name, len(res.Messages), res.Messages)
	}
	tc, ok := res.Messages[0].Content.(*mcp.TextContent)
	if !ok {
		s.t.Fatalf("prompts/get %s: content %T, want text", name, res.Messages[0].Content)
	}
	return tc.Text, nil
}

func TestPromptsAreOfferedByTier(t *testing.T) {
	srv := tmuxtest.New(t)
	all := []string{"find_failing_pane", "recover_stuck_pane", "start_service", "watch_job"}
	cases := []struct {
		tier string
		want []string
	}{
		{"readonly", []string{"find_failing_pane"}},
		{"", all},
		{"destructive", all},
		{"typo", []string{"find_failing_pane"}},
	}
	for _, c := range cases {
		s := startTMCP(t, srv, c.tier)
		if got := s.promptNames(); !slices.Equal(got, c.want) {
			t.Errorf("TMCP_SAFETY=%q: prompts %v, want %v", c.tier, got, c.want)
		}
		if c.tier == "readonly" {
			if _, err := s.getPrompt("start_service", map[string]string{"command": "x", "readyPattern": "y"}); err == nil {
				t.Errorf("readonly: prompts/get start_service succeeded; want it withheld")
			}
		}
	}
}

func TestPromptsRenderTheirArguments(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	cases := []struct {
		name string
		args map[string]string
		want []string
	}{
		{"start_service", map[string]string{"command": "python3 -m http.server 8000", "readyPattern": "Serving HTTP", "paneId": "%0"},
			[]string{"Use pane %0", `"keys": "python3 -m http.server 8000"`, `"patterns": ["Serving HTTP"]`, "wait_for_text", "capture_since"}},
		{"find_failing_pane", nil, []string{"search_panes", "snapshot_pane", `"regex": true`}},
		{"watch_job", map[string]string{"command": "make test"}, []string{`run_command {"command": "make test", "detach": true}`, "get_job"}},
		{"recover_stuck_pane", map[string]string{"paneId": "%0"}, []string{"snapshot_pane", `"keys": "C-c"`, "exit_copy_mode", "respawn_pane"}},
	}
	for _, c := range cases {
		text, err := s.getPrompt(c.name, c.args)
		if err != nil {
			t.Errorf("prompts/get %s %v: %v", c.name, c.args, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("prompts/get %s %v: text lacks %q:\n%s", c.name, c.args, w, text)
			}
		}
	}
	if _, err := s.getPrompt("start_service", map[string]string{"command": "x"}); err == nil || !strings.Contains(err.Error(), "readyPattern") {
		t.Errorf("prompts/get start_service without readyPattern: %v, want an error naming it", err)
	}
	if _, err := s.getPrompt("no_such_prompt", nil); err == nil {
		t.Errorf("prompts/get of an unknown prompt succeeded")
	}
}

func TestPromptArgumentsComplete(t *testing.T) {
	srv := tmuxtest.New(t)
	other := newWindow(srv, "sh")
	s := startTMCP(t, srv, "")
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := s.cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "recover_stuck_pane"},
		Argument: mcp.CompleteParamsArgument{Name: "paneId", Value: "%"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"%0", other}; !slices.Equal(res.Completion.Values, want) {
		t.Errorf("completing recover_stuck_pane paneId: %v, want %v", res.Completion.Values, want)
	}
}

func TestPromptsAsToolOnlyWithTheEnvironment(t *testing.T) {
	srv := tmuxtest.New(t)
	if names := startTMCP(t, srv, "").toolNames(); slices.Contains(names, "get_prompt") {
		t.Errorf("get_prompt offered without TMCP_PROMPTS_AS_TOOLS=1")
	}
	if names := startTMCPWithEnv(t, srv, "", []string{"TMCP_PROMPTS_AS_TOOLS=0"}).toolNames(); slices.Contains(names, "get_prompt") {
		t.Errorf("get_prompt offered with TMCP_PROMPTS_AS_TOOLS=0")
	}

	s := startTMCPWithEnv(t, srv, "", []string{"TMCP_PROMPTS_AS_TOOLS=1"})
	tool := s.tool("get_prompt")
	for _, name := range []string{"start_service", "find_failing_pane", "watch_job", "recover_stuck_pane"} {
		if !strings.Contains(tool.Description, name) {
			t.Errorf("get_prompt description %q does not list %s", tool.Description, name)
		}
	}
	if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
		t.Errorf("get_prompt is not read only: %+v", tool.Annotations)
	}
	args := map[string]string{"command": "make test", "paneId": "%0"}
	res := s.ok("get_prompt", map[string]any{"name": "watch_job", "arguments": args}, nil)
	viaPrompt, err := s.getPrompt("watch_job", args)
	if err != nil {
		t.Fatal(err)
	}
	// The prompt is tmcp's own text, not a pane's: it comes unfenced.
	if len(res.Content) != 2 {
		t.Fatalf("get_prompt: %d content blocks, want 2 (fields, the prompt): %s", len(res.Content), allText(res))
	}
	if got := res.Content[1].(*mcp.TextContent).Text; got != viaPrompt {
		t.Errorf("get_prompt gave\n%s\nprompts/get gives\n%s", got, viaPrompt)
	}
	if msg := s.fail("get_prompt", map[string]any{"name": "nope"}); !strings.Contains(msg, "start_service") {
		t.Errorf("get_prompt of an unknown name: %q, want the names to choose from", msg)
	}
	if msg := s.fail("get_prompt", map[string]any{"name": "recover_stuck_pane"}); !strings.Contains(msg, "paneId") {
		t.Errorf("get_prompt without a required argument: %q, want it named", msg)
	}

	ro := startTMCPWithEnv(t, srv, "readonly", []string{"TMCP_PROMPTS_AS_TOOLS=1"})
	if d := ro.tool("get_prompt").Description; strings.Contains(d, "start_service") || !strings.Contains(d, "find_failing_pane") {
		t.Errorf("readonly get_prompt description %q: want only the read-only prompts", d)
	}
	if msg := ro.fail("get_prompt", map[string]any{"name": "start_service", "arguments": map[string]string{"command": "x", "readyPattern": "y"}}); !strings.Contains(msg, "readonly") {
		t.Errorf("readonly get_prompt start_service: %q, want a refusal naming the tier", msg)
	}
}

// TestStartServiceRecipeWorksAsWritten follows the start_service steps
// with the very arguments the rendered prompt gives, against real tmux:
// a service that comes up is matched, one that fails is stopped.
func TestStartServiceRecipeWorksAsWritten(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	cases := []struct {
		service, ready, line, outcome string
	}{
		{"sleep 0.3; echo ready-on-8000; sleep 30", "ready-on-[0-9]+", "ready-on-8000", "matched"},
		{"sleep 0.3; echo 'bind: address already in use'; sleep 30", "ready-on-[0-9]+", "bind: address already in use", "stopped"},
	}
	for _, c := range cases {
		pane := newShellWindow(t, srv)
		text, err := s.getPrompt("start_service", map[string]string{"command": c.service, "readyPattern": c.ready, "paneId": pane})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{`capture_since {"paneId": P}`, `send_keys {"paneId": P, "keys": ` + quoteJSON(c.service), `"stop": [` + quoteJSON(`(?i)error|fatal|panic|traceback|address already in use|not found`)} {
			if !strings.Contains(text, w) {
				t.Fatalf("start_service text lacks %q:\n%s", w, text)
			}
		}
		var since struct {
			Cursor string `json:"cursor"`
		}
		s.ok("capture_since", map[string]any{"paneId": pane}, &since)
		s.ok("send_keys", map[string]any{"paneId": pane, "keys": c.service}, nil)
		var waited struct {
			Outcome string `json:"outcome"`
			Matched string `json:"matched"`
		}
		s.ok("wait_for_text", map[string]any{"paneId": pane, "cursor": since.Cursor, "patterns": []string{c.ready},
			"stop": []string{`(?i)error|fatal|panic|traceback|address already in use|not found`}, "regex": true, "timeoutSeconds": 20}, &waited)
		if waited.Outcome != c.outcome || waited.Matched != c.line {
			t.Errorf("start_service %q: outcome %s on %q, want %s on %q", c.service, waited.Outcome, waited.Matched, c.outcome, c.line)
		}
		waitScreen(t, srv, pane, c.line, func(l []string) bool { return hasLine(l, c.line) })
		srv.Must("send-keys", "-t", pane, "C-c", "")
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
