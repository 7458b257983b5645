package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/screen"
	"github.com/tmcp/tmcp/internal/tmux"
)

func (s *Server) screenshotTools() []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: "screenshot_pane", Title: "Screenshot a pane", Annotations: readOnly(),
			Description: "A pane as a terminal draws it, as PNG; theme dark|light; startLine/endLine as capture_pane."}, s.screenshotPane),
	}
}

type screenshotPaneIn struct {
	PaneID    string  `json:"paneId,omitempty"`
	StartLine *int    `json:"startLine,omitempty"`
	EndLine   *int    `json:"endLine,omitempty"`
	Theme     string  `json:"theme,omitempty"`
	Scale     float64 `json:"scale,omitempty" jsonschema:"default 1"`
}

type screenshotPaneOut struct {
	PaneID string  `json:"paneId"`
	Size   string  `json:"size" jsonschema:"the pane's columns×rows"`
	Image  string  `json:"image" jsonschema:"the PNG's width×height, pixels"`
	Scale  float64 `json:"scale" jsonschema:"the font's size as a multiple of 15 px"`
	Time   string  `json:"time"`
	Note   string  `json:"note,omitempty" jsonschema:"what was scaled down or left out to keep within the bounds"`
}

func (s *Server) screenshotPane(ctx context.Context, _ *mcp.CallToolRequest, in screenshotPaneIn) (*mcp.CallToolResult, screenshotPaneOut, error) {
	theme, err := screen.ThemeNamed(in.Theme)
	if err != nil {
		return nil, screenshotPaneOut{}, err
	}
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, screenshotPaneOut{}, err
	}
	p, err := s.tmux.PaneInfo(ctx, id)
	if err != nil {
		return nil, screenshotPaneOut{}, explain("reading pane "+id, err)
	}
	rows, err := s.tmux.CapturePane(ctx, id, tmux.CaptureOptions{Start: in.StartLine, End: in.EndLine, Styles: true, AsDrawn: true})
	if err != nil {
		return nil, screenshotPaneOut{}, explain("capturing pane "+id, err)
	}
	taken := time.Now()
	cursor := screen.Cursor{X: p.CursorX, Y: p.CursorY - firstRow(p, in.StartLine, in.EndLine), Visible: p.CursorShown}
	shot, err := s.screens.Screenshot(ctx, screen.Parse(rows, p.Width), screen.Options{Theme: theme, Scale: in.Scale, Cursor: cursor})
	if err != nil {
		return nil, screenshotPaneOut{}, fmt.Errorf("drawing pane %s: %w", id, err)
	}
	out := screenshotPaneOut{PaneID: id, Size: fmt.Sprintf("%dx%d", p.Width, p.Height), Image: fmt.Sprintf("%dx%d", shot.Width, shot.Height),
		Scale: shot.Scale, Time: taken.Format(time.RFC3339), Note: shotNote(shot, len(rows))}
	meta, _ := json.Marshal(out)
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: string(meta)},
		&mcp.ImageContent{Data: shot.PNG, MIMEType: "image/png"},
	}}, out, nil
}

// firstRow is the row of the visible screen (0 its top, negative in
// history) that capture-pane starts from, as tmux clamps start and end.
func firstRow(p tmux.Pane, start, end *int) int {
	clamp := func(v int) int { return min(max(v, -p.HistorySize), p.Height-1) }
	first := 0
	if start != nil {
		first = clamp(*start)
	}
	if end != nil {
		first = min(first, clamp(*end))
	}
	return first
}

// shotNote says what was scaled down or left out of a picture of rows rows.
func shotNote(shot screen.Shot, rows int) string {
	var notes []string
	if shot.Scaled {
		notes = append(notes, fmt.Sprintf("scaled down to %g to fit %d px a side and %d bytes", shot.Scale, screen.MaxSide, screen.MaxPNGBytes))
	}
	if shot.DroppedRows > 0 {
		notes = append(notes, fmt.Sprintf("the first %d of %d rows left out; ask for fewer with startLine", shot.DroppedRows, rows))
	}
	if shot.DroppedCols > 0 {
		notes = append(notes, fmt.Sprintf("the last %d columns left out", shot.DroppedCols))
	}
	return strings.Join(notes, "; ")
}
