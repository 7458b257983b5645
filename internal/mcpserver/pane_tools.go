package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmux"
)

// paneTools returns respawn_pane, clear_pane, copy mode and find_pane_by_position.
func (s *Server) paneTools() []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: "respawn_pane", Title: "Restart a pane", Annotations: destructive(),
			Description: "Restart a pane's process (or command instead)."}, s.respawnPane),
		define(&mcp.Tool{Name: "clear_pane", Title: "Clear a pane", Annotations: destructive(),
			Description: "Clear a pane's screen without typing; history: true drops scrollback."}, s.clearPane),
		define(&mcp.Tool{Name: "enter_copy_mode", Title: "Enter copy mode", Annotations: mutating(false),
			Description: "Put a pane in copy mode, scrollUp lines up."}, s.enterCopyMode),
		define(&mcp.Tool{Name: "exit_copy_mode", Title: "Leave copy mode", Annotations: mutating(true),
			Description: "Leave a pane's copy mode (or any mode)."}, s.exitCopyMode),
		define(&mcp.Tool{Name: "find_pane_by_position", Title: "Find a pane by position", Annotations: readOnly(),
			Description: "The pane at top, left, top-right… or center of a window."}, s.findPaneByPosition),
	}
}

type respawnIn struct {
	paneIn
	Command        string `json:"command,omitempty"`
	StartDirectory string `json:"startDirectory,omitempty"`
}

type respawnedOut struct {
	PID int `json:"pid" jsonschema:"the new process"`
}

func (s *Server) respawnPane(ctx context.Context, req *mcp.CallToolRequest, in respawnIn) (*mcp.CallToolResult, respawnedOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, respawnedOut{}, err
	}
	_, ask, err := s.guardCaller(ctx, req, scopePane, id, "respawn pane "+id, true)
	if ask != nil || err != nil {
		return ask, respawnedOut{}, err
	}
	// A pane made with a command runs it again: only one made to run the
	// shell starts a shell.
	var st shellStart
	if info, err := s.tmux.PaneInfo(ctx, id); err == nil && info.StartCommand == "" {
		st = s.startShell(ctx, id, in.Command, nil)
	}
	if err := s.tmux.RespawnWithEnv(ctx, id, in.StartDirectory, in.Command, st.env()); err != nil {
		return nil, respawnedOut{}, explain("respawning pane "+id, err)
	}
	// The pane's output stream now comes from another process: end the
	// old stream at once, so a cursor or wait taken before is told it was
	// reset instead of reading on across the respawn.
	info, err := s.hub.Refresh(ctx, id)
	if err != nil {
		return nil, respawnedOut{}, explain("pane "+id+" was respawned, but reading it afterwards failed (did its command end at once?)", err)
	}
	s.made(st, id, info.PID)
	return nil, respawnedOut{PID: info.PID}, nil
}

type clearIn struct {
	paneIn
	History bool `json:"history,omitempty"`
}

type clearedOut struct {
	HistorySize int `json:"historySize" jsonschema:"lines of scrollback left"`
}

// clearPane empties the screen the way tmux does it for a person (send-keys
// -R resets the pane's terminal): nothing is typed into the program, so a
// shell's prompt stays away until it next writes. The rows go to the
// history unless that is cleared too.
func (s *Server) clearPane(ctx context.Context, req *mcp.CallToolRequest, in clearIn) (*mcp.CallToolResult, clearedOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, clearedOut{}, err
	}
	info, err := s.tmux.PaneInfo(ctx, id)
	if err != nil {
		return nil, clearedOut{}, explain("reading pane "+id, err)
	}
	if info.AlternateOn {
		// A reset would also drop the modes the program set (keypad,
		// bracketed paste, mouse) under its feet.
		return nil, clearedOut{}, fmt.Errorf("pane %s shows a full-screen program (%s): clearing would reset its terminal under it; make it redraw with send_keys (keys \"C-l\", enter: false), or quit it first", id, info.Command)
	}
	_, ask, err := s.guardCaller(ctx, req, scopePane, id, "clear pane "+id, true)
	if ask != nil || err != nil {
		return ask, clearedOut{}, err
	}
	if info.InMode {
		// What a person sees is the mode's view: leave it, so the cleared
		// screen shows.
		if err := s.tmux.LeaveMode(ctx, id); err != nil {
			return nil, clearedOut{}, explain("leaving "+info.Mode+" in pane "+id, err)
		}
	}
	if err := s.tmux.ClearScreen(ctx, id); err != nil {
		return nil, clearedOut{}, explain("clearing pane "+id, err)
	}
	if in.History {
		if err := s.tmux.ClearHistory(ctx, id); err != nil {
			return nil, clearedOut{}, explain("clearing the history of pane "+id, err)
		}
	}
	after, err := s.tmux.PaneInfo(ctx, id)
	if err != nil {
		return nil, clearedOut{}, explain("reading pane "+id+" after clearing it", err)
	}
	return nil, clearedOut{HistorySize: after.HistorySize}, nil
}

type copyModeIn struct {
	paneIn
	ScrollUp int `json:"scrollUp,omitempty"`
}

type modeOut struct {
	InMode bool `json:"inMode"`
	Scroll int  `json:"scroll,omitempty" jsonschema:"lines scrolled up"`
}

func (s *Server) enterCopyMode(ctx context.Context, _ *mcp.CallToolRequest, in copyModeIn) (*mcp.CallToolResult, modeOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, modeOut{}, err
	}
	if in.ScrollUp < 0 {
		return nil, modeOut{}, fmt.Errorf("scrollUp %d: give the number of lines to scroll up, 0 or more", in.ScrollUp)
	}
	info, err := s.tmux.PaneInfo(ctx, id)
	if err != nil {
		return nil, modeOut{}, explain("reading pane "+id, err)
	}
	// tmux repeats a scroll once per line: past the history it would only
	// spin, so the count stops there.
	if err := s.tmux.EnterCopyMode(ctx, id, min(in.ScrollUp, info.HistorySize)); err != nil {
		return nil, modeOut{}, explain("putting pane "+id+" in copy mode", err)
	}
	return s.modeState(ctx, id)
}

func (s *Server) exitCopyMode(ctx context.Context, _ *mcp.CallToolRequest, in paneIn) (*mcp.CallToolResult, modeOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, modeOut{}, err
	}
	if err := s.tmux.LeaveMode(ctx, id); err != nil {
		return nil, modeOut{}, explain("taking pane "+id+" out of copy mode", err)
	}
	return s.modeState(ctx, id)
}

// modeState reads whether a pane is in a mode and how far it is scrolled
// up.
func (s *Server) modeState(ctx context.Context, id string) (*mcp.CallToolResult, modeOut, error) {
	f, err := s.tmux.Fields(ctx, id, "pane_in_mode", "scroll_position")
	if err != nil {
		return nil, modeOut{}, explain("reading the mode of pane "+id, err)
	}
	r := modeOut{InMode: f[0] == "1"}
	r.Scroll, _ = strconv.Atoi(f[1])
	return nil, r, nil
}

type findPaneIn struct {
	windowIn
	Position string `json:"position"`
}

type foundOut struct {
	PaneID   string `json:"paneId"`
	IsCaller bool   `json:"isCaller,omitempty"`
}

// positions are the places find_pane_by_position knows, in the order its
// error lists them.
const positions = "top, bottom, left, right, top-left, top-right, bottom-left, bottom-right, center"

func (s *Server) findPaneByPosition(ctx context.Context, _ *mcp.CallToolRequest, in findPaneIn) (*mcp.CallToolResult, foundOut, error) {
	id, err := s.window(ctx, in.WindowID)
	if err != nil {
		return nil, foundOut{}, err
	}
	if _, _, ok := placePoint(in.Position, 1, 1); !ok {
		return nil, foundOut{}, fmt.Errorf("position %q: use one of %s", in.Position, positions)
	}
	g, err := s.tmux.WindowGeometry(ctx, id)
	if err != nil {
		return nil, foundOut{}, explain("reading the layout of window "+id, err)
	}
	pane := paneAt(g, in.Position)
	if pane == "" {
		return nil, foundOut{}, fmt.Errorf("window %s has no panes; call list_windows", id)
	}
	return nil, foundOut{PaneID: pane, IsCaller: s.isCaller(ctx, pane)}, nil
}

// placePoint returns the cell of a w×h window that a position names: a
// corner, the middle of an edge, or the centre.
func placePoint(position string, w, h int) (x, y int, ok bool) {
	midX, midY, maxX, maxY := (w-1)/2, (h-1)/2, w-1, h-1
	vertical, horizontal, _ := strings.Cut(strings.ToLower(strings.TrimSpace(position)), "-")
	if horizontal == "" {
		switch vertical {
		case "top":
			return midX, 0, true
		case "bottom":
			return midX, maxY, true
		case "left":
			return 0, midY, true
		case "right":
			return maxX, midY, true
		case "center", "centre", "middle":
			return midX, midY, true
		}
		return 0, 0, false
	}
	switch vertical {
	case "top":
	case "bottom":
		y = maxY
	default:
		return 0, 0, false
	}
	switch horizontal {
	case "left":
	case "right":
		x = maxX
	default:
		return 0, 0, false
	}
	return x, y, true
}

// paneAt returns the pane at a position of a window: the one holding the
// position's cell or, when that cell is a border between panes, the
// nearest (the first in tmux's order on a tie). In a zoomed window only
// the active pane shows, so it is everywhere.
func paneAt(g tmux.Geometry, position string) string {
	x, y, ok := placePoint(position, g.Width, g.Height)
	if !ok {
		return ""
	}
	best, bestDist := "", -1
	for _, p := range g.Panes {
		if g.Zoomed {
			if p.Active {
				return p.PaneID
			}
			continue
		}
		d := max(p.Left-x, 0, x-p.Right) + max(p.Top-y, 0, y-p.Bottom)
		if bestDist < 0 || d < bestDist {
			best, bestDist = p.PaneID, d
		}
	}
	return best
}
