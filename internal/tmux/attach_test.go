package tmux

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// TestEveryAttachWaitsForTheOneInProgress: the command client and the
// output clients attach one at a time (tmux 3.3a crashes when a client
// detaches while another attaches), and waiting for the turn is bounded by
// the caller's context.
func TestEveryAttachWaitsForTheOneInProgress(t *testing.T) {
	srv := tmuxtest.New(t)
	tests := []struct {
		name   string
		attach func(ctx context.Context, c *Client) error
	}{
		{"command client", func(ctx context.Context, c *Client) error {
			_, err := c.Run(ctx, "display-message", "-p", "x")
			return err
		}},
		{"output client", func(ctx context.Context, c *Client) error {
			stop, err := c.Watch(ctx, "%0", "$0", func(OutputEvent) {})
			if err == nil {
				stop()
			}
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, srv)
			c.attaching <- struct{}{} // an attach in progress
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			err := tt.attach(ctx, c)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("attaching while another attach is in progress: err %v, want the caller's deadline", err)
			}
			if n := len(c.ControlSessions()); n != 0 {
				t.Errorf("attaching while another attach is in progress: %d control clients attached, want 0", n)
			}
			<-c.attaching
			// A failed attach holds the next back briefly (attachRetryDelay).
			attached := tmuxtest.WaitFor(5*time.Second, func() bool {
				if err := tt.attach(context.Background(), c); err != nil {
					t.Fatalf("attaching once the other attach ended: %v", err)
				}
				return len(c.ControlSessions()) == 1
			})
			if !attached {
				t.Errorf("once the other attach ended: %d control clients attached, want 1", len(c.ControlSessions()))
			}
		})
	}
}
