package workspace

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

// shellQuiet is how long a shell in front of its pane, having drawn
// something, must go without drawing more for its last row to be taken
// for a prompt that does not look like one.
const shellQuiet = 300 * time.Millisecond

// promptEnds are the characters a prompt commonly ends with.
const promptEnds = "$#%>❯➜»λ"

// Typing is a pane made for a plan and the commands to type into it.
type Typing struct {
	PaneID   string
	Commands []string
}

// TypeCommands types each pane's commands, each followed by Enter, once
// the pane's shell has drawn its first prompt, so that nothing is echoed
// ahead of the prompt. Panes are waited on together. A pane whose shell
// draws no prompt before ctx ends gets nothing typed, and the error names
// it; the other panes' commands are typed all the same.
func TypeCommands(ctx context.Context, tc *tmux.Client, hub *pane.Hub, panes []Typing) error {
	var wg sync.WaitGroup
	errs := make([]error, len(panes))
	for i, p := range panes {
		if len(p.Commands) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := firstPrompt(ctx, tc, hub, p.PaneID); err != nil {
				errs[i] = fmt.Errorf("waiting for the first prompt of pane %s, so its commands were not typed: %w", p.PaneID, err)
				return
			}
			for _, cmd := range p.Commands {
				if err := hub.Type(ctx, p.PaneID, cmd, true); err != nil {
					errs[i] = fmt.Errorf("typing into pane %s: %w", p.PaneID, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// firstPrompt returns once a new pane's shell is at its first prompt: it
// emitted a prompt mark (OSC 133 A), or it is in front and its cursor row
// ends like a prompt, or it is in front and has drawn something and then
// gone quiet.
func firstPrompt(ctx context.Context, tc *tmux.Client, hub *pane.Hub, paneID string) error {
	s, release, err := hub.Acquire(ctx, paneID, 0)
	if err != nil {
		return err
	}
	defer release()
	quiet := time.NewTimer(shellQuiet)
	defer quiet.Stop()
	settled := false
	for {
		changed := s.Changed() // before the state it guards
		if st := s.Prompt(); st.Marks && !st.Running {
			return nil
		}
		if closed, reason := s.Closed(); closed {
			return errors.New(reason)
		}
		p, err := tc.PaneInfo(ctx, paneID)
		if err != nil {
			return err
		}
		if p.Dead {
			return fmt.Errorf("the pane's process ended: %s", p.Death())
		}
		if shellInFront(p.Command) {
			if settled && (p.CursorX > 0 || p.CursorY > 0) {
				return nil
			}
			row, err := tc.CapturePane(ctx, paneID, tmux.CaptureOptions{Start: &p.CursorY, End: &p.CursorY})
			if err != nil {
				return err
			}
			if len(row) > 0 && looksLikePrompt(row[0], p.CursorX) {
				return nil
			}
		}
		select {
		case <-changed:
			settled = false
			quiet.Reset(shellQuiet)
		case <-quiet.C:
			settled = true
		case <-ctx.Done():
			return fmt.Errorf("none came within the call's time (%w)", ctx.Err())
		}
	}
}

// shellInFront reports whether a pane's foreground command is a shell, by
// its name: sh, bash, zsh, dash, mksh, fish and the like.
func shellInFront(command string) bool {
	name := path.Base(strings.TrimPrefix(command, "-"))
	return strings.HasSuffix(name, "sh") || name == "fish"
}

// looksLikePrompt reports whether a row, up to the cursor at column x,
// ends like a shell prompt.
func looksLikePrompt(row string, x int) bool {
	if r := []rune(row); x < len(r) {
		row = string(r[:x])
	}
	row = strings.TrimRight(row, " ")
	last, _ := utf8.DecodeLastRuneInString(row)
	return row != "" && strings.ContainsRune(promptEnds, last)
}
