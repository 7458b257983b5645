package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// drainLimit bounds the wait, in a restart, for the steps in flight to
// end: each call in them must end within its bound anyway.
const drainLimit = stopLimit

// launchTries bounds the attempts to start tmux again in a restart.
const launchTries = 5

// disrupter carries out the planned disruptions, each at its time (or as
// soon as the one before is over: a restart sets the panes up again), one
// at a time with the kills.
func (s *soak) disrupter(ctx context.Context, events []disruption) {
	defer s.wg.Done()
	defer s.recoverPanic("disrupter")
	defer func() {
		s.mu.Lock()
		s.disrupting, s.disruptionsOver = false, time.Now()
		s.mu.Unlock()
	}()
	for _, ev := range events {
		select {
		case <-time.After(time.Until(s.begin.Add(ev.at))):
		case <-s.stopping:
			return
		case <-ctx.Done():
			return
		}
		s.disrupt.Lock()
		s.logf("t=%3.0fs %s", time.Since(s.begin).Seconds(), ev.kind)
		switch ev.kind {
		case tmuxStop:
			s.stopTmux(ctx)
		case tmuxRestart:
			s.restartTmux(ctx)
		case tmcpRestart:
			s.restartTmcp(ctx)
		}
		s.disrupt.Unlock()
	}
}

// restartTmux kills the tmux server under the calls in flight and starts
// a new one on its socket at once, as a user restarting tmux would. The
// calls in flight must end within their bounds, with a named error or an
// answer saying their pane went; then, with the same tmcp, the panes are
// made again, and the workers go on with them.
func (s *soak) restartTmux(ctx context.Context) {
	rs := s.restarts.begin(tmuxRestart)
	defer s.restarts.end(rs) // when it failed
	drained := s.gate.shut()
	defer s.gate.open()

	s.restartingTmux.Store(true)
	s.srv.Kill()
	err := s.srv.Launch(ctx)
	for try := 1; err != nil && try < launchTries && ctx.Err() == nil; try++ {
		// A client connecting while the server starts, before it has a
		// session, can make it exit: tmcp's attempts to attach again do.
		rs.launchFailures = append(rs.launchFailures, err.Error())
		s.st.note("starting tmux again failed, and was tried again")
		s.srv.Kill()
		err = s.srv.Launch(ctx)
	}
	s.restartingTmux.Store(false)
	rs.down = time.Since(rs.from)
	if err != nil {
		rs.failed = fmt.Sprintf("starting tmux again: %v", err)
		s.st.fail("restart", "tmux restart at t%+.1fs: %s", rs.from.Sub(s.begin).Seconds(), rs.failed)
		s.stopped.Store(true)
		return
	}
	if !s.awaitDrain(rs, drained) {
		return
	}
	// The old panes are gone, and their ids will be given to new ones:
	// nobody may use them once new panes are made.
	a := s.c.call(ctx, "list_sessions", "", map[string]any{}, s.c.nonWait())
	rs.first = fmt.Sprintf("list_sessions, the first call after the restart, %s in %.2fs", outcome(a), a.latency().Seconds())
	if !a.ok() {
		s.st.fail("restart", "%s: the first call after tmux restarted: %s", a.describe(), a.Err)
	}
	made := time.Now()
	p, err := s.makePanes(ctx)
	if err != nil {
		rs.failed = fmt.Sprintf("making the panes again: %v", err)
		s.st.fail("restart", "tmux restart at t%+.1fs: %s", rs.from.Sub(s.begin).Seconds(), rs.failed)
		s.stopped.Store(true)
		return
	}
	for i, w := range s.workers {
		w.pane, w.synced, w.needFill, w.segs = p.workers[i], false, true, nil
	}
	s.usePanes(p)
	panesMade := time.Since(made)
	// From here on calls are judged as ever; the workers are held back
	// until the set-up is done again.
	s.restarts.end(rs)
	s.setUpAgain(ctx, rs)
	rs.remade = fmt.Sprintf("%d panes made again in %.1fs, warmed up in %.1fs more", len(p.workers)+2, panesMade.Seconds(), (time.Since(made) - panesMade).Seconds())
}

// setUpAgain warms the workers up again after a restart, and starts the
// flood again, as the soak's set-up did.
func (s *soak) setUpAgain(ctx context.Context, rs *restart) {
	s.warmUp(ctx)
	if s.cfg.Flood {
		if err := s.startFlood(ctx); err != nil {
			s.st.fail("restart", "%s: %v", rs.kind, err)
		}
	}
}

// awaitDrain waits for the steps in flight at a restart to end, and
// judges how soon the calls in flight at its start ended.
func (s *soak) awaitDrain(rs *restart, drained <-chan struct{}) bool {
	select {
	case <-drained:
	case <-time.After(drainLimit):
		rs.failed = fmt.Sprintf("the steps in flight did not end within %v", drainLimit)
		s.st.fail("restart", "%s at t%+.1fs: %s", rs.kind, rs.from.Sub(s.begin).Seconds(), rs.failed)
		s.stopped.Store(true)
		return false
	}
	rs.drained = time.Since(rs.from)
	return true
}

// restartTmcp closes tmcp under the calls in flight, as the end of its
// process would, starts a new one on the same tmux server and goes on
// with it. Jobs started before are asked of the new tmcp.
func (s *soak) restartTmcp(ctx context.Context) {
	jobs := s.jobsBefore(ctx)
	rs := s.restarts.begin(tmcpRestart)
	drained := s.gate.shut()

	old := s.instance()
	old.close()
	if !s.awaitDrain(rs, drained) {
		s.restarts.end(rs)
		s.gate.open()
		return
	}
	in, err := startTMCP(ctx, s.srv.Socket)
	if err == nil {
		s.mu.Lock()
		if s.closed {
			err = fmt.Errorf("the soak is over")
			in.close()
		} else {
			s.tmcp = in
		}
		s.mu.Unlock()
	}
	rs.down = time.Since(rs.from)
	if err != nil {
		rs.failed = fmt.Sprintf("starting tmcp again: %v", err)
		s.st.fail("restart", "tmcp restart at t%+.1fs: %s", rs.from.Sub(s.begin).Seconds(), rs.failed)
		s.stopped.Store(true)
		s.restarts.end(rs)
		s.gate.open()
		return
	}
	s.c.cs.Store(in.cs)
	s.restarts.end(rs) // calls from here on go to the new tmcp
	a := s.c.call(ctx, "list_sessions", "", map[string]any{}, s.c.nonWait())
	rs.first = fmt.Sprintf("list_sessions, the first call after the restart, %s in %.2fs", outcome(a), a.latency().Seconds())
	if !a.ok() {
		s.st.fail("restart", "%s: the first call after tmcp restarted: %s", a.describe(), a.Err)
	}
	// The new tmcp's streams are empty and it may still follow the old
	// one's jobs: each worker waits for its pane's shell, takes a cursor
	// again and fills its pane's stream, the flood quiet meanwhile.
	for _, w := range s.workers {
		w.needIdle, w.synced, w.needFill, w.segs = true, false, true, nil
		w.idleFrom = time.Now()
	}
	// The jobs are asked before the panes are filled again, which pushes
	// the rows that ran them out of the panes' history.
	rs.jobs = s.jobsAfter(ctx, jobs)
	warm := time.Now()
	if s.cfg.Flood {
		q := s.c.call(ctx, "send_keys", s.floodPane, map[string]any{"paneId": s.floodPane, "keys": "C-c", "enter": false}, s.c.nonWait())
		if !q.ok() {
			s.judgeError(q)
		}
	}
	s.setUpAgain(ctx, rs)
	rs.remade = fmt.Sprintf("%d panes warmed up again in %.1fs", len(s.workers), time.Since(warm).Seconds())
	s.gate.open()
}

// jobCheck is a job whose fate is asked after tmcp restarts.
type jobCheck struct {
	id   string
	word string // its output: one line
	how  string // how it stood before the restart
}

// noteJob keeps a worker's detached job, to be asked after a restart.
func (s *soak) noteJob(id, word string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobs = append(s.jobs, jobCheck{id: id, word: word, how: "a worker's detached job"})
	if len(s.jobs) > recentJobs {
		s.jobs = s.jobs[len(s.jobs)-recentJobs:]
	}
}

// jobsBefore starts two detached jobs on the jobs pane, one that ends
// before tmcp restarts and one still running then, and returns them with
// the workers' latest detached jobs.
func (s *soak) jobsBefore(ctx context.Context) []jobCheck {
	c := s.c
	s.mu.Lock()
	s.jobsSeq++
	n := s.jobsSeq
	jobs := append([]jobCheck(nil), s.jobs...)
	s.mu.Unlock()
	done := jobCheck{word: fmt.Sprintf("before-restart-%d-ok", n), how: "detached, finished before the restart"}
	r := c.call(ctx, "run_command", s.jobsPane, map[string]any{"paneId": s.jobsPane, "command": "echo " + done.word, "detach": true}, c.nonWait())
	if r.ok() {
		done.id = r.str("jobId")
		g := c.call(ctx, "get_job", s.jobsPane, map[string]any{"jobId": done.id, "timeoutSeconds": readyTimeout}, c.waitBound(readyTimeout))
		if !g.ok() || !g.flag("finished") {
			s.st.fail("restart", "%s: the job before the tmcp restart did not finish: %s %s", g.describe(), outcome(g), g.Err)
		}
		jobs = append(jobs, done)
	} else {
		s.judgeError(r)
	}
	running := jobCheck{word: fmt.Sprintf("across-restart-%d-ok", n), how: "detached, running at the restart"}
	r = c.call(ctx, "run_command", s.jobsPane, map[string]any{"paneId": s.jobsPane, "command": "sleep 2; echo " + running.word, "detach": true}, c.nonWait())
	if r.ok() {
		running.id = r.str("jobId")
		jobs = append(jobs, running)
	} else {
		s.judgeError(r)
	}
	return jobs
}

// jobsAfter asks the new tmcp about the jobs started before it, and says
// what it answered. If jobs survive a restart, each must be known, and
// finish with its output.
func (s *soak) jobsAfter(ctx context.Context, jobs []jobCheck) []string {
	var out []string
	for _, j := range jobs {
		g := s.c.call(ctx, "get_job", s.jobsPane, map[string]any{"jobId": j.id, "timeoutSeconds": readyTimeout}, s.c.waitBound(readyTimeout))
		line := fmt.Sprintf("job %s (%s): %s", j.id, j.how, outcome(g))
		switch {
		case !g.ok():
			line += ": " + firstLine(g.Err)
		case g.flag("finished"):
			line += fmt.Sprintf(", exit status %v, output %q", g.Fields["exitStatus"], strings.Join(g.lines(), "\n"))
		}
		out = append(out, line)
		if !s.cfg.JobsSurviveRestart {
			continue
		}
		switch st, known := g.num("exitStatus"); {
		case !g.ok():
			s.st.fail("job lost", "%s: %s after tmcp restarted: %s", g.describe(), j.how, g.Err)
		case !g.flag("finished"):
			s.st.fail("job lost", "%s: %s still not finished %ds after tmcp restarted", g.describe(), j.how, readyTimeout)
		case known && st == 0 && g.flag("outputLost") && len(g.lines()) == 0:
			s.st.note("a job across the tmcp restart: its output no longer in the pane's history, reported lost")
		case known && (st != 0 || strings.Join(g.lines(), "\n") != j.word):
			s.st.fail("job lost", "%s: %s after tmcp restarted: exit status %d, output %q, want 0 and %q; %s", g.describe(), j.how, st, strings.Join(g.lines(), "\n"), j.word,
				s.historyNear(ctx, g.str("paneId"), j.id[:5]))
		case !known:
			s.st.note("a job across the tmcp restart finished with its status unknown")
		}
	}
	return out
}

// historyNear returns the rows of a pane's history around the last one
// naming a job's token, for a failure's message.
func (s *soak) historyNear(ctx context.Context, pane, tag string) string {
	out, err := s.srv.Run(ctx, "capture-pane", "-p", "-J", "-S", "-", "-t", pane)
	if err != nil {
		return "its pane's history: " + err.Error()
	}
	rows := strings.Split(out, "\n")
	at := -1
	for i, row := range rows {
		if strings.Contains(row, tag) {
			at = i
		}
	}
	if at < 0 {
		return "no row of its pane's history names " + tag
	}
	return fmt.Sprintf("its pane's history around it: %q", rows[max(0, at-3):min(len(rows), at+6)])
}

// firstLine returns a message's first line, for a summary.
func firstLine(msg string) string {
	line, _, _ := strings.Cut(msg, "\n")
	return line
}
