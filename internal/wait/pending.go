package wait

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	cells := []rune(row)
	before := string(cells[:min(max(cursorX, 0), len(cells))])
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
	cells := []rune(row)
	for len(cells) < cursorX {
		cells = append(cells, ' ') // trailing blanks never written
	}
	before := string(cells[:max(cursorX, 0)])
	for _, sign := range promptSigns {
		if strings.HasSuffix(before, sign) {
			return true
		}
	}
	return false
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
	rows, err := s.tc.CapturePane(ctx, p.ID, tmux.CaptureOptions{Start: &p.CursorY, End: &p.CursorY, AsDrawn: true})
	if err != nil || len(rows) == 0 {
		return "", err
	}
	return typedAtPrompt(rows[0], p.CursorX), nil
}
