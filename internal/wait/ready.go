package wait

import (
	"context"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/probe"
)

// OutcomeReady ends a readiness wait whose probe passed (for the
// stability window, if one was asked for).
const OutcomeReady = "ready"

// Intervals between the starts of a readiness wait's probes.
const (
	// DefaultReadyInterval is npm wait-on's.
	DefaultReadyInterval = 250 * time.Millisecond
	// MinReadyInterval keeps a wait from hammering what it probes.
	MinReadyInterval = 50 * time.Millisecond
)

// Bounds of the pane's last lines a readiness wait reports, unless its
// request says otherwise: enough to show why a server did not start.
const (
	DefaultReadyLines = 20
	DefaultReadyBytes = 4 << 10
)

// ReadyRequest is a wait until a port or URL is ready, probed from the
// host of the Service's tmux server.
type ReadyRequest struct {
	Target   probe.Target
	Interval time.Duration // between probe starts; 0: DefaultReadyInterval
	Stable   time.Duration // the probe must keep passing this long
	Timeout  Timeout
	// PaneID, if set, is the pane of the program that serves the target:
	// its death, or a line matching Stop in its output, ends the wait.
	PaneID   string
	Stop     []string
	MaxLines int // of the pane's lines reported; 0: DefaultReadyLines
	MaxBytes int // 0: DefaultReadyBytes
	Progress func(elapsed time.Duration)
	// Watching, if set, is called once the pane's stream is watched.
	Watching func(paneID string)
}

// ReadyResult says how a readiness wait ended.
type ReadyResult struct {
	Outcome string
	Probe   probe.Result // the last probe's
	Probes  int
	// Matched and Pattern are the pane's line that stopped the wait.
	Matched    string
	Pattern    string
	Lines      []string // what the pane wrote meanwhile, when it ended the wait or time ran out
	Screen     []string
	Truncation pane.Truncation
	Reason     string
	Elapsed    time.Duration
}

// watched is how a readiness wait's watch on its pane ended.
type watched struct {
	r   TextResult
	err error
}

// WaitForReady probes the target every interval until it passes for the
// stability window, the pane (if any) dies or prints a stop line, or the
// timeout passes. The pane is watched by a text wait that only its stop
// patterns and its end can end, so both are seen as wait_for_text sees
// them: from the stream, at once, never by polling.
func (s *Service) WaitForReady(ctx context.Context, req ReadyRequest) (ReadyResult, error) {
	ctx, cancel := bounded(ctx, req.Timeout)
	defer cancel()
	start := begun(ctx, req.Timeout)
	wctx, cancelWait := waiting(ctx)
	defer cancelWait()
	interval := req.Interval
	if interval <= 0 {
		interval = DefaultReadyInterval
	}
	interval = max(interval, MinReadyInterval)
	if req.MaxLines <= 0 {
		req.MaxLines = DefaultReadyLines
	}
	if req.MaxBytes <= 0 {
		req.MaxBytes = DefaultReadyBytes
	}

	var watch chan watched
	stopWatch := func() {}
	if req.PaneID != "" {
		if _, err := NewMatcher(nil, req.Stop, false, true); err != nil {
			return ReadyResult{}, err
		}
		watch = make(chan watched, 1)
		paneCtx, cancelPane := context.WithCancel(ctx)
		go func() {
			r, err := s.WaitForText(paneCtx, TextRequest{PaneID: req.PaneID, Stop: req.Stop, StopOnly: true, MatchCase: true,
				Timeout: req.Timeout, MaxLines: req.MaxLines, MaxBytes: req.MaxBytes, Watching: req.Watching})
			watch <- watched{r, err}
		}()
		stopWatch = func() { cancelPane() }
	}
	defer stopWatch()

	res := ReadyResult{}
	var tail *TextResult // the pane's watch, once it ended by itself
	// end completes the result; a pane still watched is let go first, and
	// what it wrote meanwhile is reported when time ran out.
	end := func(outcome string) (ReadyResult, error) {
		res.Outcome, res.Elapsed = outcome, time.Since(start)
		if watch != nil {
			stopWatch()
			if w := <-watch; w.err == nil {
				tail = &w.r
			}
		}
		if tail != nil && outcome == OutcomeTimeout {
			res.Lines, res.Truncation = tail.Lines, tail.Truncation
		}
		return res, nil
	}

	prober := probe.For(s.tc.Transport())
	pctx, cancelProbe := context.WithCancel(wctx)
	defer cancelProbe()
	next := time.NewTimer(0)
	defer next.Stop()
	var results chan probe.Result // the probe running, if any
	var at, passing time.Time     // when it began; when the probes began to pass
	defer progress(req.Progress, start)()
	for {
		select {
		case <-next.C:
			at, results = time.Now(), make(chan probe.Result, 1)
			go func(results chan<- probe.Result) { results <- prober.Probe(pctx, req.Target) }(results)
		case r := <-results:
			results = nil
			if !time.Now().Before(stopAt(wctx)) && res.Probes > 0 {
				continue // cut short by the wait's end: the last whole probe says more
			}
			res.Probe = r
			res.Probes++
			switch {
			case !r.OK:
				passing = time.Time{}
			case passing.IsZero():
				passing = at
			}
			if r.OK && time.Since(passing) >= req.Stable {
				return end(OutcomeReady)
			}
			next.Reset(max(0, interval-time.Since(at)))
		case w := <-watch:
			watch = nil
			if w.err != nil {
				return ReadyResult{}, w.err
			}
			switch w.r.Outcome {
			case OutcomeStopped, OutcomePaneDied, OutcomeDisconnected:
				res.Matched, res.Pattern, res.Reason = w.r.Matched, w.r.Pattern, w.r.Reason
				res.Lines, res.Screen, res.Truncation = w.r.Lines, w.r.Screen, w.r.Truncation
				return end(w.r.Outcome)
			case OutcomeLost:
				res.Reason = "the pane's output flooded past tmcp, so a stop line may have been missed: " + w.r.Reason
			}
			tail = &w.r
		case <-wctx.Done():
			if cancelled(wctx) {
				return end(OutcomeCancelled)
			}
			return end(OutcomeTimeout)
		}
	}
}
