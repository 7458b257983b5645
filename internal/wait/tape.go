package wait

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// A job's output reaches tmcp through the pane's stream, the fastest way
// tmux has: but an output client more than pause-after seconds behind has
// the pane paused and what it writes meanwhile dropped, and output still
// queued for the client when the pane's process ends is freed unsent. Both
// happen to a job that prints much while tmux is busy with many panes.
//
// So a job that runs in a pane of this machine's tmux also has a tape:
// before its line is typed, tmux pipes the pane's output (pipe-pane -O)
// into a FIFO that tmcp reads. tmux writes the pipe as it reads the pane,
// with no age limit, and never drops a byte of it. The job goes on reading
// its stream, and turns to the tape only when the stream lost output or
// the pane died: it then reads the job again from where the tape stood as
// the job began, before its first line was typed. The tape keeps what it
// read for its job until then, up to tapeKeep bytes; a job that printed
// more before any loss lets it go, and a later loss is reported as before.
//
// Opening a pipe costs tmux a fork, some 10 ms of a run on a busy machine:
// so a pane's tape stays open for tapeLinger after its last job, for the
// next, and what the pane writes between jobs is read and let go.

// tapesEnv, set to "on", gives jobs tapes. They are off by default for
// now: with tapes, tmux 3.3a's server crashed (a segfault, the same
// address each time) three times in this machine's test runs, and it is
// not yet known which command of tmcp's sets it off.
const tapesEnv = "TMCP_TAPES"

// tapeKeep bounds the bytes a tape keeps while its job reads the stream.
const tapeKeep = 32 << 20

// tapeLinger is how long a pane's tape stays open with no job.
const tapeLinger = 10 * time.Second

// tapeClose bounds closing a tape's pipe: short, as shutting down waits for it.
const tapeClose = 250 * time.Millisecond

// tapeDrain bounds how long a job whose pane died waits for the rest of
// its tape: tmux closes the pipe as it frees the pane.
const tapeDrain = time.Second

// tape is the copy of a pane's output that tmux pipes to tmcp.
type tape struct {
	pane string
	path string // the FIFO

	mu       sync.Mutex
	held     bool   // a job holds the tape: what comes is kept for it
	buf      []byte // kept for the job and not yet taken
	replayed bool   // the job reads the tape: taken bytes are let go
	over     bool   // more than tapeKeep came before a replay: the tape is of no use to the job
	opened   bool   // the pipe's command opened the FIFO
	eof      bool   // the pipe closed: tmux let it go, or tmcp did
	failed   error  // the pipe never opened, or reading it failed
	linger   *time.Timer
	closing  bool // its linger ran out: no job may hold it
	ready    chan struct{}
	file     *os.File      // what the reading reads; closeTape closes it
	stopped  bool          // closeTape was called
	closed   chan struct{} // closed once the reading ends
	stopOnce sync.Once
}

// tapeCommand is the pipe's command: one byte, so tmcp knows the FIFO is
// open for writing, then the pane's output as tmux gives it.
func tapeCommand(path string) string {
	return "{ printf x; exec cat; } > '" + path + "'"
}

// holdTape gives job j its pane's tape, opening one if the pane has none,
// if the pane's tmux runs on this machine and no other pipe is open on
// the pane. Where the job gets none, it returns nil and why, for the
// reason a job that lost output gives. What the tape reads from now on is
// kept for the job, until releaseTape.
func (s *Service) holdTape(ctx context.Context, j *job, piped bool) (*tape, string) {
	switch {
	case s.noTapes:
		return nil, "tmcp keeps no copy of a job's output unless " + tapesEnv + "=on"
	case s.tc.Remote():
		return nil, "tmcp keeps no copy of the output of a job on a remote host"
	}
	s.tapesMu.Lock()
	t := s.tapes[j.paneID]
	s.tapesMu.Unlock()
	if t != nil && t.hold() {
		return t, ""
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
		return "its pipe failed: " + t.failed.Error()
	case t.eof:
		return "its pipe was closed, or replaced by another"
	}
	return ""
}

// hold keeps what the tape reads from now on, unless its pipe closed.
func (t *tape) hold() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.eof || t.failed != nil || t.closing {
		return false
	}
	if t.linger != nil {
		t.linger.Stop()
	}
	t.held, t.buf, t.replayed, t.over = true, nil, false, false
	return true
}

// releaseTape lets a job's tape go: it stays open for tapeLinger, for
// the pane's next job, unless its pipe closed.
func (s *Service) releaseTape(t *tape) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.held, t.buf = false, nil
	gone := t.eof || t.failed != nil
	if !gone {
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

// openTape pipes a pane's output into a new FIFO, and returns its tape.
func (s *Service) openTape(ctx context.Context, paneID string) (*tape, error) {
	dir, err := s.tapeDir()
	if err != nil {
		return nil, fmt.Errorf("making a directory for its pipe: %w", err)
	}
	t := &tape{pane: paneID, ready: make(chan struct{}, 1), closed: make(chan struct{})}
	s.tapesMu.Lock()
	s.tapeCount++
	t.path = filepath.Join(dir, strconv.Itoa(s.tapeCount))
	s.tapesMu.Unlock()
	if err := syscall.Mkfifo(t.path, 0o600); err != nil {
		return nil, fmt.Errorf("making its pipe: %w", err)
	}
	// Read and write, so the open does not wait for the pipe's command.
	rw, err := os.OpenFile(t.path, os.O_RDWR, 0)
	if err != nil {
		_ = os.Remove(t.path)
		return nil, fmt.Errorf("opening its pipe: %w", err)
	}
	if err := s.tc.PipePane(ctx, paneID, tapeCommand(t.path)); err != nil {
		rw.Close()
		_ = os.Remove(t.path)
		return nil, fmt.Errorf("tmux's pipe-pane: %w", err)
	}
	go t.read(rw)
	s.tapesMu.Lock()
	s.tapes[paneID] = t
	s.tapesMu.Unlock()
	return t, nil
}

// closeTapes closes the tapes still open, as tmcp shuts down: tmux would
// otherwise keep each pipe until its pane next wrote.
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

// tapeDir returns the Service's private directory for FIFOs, made once.
func (s *Service) tapeDir() (string, error) {
	s.tapesOnce.Do(func() {
		s.tapesDir, s.tapesErr = os.MkdirTemp("", "tmcp-tapes-")
	})
	return s.tapesDir, s.tapesErr
}

// removeTapeDir removes the FIFO directory, once no tape is open.
func (s *Service) removeTapeDir() {
	if s.tapesDir != "" {
		_ = os.RemoveAll(s.tapesDir)
	}
}

// read waits for the pipe's command to open the FIFO, then reads it until
// the pipe closes or the tape is closed. Holding only a read end by then,
// it sees the pipe's end. Until then it holds a write end too, so the
// command's open of the FIFO never waits.
func (t *tape) read(rw *os.File) {
	defer close(t.closed)
	defer t.wake()
	if !t.reading(rw) {
		rw.Close()
		return
	}
	hello := make([]byte, 1)
	if _, err := rw.Read(hello); err != nil {
		rw.Close()
		t.fail(fmt.Errorf("the pipe of pane %s never opened: %w", t.pane, err))
		return
	}
	ro, err := os.OpenFile(t.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	rw.Close()
	if err != nil {
		t.fail(fmt.Errorf("reading the pipe of pane %s: %w", t.pane, err))
		return
	}
	defer ro.Close()
	if !t.reading(ro) {
		return
	}
	t.mu.Lock()
	t.opened = true
	t.mu.Unlock()
	chunk := make([]byte, 64<<10)
	for {
		n, err := ro.Read(chunk)
		if n > 0 {
			t.add(chunk[:n])
		}
		if err != nil {
			t.mu.Lock()
			t.eof = true
			if !errors.Is(err, os.ErrClosed) && !errors.Is(err, io.EOF) {
				t.failed = err
			}
			t.mu.Unlock()
			return
		}
	}
}

// reading notes the file the tape reads, which closeTape closes to end
// the reading, and reports false if the tape is closed already.
func (t *tape) reading(f *os.File) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	t.file = f
	return true
}

// add keeps bytes read for the job that holds the tape, unless it went
// over its bound; with no job, they are let go.
func (t *tape) add(p []byte) {
	t.mu.Lock()
	if t.held && !t.over {
		t.buf = append(t.buf, p...)
		if !t.replayed && len(t.buf) > tapeKeep {
			t.over, t.buf = true, nil
		}
	}
	t.mu.Unlock()
	t.wake()
}

func (t *tape) wake() {
	select {
	case t.ready <- struct{}{}:
	default:
	}
}

func (t *tape) fail(err error) {
	t.mu.Lock()
	t.failed, t.eof = err, true
	t.mu.Unlock()
}

// replay turns the job to the tape: it returns every byte since the tape
// began, and from then on take gives what follows. ok is false where the
// tape cannot stand for the stream: it never opened, it let its start go,
// or its pipe closed before the job's pane died (another pipe replaced it).
func (t *tape) replay(paneDied bool) (kept []byte, ok bool) {
	if t == nil {
		return nil, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.over || t.failed != nil || t.eof && !paneDied {
		return nil, false
	}
	t.replayed = true
	kept, t.buf = t.buf, nil
	return kept, true
}

// take returns what the tape read since the last take or replay.
func (t *tape) take() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	t.buf = nil
	return b
}

// ended reports whether the pipe closed, so nothing more will come.
func (t *tape) ended() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.eof
}

// closeTape stops the pipe (unless tmux closed it: a pipe there now may be
// another's) and the reading, and removes the FIFO.
func (s *Service) closeTape(t *tape) {
	if t == nil {
		return
	}
	t.stopOnce.Do(func() {
		t.mu.Lock()
		theirs := t.opened && t.eof // tmux closed the pipe: a new one may be another's
		t.mu.Unlock()
		if !theirs {
			ctx, cancel := context.WithTimeout(context.Background(), tapeClose)
			_ = s.tc.PipePane(ctx, t.pane, "")
			cancel()
		}
		t.mu.Lock()
		t.stopped = true
		if t.file != nil {
			_ = t.file.Close() // ends the Read under way
		}
		t.mu.Unlock()
		<-t.closed
		_ = os.Remove(t.path)
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
			if rest := t.take(); len(rest) > 0 {
				return r.consume(rest, time.Now())
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
