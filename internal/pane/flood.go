package pane

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tmcp/tmcp/internal/tmux"
)

// A watched pane that writes far faster than anyone can read costs its
// writer dearly: tmux formats every byte for tmcp's client. So once a
// pane has written floodBytes within floodWindow, and no holder of its
// stream needs every byte (a job's marks, a recording: Stream.Exact),
// the hub holds the pane's output (tmux.Client.HoldOutput) and follows
// the pane through what tmux keeps instead: every floodLook it reads the
// pane's history and writes to the stream the rows completed since the
// last look, found after the last row it wrote (its anchor). Rows that
// scrolled out of the history between two looks never reach the stream,
// so the stream counts a skip as the hold begins and whenever the anchor
// is gone: readers with a cursor are told output was lost; waits go on.
// Once floodCalm looks in a row find nothing new, the hub writes the
// unfinished row (a prompt) and lets the pane's bytes flow again.
const (
	floodBytes  = 8 << 20
	floodWindow = 2 * time.Second
	floodLook   = 40 * time.Millisecond
	floodCalm   = 3
	// lookRows is how many rows above the screen a look reads first, and
	// at least what it reads next: reading the whole history (2,000 rows
	// by default) 25 times a second cost tmux, busy with the flood, more
	// than the rows that came. A look that does not find its anchor among
	// them reads the whole history, unless the last look found it nowhere
	// (the pane outruns its history: what is above is lost all the same).
	lookRows = 200
)

// floodMeter counts a stream's bytes over two half windows.
type floodMeter struct {
	since     time.Time // start of the current half window
	cur, prev int64
}

// add counts n bytes written at now, and reports whether the bytes of
// the last floodWindow (about) reach floodBytes.
func (m *floodMeter) add(n int, now time.Time) bool {
	half := floodWindow / 2
	if age := now.Sub(m.since); age >= half {
		m.prev = m.cur
		if age >= 2*half {
			m.prev = 0
		}
		m.cur, m.since = 0, now
	}
	m.cur += int64(n)
	return m.cur+m.prev >= floodBytes
}

// Exact says that the caller needs every byte the pane writes: while any
// caller does, a flood is not followed through the history, and one that
// is stops being. It returns the release.
func (s *Stream) Exact() (release func()) {
	s.mu.Lock()
	s.exact++
	if s.following {
		select {
		case s.needAll <- struct{}{}:
		default:
		}
	}
	s.mu.Unlock()
	var done bool
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !done {
			done = true
			s.exact--
		}
	}
}

// followEnded lets the meter start again from nothing.
func (s *Stream) followEnded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.following = false
	s.meter = floodMeter{}
	select {
	case <-s.needAll:
	default:
	}
}

// endsMidLine reports whether the stream's last byte is not a newline.
func (s *Stream) endsMidLine() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	end := s.ring.End()
	last, _, _ := s.ring.ReadFrom(max(end-1, 0), 1)
	return len(last) == 1 && last[0] != '\n'
}

// rowFollower is the hub's place in a held pane's history.
type rowFollower struct {
	history int // the pane's history size and cursor row at the last look
	cursorY int
	anchor  uint32 // hash of the last row written to the stream (or seen first)
	partial string // the unfinished row, at the last look
	sig     string // what the last look saw, to tell a calm pane
	wrote   bool
	reach   int  // rows above the screen the next look reads first
	outrun  bool // the last look found its anchor nowhere in the history
}

// followFlood follows a flooding pane's stream through tmux's history
// until the pane calms down, its stream ends, or a holder needs every
// byte, and then lets its bytes flow again.
func (h *Hub) followFlood(s *Stream) {
	defer s.followEnded()
	ctx, cancel := context.WithTimeout(context.Background(), livenessTimeout)
	err := h.tc.HoldOutput(ctx, s.paneID, true)
	cancel()
	if err != nil {
		return
	}
	defer h.letFlow(s)
	s.skip() // rows may scroll out of the history between two looks
	f := &rowFollower{reach: lookRows}
	if _, err := h.look(s, f, true); err != nil {
		return
	}
	tick := time.NewTicker(floodLook)
	defer tick.Stop()
	for calm := 0; calm < floodCalm; {
		select {
		case <-tick.C:
		case <-s.Done():
			return
		case <-s.needAll:
			return
		}
		if changed, err := h.look(s, f, false); err == nil && !changed {
			calm++
		} else {
			calm = 0
		}
	}
	if f.partial != "" {
		s.Write([]byte(f.partial))
	}
}

// letFlow continues a held pane's output, trying until tmux takes it or
// the stream ends: a pane left held would send the stream nothing.
func (h *Hub) letFlow(s *Stream) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), livenessTimeout)
		err := h.tc.HoldOutput(ctx, s.paneID, false)
		cancel()
		if err == nil {
			return
		}
		select {
		case <-s.Done():
			return
		case <-time.After(floodLook):
		}
	}
}

// look reads a held pane's rows and writes to the stream those completed
// after the anchor; the first look only takes its bearings. It reports
// whether anything changed since the last look.
func (h *Hub) look(s *Stream, f *rowFollower, first bool) (changed bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), livenessTimeout)
	defer cancel()
	info, err := h.tc.PaneInfo(ctx, s.paneID)
	if err != nil {
		return false, err
	}
	if info.AlternateOn {
		return false, nil // a full-screen program: no rows to follow
	}
	from := -f.reach
	rows, err := h.tc.CapturePane(ctx, s.paneID, tmux.CaptureOptions{Start: &from})
	if err != nil {
		return false, err
	}
	rows, partial := SplitUnfinished(rows, info.CursorX)
	at := LastRowWith(rows, f.anchor)
	whole := info.HistorySize <= f.reach
	if at < 0 && !first && f.anchor != 0 && !f.outrun && !whole {
		if rows, err = h.tc.CapturePane(ctx, s.paneID, tmux.CaptureOptions{History: true}); err != nil {
			return false, err
		}
		rows, partial = SplitUnfinished(rows, info.CursorX)
		at, whole = LastRowWith(rows, f.anchor), true
	}
	// Outrun until the anchor is found again within the rows read first.
	f.outrun = at < 0 && !first && f.anchor != 0 && (whole || f.outrun)
	fresh := rows[at+1:]
	moved := info.HistorySize != f.history || info.CursorY != f.cursorY
	f.history, f.cursorY = info.HistorySize, info.CursorY
	switch {
	case first:
		fresh = nil
	case at < 0:
		s.skip() // the anchor scrolled out: rows between may have too
	case len(fresh) == 0 && moved && at == len(rows)-1:
		// Rows came, each the same as the last one written (yes): the
		// newest is one of them, and none can be told from the others.
		fresh = rows[at:]
		s.skip()
	}
	var b strings.Builder
	if len(fresh) > 0 && !f.wrote && s.endsMidLine() {
		b.WriteString("\r\n") // ends the line the stream was in as the hold began
	}
	for _, r := range fresh {
		b.WriteString(r)
		b.WriteString("\r\n")
	}
	if len(fresh) > 0 {
		s.Write([]byte(b.String()))
		f.wrote = true
	}
	if len(rows) > 0 && (first || len(fresh) > 0) {
		f.anchor = LineHash(rows[len(rows)-1])
	}
	// Twice what came this time: a steady flood is found in one read.
	f.reach = max(lookRows, 2*len(fresh))
	sig := fmt.Sprint(info.HistorySize, info.CursorX, info.CursorY, len(partial), LineHash(partial))
	changed = len(fresh) > 0 || sig != f.sig
	f.sig, f.partial = sig, partial
	return changed, nil
}
