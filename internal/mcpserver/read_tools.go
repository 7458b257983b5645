package mcpserver

import (
	"context"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

func (s *Server) readTools() []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: "list_sessions", Title: "List sessions", Annotations: readOnly(),
			Description: "Sessions with window and client counts."}, s.listSessions),
		define(&mcp.Tool{Name: "list_windows", Title: "List windows", Annotations: readOnly(),
			Description: "Windows of one session or all."}, s.listWindows),
		define(&mcp.Tool{Name: "list_panes", Title: "List panes", Annotations: readOnly(),
			Description: "Panes with command, path, size, state; isCaller: tmcp's own pane."}, s.listPanes),
		define(&mcp.Tool{Name: "get_server_info", Title: "Server details", Annotations: readOnly(),
			Description: "tmux version, socket, counts, caller's pane, safety tier."}, s.getServerInfo),
		define(&mcp.Tool{Name: "get_pane_info", Title: "Pane details", Annotations: readOnly(),
			Description: "A pane's command, pid, exit status, size, path, title, modes."}, s.getPaneInfo),
		define(&mcp.Tool{Name: "capture_pane", Title: "Read a pane's screen", Annotations: readOnly(),
			Description: "A pane's screen as text; history: true or startLine < 0 reads scrollback."}, s.capturePane),
		define(&mcp.Tool{Name: "display_message", Title: "Expand a tmux format", Annotations: readOnly(),
			Description: "Expand a tmux format; #(), E: and T: refused."}, s.displayMessage),
	}
}

// SessionInfo is one session as tools report it.
type SessionInfo struct {
	SessionID   string `json:"sessionId"`
	SessionName string `json:"sessionName"`
	Windows     int    `json:"windows"`
	Attached    int    `json:"attached" jsonschema:"clients attached, not counting tmcp's own"`
	Created     int64  `json:"created" jsonschema:"Unix time"`
}

type listSessionsIn struct {
	Name     string `json:"name,omitempty"`
	Attached *bool  `json:"attached,omitempty"`
}

type listSessionsOut struct {
	Sessions    []SessionInfo `json:"sessions"`
	Total       int           `json:"total" jsonschema:"sessions before filtering"`
	Unreachable []HostError   `json:"unreachable,omitempty" jsonschema:"hosts not reached in time (only with -host)"`
}

func (s *Server) listSessions(ctx context.Context, _ *mcp.CallToolRequest, in listSessionsIn) (*mcp.CallToolResult, listSessionsOut, error) {
	all, err := s.tmux.ListSessions(ctx)
	if err != nil {
		return nil, listSessionsOut{}, explain("listing sessions", err)
	}
	ours := map[string]int{}
	for _, id := range s.tmux.ControlSessions() {
		ours[id]++
	}
	out := listSessionsOut{Sessions: []SessionInfo{}, Total: len(all)}
	for _, ss := range all {
		attached := max(ss.Attached-ours[ss.ID], 0)
		if in.Name != "" && ss.Name != in.Name || in.Attached != nil && *in.Attached != (attached > 0) {
			continue
		}
		out.Sessions = append(out.Sessions, SessionInfo{SessionID: ss.ID, SessionName: ss.Name, Windows: ss.Windows, Attached: attached, Created: ss.Created})
	}
	if s.host == "" && !localOnly(ctx) {
		s.listRemoteSessions(ctx, in, &out)
	}
	return nil, out, nil
}

// WindowInfo is one window as tools report it.
type WindowInfo struct {
	WindowID    string `json:"windowId"`
	Index       int    `json:"index"`
	Name        string `json:"name"`
	SessionName string `json:"sessionName"`
	Active      bool   `json:"active"`
	Panes       int    `json:"panes"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	Zoomed      bool   `json:"zoomed,omitempty"`
}

type listWindowsIn struct {
	SessionName string `json:"sessionName,omitempty"`
	Name        string `json:"name,omitempty"`
	Active      *bool  `json:"active,omitempty"`
}

type listWindowsOut struct {
	Windows []WindowInfo `json:"windows"`
	Total   int          `json:"total" jsonschema:"windows before filtering"`
}

func (s *Server) listWindows(ctx context.Context, _ *mcp.CallToolRequest, in listWindowsIn) (*mcp.CallToolResult, listWindowsOut, error) {
	if in.SessionName != "" {
		if err := checkSessionName(in.SessionName); err != nil {
			return nil, listWindowsOut{}, err
		}
	}
	all, err := s.tmux.ListWindows(ctx, in.SessionName)
	if err != nil {
		return nil, listWindowsOut{}, explain("listing windows of session "+orAll(in.SessionName), err)
	}
	out := listWindowsOut{Windows: []WindowInfo{}, Total: len(all)}
	for _, w := range all {
		if in.Name != "" && w.Name != in.Name || in.Active != nil && *in.Active != w.Active {
			continue
		}
		out.Windows = append(out.Windows, windowInfo(w))
	}
	return nil, out, nil
}

func windowInfo(w tmux.Window) WindowInfo {
	return WindowInfo{WindowID: w.ID, Index: w.Index, Name: w.Name, SessionName: w.SessionName, Active: w.Active,
		Panes: w.Panes, Width: w.Width, Height: w.Height, Zoomed: w.Zoomed}
}

func orAll(name string) string {
	if name == "" {
		return "(all)"
	}
	return name
}

// PaneSummary is one pane in a listing.
type PaneSummary struct {
	PaneID      string `json:"paneId"`
	SessionName string `json:"sessionName"`
	WindowID    string `json:"windowId"`
	WindowIndex int    `json:"windowIndex"`
	PaneIndex   int    `json:"paneIndex"`
	Active      bool   `json:"active"`
	Command     string `json:"command"`
	PID         int    `json:"pid"`
	Path        string `json:"path"`
	Title       string `json:"title,omitempty"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	Dead        bool   `json:"dead,omitempty"`
	IsCaller    bool   `json:"isCaller"`
	// Shell is known only for a pane tmcp watches whose shell emits marks.
	Shell *ShellState `json:"shell,omitempty" jsonschema:"from its shell's marks (tmcp init)"`
}

// ShellState is what a pane's shell said of itself through its OSC 133
// and OSC 7 marks.
type ShellState struct {
	State          string  `json:"state" jsonschema:"prompt or running"`
	RunningSeconds float64 `json:"runningSeconds,omitempty"`
	LastStatus     *int    `json:"lastStatus,omitempty"`
	Cwd            string  `json:"cwd,omitempty"`
}

// shellState reads a watched pane's marks; nil when it has none.
func (s *Server) shellState(paneID string) *ShellState {
	st := s.hub.Stream(paneID)
	if st == nil {
		return nil
	}
	ps := st.Prompt()
	if !ps.Marks {
		return nil
	}
	out := &ShellState{State: "prompt", Cwd: ps.Cwd}
	if ps.Running {
		out.State, out.RunningSeconds = "running", round3(time.Since(ps.Started).Seconds())
	}
	if ps.HasStatus {
		status := ps.Status
		out.LastStatus = &status
	}
	return out
}

type listPanesIn struct {
	SessionName string `json:"sessionName,omitempty"`
	WindowID    string `json:"windowId,omitempty"`
	Command     string `json:"command,omitempty"`
	PathUnder   string `json:"pathUnder,omitempty" jsonschema:"cwd is this or below"`
	Dead        *bool  `json:"dead,omitempty"`
	Active      *bool  `json:"active,omitempty"`
}

type listPanesOut struct {
	Panes []PaneSummary `json:"panes"`
	Total int           `json:"total" jsonschema:"panes before filtering"`
}

func (s *Server) listPanes(ctx context.Context, _ *mcp.CallToolRequest, in listPanesIn) (*mcp.CallToolResult, listPanesOut, error) {
	if in.WindowID != "" {
		if err := checkWindowID(in.WindowID); err != nil {
			return nil, listPanesOut{}, err
		}
	}
	if in.SessionName != "" {
		if err := checkSessionName(in.SessionName); err != nil {
			return nil, listPanesOut{}, err
		}
	}
	all, err := s.tmux.ListPanesBrief(ctx, in.SessionName, in.WindowID)
	if err != nil {
		return nil, listPanesOut{}, explain("listing panes", err)
	}
	out := listPanesOut{Panes: []PaneSummary{}, Total: len(all)}
	for _, p := range all {
		if in.Command != "" && p.Command != in.Command ||
			in.PathUnder != "" && !pathUnder(p.Path, in.PathUnder) ||
			in.Dead != nil && *in.Dead != p.Dead ||
			in.Active != nil && *in.Active != p.Active {
			continue
		}
		out.Panes = append(out.Panes, s.paneSummary(ctx, p))
	}
	return nil, out, nil
}

// pathUnder reports whether path is dir or inside it.
func pathUnder(path, dir string) bool {
	dir = strings.TrimSuffix(dir, "/")
	return path == dir || strings.HasPrefix(path, dir+"/") || dir == ""
}

type serverInfoOut struct {
	Version     string   `json:"version" jsonschema:"tmux version"`
	SocketPath  string   `json:"socketPath"`
	Running     bool     `json:"running" jsonschema:"a tmux server answers on the socket"`
	Sessions    int      `json:"sessions"`
	Windows     int      `json:"windows"`
	Panes       int      `json:"panes"`
	CallerPane  string   `json:"callerPane,omitempty" jsonschema:"the pane tmcp runs in, if any"`
	Tier        string   `json:"tier" jsonschema:"safety tier in force"`
	TierOffers  string   `json:"tierOffers"`
	ControlMode bool     `json:"controlMode" jsonschema:"commands go over a tmux control-mode client"`
	OwnClients  []string `json:"ownClients,omitempty" jsonschema:"sessions tmcp's own control clients are attached to"`
}

func (s *Server) getServerInfo(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, serverInfoOut, error) {
	out := serverInfoOut{Version: s.tmux.Version(), SocketPath: s.tmux.SocketPath(), Tier: s.cfg.Tier.String(), TierOffers: s.cfg.Tier.Offers()}
	panes, err := s.tmux.ListPanes(ctx, "", "")
	if err != nil {
		return nil, out, explain("reading the server's panes", err)
	}
	sessions, windows := map[string]bool{}, map[string]bool{}
	for _, p := range panes {
		sessions[p.SessionID], windows[p.WindowID] = true, true
	}
	out.Running = len(panes) > 0
	out.Sessions, out.Windows, out.Panes = len(sessions), len(windows), len(panes)
	out.CallerPane = s.callerPane(ctx).PaneID
	out.ControlMode = s.tmux.ControlConnected()
	out.OwnClients = s.tmux.ControlSessions()
	return nil, out, nil
}

type paneIn struct {
	PaneID string `json:"paneId,omitempty"`
}

// PaneDetail is one pane's full state.
type PaneDetail struct {
	PaneSummary
	Dead            bool   `json:"dead"`
	ExitStatus      *int   `json:"exitStatus,omitempty" jsonschema:"status the dead pane's process exited with"`
	ExitSignal      int    `json:"exitSignal,omitempty" jsonschema:"signal that killed the dead pane's process"`
	TTY             string `json:"tty"`
	HistorySize     int    `json:"historySize" jsonschema:"lines of history held"`
	HistoryLimit    int    `json:"historyLimit"`
	InCopyMode      bool   `json:"inCopyMode"`
	Mode            string `json:"mode,omitempty"`
	AlternateScreen bool   `json:"alternateScreen" jsonschema:"a full-screen program owns the pane"`
	CursorX         int    `json:"cursorX"`
	CursorY         int    `json:"cursorY"`
}

func (s *Server) getPaneInfo(ctx context.Context, _ *mcp.CallToolRequest, in paneIn) (*mcp.CallToolResult, PaneDetail, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, PaneDetail{}, err
	}
	p, err := s.tmux.PaneInfo(ctx, id)
	if err != nil {
		return nil, PaneDetail{}, explain("reading pane "+id, err)
	}
	return nil, s.paneDetail(ctx, p), nil
}

// paneSummary reports a pane as the listings do.
func (s *Server) paneSummary(ctx context.Context, p tmux.Pane) PaneSummary {
	return PaneSummary{PaneID: p.ID, SessionName: p.SessionName, WindowID: p.WindowID, WindowIndex: p.WindowIndex,
		PaneIndex: p.Index, Active: p.Active, Command: p.Command, PID: p.PID, Path: p.Path, Title: p.Title,
		Width: p.Width, Height: p.Height, Dead: p.Dead, IsCaller: s.isCaller(ctx, p.ID), Shell: s.shellState(p.ID)}
}

// paneDetail reports a pane's state as the tools do.
func (s *Server) paneDetail(ctx context.Context, p tmux.Pane) PaneDetail {
	d := PaneDetail{
		PaneSummary: s.paneSummary(ctx, p),
		Dead:        p.Dead, TTY: p.TTY, HistorySize: p.HistorySize, HistoryLimit: p.HistoryLimit,
		InCopyMode: p.Mode == "copy-mode", Mode: p.Mode, AlternateScreen: p.AlternateOn, CursorX: p.CursorX, CursorY: p.CursorY,
	}
	if p.Dead && p.DeadStatus >= 0 && p.DeadSignal == 0 {
		status := p.DeadStatus
		d.ExitStatus = &status
	}
	if p.Dead && p.DeadSignal > 0 {
		d.ExitSignal = p.DeadSignal
	}
	return d
}

type capturePaneIn struct {
	PaneID    string `json:"paneId,omitempty"`
	History   bool   `json:"history,omitempty"`
	StartLine *int   `json:"startLine,omitempty"`
	EndLine   *int   `json:"endLine,omitempty"`
	Styles    bool   `json:"styles,omitempty" jsonschema:"keep colour escapes"`
	MaxLines  int    `json:"maxLines,omitempty"`
	MaxBytes  int    `json:"maxBytes,omitempty"`
}

type capturePaneOut struct {
	PaneID string `json:"paneId"`
	Lines  int    `json:"lines" jsonschema:"lines returned, in the second content block"`
	pane.Truncation
}

func (s *Server) capturePane(ctx context.Context, _ *mcp.CallToolRequest, in capturePaneIn) (*mcp.CallToolResult, capturePaneOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, capturePaneOut{}, err
	}
	rows, err := s.tmux.CapturePane(ctx, id, tmux.CaptureOptions{Start: in.StartLine, End: in.EndLine, History: in.History, Styles: in.Styles})
	if err != nil {
		return nil, capturePaneOut{}, explain("capturing pane "+id, err)
	}
	maxLines, maxBytes := limits(in.MaxLines, in.MaxBytes)
	lines, tr := pane.Tail(pane.TrimBlank(rows), maxLines, maxBytes)
	out := capturePaneOut{PaneID: id, Lines: len(lines), Truncation: tr}
	return textResult(out, strings.Join(lines, "\n")), out, nil
}

type displayMessageIn struct {
	Format   string `json:"format"`
	PaneID   string `json:"paneId,omitempty"`
	WindowID string `json:"windowId,omitempty"`
	Session  string `json:"sessionName,omitempty"`
}

type displayMessageOut struct {
	Target string `json:"target"`
	pane.Truncation
}

func (s *Server) displayMessage(ctx context.Context, _ *mcp.CallToolRequest, in displayMessageIn) (*mcp.CallToolResult, displayMessageOut, error) {
	if err := tmux.CheckFormat(in.Format); err != nil {
		return nil, displayMessageOut{}, err
	}
	var target, label string
	var err error
	switch {
	case in.WindowID != "":
		target, err = in.WindowID, checkWindowID(in.WindowID)
		label = target
	case in.Session != "":
		target, err = tmux.SessionTarget(in.Session), checkSessionName(in.Session)
		label = in.Session
	default:
		target, err = s.pane(ctx, in.PaneID)
		label = target
	}
	if err != nil {
		return nil, displayMessageOut{}, err
	}
	lines, err := s.tmux.Expand(ctx, target, in.Format)
	if err != nil {
		return nil, displayMessageOut{}, explain("expanding the format for "+label, err)
	}
	text, tr := pane.Tail(lines, DefaultMaxLines, DefaultMaxBytes)
	out := displayMessageOut{Target: label, Truncation: tr}
	return textResult(out, strings.Join(text, "\n")), out, nil
}
