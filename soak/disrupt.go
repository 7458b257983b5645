package main

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// killDelay is how long after a victim's call starts its pane is killed:
// time for the call to reach its wait.
const killDelay = 500 * time.Millisecond

// victimWait is how long the killer waits for a worker to take its request.
const victimWait = 2 * time.Second

// judgeError judges a call that ended in an error. Only a disruption
// excuses an error, and only one that names what the disruption did: the
// stop of tmux, that tmux did not answer; a restart of tmux, that the
// server, the connection or the pane went away. A call that went to a tmcp
// closed under it may end as it will, within its bound.
func (s *soak) judgeError(r reply) {
	kind := r.Kind
	across := s.restarts.during(r.Start, r.End)
	if kind == errServerGone && !s.srv.Alive() && across == "" && !s.restartingTmux.Load() {
		// The crash is the failure; this is what follows from it.
		s.checkServer()
		s.st.note("calls failed because the tmux server was gone")
		return
	}
	suffix := ""
	if across != "" {
		suffix = " (across a " + across + ")"
	}
	switch {
	case r.Hung:
		// Already a failure: it outlasted its bound.
	case kind == errNotAnswering && s.stop.overlaps(r.Start, r.End):
		s.st.note("named error during the stop of tmux: " + kind)
	case across == tmuxRestart && tmuxGoneErrors[kind]:
		s.st.note("named error across a tmux restart: " + kind)
	case s.restarts.cut(r.Start, r.End):
		s.st.note("call cut by a tmcp restart: error " + kind)
	case kind == errCancelled && s.interrupted():
	case kind == errUnnamed:
		s.st.fail("unnamed error", "%s: %s%s", r.describe(), r.Err, suffix)
	default:
		s.st.fail("error", "%s: %s%s", r.describe(), r.Err, suffix)
	}
}

// tmuxGoneErrors are the kinds of error that say what a restart of tmux
// did to a call: the server, tmcp's connection to it, the pane or its
// stream went away.
var tmuxGoneErrors = map[string]bool{
	errServerGone: true, errConnLost: true, errConnEnded: true, errStreamEnded: true,
	errPaneNotFound: true, errPaneDead: true, errPaneClosed: true,
}

// goneAnswer reports whether a call's answer, not an error, says that its
// pane went away, as every pane does when the tmux server is killed.
func goneAnswer(r reply) bool {
	if !r.ok() {
		return false
	}
	switch r.Tool {
	case "run_command", "get_job":
		return r.flag("paneDied")
	case "wait_for_text":
		return r.str("outcome") == "pane_died"
	case "capture_since":
		return r.flag("reset")
	}
	return false
}

// judgeVictim judges a call in flight on a pane when it was killed: it
// must end promptly after the kill, saying the pane died or is gone.
func (s *soak) judgeVictim(r reply, killed [2]time.Time) {
	after := r.End.Sub(killed[0])
	s.kills.record(r, after)
	if r.Hung {
		return
	}
	if after > s.deathBound() {
		s.st.fail("kill", "%s: ended %.2fs after its pane was killed (bound %.1fs)", r.describe(), after.Seconds(), s.deathBound().Seconds())
	}
	if r.End.Before(killed[0]) {
		s.st.fail("kill", "%s: ended before its pane was killed, with %s", r.describe(), outcome(r))
		return
	}
	if s.restarts.cut(r.Start, r.End) {
		// tmcp was closed under the call: it ends saying so.
		s.st.note("answer of a tmcp closed under a call on a killed pane: " + r.Tool + ": " + outcome(r))
		return
	}
	switch {
	case !r.ok():
		switch r.Kind {
		case errPaneNotFound, errPaneDead, errPaneClosed, errStreamEnded:
		default:
			s.st.fail("kill", "%s: on a killed pane: %s", r.describe(), r.Err)
		}
	case r.Tool == "wait_for_text":
		if r.str("outcome") != "pane_died" {
			s.st.fail("kill", "%s: on a killed pane: outcome %q, want pane_died", r.describe(), r.str("outcome"))
		}
	default:
		if !r.flag("paneDied") {
			s.st.fail("kill", "%s: on a killed pane: finished=%v paneDied=%v exitStatus=%v reason=%q, want paneDied",
				r.describe(), r.flag("finished"), r.flag("paneDied"), r.Fields["exitStatus"], r.str("reason"))
		}
	}
}

// excusedAnswer reports whether an answer that would be wrong is what a
// restart made of it, and notes it if so: one saying its pane went away,
// across a restart of tmux; any, from a tmcp closed under the call.
func (s *soak) excusedAnswer(r reply) bool {
	switch {
	case s.restarts.cut(r.Start, r.End):
		s.st.note("answer of a tmcp closed under the call: " + r.Tool + ": " + outcome(r))
	case s.restarts.during(r.Start, r.End) == tmuxRestart && goneAnswer(r):
		s.st.note("answer across a tmux restart: " + r.Tool + ": " + outcome(r))
	default:
		return false
	}
	return true
}

// deathBound is how soon after its pane is killed a call must end.
func (s *soak) deathBound() time.Duration { return commandDeadline + s.cfg.Slack }

// killReport counts the kills and how the calls in flight ended.
type killReport struct {
	mu       sync.Mutex
	kills    int
	outcomes map[string]int // "tool: outcome"
	maxAfter time.Duration
}

func (k *killReport) record(r reply, after time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.outcomes == nil {
		k.outcomes = map[string]int{}
	}
	k.outcomes[r.Tool+": "+outcome(r)]++
	k.maxAfter = max(k.maxAfter, after)
}

func (k *killReport) killed() {
	k.mu.Lock()
	k.kills++
	k.mu.Unlock()
}

// killer kills a pane under a call in flight every KillEvery, and makes
// a new pane for its worker.
func (s *soak) killer(ctx context.Context, rng *rand.Rand) {
	defer s.wg.Done()
	defer s.recoverPanic("killer")
	t := time.NewTicker(s.cfg.KillEvery)
	defer t.Stop()
	for kind := 0; ; kind++ {
		select {
		case <-t.C:
		case <-s.stopping:
			return
		case <-ctx.Done():
			return
		}
		s.disrupt.Lock()
		s.killOne(ctx, s.workers[rng.Intn(len(s.workers))], kind%len(victimKinds))
		s.disrupt.Unlock()
	}
}

func (s *soak) killOne(ctx context.Context, w *worker, kind int) {
	v := &victim{kind: kind, pane: make(chan string, 1), killed: make(chan [2]time.Time, 1), replacement: make(chan string, 1)}
	select {
	case w.victim <- v:
	default:
		return
	}
	var pane string
	select {
	case pane = <-v.pane:
	case <-time.After(victimWait):
		// Busy with a long step: another worker next time, so that the
		// planned disruptions are not held up.
		if v.withdraw() {
			return
		}
		pane = <-v.pane
	case <-s.stopping:
		if v.withdraw() {
			return
		}
		pane = <-v.pane
	case <-ctx.Done():
		if v.withdraw() {
			return
		}
		pane = <-v.pane
	}
	s.sleep(context.WithoutCancel(ctx), killDelay)
	before := time.Now()
	r := s.c.call(ctx, "kill_pane", pane, map[string]any{"paneId": pane}, s.c.nonWait())
	if r.ok() && r.str("killed") == pane {
		v.killed <- [2]time.Time{before, r.End}
		s.kills.killed()
	} else {
		s.st.fail("kill", "%s: %s (killed %q)", r.describe(), r.Err, r.str("killed"))
		v.killed <- [2]time.Time{}
		v.replacement <- pane
		return
	}
	for try := 0; ; try++ {
		n := s.c.call(context.WithoutCancel(ctx), "create_window", "", map[string]any{"sessionName": sessionName, "command": "sh"}, s.c.nonWait())
		if n.ok() && n.str("paneId") != "" {
			v.replacement <- n.str("paneId")
			return
		}
		s.st.fail("kill", "%s: making a pane to replace %s: %s", n.describe(), pane, n.Err)
		if try == 2 {
			v.replacement <- ""
			return
		}
	}
}

// stopReport tells what happened around the stop of the tmux server.
type stopReport struct {
	done       bool
	at, length time.Duration // since the soak began; how long stopped
	pid        int
	during     []string // how the probe calls ended
	afterwards string
	firstOK    time.Duration
}

// stopTmux stops the tmux server (SIGSTOP) for StopFor, then resumes it
// (SIGCONT), probing it during and after.
func (s *soak) stopTmux(ctx context.Context) {
	r := s.c.call(ctx, "display_message", "", map[string]any{"sessionName": sessionName, "format": "#{pid}"}, s.c.nonWait())
	pid, err := strconv.Atoi(strings.TrimSpace(r.Text))
	if !r.ok() || err != nil || pid != s.srv.PID() {
		s.st.fail("stop", "%s: tmux server pid %q (%s), want %d", r.describe(), r.Text, r.Err, s.srv.PID())
		return
	}
	rep := stopReport{done: true, pid: pid}
	stopped := time.Now()
	s.stop.setStopped(stopped)
	if err := s.srv.Signal(syscall.SIGSTOP); err != nil {
		s.st.fail("stop", "SIGSTOP to tmux server %d: %v", pid, err)
		s.stop.setResumed(time.Now())
		return
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = s.srv.Signal(syscall.SIGCONT)
			s.stop.setResumed(time.Now())
		}
	}
	defer resume()
	// Probes in flight during the stop: each must answer within its
	// bound, late, with a timeout, or with a named error.
	probes := s.probe(ctx)
	s.sleep(context.WithoutCancel(ctx), s.cfg.StopFor)
	resume()
	_, back := s.stop.times()
	rep.at, rep.length = stopped.Sub(s.begin), back.Sub(stopped)
	rep.during = probes()
	// After the resume, calls must work again at once.
	a := s.c.call(ctx, "list_panes", "", map[string]any{"sessionName": sessionName}, s.c.nonWait())
	rep.afterwards = fmt.Sprintf("list_panes sent after the resume: %s after %.2fs", outcome(a), a.latency().Seconds())
	if !a.ok() {
		s.st.fail("stop", "%s: after the resume: %s", a.describe(), a.Err)
	} else {
		rep.firstOK = a.End.Sub(back)
	}
	s.stopRep = rep
}

// probe sends calls into the stopped server, 0.1s into the stop, and
// returns a func that waits for them and says how they ended.
func (s *soak) probe(ctx context.Context) func() []string {
	ctx = context.WithoutCancel(ctx)
	c, p := s.c, s.probePane
	calls := []struct {
		tool  string
		args  map[string]any
		bound time.Duration
	}{
		{"list_sessions", map[string]any{}, c.nonWait()},
		{"capture_pane", map[string]any{"paneId": p}, c.nonWait()},
		{"wait_for_text", map[string]any{"paneId": p, "patterns": []string{"never-in-the-probe"}, "timeoutSeconds": 1}, c.waitBound(1)},
		{"run_command", map[string]any{"paneId": p, "command": "echo probe-ok", "timeoutSeconds": 1}, c.waitBound(1)},
	}
	replies := make([]chan reply, len(calls))
	for i, pc := range calls {
		replies[i] = make(chan reply, 1)
		go func() {
			time.Sleep(100 * time.Millisecond)
			replies[i] <- c.call(ctx, pc.tool, p, pc.args, pc.bound)
		}()
	}
	return func() []string {
		var out []string
		for i := range calls {
			r := <-replies[i]
			line := fmt.Sprintf("%s sent 0.1s into the stop: %s after %.2fs", r.Tool, outcome(r), r.latency().Seconds())
			switch {
			case !r.ok():
				line += " (" + r.Err + ")"
				s.judgeError(r)
			case r.Tool == "wait_for_text" && r.str("outcome") != "timeout":
				s.st.fail("stop", "%s: outcome %q, want timeout", r.describe(), r.str("outcome"))
			case r.Tool == "run_command":
				g := r
				if r.flag("timedOut") {
					g = c.call(ctx, "get_job", p, map[string]any{"jobId": r.str("jobId"), "timeoutSeconds": readyTimeout}, c.waitBound(readyTimeout))
					line += fmt.Sprintf("; its job, collected after the resume: %s", outcome(g))
				}
				if !g.ok() {
					s.judgeError(g)
				} else if st, _ := g.num("exitStatus"); !g.flag("finished") || st != 0 || g.Text != "probe-ok" {
					s.st.fail("stop", "%s: finished=%v exitStatus=%v output %q, want 0 and \"probe-ok\"", g.describe(), g.flag("finished"), g.Fields["exitStatus"], g.Text)
				}
			}
			out = append(out, line)
		}
		return out
	}
}

// flood waits on the flooding pane, and on its quiet neighbour, with
// short timeouts the whole time: every wait must end within its bound,
// with what it waited for, output or a timeout.
func (s *soak) flood(ctx context.Context, rng *rand.Rand) {
	defer s.wg.Done()
	defer s.recoverPanic("flood")
	for s.running(ctx) && s.gate.enter(ctx, s.stopping) {
		s.floodWait(ctx, rng)
		s.gate.leave()
	}
}

// floodWait makes one wait on the flooding pane or its neighbour.
func (s *soak) floodWait(ctx context.Context, rng *rand.Rand) {
	timeout := 0.5 + 1.5*rng.Float64()
	timeout = float64(int(timeout*10)) / 10
	pane := s.floodPane
	args := map[string]any{"timeoutSeconds": timeout, "maxLines": 5}
	kind := rng.Intn(4)
	switch kind {
	case 0:
		args["patterns"] = []string{"flood"}
	case 1:
		args["patterns"] = []string{"no-such-line-in-the-flood"}
	case 3:
		if s.neighbour == "" {
			return
		}
		pane = s.neighbour
		args["patterns"] = []string{"never-beside-the-flood"}
	}
	args["paneId"] = pane
	r := s.c.call(ctx, "wait_for_text", pane, args, s.c.waitBound(timeout))
	if !r.ok() {
		s.judgeError(r)
		s.sleep(ctx, errorPause)
		return
	}
	switch o := r.str("outcome"); {
	case o == "matched" && kind == 0 && r.str("matched") == "flood":
	case o == "output" && kind == 2:
	case o == "timeout":
		if kind != 1 && kind != 3 && !s.stop.overlaps(r.Start, r.End) {
			s.st.note("flood: a wait for any flood line timed out")
		}
	case o == "output_lost":
		s.st.note("flood: output_lost (tmux paused the pane's output for tmcp)")
	case s.excusedAnswer(r):
	default:
		s.st.fail("wrong", "%s: flood wait (kind %d) ended %q, matched %q, reason %q", r.describe(), kind, o, r.str("matched"), r.str("reason"))
	}
}
