package pane

import (
	"sync"
	"time"
)

// A Stream is the output of one pane, as tmux delivered it, from the moment
// tmcp started watching. It is safe for concurrent use: one goroutine
// writes what tmux sends while any number read and wait.
//
// To wait for new output without polling and without missing a write, take
// [Stream.Changed] first, then read the state, and only then block on the
// channel:
//
//	for {
//		changed := s.Changed()
//		if s.End() > off {
//			break // new bytes to read
//		}
//		if ended, _ := s.Closed(); ended {
//			break
//		}
//		<-changed
//	}
type Stream struct {
	paneID string
	gen    uint64
	pid    int // the pane's process as the stream began, if known

	mu        sync.Mutex
	ring      *Ring
	lost      int64
	lostAt    int64 // where the stream ended at the last loss
	skips     int64 // times a flood followed through the history may have skipped rows
	skippedAt int64 // where the stream ended at the last such time
	closed    bool
	reason    string
	cause     closeCause    // why the stream was closed, once closed
	changed   chan struct{} // nil until someone waits; closed on the next change
	done      chan struct{} // closed when the stream ends
	taps      map[*tap]struct{}
	recent    [recentWrites]writeTime // where the stream ended as recent writes came, oldest first
	nRecent   int
	lastWrite time.Time      // when the last write came, as WriteAged timed it
	prompt    *PromptTracker // the shell's marks, over every byte written but the seed
	// onUnknownNonce looks up the nonce of the pane's shell, once a mark
	// came with a nonce the tracker does not know; lookingUp while it runs.
	onUnknownNonce func()
	lookingUp      bool
	seeded         int64     // where the bytes given to Seed end; 0: none
	seededAt       time.Time // when the pane wrote them

	// A flood is followed through tmux's history (flood.go): onFlood
	// starts that, once meter says the pane floods, unless a holder
	// needs every byte (exact).
	meter     floodMeter
	onFlood   func()
	following bool
	exact     int
	needAll   chan struct{} // a token when exact becomes positive while following
}

// recentWrites writes are remembered with their time, at most one per
// writeBucket, so that [Stream.EndAt] can answer for the last
// recentWrites×writeBucket at least.
const (
	recentWrites = 32
	writeBucket  = time.Millisecond
)

// writeTime says that the stream ended at off just before a write that
// came at at.
type writeTime struct {
	at  time.Time
	off int64
}

// tap is a function that sees every byte written to a stream.
type tap struct{ fn func([]byte) }

// NewStream returns an open, empty stream for the pane with the given id.
// The generation tells this stream apart from earlier and later streams of
// the same pane id (a restarted watch, a respawned pane), so that a cursor
// taken on one is never read against another. The stream keeps the last
// ringSize bytes, or [DefaultRingSize] if ringSize is not positive.
func NewStream(paneID string, generation uint64, ringSize int) *Stream {
	return &Stream{paneID: paneID, gen: generation, ring: NewRing(ringSize), prompt: NewPromptTracker(0), done: make(chan struct{}),
		needAll: make(chan struct{}, 1)}
}

// PaneID returns the id of the pane, such as "%3".
func (s *Stream) PaneID() string { return s.paneID }

// Generation returns the generation given to [NewStream].
func (s *Stream) Generation() uint64 { return s.gen }

// Write appends bytes the pane wrote and wakes the waiters. Writes after
// [Stream.Close] are ignored: the stream has ended. p is copied, never
// kept: the caller may reuse it.
func (s *Stream) Write(p []byte) {
	s.WriteAged(p, 0)
}

// WriteAged is Write for bytes the pane wrote age before they were read
// (tmux held them that long): they are timed from then, though never
// before bytes written earlier.
func (s *Stream) WriteAged(p []byte, age time.Duration) {
	if len(p) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	now := time.Now().Add(-age)
	if now.Before(s.lastWrite) {
		now = s.lastWrite
	}
	s.lastWrite = now
	s.noteWriteLocked(now)
	if s.meter.add(len(p), now) && !s.following && s.exact == 0 && s.onFlood != nil {
		s.following = true
		go s.onFlood()
	}
	s.ring.Write(p)
	s.prompt.Write(p, now)
	if s.prompt.HeldUnknown() && !s.lookingUp && s.onUnknownNonce != nil {
		s.lookingUp = true
		go s.onUnknownNonce()
	}
	for t := range s.taps {
		t.fn(p)
	}
	s.wakeLocked()
}

// Seed writes, ahead of everything, what the pane wrote before its stream
// began: its first output, which got it muted while nobody watched it, at
// the time it came. A wait that began before that time judges it as
// output, and a cursor can point into it. The shell's marks in it are not
// read: what the pane wrote after it is not known, so they may be stale.
// A stream already written to is not seeded.
func (s *Stream) Seed(p []byte, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(p) == 0 || s.ring.End() != 0 {
		return
	}
	s.lastWrite = at
	s.noteWriteLocked(at)
	s.ring.Write(p)
	s.seeded, s.seededAt = s.ring.End(), at
	nonces := s.prompt.Nonces()
	s.prompt = NewPromptTracker(s.seeded)
	for _, n := range nonces {
		s.prompt.SetNonce(n)
	}
}

// Seeded returns where the bytes given to Seed end, and when the pane
// wrote them; end is 0 when there were none.
func (s *Stream) Seeded() (end int64, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seeded, s.seededAt
}

// Tap calls fn with every byte written from now on, in order, until untap
// is called. It returns the offset of the first byte fn will see. fn runs
// with the stream locked, on the writer's goroutine: it must be quick,
// must not call the stream, and must copy what it keeps of p. A tap sees every byte even when the ring,
// which only keeps the most recent ones, overflows.
func (s *Stream) Tap(fn func(p []byte)) (from int64, untap func()) {
	t := &tap{fn: fn}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taps == nil {
		s.taps = map[*tap]struct{}{}
	}
	s.taps[t] = struct{}{}
	return s.ring.End(), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.taps, t)
	}
}

// Lost records that tmux dropped n bytes of the pane's output before they
// reached tmcp (a paused or lagging client), and wakes the waiters.
// Lost bytes have no offsets: [Stream.End] does not move.
func (s *Stream) Lost(n int64) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.lost += n
	s.lostAt = s.ring.End()
	s.wakeLocked()
}

// closeCause is why a stream was closed.
type closeCause int

const (
	paneEnded    closeCause = iota // the pane died, or is no longer watched
	disconnected                   // the connection to the pane's tmux broke
	abandoned                      // tmcp shuts down; the pane lives on
)

// Close marks the stream ended, because the pane died or is no longer
// watched, and wakes the waiters. Bytes already written stay readable.
// Only the first reason is kept.
func (s *Stream) Close(reason string) {
	s.close(reason, paneEnded)
}

// Disconnect closes the stream because the connection to the pane's tmux
// broke: the pane may still be alive, out of reach.
func (s *Stream) Disconnect(reason string) {
	s.close(reason, disconnected)
}

// Disconnected reports whether the stream was closed by Disconnect.
func (s *Stream) Disconnected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed && s.cause == disconnected
}

// Abandon closes the stream because tmcp shuts down: the pane lives on,
// and a wait on it ends unanswered rather than with the pane's death.
func (s *Stream) Abandon(reason string) {
	s.close(reason, abandoned)
}

// Abandoned reports whether the stream was closed by Abandon.
func (s *Stream) Abandoned() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed && s.cause == abandoned
}

func (s *Stream) close(reason string, cause closeCause) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.cause = cause
	s.closed = true
	s.reason = reason
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	// Left in place, closed, so that every later Changed returns at once.
	close(s.changed)
	close(s.done)
}

// Done returns a channel that is closed when the stream ends: unlike
// [Stream.Changed], writes do not close it.
func (s *Stream) Done() <-chan struct{} { return s.done }

// noteWriteLocked remembers where the stream ends before a write that
// comes now, unless a write in the same bucket already was.
func (s *Stream) noteWriteLocked(now time.Time) {
	if s.nRecent > 0 && now.Sub(s.recent[s.nRecent-1].at) < writeBucket {
		return
	}
	if s.nRecent == recentWrites {
		copy(s.recent[:], s.recent[1:])
		s.nRecent--
	}
	s.recent[s.nRecent] = writeTime{at: now, off: s.ring.End()}
	s.nRecent++
}

// wakeLocked closes the channel of the current waiters, if any; the next
// call to Changed makes a new one.
func (s *Stream) wakeLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// Changed returns a channel that is closed by the next Write, Lost or
// Close, or that is already closed if the stream has ended. Take it before
// reading the state it guards, so that a change in between is not missed.
func (s *Stream) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// Start returns the offset of the oldest byte still held.
func (s *Stream) Start() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ring.Start()
}

// End returns the number of bytes written so far, which is the offset the
// next byte will have.
func (s *Stream) End() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ring.End()
}

// EndAt returns where the stream ended at time t, in the recent past: the
// offset of the first byte written after t. Writes less than a bucket
// apart are remembered as one, so a byte written within a millisecond
// after t may count as written before it. For a t older than the writes
// remembered, it returns the oldest remembered offset.
func (s *Stream) EndAt(t time.Time) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.recent[:s.nRecent] {
		if w.at.After(t) {
			return w.off
		}
	}
	return s.ring.End()
}

// Prompt returns what the shell integration marks written so far say of
// the pane's shell (see [PromptTracker]). Marks tmux dropped (see
// [Stream.Lost]) were not seen.
func (s *Stream) Prompt() PromptState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prompt.State()
}

// SetShellNonce tells the stream the nonce of the pane's shell (see
// [PromptTracker.SetNonce]), and wakes the waiters if that changed what
// the marks say.
func (s *Stream) SetShellNonce(nonce string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.prompt.State()
	s.prompt.SetNonce(nonce)
	if s.prompt.State() != before {
		s.wakeLocked()
	}
}

// ShellMark parses an OSC payload as a mark of the pane's shell: one that
// carries the nonce the stream knows for it. Any other is no mark.
func (s *Stream) ShellMark(payload string) (ShellMark, bool) {
	m, ok := ParseShellMark(payload)
	if !ok {
		return ShellMark{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return m, s.prompt.Believes(m)
}

// holdsUnknownMarks reports whether the stream holds marks with a nonce it
// does not know.
func (s *Stream) holdsUnknownMarks() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prompt.Holding()
}

// lookedUp says the lookup that onUnknownNonce started is over: a later
// unknown nonce starts another.
func (s *Stream) lookedUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookingUp = false
}

// LostBytes returns the total recorded by [Stream.Lost].
func (s *Stream) LostBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

// LostAfter reports whether tmux dropped output that came after stream
// offset off: a reader that has everything before off missed some.
func (s *Stream) LostAfter(off int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost > 0 && s.lostAt >= off || s.skips > 0 && s.skippedAt >= off
}

// skip records that rows of a flood followed through tmux's history may
// have scrolled past unseen (flood.go). Unlike [Stream.Lost], it does not
// end waits: they go on with the rows the history still holds.
func (s *Stream) skip() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skips++
	s.skippedAt = s.ring.End()
}

// Skips returns how many times rows may have been skipped while a flood
// was followed through tmux's history.
func (s *Stream) Skips() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skips
}

// Closed reports whether the stream has ended, and why.
func (s *Stream) Closed() (closed bool, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed, s.reason
}

// Cursor returns a cursor at the end of the stream: reading from it gives
// only what the pane writes next.
func (s *Stream) Cursor() Cursor {
	return s.CursorAt(s.End())
}

// Before returns what the stream still holds of the bytes just before
// off, as much as an escape sequence may span: what a decoder starting at
// off takes up with Decoder.ResumeAfter, for a sequence or character that
// a write cut at off.
func (s *Stream) Before(off int64) []byte {
	from := max(off-MaxSequenceLen, 0)
	if off <= from {
		return nil
	}
	data, _, missed := s.ReadFrom(from, int(off-from))
	// What the ring no longer holds shifts the read past off: keep only
	// the bytes before it.
	n := off - from - missed
	if n <= 0 {
		return nil
	}
	return data[:min(int64(len(data)), n)]
}

// anchorScan is how far back from a cursor's offset the stream is read
// for the line to anchor it on.
const anchorScan = 8 << 10

// CursorAt returns a cursor at offset off of the stream, anchored on the
// last whole line the stream still holds before off (none if there is
// none within anchorScan bytes).
func (s *Stream) CursorAt(off int64) Cursor {
	c := Cursor{PaneID: s.paneID, Generation: s.gen, Offset: off, PanePID: s.pid}
	from := max(off-anchorScan, 0)
	data, _, missed := s.ReadFrom(from, int(off-from))
	dec := NewDecoder(from + missed)
	dec.Decode(data, func(ev Event) {
		if ev.Kind == EventLine && !ev.Cut && ev.Offset <= off {
			c.Anchor = LineHash(ev.Text)
		}
	})
	if c.Anchor == 0 {
		c.PanePID = 0
	}
	return c
}

// ReadFrom reads the held bytes from offset off, as [Ring.ReadFrom] does.
func (s *Stream) ReadFrom(off int64, limit int) (data []byte, next int64, missed int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ring.ReadFrom(off, limit)
}
