package pane

import (
	"context"

	"github.com/tmcp/tmcp/internal/tmux"
)

// An Observer is told what a [Hub] does with panes, so that a layer above
// it (recordings) can follow them without the hub knowing why. Its methods
// run on the hub's goroutines and must return quickly.
type Observer interface {
	// Streaming is called when the hub begins streaming pane p, before the
	// stream s gets its first byte: a tap taken now misses nothing.
	Streaming(s *Stream, p tmux.Pane)
	// Typing is called just before tmcp types, sends keys or pastes into a
	// pane, with the context of the call doing it.
	Typing(ctx context.Context, paneID string)
	// Seen is called with the state of a live streamed pane each time the
	// hub asks tmux about it (its size may have changed).
	Seen(p tmux.Pane)
}

// Observe has o told of the hub's panes from now on; nil stops it.
func (h *Hub) Observe(o Observer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.observer = o
}

func (h *Hub) observed() Observer {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.observer
}
