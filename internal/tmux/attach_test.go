package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
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

// TestAnAttachWhoseTransportDiesIsAConnectionLost: a remote control client
// whose ssh fails or is killed before tmux answered the attach is a lost
// connection, as one cut later is, and its error says so; tmux's own
// refusal is not.
func TestAnAttachWhoseTransportDiesIsAConnectionLost(t *testing.T) {
	srv := tmuxtest.New(t)
	dir := t.TempDir()
	tests := []struct {
		name     string
		script   string // the stand-in for ssh; its arguments are the remote command line
		target   string
		wantLost bool
	}{
		{"ssh fails", "exit 255", "main", true},
		{"ssh is killed", "kill -9 $$", "main", true},
		{"tmux refuses", `exec sh -c "$*"`, "no-such-session", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			transport := filepath.Join(dir, fmt.Sprintf("ssh%d", i))
			if err := os.WriteFile(transport, []byte("#!/bin/sh\n"+tt.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			l := &Launcher{Prefix: []string{transport}, Binary: "tmux", SocketPath: srv.Socket}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			cc, err := startControl(ctx, l, &attachGate{}, new(atomic.Int64), tt.target, outputClientFlags, nil)
			if err == nil {
				cc.close()
				t.Fatal("the attach succeeded")
			}
			if lost := errors.Is(err, ErrConnectionLost); lost != tt.wantLost {
				t.Errorf("attach error %q: connection lost %v, want %v", err, lost, tt.wantLost)
			}
			// Its words say so too: they become a wait's reason.
			if says := strings.Contains(err.Error(), ErrConnectionLost.Error()); says != tt.wantLost {
				t.Errorf("attach error %q says %q: %v, want %v", err, ErrConnectionLost, says, tt.wantLost)
			}
		})
	}
}

// TestAStreamWhoseClientTmuxEndsWhileItStartsSaysTheSessionOrServerWent:
// tmux ends a control client with a bare %exit when its server is killed
// (or its session goes) during the attach or just after; starting a
// pane's stream then fails saying so, not "control client exited" or
// "closed". tmux's own refusal keeps its words. The stand-ins for tmux
// answer -V, then act out each case.
func TestAStreamWhoseClientTmuxEndsWhileItStartsSaysTheSessionOrServerWent(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		script string // run in place of tmux -C attach-session
		want   string
	}{
		{"ended during the attach", `echo "%exit"`, sessionGone + " while the client attached"},
		{"ended before its first command", "echo '%session-changed $0 main'\nread line\necho '%exit'", "streaming pane %0: " + sessionGone},
		{"refused", `echo "can't find session: \$0" >&2; exit 1`, "can't find session: $0"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(dir, fmt.Sprintf("tmux%d", i))
			script := "#!/bin/sh\ncase \"$*\" in *-V*) echo 'tmux 3.3a'; exit 0;; esac\n" + tt.script + "\n"
			if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := New(ctx, Options{Binary: bin, SocketPath: filepath.Join(dir, "sock")})
			for errors.Is(err, syscall.ETXTBSY) && ctx.Err() == nil {
				// A process forked meanwhile still held the script open
				// for writing: it lets go once it runs its own program.
				time.Sleep(10 * time.Millisecond)
				c, err = New(ctx, Options{Binary: bin, SocketPath: filepath.Join(dir, "sock")})
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			stop, err := c.Watch(ctx, "%0", "$0", func(OutputEvent) {})
			if err == nil {
				stop()
				t.Fatal("the stream started")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("starting the stream: %q, want it to say %q", err, tt.want)
			}
			if tt.name == "refused" && strings.Contains(err.Error(), sessionGone) {
				t.Errorf("starting the stream: %q: tmux's refusal taken for a session gone", err)
			}
		})
	}
}

// TestCommandsThatTellEveryControlClientWaitForAnAttach: tmux 3.3a writes
// some notifications (a session made or closed, a client detached, ...)
// to every control client, one still attaching too, whose state does not
// exist yet, and its server crashes. tmcp's own such commands wait until
// its attach is complete, and an attach waits for them.
func TestCommandsThatTellEveryControlClientWaitForAnAttach(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	pid := strings.TrimSpace(srv.Must("display-message", "-p", "#{pid}"))
	ctx := context.Background()
	done := make(chan struct{})
	churned := make(chan int)
	go func() {
		// Sessions made and closed over and over: each tells every
		// control client that the sessions changed.
		n := 0
		for {
			select {
			case <-done:
				churned <- n
				return
			default:
			}
			_, err := c.Run(ctx, "new-session", "-d", "-s", "churn", "sh")
			if err == nil {
				_, err = c.Run(ctx, "kill-session", "-t", "churn")
			}
			if err != nil {
				t.Errorf("making and closing a session: %v", err)
				<-done
				churned <- n
				return
			}
			n++
		}
	}()
	attaches := 0
	for i := 0; i < 40 && !t.Failed(); i++ {
		// Each new session's stream attaches an output client to it.
		out, err := c.Run(ctx, "new-session", "-d", "-P", "-F", "#{session_id} #{pane_id}", "-s", fmt.Sprintf("s%d", i), "sh")
		if err != nil {
			t.Fatalf("new-session: %v (the server pid %s alive: %v)", err, pid, alive(pid))
		}
		ids := strings.Fields(out[0])
		stop, err := c.Watch(ctx, ids[1], ids[0], func(OutputEvent) {})
		if err != nil {
			t.Fatalf("streaming %s: %v (the server pid %s alive: %v)", ids[1], err, pid, alive(pid))
		}
		stop()
		attaches++
		if _, err := c.Run(ctx, "kill-session", "-t", ids[0]); err != nil {
			t.Fatalf("kill-session: %v", err)
		}
	}
	close(done)
	n := <-churned
	if !alive(pid) {
		t.Fatalf("the tmux server crashed (%d attaches beside %d sessions made and closed)", attaches, n)
	}
	t.Logf("%d attaches beside %d sessions made and closed", attaches, n)
}

// alive reports whether the process pid exists.
func alive(pid string) bool {
	_, err := os.Stat("/proc/" + pid)
	return err == nil
}
