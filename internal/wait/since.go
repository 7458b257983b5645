package wait

import (
	"context"
	"fmt"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

// SinceResult is what a pane wrote since a cursor.
type SinceResult struct {
	Lines           []string // complete lines written since the cursor
	Partial         string   // the unfinished last line (a prompt); read again next time
	Truncation      pane.Truncation
	Screen          []string // the screen, when there is no cursor, it was reset, or a full-screen program runs
	Cursor          string
	MissedBytes     int64 // bytes past the cursor the stream no longer held
	OutputLost      bool  // tmux dropped output past the cursor (it does not say how much)
	Reset           bool
	Reason          string
	AlternateScreen bool
}

// CaptureSince returns what a pane wrote after cursor (empty: nothing yet,
// so the screen and a cursor to start from). A quiet pane costs no tmux
// command at all.
func (s *Service) CaptureSince(ctx context.Context, paneID, cursor string, maxLines, maxBytes int) (SinceResult, error) {
	if cursor == "" {
		return s.fresh(ctx, paneID, "", maxLines, maxBytes)
	}
	c, err := pane.ParseCursor(cursor)
	if err != nil {
		return SinceResult{}, fmt.Errorf("cursor: %w; call capture_since without a cursor to get a new one", err)
	}
	if paneID != "" && c.PaneID != paneID {
		return SinceResult{}, fmt.Errorf("cursor belongs to pane %s, not %s", c.PaneID, paneID)
	}
	stream := s.hub.Stream(c.PaneID)
	if stream == nil || stream.Generation() != c.Generation {
		return s.continued(ctx, c, "the cursor's stream has ended (tmcp restarted, the pane was respawned or closed, or it was not read for a while)", maxLines, maxBytes)
	}
	// Reading a stream keeps it going for another linger period.
	if _, release, err := s.hub.Acquire(ctx, c.PaneID, streamLinger); err == nil {
		defer release()
	}
	if closed, reason := stream.Closed(); closed {
		return s.fresh(ctx, c.PaneID, "the pane's stream ended: "+reason, maxLines, maxBytes)
	}
	if end := stream.End(); c.Offset > end {
		return SinceResult{}, fmt.Errorf("cursor: offset %d is past the end (%d) of pane %s's output: it was not made by this stream; call capture_since without a cursor", c.Offset, end, c.PaneID)
	}
	if c.Offset == stream.End() {
		// Nothing new: answered without asking tmux.
		return SinceResult{Cursor: cursor}, nil
	}
	// There is output to read: first make sure it came from the process the
	// cursor's stream began with (a respawn ends the stream).
	info, err := s.hub.Refresh(ctx, c.PaneID)
	if err != nil {
		return SinceResult{}, err
	}
	if closed, reason := stream.Closed(); closed {
		return s.fresh(ctx, c.PaneID, "the pane's stream ended: "+reason, maxLines, maxBytes)
	}
	data, next, missed := stream.ReadFrom(c.Offset, 0)
	dec := pane.NewDecoder(c.Offset + missed)
	dec.ResumeAfter(stream.Before(dec.Offset()))
	tail := pane.NewTailBuffer(jobTailLines, jobTailBytes)
	lineEnd := c.Offset + missed
	dec.Decode(data, func(ev pane.Event) {
		if ev.Kind == pane.EventLine {
			tail.AddPiece(ev.Text, ev.Cut)
			lineEnd = ev.Offset
		}
	})
	r := SinceResult{MissedBytes: missed, OutputLost: stream.LostAfter(c.Offset)}
	r.Lines, r.Partial, r.Truncation = boundWithPartial(tail, dec.Partial(), maxLines, maxBytes)
	// Continue from the end of the last whole line, so the unfinished one
	// comes back whole once it is finished.
	r.Cursor = stream.CursorAt(lineEnd).String()
	if r.Partial == "" {
		r.Cursor = stream.CursorAt(next).String()
	}
	if info.AlternateOn {
		r.AlternateScreen = true
		if r.Screen, err = s.screen(ctx, c.PaneID, maxLines, maxBytes); err != nil {
			return SinceResult{}, err
		}
	}
	return r, nil
}

// continued answers a cursor whose stream has ended from the pane's
// history: the rows after the last one that is the cursor's anchor line,
// the last row the unfinished line when the pane's cursor is on it. With
// no anchor, or none of the rows the anchor line, the pane is read afresh
// (why says why the cursor's stream is gone).
func (s *Service) continued(ctx context.Context, c pane.Cursor, why string, maxLines, maxBytes int) (SinceResult, error) {
	if c.Anchor == 0 {
		return s.fresh(ctx, c.PaneID, why, maxLines, maxBytes)
	}
	stream, release, err := s.hub.Acquire(ctx, c.PaneID, streamLinger)
	if err != nil {
		return SinceResult{}, err
	}
	defer release()
	// Taken before the history is read: a line written meanwhile may come
	// twice, once from the history and once from the stream, but never not.
	end := stream.End()
	info, err := s.tc.PaneInfo(ctx, c.PaneID)
	if err != nil {
		return SinceResult{}, err
	}
	if info.PID != c.PanePID {
		return s.fresh(ctx, c.PaneID, why+"; the pane runs another process than when the cursor was made", maxLines, maxBytes)
	}
	captured, err := s.tc.CapturePane(ctx, c.PaneID, tmux.CaptureOptions{History: true})
	if err != nil {
		return SinceResult{}, err
	}
	rows, partial := pane.SplitUnfinished(captured, info.CursorX)
	at := pane.LastRowWith(rows, c.Anchor)
	if at < 0 || info.AlternateOn {
		return s.fresh(ctx, c.PaneID, why+", and the pane's history no longer holds the cursor's last line", maxLines, maxBytes)
	}
	lines := rows[at+1:]
	tail := pane.NewTailBuffer(jobTailLines, jobTailBytes)
	next := pane.Cursor{PaneID: c.PaneID, Generation: stream.Generation(), Offset: end, Anchor: c.Anchor, PanePID: c.PanePID}
	for _, l := range lines {
		tail.Add(l)
		next.Anchor = pane.LineHash(l)
	}
	r := SinceResult{Cursor: next.String(), Reason: why + ": what follows the cursor is read from the pane's history"}
	r.Lines, r.Partial, r.Truncation = boundWithPartial(tail, partial, maxLines, maxBytes)
	return r, nil
}

// fresh starts (or restarts) reading a pane: its screen and a cursor at
// the end of its stream.
func (s *Service) fresh(ctx context.Context, paneID, resetReason string, maxLines, maxBytes int) (SinceResult, error) {
	stream, release, err := s.hub.Acquire(ctx, paneID, streamLinger)
	if err != nil {
		return SinceResult{}, err
	}
	defer release()
	info, err := s.tc.PaneInfo(ctx, paneID)
	if err != nil {
		return SinceResult{}, err
	}
	r := SinceResult{Cursor: stream.Cursor().String(), Reset: resetReason != "", Reason: resetReason, AlternateScreen: info.AlternateOn}
	if r.Screen, err = s.screen(ctx, paneID, maxLines, maxBytes); err != nil {
		return SinceResult{}, err
	}
	return r, nil
}

func (s *Service) screen(ctx context.Context, paneID string, maxLines, maxBytes int) ([]string, error) {
	rows, err := s.tc.CapturePane(ctx, paneID, tmux.CaptureOptions{})
	if err != nil {
		return nil, err
	}
	lines, _ := pane.Tail(pane.TrimBlank(rows), maxLines, maxBytes)
	return lines, nil
}

// boundWithPartial bounds the lines and the unfinished line after them
// together, within maxBytes: the unfinished line, the newest text, first.
func boundWithPartial(tail *pane.TailBuffer, partial string, maxLines, maxBytes int) ([]string, string, pane.Truncation) {
	if rest := maxBytes - len(partial); rest > 0 || tail.TotalLines() == 0 && rest == 0 {
		lines, tr := tail.Bounded(maxLines, rest)
		return lines, partial, tr
	}
	kept, cut := pane.TailBytes(partial, maxBytes)
	tr := pane.Truncation{Truncated: true, DroppedLines: tail.TotalLines(), DroppedBytes: tail.TotalBytes() + cut}
	return nil, kept, tr
}
