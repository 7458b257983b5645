package mcpserver

import (
	"context"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/wait"
)

// maxSearchLines bounds the matching lines search_panes returns per pane.
const maxSearchLines = 20

func (s *Server) inspectTools() []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: "search_panes", Title: "Search panes", Annotations: readOnly(),
			Description: "Panes showing pattern, with the matching lines."}, s.searchPanes),
		define(&mcp.Tool{Name: "snapshot_pane", Title: "Snapshot a pane", Annotations: readOnly(),
			Description: "A pane's state and screen in one call."}, s.snapshotPane),
		define(&mcp.Tool{Name: "get_session_info", Title: "Session details", Annotations: readOnly(),
			Description: "One session and its windows."}, s.getSessionInfo),
		define(&mcp.Tool{Name: "get_window_info", Title: "Window details", Annotations: readOnly(),
			Description: "One window: size, layout and panes."}, s.getWindowInfo),
	}
}

type searchPanesIn struct {
	Pattern     string `json:"pattern"`
	Regex       bool   `json:"regex,omitempty"`
	MatchCase   *bool  `json:"matchCase,omitempty" jsonschema:"default true"`
	SessionName string `json:"sessionName,omitempty"`
}

// PaneMatch is a pane whose screen matched, with the lines that did.
type PaneMatch struct {
	PaneID      string   `json:"paneId"`
	SessionName string   `json:"sessionName"`
	WindowID    string   `json:"windowId"`
	Command     string   `json:"command"`
	Lines       []string `json:"lines,omitempty" jsonschema:"the text block holds them too, fenced, under --- paneId ---"`
	MoreLines   int      `json:"moreLines,omitempty" jsonschema:"matching lines not returned"`
}

type searchPanesOut struct {
	Matches  []PaneMatch `json:"matches"`
	Searched int         `json:"searched" jsonschema:"panes searched"`
}

func (s *Server) searchPanes(ctx context.Context, _ *mcp.CallToolRequest, in searchPanesIn) (*mcp.CallToolResult, searchPanesOut, error) {
	m, err := wait.NewMatcher([]string{in.Pattern}, nil, in.Regex, in.MatchCase == nil || *in.MatchCase)
	if err != nil {
		return nil, searchPanesOut{}, err
	}
	if in.SessionName != "" {
		if err := checkSessionName(in.SessionName); err != nil {
			return nil, searchPanesOut{}, err
		}
	}
	panes, err := s.tmux.ListPanes(ctx, in.SessionName, "")
	if err != nil {
		return nil, searchPanesOut{}, explain("listing panes to search", err)
	}
	out := searchPanesOut{Matches: []PaneMatch{}, Searched: len(panes)}
	for _, p := range panes {
		rows, err := s.tmux.CapturePane(ctx, p.ID, tmux.CaptureOptions{})
		if err != nil {
			continue // the pane went away meanwhile
		}
		match := PaneMatch{PaneID: p.ID, SessionName: p.SessionName, WindowID: p.WindowID, Command: p.Command, Lines: []string{}}
		for _, row := range rows {
			if _, ok := m.Match(row); !ok {
				continue
			}
			if len(match.Lines) < maxSearchLines {
				match.Lines = append(match.Lines, strings.TrimRight(row, " "))
			} else {
				match.MoreLines++
			}
		}
		if len(match.Lines) > 0 {
			out.Matches = append(out.Matches, match)
		}
	}
	// The matching lines are pane text: the text block holds them, fenced,
	// and the fields block the rest.
	shown := searchPanesOut{Matches: make([]PaneMatch, len(out.Matches)), Searched: out.Searched}
	var text []string
	for i, m := range out.Matches {
		text = append(text, "--- "+m.PaneID+" ---")
		text = append(text, m.Lines...)
		m.Lines = nil
		shown.Matches[i] = m
	}
	return textResult(shown, strings.Join(text, "\n")), out, nil
}

type snapshotPaneIn struct {
	PaneID   string `json:"paneId,omitempty"`
	MaxLines int    `json:"maxLines,omitempty"`
	MaxBytes int    `json:"maxBytes,omitempty"`
}

type snapshotPaneOut struct {
	PaneDetail
	Lines int `json:"lines" jsonschema:"screen lines, in the second content block"`
	pane.Truncation
}

func (s *Server) snapshotPane(ctx context.Context, _ *mcp.CallToolRequest, in snapshotPaneIn) (*mcp.CallToolResult, snapshotPaneOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, snapshotPaneOut{}, err
	}
	p, err := s.tmux.PaneInfo(ctx, id)
	if err != nil {
		return nil, snapshotPaneOut{}, explain("reading pane "+id, err)
	}
	rows, err := s.tmux.CapturePane(ctx, id, tmux.CaptureOptions{})
	if err != nil {
		return nil, snapshotPaneOut{}, explain("capturing pane "+id, err)
	}
	maxLines, maxBytes := limits(in.MaxLines, in.MaxBytes)
	lines, tr := pane.Tail(pane.TrimBlank(rows), maxLines, maxBytes)
	out := snapshotPaneOut{PaneDetail: s.paneDetail(ctx, p), Lines: len(lines), Truncation: tr}
	return textResult(out, strings.Join(lines, "\n")), out, nil
}

type sessionInfoOut struct {
	SessionInfo
	Windows []WindowInfo `json:"windowList"`
}

func (s *Server) getSessionInfo(ctx context.Context, _ *mcp.CallToolRequest, in sessionIn) (*mcp.CallToolResult, sessionInfoOut, error) {
	name := in.SessionName
	if name != "" {
		if err := checkSessionName(name); err != nil {
			return nil, sessionInfoOut{}, err
		}
	}
	// One listing both finds the only session, when none is named, and
	// describes it.
	_, listed, err := s.listSessions(ctx, nil, listSessionsIn{Name: name})
	if err != nil {
		return nil, sessionInfoOut{}, err
	}
	if name == "" {
		if name, err = only("sessionName", "list_sessions", idsOf(listed.Sessions, func(si SessionInfo) string { return si.SessionName })); err != nil {
			return nil, sessionInfoOut{}, err
		}
	}
	if len(listed.Sessions) != 1 {
		return nil, sessionInfoOut{}, explain("reading session "+name, &tmux.CommandError{Message: "can't find session: " + name})
	}
	windows, err := s.tmux.ListWindows(ctx, name)
	if err != nil {
		return nil, sessionInfoOut{}, explain("listing the windows of session "+name, err)
	}
	out := sessionInfoOut{SessionInfo: listed.Sessions[0], Windows: []WindowInfo{}}
	for _, w := range windows {
		out.Windows = append(out.Windows, windowInfo(w))
	}
	return nil, out, nil
}

type windowInfoOut struct {
	WindowInfo
	Layout string        `json:"layout"`
	Panes  []PaneSummary `json:"paneList"`
}

func (s *Server) getWindowInfo(ctx context.Context, _ *mcp.CallToolRequest, in windowIn) (*mcp.CallToolResult, windowInfoOut, error) {
	id, err := s.window(ctx, in.WindowID)
	if err != nil {
		return nil, windowInfoOut{}, err
	}
	windows, err := s.tmux.ListWindows(ctx, "")
	if err != nil {
		return nil, windowInfoOut{}, explain("reading window "+id, err)
	}
	i := slices.IndexFunc(windows, func(w tmux.Window) bool { return w.ID == id })
	if i < 0 {
		return nil, windowInfoOut{}, explain("reading window "+id, &tmux.CommandError{Message: "can't find window: " + id})
	}
	out := windowInfoOut{WindowInfo: windowInfo(windows[i]), Layout: windows[i].Layout}
	_, panes, err := s.listPanes(ctx, nil, listPanesIn{WindowID: id})
	if err != nil {
		return nil, windowInfoOut{}, err
	}
	out.Panes = panes.Panes
	return nil, out, nil
}
