package wait

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
)

// MaxWaitPanes bounds the panes one wait for text watches at once.
const MaxWaitPanes = 100

// OutcomeWaiting is the outcome of a pane in a wait across panes that was
// still waiting when another pane decided the wait.
const OutcomeWaiting = "waiting"

// PanesRequest is a wait for text in several panes at once: the same
// patterns, timeout and bounds as a TextRequest (whose PaneID and Cursor
// must be empty), for each of PaneIDs.
type PanesRequest struct {
	TextRequest
	PaneIDs []string
	// All waits until each pane has matched (or written, or gone quiet,
	// as the request asks); otherwise the first pane to do so ends it.
	All bool
}

// PaneOutcome is how the wait went in one pane.
type PaneOutcome struct {
	PaneID     string
	Outcome    string
	Matched    string
	Pattern    string
	ExitStatus *int          // a wait for a command: its status
	Duration   time.Duration // a wait for a command: how long it ran
	Cursor     string        // resume this pane here
	Reason     string
	// AlreadyOnScreen: a pattern matched text shown before the wait.
	AlreadyOnScreen bool
	Lines           []string
	Screen          []string
	pane.Truncation
}

// PanesResult says why a wait across panes ended: Outcome, Matched and
// Pattern are those of the deciding pane, PaneID (none on a timeout), and
// Panes has every pane's outcome, in the order asked.
type PanesResult struct {
	Outcome string
	PaneID  string
	Matched string
	Pattern string
	Reason  string
	Elapsed time.Duration
	Panes   []PaneOutcome
}

// succeeded reports whether a pane's outcome is what the wait was for, as
// opposed to a failure (stop pattern, death, loss, no shell marks) that
// ends it at once.
func succeeded(outcome string) bool {
	return outcome == OutcomeMatched || outcome == OutcomeOutput || outcome == OutcomeIdle || outcome == OutcomeEnded
}

// WaitForTextInPanes waits on each pane as WaitForText does, over the
// panes' shared streams, until one pane matches (each, with All), a pane
// stops, dies or loses output (which ends the wait at once, naming it),
// or the timeout passes. Each pane's reply bounds are MaxLines and
// MaxBytes shared out among the panes.
func (s *Service) WaitForTextInPanes(ctx context.Context, req PanesRequest) (PanesResult, error) {
	if req.Cursor != "" {
		return PanesResult{}, errors.New("a cursor resumes one pane: wait on that pane alone")
	}
	if _, err := NewMatcher(req.Patterns, req.Stop, req.Regex, req.MatchCase); err != nil {
		return PanesResult{}, err
	}
	n := len(req.PaneIDs)
	return s.inPanes(ctx, req.PaneIDs, req.All, req.Timeout, req.Progress, "no match yet in ", func(ctx context.Context, id string) (PaneOutcome, error) {
		one := req.TextRequest
		one.PaneID, one.Progress = id, nil
		one.MaxLines, one.MaxBytes = share(req.MaxLines, n), share(req.MaxBytes, n)
		r, err := s.WaitForText(ctx, one)
		return PaneOutcome{PaneID: id, Outcome: r.Outcome, Matched: r.Matched, Pattern: r.Pattern, Cursor: r.Cursor,
			Reason: r.Reason, AlreadyOnScreen: r.AlreadyOnScreen, Lines: r.Lines, Screen: r.Screen, Truncation: r.Truncation}, err
	})
}

// CommandPanesRequest is a wait for the commands in several panes' shells
// to end: the timeout and bounds of a CommandRequest (whose PaneID and
// Cursor must be empty), for each of PaneIDs.
type CommandPanesRequest struct {
	CommandRequest
	PaneIDs []string
	// All waits until the command in each pane has ended; otherwise the
	// first to end ends the wait.
	All bool
}

// WaitForCommandInPanes waits on each pane as WaitForCommand does until
// the command in one ends (in each, with All), a pane dies, loses output
// or shows no shell marks (which ends the wait at once, naming it), or
// the timeout passes. Each pane's reply bounds are MaxLines and MaxBytes
// shared out among the panes.
func (s *Service) WaitForCommandInPanes(ctx context.Context, req CommandPanesRequest) (PanesResult, error) {
	if req.Cursor != "" {
		return PanesResult{}, errors.New("a cursor resumes one pane: wait on that pane alone")
	}
	n := len(req.PaneIDs)
	return s.inPanes(ctx, req.PaneIDs, req.All, req.Timeout, req.Progress, "still running in ", func(ctx context.Context, id string) (PaneOutcome, error) {
		one := req.CommandRequest
		one.PaneID, one.Progress = id, nil
		one.MaxLines, one.MaxBytes = share(req.MaxLines, n), share(req.MaxBytes, n)
		r, err := s.WaitForCommand(ctx, one)
		return PaneOutcome{PaneID: id, Outcome: r.Outcome, ExitStatus: r.ExitStatus, Duration: r.Duration, Cursor: r.Cursor,
			Reason: r.Reason, Lines: r.Lines, Truncation: r.Truncation}, err
	})
}

// inPanes runs wait in each pane at once, until one pane's wait gets
// what it is for (each, with all), one fails (which ends the others at
// once), or the timeout passes. notYet starts the reason a wait for all
// gives, before the panes that did not get there.
func (s *Service) inPanes(ctx context.Context, ids []string, all bool, timeout Timeout, progressFn func(time.Duration),
	notYet string, wait func(ctx context.Context, id string) (PaneOutcome, error)) (PanesResult, error) {
	n := len(ids)
	switch {
	case n == 0:
		return PanesResult{}, errors.New("no pane to wait on")
	case n > MaxWaitPanes:
		return PanesResult{}, fmt.Errorf("%d panes to wait on: at most %d at once", n, MaxWaitPanes)
	}
	ctx, cancel := bounded(ctx, timeout)
	defer cancel()
	start := begun(ctx, timeout)
	defer progress(progressFn, start)()
	// Decided ends every pane's wait still running; the call's own end
	// (timeout, the client leaving) reaches them through ctx.
	each, decided := context.WithCancel(ctx)
	defer decided()

	type reply struct {
		i   int
		r   PaneOutcome
		err error
	}
	replies := make(chan reply, n)
	for i, id := range ids {
		go func() {
			r, err := wait(each, id)
			replies <- reply{i, r, err}
		}()
	}

	res := PanesResult{Panes: make([]PaneOutcome, n)}
	var firstErr error
	deciding := -1
	for range n {
		rp := <-replies
		if s.settled != nil {
			s.settled(ids[rp.i])
		}
		if rp.err != nil {
			if firstErr == nil && each.Err() == nil {
				firstErr = fmt.Errorf("pane %s: %w", ids[rp.i], rp.err)
				decided()
			}
			// Ended as the call or another pane's decision ended it.
			outcome := OutcomeWaiting
			if ctx.Err() != nil {
				outcome = OutcomeTimeout
				if cancelled(ctx) {
					outcome = OutcomeCancelled
				}
			}
			res.Panes[rp.i] = PaneOutcome{PaneID: ids[rp.i], Outcome: outcome}
			continue
		}
		r := rp.r
		res.Panes[rp.i] = r
		if each.Err() != nil && ctx.Err() == nil {
			// Ended because another pane decided.
			if r.Outcome == OutcomeCancelled {
				res.Panes[rp.i].Outcome = OutcomeWaiting
			}
			continue
		}
		switch {
		case succeeded(r.Outcome) && all:
			deciding = rp.i // the last to succeed decides, once all have
		case r.Outcome == OutcomeTimeout || r.Outcome == OutcomeCancelled:
			if res.Reason == "" {
				res.Reason = r.Reason
			}
		default:
			deciding = rp.i
			decided()
		}
	}
	if firstErr != nil {
		return PanesResult{}, firstErr
	}
	res.Elapsed = time.Since(start)
	if all && deciding >= 0 && succeeded(res.Panes[deciding].Outcome) && !allSucceeded(res.Panes) {
		deciding = -1 // not every pane got there: the call's end decides
	}
	if deciding < 0 {
		res.Outcome = OutcomeTimeout
		if cancelled(ctx) {
			res.Outcome = OutcomeCancelled
		}
		if all {
			res.Reason = join(notYet+unmatched(res.Panes), res.Reason)
		}
		return res, nil
	}
	d := res.Panes[deciding]
	res.Outcome, res.PaneID, res.Matched, res.Pattern, res.Reason = d.Outcome, d.PaneID, d.Matched, d.Pattern, d.Reason
	return res, nil
}

// unmatched lists the panes a wait for all of them did not get what it
// was for from.
func unmatched(panes []PaneOutcome) string {
	var ids []string
	for _, p := range panes {
		if !succeeded(p.Outcome) {
			ids = append(ids, p.PaneID)
		}
	}
	return strings.Join(ids, ", ")
}

// join joins two reasons, either of which may be empty.
func join(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// allSucceeded reports whether every pane got what the wait was for.
func allSucceeded(panes []PaneOutcome) bool {
	for _, p := range panes {
		if !succeeded(p.Outcome) {
			return false
		}
	}
	return true
}

// share divides a reply bound among n panes; zero (the default) stays so.
func share(bound, n int) int {
	if bound <= 0 {
		return bound
	}
	return max(1, bound/n)
}
