package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmux"
)

// scope is what an action reaches: one pane, a window, a session, or the
// whole server.
type scope int

const (
	scopePane scope = iota
	scopeWindow
	scopeSession
	scopeServer
)

// confirmID names tmcp's one confirmation request in a tool call.
const confirmID = "tmcp-confirm-caller"

// guardCaller protects the pane tmcp runs in. An action that reaches it —
// typing into it, clearing, respawning or killing it, or killing its
// window, session or server — is put to the person first: the call returns
// an elicitation request (the SDK asks the client and calls the tool again
// with the answer), and a refusal fails the call. When the client cannot
// ask, a harmless act (typing) goes ahead, and a destructive one is
// refused: failing to ask is never consent.
//
// It returns whether the target holds the caller's pane, and, when the
// person must be asked, the result to return from the tool as it is.
func (s *Server) guardCaller(ctx context.Context, req *mcp.CallToolRequest, sc scope, target, action string, destructiveAct bool) (bool, *mcp.CallToolResult, error) {
	p, err := s.reachesCaller(ctx, sc, target)
	if err != nil || p.id == "" {
		return false, nil, err
	}
	if req != nil && req.Params != nil {
		if answer, ok := req.Params.InputResponses[confirmID]; ok {
			return true, nil, consent(answer, req.Params.RequestState, action, p)
		}
	}
	if req == nil || req.Session == nil || !canElicit(req.Session) {
		if destructiveAct {
			return true, nil, fmt.Errorf("refusing to %s: it holds pane %s, %s, and this client cannot ask the person to confirm", action, p.id, p.whose)
		}
		return true, nil, nil
	}
	ask := &mcp.ElicitParams{
		Message: fmt.Sprintf("An agent asks to %s, which holds pane %s, %s. Allow it?", action, p.id, p.whose),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
			"allow": map[string]any{"type": "boolean", "description": "allow this once"}}},
	}
	return true, &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{confirmID: ask}, RequestState: action}, nil
}

// consent reads the person's answer to a confirmation for action.
func consent(answer mcp.InputResponse, state, action string, p guarded) error {
	r, ok := answer.(*mcp.ElicitResult)
	switch {
	case state != action:
		return fmt.Errorf("refusing to %s: the confirmation given was for another action", action)
	case !ok || r == nil:
		return fmt.Errorf("refusing to %s: the confirmation could not be read, and that is not consent", action)
	case r.Action != "accept":
		return fmt.Errorf("the person declined: not allowed to %s (it holds pane %s, %s)", action, p.id, p.whose)
	case r.Content["allow"] == false:
		return fmt.Errorf("the person did not allow it: not allowed to %s (it holds pane %s, %s)", action, p.id, p.whose)
	}
	return nil
}

func canElicit(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// guarded is a pane the guard protects, and whose it is, in words.
type guarded struct {
	id, whose string
}

// guardedPanes are the panes an action must not reach unasked: the
// caller's, and over HTTP also tmcp's own, whose loss would end the
// server for every client.
func (s *Server) guardedPanes(ctx context.Context) []guarded {
	var ps []guarded
	c := s.callerPane(ctx).PaneID
	own := c
	if s.cfg.OverHTTP {
		own = s.ownPane(ctx).PaneID
	}
	switch {
	case c != "" && c == own:
		ps = append(ps, guarded{c, "where tmcp (and perhaps the agent) runs"})
	case c != "":
		ps = append(ps, guarded{c, "where the agent's client says it runs"})
	}
	if own != "" && own != c {
		ps = append(ps, guarded{own, "where tmcp itself runs"})
	}
	return ps
}

// reachesCaller returns the guarded pane an action on target reaches, if
// any.
func (s *Server) reachesCaller(ctx context.Context, sc scope, target string) (guarded, error) {
	for _, p := range s.guardedPanes(ctx) {
		hit, err := s.reaches(ctx, sc, target, p.id)
		if err != nil || hit {
			return p, err
		}
	}
	return guarded{}, nil
}

// reaches reports whether an action on target reaches pane.
func (s *Server) reaches(ctx context.Context, sc scope, target, pane string) (bool, error) {
	switch sc {
	case scopeServer:
		return true, nil
	case scopePane:
		return target == pane, nil
	}
	holder, err := s.tmux.Fields(ctx, pane, "window_id", "session_id")
	if err != nil {
		// The pane is gone: nothing of it to protect.
		return false, nil
	}
	if sc == scopeWindow {
		return holder[0] == target, nil
	}
	ids, err := s.tmux.Fields(ctx, tmux.SessionTarget(target), "session_id")
	if err != nil {
		return false, errors.Join(fmt.Errorf("finding session %s", target), err)
	}
	return ids[0] == holder[1], nil
}
