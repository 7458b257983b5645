package mcpserver

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/tmcp/tmcp/internal/tmux"
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
	ids, err := s.paneIDs(ctx)
	if err != nil {
		return "", explain("listing panes to find the target", err)
	}
	return only("paneId", "list_panes", ids)
}

// window returns the window a call targets, as pane does for panes.
func (s *Server) window(ctx context.Context, id string) (string, error) {
	if id != "" {
		return id, checkWindowID(id)
	}
	ids, err := s.windowIDs(ctx)
	if err != nil {
		return "", explain("listing windows to find the target", err)
	}
	return only("windowId", "list_windows", ids)
}

// session returns the session a call targets, as pane does for panes.
func (s *Server) session(ctx context.Context, name string) (string, error) {
	if name != "" {
		return name, checkSessionName(name)
	}
	names, err := s.sessionNames(ctx)
	if err != nil {
		return "", explain("listing sessions to find the target", err)
	}
	return only("sessionName", "list_sessions", names)
}

// paneIDs lists the server's pane ids.
func (s *Server) paneIDs(ctx context.Context) ([]string, error) {
	panes, err := s.tmux.ListPanes(ctx, "", "")
	return idsOf(panes, func(p tmux.Pane) string { return p.ID }), err
}

// windowIDs lists the server's window ids.
func (s *Server) windowIDs(ctx context.Context) ([]string, error) {
	windows, err := s.tmux.ListWindows(ctx, "")
	return idsOf(windows, func(w tmux.Window) string { return w.ID }), err
}

// sessionNames lists the server's session names.
func (s *Server) sessionNames(ctx context.Context) ([]string, error) {
	sessions, err := s.tmux.ListSessions(ctx)
	return idsOf(sessions, func(ss tmux.Session) string { return ss.Name }), err
}

func idsOf[T any](items []T, id func(T) string) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = id(it)
	}
	return ids
}

// only picks the single candidate or says why it cannot.
func only(arg, lister string, ids []string) (string, error) {
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("no %s to default to: the server has none; call create_session", arg)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%s is required: there are %d (%s); call %s to choose", arg, len(ids), firstIDs(ids), lister)
}

// firstIDs joins the first maxListedIDs ids for a message.
func firstIDs(ids []string) string {
	if len(ids) > maxListedIDs {
		ids = append(ids[:maxListedIDs:maxListedIDs], "…")
	}
	return strings.Join(ids, ", ")
}
