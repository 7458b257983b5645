package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// clientPatience is the request timeout of a client that resets it on
// every progress notification, as the TypeScript SDK's
// resetTimeoutOnProgress does: far shorter than the waits below.
const clientPatience = 2 * time.Second

// patientCall calls a tool as such a client would: the call is cancelled
// once clientPatience passes without a progress notification for it.
// It returns the result, or the error of a call the client gave up on.
func patientCall(t *testing.T, s *session, progress *progressLog, name string, args map[string]any) (*mcp.CallToolResult, error) {
	t.Helper()
	token := name + "-" + t.Name()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(token)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	watchdog := time.AfterFunc(clientPatience, func() { cancel(errGaveUp) })
	defer watchdog.Stop()
	progress.watch(token, func() { watchdog.Reset(clientPatience) })
	res, err := s.cs.CallTool(ctx, params)
	if cause := context.Cause(ctx); cause == errGaveUp {
		return nil, cause
	}
	return res, err
}

var errGaveUp = &gaveUp{}

type gaveUp struct{}

func (*gaveUp) Error() string {
	return "the client gave up: no progress within " + clientPatience.String()
}

// progressLog routes progress notifications to whoever watches their token.
type progressLog struct {
	mu       sync.Mutex
	watchers map[any]func()
}

func (p *progressLog) watch(token any, fn func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watchers[token] = fn
}

func (p *progressLog) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	fn := p.watchers[req.Params.ProgressToken]
	p.mu.Unlock()
	if fn != nil {
		fn()
	}
}

func TestEveryWaitOutlivesAClientTimeoutThatResetsOnProgress(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	jobPane := newShellWindow(t, srv)
	progress := &progressLog{watchers: map[any]func(){}}
	s := startTMCPWith(t, srv, &mcp.ClientOptions{ProgressNotificationHandler: progress.handle}, nil)
	var job jobOut
	decodeStructured(t, "run_command", s.call("run_command", map[string]any{"paneId": jobPane, "command": "sleep 6; echo slept", "detach": true}), &job)

	const wait = 6 // seconds: three times the client's patience
	for _, c := range []struct {
		tool string
		args map[string]any
		want func(t *testing.T, res *mcp.CallToolResult)
	}{
		{"wait_for_text", map[string]any{"paneId": pane, "patterns": []string{"never printed"}, "timeoutSeconds": wait}, func(t *testing.T, res *mcp.CallToolResult) {
			if r := replyFields[waitTextOut](t, "wait_for_text", res); r.Outcome != "timeout" {
				t.Errorf("wait_for_text: outcome %s, want timeout after %ds", r.Outcome, wait)
			}
		}},
		{"wait_for_text", map[string]any{"paneIds": []string{pane, jobPane}, "mode": "all", "patterns": []string{"never printed"}, "timeoutSeconds": wait}, func(t *testing.T, res *mcp.CallToolResult) {
			if r := replyFields[waitTextOut](t, "wait_for_text", res); r.Outcome != "timeout" {
				t.Errorf("wait_for_text across panes: outcome %s, want timeout after %ds", r.Outcome, wait)
			}
		}},
		{"wait_for_channel", map[string]any{"channel": "never-signalled", "timeoutSeconds": wait}, func(t *testing.T, res *mcp.CallToolResult) {
			var r struct {
				Outcome string `json:"outcome"`
			}
			if decodeStructured(t, "wait_for_channel", res, &r); r.Outcome != "timeout" {
				t.Errorf("wait_for_channel: outcome %s, want timeout after %ds", r.Outcome, wait)
			}
		}},
		{"run_command", map[string]any{"paneId": pane, "command": "sleep 5; echo woke", "timeoutSeconds": wait + 4}, func(t *testing.T, res *mcp.CallToolResult) {
			r := replyFields[jobOut](t, "run_command", res)
			if text := paneText(t, "run_command", res); !r.Finished || text != "woke" {
				t.Errorf("run_command: finished %v output %q, want finished with woke", r.Finished, text)
			}
		}},
		{"get_job", map[string]any{"jobId": job.JobID, "timeoutSeconds": wait + 4}, func(t *testing.T, res *mcp.CallToolResult) {
			r := replyFields[jobOut](t, "get_job", res)
			if text := paneText(t, "get_job", res); !r.Finished || text != "slept" {
				t.Errorf("get_job: finished %v output %q, want finished with slept", r.Finished, text)
			}
		}},
	} {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			res, err := patientCall(t, s, progress, c.tool, c.args)
			if err != nil {
				t.Fatalf("%s under a %v client timeout that resets on progress: %v", c.tool, clientPatience, err)
			}
			c.want(t, res)
		})
	}
}
