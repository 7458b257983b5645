package liveview

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tmcp/tmcp/internal/mcpserver"
	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

const (
	// readChunk is the most of the stream read at once, and readChunks
	// the most chunks read before what they held is sent: a pane that
	// writes without pause is sent in pieces, not held back.
	readChunk  = 64 << 10
	readChunks = 16
	// maxEventLines bounds the lines one event carries; the page keeps no
	// more than that either, so older ones would only be dropped there.
	maxEventLines = 2000
	// screenEvery bounds how often the screen is captured while a
	// full-screen program draws (the stream's text is no use then).
	screenEvery = 100 * time.Millisecond
	// joinTries bounds the captures made to join the screen to the stream
	// exactly: one taken while nothing was written.
	joinTries = 3
	// recentPaneCalls is how many of a pane's earlier calls a new viewer
	// is sent.
	recentPaneCalls = 100
	// heartbeatEvery keeps a quiet event stream from being taken for dead.
	heartbeatEvery = 15 * time.Second
	// writeTimeout bounds one event's write: a viewer that stops reading
	// is dropped, not waited on.
	writeTimeout = 10 * time.Second
)

// Events sent to the page, each a JSON object.
const (
	eventScreen = "screen" // a screenEvent: the pane as captured
	eventText   = "text"   // a textEvent: lines the pane wrote since
	eventCalls  = "calls"  // a list of audit lines of calls on the pane
	eventEnded  = "ended"  // an endedEvent: the pane's stream ended
)

// screenEvent is the pane's screen as tmux holds it. On the main screen,
// Lines are the rows above the cursor and Partial the cursor's row, and
// the text events that follow continue from there; on the alternate
// screen (a full-screen program), Lines are every row, and each change
// comes as a new screen.
type screenEvent struct {
	Lines   []string `json:"lines"`
	Partial string   `json:"partial"`
	Alt     bool     `json:"alt"`
	Width   int      `json:"width"`
	Height  int      `json:"height"`
}

// textEvent is what the pane wrote on its main screen: the lines it
// completed and the one it is writing.
type textEvent struct {
	Lines   []string `json:"lines"`
	Partial string   `json:"partial"`
	Dropped int      `json:"dropped,omitempty"` // lines left out past maxEventLines
}

type endedEvent struct {
	Reason string `json:"reason"`
}

// follower sends one pane to one viewer: its screen, then what its stream
// brings, and the calls made on it.
type follower struct {
	view   *View
	out    *eventWriter
	stream *pane.Stream
	pane   tmux.Pane

	dec     *pane.Decoder
	next    int64 // stream offset of the next byte to read
	lost    int64 // the stream's lost bytes when last looked
	partial string
	alt     bool
	// screenDue says the screen must be captured again (the alternate
	// screen changed, or the stream was overrun); lastScreen is when it
	// was last captured.
	screenDue  bool
	lastScreen time.Time
	callSeq    uint64
}

// follow sends events until ctx ends, the stream ends or the viewer stops
// reading.
func (f *follower) follow(ctx context.Context) {
	if err := f.screen(ctx); err != nil {
		return
	}
	calls, callsChanged := f.view.calls.Since(0)
	if err := f.sendCalls(calls, recentPaneCalls); err != nil {
		return
	}
	heartbeat := time.NewTicker(heartbeatEvery)
	defer heartbeat.Stop()
	due := time.NewTimer(time.Hour)
	due.Stop()
	defer due.Stop()
	for {
		changed := f.stream.Changed()
		if err := f.catchUp(ctx); err != nil {
			return
		}
		if f.screenDue {
			if wait := screenEvery - time.Since(f.lastScreen); wait > 0 {
				due.Reset(wait)
			} else if err := f.screen(ctx); err != nil {
				return
			}
		}
		if !f.screenDue && f.next < f.stream.End() {
			continue // catchUp stopped at readChunks with more to read
		}
		if closed, reason := f.stream.Closed(); closed && f.next >= f.stream.End() {
			f.out.send(eventEnded, endedEvent{Reason: reason})
			return
		}
		select {
		case <-changed:
		case <-due.C:
		case <-callsChanged:
			calls, callsChanged = f.view.calls.Since(f.callSeq)
			if err := f.sendCalls(calls, len(calls)); err != nil {
				return
			}
		case <-heartbeat.C:
			if err := f.out.comment(); err != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// screen captures the pane's screen, sends it, and sets the decoder to
// continue from it. The capture is joined to the stream at the offset
// where the stream stood while it was taken: if the pane wrote during a
// capture, it is taken again (joinTries at most; past that, what was
// written during the last may show twice).
func (f *follower) screen(ctx context.Context) error {
	var (
		rows []string
		p    tmux.Pane
		from int64
		err  error
	)
	for range joinTries {
		from = f.stream.End()
		if p, err = f.view.tmux.PaneInfo(ctx, f.pane.ID); err != nil {
			return err
		}
		if rows, err = f.view.tmux.CapturePane(ctx, f.pane.ID, tmux.CaptureOptions{}); err != nil {
			return err
		}
		if f.stream.End() == from {
			break
		}
	}
	f.pane, f.next, f.lost, f.alt = p, from, f.stream.LostBytes(), p.AlternateOn
	f.screenDue, f.lastScreen = false, time.Now()
	ev := screenEvent{Alt: p.AlternateOn, Width: p.Width, Height: p.Height}
	if p.AlternateOn {
		f.dec = pane.NewDecoderOnAltScreen(from)
		f.dec.ResumeAfter(f.stream.Before(from))
		ev.Lines = rows
		f.partial = ""
		return f.out.send(eventScreen, ev)
	}
	// The decoder starts on the cursor's row as the screen shows it, with
	// its cursor where tmux's is, so that what is written next lands as
	// it does on the screen.
	y := min(max(p.CursorY, 0), len(rows))
	ev.Lines = rows[:y]
	row := ""
	if y < len(rows) {
		row = rows[y]
	}
	f.dec = pane.NewDecoder(from)
	f.dec.Decode([]byte(seedRow(row, p.CursorX)), nil)
	f.dec.ResumeAfter(f.stream.Before(from)) // after the seed: the stream may go on inside a sequence
	f.partial = f.dec.Partial()
	ev.Partial = f.partial
	return f.out.send(eventScreen, ev)
}

// seedRow returns the bytes that write row and leave the cursor at column
// x: the row padded to x, then backspaces back to x.
func seedRow(row string, x int) string {
	runes := []rune(row)
	if x >= len(runes) {
		return row + strings.Repeat(" ", x-len(runes))
	}
	return row + strings.Repeat("\b", len(runes)-x)
}

// catchUp reads what the stream holds past f.next and sends it: on the
// main screen as lines, on the alternate screen by asking for a capture.
func (f *follower) catchUp(ctx context.Context) error {
	var ev textEvent
	for range readChunks {
		data, next, missed := f.stream.ReadFrom(f.next, readChunk)
		if missed > 0 || f.stream.LostBytes() != f.lost {
			// The stream was overrun, or tmux dropped output: what the
			// pane shows is no longer what the lines add up to.
			f.screenDue = true
			return nil
		}
		if len(data) == 0 {
			break
		}
		f.next = next
		f.dec.Decode(data, func(e pane.Event) {
			switch e.Kind {
			case pane.EventAltScreen:
				f.alt = e.Alt
				f.screenDue = true
			case pane.EventLine:
				if !f.alt {
					ev.Lines = append(ev.Lines, e.Text)
				}
			}
		})
		if n := len(ev.Lines) - maxEventLines; n > maxEventLines {
			ev.Lines, ev.Dropped = slices.Delete(ev.Lines, 0, n), ev.Dropped+n
		}
		if f.alt {
			f.screenDue = true
		}
	}
	if f.alt || f.screenDue {
		return nil
	}
	if len(ev.Lines) == 0 && f.dec.Partial() == f.partial {
		return nil
	}
	if n := len(ev.Lines) - maxEventLines; n > 0 {
		ev.Lines, ev.Dropped = slices.Delete(ev.Lines, 0, n), ev.Dropped+n
	}
	f.partial = f.dec.Partial()
	ev.Partial = f.partial
	return f.out.send(eventText, ev)
}

// sendCalls sends the audit lines of the last max of calls that named
// the pane on the local server.
func (f *follower) sendCalls(calls []mcpserver.Call, max int) error {
	var lines []json.RawMessage
	for _, c := range calls {
		f.callSeq = c.Seq
		if c.Host == "" && slices.Contains(c.Panes, f.pane.ID) {
			lines = append(lines, c.Line)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	if len(lines) > max {
		lines = lines[len(lines)-max:]
	}
	return f.out.send(eventCalls, lines)
}

// eventWriter writes server-sent events, each flushed at once and within
// writeTimeout.
type eventWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newEventWriter(w http.ResponseWriter) *eventWriter {
	return &eventWriter{w: w, rc: http.NewResponseController(w)}
}

// send writes one event whose data is v as JSON (on one line: JSON
// escapes newlines).
func (e *eventWriter) send(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding a %s event: %w", name, err)
	}
	return e.write("event: " + name + "\ndata: " + string(b) + "\n\n")
}

// comment writes a comment line, which the page ignores.
func (e *eventWriter) comment() error { return e.write(":\n\n") }

func (e *eventWriter) write(s string) error {
	_ = e.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := e.w.Write([]byte(s)); err != nil {
		return err
	}
	return e.rc.Flush()
}
