package record

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
)

// maxQueued bounds the bytes of one recording waiting for the disk. Past
// it, output is dropped, counted, and the count written as a marker once
// the disk has caught up: a slow disk never holds up a pane's stream.
const maxQueued = 4 << 20

// chunkSize is the size of the buffers events are queued in: small
// enough that growing one costs little, reused once written.
const chunkSize = 64 << 10

// stopWait bounds how long stopping a recording waits for its last lines
// to be written.
const stopWait = 2 * time.Second

// A recording is the asciicast file, in parts of at most maxBytes, of one
// pane's output. Events are encoded where they happen and queued; a
// goroutine of its own writes the queue, a whole line at a time and
// unbuffered, so that a tmcp that dies leaves files that play.
type recording struct {
	paneID   string
	base     string // path of the first part, less ".cast"
	title    string
	maxBytes int64
	report   func(error) // told once when the recording stops for an error

	mu      sync.Mutex
	part    int       // 1 for the first file
	path    string    // of the part being written
	start   time.Time // when the part began: its events count from here
	size    int64     // bytes of the part, written or queued
	width   int
	height  int
	carry   []byte   // the start of a UTF-8 character the last output split
	queue   []*chunk // lines not yet written, in order
	queued  int
	spare   [][]byte // written buffers, for the next chunks
	events  int      // event lines in the part
	dropped int64    // output bytes dropped since the last marker that said so
	stopped bool
	stream  *pane.Stream // being recorded; nil between streams
	untap   func()
	release func() // lets go of a stream held for record_pane; nil if none

	wake chan struct{} // has the writer look at the queue
	done chan struct{} // closed when the writer has finished
}

// chunk is queued lines for one file.
type chunk struct {
	path string
	data []byte
}

// openFile opens a part for appending.
func openFile(path string) (io.WriteCloser, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
}

// newRecording begins the first part of a recording at base+".cast",
// opening it now so that a directory it cannot be written in is said at
// once, and starts its writer. create opens the later parts.
func newRecording(paneID, base, title string, width, height int, maxBytes int64,
	create func(string) (io.WriteCloser, error), report func(error)) (*recording, error) {
	r := &recording{paneID: paneID, base: base, title: title, maxBytes: maxBytes, report: report,
		width: width, height: height, wake: make(chan struct{}, 1), done: make(chan struct{})}
	r.partLocked(time.Now())
	f, err := create(r.path)
	if err != nil {
		return nil, fmt.Errorf("recording pane %s: %w", paneID, err)
	}
	go r.write(f, r.path, create)
	return r, nil
}

// PartPath is where part n (from 1) of the recording whose first part is
// base+".cast" is written: base+".cast", then base+".2.cast" and so on.
func PartPath(base string, n int) string {
	if n <= 1 {
		return base + ".cast"
	}
	return base + "." + strconv.Itoa(n) + ".cast"
}

// partLocked begins part r.part+1 at now with its header.
func (r *recording) partLocked(now time.Time) {
	r.part++
	r.path = PartPath(r.base, r.part)
	r.start = now
	c := &chunk{path: r.path, data: appendHeader(nil, now, r.width, r.height, r.title)}
	r.queue = append(r.queue, c)
	r.size = int64(len(c.data))
	r.queued += len(c.data)
	r.events = 0
}

// emitLocked queues one event that happens now, in a new part if its line
// would take this one past maxBytes (a part holds one event at least), and
// returns where the line begins.
func (r *recording) emitLocked(code byte, data []byte) (path string, off int64) {
	r.droppedLocked()
	now := time.Now()
	c := r.tailLocked()
	n := len(c.data)
	c.data = appendEvent(c.data, now.Sub(r.start), code, data)
	if r.events > 0 && r.size+int64(len(c.data)-n) > r.maxBytes {
		c.data = c.data[:n]
		r.partLocked(now)
		c = r.tailLocked()
		n = len(c.data)
		c.data = appendEvent(c.data, 0, code, data)
	}
	line := len(c.data) - n
	off = r.size
	r.size += int64(line)
	r.queued += line
	r.events++
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return r.path, off
}

// droppedLocked queues the marker that says how much output was dropped
// since the last, if any was.
func (r *recording) droppedLocked() {
	if n := r.dropped; n > 0 {
		r.dropped = 0
		r.emitLocked(codeMarker, []byte(fmt.Sprintf("tmcp dropped %d bytes of output here: the disk was too slow", n)))
	}
}

// tailLocked returns the queued chunk of the part being written, with
// room for more.
func (r *recording) tailLocked() *chunk {
	if n := len(r.queue); n > 0 && r.queue[n-1].path == r.path && len(r.queue[n-1].data) < chunkSize {
		return r.queue[n-1]
	}
	c := &chunk{path: r.path}
	if n := len(r.spare); n > 0 {
		c.data, r.spare = r.spare[n-1][:0], r.spare[:n-1]
	} else {
		c.data = make([]byte, 0, chunkSize+chunkSize/4)
	}
	r.queue = append(r.queue, c)
	return c
}

// output is the tap on the recorded stream: it runs on the stream's
// writer, with the stream locked, so it only encodes and queues.
func (r *recording) output(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	if len(r.carry) > 0 {
		p = append(r.carry, p...)
		r.carry = nil
	}
	p, rest := splitUnfinished(p)
	if len(rest) > 0 {
		r.carry = append([]byte(nil), rest...)
	}
	if len(p) == 0 {
		return
	}
	if r.queued >= maxQueued {
		r.dropped += int64(len(p))
		return
	}
	r.emitLocked(codeOutput, p)
}

// mark queues a marker and returns where its line begins; ok is false if
// the recording has stopped.
func (r *recording) mark(label string) (path string, off int64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return "", 0, false
	}
	path, off = r.emitLocked(codeMarker, []byte(label))
	return path, off, true
}

// resize queues a resize event if the pane's size changed.
func (r *recording) resize(width, height int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || width <= 0 || height <= 0 || width == r.width && height == r.height {
		return
	}
	r.width, r.height = width, height
	r.emitLocked(codeResize, []byte(fmt.Sprintf("%dx%d", width, height)))
}

// position returns where the next line will begin.
func (r *recording) position() (path string, off int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.path, r.size
}

// attach records s from now on, in place of the stream recorded before;
// release, if not nil, lets go of s when the recording stops.
func (r *recording) attach(s *pane.Stream, release func()) {
	r.mu.Lock()
	if r.stopped || r.stream == s {
		r.mu.Unlock()
		if release != nil {
			release()
		}
		return
	}
	r.mu.Unlock()
	// Tapped without r.mu held: the tap runs with the stream locked and
	// takes r.mu, so r.mu is never held while the stream is locked here.
	// A recording keeps every byte: no flood is followed through the history.
	exact := s.Exact()
	_, tapped := s.Tap(r.output)
	untap := func() { tapped(); exact() }
	r.mu.Lock()
	oldUntap, oldRelease := r.untap, r.release
	r.stream, r.untap, r.release, r.carry = s, untap, release, nil
	r.mu.Unlock()
	if oldUntap != nil {
		oldUntap()
	}
	if oldRelease != nil {
		oldRelease()
	}
}

// hold has the recording let go of its stream with release when it stops.
func (r *recording) hold(release func()) {
	r.mu.Lock()
	old := r.release
	r.release = release
	stopped := r.stopped
	r.mu.Unlock()
	if old != nil {
		old()
	}
	if stopped {
		release()
	}
}

// detach stops recording s, if it is the stream being recorded, and
// reports whether the recording was holding it. If it was, held runs
// (when not nil) before the stream is let go of: whoever waits for that
// finds what held did.
func (r *recording) detach(s *pane.Stream, held func()) bool {
	r.mu.Lock()
	if r.stream != s {
		r.mu.Unlock()
		return false
	}
	untap, release := r.untap, r.release
	r.stream, r.untap, r.release, r.carry = nil, nil, nil, nil
	r.mu.Unlock()
	if untap != nil {
		untap()
	}
	if release != nil {
		if held != nil {
			held()
		}
		release()
	}
	return release != nil
}

// stop ends the recording: what is queued is written, the file closed and
// the stream let go of. It returns the last part's path.
func (r *recording) stop() string {
	r.mu.Lock()
	if !r.stopped {
		r.droppedLocked()
	}
	r.stopped = true
	s := r.stream
	r.mu.Unlock()
	if s != nil {
		r.detach(s, nil)
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
	// A stalled disk holds up the caller for stopWait at most; the writer
	// finishes on its own.
	t := time.NewTimer(stopWait)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.path
}

// write writes the queue to disk until the recording stops, starting on
// f, the first part, at open, and opening the later parts with create.
func (r *recording) write(f io.WriteCloser, open string, create func(string) (io.WriteCloser, error)) {
	defer close(r.done)
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for range r.wake {
		r.mu.Lock()
		queue, stopped := r.queue, r.stopped
		r.queue, r.queued = nil, 0
		r.mu.Unlock()
		for _, c := range queue {
			var err error
			if c.path != open {
				if err = f.Close(); err == nil {
					f, err = create(c.path)
				}
				if err != nil {
					f = nil
					r.fail(err)
					return
				}
				open = c.path
			}
			if _, err = f.Write(c.data); err != nil {
				r.fail(fmt.Errorf("writing %s: %w", c.path, err))
				return
			}
		}
		r.mu.Lock()
		for _, c := range queue {
			if len(r.spare) < maxQueued/chunkSize && cap(c.data) <= 2*chunkSize {
				r.spare = append(r.spare, c.data)
			}
		}
		r.mu.Unlock()
		if stopped {
			return
		}
	}
}

// fail stops a recording that cannot be written, and says why.
func (r *recording) fail(err error) {
	r.mu.Lock()
	r.stopped = true
	r.queue, r.queued = nil, 0
	s := r.stream
	r.mu.Unlock()
	if s != nil {
		r.detach(s, nil)
	}
	if r.report != nil {
		r.report(fmt.Errorf("recording pane %s stopped: %w", r.paneID, err))
	}
}

// name makes a string safe in a file name.
func name(s string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			return c
		}
		return '_'
	}, s)
}

// isStopped reports whether the recording has stopped.
func (r *recording) isStopped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

// recording reports whether s is the stream being recorded.
func (r *recording) recording(s *pane.Stream) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stream == s && !r.stopped
}

// streaming reports whether a stream is being recorded.
func (r *recording) streaming() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stream != nil && !r.stopped
}
