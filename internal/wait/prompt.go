package wait

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

// promptSigns end the prompts of most shells and themes: a line typed at
// the prompt follows the last one on the cursor's row.
var promptSigns = []string{"$ ", "# ", "% ", "> ", "❯ ", "➜ ", "λ "}

// typedAtPrompt returns the text left typed at a shell's prompt, as the
// cursor's row shows it up to the cursor (cursorX cells in): what follows
// the last prompt sign. It is "" when the row ends with the sign, and when
// no sign shows where the prompt ends (a prompt of another style, or no
// prompt drawn yet), where tmcp cannot tell.
func typedAtPrompt(row string, cursorX int) string {
	before := beforeCursor(row, cursorX)
	at := -1
	for _, sign := range promptSigns {
		if i := strings.LastIndex(before, sign); i >= 0 && i+len(sign) > at {
			at = i + len(sign)
		}
	}
	if at < 0 {
		return ""
	}
	return strings.TrimSpace(before[at:])
}

// promptDrawn reports whether the cursor's row, as drawn, ends with a
// prompt's sign just before the cursor (cursorX cells in).
func promptDrawn(row string, cursorX int) bool {
	before := beforeCursor(row, cursorX)
	for _, sign := range promptSigns {
		if strings.HasSuffix(before, sign) {
			return true
		}
	}
	return false
}

// beforeCursor is a row as drawn up to the cursor (cursorX cells in),
// blanks never written included.
func beforeCursor(row string, cursorX int) string {
	cells := []rune(row)
	for len(cells) < cursorX {
		cells = append(cells, ' ')
	}
	return string(cells[:max(cursorX, 0)])
}

// checkNothingTyped refuses a run in a pane whose shell has a line typed
// at its prompt, by a person or by send_keys without Enter: the run's own
// line would be added to it, and both would run as one. Text seen there is
// looked at again after typedSettle: the row may be the end of the last
// command's output, which the shell's prompt has yet to follow.
func (s *Service) checkNothingTyped(ctx context.Context, p tmux.Pane) error {
	typed, err := s.typedAt(ctx, p)
	if typed == "" || err != nil {
		return err
	}
	select {
	case <-time.After(typedSettle):
	case <-ctx.Done():
		return ctx.Err()
	}
	if p, err = s.tc.PaneInfo(ctx, p.ID); err != nil {
		return err
	}
	if typed, err = s.typedAt(ctx, p); typed == "" || err != nil {
		return err
	}
	return fmt.Errorf("pane %s has %s typed at its prompt, not yet run: run_command would add its own line to it; send_keys C-u clears it (or Enter runs it), then run the command", p.ID, brief(typed))
}

// typedSettle is how long a line seen typed at a prompt is given to turn
// out to be output that a prompt follows.
const typedSettle = 200 * time.Millisecond

// typedAt returns what the pane's cursor row shows typed at a prompt.
func (s *Service) typedAt(ctx context.Context, p tmux.Pane) (string, error) {
	if p.CursorX <= 0 {
		return "", nil
	}
	row, err := s.cursorRow(ctx, p)
	if err != nil {
		return "", err
	}
	return typedAtPrompt(row, p.CursorX), nil
}

// cursorRow returns the pane's row the cursor is on, as drawn.
func (s *Service) cursorRow(ctx context.Context, p tmux.Pane) (string, error) {
	rows, err := s.tc.CapturePane(ctx, p.ID, tmux.CaptureOptions{Start: &p.CursorY, End: &p.CursorY, AsDrawn: true})
	if err != nil || len(rows) == 0 {
		return "", err
	}
	return rows[0], nil
}

// promptWait bounds how long a run waits for the prompt of its shell: the
// one drawn once the shell ran its helper, or once it ended the pane's
// last job a moment ago (see awaitDrawnPrompt).
const promptWait = time.Second

// awaitPrompt returns once the shell of a pane whose last job ended just
// now has drawn its prompt (see awaitDrawnPrompt), or after promptWait. A
// line typed before the shell reads again is echoed by the terminal, and
// once more by the shell's line editor when it starts: the person would
// see it twice (in dash, before the prompt), as runs sent one after
// another did.
func (s *Service) awaitPrompt(ctx context.Context, info tmux.Pane, stream *pane.Stream) {
	if info.CursorX > 0 || !s.jobs.endedJustNow(info.ID) {
		return
	}
	s.awaitDrawnPrompt(ctx, info.ID, stream)
}

// awaitDrawnPrompt returns once a pane's shell has drawn its prompt, or
// after promptWait. Where the shell says so, its marks tell (drawn, and no
// command running); else, on tmcp's machine, the shell itself: in front of
// its terminal and waiting at its line editor (see shellReading). Only
// where neither can tell does the screen: the prompt is drawn when the
// cursor's row ends with a prompt's sign at the cursor; off the row's
// start with no such sign (a prompt of another style, or the mark zsh
// draws before its prompt), once the pane has been quiet for
// promptSettle. The screen alone cannot tell a prompt from output a
// background job wrote below it, and waited out promptWait there.
func (s *Service) awaitDrawnPrompt(ctx context.Context, paneID string, stream *pane.Stream) {
	deadline := time.NewTimer(promptWait)
	defer deadline.Stop()
	pid := 0 // the pane's process, once /proc answered for it
	for {
		changed := stream.Changed()
		if ps := stream.Prompt(); ps.Marks && ps.Drawn && !ps.Running {
			return
		}
		wait, quietEnds := readingPoll, false
		if pid == 0 {
			p, err := s.tc.PaneInfo(ctx, paneID)
			if err != nil {
				return
			}
			switch _, known := s.shellReading(p.PID); {
			case known:
				pid = p.PID
			case p.CursorX > 0:
				row, err := s.cursorRow(ctx, p)
				if err != nil || promptDrawn(row, p.CursorX) {
					return
				}
				wait, quietEnds = promptSettle, true
			default:
				wait = 10 * time.Millisecond // a prompt the stream missed
			}
		}
		if pid > 0 {
			reading, known := s.shellReading(pid)
			if reading {
				return
			}
			if !known {
				pid = 0
			}
		}
		select {
		case <-changed:
		case <-time.After(wait):
			if quietEnds {
				return // drawn and quiet
			}
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// readingPoll is how often a shell on its way back to its prompt is asked
// again (through /proc, which costs tmux nothing) whether it waits there.
const readingPoll = 2 * time.Millisecond

// promptSettle is how long a row the cursor has left the start of, with no
// prompt's sign at the cursor, must stay unchanged to be taken for the
// prompt.
const promptSettle = 50 * time.Millisecond
