package pane

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tmcp/tmcp/internal/tmux"
)

// Typing into a pane is done here and only here: each method takes the
// pane's stream, records what the pane will echo, then sends it, so a
// wait never takes the echo of tmcp's own typing for output, the count of
// bytes typed stays true, and the wait that follows typing finds the pane
// streamed: it counts from the instant its call arrives, with no screen
// read to race the pane's answer to the keys.

// typedLinger keeps a pane streamed after tmcp typed into it, as a run
// keeps its pane: what the keys make the pane write is read as it comes,
// for the wait or read that usually follows.
const typedLinger = 30 * time.Second

// follow takes the stream of a pane about to be typed into, for
// typedLinger, and returns once tmux sends the pane's output to tmcp: the
// keys, sent after, reach tmux after that. A pane that cannot be streamed
// is typed into all the same; tmux's answer to the keys says what is
// wrong with it.
func (h *Hub) follow(ctx context.Context, paneID string) {
	if _, release, err := h.Acquire(ctx, paneID, typedLinger); err == nil {
		release()
	}
}

// Type types text into a pane literally (no key names), followed by Enter
// when enter is set. Text and Enter go in one tmux command, so nothing
// can come between them.
func (h *Hub) Type(ctx context.Context, paneID, text string, enter bool) error {
	keys := text
	if enter {
		keys += "\r" // the Enter key
	}
	if keys == "" {
		return nil
	}
	h.follow(ctx, paneID)
	h.typed(ctx, paneID, text, len(keys))
	return h.tc.SendKeys(ctx, paneID, true, keys)
}

// TypePasted types lead, then text as one bracketed paste written as the
// keys that open and close it, then Enter, in one tmux command. A line
// editor that binds those keys whether or not it asked the terminal for
// bracketed paste (fish does, and zsh since 5.1) inserts the text as it
// is: no binding, abbreviation or macro acts on its characters. It counts
// as [Hub.Type] does: the text, and one byte for Enter.
func (h *Hub) TypePasted(ctx context.Context, paneID, lead, text string) error {
	h.follow(ctx, paneID)
	h.typed(ctx, paneID, lead+text, len(lead)+len(text)+1)
	return h.tc.SendKeys(ctx, paneID, true, lead+pasteStart+text+pasteEnd+"\r")
}

// PasteLine pastes text into a pane, bracketed where the program asked
// the terminal for bracketed paste (tmux knows), then presses Enter. A
// line editor that asked (readline since bash 5.1, zle since zsh 5.1)
// inserts the text as it is, whatever it binds to its characters; to one
// that did not, the text is typed. It counts as [Hub.Type] does.
func (h *Hub) PasteLine(ctx context.Context, paneID, text string) error {
	h.follow(ctx, paneID)
	h.typed(ctx, paneID, text, len(text)+1)
	if err := h.tc.Paste(ctx, paneID, text, true); err != nil {
		return err
	}
	return h.tc.SendKeys(ctx, paneID, false, "Enter")
}

// The keys a terminal sends around a bracketed paste.
const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// Keys sends keys to a pane as tmux reads them: each is a key name (Enter,
// C-c, Up) or text to type. Once tmux has them, those who asked with
// [Hub.OnKeys] are told.
func (h *Hub) Keys(ctx context.Context, paneID string, keys ...string) error {
	n := 0
	runs := typedRuns(keys)
	for _, r := range runs {
		n += len(r)
	}
	for _, k := range keys {
		if strings.EqualFold(k, "Enter") {
			n++
		}
	}
	h.follow(ctx, paneID)
	h.typed(ctx, paneID, strings.Join(runs, "\n"), n)
	sentAt := time.Now()
	if err := h.tc.SendKeys(ctx, paneID, false, keys...); err != nil {
		return err
	}
	h.mu.Lock()
	notify := h.onKeys
	h.mu.Unlock()
	for _, fn := range notify {
		fn(paneID, keys, sentAt)
	}
	return nil
}

// Paste pastes text into a pane through a private tmux buffer. With
// bracketed, programs that asked for bracketed paste receive it as one.
func (h *Hub) Paste(ctx context.Context, paneID, text string, bracketed bool) error {
	h.follow(ctx, paneID)
	h.typed(ctx, paneID, text, len(text))
	return h.tc.Paste(ctx, paneID, text, bracketed)
}

// PasteBuffer pastes tmux buffer name, of size bytes, into a pane, reading
// it first to know what the pane will echo.
func (h *Hub) PasteBuffer(ctx context.Context, paneID, name string, size int, bracketed bool) error {
	text, err := h.tc.ShowBuffer(ctx, name, size)
	if err != nil {
		return fmt.Errorf("reading buffer %q to paste it: %w", name, err)
	}
	h.follow(ctx, paneID)
	h.typed(ctx, paneID, text, len(text))
	return h.tc.PasteBuffer(ctx, name, paneID, bracketed, false)
}

// OnKeys has fn called after each [Hub.Keys] that tmux took, with the time
// the keys were sent.
func (h *Hub) OnKeys(fn func(paneID string, keys []string, sentAt time.Time)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.onKeys = append(h.onKeys, fn)
}

// TypedBytes returns how many bytes tmcp has typed or pasted into a pane:
// its text, and one for each Enter. Other key names (C-c, Up) count
// nothing. Bytes are counted when sent, whether or not tmux took them.
func (h *Hub) TypedBytes(paneID string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.typedBytes[paneID]
}

// typed records text about to be typed into a pane, so that waits can
// tell the shell's echo of it from the output of what it ran, and counts
// n bytes sent, and tells the observer. Lines shorter than minTyped
// (spaces aside) are not recorded: any output line ending in those few
// bytes would be taken for their echo.
func (h *Hub) typed(ctx context.Context, paneID, text string, n int) {
	if o := h.observed(); o != nil {
		o.Typing(ctx, paneID)
	}
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.typedBytes[paneID] += int64(n)
	lines := h.typedLines[paneID]
	for _, l := range strings.Split(text, "\n") {
		if len(strings.TrimSpace(l)) >= minTyped {
			h.typedN++
			lines = append(lines, TypedLine{Seq: h.typedN, Text: l, at: now})
		}
	}
	if len(lines) > maxTyped {
		lines = lines[len(lines)-maxTyped:]
	}
	h.typedLines[paneID] = lines
	// Other panes' lines past their memory go: a pane that is gone, or
	// no longer typed into, would otherwise keep its last lines for ever.
	for id, kept := range h.typedLines {
		if len(kept) == 0 || now.Sub(kept[len(kept)-1].at) > typedMemory {
			delete(h.typedLines, id)
		}
	}
}

// typedRuns returns the text a key batch types, one run per stretch of
// keys between key names, for the waits to tell its echo from output.
func typedRuns(keys []string) []string {
	var runs []string
	var run strings.Builder
	flush := func() {
		if run.Len() > 0 {
			runs = append(runs, run.String())
		}
		run.Reset()
	}
	for _, k := range keys {
		if tmux.IsKeyName(k) {
			flush()
			continue
		}
		run.WriteString(k)
	}
	flush()
	return runs
}
