package wait

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/shellinit"
)

// Outcomes of a wait for a command, beside timeout, pane_died, output_lost
// and cancelled.
const (
	OutcomeEnded   = "ended"
	OutcomeNoMarks = "no_marks"
)

// noMarksReason tells the person how to make a pane's shell emit marks.
const noMarksReason = "no shell integration marks (OSC 133) seen in this pane: its shell does not emit them. Add " + shellinit.HowToLoad + ", then start a new shell"

// CommandRequest is a wait for a command in a pane's shell to end.
type CommandRequest struct {
	PaneID   string
	Timeout  Timeout
	Cursor   string // count commands that end after this cursor, not after the call
	MaxLines int    // bound the output returned; 0: as much as a job keeps
	MaxBytes int
	Progress func(elapsed time.Duration)
	// Watching, if set, is called once the pane's stream is watched: the
	// moment the wait begins.
	Watching func(paneID string)
}

// CommandResult is how a command ended, as its shell's marks told.
type CommandResult struct {
	Outcome    string
	ExitStatus *int          // from D;STATUS; nil if the shell gave none
	Duration   time.Duration // from C to the end; 0 when its C was not seen
	Running    bool          // a command was still running when the wait ended
	Lines      []string      // the command's output, between C and D (if Partial, what was seen of it)
	Truncation pane.Truncation
	TotalLines int
	TotalBytes int
	Partial    bool   // the output began before tmcp saw it: Lines lack its start
	Cwd        string // where the command ran: the directory (OSC 7) of the prompt it was typed at, if seen
	Cursor     string // resume here with the next wait or read
	Elapsed    time.Duration
	Reason     string
}

// commandWait is the state of one wait for a command while it runs.
type commandWait struct {
	req      CommandRequest
	dec      *pane.Decoder
	tr       *pane.PromptTracker
	tail     *pane.TailBuffer
	running  bool  // output is being collected: the command's C was seen (or it ran when the wait began)
	ended    bool  // the command ended; the rest of the chunk only may add its late D's status
	passed   bool  // a mark of the next prompt or command came after the end
	endAt    int64 // stream offset just past the last mark of its end
	sawMarks bool
	res      CommandResult
	ends     *reportedEnds // where the ends this wait reports are noted
	// shellsMark parses an OSC as a mark of the pane's shell, believed
	// only with the shell's nonce (see pane.Stream.ShellMark).
	shellsMark func(payload string) (pane.ShellMark, bool)
}

// reportedEnds notes, for each pane, where in its stream the last command
// a wait reported ended, and when the wait said so.
type reportedEnds struct {
	mu     sync.Mutex
	byPane map[string]reportedEnd
}

type reportedEnd struct {
	generation uint64
	offset     int64
	at         time.Time
}

// reportedEndKept bounds how long a reported end is kept: it matters only
// to a wait whose call came within the arrival slack of that report, and
// panes come and go.
const reportedEndKept = time.Minute

// note records that a wait reported a command of a pane's stream ending
// at offset.
func (e *reportedEnds) note(paneID string, generation uint64, offset int64) {
	e.noteAt(paneID, generation, offset, time.Now())
}

func (e *reportedEnds) noteAt(paneID string, generation uint64, offset int64, now time.Time) {
	if e == nil { // a wait made by a test of the reader alone
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.byPane == nil {
		e.byPane = map[string]reportedEnd{}
	}
	for id, r := range e.byPane {
		if now.Sub(r.at) > reportedEndKept {
			delete(e.byPane, id)
		}
	}
	if old, ok := e.byPane[paneID]; ok && old.generation == generation && old.offset > offset {
		return
	}
	e.byPane[paneID] = reportedEnd{generation: generation, offset: offset, at: now}
}

// before returns where the last command reported of a pane's stream
// ended, when a wait reported it before t.
func (e *reportedEnds) before(paneID string, generation uint64, t time.Time) (int64, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.byPane[paneID]
	if !ok || r.generation != generation || !r.at.Before(t) {
		return 0, false
	}
	return r.offset, true
}

// WaitForCommand waits until the command running in a pane's shell ends,
// or, at its prompt, until the next command starts and ends, as the
// shell's OSC 133 marks tell: its exit status from D, its duration from C
// to D, and its output, which is exactly what lies between C and D. A
// command already running when the wait began is reported whole if its C
// is still held in the stream, and marked Partial if not.
func (s *Service) WaitForCommand(ctx context.Context, req CommandRequest) (CommandResult, error) {
	start := time.Now()
	if req.MaxLines <= 0 {
		req.MaxLines = jobTailLines
	}
	if req.MaxBytes <= 0 {
		req.MaxBytes = jobTailBytes
	}
	ctx, cancel := bounded(ctx, req.Timeout)
	defer cancel()
	wctx, cancelWait := waiting(ctx)
	defer cancelWait()
	var cur *pane.Cursor
	if req.Cursor != "" {
		c, err := pane.ParseCursor(req.Cursor)
		if err != nil {
			return CommandResult{}, fmt.Errorf("cursor: %w", err)
		}
		if c.PaneID != req.PaneID {
			return CommandResult{}, fmt.Errorf("cursor belongs to pane %s, not %s", c.PaneID, req.PaneID)
		}
		cur = &c
	}
	unansweredEnd := func(err error) (CommandResult, error) {
		if unanswered(wctx, err) {
			return CommandResult{Outcome: OutcomeTimeout, Reason: noAnswerReason, Elapsed: time.Since(start)}, nil
		}
		return CommandResult{}, err
	}
	// Where the call begins in the pane's output: with the pane already
	// streamed, where the stream ended as the request arrived.
	begin := int64(-1)
	if st := s.hub.Stream(req.PaneID); cur == nil && st != nil {
		if closed, _ := st.Closed(); !closed {
			begin = st.End()
			if m, ok := arrival(ctx).Marks[req.PaneID]; ok && m.Generation == st.Generation() {
				begin = m.Offset
			}
		}
	}
	info, err := s.tc.PaneInfo(wctx, req.PaneID)
	if err != nil {
		return unansweredEnd(err)
	}
	if info.Dead {
		return CommandResult{}, fmt.Errorf("pane %s is dead (%s): no command will end in it", req.PaneID, info.Death())
	}
	s.hub.CheckPane(req.PaneID, info)
	stream, release, err := s.hub.Acquire(wctx, req.PaneID, streamLinger)
	if err != nil {
		return unansweredEnd(err)
	}
	defer release()
	// The marks seen up to here; the ring and the tap give what follows.
	known := stream.Prompt()
	// Its marks are in the bytes: a flood is not to be followed through the history.
	defer stream.Exact()()
	f := newFeed()
	from, untap := stream.Tap(f.write)
	defer untap()
	if req.Watching != nil {
		req.Watching(req.PaneID)
	}
	lostAtStart := stream.LostBytes()

	w := &commandWait{req: req, tail: pane.NewTailBuffer(req.MaxLines, req.MaxBytes), sawMarks: known.Marks, ends: s.ends, shellsMark: stream.ShellMark}
	switch {
	case cur != nil && cur.Generation == stream.Generation() && cur.Offset > from:
		return CommandResult{}, fmt.Errorf("cursor: offset %d is past the end (%d) of pane %s's output: it was not made by this stream", cur.Offset, from, req.PaneID)
	case cur != nil && cur.Generation == stream.Generation():
		begin = cur.Offset
	case cur != nil:
		w.res.Reason = "the cursor's stream ended (tmcp restarted, the pane was respawned, or it was not read for a while): waiting from now"
		begin = -1
	}
	if cur == nil {
		// A command a wait has already reported, when that reply came
		// before this call was read, is not this call's, though the
		// arrival slack puts its end after the call's beginning.
		since := arrival(ctx).Read
		if since.IsZero() {
			since = start
		}
		if end, ok := s.ends.before(req.PaneID, stream.Generation(), since); ok && begin >= 0 && begin < end {
			begin = end
		}
	}
	if begin < 0 || begin > known.Offset {
		begin = known.Offset
	}
	// A command that ran across begin is the one to report, from its C.
	w.tr = pane.NewPromptTracker(begin)
	if known.OutputStart >= 0 && known.OutputStart <= begin && (known.Running || known.CommandEnd > begin) {
		w.tr = pane.NewPromptTracker(known.OutputStart)
		w.tr.Mark(pane.ShellMark{Kind: 'C'}, known.OutputStart, known.Started)
		w.running = true
		begin = known.OutputStart
	} else if known.CommandEnd >= 0 && known.CommandEnd <= begin && !known.Running {
		// The last command ended before the wait: a second emitter's D
		// for it, coming late, ends no command.
		w.tr.Mark(pane.ShellMark{Kind: 'D', Status: known.Status, HasStatus: known.HasStatus}, begin, known.Ended)
	}
	w.tr.Mark(pane.ShellMark{Kind: '7', Host: known.Host, Dir: known.Cwd}, begin, start)
	w.dec = pane.NewDecoder(begin)
	data, _, missed := stream.ReadFrom(begin, int(from-begin))
	if missed > 0 {
		w.dec = pane.NewDecoder(begin + missed)
		w.res.Partial = w.running
	}
	w.dec.ResumeAfter(stream.Before(w.dec.Offset()))
	if !w.sawMarks && atUnmarkedPrompt(stream, from, info.Command) {
		w.res.Outcome, w.res.Reason = OutcomeNoMarks, noMarksReason
		return w.finish(stream, start), nil
	}
	if w.consume(data) {
		return w.finish(stream, start), nil
	}

	timeout := time.NewTimer(time.Until(stopAt(wctx)))
	defer timeout.Stop()
	defer progress(req.Progress, start)()
	for {
		select {
		case <-timeout.C:
			return w.timedOut(stream, start, info.Command), nil
		case <-ctx.Done():
			return w.stopped(ctx, stream, start, info.Command), nil
		default:
		}
		changed := stream.Changed()
		if data := f.take(); len(data) > 0 {
			for len(data) > 0 {
				n := min(len(data), maxChunk)
				if w.consume(data[:n]) {
					return w.finish(stream, start), nil
				}
				data = data[n:]
			}
			continue
		}
		if closed, reason := stream.Closed(); closed {
			w.res.Outcome, w.res.Reason = closedOutcome(stream), reason
			return w.finish(stream, start), nil
		}
		if stream.LostBytes() > lostAtStart {
			w.res.Outcome, w.res.Reason = OutcomeLost, "tmux paused the pane's output for tmcp, which fell behind: some output, and perhaps the command's end, was dropped"
			return w.finish(stream, start), nil
		}
		select {
		case <-f.ready:
		case <-changed:
		case <-timeout.C:
			return w.timedOut(stream, start, info.Command), nil
		case <-ctx.Done():
			return w.stopped(ctx, stream, start, info.Command), nil
		}
	}
}

// stopped answers a wait whose context ended: cancelled when the caller
// left, timed out when its budget ran out, however late that was noticed.
func (w *commandWait) stopped(ctx context.Context, stream *pane.Stream, start time.Time, command string) CommandResult {
	if !cancelled(ctx) {
		return w.timedOut(stream, start, command)
	}
	w.res.Outcome = OutcomeCancelled
	return w.finish(stream, start)
}

// atUnmarkedPrompt reports whether a pane whose stream holds no mark
// shows a shell at a prompt drawn without one: the shell is in front, and
// since tmcp began watching it wrote a line and then a line it has not
// ended (its prompt). A shell that emits marks would have marked that
// prompt with A, so waiting for its marks would be waiting in vain.
func atUnmarkedPrompt(stream *pane.Stream, end int64, command string) bool {
	if !isShell(command) && path.Base(strings.TrimPrefix(command, "-")) != "fish" {
		return false
	}
	held, _, _ := stream.ReadFrom(0, int(end-stream.Start()))
	if bytes.IndexByte(held, '\n') < 0 || bytes.Contains(held, []byte("\x1b]133;")) {
		return false
	}
	d := pane.NewDecoder(0)
	d.Decode(held[bytes.LastIndexByte(held, '\n')+1:], nil)
	return strings.TrimSpace(d.Partial()) != ""
}

// consume decodes output and reports whether the command has ended. At a
// command's C, decoding starts afresh, so its first line owes nothing to
// the row the prompt and the echo left the cursor on.
func (w *commandWait) consume(data []byte) (ended bool) {
	for len(data) > 0 {
		base := w.dec.Offset()
		restart := int64(-1)
		w.dec.Decode(data, func(ev pane.Event) {
			if restart >= 0 {
				return
			}
			switch ev.Kind {
			case pane.EventLine:
				// Before a C, lines are kept for a command whose C came
				// before the wait could see it, and dropped at a C.
				if !w.ended {
					w.tail.Add(ev.Text)
				}
			case pane.EventOSC:
				m, ok := w.shellsMark(ev.Text)
				if !ok {
					return // a program's, not the shell's
				}
				if w.ended {
					w.afterEnd(m, ev.Offset)
					return
				}
				was := w.tr.State()
				w.tr.Mark(m, ev.Offset, time.Now())
				now := w.tr.State()
				if m.Kind == '7' {
					return
				}
				w.sawMarks = true
				switch {
				case !was.Running && now.Running:
					w.running = true
					w.tail = pane.NewTailBuffer(w.req.MaxLines, w.req.MaxBytes)
					restart = ev.Offset
				case was.Running && !now.Running || !was.Running && now.CommandEnd == ev.Offset:
					// The end: D, a prompt's A, or a D whose C came before
					// tmcp saw the pane.
					if !w.running {
						w.res.Partial = true
					}
					// The unfinished last line, less the blanks a prompt's
					// redraw (zsh's PROMPT_SP) may have written.
					if last := strings.TrimRight(w.dec.Partial(), " "); last != "" {
						w.tail.Add(last)
					}
					w.ended, w.endAt = true, ev.Offset
				}
			}
		})
		if restart < 0 {
			break
		}
		data = data[restart-base:]
		w.dec = pane.NewDecoder(restart)
	}
	return w.ended
}

// afterEnd takes a mark that follows the command's end in the same piece
// of output: D marks right after it (a second emitter's, or the status of
// a command a prompt's A ended) still belong to it, and the cursor passes
// them; from any other mark on, what follows is the next prompt's.
func (w *commandWait) afterEnd(m pane.ShellMark, end int64) {
	switch {
	case w.passed:
	case m.Kind == 'D':
		w.tr.Mark(m, end, time.Now())
		w.endAt = end
	case m.Kind != '7': // the prompt's directory is not where the command ran
		w.passed = true
	}
}

// timedOut ends the wait at its timeout. With no mark seen, the pane's
// shell may lack the integration, or may only not have drawn a prompt
// since tmcp began watching it.
func (w *commandWait) timedOut(stream *pane.Stream, start time.Time, command string) CommandResult {
	w.res.Outcome = OutcomeTimeout
	switch {
	case w.sawMarks:
	case atUnmarkedPrompt(stream, stream.End(), command):
		w.res.Outcome, w.res.Reason = OutcomeNoMarks, noMarksReason
	default:
		w.res.Reason = "no shell integration mark (OSC 133) seen yet in this pane; if its shell emits none, add " + shellinit.HowToLoad
	}
	return w.finish(stream, start)
}

// finish completes the result: status, duration, output and cursor.
func (w *commandWait) finish(stream *pane.Stream, start time.Time) CommandResult {
	r := w.res
	st := w.tr.State()
	if w.ended {
		r.Outcome = OutcomeEnded
		if st.HasStatus {
			status := st.Status
			r.ExitStatus = &status
		}
		switch {
		case w.running && st.HasTook:
			// As the shell measured it: tmux may have read its C late.
			r.Duration = st.Took
		case w.running && !st.Started.IsZero():
			r.Duration = st.Ended.Sub(st.Started)
			// The stream timed the same marks as they were written (from
			// when tmux had them), not as this wait came to read them.
			if ps := stream.Prompt(); ps.OutputStart == st.OutputStart && ps.CommandEnd == st.CommandEnd && !ps.Started.IsZero() && !ps.Ended.IsZero() {
				r.Duration = ps.Ended.Sub(ps.Started)
			}
		}
	} else {
		r.Running = st.Running || w.running
	}
	if r.Outcome == OutcomeNoMarks {
		r.Running = false
	}
	r.Cwd = st.Cwd
	if w.ended || w.running {
		r.Lines, r.Truncation = w.tail.Bounded(w.req.MaxLines, w.req.MaxBytes)
		r.TotalLines, r.TotalBytes = w.tail.TotalLines(), w.tail.TotalBytes()
	}
	off := w.dec.Offset()
	if w.ended {
		off = w.endAt
		w.ends.note(w.req.PaneID, stream.Generation(), w.endAt)
	}
	r.Cursor = stream.CursorAt(off).String()
	r.Elapsed = time.Since(start)
	return r
}
