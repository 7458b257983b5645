package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/record"
)

func (s *Server) recordTools() []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: "record_pane", Annotations: mutating("Record pane", true),
			Description: "Record a pane's output to an asciicast file (asciinema play); stop: end."}, s.recordPane),
	}
}

type recordPaneIn struct {
	PaneID string `json:"paneId,omitempty"`
	Stop   bool   `json:"stop,omitempty"`
}

type recordPaneOut struct {
	File      string `json:"file" jsonschema:"the file being (or last) written"`
	Recording bool   `json:"recording"`
}

func (s *Server) recordPane(ctx context.Context, _ *mcp.CallToolRequest, in recordPaneIn) (*mcp.CallToolResult, recordPaneOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, recordPaneOut{}, err
	}
	if in.Stop {
		return nil, recordPaneOut{File: s.rec.Stop(id)}, nil
	}
	// The stream is held until the recording stops, so the pane is
	// recorded between waits too.
	stream, release, err := s.hub.Acquire(ctx, id, 0)
	if err != nil {
		return nil, recordPaneOut{}, explain("streaming pane "+id+" to record it", err)
	}
	p, err := s.tmux.PaneInfo(ctx, id)
	if err != nil {
		release()
		return nil, recordPaneOut{}, explain("reading pane "+id+" to record it", err)
	}
	file, err := s.rec.Start(stream, p, release)
	if err != nil {
		return nil, recordPaneOut{}, fmt.Errorf("%w; recording needs a directory tmcp can write (--record DIR)", err)
	}
	return nil, recordPaneOut{File: file, Recording: true}, nil
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
