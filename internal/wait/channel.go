package wait

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/tmcp/tmcp/internal/tmux"
)

// channelPattern is what a channel name may be.
var channelPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// Channel outcomes.
const (
	ChannelSignalled  = "signalled"
	ChannelTimeout    = "timeout"
	ChannelServerGone = "server_gone"
	ChannelCancelled  = "cancelled"
	// ChannelDisconnected: the connection to a remote host broke during
	// the wait; the channel may still be signalled there later.
	ChannelDisconnected = "connection_lost"
)

// ChannelResult says how a wait on a channel ended.
type ChannelResult struct {
	Outcome string
	Elapsed time.Duration
}

// CheckChannel refuses a channel name tmux should not be given.
func CheckChannel(name string) error {
	if !channelPattern.MatchString(name) {
		return fmt.Errorf("channel %q: use 1 to 128 of A-Z a-z 0-9 _ . : -", name)
	}
	return nil
}

// WaitForChannel waits for a `tmux wait-for -S` on a channel. The blocking
// wait-for runs as its own process (on a shared control connection it
// would hold every other command back), killed at the timeout. wait-for
// also returns when the server dies, so the server is checked before a
// return is called a signal. progress, if not nil, is called while it
// waits, as for every wait.
func (s *Service) WaitForChannel(ctx context.Context, channel string, timeout Timeout, progressFn func(elapsed time.Duration)) (ChannelResult, error) {
	if err := CheckChannel(channel); err != nil {
		return ChannelResult{}, err
	}
	ctx, cancel := bounded(ctx, timeout)
	defer cancel()
	start := begun(ctx, timeout)
	wctx, cancelWait := waiting(ctx)
	defer cancelWait()
	stop := progress(progressFn, start)
	_, err := s.tc.RunProcess(wctx, "wait-for", channel)
	stop()
	elapsed := time.Since(start)
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return ChannelResult{Outcome: ChannelCancelled, Elapsed: elapsed}, nil
	case wctx.Err() != nil:
		return ChannelResult{Outcome: ChannelTimeout, Elapsed: elapsed}, nil
	case errors.Is(err, tmux.ErrConnectionLost):
		return ChannelResult{Outcome: ChannelDisconnected, Elapsed: elapsed}, nil
	case !s.serverAlive(ctx):
		// wait-for returns, with 0 or an error, when the server dies.
		return ChannelResult{Outcome: ChannelServerGone, Elapsed: elapsed}, nil
	case err != nil:
		return ChannelResult{}, err
	}
	return ChannelResult{Outcome: ChannelSignalled, Elapsed: elapsed}, nil
}

// serverAlive asks the server for its pid, as a process: the control
// connection may still be winding down from the server's death.
func (s *Service) serverAlive(ctx context.Context) bool {
	_, err := s.tc.RunProcess(ctx, "display-message", "-p", "#{pid}")
	return err == nil
}

// SignalChannel wakes every wait on a channel (and latches the signal if
// nobody waits yet, as tmux does).
func (s *Service) SignalChannel(ctx context.Context, channel string) error {
	if err := CheckChannel(channel); err != nil {
		return err
	}
	_, err := s.tc.Run(ctx, "wait-for", "-S", channel)
	if err != nil {
		return errors.Join(fmt.Errorf("signalling channel %s", channel), err)
	}
	return nil
}
