package wait

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

// maxChunk bounds the output judged at once; stop patterns win over
// success patterns within one piece.
const maxChunk = 64 << 10

// MaxMatchedBytes bounds the line reported as matched: a longer line is
// reported by its bytes up to the end of the match, and comes whole in
// the output tail.
const MaxMatchedBytes = 512

// Outcomes of a wait for text.
const (
	OutcomeMatched  = "matched"
	OutcomeStopped  = "stopped"
	OutcomeOutput   = "output"
	OutcomeIdle     = "idle"
	OutcomeTimeout  = "timeout"
	OutcomePaneDied = "pane_died"
	OutcomeLost     = "output_lost"
	// OutcomeDisconnected: the connection to the pane's tmux broke (a
	// remote host's ssh went away); the pane may live on out of reach.
	OutcomeDisconnected = "connection_lost"
	OutcomeCancelled    = "cancelled"
)

// closedOutcome is the outcome of a wait whose stream was closed under it.
func closedOutcome(stream *pane.Stream) string {
	switch {
	case stream.Disconnected():
		return OutcomeDisconnected
	case stream.Abandoned():
		return OutcomeCancelled // tmcp shuts down; the pane lives on
	}
	return OutcomePaneDied
}

// Arrival is what was seen of the panes when a request arrived, before its
// arguments were even checked: where each live stream ended, and the screen
// of a pane about to be waited on that has no stream yet. A wait counts
// from then, not from when its handler got to run.
type Arrival struct {
	Read    time.Time // when the call was read
	At      time.Time // output that reached tmcp from then on is new
	Marks   map[string]pane.Mark
	Screens map[string][]string
}

type arrivalKey struct{}

// WithArrival records a request's Arrival in its context.
func WithArrival(ctx context.Context, a Arrival) context.Context {
	return context.WithValue(ctx, arrivalKey{}, a)
}

func arrival(ctx context.Context) Arrival {
	a, _ := ctx.Value(arrivalKey{}).(Arrival)
	return a
}

// ArrivalScreen reads, as a wait_for_text request arrives, the screen of
// the pane it names when that pane has no live stream (nil otherwise).
func (s *Service) ArrivalScreen(ctx context.Context, paneID string) []string {
	if st := s.hub.Stream(paneID); st != nil {
		return nil
	}
	rows, err := s.readRows(ctx, paneID)
	if err != nil {
		return nil
	}
	return rows
}

// rowsBack is how many lines of history the reads that bracket the start
// of a wait on a pane with no stream take with the screen: a line the pane
// wrote after the call and pushed into the history before the stream was
// attached (a busy pane, a session tmcp was slow to carry) is found by
// comparing the two; past this many lines scrolled, the second read is
// taken again over the whole history.
const rowsBack = 500

// readRows reads a pane's screen and the last rowsBack lines before it,
// for newRows to compare.
func (s *Service) readRows(ctx context.Context, paneID string) ([]string, error) {
	start := -rowsBack
	return s.tc.CapturePane(ctx, paneID, tmux.CaptureOptions{Start: &start})
}

// TextRequest is a wait for text in a pane's output.
type TextRequest struct {
	PaneID    string
	Patterns  []string // none: any new output ends the wait (unless Idle)
	Stop      []string // checked first; a match ends the wait as a failure
	Regex     bool
	MatchCase bool
	Idle      time.Duration // end once the pane has been quiet this long
	Timeout   Timeout
	Cursor    string // resume after this cursor instead of from now
	MaxLines  int
	MaxBytes  int
	Progress  func(elapsed time.Duration)
	// Watching, if set, is called once the pane's stream is watched: the
	// moment the wait begins.
	Watching func(paneID string)
	// StopOnly: with no Patterns, output ends nothing; only a stop pattern
	// or the pane's end does (a wait that watches a pane beside another).
	StopOnly bool
}

// TextResult says why a wait ended and what the pane wrote meanwhile.
type TextResult struct {
	Outcome         string
	Matched         string // the line that matched or stopped the wait, to MaxMatchedBytes
	Pattern         string // the pattern that matched it
	Lines           []string
	Truncation      pane.Truncation
	Screen          []string // the visible screen, when no pattern matched
	Cursor          string   // resume here with the next wait or read
	Elapsed         time.Duration
	AlreadyOnScreen bool   // a pattern matched text already shown before the wait
	AlternateScreen bool   // a full-screen program owns the pane
	Reason          string // for pane_died, output_lost and a reset cursor
	CursorReset     bool   // the given cursor could not be continued
}

// textWait is the state of one wait while it runs.
type textWait struct {
	req     TextRequest
	m       *Matcher
	dec     *pane.Decoder
	tail    *pane.TailBuffer
	echo    *echoes
	partial string
	res     TextResult
	endAt   int64 // stream offset just after the deciding line, once decided
	// unfinished is the deciding line when it had no newline yet: it ends
	// the output tail.
	unfinished string
	// skipsAtStart is the stream's skips as the wait began: more by its
	// end, and a flood was followed through the history meanwhile.
	skipsAtStart int64
	// pausedAtCall: the pane, not streamed, had written just before the
	// call and had its output paused for it (tmux.Client.PausedAt).
	pausedAtCall bool
}

// WaitForText waits until the pane writes a line matching a pattern (or
// a stop pattern, or anything, or goes quiet), the pane dies, or the
// timeout passes. The stream is attached before the screen is read, and
// rows that appeared while it was being attached count as new output.
func (s *Service) WaitForText(ctx context.Context, req TextRequest) (TextResult, error) {
	ctx, cancel := bounded(ctx, req.Timeout)
	defer cancel()
	start := begun(ctx, req.Timeout)
	// Every tmux call until the wait ends takes wctx; only the final read
	// may use the grace left after it.
	wctx, cancelWait := waiting(ctx)
	defer cancelWait()
	// tmux not answering before the wait could begin ends it as a timeout
	// that says so, not as an error.
	unansweredEnd := func(err error) (TextResult, error) {
		if unanswered(wctx, err) {
			return TextResult{Outcome: OutcomeTimeout, Reason: noAnswerReason, Elapsed: time.Since(start)}, nil
		}
		if errors.Is(err, tmux.ErrConnectionLost) {
			return TextResult{Outcome: OutcomeDisconnected, Reason: err.Error() + "; call again to reconnect", Elapsed: time.Since(start)}, nil
		}
		return TextResult{}, err
	}
	m, err := NewMatcher(req.Patterns, req.Stop, req.Regex, req.MatchCase)
	if err != nil {
		return TextResult{}, err
	}
	var cur *pane.Cursor
	if req.Cursor != "" {
		c, err := pane.ParseCursor(req.Cursor)
		if err != nil {
			return TextResult{}, fmt.Errorf("cursor: %w", err)
		}
		if c.PaneID != req.PaneID {
			return TextResult{}, fmt.Errorf("cursor belongs to pane %s, not %s", c.PaneID, req.PaneID)
		}
		cur = &c
	}
	// Where the call begins in the pane's output. With the pane already
	// streamed, that is the stream's end at this instant, exact and free.
	// Otherwise the screen is read first of all: what it shows came before
	// the call, and anything later is caught by the screen read after the
	// stream is attached, or by the stream.
	var early *pane.Stream
	var earlyOff int64
	if st := s.hub.Stream(req.PaneID); cur == nil && st != nil {
		if closed, _ := st.Closed(); !closed {
			early, earlyOff = st, st.End()
			if m, ok := arrival(ctx).Marks[req.PaneID]; ok && m.Generation == st.Generation() {
				earlyOff = m.Offset
			}
		}
	}
	var before []string
	if cur == nil && early == nil {
		var ok bool
		if before, ok = arrival(ctx).Screens[req.PaneID]; !ok {
			if before, err = s.readRows(wctx, req.PaneID); err != nil {
				return unansweredEnd(err)
			}
		}
	}
	info, err := s.tc.PaneInfo(wctx, req.PaneID)
	if err != nil {
		return unansweredEnd(err)
	}
	if info.Dead {
		return TextResult{}, fmt.Errorf("pane %s is dead (%s): nothing more will be written", req.PaneID, info.Death())
	}
	// A stream that began with another process (the pane was respawned)
	// ends here, so a cursor into it is reset rather than read on.
	s.hub.CheckPane(req.PaneID, info)
	// Asked before the stream continues the pane's output.
	since := arrival(ctx).At
	if since.IsZero() {
		since = start
	}
	pausedAtCall := cur == nil && early == nil && s.tc.PausedAt(req.PaneID, since)
	stream, release, err := s.hub.Acquire(wctx, req.PaneID, streamLinger)
	if err != nil {
		return unansweredEnd(err)
	}
	defer release()
	f := newFeed()
	from, untap := stream.Tap(f.write)
	defer untap()
	if req.Watching != nil {
		req.Watching(req.PaneID)
	}

	w := &textWait{req: req, m: m, tail: pane.NewTailBuffer(req.MaxLines, req.MaxBytes),
		echo: newEchoes(func() []pane.TypedLine { return s.hub.RecentlyTyped(req.PaneID) }), pausedAtCall: pausedAtCall}
	// The decoder starts on the screen the pane showed, so that a
	// full-screen program's leaving it is seen.
	decoder := pane.NewDecoder
	if info.AlternateOn {
		decoder = pane.NewDecoderOnAltScreen
	}
	lostAtStart := stream.LostBytes()
	w.skipsAtStart = stream.Skips()

	switch {
	case early == stream:
		data, _, missed := stream.ReadFrom(earlyOff, int(from-earlyOff))
		w.dec = decoder(earlyOff + missed)
		w.dec.ResumeAfter(stream.Before(w.dec.Offset()))
		if w.feed(data) {
			return s.finish(ctx, w, stream, start), nil
		}
	case cur != nil && cur.Generation == stream.Generation() && cur.Offset > from:
		return TextResult{}, fmt.Errorf("cursor: offset %d is past the end (%d) of pane %s's output: it was not made by this stream", cur.Offset, from, req.PaneID)
	case cur != nil && cur.Generation == stream.Generation():
		// Resume: what the ring holds between the cursor and the tap.
		data, _, missed := stream.ReadFrom(cur.Offset, int(from-cur.Offset))
		w.dec = decoder(cur.Offset + missed)
		w.dec.ResumeAfter(stream.Before(w.dec.Offset()))
		if missed > 0 {
			w.res.Reason = fmt.Sprintf("%d bytes after the cursor were no longer held", missed)
		}
		if w.feed(data) {
			return s.finish(ctx, w, stream, start), nil
		}
	default:
		if cur != nil || early != nil {
			if cur != nil {
				w.res.CursorReset = true
				w.res.Reason = "the cursor's stream ended (tmcp restarted, the pane was respawned, or it was not read for a while): waiting from now"
			}
			if before, err = s.readRows(wctx, req.PaneID); err != nil {
				return unansweredEnd(err)
			}
		}
		w.dec = decoder(from)
		w.dec.ResumeAfter(stream.Before(w.dec.Offset()))
		// A pane tmcp carried but nobody watched is muted at its first
		// output, which its stream begins with (Stream.Seed): when that
		// came after the call, it is output, whatever the screen read at
		// arrival shows.
		if cur == nil {
			if end, at := stream.Seeded(); end > 0 && !at.Before(since) && w.seed(stream, end, decoder) {
				return s.finish(ctx, w, stream, start), nil
			}
		}
		after, err := s.readRows(wctx, req.PaneID)
		if err != nil {
			return unansweredEnd(err)
		}
		rows, ok := alignRows(before, after)
		if !ok {
			// Cleared, or more went by than a read of rowsBack holds: the
			// rows since the first read lie deeper in the history.
			all, err := s.tc.CapturePane(wctx, req.PaneID, tmux.CaptureOptions{History: true})
			if err != nil {
				return unansweredEnd(err)
			}
			rows = rowsSince(before, all)
		}
		if w.rows(rows) {
			return s.finish(ctx, w, stream, start), nil
		}
	}

	timeout := time.NewTimer(time.Until(stopAt(wctx)))
	defer timeout.Stop()
	var idle <-chan time.Time
	var idleTimer *time.Timer
	if req.Idle > 0 {
		idleTimer = time.NewTimer(req.Idle)
		defer idleTimer.Stop()
		idle = idleTimer.C
	}
	defer progress(req.Progress, start)()
	if s.waiting != nil {
		s.waiting(req.PaneID)
	}
	for {
		// Checked before more output is taken: a pane that writes faster
		// than it is read must not hold the wait past its bound.
		select {
		case <-timeout.C:
			w.res.Outcome = OutcomeTimeout
			return s.finish(ctx, w, stream, start), nil
		case <-ctx.Done():
			w.res.Outcome = OutcomeTimeout
			if cancelled(ctx) {
				w.res.Outcome = OutcomeCancelled
			}
			return s.finish(ctx, w, stream, start), nil
		default:
		}
		changed := stream.Changed()
		if data := f.take(); len(data) > 0 {
			if idleTimer != nil {
				idleTimer.Reset(req.Idle)
			}
			if w.feed(data) {
				return s.finish(ctx, w, stream, start), nil
			}
			continue
		}
		if closed, reason := stream.Closed(); closed {
			w.res.Outcome, w.res.Reason = closedOutcome(stream), reason
			return s.finish(ctx, w, stream, start), nil
		}
		if lost := stream.LostBytes() - lostAtStart; lost > 0 {
			w.res.Outcome, w.res.Reason = OutcomeLost, "tmux paused the pane's output for tmcp, which fell behind: some output was dropped"
			return s.finish(ctx, w, stream, start), nil
		}
		select {
		case <-f.ready:
		case <-changed:
		case <-idle:
			w.res.Outcome = OutcomeIdle
			return s.finish(ctx, w, stream, start), nil
		case <-timeout.C:
			w.res.Outcome = OutcomeTimeout
			return s.finish(ctx, w, stream, start), nil
		case <-ctx.Done():
			w.res.Outcome = OutcomeTimeout
			if cancelled(ctx) {
				w.res.Outcome = OutcomeCancelled
			}
			return s.finish(ctx, w, stream, start), nil
		}
	}
}

// feed judges output in pieces of at most maxChunk bytes, so that a flood
// that piled up costs bounded memory, and reports whether the wait is over.
// The decoder holds a line across pieces: their bounds never split one.
func (w *textWait) feed(data []byte) bool {
	for len(data) > 0 {
		n := min(len(data), maxChunk)
		if w.chunk(data[:n]) {
			return true
		}
		data = data[n:]
	}
	return false
}

// seed judges the output a stream began with, up to end (Stream.Seed):
// output the pane wrote before the stream began, read here with its own
// decoder.
func (w *textWait) seed(stream *pane.Stream, end int64, decoder func(int64) *pane.Decoder) bool {
	data, _, missed := stream.ReadFrom(0, int(end))
	main := w.dec
	w.dec = decoder(missed)
	if w.feed(data) {
		return true
	}
	w.dec, w.partial = main, ""
	return false
}

// chunk decodes a piece of output and reports whether the wait is over.
// Stop patterns are checked over the whole piece before success patterns.
func (w *textWait) chunk(data []byte) bool {
	var lines []string
	var ends []int64
	w.echo.refresh()
	w.dec.Decode(data, func(ev pane.Event) {
		if ev.Kind != pane.EventLine {
			return
		}
		w.tail.AddPiece(ev.Text, ev.Cut)
		// A line drawn on the alternate screen is a full-screen program's.
		if !w.dec.AltScreen() && !w.echo.isEcho(ev.Text) {
			lines = append(lines, ev.Text)
			ends = append(ends, ev.Offset)
		}
	})
	unfinished := -1
	if p := w.dec.Partial(); p != w.partial {
		w.partial = p
		if p != "" && !w.dec.AltScreen() && !w.echo.isPartialEcho(p) {
			unfinished = len(lines)
			lines = append(lines, p)
			ends = append(ends, w.dec.Offset())
		}
	}
	i := w.judge(lines, ends)
	if i >= 0 && i == unfinished {
		w.unfinished = lines[i]
	}
	return i >= 0
}

// rows judges screen rows that appeared while the stream was attached.
// On the alternate screen they are a full-screen program's repainting,
// not output: the wait reports the alternate screen instead.
func (w *textWait) rows(rows []string) bool {
	if w.dec.AltScreen() {
		return false
	}
	w.echo.refresh()
	var lines []string
	for i, r := range rows {
		w.tail.Add(r)
		// Only the last row can be a line still being echoed.
		if !w.echo.isEcho(r) && (i < len(rows)-1 || !w.echo.isPartialEcho(r)) {
			lines = append(lines, r)
		}
	}
	ends := make([]int64, len(lines))
	for i := range ends {
		ends[i] = w.dec.Offset()
	}
	return w.judge(lines, ends) >= 0
}

// judge decides on new lines, whose stream offsets end at ends, and
// returns the index of the deciding line, or -1.
func (w *textWait) judge(lines []string, ends []int64) int {
	for i, l := range lines {
		if k, ok := w.m.Stop(l); ok {
			w.res.Outcome, w.res.Matched, w.res.Pattern = OutcomeStopped, excerpt(l, w.m.stops[k]), w.req.Stop[k]
			w.endAt = ends[i]
			return i
		}
	}
	for i, l := range lines {
		if !w.m.HasPatterns() {
			if w.req.Idle > 0 || w.req.StopOnly {
				return -1
			}
			w.res.Outcome, w.res.Matched = OutcomeOutput, excerpt(l, nil)
			w.endAt = ends[i]
			return i
		}
		if k, ok := w.m.Match(l); ok {
			w.res.Outcome, w.res.Matched, w.res.Pattern = OutcomeMatched, excerpt(l, w.m.patterns[k]), w.req.Patterns[k]
			w.endAt = ends[i]
			return i
		}
	}
	return -1
}

// pausedAtCallReason says why a wait on a pane that had its output
// paused at the call may have taken a line for old: tmcp pauses a pane
// nobody watches at its output, and knows only the screen of what it
// wrote until it continues it.
const pausedAtCallReason = "the pane was writing just before the call, when tmcp had its output paused (as for any pane nobody waits on), " +
	"so a line it wrote around the call may have been taken for one already on screen; from the cursor given here nothing is missed"

// excerpt bounds a deciding line to MaxMatchedBytes ending where re first
// matches it (the line's end for no re), or its start when that is sooner.
func excerpt(line string, re *regexp.Regexp) string {
	if len(line) <= MaxMatchedBytes {
		return line
	}
	end := len(line)
	if re != nil {
		if loc := re.FindStringIndex(line); loc != nil {
			end = max(loc[1], MaxMatchedBytes)
		}
	}
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end++
	}
	start := end - MaxMatchedBytes
	for start < end && !utf8.RuneStart(line[start]) {
		start++
	}
	return line[start:end]
}

// finish completes the result: tail, cursor, screen on a miss.
func (s *Service) finish(ctx context.Context, w *textWait, stream *pane.Stream, start time.Time) TextResult {
	r := w.res
	if stream.Skips() > w.skipsAtStart && r.Reason == "" {
		r.Reason = "the pane flooded: tmcp followed it through tmux's history, so lines that scrolled past between two looks were not seen"
	}
	if w.pausedAtCall && r.Reason == "" && r.Outcome != OutcomeMatched && r.Outcome != OutcomeStopped {
		r.Reason = pausedAtCallReason
	}
	if w.unfinished != "" {
		w.tail.Add(w.unfinished)
	}
	r.Lines, r.Truncation = w.tail.Bounded(w.req.MaxLines, w.req.MaxBytes)
	r.AlternateScreen = w.dec.AltScreen()
	off := w.dec.Offset()
	if w.endAt > 0 {
		off = w.endAt
	}
	r.Cursor = stream.CursorAt(off).String()
	// The call's own context: what is left of its budget past the wait. A
	// wait that noticed its end too late (a flood kept it busy) has none.
	if r.Outcome != OutcomeMatched && r.Outcome != OutcomeCancelled && ctx.Err() == nil {
		if screen, err := s.tc.CapturePane(ctx, w.req.PaneID, tmux.CaptureOptions{}); err == nil {
			// What matches on screen now did not match as new output: it
			// was there before the wait (or is the echo of typed keys).
			for _, row := range screen {
				if _, ok := w.m.Match(row); ok {
					r.AlreadyOnScreen = true
				}
			}
			r.Screen, _ = pane.Tail(pane.TrimBlank(screen), w.req.MaxLines, w.req.MaxBytes)
		} else if unanswered(ctx, err) {
			r.Reason = noAnswerReason + ": the screen could not be read"
		} else if !errors.Is(err, context.Canceled) && r.Outcome != OutcomePaneDied {
			r.Reason = "reading the screen: " + err.Error()
		}
	}
	r.Elapsed = time.Since(start)
	return r
}
