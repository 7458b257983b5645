package mcpserver

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/workspace"
)

// workspaceTools returns build_workspace.
func (s *Server) workspaceTools() []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: "build_workspace", Title: "Build a workspace", Annotations: mutating(false),
			Description: "Build a session from tmuxp-style YAML (windows, panes, layout, dirs, commands typed at first prompts)."}, s.buildWorkspace),
	}
}

type buildWorkspaceIn struct {
	YAML string `json:"yaml"`
}

// builtWindow is a window made, with its panes in the document's order.
type builtWindow struct {
	WindowID string   `json:"windowId"`
	Panes    []string `json:"panes"`
}

type workspaceOut struct {
	SessionName string        `json:"sessionName"`
	Windows     []builtWindow `json:"windows"`
}

func (s *Server) buildWorkspace(ctx context.Context, _ *mcp.CallToolRequest, in buildWorkspaceIn) (*mcp.CallToolResult, workspaceOut, error) {
	home, _ := os.UserHomeDir()
	if s.tmux.Remote() {
		// Directories are the far side's: its tmux server's HOME, and no
		// local check of whether they exist.
		home = ""
		if env, err := s.tmux.ShowEnvironment(ctx, "", "HOME"); err == nil && len(env) == 1 {
			home = env[0].Value
		}
	}
	plan, err := workspace.Parse([]byte(in.YAML), home, tmux.CheckLayout)
	if err != nil {
		return nil, workspaceOut{}, fmt.Errorf("the workspace document: %w; nothing was made", err)
	}
	for _, d := range plan.Dirs() {
		if s.tmux.Remote() {
			break
		}
		if st, err := os.Stat(d.Path); err != nil || !st.IsDir() {
			return nil, workspaceOut{}, fmt.Errorf("the workspace document: line %d: start_directory %s is not a directory; nothing was made", d.Line, d.Path)
		}
	}
	sessions, err := s.tmux.ListSessions(ctx)
	if err != nil {
		return nil, workspaceOut{}, explain("listing sessions before building "+plan.Session, err)
	}
	if slices.ContainsFunc(sessions, func(ss tmux.Session) bool { return ss.Name == plan.Session }) {
		return nil, workspaceOut{}, fmt.Errorf("session %s already exists; choose another session_name, or call kill_session first; nothing was made", plan.Session)
	}

	first := plan.Windows[0]
	st := s.startShell(ctx, "", "", plan.Environment)
	made, err := s.tmux.NewSession(ctx, tmux.NewOptions{Name: plan.Session, Window: first.Name, Dir: first.Panes[0].Dir, Env: st.env()})
	if err != nil {
		return nil, workspaceOut{}, explain("building workspace "+plan.Session+": creating the session", err)
	}
	s.made(st, made.PaneID, made.PanePID)
	out := workspaceOut{SessionName: made.SessionName}
	err = s.sessionMade(ctx, st, made.SessionID)
	if err == nil {
		err = s.fillWorkspace(ctx, plan, made, &out)
	}
	if err != nil {
		// Leave nothing half-built behind, even when the call was cancelled.
		if _, kerr := s.tmux.Run(context.WithoutCancel(ctx), "kill-session", "-t", made.SessionID); kerr != nil {
			return nil, workspaceOut{}, fmt.Errorf("building workspace %s: %w; removing the partly built session %s failed too: %v", plan.Session, err, made.SessionID, kerr)
		}
		return nil, workspaceOut{}, fmt.Errorf("building workspace %s: %w; the partly built session was removed", plan.Session, err)
	}
	return nil, out, nil
}

// fillWorkspace makes the windows and panes of a plan in the session just
// made, lays them out, types their commands once each pane's shell has
// drawn its first prompt, and selects what has focus.
func (s *Server) fillWorkspace(ctx context.Context, plan workspace.Plan, made tmux.Created, out *workspaceOut) error {
	var focusWindow string
	var focusPanes []string
	var typing []workspace.Typing
	for i, w := range plan.Windows {
		what := fmt.Sprintf("window %d", i)
		if w.Name != "" {
			what = fmt.Sprintf("window %q", w.Name)
		}
		c := made
		if i > 0 {
			var err error
			st := s.startShell(ctx, made.SessionID, "", nil)
			c, err = s.tmux.NewWindow(ctx, tmux.NewOptions{Target: made.SessionName, Name: w.Name, Dir: w.Panes[0].Dir, Env: st.env()})
			if err != nil {
				return explain("creating "+what, err)
			}
			s.made(st, c.PaneID, c.PanePID)
		}
		bw := builtWindow{WindowID: c.WindowID, Panes: []string{c.PaneID}}
		// Between splits a named layout (tiled for a layout string) keeps
		// room for the next pane.
		room := "tiled"
		if w.Named {
			room = w.Layout
		}
		for j, p := range w.Panes[1:] {
			target := bw.Panes[len(bw.Panes)-1]
			st := s.startShell(ctx, target, "", nil)
			sc, err := s.tmux.SplitWindow(ctx, tmux.NewOptions{Target: target, Dir: p.Dir, Env: st.env()})
			if err != nil {
				return explain(fmt.Sprintf("creating pane %d of %s", j+1, what), err)
			}
			s.made(st, sc.PaneID, sc.PanePID)
			bw.Panes = append(bw.Panes, sc.PaneID)
			if _, err := s.tmux.Run(ctx, "select-layout", "-t", c.WindowID, room); err != nil {
				return explain("laying out "+what, err)
			}
		}
		if w.Layout != "" {
			if _, err := s.tmux.Run(ctx, "select-layout", "-t", c.WindowID, w.Layout); err != nil {
				return explain(fmt.Sprintf("applying layout %q to %s", w.Layout, what), err)
			}
		}
		for j, p := range w.Panes {
			if p.Focus {
				focusPanes = append(focusPanes, bw.Panes[j])
			}
			typing = append(typing, workspace.Typing{PaneID: bw.Panes[j], Commands: p.Commands})
		}
		if w.Focus {
			focusWindow = c.WindowID
		}
		out.Windows = append(out.Windows, bw)
	}
	if err := workspace.TypeCommands(ctx, s.tmux, s.hub, typing); err != nil {
		return err
	}
	for _, pane := range focusPanes {
		if _, err := s.tmux.Run(ctx, "select-pane", "-t", pane); err != nil {
			return explain("selecting pane "+pane, err)
		}
	}
	if focusWindow != "" {
		if _, err := s.tmux.Run(ctx, "select-window", "-t", focusWindow); err != nil {
			return explain("selecting window "+focusWindow, err)
		}
	}
	return nil
}
