package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Kinds of disruption a soak plans.
const (
	tmuxStop    = "stop"         // the tmux server stopped (SIGSTOP) for a while
	tmuxRestart = "tmux restart" // the tmux server killed and started again
	tmcpRestart = "tmcp restart" // tmcp closed and started again
)

// disruption is one planned fault, at a time since the calls began.
type disruption struct {
	at   time.Duration
	kind string
}

// plan spaces the disruptions of a soak of duration d evenly over its
// middle half: the first quarter is tmcp warming up and the last shows it
// settled after them, so both can be judged against each other. The
// restarts of tmux and of tmcp alternate as evenly as their numbers allow,
// tmux first; the stop, if any, is the middle one.
func plan(d time.Duration, tmuxRestarts, tmcpRestarts int, stop bool) []disruption {
	type pos struct {
		frac float64
		kind string
	}
	var restarts []pos
	for i := 0; i < tmuxRestarts; i++ {
		restarts = append(restarts, pos{(float64(i) + 0.5) / float64(tmuxRestarts), tmuxRestart})
	}
	for i := 0; i < tmcpRestarts; i++ {
		restarts = append(restarts, pos{(float64(i) + 0.5) / float64(tmcpRestarts), tmcpRestart})
	}
	sort.SliceStable(restarts, func(i, j int) bool { return restarts[i].frac < restarts[j].frac })
	kinds := make([]string, 0, len(restarts)+1)
	for _, r := range restarts {
		kinds = append(kinds, r.kind)
	}
	if stop {
		mid := len(kinds) / 2
		kinds = append(kinds[:mid], append([]string{tmuxStop}, kinds[mid:]...)...)
	}
	out := make([]disruption, len(kinds))
	for i, k := range kinds {
		out[i] = disruption{at: d/4 + time.Duration(float64(d/2)*float64(i+1)/float64(len(kinds)+1)), kind: k}
	}
	return out
}

// gate holds the soak's callers (the workers, the flood) back while the
// panes, or tmcp, are made again: a step goes in only while the gate is
// open, and whoever shuts it learns when the steps in flight are done.
type gate struct {
	mu      sync.Mutex
	inside  int
	shutCh  chan struct{} // non-nil while shut; closed when opened again
	drained chan struct{} // closed once the last step in flight leaves
}

// enter waits until the gate is open and goes in. It reports false,
// without going in, if ctx or done ends first.
func (g *gate) enter(ctx context.Context, done <-chan struct{}) bool {
	g.mu.Lock()
	for g.shutCh != nil {
		ch := g.shutCh
		g.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return false
		case <-ctx.Done():
			return false
		}
		g.mu.Lock()
	}
	g.inside++
	g.mu.Unlock()
	return true
}

// leave ends a step that entered.
func (g *gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inside--
	if g.inside == 0 && g.drained != nil {
		close(g.drained)
		g.drained = nil
	}
}

// shut lets no further step in and returns a channel closed once every
// step inside has left. The gate must be open.
func (g *gate) shut() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shutCh = make(chan struct{})
	d := make(chan struct{})
	if g.inside == 0 {
		close(d)
	} else {
		g.drained = d
	}
	return d
}

// open lets the steps waiting at a shut gate in.
func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.shutCh)
	g.shutCh, g.drained = nil, nil
}

// restart is one restart of tmux or tmcp as the soak saw it.
type restart struct {
	kind     string
	from, to time.Time // when it began and when calls could go on; to is zero until then
	// inFlight counts how the calls in flight at from ended ("tool:
	// outcome"); slowest is the longest any took to end after from.
	inFlight map[string]int
	slowest  time.Duration
	// What the restarter found, for the summary.
	down time.Duration // the kill and start of tmux, or the close and start of tmcp
	// launchFailures are the errors of the attempts to start tmux again
	// that failed before one succeeded.
	launchFailures []string
	drained        time.Duration // from the kill or close until no step was in flight
	first          string        // how the first call afterwards went
	remade         string        // what was made again
	jobs           []string      // tmcp: what get_job said of the jobs started before
	failed         string        // why it could not be done, if it could not
}

// restarts records the restarts of a soak. A call that overlaps one, or
// the grace period after it, may fail with a named error. It is safe for
// concurrent use.
type restarts struct {
	grace time.Duration

	mu   sync.Mutex
	list []*restart
}

// begin records a restart beginning now.
func (rs *restarts) begin(kind string) *restart {
	r := &restart{kind: kind, from: time.Now(), inFlight: map[string]int{}}
	rs.mu.Lock()
	rs.list = append(rs.list, r)
	rs.mu.Unlock()
	return r
}

// end records that calls can go on after r, unless that is recorded
// already.
func (rs *restarts) end(r *restart) {
	rs.mu.Lock()
	if r.to.IsZero() {
		r.to = time.Now()
	}
	rs.mu.Unlock()
}

// during returns the kind of the restart a call from start to end
// overlapped, or its grace period; "" if none.
func (rs *restarts) during(start, end time.Time) string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for i := len(rs.list) - 1; i >= 0; i-- {
		r := rs.list[i]
		if !end.Before(r.from) && (r.to.IsZero() || start.Before(r.to.Add(rs.grace))) {
			return r.kind
		}
	}
	return ""
}

// cut reports whether a call from start to end went to a tmcp that was
// closed under it: it overlapped a restart of tmcp and began before the
// new tmcp took calls. What that tmcp answered while it shut down would,
// from a process, never reach the client.
func (rs *restarts) cut(start, end time.Time) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, r := range rs.list {
		if r.kind == tmcpRestart && !end.Before(r.from) && (r.to.IsZero() || start.Before(r.to)) {
			return true
		}
	}
	return false
}

// observe counts a call in flight at the start of a restart.
func (rs *restarts) observe(c reply) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, r := range rs.list {
		if c.Start.Before(r.from) && !c.End.Before(r.from) {
			r.inFlight[c.Tool+": "+outcome(c)]++
			r.slowest = max(r.slowest, c.End.Sub(r.from))
		}
	}
}

// done returns copies of the restarts, in order.
func (rs *restarts) done() []restart {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]restart, len(rs.list))
	for i, r := range rs.list {
		out[i] = *r
	}
	return out
}

// describe says in a line how a restart went.
func (r restart) describe() string {
	if r.failed != "" && r.down == 0 {
		return "FAILED: " + r.failed
	}
	what := "the server killed and started again on its socket"
	if r.kind == tmcpRestart {
		what = "tmcp closed and started again on the same server"
	}
	line := fmt.Sprintf("%s in %.2fs; the steps in flight ended within %.2fs", what, r.down.Seconds(), r.drained.Seconds())
	if r.remade != "" {
		line += "; " + r.remade
	}
	if r.failed != "" {
		line += "; FAILED: " + r.failed
	}
	return line
}

// details lists what a restart did to the calls in flight, the first call
// after it, and the jobs asked after it.
func (r restart) details() []string {
	var outs []string
	n := 0
	for _, k := range sortedKeys(r.inFlight) {
		outs = append(outs, fmt.Sprintf("%s %d", k, r.inFlight[k]))
		n += r.inFlight[k]
	}
	out := []string{fmt.Sprintf("%d calls in flight, the last ended %.2fs after it began: %s", n, r.slowest.Seconds(), orNothing(strings.Join(outs, ", ")))}
	for _, f := range r.launchFailures {
		out = append(out, "starting tmux failed, and was tried again: "+f)
	}
	if r.first != "" {
		out = append(out, r.first)
	}
	return append(out, r.jobs...)
}
