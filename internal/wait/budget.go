package wait

import (
	"context"
	"errors"
	"time"

	"github.com/tmcp/tmcp/internal/tmux"
)

// FinalReadGrace is the part of a wait's budget kept past its timeout for
// the last tmux read that completes a reply (the screen shown when nothing
// matched). A tool call that waits is given its timeout plus this much, in
// all: a stopped tmux costs the wait its own timeout, never more.
const FinalReadGrace = 300 * time.Millisecond

// Budget returns the budget of a tool call that waits up to t: its
// deadline, set where the call enters, is this long from then.
func Budget(t Timeout) time.Duration { return t.Duration + FinalReadGrace }

// bounded gives ctx the budget of a wait of t from now, unless it carries a
// deadline already (the one set where the call entered), which is kept. A
// caller that set none and waits for nothing (t zero) gets tmux's default
// command timeout.
func bounded(ctx context.Context, t Timeout) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	if t.Duration <= 0 {
		t.Duration = tmux.DefaultCommandTimeout
	}
	return context.WithTimeout(ctx, Budget(t))
}

// begun returns when the call under ctx, bounded for a wait of t, began:
// where it entered, when that set its deadline, so that elapsed times count
// what the client waited, not only the wait itself.
func begun(ctx context.Context, t Timeout) time.Time {
	if d, ok := ctx.Deadline(); ok && t.Duration > 0 {
		if at := d.Add(-Budget(t)); at.Before(time.Now()) {
			return at
		}
	}
	return time.Now()
}

// waiting returns ctx bounded to when the wait stops waiting: the call's
// deadline less the final read's grace. Every tmux call made while waiting
// takes this context; the final read takes the call's own.
func waiting(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, d.Add(-FinalReadGrace))
}

// stopAt returns when a wait under ctx (made by waiting) must answer.
func stopAt(ctx context.Context) time.Time {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Now().Add(MaxCeiling)
	}
	return d
}

// unanswered reports whether err means tmux did not answer within the
// budget (as opposed to answering with a failure, or the caller leaving).
func unanswered(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != context.Canceled &&
		(errors.Is(err, tmux.ErrNoAnswer) || errors.Is(err, context.DeadlineExceeded))
}

// cancelled reports whether the caller left (rather than the budget
// running out): a wait that ends so says cancelled, not timeout, however
// late it notices.
func cancelled(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}

// noAnswerReason names the cause of a wait that ended because tmux did not
// answer in time.
const noAnswerReason = "tmux did not answer in time (its server may be stopped or overloaded)"
