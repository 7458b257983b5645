package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// stallTimeout is the timeoutSeconds every wait is given in the stalled
// tmux tests, and stallSlack how much later than it the issue allows the
// reply to come: the budget holds whatever tmux does.
const (
	stallTimeout = 2 * time.Second
	stallSlack   = 500 * time.Millisecond
)

// A stall phase says when tmux is stopped relative to a wait of
// stallTimeout: before the call is sent, while it waits, or just before
// its final read of the screen.
var stallPhases = []struct {
	name string
	at   time.Duration // after the call is sent; negative: before it
}{
	{"before the call", -1},
	{"during the wait", 500 * time.Millisecond},
	{"at the final read", stallTimeout - 150*time.Millisecond},
}

// stalledWait is one wait tool under a stopped tmux: how to set it up and
// call it, and what its reply must say.
type stalledWait struct {
	tool  string
	setup func(t *testing.T, srv *tmuxtest.Server, s *session) map[string]any
	check func(t *testing.T, phase string, res *mcp.CallToolResult)
}

func TestEveryWaitAnswersByItsTimeoutWhileTmuxIsStopped(t *testing.T) {
	t.Parallel()
	secs := stallTimeout.Seconds()
	waits := []stalledWait{
		{
			tool: "wait_for_text",
			setup: func(t *testing.T, srv *tmuxtest.Server, s *session) map[string]any {
				return map[string]any{"paneId": shellPane(t, srv), "patterns": []string{"never printed"}, "timeoutSeconds": secs}
			},
			check: func(t *testing.T, phase string, res *mcp.CallToolResult) {
				r := replyFields[waitTextOut](t, "wait_for_text", res)
				if r.Outcome != "timeout" || !strings.Contains(r.Reason, "did not answer") {
					t.Errorf("wait_for_text, tmux stopped %s: outcome %q reason %q, want a timeout that says tmux did not answer", phase, r.Outcome, r.Reason)
				}
			},
		},
		{
			tool: "run_command",
			setup: func(t *testing.T, srv *tmuxtest.Server, s *session) map[string]any {
				return map[string]any{"paneId": shellPane(t, srv), "command": "sleep 30", "timeoutSeconds": secs}
			},
			check: func(t *testing.T, phase string, res *mcp.CallToolResult) {
				if res.IsError {
					// Stopped before the keys were typed: nothing runs.
					if msg := allText(res); !strings.Contains(msg, "did not answer") || !strings.Contains(msg, "not typed") {
						t.Errorf("run_command, tmux stopped %s: %q, want it to say tmux did not answer and the command was not typed", phase, msg)
					}
					return
				}
				r := replyFields[jobOut](t, "run_command", res)
				if !r.TimedOut || !r.Running || r.JobID == "" {
					t.Errorf("run_command, tmux stopped %s: %+v, want timedOut and running with a jobId", phase, r)
				}
			},
		},
		{
			tool: "get_job",
			setup: func(t *testing.T, srv *tmuxtest.Server, s *session) map[string]any {
				var r jobOut
				decodeStructured(t, "run_command", s.call("run_command", map[string]any{"paneId": shellPane(t, srv), "command": "sleep 30", "detach": true}), &r)
				return map[string]any{"jobId": r.JobID, "timeoutSeconds": secs}
			},
			check: func(t *testing.T, phase string, res *mcp.CallToolResult) {
				r := replyFields[jobOut](t, "get_job", res)
				if !r.TimedOut || !r.Running {
					t.Errorf("get_job, tmux stopped %s: %+v, want timedOut and running", phase, r)
				}
			},
		},
		{
			tool: "wait_for_channel",
			setup: func(t *testing.T, srv *tmuxtest.Server, s *session) map[string]any {
				return map[string]any{"channel": fmt.Sprintf("stall-%d", time.Now().UnixNano()), "timeoutSeconds": secs}
			},
			check: func(t *testing.T, phase string, res *mcp.CallToolResult) {
				var r struct {
					Outcome string `json:"outcome"`
				}
				decodeStructured(t, "wait_for_channel", res, &r)
				if r.Outcome != "timeout" {
					t.Errorf("wait_for_channel, tmux stopped %s: outcome %q, want timeout", phase, r.Outcome)
				}
			},
		},
	}
	for _, w := range waits {
		for _, phase := range stallPhases {
			t.Run(w.tool+" "+phase.name, func(t *testing.T) {
				t.Parallel()
				srv := tmuxtest.New(t)
				spare := newShellWindow(t, srv)
				s := startTMCP(t, srv, "")
				args := w.setup(t, srv, s)
				t.Cleanup(srv.Continue)

				if phase.at < 0 {
					srv.Stop()
				}
				sent := time.Now()
				ch := s.async(w.tool, args)
				if phase.at >= 0 {
					// The moment of the stop is the point of the case.
					time.Sleep(time.Until(sent.Add(phase.at)))
					srv.Stop()
				}
				pingWhileStalled(t, s)
				r := awaitCall(t, w.tool, ch)
				took := r.at.Sub(sent)
				t.Logf("%s, tmux stopped %s: answered after %v", w.tool, phase.name, took.Round(time.Millisecond))
				if took > stallTimeout+stallSlack {
					t.Errorf("%s with timeoutSeconds %v, tmux stopped %s: answered after %v, want within %v", w.tool, secs, phase.name, took, stallTimeout+stallSlack)
				}
				w.check(t, phase.name, r.res)

				srv.Continue()
				checkWorksAgain(t, s, spare)
			})
		}
	}
}

func TestCaptureSinceAnswersWithinTheCommandTimeoutWhileTmuxIsStopped(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	spare := newShellWindow(t, srv)
	s := startTMCP(t, srv, "")
	var first struct {
		Cursor string `json:"cursor"`
	}
	decodeStructured(t, "capture_since", s.call("capture_since", map[string]any{"paneId": pane}), &first)
	tty := openTTY(t, srv, pane)
	writeTTY(t, tty, "\r\nnew output\r\n")
	waitScreen(t, srv, pane, "the new output", func(rows []string) bool { return hasLine(rows, "new output") })
	t.Cleanup(srv.Continue)

	srv.Stop()
	sent := time.Now()
	ch := s.async("capture_since", map[string]any{"cursor": first.Cursor})
	pingWhileStalled(t, s)
	r := awaitCall(t, "capture_since", ch)
	took := r.at.Sub(sent)
	t.Logf("capture_since, tmux stopped: answered after %v", took.Round(time.Millisecond))
	if bound := commandTimeout + stallSlack; took > bound {
		t.Errorf("capture_since with tmux stopped answered after %v, want within %v", took, bound)
	}
	if msg := allText(r.res); r.res.IsError && !strings.Contains(msg, "no answer from tmux") {
		t.Errorf("capture_since with tmux stopped: %q, want it to say tmux did not answer", msg)
	}
	srv.Continue()
	checkWorksAgain(t, s, spare)
}

// commandTimeout mirrors mcpserver.CommandTimeout, the budget of a call that
// does not wait.
const commandTimeout = 5 * time.Second

// pingWhileStalled checks that tmcp answers a request that needs no tmux
// promptly while a call hangs on a stopped tmux.
func pingWhileStalled(t *testing.T, s *session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.cs.Ping(ctx, nil); err != nil || time.Since(start) > time.Second {
		t.Errorf("ping while tmux is stopped: took %v, error %v; want an answer within 1s", time.Since(start), err)
	}
}

// checkWorksAgain checks that, tmux resumed, the very next call works: a
// command runs in pane and reports its output and status.
func checkWorksAgain(t *testing.T, s *session, pane string) {
	t.Helper()
	var r jobOut
	res := s.call("run_command", map[string]any{"paneId": pane, "command": "echo back-again", "timeoutSeconds": 10})
	if res.IsError {
		t.Fatalf("run_command after SIGCONT: %s", allText(res))
	}
	decodeStructured(t, "run_command", res, &r)
	if text := paneText(t, "run_command", res); r.ExitStatus == nil || *r.ExitStatus != 0 || text != "back-again" {
		t.Errorf("run_command after SIGCONT: status %s output %q, want 0 and back-again", status(r.ExitStatus), text)
	}
}

// replyFields returns the fields of a reply that must not be an error.
func replyFields[T any](t *testing.T, name string, res *mcp.CallToolResult) T {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s failed: %s", name, allText(res))
	}
	var out T
	decodeStructured(t, name, res, &out)
	return out
}
