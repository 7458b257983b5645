package wait

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tmcp/tmcp/internal/jobstate"
	"github.com/tmcp/tmcp/internal/tmux"
)

// No pane is left broken, whatever happens to tmcp as it types a run.
// Between the lines of a run the pane's shell may wait in one of the
// helper's reads, with echo off (the bootstrap line's read, or __tmcp_r's):
// a tmcp that stops there must not leave it so.
//
//   - Stopped on EOF or a signal, tmcp finishes the typing in flight, within
//     finishWait, or else aborts it: C-c ends the read (both readers trap
//     INT, restore echo and return), and the job is recorded as never run.
//   - Killed outright, tmcp leaves the step it was at in the pane's
//     typingOption, set before each step and cleared once the run's last
//     line is typed. The next tmcp to touch the pane (a run there, or the
//     job's get_job) reads it and mends the pane the same way.
//
// C-c never runs anything: at a prompt it discards the line being edited,
// in a reader it ends the read, and it is never sent once a run's last
// line may have been taken, when the command itself would receive it.

// typingOption is the pane option that holds "JOBID STEP PID" while tmcp
// types the lines of a run into the pane: STEP is the line about to be
// typed, or last typed (see the step names), PID the tmcp's process,
// which another tmcp on the same server leaves alone while it lives.
const typingOption = "@tmcp_typing"

// The steps of a run's typing, as typingOption and TMCP_TEST_HOLD name
// them: each is the line about to be typed. Up to stepRun, nothing of the
// command can run, and the shell waits at its prompt or in a read of the
// helper's, which C-c ends; from stepRun on, the command may run.
const (
	stepBootstrap = "bootstrap" // the line that reads the helper
	stepHelper    = "helper"    // the helper, which the bootstrap line reads
	stepTag       = "tag"       // fish: the line that names the next command's job
	stepReader    = "reader"    // the line that calls __tmcp_r, which reads the command
	stepHandover  = "handover"  // the encoded lines __tmcp_r reads, but a POSIX reader's last
	stepRun       = "run"       // the line whose Enter runs the command
	stepDone      = "done"      // all typed, typingOption not yet cleared (TMCP_TEST_HOLD only)
)

// holdEnv names the test hook: set to a step's name, it makes every run
// hold its typing just before that step (typingOption already names it),
// until tmcp shuts down, so that tests can stop tmcp there. Read once, as
// the Service is made; unset, it does nothing.
const holdEnv = "TMCP_TEST_HOLD"

// finishWait bounds how long tmcp, shutting down, lets the runs it is
// typing finish, their start mark seen, before it aborts those still
// being typed; abortWait bounds the abort. Together they stay under 2 s.
const (
	finishWait = time.Second
	abortWait  = 500 * time.Millisecond
)

// errAborted is why a run's typing stopped: tmcp shuts down.
var errAborted = errors.New("tmcp shut down before the command was typed")

// neverRan is why a run whose typing tmcp aborted has no status.
const neverRan = "the command never ran: tmcp stopped before its line was typed whole, and nothing of it was left waiting in the pane"

// holdStep returns the step TMCP_TEST_HOLD names, or "".
func holdStep() string { return os.Getenv(holdEnv) }

// typingNow notes that tmcp begins to type the lines of job j, unless it
// shuts down, which it reports.
func (s *Service) typingNow(j *job) (shutting bool) {
	s.shutMu.Lock()
	defer s.shutMu.Unlock()
	if s.shut {
		return true
	}
	s.typingJobs[j] = struct{}{}
	return false
}

// typingOver notes that tmcp types no more of job j's lines, all typed
// or not.
func (s *Service) typingOver(j *job) {
	s.shutMu.Lock()
	delete(s.typingJobs, j)
	s.shutMu.Unlock()
	j.stopTyping()
}

// typing returns the jobs whose lines tmcp is typing, ended or not.
func (s *Service) typing() []*job {
	s.shutMu.Lock()
	defer s.shutMu.Unlock()
	jobs := make([]*job, 0, len(s.typingJobs))
	for j := range s.typingJobs {
		jobs = append(jobs, j)
	}
	return jobs
}

// markTyping leaves in the pane's typingOption that job j is at step.
func (s *Service) markTyping(ctx context.Context, j *job, step string) error {
	j.mu.Lock()
	same := j.typingStep == step
	j.typingStep = step
	j.mu.Unlock()
	if same {
		return nil
	}
	return s.tc.SetOption(ctx, tmux.PaneScope, j.paneID, typingOption, j.id+" "+step+" "+strconv.Itoa(os.Getpid()), false)
}

// clearTyping clears the pane's typingOption once a run's lines are typed.
func (s *Service) clearTyping(ctx context.Context, paneID string) error {
	return s.tc.SetOption(ctx, tmux.PaneScope, paneID, typingOption, "", true)
}

// hold blocks at step while TMCP_TEST_HOLD names it, until tmcp shuts
// down (errAborted) or ctx ends; errAborted also once tmcp gave up the
// typing in flight.
func (s *Service) hold(ctx context.Context, step string) error {
	if s.holdAt == step {
		select {
		case <-s.abort:
		case <-ctx.Done():
			return errors.Join(ctx.Err(), tmux.ErrNotSent) // nothing of the step is typed
		}
	}
	if s.aborted() {
		return errAborted
	}
	return nil
}

// aborted reports whether tmcp gave up the typing in flight.
func (s *Service) aborted() bool {
	select {
	case <-s.abort:
		return true
	default:
		return false
	}
}

// shuttingDown reports whether tmcp is shutting down: no run begins.
func (s *Service) shuttingDown() bool {
	s.shutMu.Lock()
	defer s.shutMu.Unlock()
	return s.shut
}

// settleTyping is the first step of shutting down: no run begins any
// more; the runs being typed are given finishWait to be typed whole and
// started, and those still typed then are aborted.
func (s *Service) settleTyping() {
	s.shutMu.Lock()
	s.shut = true
	s.shutMu.Unlock()
	jobs := s.typing()
	finish, stop := context.WithTimeout(context.Background(), finishWait)
	defer stop()
	var late []*job
	for _, j := range jobs {
		select {
		case <-j.typingDone:
			// Typed whole: the shell has the rest of the time to take it.
			select {
			case <-j.begun:
			case <-j.done:
			case <-finish.Done():
			}
		case <-finish.Done():
			late = append(late, j)
		}
	}
	if len(late) == 0 {
		return
	}
	close(s.abort)
	ctx, cancel := context.WithTimeout(context.Background(), abortWait)
	defer cancel()
	for _, j := range late {
		select {
		case <-j.typingDone: // the typing saw the abort, between two lines
		case <-ctx.Done():
		}
		s.abortTyping(ctx, j)
	}
}

// abortTyping ends a job whose typing stopped short: as never run, with
// C-c for the shell when a read of the helper's may wait for more, and
// the pane's typingOption cleared. A job whose last line was typed ran,
// and goes on.
func (s *Service) abortTyping(ctx context.Context, j *job) {
	j.mu.Lock()
	reading, all := j.reading, j.typedAll
	j.mu.Unlock()
	if all {
		_ = s.clearTyping(ctx, j.paneID)
		return
	}
	j.endNeverRan(neverRan)
	// The run's own goroutine may have ended the job an instant before,
	// and be writing its end: the Service stops writing ends once this
	// returns, so wait until the end is handed to the keeper (done closes
	// after it).
	select {
	case <-j.done:
	case <-ctx.Done():
	}
	if reading {
		_ = s.hub.Keys(ctx, j.paneID, "C-c")
	}
	_ = s.clearTyping(ctx, j.paneID)
}

// Mend mends a pane that a tmcp killed as it typed a run left waiting in
// a read of the helper's (see mendTyping), before other keys reach it.
func (s *Service) Mend(ctx context.Context, paneID string) { s.mendTyping(ctx, paneID) }

// mendTyping mends a pane that a tmcp killed as it typed a run left
// behind, as its typingOption tells, unless a run of this tmcp types
// there now. Before stepRun, C-c ends any read of the helper's that
// waits, and the job is recorded as never run. At stepRun, the line may
// have gone: the command ran if its shell recorded its end or does not
// hold the terminal (it runs); else it never ran.
func (s *Service) mendTyping(ctx context.Context, paneID string) {
	out, err := s.tc.Expand(ctx, paneID, "#{"+typingOption+"}")
	if err != nil || len(out) == 0 || strings.TrimSpace(out[0]) == "" {
		return
	}
	f := strings.Fields(out[0])
	if len(f) != 3 || len(f[0]) < markLen {
		_ = s.clearTyping(ctx, paneID) // not tmcp's
		return
	}
	id, step := f[0], f[1]
	if j := s.jobs.get(id); j != nil && !j.isAdopted() {
		return // this tmcp's own run, being typed
	}
	if pid, err := strconv.Atoi(f[2]); err == nil && pid != os.Getpid() && alive(pid) {
		return // another tmcp's, typing there now
	}
	var rec jobstate.Record
	known := false
	if s.keep != nil {
		rec, known = s.keep.store.Get(id)
		known = known && rec.Ended.IsZero() && rec.Pane == paneID
	}
	ran := true
	if step == stepRun {
		j := newJob(id, paneID, rec.Command, rec.Started)
		if _, recorded := s.recordedEnd(ctx, j); !recorded {
			front, seen := s.shellInFront(ctx, paneID, rec.ShellGroup)
			ran = !seen || !front
		}
	} else {
		ran = false
		s.interruptAndSettle(ctx, paneID)
	}
	if known && !ran {
		rec.Ended, rec.Reason, rec.NeverRan = time.Now(), neverRan, true
		_ = s.keep.store.Put(rec)
	}
	_ = s.clearTyping(ctx, paneID)
}

// redrawSettle is how long the cursor of a pane sent C-c must stay still
// to be taken as at the shell's new prompt.
const redrawSettle = 50 * time.Millisecond

// interruptAndSettle sends C-c to a pane and waits, up to promptWait, for
// the shell to have handled it: the cursor moved from where it was (the
// echo of ^C, a new prompt) and then stayed still for redrawSettle. Keys
// typed while the shell still handles the signal may be thrown away with
// the line it interrupts (dash reads ahead), or land in the read it ends.
func (s *Service) interruptAndSettle(ctx context.Context, paneID string) {
	before, err := s.tc.PaneInfo(ctx, paneID)
	if err != nil || s.hub.Keys(ctx, paneID, "C-c") != nil {
		return
	}
	deadline := time.Now().Add(promptWait)
	last, still := before, time.Time{}
	for time.Now().Before(deadline) {
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return
		}
		p, err := s.tc.PaneInfo(ctx, paneID)
		if err != nil {
			return
		}
		moved := p.CursorX != before.CursorX || p.CursorY != before.CursorY
		switch {
		case p.CursorX != last.CursorX || p.CursorY != last.CursorY:
			last, still = p, time.Now()
		case moved && time.Since(still) >= redrawSettle:
			return
		}
	}
}

// alive reports whether process pid runs: it exists, and is no zombie
// (a tmcp killed outright stays one until its parent reaps it).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil { // no /proc: the process exists or not
		err := syscall.Kill(pid, 0)
		return err == nil || errors.Is(err, syscall.EPERM)
	}
	_, rest, _ := strings.Cut(string(stat[strings.LastIndexByte(string(stat), ')')+1:]), " ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
