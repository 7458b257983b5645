package pane

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/tmcp/tmcp/internal/tmux"
)

const (
	// typedMemory is how long text tmcp typed into a pane is remembered, so
	// that its echo is not taken for output. A shell echoes a line when it
	// reads it, which a busy shell or a loaded machine may put off for
	// seconds; a minute covers the longest wait (the ceiling's default).
	typedMemory = time.Minute
	// maxTyped bounds the lines remembered per pane.
	maxTyped = 32
	// minTyped is the shortest typed line worth remembering, in bytes.
	minTyped = 3
	// livenessEvery is how often a held stream's pane is asked whether it
	// still lives, for deaths tmux does not announce (a pane left dead by
	// remain-on-exit). One ask per stream, however many wait on it.
	livenessEvery = time.Second
	// livenessTimeout bounds one such ask: a stalled tmux gets at most one
	// at a time per stream, and its silence closes nothing.
	livenessTimeout = time.Second
)

// Hub keeps one Stream for each pane that something is waiting on or
// reading, fed by the tmux connection's %output, and stops a pane's stream
// once nobody has needed it for its linger time, so panes nobody watches
// run at full speed. While a stream is held, the hub asks tmux once a
// second whether its pane still lives and closes the stream when it does
// not, so its holders need only watch [Stream.Closed]. It also remembers
// what tmcp typed into each pane.
type Hub struct {
	tc     *tmux.Client
	checks checkRuns

	mu         sync.Mutex
	panes      map[string]*watched
	starting   map[string]chan struct{} // panes whose stream is being started
	typedLines map[string][]TypedLine
	typedN     uint64
	typedBytes map[string]int64
	onKeys     []func(paneID string, keys []string, sentAt time.Time)
	first      map[string]firstOutput // what unwatched panes wrote first
	expected   map[string]ShellStart  // shells tmcp started with their integration loaded
	firstSwept time.Time              // when first was last swept of old outputs
	observer   Observer
	closed     bool
}

// watched is one pane's stream and what keeps it alive.
type watched struct {
	stream *Stream
	pid    int // the pane's process when the stream began
	refs   int
	until  time.Time // linger deadline once refs is zero
	timer  *time.Timer
	stop   func()
	unpoll func() // ends the liveness poll; nil while nobody holds the stream
}

// TypedLine is one line of text tmcp typed into a pane.
type TypedLine struct {
	Seq  uint64 // tells two typings of the same text apart
	Text string
	at   time.Time
}

// NewHub returns a Hub that streams panes of tc's server.
func NewHub(tc *tmux.Client) *Hub {
	h := &Hub{tc: tc, panes: map[string]*watched{}, starting: map[string]chan struct{}{}, typedLines: map[string][]TypedLine{}, typedBytes: map[string]int64{},
		first: map[string]firstOutput{}}
	tc.OnLayoutChange(func() { h.checks.request(h.checkPanes) })
	tc.OnUnwatchedOutput(h.noteFirstOutput)
	return h
}

// Acquire returns the stream of a pane, starting it if needed, and a
// release func. After release the stream goes on for linger, so a cursor
// read again soon continues where it stopped.
func (h *Hub) Acquire(ctx context.Context, paneID string, linger time.Duration) (*Stream, func(), error) {
	for {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return nil, nil, fmt.Errorf("streaming pane %s: shutting down", paneID)
		}
		if w := h.panes[paneID]; w != nil {
			if closed, _ := w.stream.Closed(); !closed {
				w.refs++
				if w.refs == 1 {
					h.pollLocked(paneID, w)
				}
				h.mu.Unlock()
				return w.stream, h.releaser(paneID, w, linger), nil
			}
			h.mu.Unlock()
			h.end(paneID, w, "")
			continue
		}
		if starting := h.starting[paneID]; starting != nil {
			// Another call is starting this pane's stream: share it.
			h.mu.Unlock()
			select {
			case <-starting:
				continue
			case <-ctx.Done():
				return nil, nil, fmt.Errorf("streaming pane %s: %w", paneID, ctx.Err())
			}
		}
		done := make(chan struct{})
		h.starting[paneID] = done
		h.mu.Unlock()

		w, err := h.start(ctx, paneID)

		h.mu.Lock()
		delete(h.starting, paneID)
		close(done)
		if err != nil {
			h.mu.Unlock()
			return nil, nil, err
		}
		h.panes[paneID] = w
		h.pollLocked(paneID, w)
		h.mu.Unlock()
		return w.stream, h.releaser(paneID, w, linger), nil
	}
}

// start begins streaming a pane.
func (h *Hub) start(ctx context.Context, paneID string) (*watched, error) {
	info, err := h.tc.PaneInfo(ctx, paneID)
	if err != nil {
		return nil, err
	}
	if info.Dead {
		return nil, fmt.Errorf("pane %s is dead (%s)", paneID, info.Death())
	}
	s := NewStream(paneID, randomGeneration(), DefaultRingSize)
	s.pid = info.PID
	if f, ok := h.takeFirstOutput(paneID); ok {
		s.Seed(f.data, f.at)
	}
	s.onFlood = func() { h.followFlood(s) }
	s.onUnknownNonce = func() { h.lookUpNonce(s) }
	if _, _, nonce, ok := ParseShellMarks(info.ShellMarks); ok {
		s.SetShellNonce(nonce)
	}
	if sh, ok := h.ExpectedShell(paneID); ok && sh.PID == info.PID {
		s.SetShellNonce(sh.Nonce)
	}
	if o := h.observed(); o != nil {
		o.Streaming(s, info)
	}
	stop, err := h.tc.Watch(ctx, paneID, info.SessionID, feed(s))
	if err != nil {
		s.Close("the pane could not be streamed")
		return nil, err
	}
	return &watched{stream: s, pid: info.PID, refs: 1, stop: stop}, nil
}

// feed returns the receiver of a pane's events from tmux, writing them
// into s.
func feed(s *Stream) func(tmux.OutputEvent) {
	return func(ev tmux.OutputEvent) {
		switch {
		case ev.Ended && ev.Lost:
			s.Disconnect("the connection to tmux was lost (" + ev.Reason + "); call again to reconnect")
		case ev.Ended:
			s.Close("the pane's session or server went away")
		case ev.Paused:
			s.Lost(1) // tmux does not say how much; at least one byte
		default:
			s.WriteAged(ev.Data, ev.Age)
		}
	}
}

func (h *Hub) releaser(paneID string, w *watched, linger time.Duration) func() {
	var once sync.Once
	return func() { once.Do(func() { h.release(paneID, w, linger) }) }
}

func (h *Hub) release(paneID string, w *watched, linger time.Duration) {
	h.mu.Lock()
	w.refs--
	if until := time.Now().Add(linger); until.After(w.until) {
		w.until = until
	}
	if w.refs > 0 {
		h.mu.Unlock()
		return
	}
	h.unpollLocked(w)
	if closed, _ := w.stream.Closed(); closed {
		// Nothing more will come: let the stream and its ring go now.
		h.mu.Unlock()
		h.end(paneID, w, "")
		return
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	// The timer holds the pane id and generation, not the stream, so a
	// stream that ends sooner is not kept alive by it.
	gen := w.stream.Generation()
	w.timer = time.AfterFunc(time.Until(w.until), func() { h.expire(paneID, gen) })
	h.mu.Unlock()
}

// expire ends a stream whose linger ran out with nobody holding it.
func (h *Hub) expire(paneID string, gen uint64) {
	h.mu.Lock()
	w := h.panes[paneID]
	if w == nil || w.stream.Generation() != gen || w.refs > 0 || time.Now().Before(w.until) {
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	h.end(paneID, w, "not read for a while: the stream was stopped")
}

// end forgets a pane's stream, stops its tmux watch and closes it (a
// stream already closed keeps its first reason).
func (h *Hub) end(paneID string, w *watched, reason string) {
	h.unwatch(paneID, w)
	w.stream.Close(reason)
}

// abandon stops watching a pane because tmcp shuts down.
func (h *Hub) abandon(paneID string, w *watched, reason string) {
	h.unwatch(paneID, w)
	w.stream.Abandon(reason)
}

// unwatch stops a pane's watch, once its stream is to be closed.
func (h *Hub) unwatch(paneID string, w *watched) {
	h.mu.Lock()
	if h.panes[paneID] == w {
		delete(h.panes, paneID)
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	h.unpollLocked(w)
	h.mu.Unlock()
	w.stop()
}

// Stream returns the live stream of a pane, if there is one.
func (h *Hub) Stream(paneID string) *Stream {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.panes[paneID]; w != nil {
		return w.stream
	}
	return nil
}

// Holders returns how many callers (waits, jobs, readers) hold a pane's
// stream now.
func (h *Hub) Holders(paneID string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.panes[paneID]; w != nil {
		return w.refs
	}
	return 0
}

// Mark is a position in a pane's live stream.
type Mark struct {
	Generation uint64
	Offset     int64
}

// MarksAt returns where every live stream ended at time t, in the recent
// past (see [Stream.EndAt]): taken as a request arrives, it says where
// output written after the request begins.
func (h *Hub) MarksAt(t time.Time) map[string]Mark {
	h.mu.Lock()
	defer h.mu.Unlock()
	marks := make(map[string]Mark, len(h.panes))
	for id, w := range h.panes {
		marks[id] = Mark{Generation: w.stream.Generation(), Offset: w.stream.EndAt(t)}
	}
	return marks
}

// checkSettle is how long a requested check waits for more requests
// before it runs: tmux reports a burst of layout changes as a run of
// notifications that a loaded machine reads over some milliseconds, and
// one listing should answer them all. A dead pane is noticed this much
// later.
const checkSettle = 5 * time.Millisecond

// checkRuns coalesces requests to run a check: a burst of layout changes
// costs at most one check running and one more due after it, not one
// listing of every pane per notification.
type checkRuns struct {
	mu      sync.Mutex
	running bool
	again   bool // requested while running: run once more when done
}

// request runs check on its own goroutine, or, if one is running, has it
// run once more afterwards (so the last change is always checked). It
// never blocks.
func (r *checkRuns) request(check func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running {
		r.again = true
		return
	}
	r.running = true
	go func() {
		for {
			time.Sleep(checkSettle)
			check()
			r.mu.Lock()
			if !r.again {
				r.running = false
				r.mu.Unlock()
				return
			}
			r.again = false
			r.mu.Unlock()
		}
	}()
}

// checkPanes closes the streams of panes that died or went away; it runs
// when tmux reports that the layout changed.
func (h *Hub) checkPanes() {
	h.mu.Lock()
	ids := make([]string, 0, len(h.panes))
	for id := range h.panes {
		ids = append(ids, id)
	}
	typedInto := len(h.typedBytes)
	h.mu.Unlock()
	if len(ids) == 0 && typedInto == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), tmux.DefaultCommandTimeout)
	defer cancel()
	panes, err := h.tc.ListPanes(ctx, "", "")
	if err != nil {
		return
	}
	alive := map[string]tmux.Pane{}
	for _, p := range panes {
		alive[p.ID] = p
	}
	h.tc.ForgetGonePanes(panes)
	// A pane gone takes its count of typed bytes with it.
	h.mu.Lock()
	for id := range h.typedBytes {
		if _, ok := alive[id]; !ok {
			delete(h.typedBytes, id)
		}
	}
	h.mu.Unlock()
	for _, id := range ids {
		h.CheckPane(id, alive[id])
	}
}

// pollLocked starts asking tmux, every livenessEvery, whether the pane of
// a stream that just gained its first holder still lives.
func (h *Hub) pollLocked(paneID string, w *watched) {
	if w.unpoll != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.unpoll = cancel
	go h.poll(ctx, paneID, w)
}

// unpollLocked ends a stream's liveness poll, cutting short an ask in
// flight.
func (h *Hub) unpollLocked(w *watched) {
	if w.unpoll != nil {
		w.unpoll()
		w.unpoll = nil
	}
}

// poll asks tmux about a pane until ctx ends or the stream is closed. One
// ask at a time: the next is due livenessEvery after the last returned.
func (h *Hub) poll(ctx context.Context, paneID string, w *watched) {
	t := time.NewTimer(livenessEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		askCtx, cancel := context.WithTimeout(ctx, livenessTimeout)
		p, err := h.tc.PaneInfo(askCtx, paneID)
		expired := askCtx.Err() != nil
		cancel()
		switch {
		case expired:
			// A slow tmux (or a release) closes nothing.
		case err != nil:
			h.check(paneID, w, tmux.Pane{})
		default:
			h.check(paneID, w, p)
		}
		if closed, _ := w.stream.Closed(); closed {
			return
		}
		t.Reset(livenessEvery)
	}
}

// CheckPane closes a pane's stream if p (its state, or the zero Pane when
// it is gone) shows it dead, gone or respawned.
func (h *Hub) CheckPane(id string, p tmux.Pane) {
	h.mu.Lock()
	w := h.panes[id]
	h.mu.Unlock()
	if w == nil {
		return
	}
	h.check(id, w, p)
}

// check ends w, a stream of pane id, if p shows the pane dead, gone or
// respawned.
func (h *Hub) check(id string, w *watched, p tmux.Pane) {
	switch {
	case p.ID == "":
		h.end(id, w, "the pane was closed")
	case p.Dead:
		h.end(id, w, "the pane's process ended: "+p.Death())
	case p.PID != w.pid:
		h.end(id, w, "the pane was respawned")
	default:
		if o := h.observed(); o != nil {
			o.Seen(p)
		}
	}
}

// Refresh asks tmux for a pane's state and closes its stream if the pane
// died, went away or was respawned. A pane tmux could not report on is
// taken for gone only if ctx had not expired: a slow tmux closes nothing.
func (h *Hub) Refresh(ctx context.Context, paneID string) (tmux.Pane, error) {
	p, err := h.tc.PaneInfo(ctx, paneID)
	if err != nil {
		if ctx.Err() == nil {
			h.CheckPane(paneID, tmux.Pane{})
		}
		return tmux.Pane{}, err
	}
	h.CheckPane(paneID, p)
	return p, nil
}

// RecentlyTyped returns the lines typed into a pane in the last minute,
// oldest first.
func (h *Hub) RecentlyTyped(paneID string) []TypedLine {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []TypedLine
	cutoff := time.Now().Add(-typedMemory)
	for _, l := range h.typedLines[paneID] {
		if l.at.After(cutoff) {
			out = append(out, l)
		}
	}
	return out
}

// Close stops every stream.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	panes := h.panes
	h.panes = map[string]*watched{}
	h.mu.Unlock()
	for id, w := range panes {
		h.abandon(id, w, "tmcp is shutting down")
	}
}

func randomGeneration() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// nonceLookupGap is the least time between two lookups for one stream: a
// program that prints marks with made-up nonces costs tmux little.
const nonceLookupGap = 250 * time.Millisecond

// lookUpNonce reads the nonce of a pane's shell from the pane's option
// and gives it to the stream, until the stream holds no mark it does not
// know, or the lookups run out.
func (h *Hub) lookUpNonce(s *Stream) {
	defer func() {
		time.Sleep(nonceLookupGap)
		s.lookedUp()
	}()
	// The delays before each look: the shell that wrote the mark sets the
	// option in the background as it starts, and its first prompt may
	// come first.
	for _, d := range [...]time.Duration{0, 50 * time.Millisecond, 250 * time.Millisecond, time.Second} {
		select {
		case <-time.After(d):
		case <-s.Done():
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), nonceLookupWait)
		out, err := h.tc.Expand(ctx, s.PaneID(), "#{"+tmux.ShellMarksOption+"}")
		cancel()
		if err == nil && len(out) > 0 {
			if _, _, nonce, ok := ParseShellMarks(out[0]); ok {
				s.SetShellNonce(nonce)
			}
		}
		if !s.holdsUnknownMarks() {
			return
		}
	}
}

// nonceLookupWait bounds one look at a pane's marks option.
const nonceLookupWait = 2 * time.Second
