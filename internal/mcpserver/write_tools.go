package mcpserver

import (
	"context"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmux"
)

func (s *Server) writeTools() []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: "send_keys", Title: "Send keys", Annotations: mutating(false),
			Description: "Type text into a pane, then Enter (enter: false to skip); a lone key name (C-c) is that key."}, s.sendKeys),
		define(&mcp.Tool{Name: "paste_text", Title: "Paste text", Annotations: mutating(false),
			Description: "Paste exact text into a pane, never read as keys."}, s.pasteText),
		define(&mcp.Tool{Name: "create_session", Title: "Create a session", Annotations: mutating(false),
			Description: "Create a detached session."}, s.createSession),
		define(&mcp.Tool{Name: "create_window", Title: "Create a window", Annotations: mutating(false),
			Description: "Create a window (not switched to)."}, s.createWindow),
		define(&mcp.Tool{Name: "split_window", Title: "Split a pane", Annotations: mutating(false),
			Description: "Split a pane in two."}, s.splitWindow),
		define(&mcp.Tool{Name: "rename_session", Title: "Rename a session", Annotations: mutating(true),
			Description: "Rename a session."}, s.renameSession),
		define(&mcp.Tool{Name: "rename_window", Title: "Rename a window", Annotations: mutating(true),
			Description: "Rename a window."}, s.renameWindow),
	}
}

type sendKeysIn struct {
	PaneID  string `json:"paneId,omitempty"`
	Keys    string `json:"keys"`
	Enter   *bool  `json:"enter,omitempty" jsonschema:"default true"`
	Literal bool   `json:"literal,omitempty" jsonschema:"never a key name"`
}

type sentOut struct {
	PaneID string `json:"paneId"`
	Bytes  int    `json:"bytes" jsonschema:"bytes of text sent"`
	Enter  bool   `json:"enter,omitempty"`
	// IsCaller: the pane is the one tmcp runs in.
	IsCaller bool `json:"isCaller,omitempty"`
}

func (s *Server) sendKeys(ctx context.Context, req *mcp.CallToolRequest, in sendKeysIn) (*mcp.CallToolResult, sentOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, sentOut{}, err
	}
	enter := in.Enter == nil || *in.Enter
	if in.Keys == "" && !enter {
		return nil, sentOut{}, fmt.Errorf("nothing to send to pane %s: keys is empty and enter is false", id)
	}
	isCaller, ask, err := s.guardCaller(ctx, req, scopePane, id, "type into pane "+id, false)
	if ask != nil || err != nil {
		return ask, sentOut{}, err
	}
	// Keys typed into a read a killed tmcp left would be read blind.
	s.waits.Mend(ctx, id)
	if in.Literal {
		err = s.hub.Type(ctx, id, in.Keys, enter)
	} else {
		keys := []string{}
		if in.Keys != "" {
			keys = append(keys, in.Keys)
		}
		if enter {
			keys = append(keys, "Enter")
		}
		err = s.hub.Keys(ctx, id, keys...)
	}
	if err != nil {
		return nil, sentOut{}, explain("sending keys to pane "+id, err)
	}
	return nil, sentOut{PaneID: id, Bytes: len(in.Keys), Enter: enter, IsCaller: isCaller}, nil
}

type pasteTextIn struct {
	PaneID    string `json:"paneId,omitempty"`
	Text      string `json:"text"`
	Bracketed *bool  `json:"bracketed,omitempty" jsonschema:"default true"`
}

func (s *Server) pasteText(ctx context.Context, req *mcp.CallToolRequest, in pasteTextIn) (*mcp.CallToolResult, sentOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, sentOut{}, err
	}
	if in.Text == "" {
		return nil, sentOut{}, fmt.Errorf("nothing to paste into pane %s: text is empty", id)
	}
	isCaller, ask, err := s.guardCaller(ctx, req, scopePane, id, "paste into pane "+id, false)
	if ask != nil || err != nil {
		return ask, sentOut{}, err
	}
	if err := s.hub.Paste(ctx, id, in.Text, in.Bracketed == nil || *in.Bracketed); err != nil {
		return nil, sentOut{}, explain("pasting into pane "+id, err)
	}
	return nil, sentOut{PaneID: id, Bytes: len(in.Text), IsCaller: isCaller}, nil
}

// CreatedOut names what a create tool made.
type CreatedOut struct {
	SessionID   string `json:"sessionId"`
	SessionName string `json:"sessionName" jsonschema:"the name tmux gave (it replaces : and . with _)"`
	WindowID    string `json:"windowId"`
	WindowIndex int    `json:"windowIndex"`
	WindowName  string `json:"windowName"`
	PaneID      string `json:"paneId"`
}

func createdOut(c tmux.Created) CreatedOut {
	return CreatedOut{SessionID: c.SessionID, SessionName: c.SessionName, WindowID: c.WindowID,
		WindowIndex: c.WindowIndex, WindowName: c.WindowName, PaneID: c.PaneID}
}

type createSessionIn struct {
	Name           string `json:"name,omitempty"`
	WindowName     string `json:"windowName,omitempty"`
	StartDirectory string `json:"startDirectory,omitempty"`
	Command        string `json:"command,omitempty"`
	Width          int    `json:"width,omitempty" jsonschema:"default 80"`
	Height         int    `json:"height,omitempty" jsonschema:"default 24"`
}

func (s *Server) createSession(ctx context.Context, _ *mcp.CallToolRequest, in createSessionIn) (*mcp.CallToolResult, CreatedOut, error) {
	st := s.startShell(ctx, "", in.Command, nil)
	c, err := s.tmux.NewSession(ctx, tmux.NewOptions{Name: in.Name, Window: in.WindowName, Dir: in.StartDirectory,
		Command: in.Command, Width: in.Width, Height: in.Height, Env: st.env()})
	if err != nil {
		return nil, CreatedOut{}, explain("creating session "+strconv.Quote(in.Name), err)
	}
	s.made(st, c.PaneID, c.PanePID)
	if err := s.sessionMade(ctx, st, c.SessionID); err != nil {
		return nil, CreatedOut{}, explain("creating session "+strconv.Quote(in.Name), err)
	}
	return nil, createdOut(c), nil
}

type createWindowIn struct {
	SessionName    string `json:"sessionName,omitempty"`
	Name           string `json:"name,omitempty"`
	StartDirectory string `json:"startDirectory,omitempty"`
	Command        string `json:"command,omitempty"`
}

func (s *Server) createWindow(ctx context.Context, _ *mcp.CallToolRequest, in createWindowIn) (*mcp.CallToolResult, CreatedOut, error) {
	session, err := s.session(ctx, in.SessionName)
	if err != nil {
		return nil, CreatedOut{}, err
	}
	st := s.startShell(ctx, tmux.SessionTarget(session), in.Command, nil)
	c, err := s.tmux.NewWindow(ctx, tmux.NewOptions{Target: session, Name: in.Name, Dir: in.StartDirectory, Command: in.Command, Env: st.env()})
	if err != nil {
		return nil, CreatedOut{}, explain("creating a window in session "+session, err)
	}
	s.made(st, c.PaneID, c.PanePID)
	return nil, createdOut(c), nil
}

type splitWindowIn struct {
	PaneID         string `json:"paneId,omitempty"`
	Direction      string `json:"direction,omitempty" jsonschema:"right, left, below (default), above"`
	Size           string `json:"size,omitempty" jsonschema:"cells (20) or percent (30%)"`
	StartDirectory string `json:"startDirectory,omitempty"`
	Command        string `json:"command,omitempty"`
}

func (s *Server) splitWindow(ctx context.Context, _ *mcp.CallToolRequest, in splitWindowIn) (*mcp.CallToolResult, CreatedOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, CreatedOut{}, err
	}
	o := tmux.NewOptions{Target: id, Size: in.Size, Dir: in.StartDirectory, Command: in.Command}
	switch in.Direction {
	case "", "below":
	case "above":
		o.Before = true
	case "right":
		o.Horizontal = true
	case "left":
		o.Horizontal, o.Before = true, true
	default:
		return nil, CreatedOut{}, fmt.Errorf("direction %q: use right, left, below or above", in.Direction)
	}
	if in.Size != "" && !validSize(in.Size) {
		return nil, CreatedOut{}, fmt.Errorf("size %q: give cells like '20' or a percentage like '30%%'", in.Size)
	}
	st := s.startShell(ctx, id, in.Command, nil)
	o.Env = st.env()
	c, err := s.tmux.SplitWindow(ctx, o)
	if err != nil {
		return nil, CreatedOut{}, explain("splitting pane "+id, err)
	}
	s.made(st, c.PaneID, c.PanePID)
	return nil, createdOut(c), nil
}

func validSize(s string) bool {
	n, err := strconv.Atoi(s)
	if err != nil && len(s) > 1 && s[len(s)-1] == '%' {
		n, err = strconv.Atoi(s[:len(s)-1])
		if n > 100 {
			return false
		}
	}
	return err == nil && n > 0
}

type renameSessionIn struct {
	SessionName string `json:"sessionName,omitempty"`
	NewName     string `json:"newName"`
}

type renamedOut struct {
	Name string `json:"name" jsonschema:"the name tmux gave"`
}

func (s *Server) renameSession(ctx context.Context, _ *mcp.CallToolRequest, in renameSessionIn) (*mcp.CallToolResult, renamedOut, error) {
	session, err := s.session(ctx, in.SessionName)
	if err != nil {
		return nil, renamedOut{}, err
	}
	if err := checkSessionName(in.NewName); err != nil {
		return nil, renamedOut{}, fmt.Errorf("newName: %w", err)
	}
	// Read the id first: after the rename the old name no longer finds it.
	ids, err := s.tmux.Fields(ctx, tmux.SessionTarget(session), "session_id")
	if err != nil {
		return nil, renamedOut{}, explain("finding session "+session, err)
	}
	id := ids[0] + ":"
	if err := s.tmux.Rename(ctx, id, in.NewName); err != nil {
		return nil, renamedOut{}, explain("renaming session "+session, err)
	}
	name, err := s.tmux.Fields(ctx, id, "session_name")
	if err != nil {
		return nil, renamedOut{}, explain("reading the new name of session "+ids[0], err)
	}
	return nil, renamedOut{Name: name[0]}, nil
}

type renameWindowIn struct {
	WindowID string `json:"windowId,omitempty"`
	NewName  string `json:"newName"`
}

func (s *Server) renameWindow(ctx context.Context, _ *mcp.CallToolRequest, in renameWindowIn) (*mcp.CallToolResult, renamedOut, error) {
	id, err := s.window(ctx, in.WindowID)
	if err != nil {
		return nil, renamedOut{}, err
	}
	if err := s.tmux.Rename(ctx, id, in.NewName); err != nil {
		return nil, renamedOut{}, explain("renaming window "+id, err)
	}
	name, err := s.tmux.Fields(ctx, id, "window_name")
	if err != nil {
		return nil, renamedOut{}, explain("reading the new name of window "+id, err)
	}
	return nil, renamedOut{Name: name[0]}, nil
}
