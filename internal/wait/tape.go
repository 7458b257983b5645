package wait

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tmcp/tmcp/internal/tmux"
)

// A job's output reaches tmcp through the pane's stream, the fastest way
// tmux has: but an output client more than pause-after seconds behind has
// the pane paused and what it writes meanwhile dropped, and output still
// queued for the client when the pane's process ends is freed unsent. Both
// happen to a job that prints much while tmux is busy with many panes.
//
// So a job that runs in a pane of this machine's tmux also has a tape:
// before its line is typed, tmux pipes the pane's output (pipe-pane -O)
// to a process that appends it to a file of tmcp's. tmux writes the pipe
// as it reads the pane, with no age limit, and never drops a byte of it.
// The job goes on reading its stream, and turns to the tape only when the
// stream lost output or the pane died: it then reads the job again from
// the file's start, cut as the job began, before its first line was typed.
//
// The pipe ends in a file, not in tmcp, so that it never waits for tmcp:
// tmux frees a pane whose process ended only once its pipe took all it
// had, and a pipe to a slow or stopped tmcp kept dead panes on screen and
// had tmux free them later, all at once as tmcp closed — a pane freed,
// which tells every control client, while a tmcp attached one crashes
// tmux 3.3a (see internal/tmux's attachGate).
//
// Opening a pipe costs tmux a fork, some 10 ms of a run on a busy machine:
// so a pane's tape stays open for tapeLinger after its last job, for the
// next, and what the pane writes between jobs is cut away.

// tapesEnv, set to "off", gives jobs no tapes.
const tapesEnv = "TMCP_TAPES"

// tapeKeep bounds the bytes a tape keeps while its job reads the stream;
// a job that printed more before any loss lets them go.
const tapeKeep = 32 << 20

// tapeIdle bounds what a tape keeps with no job, or for a job past tapeKeep.
const tapeIdle = 1 << 20

// tapeLinger is how long a pane's tape stays open with no job.
const tapeLinger = 10 * time.Second

// tapeClose bounds closing a tape's pipe: short, as shutting down waits for it.
const tapeClose = 250 * time.Millisecond

// tapeDrain bounds how long a job whose pane died waits for the rest of
// its tape: tmux closes the pipe as it frees the pane.
const tapeDrain = time.Second

// tapeLook is how often a tape's file is looked at while its job reads
// it, and tapeIdleLook otherwise (to cut it).
const (
	tapeLook     = 10 * time.Millisecond
	tapeIdleLook = 100 * time.Millisecond
)

// tapeChunk bounds what one take reads of a tape.
const tapeChunk = 4 << 20

// tapeBlock is the most the pipe's command copies at once.
const tapeBlock = 4 << 10

// tapeAlive names the FIFO in the tapes' directory that tmcp holds open
// for as long as it runs: each pipe's command reads it, and stops its copy
// once the read ends, that is, once tmcp is gone.
const tapeAlive = "alive"

// tape is the copy of a pane's output that tmux pipes into a file.
type tape struct {
	pane    string
	path    string // the file the pipe's command appends to
	endPath string // made once the pipe's command ended: tmux closed the pipe
	file    *os.File
	ready   chan struct{} // a job reading the tape may take more
	quit    chan struct{} // closed by closeTape: the watch ends
	watched chan struct{} // closed once the watch ended

	mu       sync.Mutex
	held     bool  // a job holds the tape: what comes is kept for it
	replayed bool  // the job reads the tape
	read     int64 // the job read the file up to here, once replayed
	punched  int64 // the file's bytes before here are let go
	over     bool  // more than tapeKeep came before a replay: the tape is of no use to the job
	eof      bool  // the pipe's command ended: tmux let the pipe go, or tmcp did
	failed   error // reading or cutting the file failed
	linger   *time.Timer
	closing  bool // its linger ran out: no job may hold it
	stopOnce sync.Once
}

// tapeCommand is the pipe's command: the pane's output appended to path,
// as tmux gives it, until tmux closes the pipe or the tmcp that holds the
// FIFO alive is gone; then a file that says the pipe ended.
//
// dd writes each read as it comes (head -c would keep a block in stdio).
// A watch beside it reads alive, whose only writer is tmcp: its read ends
// when tmcp does, killed or not, and it stops dd, so that no pipe of a
// dead tmcp goes on filling a file nobody reads, and tmux lets the pane's
// pipe go at the pane's next write. dd reads the pipe through fd 3: a
// command put in the background has its stdin from /dev/null.
func tapeCommand(path, alive string) string {
	return fmt.Sprintf("exec 3<&0; dd bs=%d status=none <&3 >> %s & d=$!; "+
		"(read x < %s; kill $d 2>/dev/null) & w=$!; "+
		"wait $d; kill $w 2>/dev/null; : > %s",
		tapeBlock, tmux.ShellQuote(path), tmux.ShellQuote(alive), tmux.ShellQuote(tapeEndPath(path)))
}

// tapeEndPath is the file the pipe's command makes as it ends.
func tapeEndPath(path string) string { return path + ".end" }

// holdTape gives job j its pane's tape, opening one if the pane has none,
// if the pane's tmux runs on this machine and no other pipe is open on
// the pane. Where the job gets none, it returns nil and why, for the
// reason a job that lost output gives. What the pane writes from now on is
// kept for the job, until releaseTape.
func (s *Service) holdTape(ctx context.Context, j *job, piped bool) (*tape, string) {
	switch {
	case s.noTapes:
		return nil, "tmcp keeps no copy of a job's output with " + tapesEnv + "=off"
	case s.tc.Remote():
		return nil, "tmcp keeps no copy of the output of a job on a remote host"
	}
	s.tapesMu.Lock()
	t := s.tapes[j.paneID]
	s.tapesMu.Unlock()
	if t != nil {
		if t.hold() {
			return t, ""
		}
	}
	if piped {
		// Another's pipe, or a tape whose pipe closed and whose pane
		// still shows it.
		return nil, "the pane has a pipe of its own (pipe-pane), so tmcp kept no copy of the output"
	}
	t, err := s.openTape(ctx, j.paneID)
	if err != nil {
		return nil, "tmcp could not keep a copy of the output: " + err.Error()
	}
	if !t.hold() {
		return nil, "tmcp could not keep a copy of the output: " + t.whyNot()
	}
	return t, ""
}

// whyNotNil is whyNot, and "" for no tape (the job says why already).
func (t *tape) whyNotNil() string {
	if t == nil {
		return ""
	}
	return "tmcp's copy of the output could not stand in for it: " + t.whyNot()
}

// whyNot says why the tape cannot stand for its job's stream.
func (t *tape) whyNot() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.over:
		return fmt.Sprintf("the job printed more than %d MiB before the loss, more than tmcp keeps of it", tapeKeep>>20)
	case t.failed != nil:
		return "its file failed: " + t.failed.Error()
	case t.eof:
		return "its pipe was closed, or replaced by another"
	}
	return ""
}

// hold cuts the tape's file, so that it begins with what the pane writes
// from now on, and keeps that for a job; false if the pipe closed, or
// the tape is closing.
func (t *tape) hold() bool {
	t.look()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.eof || t.failed != nil || t.closing {
		return false
	}
	if t.linger != nil {
		t.linger.Stop()
	}
	t.cut()
	t.held, t.replayed, t.over, t.read, t.punched = true, false, false, 0, 0
	return t.failed == nil
}

// releaseTape lets a job's tape go: it stays open for tapeLinger, for
// the pane's next job, unless its pipe closed.
func (s *Service) releaseTape(t *tape) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.held, t.replayed = false, false
	gone := t.eof || t.failed != nil
	if !gone {
		t.cut()
		t.linger = time.AfterFunc(tapeLinger, func() {
			t.mu.Lock()
			idle := !t.held
			t.closing = t.closing || idle
			t.mu.Unlock()
			if idle {
				s.closeTape(t)
			}
		})
	}
	t.mu.Unlock()
	if gone {
		s.closeTape(t)
	}
}

// openTape pipes a pane's output into a new file, and returns its tape.
func (s *Service) openTape(ctx context.Context, paneID string) (*tape, error) {
	dir, err := s.tapeDir()
	if err != nil {
		return nil, fmt.Errorf("making a directory for its file: %w", err)
	}
	s.tapesMu.Lock()
	s.tapeCount++
	path := filepath.Join(dir, strconv.Itoa(s.tapeCount))
	s.tapesMu.Unlock()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("making its file: %w", err)
	}
	if err := s.tc.PipePane(ctx, paneID, tapeCommand(path, filepath.Join(dir, tapeAlive))); err != nil {
		f.Close()
		_ = os.Remove(path)
		return nil, fmt.Errorf("tmux's pipe-pane: %w", err)
	}
	t := &tape{pane: paneID, path: path, endPath: tapeEndPath(path), file: f,
		ready: make(chan struct{}, 1), quit: make(chan struct{}), watched: make(chan struct{})}
	go t.watch()
	s.tapesMu.Lock()
	s.tapes[paneID] = t
	s.tapesMu.Unlock()
	return t, nil
}

// closeTapes closes the tapes still open, as tmcp shuts down: tmux would
// otherwise keep each pipe until its pane ended.
func (s *Service) closeTapes() {
	s.tapesMu.Lock()
	open := make([]*tape, 0, len(s.tapes))
	for _, t := range s.tapes {
		open = append(open, t)
	}
	s.tapesMu.Unlock()
	var wg sync.WaitGroup
	for _, t := range open {
		wg.Go(func() { s.closeTape(t) })
	}
	wg.Wait()
}

// tapePrefix begins the name of a tmcp's directory of tapes, which goes on
// with its pid.
const tapePrefix = "tmcp-tapes-"

// tapeDir returns the Service's private directory for tapes, made once
// with the FIFO tapeAlive held open in it. Those a killed tmcp left are
// removed then.
func (s *Service) tapeDir() (string, error) {
	s.tapesOnce.Do(func() {
		removeDeadTapeDirs()
		s.tapesDir, s.tapesErr = os.MkdirTemp("", tapePrefix+strconv.Itoa(os.Getpid())+"-")
		if s.tapesErr != nil {
			return
		}
		s.tapesAlive, s.tapesErr = holdAlive(filepath.Join(s.tapesDir, tapeAlive))
	})
	return s.tapesDir, s.tapesErr
}

// holdAlive makes the FIFO at path and holds it open, for reading and
// writing so that the open does not wait for a reader. tmcp never writes
// it: its readers see its end only once tmcp is gone.
func holdAlive(path string) (*os.File, error) {
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, fmt.Errorf("making the FIFO %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the FIFO %s: %w", path, err)
	}
	return f, nil
}

// removeDeadTapeDirs removes the directories of tapes whose tmcp is gone.
// A pipe's command that began after its tmcp died waits to open the FIFO
// for a writer that will never come: opened and closed here, it ends that
// wait, and the watch stops the copy.
func removeDeadTapeDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tapePrefix+"*-*"))
	for _, dir := range dirs {
		pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(dir), tapePrefix), "-")
		n, err := strconv.Atoi(pid)
		if err != nil || n <= 0 || syscall.Kill(n, 0) != syscall.ESRCH {
			continue
		}
		// Fails at once (ENXIO) where no watch waits.
		if f, err := os.OpenFile(filepath.Join(dir, tapeAlive), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
		_ = os.RemoveAll(dir)
	}
}

// removeTapeDir removes the tapes' directory, once no tape is open.
func (s *Service) removeTapeDir() {
	if s.tapesAlive != nil {
		_ = s.tapesAlive.Close()
	}
	if s.tapesDir != "" {
		_ = os.RemoveAll(s.tapesDir)
	}
}

// watch looks at the tape's file until the tape is closed: it wakes a job
// reading the tape when more came or the pipe ended, and cuts what no
// job will read.
func (t *tape) watch() {
	defer close(t.watched)
	wait := time.NewTimer(tapeIdleLook)
	defer wait.Stop()
	for {
		select {
		case <-t.quit:
			return
		case <-wait.C:
		}
		t.look()
		t.mu.Lock()
		every := tapeIdleLook
		if t.replayed {
			every = tapeLook
		}
		t.mu.Unlock()
		wait.Reset(every)
	}
}

// look reads the file's size and whether the pipe ended, and acts on it.
// The size is read under t.mu: one read before a hold cut the file would
// take the job's fresh tape for one past tapeKeep.
func (t *tape) look() {
	_, endErr := os.Stat(t.endPath)
	t.mu.Lock()
	defer t.mu.Unlock()
	size, err := t.size()
	wake := false
	switch {
	case err != nil:
		wake = t.failed == nil
		t.failed, t.eof = err, true
	case endErr == nil && !t.eof:
		t.eof, wake = true, true
	}
	switch {
	case err != nil:
	case t.replayed:
		wake = wake || size > t.read
	case t.held && !t.over && size > tapeKeep:
		t.over = true
		t.cut()
	case (!t.held || t.over) && size > tapeIdle:
		t.cut()
	}
	if wake {
		t.wake()
	}
}

func (t *tape) size() (int64, error) {
	fi, err := t.file.Stat()
	if err != nil {
		return 0, fmt.Errorf("looking at it: %w", err)
	}
	return fi.Size(), nil
}

// cut empties the file; the pipe's command appends from its new end.
// t.mu is held.
func (t *tape) cut() {
	if err := t.file.Truncate(0); err != nil {
		t.failed, t.eof = fmt.Errorf("cutting it: %w", err), true
	}
}

func (t *tape) wake() {
	select {
	case t.ready <- struct{}{}:
	default:
	}
}

// replay turns the job to the tape: it returns every byte since the job
// held it, and from then on take gives what follows. ok is false where
// the tape cannot stand for the stream: it let its start go, its file
// failed, or its pipe closed before the job's pane died (another pipe
// replaced it).
func (t *tape) replay(paneDied bool) (kept []byte, ok bool) {
	if t == nil {
		return nil, false
	}
	t.look()
	t.mu.Lock()
	if t.over || t.failed != nil || t.eof && !paneDied {
		t.mu.Unlock()
		return nil, false
	}
	t.replayed = true
	t.mu.Unlock()
	return t.take(), true
}

// take returns what the pipe brought since the last take or replay, up to
// tapeChunk bytes, and lets go of what the job has read.
func (t *tape) take() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.replayed || t.failed != nil {
		return nil
	}
	size, err := t.size()
	if err != nil || size <= t.read {
		return nil
	}
	n := min(size-t.read, tapeChunk)
	b := make([]byte, n)
	got, err := t.file.ReadAt(b, t.read)
	if err != nil && !errors.Is(err, io.EOF) {
		t.failed, t.eof = fmt.Errorf("reading it: %w", err), true
		return nil
	}
	t.read += int64(got)
	if t.read < size {
		t.wake()
	}
	if t.read-t.punched >= tapeChunk {
		// The job read it: the disk may have it back.
		if syscall.Fallocate(int(t.file.Fd()), fallocPunchHole|fallocKeepSize, t.punched, t.read-t.punched) == nil {
			t.punched = t.read
		}
	}
	return b[:got]
}

// Linux's fallocate modes that free a range of a file and keep its size.
const (
	fallocKeepSize  = 0x01
	fallocPunchHole = 0x02
)

// ended reports whether the pipe closed, so nothing more will come.
func (t *tape) ended() bool {
	t.look()
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.eof
}

// closeTape stops the pipe (unless tmux closed it: a pipe there now may be
// another's) and the watch, and removes the file.
func (s *Service) closeTape(t *tape) {
	if t == nil {
		return
	}
	t.stopOnce.Do(func() {
		if !t.ended() {
			ctx, cancel := context.WithTimeout(context.Background(), tapeClose)
			if s.tc.PipePane(ctx, t.pane, "") == nil {
				// The command's last step makes the end file: once it
				// has, nothing comes back after the removal below.
				for !t.ended() && ctx.Err() == nil {
					time.Sleep(tapeLook)
				}
			}
			cancel()
		}
		close(t.quit)
		<-t.watched
		t.mu.Lock()
		_ = t.file.Close()
		t.failed, t.eof = os.ErrClosed, true
		t.mu.Unlock()
		_ = os.Remove(t.path)
		_ = os.Remove(t.endPath)
		s.tapesMu.Lock()
		if s.tapes[t.pane] == t {
			delete(s.tapes, t.pane)
		}
		s.tapesMu.Unlock()
	})
}

// drainTape reads the rest of a tape into a job's reader, once the job's
// pane died: tmux closes the pipe as it frees the pane, within tapeDrain.
// data is what the tape held already. It reports whether the reader found
// the job's end.
func drainTape(t *tape, r *reader, data []byte) (finished bool) {
	deadline := time.NewTimer(tapeDrain)
	defer deadline.Stop()
	for {
		if len(data) > 0 && r.consume(data, time.Now()) {
			return true
		}
		if t.ended() {
			for rest := t.take(); len(rest) > 0; rest = t.take() {
				if r.consume(rest, time.Now()) {
					return true
				}
			}
			return false
		}
		select {
		case <-t.ready:
		case <-deadline.C:
			return false
		}
		data = t.take()
	}
}
