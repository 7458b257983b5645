package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// batchReply is what a batch tool returns.
type batchReply struct {
	Completed []struct {
		Tool         string          `json:"tool"`
		Result       json.RawMessage `json:"result"`
		Text         string          `json:"text"`
		DroppedBytes int             `json:"droppedBytes"`
	} `json:"completed"`
	Failed *struct {
		Index int    `json:"index"`
		Tool  string `json:"tool"`
		Error string `json:"error"`
	} `json:"failed"`
	Skipped []string `json:"skipped"`
}

// calls builds a batch's calls argument from tool, arguments pairs.
func calls(pairs ...any) map[string]any {
	var list []map[string]any
	for i := 0; i < len(pairs); i += 2 {
		c := map[string]any{"tool": pairs[i]}
		if pairs[i+1] != nil {
			c["arguments"] = pairs[i+1]
		}
		list = append(list, c)
	}
	return map[string]any{"calls": list}
}

var batchToolNames = []string{"call_destructive_tools_batch", "call_mutating_tools_batch", "call_readonly_tools_batch"}

func TestBatchToolsFollowTheTierMatrix(t *testing.T) {
	cases := []struct {
		tier    string
		offered []string
	}{
		{"readonly", []string{"call_readonly_tools_batch"}},
		{"mutating", []string{"call_mutating_tools_batch", "call_readonly_tools_batch"}},
		{"destructive", batchToolNames},
		{"bogus", []string{"call_readonly_tools_batch"}},
	}
	for _, c := range cases {
		t.Run(c.tier, func(t *testing.T) {
			srv := tmuxtest.New(t)
			s := startTMCP(t, srv, c.tier)
			var got []string
			for _, name := range s.toolNames() {
				if slices.Contains(batchToolNames, name) {
					got = append(got, name)
				}
			}
			if !slices.Equal(got, c.offered) {
				t.Errorf("TMCP_SAFETY=%s offers the batches %v, want %v", c.tier, got, c.offered)
			}
		})
	}
}

func TestBatchRefusesACallAboveItsTierBeforeRunningAny(t *testing.T) {
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	window := paneFormat(srv, pane, "#{window_id}")
	cases := []struct {
		tier, batch string
		calls       map[string]any
		want        []string
	}{
		// At the readonly tier a mutating tool does not exist for a batch.
		{"readonly", "call_readonly_tools_batch",
			calls("list_panes", nil, "rename_window", map[string]any{"windowId": window, "newName": "renamed"}),
			[]string{"call 1", `no tool "rename_window" at the readonly tier`, "nothing was run"}},
		// At the mutating tier a kill does not exist either.
		{"mutating", "call_mutating_tools_batch",
			calls("rename_window", map[string]any{"windowId": window, "newName": "renamed"}, "kill_pane", map[string]any{"paneId": pane}),
			[]string{"call 1", `no tool "kill_pane" at the mutating tier`, "nothing was run"}},
		// At the destructive tier, the mutating batch still runs no kill.
		{"destructive", "call_mutating_tools_batch",
			calls("rename_window", map[string]any{"windowId": window, "newName": "renamed"}, "kill_pane", map[string]any{"paneId": pane}),
			[]string{"call 1", "kill_pane is a destructive tool", "use call_destructive_tools_batch", "nothing was run"}},
		{"destructive", "call_readonly_tools_batch",
			calls("list_panes", nil, "rename_window", map[string]any{"windowId": window, "newName": "renamed"}),
			[]string{"call 1", "rename_window is a mutating tool", "use call_mutating_tools_batch", "nothing was run"}},
	}
	for _, c := range cases {
		t.Run(c.tier+"/"+c.batch, func(t *testing.T) {
			s := startTMCP(t, srv, c.tier)
			msg := s.fail(c.batch, c.calls)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s at %s: %q, want it to say %q", c.batch, c.tier, msg, w)
				}
			}
			if name := paneFormat(srv, pane, "#{window_name}"); name == "renamed" {
				t.Errorf("window %s was renamed although the batch was refused", window)
			}
			if got := tmuxOne(srv, "list-panes", "-a", "-F", "#{pane_id}"); got != pane {
				t.Errorf("panes after a refused batch: %q, want %s alone", got, pane)
			}
		})
	}
}

func TestBatchRefusesNestingWaitsBadArgumentsAndTooManyCalls(t *testing.T) {
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	window := paneFormat(srv, pane, "#{window_id}")
	s := startTMCP(t, srv, "destructive")
	rename := map[string]any{"windowId": window, "newName": "renamed"}
	var many []any
	for i := 0; i < 33; i++ {
		many = append(many, "rename_window", rename)
	}
	cases := []struct {
		name  string
		calls map[string]any
		want  []string
	}{
		{"nesting", calls("rename_window", rename, "call_readonly_tools_batch", calls("list_panes", nil)),
			[]string{"call 1", "batches do not nest"}},
		{"run_command", calls("rename_window", rename, "run_command", map[string]any{"paneId": pane, "command": "true"}),
			[]string{"call 1", "run_command waits", "call it on its own"}},
		{"wait_for_text", calls("rename_window", rename, "wait_for_text", map[string]any{"paneId": pane, "patterns": []string{"x"}}),
			[]string{"call 1", "wait_for_text waits"}},
		{"get_job", calls("get_job", map[string]any{"jobId": "j1"}), []string{"call 0", "get_job waits"}},
		{"wait_for_channel", calls("wait_for_channel", map[string]any{"channel": "c"}), []string{"call 0", "wait_for_channel waits"}},
		{"unknown tool", calls("rename_window", rename, "no_such_tool", nil), []string{"call 1", `no tool "no_such_tool"`}},
		{"unknown argument", calls("rename_window", rename, "list_panes", map[string]any{"paneID": pane}),
			[]string{"call 1 (list_panes)", "paneID"}},
		{"wrong argument type", calls("rename_window", rename, "capture_pane", map[string]any{"paneId": pane, "maxLines": "ten"}),
			[]string{"call 1 (capture_pane)", "maxLines"}},
		{"missing required argument", calls("rename_window", rename, "send_keys", map[string]any{"paneId": pane}),
			[]string{"call 1 (send_keys)", "keys"}},
		{"too many calls", calls(many...), []string{"33 calls", "at most 32"}},
		{"no calls", map[string]any{"calls": []any{}}, []string{"calls is empty"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := s.on(t).fail("call_destructive_tools_batch", c.calls)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q, want it to say %q", msg, w)
				}
			}
			if !strings.Contains(msg, "nothing was run") {
				t.Errorf("%q does not say nothing was run", msg)
			}
			if name := paneFormat(srv, pane, "#{window_name}"); name == "renamed" {
				t.Fatalf("window %s was renamed although the batch was refused", window)
			}
		})
	}
	// A batch's own arguments are checked by the SDK as any tool's are.
	if msg := s.fail("call_destructive_tools_batch", map[string]any{"calls": []any{map[string]any{"tool": "list_panes", "args": map[string]any{}}}}); !strings.Contains(msg, "args") {
		t.Errorf("a misspelt arguments key: %q", msg)
	}
}

func TestBatchRunsCallsInOrderWithTheirEffects(t *testing.T) {
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	window := paneFormat(srv, pane, "#{window_id}")
	s := startTMCP(t, srv, "")
	var out batchReply
	s.ok("call_mutating_tools_batch", calls(
		"rename_window", map[string]any{"windowId": window, "newName": "first"},
		"rename_window", map[string]any{"windowId": window, "newName": "second"},
		"send_keys", map[string]any{"paneId": pane, "keys": "clear; echo one-$((1+1))"},
		"send_keys", map[string]any{"paneId": pane, "keys": "echo three-$((1+2))"},
		"create_window", map[string]any{"sessionName": "main", "name": "made"},
		"list_windows", map[string]any{"sessionName": "main"},
	), &out)
	names := []string{}
	for _, c := range out.Completed {
		names = append(names, c.Tool)
	}
	want := []string{"rename_window", "rename_window", "send_keys", "send_keys", "create_window", "list_windows"}
	if !slices.Equal(names, want) || out.Failed != nil || len(out.Skipped) != 0 {
		t.Fatalf("batch: completed %v, failed %+v, skipped %v; want %v all completed", names, out.Failed, out.Skipped, want)
	}
	if got := paneFormat(srv, pane, "#{window_name}"); got != "second" {
		t.Errorf("window %s is named %q, want the last rename, second", window, got)
	}
	if got := strings.Split(tmuxOne(srv, "list-windows", "-t", "=main", "-F", "#{window_name}"), "\n"); !slices.Equal(got, []string{"second", "made"}) {
		t.Errorf("windows of main: %v, want [second made]", got)
	}
	// The last call ran after create_window, and saw its window.
	var listed struct {
		Windows []struct {
			Name string `json:"name"`
		} `json:"windows"`
	}
	if err := json.Unmarshal(out.Completed[5].Result, &listed); err != nil || len(listed.Windows) != 2 || listed.Windows[1].Name != "made" {
		t.Errorf("list_windows in the batch: %s (%v), want the window made before it", out.Completed[5].Result, err)
	}
	waitScreen(t, srv, pane, "both lines, in order", func(l []string) bool {
		a, b := rowEnding(l, "one-2"), rowEnding(l, "three-3")
		return a >= 0 && b > a
	})

	// A pane's text comes back once, bounded, beside the fields.
	s.ok("call_readonly_tools_batch", calls("capture_pane", map[string]any{"paneId": pane}), &out)
	if len(out.Completed) != 1 || !strings.Contains(out.Completed[0].Text, "three-3") || strings.Contains(string(out.Completed[0].Result), "three-3") {
		t.Errorf("capture_pane in a batch: %+v, want the screen in text only", out.Completed)
	}
}

func TestBatchStopsAtTheFirstFailure(t *testing.T) {
	srv := tmuxtest.New(t)
	pane := mainPane(srv)
	window := paneFormat(srv, pane, "#{window_id}")
	s := startTMCP(t, srv, "destructive")
	res := s.call("call_destructive_tools_batch", calls(
		"rename_window", map[string]any{"windowId": window, "newName": "before"},
		"kill_pane", map[string]any{"paneId": "%99"},
		"rename_window", map[string]any{"windowId": window, "newName": "after"},
		"create_window", map[string]any{"sessionName": "main"},
	))
	if !res.IsError {
		t.Fatalf("a batch with a failing call is not an error: %s", allText(res))
	}
	var out batchReply
	decodeStructured(t, "call_destructive_tools_batch", res, &out)
	if len(out.Completed) != 1 || out.Completed[0].Tool != "rename_window" {
		t.Errorf("completed %+v, want rename_window alone", out.Completed)
	}
	if out.Failed == nil || out.Failed.Index != 1 || out.Failed.Tool != "kill_pane" || !strings.Contains(out.Failed.Error, "%99") || !strings.Contains(out.Failed.Error, "list_panes") {
		t.Errorf("failed %+v, want call 1, kill_pane, naming %%99 and list_panes", out.Failed)
	}
	if !slices.Equal(out.Skipped, []string{"rename_window", "create_window"}) {
		t.Errorf("skipped %v, want [rename_window create_window]", out.Skipped)
	}
	if got := paneFormat(srv, pane, "#{window_name}"); got != "before" {
		t.Errorf("window %s is named %q, want before (the call after the failure must not run)", window, got)
	}
	if got := tmuxOne(srv, "list-windows", "-t", "=main", "-F", "#{window_id}"); got != window {
		t.Errorf("windows: %q, want only %s", got, window)
	}
	if first := allText(res); !strings.HasPrefix(first, "call 1 (kill_pane) failed after 1 completed") || !strings.Contains(first, "not run: rename_window, create_window") || !strings.Contains(first, `"skipped"`) {
		t.Errorf("the text of the reply: %s, want what failed first, then the report", first)
	}
}

func TestBatchNeverAsksThePersonMidway(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("split-window", "-t", "main", "sh")
	waitScreen(t, srv, "%0", "a prompt", func(l []string) bool {
		return strings.Contains(strings.Join(l, ""), "#") || strings.Contains(strings.Join(l, ""), "$")
	})
	var asked atomic.Int32
	cs := insidePane(t, srv, "%0", func() string { return "accept" }, &asked)
	res, text := callTool(t, cs, "call_destructive_tools_batch", calls(
		"rename_window", map[string]any{"windowId": "@0", "newName": "guarded"},
		"kill_pane", map[string]any{"paneId": "%0"},
		"kill_pane", map[string]any{"paneId": "%1"},
	))
	var out batchReply
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
	}
	if !res.IsError || out.Failed == nil || out.Failed.Index != 1 || !strings.Contains(out.Failed.Error, "call kill_pane on its own") {
		t.Fatalf("a batch killing the caller's pane: %s, want call 1 failed, saying to call kill_pane on its own", text)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the person was asked %d times from inside a batch", n)
	}
	if got := tmuxOne(srv, "list-panes", "-t", "=main:", "-F", "#{pane_id}"); got != "%0\n%1" {
		t.Errorf("panes: %q, want %%0 and %%1 both alive", got)
	}
	if got := paneFormat(srv, "%0", "#{window_name}"); got != "guarded" {
		t.Errorf("the call before the guarded one did not run: window name %q", got)
	}
}

func TestBatchCallsAreAuditedOneLineEachWithoutPayloads(t *testing.T) {
	srv := tmuxtest.New(t)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	s := startTMCPWithEnv(t, srv, "mutating", []string{"TMCP_AUDIT=" + audit})
	const secret = "SECRET-b47c"
	s.ok("call_mutating_tools_batch", calls("send_keys", map[string]any{"paneId": "%0", "keys": "echo " + secret}), nil)
	waitScreen(t, srv, "%0", "the secret printed", func(l []string) bool { return hasLine(l, secret) })
	// The failure's text, which the batch's own line keeps, holds no pane text.
	s.fail("call_mutating_tools_batch", calls(
		"capture_pane", map[string]any{"paneId": "%0"},
		"send_keys", map[string]any{"paneId": "%99", "keys": "x"},
	))
	s.fail("call_mutating_tools_batch", calls("list_panes", nil, "kill_window", nil))
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secret) {
		t.Fatalf("the audit log holds payload or pane text:\n%s", data)
	}
	var tools []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var line struct {
			Tool    string `json:"tool"`
			Outcome string `json:"outcome"`
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		tools = append(tools, line.Tool+" "+line.Outcome)
	}
	want := []string{
		"call_mutating_tools_batch/send_keys ok",
		"call_mutating_tools_batch ok",
		"call_mutating_tools_batch/capture_pane ok",
		"call_mutating_tools_batch/send_keys error",
		"call_mutating_tools_batch error",
		"call_mutating_tools_batch error", // refused before any ran: kill_window is above the tier
	}
	if !slices.Equal(tools, want) {
		t.Errorf("audit lines %v, want %v", tools, want)
	}
}
