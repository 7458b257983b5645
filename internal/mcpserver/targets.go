package mcpserver

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

var (
	paneIDPattern   = regexp.MustCompile(`^%[0-9]+$`)
	windowIDPattern = regexp.MustCompile(`^@[0-9]+$`)
)

// maxListedIDs bounds the ids quoted in an "which one?" error.
const maxListedIDs = 8

func checkPaneID(id string) error {
	if !paneIDPattern.MatchString(id) {
		return fmt.Errorf("paneId %q is not a pane id (like %%3); call list_panes", id)
	}
	return nil
}

func checkWindowID(id string) error {
	if !windowIDPattern.MatchString(id) {
		return fmt.Errorf("windowId %q is not a window id (like @2); call list_windows", id)
	}
	return nil
}

func checkSessionName(name string) error {
	if name == "" || strings.ContainsRune(name, 0) {
		return fmt.Errorf("sessionName %q is not a session name; call list_sessions", name)
	}
	return nil
}

// pane returns the pane a call targets: the id given, checked, or the only
// pane of the server when none is given. Several panes are refused, not
// guessed between.
func (s *Server) pane(ctx context.Context, id string) (string, error) {
	if id != "" {
		return id, checkPaneID(id)
	}
	panes, err := s.tmux.ListPanes(ctx, "", "")
	if err != nil {
		return "", explain("listing panes to find the target", err)
	}
	ids := make([]string, len(panes))
	for i, p := range panes {
		ids[i] = p.ID
	}
	return only("paneId", "list_panes", ids)
}

// window returns the window a call targets, as pane does for panes.
func (s *Server) window(ctx context.Context, id string) (string, error) {
	if id != "" {
		return id, checkWindowID(id)
	}
	windows, err := s.tmux.ListWindows(ctx, "")
	if err != nil {
		return "", explain("listing windows to find the target", err)
	}
	ids := make([]string, len(windows))
	for i, w := range windows {
		ids[i] = w.ID
	}
	return only("windowId", "list_windows", ids)
}

// session returns the session a call targets, as pane does for panes.
func (s *Server) session(ctx context.Context, name string) (string, error) {
	if name != "" {
		return name, checkSessionName(name)
	}
	sessions, err := s.tmux.ListSessions(ctx)
	if err != nil {
		return "", explain("listing sessions to find the target", err)
	}
	names := make([]string, len(sessions))
	for i, ss := range sessions {
		names[i] = ss.Name
	}
	return only("sessionName", "list_sessions", names)
}

// only picks the single candidate or says why it cannot.
func only(arg, lister string, ids []string) (string, error) {
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("no %s to default to: the server has none; call create_session", arg)
	case 1:
		return ids[0], nil
	}
	shown := ids
	if len(shown) > maxListedIDs {
		shown = append(shown[:maxListedIDs:maxListedIDs], "…")
	}
	return "", fmt.Errorf("%s is required: there are %d (%s); call %s to choose", arg, len(ids), strings.Join(shown, ", "), lister)
}
