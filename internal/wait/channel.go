package wait

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
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
	Outcome   string
	Signalled []string // the channels that were, in the order they were
	Elapsed   time.Duration
}

// maxChannels bounds the channels one wait takes: each is a tmux process.
const maxChannels = 16

// CheckChannel refuses a channel name tmux should not be given.
func CheckChannel(name string) error {
	if !channelPattern.MatchString(name) {
		return fmt.Errorf("channel %q: use 1 to 128 of A-Z a-z 0-9 _ . : -", name)
	}
	return nil
}

// ParseChannels reads what a wait waits for: one channel, several
// separated by commas (the first signalled ends the wait) or by plus
// signs (every one must be); neither is a character of a channel name.
func ParseChannels(spec string) (channels []string, all bool, err error) {
	if strings.Contains(spec, ",") && strings.Contains(spec, "+") {
		return nil, false, fmt.Errorf("channels %q: separate them all with commas (the first signalled) or all with plus signs (every one)", spec)
	}
	all = strings.Contains(spec, "+")
	seen := map[string]bool{}
	for _, c := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == '+' }) {
		if err := CheckChannel(c); err != nil {
			return nil, false, err
		}
		if !seen[c] {
			seen[c] = true
			channels = append(channels, c)
		}
	}
	switch {
	case len(channels) == 0:
		return nil, false, CheckChannel(spec)
	case len(channels) > maxChannels:
		return nil, false, fmt.Errorf("channels: %d named, at most %d", len(channels), maxChannels)
	}
	return channels, all, nil
}

// WaitForChannel waits for a `tmux wait-for -S` on a channel, or on
// several (see ParseChannels). Each blocking wait-for runs as its own
// process (on a shared control connection it would hold every other
// command back), killed at the timeout or once the wait is decided.
// wait-for also returns when the server dies, so the server is checked
// before a return is called a signal. progress, if not nil, is called
// while it waits, as for every wait.
//
// A channel signalled just as its wait-for is killed (the wait was
// decided by another) wakes that dying process: the signal is not kept
// for a later wait, as it is when nobody waits.
func (s *Service) WaitForChannel(ctx context.Context, spec string, timeout Timeout, progressFn func(elapsed time.Duration)) (ChannelResult, error) {
	channels, all, err := ParseChannels(spec)
	if err != nil {
		return ChannelResult{}, err
	}
	ctx, cancel := bounded(ctx, timeout)
	defer cancel()
	start := begun(ctx, timeout)
	wctx, cancelWait := waiting(ctx)
	defer cancelWait()
	stop := progress(progressFn, start)
	type ended struct {
		channel string
		err     error
	}
	ends := make(chan ended, len(channels))
	for _, c := range channels {
		go func() {
			_, err := s.tc.RunProcess(wctx, "wait-for", c)
			ends <- ended{c, err}
		}()
	}
	var r ChannelResult
	var failed error // of a wait-for that ended by itself, not by a signal
	for range channels {
		switch e := <-ends; {
		case e.err == nil:
			r.Signalled = append(r.Signalled, e.channel)
			if !all {
				cancelWait()
			}
		case wctx.Err() == nil:
			// Its connection broke, or its server: the rest cannot decide it now.
			if failed == nil {
				failed = e.err
			}
			cancelWait()
		}
	}
	stop()
	r.Elapsed = time.Since(start)
	decided := len(r.Signalled) == len(channels) || !all && len(r.Signalled) > 0
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		r.Outcome = ChannelCancelled
	case errors.Is(failed, tmux.ErrConnectionLost):
		r.Outcome = ChannelDisconnected
	case (decided || failed != nil) && !s.serverAlive(ctx):
		// wait-for returns, with 0 or an error, when the server dies.
		r.Outcome, r.Signalled = ChannelServerGone, nil
	case decided:
		r.Outcome = ChannelSignalled
	case failed != nil:
		return ChannelResult{}, failed
	default:
		r.Outcome = ChannelTimeout
	}
	return r, nil
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
