package mcpserver

import (
	"context"
	"fmt"

	"github.com/tmcp/tmcp/internal/record"
)

// record starts (on) or stops recording a pane as pipe_pane's record
// asks, and returns the file being, or last, written.
func (s *Server) record(ctx context.Context, id string, on bool) (string, error) {
	if !on {
		return s.rec.Stop(id), nil
	}
	// The stream is held until the recording stops, so the pane is
	// recorded between waits too.
	stream, release, err := s.hub.Acquire(ctx, id, 0)
	if err != nil {
		return "", explain("streaming pane "+id+" to record it", err)
	}
	p, err := s.tmux.PaneInfo(ctx, id)
	if err != nil {
		release()
		return "", explain("reading pane "+id+" to record it", err)
	}
	file, err := s.rec.Start(stream, p, release)
	if err != nil {
		return "", fmt.Errorf("%w; recording needs a directory tmcp can write (tmcp --record DIR)", err)
	}
	return file, nil
}

// watching returns what marks, in a pane's recording, that the wait of
// ctx's call began on it; the wait calls it once it watches the pane.
func (s *Server) watching(ctx context.Context) func(paneID string) {
	return func(paneID string) { s.rec.Mark(ctx, paneID, record.Label(ctx)) }
}

// waitEnded marks in the recordings of panes ids that the wait of ctx's
// call on them ended with outcome.
func (s *Server) waitEnded(ctx context.Context, outcome string, ids ...string) {
	for _, id := range ids {
		s.rec.Mark(ctx, id, record.EndLabel(ctx, outcome))
	}
}
