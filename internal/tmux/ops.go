package tmux

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Session is one tmux session.
type Session struct {
	ID       string // "$1"
	Name     string
	Windows  int
	Attached int   // clients attached, tmcp's own included
	Created  int64 // Unix time
	Activity int64 // Unix time of the last activity
}

var sessionVars = []string{"session_id", "session_name", "session_windows", "session_attached", "session_created", "session_activity"}

func scanSession(r *fields) Session {
	return Session{ID: r.str(), Name: r.str(), Windows: r.num(), Attached: r.num(), Created: int64(r.num()), Activity: int64(r.num())}
}

// Window is one tmux window.
type Window struct {
	ID          string // "@2"
	Index       int
	Name        string
	SessionID   string
	SessionName string
	Active      bool
	Panes       int
	Width       int
	Height      int
	Layout      string
	Zoomed      bool
}

var windowVars = []string{"window_id", "window_index", "window_name", "session_id", "session_name", "window_active", "window_panes", "window_width", "window_height", "window_layout", "window_zoomed_flag"}

func scanWindow(r *fields) Window {
	return Window{ID: r.str(), Index: r.num(), Name: r.str(), SessionID: r.str(), SessionName: r.str(), Active: r.flag(),
		Panes: r.num(), Width: r.num(), Height: r.num(), Layout: r.str(), Zoomed: r.flag()}
}

// Pane is one tmux pane and its state.
type Pane struct {
	ID           string // "%3"
	Index        int
	WindowID     string
	WindowIndex  int
	WindowName   string
	SessionID    string
	SessionName  string
	Active       bool // the active pane of its window
	Command      string
	PID          int
	TTY          string
	Path         string
	Title        string
	Width        int
	Height       int
	Dead         bool
	DeadStatus   int // exit status of a dead pane's process; -1 if it had none
	DeadSignal   int // signal that killed a dead pane's process, or 0
	HistorySize  int
	HistoryLimit int
	InMode       bool   // in copy mode or another mode
	Mode         string // the mode's name, such as "copy-mode"
	AlternateOn  bool   // a full-screen program owns the screen
	CursorX      int
	CursorY      int
	StartCommand string // the command the pane was made with; empty for the default shell
	CursorShown  bool   // the program has not hidden the cursor
	Piped        bool   // a pipe-pane pipe is open on the pane
	// ShellMarks is the pane's @tmcp_marks option: "PID NAME NONCE", set
	// by the shell that loaded tmcp's integration as it started.
	ShellMarks string
}

var paneVars = []string{"pane_id", "pane_index", "window_id", "window_index", "window_name", "session_id", "session_name",
	"pane_active", "pane_current_command", "pane_pid", "pane_tty", "pane_current_path", "pane_title", "pane_width",
	"pane_height", "pane_dead", "pane_dead_status", "pane_dead_signal", "history_size", "history_limit", "pane_in_mode", "pane_mode",
	"alternate_on", "cursor_x", "cursor_y", "pane_start_command", "cursor_flag", "pane_pipe", ShellMarksOption}

// ShellMarksOption is the pane option a shell that loaded tmcp's shell
// integration sets as it starts (see [Pane].ShellMarks).
const ShellMarksOption = "@tmcp_marks"

// PaneListFormat is the -F format ListPanes asks tmux for: what a
// benchmark needs to time tmux's own share of listing panes.
func PaneListFormat() string { return listFormat(paneVars) }

// Death says how a dead pane's process ended.
func (p Pane) Death() string {
	switch {
	case p.DeadSignal > 0:
		return fmt.Sprintf("killed by signal %d", p.DeadSignal)
	case p.DeadStatus >= 0:
		return fmt.Sprintf("exit status %d", p.DeadStatus)
	}
	return "exit status unknown"
}

func scanPane(r *fields) Pane {
	return Pane{ID: r.str(), Index: r.num(), WindowID: r.str(), WindowIndex: r.num(), WindowName: r.str(),
		SessionID: r.str(), SessionName: r.str(), Active: r.flag(), Command: r.str(), PID: r.num(), TTY: r.str(),
		Path: r.str(), Title: r.str(), Width: r.num(), Height: r.num(), Dead: r.flag(), DeadStatus: r.numOr(-1), DeadSignal: r.num(),
		HistorySize: r.num(), HistoryLimit: r.num(), InMode: r.flag(), Mode: r.str(), AlternateOn: r.flag(),
		CursorX: r.num(), CursorY: r.num(), StartCommand: r.str(), CursorShown: r.flag(), Piped: r.flag(), ShellMarks: r.str()}
}

// list runs a list command with a format for vars and scans each record.
func list[T any](ctx context.Context, c *Client, args []string, vars []string, scan func(*fields) T) ([]T, error) {
	out, err := c.Run(ctx, append(args, "-F", listFormat(vars))...)
	if err != nil {
		return nil, err
	}
	recs, err := parseRecords(out, len(vars))
	if err != nil {
		return nil, fmt.Errorf("tmux %s: %w", args[0], err)
	}
	items := make([]T, 0, len(recs))
	for _, rec := range recs {
		r := &fields{f: rec}
		item := scan(r)
		if r.err != nil {
			return nil, fmt.Errorf("tmux %s: %w", args[0], r.err)
		}
		items = append(items, item)
	}
	return items, nil
}

// ListSessions lists every session. With no server running it returns no
// sessions and no error.
func (c *Client) ListSessions(ctx context.Context) ([]Session, error) {
	s, err := list(ctx, c, []string{"list-sessions"}, sessionVars, scanSession)
	if IsNoServer(err) {
		return nil, nil
	}
	return s, err
}

// ListWindows lists the windows of one session, or of all sessions when
// session is empty.
func (c *Client) ListWindows(ctx context.Context, session string) ([]Window, error) {
	args := []string{"list-windows", "-a"}
	if session != "" {
		args = []string{"list-windows", "-t", SessionTarget(session)}
	}
	w, err := list(ctx, c, args, windowVars, scanWindow)
	if IsNoServer(err) {
		return nil, nil
	}
	return w, err
}

// ListPanes lists panes: of one window when window is set, else of one
// session when session is set, else all.
func (c *Client) ListPanes(ctx context.Context, session, window string) ([]Pane, error) {
	return c.listPanes(ctx, session, window, paneVars, scanPane)
}

// listPanes lists the panes ListPanes would, asking tmux for vars.
func (c *Client) listPanes(ctx context.Context, session, window string, vars []string, scan func(*fields) Pane) ([]Pane, error) {
	args := []string{"list-panes", "-a"}
	switch {
	case window != "":
		args = []string{"list-panes", "-t", window}
	case session != "":
		args = []string{"list-panes", "-s", "-t", SessionTarget(session)}
	}
	p, err := list(ctx, c, args, vars, scan)
	if IsNoServer(err) {
		return nil, nil
	}
	return p, err
}

// briefPaneVars are the fields ListPanesBrief asks for: tmux spends time
// on each field of each pane (on a 2-core machine, about 18 µs for the
// pane's command, 9 for its path, 1 to 3 for most others), so a listing
// of many panes asks only for what it reports.
var briefPaneVars = []string{"pane_id", "pane_index", "window_id", "window_index", "session_id", "session_name",
	"pane_active", "pane_current_command", "pane_pid", "pane_current_path", "pane_title", "pane_width", "pane_height", "pane_dead"}

func scanBriefPane(r *fields) Pane {
	return Pane{ID: r.str(), Index: r.num(), WindowID: r.str(), WindowIndex: r.num(), SessionID: r.str(), SessionName: r.str(),
		Active: r.flag(), Command: r.str(), PID: r.num(), Path: r.str(), Title: r.str(), Width: r.num(), Height: r.num(), Dead: r.flag(),
		DeadStatus: -1}
}

// BriefPaneListFormat is the -F format ListPanesBrief asks tmux for.
func BriefPaneListFormat() string { return listFormat(briefPaneVars) }

// ListPanesBrief is ListPanes for a summary of many panes: each Pane holds
// only its id, index, window id and index, session, active flag, command,
// process, path, title, size and dead flag; the other fields are zero
// (DeadStatus -1).
func (c *Client) ListPanesBrief(ctx context.Context, session, window string) ([]Pane, error) {
	return c.listPanes(ctx, session, window, briefPaneVars, scanBriefPane)
}

// PaneInfo returns the state of one pane.
func (c *Client) PaneInfo(ctx context.Context, pane string) (Pane, error) {
	p, err := list(ctx, c, []string{"display-message", "-p", "-t", pane}, paneVars, scanPane)
	if err != nil {
		return Pane{}, err
	}
	// display-message answers a missing target with nothing, not an error.
	if len(p) != 1 || p[0].ID == "" || strings.HasPrefix(pane, "%") && p[0].ID != pane {
		return Pane{}, &CommandError{Args: []string{"display-message", "-t", pane}, Message: "can't find pane: " + pane}
	}
	return p[0], nil
}

// Expand expands a format for a target (a pane, window or session). tmux
// answers a missing target with an empty line, not an error, so the
// target's session id rides along to tell the two apart.
func (c *Client) Expand(ctx context.Context, target, format string) ([]string, error) {
	out, err := c.Run(ctx, "display-message", "-p", "-t", target, "#{session_id}"+fieldSep+format)
	if err != nil {
		return nil, err
	}
	var session, first string
	if len(out) > 0 {
		session, first, _ = strings.Cut(out[0], fieldSep)
	}
	if session == "" {
		return nil, &CommandError{Args: []string{"display-message", "-t", target}, Message: "can't find " + targetKind(target) + ": " + target}
	}
	out[0] = first
	return out, nil
}

// Fields returns the values of format variables for one target (a pane,
// window or session), in order. A missing target is an error naming it.
func (c *Client) Fields(ctx context.Context, target string, vars ...string) ([]string, error) {
	out, err := c.Expand(ctx, target, listFormat(vars))
	if err != nil {
		return nil, err
	}
	recs, err := parseRecords(out, len(vars))
	if err != nil || len(recs) != 1 {
		return nil, fmt.Errorf("reading %s of %s: unexpected answer %q", strings.Join(vars, ", "), target, out)
	}
	return recs[0], nil
}

// targetKind names what a target points at, for messages.
func targetKind(target string) string {
	switch {
	case strings.HasPrefix(target, "%"):
		return "pane"
	case strings.HasPrefix(target, "@"):
		return "window"
	}
	return "session"
}

// SessionTarget returns a target that matches the session named name
// exactly (tmux otherwise takes a prefix or a pattern), or the id itself.
// The trailing colon makes it valid where tmux expects a window or a pane
// too, naming the session's current one.
func SessionTarget(name string) string {
	if strings.HasPrefix(name, "$") {
		return name + ":"
	}
	return "=" + name + ":"
}

// IsNoServer reports whether err says no tmux server is running.
func IsNoServer(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "no server running") ||
		strings.Contains(err.Error(), "error connecting to") ||
		strings.Contains(err.Error(), "server exited unexpectedly"))
}

// CaptureOptions select what CapturePane returns.
type CaptureOptions struct {
	Start, End *int // rows: 0 is the top visible row, negative is history
	History    bool // from the start of history (overrides Start)
	Styles     bool // keep colour and attribute escapes
	// AsDrawn keeps the rows as the screen shows them: a wrapped line
	// stays on its rows, and trailing spaces (which may carry a
	// background colour) are kept.
	AsDrawn bool
}

// CapturePane returns the rows of a pane, wrapped rows joined unless
// AsDrawn.
func (c *Client) CapturePane(ctx context.Context, pane string, o CaptureOptions) ([]string, error) {
	args := []string{"capture-pane", "-p", "-J", "-t", pane}
	if o.AsDrawn {
		args[2] = "-N"
	}
	switch {
	case o.History:
		args = append(args, "-S", "-")
	case o.Start != nil:
		args = append(args, "-S", strconv.Itoa(*o.Start))
	}
	if o.End != nil {
		args = append(args, "-E", strconv.Itoa(*o.End))
	}
	if o.Styles {
		args = append(args, "-e")
	}
	return c.Run(ctx, args...)
}

// SendKeys types keys into a pane. With literal, each key is sent as text
// with no key-name lookup. A key starting with "-" is a key, never an
// option of send-keys.
func (c *Client) SendKeys(ctx context.Context, pane string, literal bool, keys ...string) error {
	args := []string{"send-keys", "-t", pane}
	if literal {
		args = append(args, "-l")
	}
	_, err := c.Run(ctx, append(append(args, "--"), keys...)...)
	return err
}

// Rename renames a session (target "$1:" or "=name:") or a window ("@2"),
// literally: the name is never expanded as a format, and one starting with
// "-" is a name, not an option.
func (c *Client) Rename(ctx context.Context, target, name string) error {
	cmd := "rename-session"
	if targetKind(target) == "window" {
		cmd = "rename-window"
	}
	_, err := c.Run(ctx, cmd, "-t", target, "--", EscapeFormat(name))
	return err
}

// Paste puts text into a pane through a private tmux buffer, which is
// deleted afterwards whatever happens. With bracketed, programs that asked
// for bracketed paste receive it as a paste, not as typing.
func (c *Client) Paste(ctx context.Context, pane, text string, bracketed bool) error {
	buf := privateBufferPrefix + randomHex(privateBufferRandom)
	if err := c.SetBuffer(ctx, buf, text); err != nil {
		return err
	}
	if err := c.PasteBuffer(ctx, buf, pane, bracketed, true); err != nil {
		_ = c.DeleteBuffer(context.WithoutCancel(ctx), buf)
		return err
	}
	return nil
}

// NewOptions describe a session, window or pane to create. Names and the
// start directory are passed literally (never expanded as formats).
type NewOptions struct {
	Name       string // session or window name
	Window     string // first window's name, for a new session
	Dir        string // start directory
	Command    string // shell command to run instead of the default shell
	Width      int    // session size, cells
	Height     int
	Target     string // session (for a window) or pane (for a split)
	Horizontal bool   // split left/right instead of top/bottom
	Before     bool   // split: new pane left of or above the target
	Size       string // split: cells ("20") or a percentage ("30%")
	Env        []string
}

var createdVars = []string{"session_id", "session_name", "window_id", "window_index", "window_name", "pane_id", "pane_pid"}

// Created names what a create command made.
type Created struct {
	SessionID, SessionName, WindowID string
	WindowIndex                      int
	WindowName, PaneID               string
	PanePID                          int // the new pane's process
}

func scanCreated(r *fields) Created {
	return Created{SessionID: r.str(), SessionName: r.str(), WindowID: r.str(), WindowIndex: r.num(), WindowName: r.str(), PaneID: r.str(),
		PanePID: r.num()}
}

func (o NewOptions) common(args []string) []string {
	if o.Dir != "" {
		args = append(args, "-c", EscapeFormat(o.Dir))
	}
	for _, kv := range o.Env {
		args = append(args, "-e", kv)
	}
	return args
}

func (c *Client) create(ctx context.Context, args []string, command string) (Created, error) {
	args = append(args, "-P", "-F", listFormat(createdVars))
	if command != "" {
		// "--": a command starting with "-" is a command, not an option.
		args = append(args, "--", command)
	}
	out, err := c.Run(ctx, args...)
	if err != nil {
		return Created{}, err
	}
	recs, err := parseRecords(out, len(createdVars))
	if err != nil || len(recs) != 1 {
		return Created{}, fmt.Errorf("tmux %s: unexpected answer %q", args[0], out)
	}
	return scanCreated(&fields{f: recs[0]}), nil
}

// NewSession creates a detached session.
func (c *Client) NewSession(ctx context.Context, o NewOptions) (Created, error) {
	args := []string{"new-session", "-d"}
	if o.Name != "" {
		args = append(args, "-s", EscapeFormat(o.Name))
	}
	if o.Window != "" {
		args = append(args, "-n", EscapeFormat(o.Window))
	}
	if o.Width > 0 {
		args = append(args, "-x", strconv.Itoa(o.Width))
	}
	if o.Height > 0 {
		args = append(args, "-y", strconv.Itoa(o.Height))
	}
	return c.create(ctx, o.common(args), o.Command)
}

// NewWindow creates a window in a session without selecting it.
func (c *Client) NewWindow(ctx context.Context, o NewOptions) (Created, error) {
	args := []string{"new-window", "-d"}
	if o.Target != "" {
		args = append(args, "-t", SessionTarget(o.Target))
	}
	if o.Name != "" {
		args = append(args, "-n", EscapeFormat(o.Name))
	}
	return c.create(ctx, o.common(args), o.Command)
}

// SplitWindow splits a pane without selecting the new one.
func (c *Client) SplitWindow(ctx context.Context, o NewOptions) (Created, error) {
	args := []string{"split-window", "-d"}
	if o.Target != "" {
		args = append(args, "-t", o.Target)
	}
	if o.Horizontal {
		args = append(args, "-h")
	} else {
		args = append(args, "-v")
	}
	if o.Before {
		args = append(args, "-b")
	}
	if o.Size != "" {
		args = append(args, "-l", o.Size)
	}
	return c.create(ctx, o.common(args), o.Command)
}
