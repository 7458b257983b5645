package wait

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/probe"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// TestWaitForReadyEndsOnTheProbeAStopLineOrThePanesEnd: a readiness wait
// ends when its probe passes, or at once when the pane it is tied to
// prints a stop line or dies (with the pane's lines), or when time runs
// out (with the last probe's result).
func TestWaitForReadyEndsOnTheProbeAStopLineOrThePanesEnd(t *testing.T) {
	f := newFixture(t)
	open, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()

	tests := []struct {
		name    string
		addr    string
		pane    bool
		stop    []string
		stable  time.Duration
		timeout time.Duration
		act     func(paneID string) // once the pane is watched, off the test's goroutine: it must not fail the test
		outcome string
		detail  string // in the last probe's detail
		line    string // in the pane's lines
	}{
		{name: "port listening", addr: open.Addr().String(), outcome: OutcomeReady, detail: "accepting connections"},
		{name: "listening for the window", addr: open.Addr().String(), stable: 300 * time.Millisecond, outcome: OutcomeReady},
		{name: "refused until the timeout", addr: refused, timeout: time.Second, outcome: OutcomeTimeout, detail: "connection refused"},
		{name: "a stop line", addr: refused, pane: true, stop: []string{"EADDRINUSE"},
			act: func(id string) {
				_, _ = f.srv.Tmux("send-keys", "-t", id, "echo listen EADDR''INUSE", "Enter")
			}, outcome: OutcomeStopped, line: "listen EADDRINUSE"},
		{name: "the pane dies", addr: refused, pane: true,
			act: func(id string) {
				// It dies once its line is on screen: output a pane writes
				// as it ends may be dropped by tmux, which is not the point.
				_, _ = f.srv.Tmux("send-keys", "-t", id, "echo crashed-$((40+2)); tmux wait-for died; exit 3", "Enter")
				tmuxtest.WaitFor(5*time.Second, func() bool {
					screen, _ := f.srv.Tmux("capture-pane", "-p", "-t", id)
					return strings.Contains(screen, "crashed-42")
				})
				_, _ = f.srv.Tmux("wait-for", "-S", "died")
			}, outcome: OutcomePaneDied, line: "crashed-42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target, err := probe.ParseTarget(tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			req := ReadyRequest{Target: target, Stable: tt.stable, Timeout: Timeout{Duration: 20 * time.Second}, Stop: tt.stop}
			if tt.timeout > 0 {
				req.Timeout.Duration = tt.timeout
			}
			if tt.pane {
				req.PaneID = strings.TrimSpace(f.srv.Must("new-window", "-P", "-F", "#{pane_id}", "sh"))
				// Kept when it dies, so that its last lines can be read:
				// output a pane writes as it ends may never reach tmcp.
				f.srv.Must("set-option", "-p", "-t", req.PaneID, "remain-on-exit", "on")
				f.waitForPrompt(req.PaneID)
				go func() {
					if id := <-f.waiting; id == req.PaneID {
						tt.act(id)
					}
				}()
			}
			r, err := f.s.WaitForReady(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != tt.outcome || !strings.Contains(r.Probe.Detail, tt.detail) ||
				tt.line != "" && !slices.ContainsFunc(append(r.Lines, r.Screen...), func(l string) bool { return strings.Contains(l, tt.line) }) {
				t.Errorf("WaitForReady on %s: outcome %s, probe %+v after %d probes, lines %q, screen %q; want %s, a probe saying %q, a line with %q",
					tt.addr, r.Outcome, r.Probe, r.Probes, r.Lines, r.Screen, tt.outcome, tt.detail, tt.line)
			}
		})
	}
}
