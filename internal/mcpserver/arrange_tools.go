package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmux"
)

// arrangeTools returns the arranging tools: selecting, resizing, swapping and moving panes and windows, titles.
func (s *Server) arrangeTools() []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: "select_window", Title: "Select a window", Annotations: mutating(true),
			Description: "Make a window current."}, s.selectWindow),
		define(&mcp.Tool{Name: "select_pane", Title: "Select a pane", Annotations: mutating(true),
			Description: "Make a pane active, and its window current."}, s.selectPane),
		define(&mcp.Tool{Name: "select_layout", Title: "Arrange panes", Annotations: mutating(true),
			Description: "Arrange a window's panes."}, s.selectLayout),
		define(&mcp.Tool{Name: "resize_pane", Title: "Resize a pane", Annotations: mutating(true),
			Description: "Size a pane in cells, or zoom/unzoom it."}, s.resizePane),
		define(&mcp.Tool{Name: "resize_window", Title: "Resize a window", Annotations: mutating(true),
			Description: "Size a window in cells (fixed from then on)."}, s.resizeWindow),
		define(&mcp.Tool{Name: "swap_pane", Title: "Swap two panes", Annotations: mutating(false),
			Description: "Swap two panes (any windows)."}, s.swapPane),
		define(&mcp.Tool{Name: "move_window", Title: "Move a window", Annotations: mutating(false),
			Description: "Move a window to a session and/or index."}, s.moveWindow),
		define(&mcp.Tool{Name: "move_pane", Title: "Move a pane", Annotations: mutating(false),
			Description: "Move a pane into windowId (none: new window)."}, s.movePane),
		define(&mcp.Tool{Name: "set_pane_title", Title: "Set a pane's title", Annotations: mutating(true),
			Description: "Set a pane's title (literal)."}, s.setPaneTitle),
	}
}

// placedOut says where a pane is after a tool selected or moved it.
type placedOut struct {
	PaneID   string `json:"paneId"`
	WindowID string `json:"windowId"`
}

// sizeOut is a pane's or window's size after a resize.
type sizeOut struct {
	Width  int  `json:"width"`
	Height int  `json:"height"`
	Zoomed bool `json:"zoomed,omitempty"`
}

type layoutOut struct {
	Layout string `json:"layout"`
}

type movedWindowOut struct {
	SessionName string `json:"sessionName"`
	Index       int    `json:"index"`
}

type titleOut struct {
	Title string `json:"title"`
}

func (s *Server) selectWindow(ctx context.Context, _ *mcp.CallToolRequest, in windowIn) (*mcp.CallToolResult, placedOut, error) {
	id, err := s.window(ctx, in.WindowID)
	if err != nil {
		return nil, placedOut{}, err
	}
	if _, err := s.tmux.Run(ctx, "select-window", "-t", id); err != nil {
		return nil, placedOut{}, explain("selecting window "+id, err)
	}
	f, err := s.tmux.Fields(ctx, id, "pane_id")
	if err != nil {
		return nil, placedOut{}, explain("reading the active pane of window "+id, err)
	}
	return nil, placedOut{PaneID: f[0], WindowID: id}, nil
}

func (s *Server) selectPane(ctx context.Context, _ *mcp.CallToolRequest, in paneIn) (*mcp.CallToolResult, placedOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, placedOut{}, err
	}
	if _, err := s.tmux.Run(ctx, "select-pane", "-t", id); err != nil {
		return nil, placedOut{}, explain("selecting pane "+id, err)
	}
	if _, err := s.tmux.Run(ctx, "select-window", "-t", id); err != nil {
		return nil, placedOut{}, explain("selecting the window of pane "+id, err)
	}
	return s.paneWhere(ctx, id)
}

// paneWhere reports the window a pane is in.
func (s *Server) paneWhere(ctx context.Context, id string) (*mcp.CallToolResult, placedOut, error) {
	f, err := s.tmux.Fields(ctx, id, "window_id")
	if err != nil {
		return nil, placedOut{}, explain("reading the window of pane "+id, err)
	}
	return nil, placedOut{PaneID: id, WindowID: f[0]}, nil
}

type selectLayoutIn struct {
	windowIn
	Layout string `json:"layout" jsonschema:"tiled, even-/main-horizontal|vertical, or a layout string"`
}

func (s *Server) selectLayout(ctx context.Context, _ *mcp.CallToolRequest, in selectLayoutIn) (*mcp.CallToolResult, layoutOut, error) {
	id, err := s.window(ctx, in.WindowID)
	if err != nil {
		return nil, layoutOut{}, err
	}
	arg, cells, err := tmux.CheckLayout(in.Layout)
	if err != nil {
		return nil, layoutOut{}, fmt.Errorf("window %s: %w; call get_window_info for its layout", id, err)
	}
	f, err := s.tmux.Fields(ctx, id, "window_panes")
	if err != nil {
		return nil, layoutOut{}, explain("reading window "+id, err)
	}
	if panes, _ := strconv.Atoi(f[0]); cells > 0 && cells != panes {
		return nil, layoutOut{}, fmt.Errorf("window %s has %d panes but the layout string has %d; call get_window_info for its layout", id, panes, cells)
	}
	if _, err := s.tmux.Run(ctx, "select-layout", "-t", id, arg); err != nil {
		return nil, layoutOut{}, explain("selecting layout "+strconv.Quote(in.Layout)+" for window "+id, err)
	}
	f, err = s.tmux.Fields(ctx, id, "window_layout")
	if err != nil {
		return nil, layoutOut{}, explain("reading the layout of window "+id, err)
	}
	return nil, layoutOut{Layout: f[0]}, nil
}

type resizePaneIn struct {
	paneIn
	Width  int   `json:"width,omitempty"`
	Height int   `json:"height,omitempty"`
	Zoom   *bool `json:"zoom,omitempty"`
}

func (s *Server) resizePane(ctx context.Context, _ *mcp.CallToolRequest, in resizePaneIn) (*mcp.CallToolResult, sizeOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, sizeOut{}, err
	}
	if in.Width < 0 || in.Height < 0 {
		return nil, sizeOut{}, fmt.Errorf("resizing pane %s: width and height are cells, at least 1", id)
	}
	if in.Width == 0 && in.Height == 0 && in.Zoom == nil {
		return nil, sizeOut{}, fmt.Errorf("resizing pane %s: give width, height or zoom", id)
	}
	if in.Width > 0 || in.Height > 0 {
		args := []string{"resize-pane", "-t", id}
		if in.Width > 0 {
			args = append(args, "-x", strconv.Itoa(in.Width))
		}
		if in.Height > 0 {
			args = append(args, "-y", strconv.Itoa(in.Height))
		}
		if _, err := s.tmux.Run(ctx, args...); err != nil {
			return nil, sizeOut{}, explain("resizing pane "+id, err)
		}
	}
	if in.Zoom != nil {
		if err := s.zoom(ctx, id, *in.Zoom); err != nil {
			return nil, sizeOut{}, err
		}
	}
	f, err := s.tmux.Fields(ctx, id, "pane_width", "pane_height", "window_zoomed_flag")
	if err != nil {
		return nil, sizeOut{}, explain("reading the size of pane "+id, err)
	}
	w, _ := strconv.Atoi(f[0])
	h, _ := strconv.Atoi(f[1])
	return nil, sizeOut{Width: w, Height: h, Zoomed: f[2] == "1"}, nil
}

// zoom zooms pane id (on) or unzooms its window (off). resize-pane -Z
// toggles, so the window's state is read first: a call that finds what it
// asks for does nothing, and zooming a pane while another is zoomed
// unzooms that one first.
func (s *Server) zoom(ctx context.Context, id string, on bool) error {
	f, err := s.tmux.Fields(ctx, id, "window_zoomed_flag", "pane_active")
	if err != nil {
		return explain("reading the zoom of pane "+id, err)
	}
	zoomed, active := f[0] == "1", f[1] == "1"
	if zoomed && (!on || !active) {
		if _, err := s.tmux.Run(ctx, "resize-pane", "-Z", "-t", id); err != nil {
			return explain("unzooming the window of pane "+id, err)
		}
		zoomed = false
	}
	if on && !zoomed {
		if _, err := s.tmux.Run(ctx, "resize-pane", "-Z", "-t", id); err != nil {
			return explain("zooming pane "+id, err)
		}
	}
	return nil
}

type resizeWindowIn struct {
	windowIn
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
}

func (s *Server) resizeWindow(ctx context.Context, _ *mcp.CallToolRequest, in resizeWindowIn) (*mcp.CallToolResult, sizeOut, error) {
	id, err := s.window(ctx, in.WindowID)
	if err != nil {
		return nil, sizeOut{}, err
	}
	if in.Width < 0 || in.Height < 0 || in.Width == 0 && in.Height == 0 {
		return nil, sizeOut{}, fmt.Errorf("resizing window %s: give width and/or height in cells, at least 1", id)
	}
	// resize-window sets this window's window-size option to manual; it is
	// never set globally, which crashes tmux 3.3a.
	args := []string{"resize-window", "-t", id}
	if in.Width > 0 {
		args = append(args, "-x", strconv.Itoa(in.Width))
	}
	if in.Height > 0 {
		args = append(args, "-y", strconv.Itoa(in.Height))
	}
	if _, err := s.tmux.Run(ctx, args...); err != nil {
		return nil, sizeOut{}, explain("resizing window "+id, err)
	}
	f, err := s.tmux.Fields(ctx, id, "window_width", "window_height", "window_zoomed_flag")
	if err != nil {
		return nil, sizeOut{}, explain("reading the size of window "+id, err)
	}
	w, _ := strconv.Atoi(f[0])
	h, _ := strconv.Atoi(f[1])
	return nil, sizeOut{Width: w, Height: h, Zoomed: f[2] == "1"}, nil
}

type swapPaneIn struct {
	paneIn
	TargetPaneID string `json:"targetPaneId"`
}

func (s *Server) swapPane(ctx context.Context, _ *mcp.CallToolRequest, in swapPaneIn) (*mcp.CallToolResult, placedOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, placedOut{}, err
	}
	if err := checkPaneID(in.TargetPaneID); err != nil {
		return nil, placedOut{}, fmt.Errorf("targetPaneId: %w", err)
	}
	// Both are looked up first, so a missing one is named whichever it is.
	for _, p := range []string{id, in.TargetPaneID} {
		if _, err := s.tmux.Fields(ctx, p, "pane_id"); err != nil {
			return nil, placedOut{}, explain("swapping panes "+id+" and "+in.TargetPaneID, err)
		}
	}
	// -d: the swap moves panes, not the focus.
	if _, err := s.tmux.Run(ctx, "swap-pane", "-d", "-s", id, "-t", in.TargetPaneID); err != nil {
		return nil, placedOut{}, explain("swapping panes "+id+" and "+in.TargetPaneID, err)
	}
	return s.paneWhere(ctx, id)
}

type moveWindowIn struct {
	windowIn
	SessionName string `json:"sessionName,omitempty"`
	Index       *int   `json:"index,omitempty"`
}

func (s *Server) moveWindow(ctx context.Context, _ *mcp.CallToolRequest, in moveWindowIn) (*mcp.CallToolResult, movedWindowOut, error) {
	id, err := s.window(ctx, in.WindowID)
	if err != nil {
		return nil, movedWindowOut{}, err
	}
	if in.SessionName == "" && in.Index == nil {
		return nil, movedWindowOut{}, fmt.Errorf("moving window %s: give sessionName, index or both", id)
	}
	if in.Index != nil && *in.Index < 0 {
		return nil, movedWindowOut{}, fmt.Errorf("moving window %s: index %d is negative", id, *in.Index)
	}
	dest := in.SessionName
	if dest == "" {
		f, err := s.tmux.Fields(ctx, id, "session_id")
		if err != nil {
			return nil, movedWindowOut{}, explain("moving window "+id, err)
		}
		dest = f[0]
	} else if err := checkSessionName(dest); err != nil {
		return nil, movedWindowOut{}, err
	}
	target := tmux.SessionTarget(dest)
	if in.Index != nil {
		target += strconv.Itoa(*in.Index)
	}
	if _, err := s.tmux.Run(ctx, "move-window", "-d", "-s", id, "-t", target); err != nil {
		return nil, movedWindowOut{}, explain("moving window "+id+" to "+strings.TrimPrefix(target, "="), err)
	}
	f, err := s.tmux.Fields(ctx, id, "session_name", "window_index")
	if err != nil {
		return nil, movedWindowOut{}, explain("reading where window "+id+" went", err)
	}
	idx, _ := strconv.Atoi(f[1])
	return nil, movedWindowOut{SessionName: f[0], Index: idx}, nil
}

type movePaneIn struct {
	paneIn
	WindowID string `json:"windowId,omitempty"`
}

func (s *Server) movePane(ctx context.Context, _ *mcp.CallToolRequest, in movePaneIn) (*mcp.CallToolResult, placedOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, placedOut{}, err
	}
	if in.WindowID == "" {
		out, err := s.tmux.Run(ctx, "break-pane", "-d", "-s", id, "-P", "-F", "#{window_id}")
		if err != nil {
			return nil, placedOut{}, explain("breaking pane "+id+" out into a new window", err)
		}
		if len(out) != 1 || checkWindowID(out[0]) != nil {
			return nil, placedOut{}, fmt.Errorf("breaking pane %s out: unexpected answer %q", id, out)
		}
		return nil, placedOut{PaneID: id, WindowID: out[0]}, nil
	}
	if err := checkWindowID(in.WindowID); err != nil {
		return nil, placedOut{}, err
	}
	if _, err := s.tmux.Fields(ctx, in.WindowID, "window_id"); err != nil {
		return nil, placedOut{}, explain("moving pane "+id+" into window "+in.WindowID, err)
	}
	if _, err := s.tmux.Run(ctx, "join-pane", "-d", "-s", id, "-t", in.WindowID); err != nil {
		return nil, placedOut{}, explain("moving pane "+id+" into window "+in.WindowID, err)
	}
	return s.paneWhere(ctx, id)
}

type setPaneTitleIn struct {
	paneIn
	Title string `json:"title"`
}

func (s *Server) setPaneTitle(ctx context.Context, _ *mcp.CallToolRequest, in setPaneTitleIn) (*mcp.CallToolResult, titleOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, titleOut{}, err
	}
	if err := checkText("title", in.Title, maxTitleBytes); err != nil {
		return nil, titleOut{}, fmt.Errorf("setting the title of pane %s: %w", id, err)
	}
	// select-pane -T expands its argument as a format: '#' is escaped so
	// the title arrives as given.
	if _, err := s.tmux.Run(ctx, "select-pane", "-t", id, "-T", tmux.EscapeFormat(in.Title)); err != nil {
		return nil, titleOut{}, explain("setting the title of pane "+id, err)
	}
	f, err := s.tmux.Fields(ctx, id, "pane_title")
	if err != nil {
		return nil, titleOut{}, explain("reading the title of pane "+id, err)
	}
	return nil, titleOut{Title: f[0]}, nil
}

// maxTitleBytes bounds a pane title.
const maxTitleBytes = 1024

// checkText refuses a name or title (what) that tmux would mangle or
// silently not set, or a model could not read back: over max bytes,
// invalid UTF-8, or holding a control character.
func checkText(what, s string, max int) error {
	switch {
	case len(s) > max:
		return fmt.Errorf("%s is %d bytes, more than %d", what, len(s), max)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s %q is not valid UTF-8", what, s)
	case strings.ContainsFunc(s, unicode.IsControl):
		return fmt.Errorf("%s %q holds a control character (tmux keeps no newline or tab)", what, s)
	}
	return nil
}
