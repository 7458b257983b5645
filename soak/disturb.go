package main

import (
	"sync"
	"sync/atomic"
	"time"
)

var soakEpoch atomic.Pointer[time.Time]

// epoch is when the soak began, for relative times in messages.
func epoch() time.Time {
	if t := soakEpoch.Load(); t != nil {
		return *t
	}
	return time.Now()
}

// stopWindow records the time the tmux server was stopped (SIGSTOP) and
// resumed (SIGCONT). A call that overlaps the stop, or the grace period
// after the resume, is disturbed by it: it may fail with a named error or
// time out, but never give a wrong answer or outlast its bound.
type stopWindow struct {
	grace time.Duration

	mu      sync.Mutex
	stopped time.Time
	resumed time.Time
}

func (w *stopWindow) setStopped(t time.Time) { w.mu.Lock(); w.stopped = t; w.mu.Unlock() }
func (w *stopWindow) setResumed(t time.Time) { w.mu.Lock(); w.resumed = t; w.mu.Unlock() }

func (w *stopWindow) times() (stopped, resumed time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped, w.resumed
}

// overlaps reports whether a call from start to end overlapped the stop
// or its grace period.
func (w *stopWindow) overlaps(start, end time.Time) bool {
	stopped, resumed := w.times()
	switch {
	case stopped.IsZero():
		return false
	case resumed.IsZero():
		return !end.Before(stopped)
	}
	return !end.Before(stopped) && start.Before(resumed.Add(w.grace))
}

// settledIn returns how long until the stop and its grace are over: zero
// when there was none, or it is over.
func (w *stopWindow) settledIn() time.Duration {
	stopped, resumed := w.times()
	switch {
	case stopped.IsZero():
		return 0
	case resumed.IsZero():
		return w.grace + 100*time.Millisecond // look again shortly
	}
	return max(0, time.Until(resumed.Add(w.grace)))
}
