package mcpserver

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmux"
)

func (s *Server) killTools() []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: "kill_pane", Title: "Kill a pane", Annotations: destructive(),
			Description: "Kill a pane and its process."}, s.killPane),
		define(&mcp.Tool{Name: "kill_window", Title: "Kill a window", Annotations: destructive(),
			Description: "Kill a window and its panes."}, s.killWindow),
		define(&mcp.Tool{Name: "kill_session", Title: "Kill a session", Annotations: destructive(),
			Description: "Kill a session and its windows."}, s.killSession),
		define(&mcp.Tool{Name: "kill_server", Title: "Kill the tmux server", Annotations: destructive(),
			Description: "Kill the tmux server, every session. Needs confirm: true."}, s.killServer),
	}
}

type killedOut struct {
	Killed string `json:"killed" jsonschema:"what was killed"`
}

func (s *Server) killPane(ctx context.Context, req *mcp.CallToolRequest, in paneIn) (*mcp.CallToolResult, killedOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, killedOut{}, err
	}
	_, ask, err := s.guardCaller(ctx, req, scopePane, id, "kill pane "+id, true)
	if ask != nil || err != nil {
		return ask, killedOut{}, err
	}
	if _, err := s.tmux.Run(ctx, "kill-pane", "-t", id); err != nil {
		return nil, killedOut{}, explain("killing pane "+id, err)
	}
	return nil, killedOut{Killed: id}, nil
}

type windowIn struct {
	WindowID string `json:"windowId,omitempty"`
}

func (s *Server) killWindow(ctx context.Context, req *mcp.CallToolRequest, in windowIn) (*mcp.CallToolResult, killedOut, error) {
	id, err := s.window(ctx, in.WindowID)
	if err != nil {
		return nil, killedOut{}, err
	}
	_, ask, err := s.guardCaller(ctx, req, scopeWindow, id, "kill window "+id, true)
	if ask != nil || err != nil {
		return ask, killedOut{}, err
	}
	if _, err := s.tmux.Run(ctx, "kill-window", "-t", id); err != nil {
		return nil, killedOut{}, explain("killing window "+id, err)
	}
	return nil, killedOut{Killed: id}, nil
}

type sessionIn struct {
	SessionName string `json:"sessionName,omitempty"`
}

func (s *Server) killSession(ctx context.Context, req *mcp.CallToolRequest, in sessionIn) (*mcp.CallToolResult, killedOut, error) {
	name, err := s.session(ctx, in.SessionName)
	if err != nil {
		return nil, killedOut{}, err
	}
	_, ask, err := s.guardCaller(ctx, req, scopeSession, name, "kill session "+name, true)
	if ask != nil || err != nil {
		return ask, killedOut{}, err
	}
	if _, err := s.tmux.Run(ctx, "kill-session", "-t", tmux.SessionTarget(name)); err != nil {
		return nil, killedOut{}, explain("killing session "+name, err)
	}
	return nil, killedOut{Killed: name}, nil
}

type killServerIn struct {
	Confirm bool `json:"confirm" jsonschema:"must be true"`
}

func (s *Server) killServer(ctx context.Context, req *mcp.CallToolRequest, in killServerIn) (*mcp.CallToolResult, killedOut, error) {
	if !in.Confirm {
		return nil, killedOut{}, errors.New("kill_server ends every session on the server; call it again with confirm: true if that is meant")
	}
	_, ask, err := s.guardCaller(ctx, req, scopeServer, "", "kill the tmux server", true)
	if ask != nil || err != nil {
		return ask, killedOut{}, err
	}
	if _, err := s.tmux.Run(ctx, "kill-server"); err != nil {
		return nil, killedOut{}, explain("killing the tmux server", err)
	}
	return nil, killedOut{Killed: s.tmux.SocketPath()}, nil
}
