package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/wait"
)

// Default waits, before the ceiling clamps them. Each sits under
// wait.DefaultCeiling, so a call that asks for no timeout is not clamped.
const (
	defaultRunTimeout     = 40 * time.Second
	defaultWaitTimeout    = 30 * time.Second
	defaultRunMaxLines    = 500
	defaultWaitTailLines  = 100
	defaultChannelTimeout = 30 * time.Second
)

func (s *Server) waitTools() []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: "run_command", Title: "Run a command", Annotations: mutating(false),
			Description: "Run a shell command as written (in a subshell) in a pane: exit status, exact output; past timeoutSeconds, a jobId for get_job."}, s.runCommand),
		define(&mcp.Tool{Name: "get_job", Title: "Check a job", Annotations: readOnly(),
			Description: "A run_command job's status and output; timeoutSeconds waits for it. Call again to wait longer."}, s.getJob),
		define(&mcp.Tool{Name: "wait_for_text", Title: "Wait for text", Annotations: readOnly(),
			Description: "Wait for a line matching patterns in what a pane prints after the call or cursor, echoed keys aside (stop: failure; idleSeconds: end once quiet). To wait longer, call again with the returned cursor. paneIds (@window, $session too): first to match; mode all: each."}, s.waitForText),
		define(&mcp.Tool{Name: "wait_for_command", Title: "Wait for a command to end", Annotations: readOnly(),
			Description: "Wait until the command in a pane (at a prompt: the next) ends: status, duration, output. Needs tmcp init's marks; paneIds, mode as wait_for_text."}, s.waitForCommand),
		define(&mcp.Tool{Name: "wait_for_channel", Title: "Wait for a channel", Annotations: readOnly(),
			Description: "Wait until a wait-for channel is signalled (signal_channel, or wait-for -S); a,b: first; a+b: all. Call again to wait longer."}, s.waitForChannel),
		define(&mcp.Tool{Name: "signal_channel", Title: "Signal a channel", Annotations: mutating(false),
			Description: "Signal a wait-for channel."}, s.signalChannel),
		define(&mcp.Tool{Name: "capture_since", Title: "Read new output", Annotations: readOnly(),
			Description: "Only what a pane wrote since a cursor, and the next cursor; no cursor: the screen."}, s.captureSince),
	}
}

// waitTiming is reported by every wait.
type waitTiming struct {
	ElapsedSeconds          float64 `json:"elapsedSeconds"`
	EffectiveTimeoutSeconds float64 `json:"effectiveTimeoutSeconds"`
	TimeoutClamped          bool    `json:"timeoutClamped,omitempty" jsonschema:"the timeout asked for was above the ceiling (TMCP_WAIT_MAX_SECONDS)"`
}

func timing(elapsed time.Duration, t wait.Timeout) waitTiming {
	return waitTiming{ElapsedSeconds: round3(elapsed.Seconds()), EffectiveTimeoutSeconds: t.Seconds(), TimeoutClamped: t.Clamped}
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// progressFunc sends MCP progress notifications when the client asked for
// them with a progress token.
func progressFunc(ctx context.Context, req *mcp.CallToolRequest, total time.Duration) func(time.Duration) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return nil
	}
	return func(elapsed time.Duration) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
			Progress: round3(elapsed.Seconds()), Total: total.Seconds(), Message: "still waiting"})
	}
}

type runCommandIn struct {
	Command         string  `json:"command"`
	PaneID          string  `json:"paneId,omitempty"`
	TimeoutSeconds  float64 `json:"timeoutSeconds,omitempty" jsonschema:"default 40"`
	Detach          bool    `json:"detach,omitempty" jsonschema:"return a jobId once started"`
	SuppressHistory bool    `json:"suppressHistory,omitempty" jsonschema:"out of shell history"`
	MaxLines        int     `json:"maxLines,omitempty"`
	MaxBytes        int     `json:"maxBytes,omitempty"`
}

type jobOut struct {
	JobID      string `json:"jobId"`
	PaneID     string `json:"paneId"`
	Finished   bool   `json:"finished"`
	Running    bool   `json:"running"`
	TimedOut   bool   `json:"timedOut,omitempty"`
	ExitStatus *int   `json:"exitStatus,omitempty"`
	PaneDied   bool   `json:"paneDied,omitempty"`
	Reason     string `json:"reason,omitempty"`
	TotalLines int    `json:"totalLines" jsonschema:"lines the command wrote"`
	TotalBytes int    `json:"totalBytes"`
	OutputLost bool   `json:"outputLost,omitempty" jsonschema:"tmux dropped some output"`
	Lines      int    `json:"lines" jsonschema:"lines returned, in the second content block"`
	pane.Truncation
	waitTiming
}

func jobReply(r wait.JobResult, t wait.Timeout) (*mcp.CallToolResult, jobOut) {
	out := jobOut{JobID: r.JobID, PaneID: r.PaneID, Finished: r.Finished, Running: !r.Finished, TimedOut: r.TimedOut,
		ExitStatus: r.ExitStatus, PaneDied: r.PaneDied, Reason: r.Reason, TotalLines: r.TotalLines, TotalBytes: r.TotalBytes,
		OutputLost: r.OutputLost, Lines: len(r.Lines), Truncation: r.Truncation, waitTiming: timing(r.Elapsed, t)}
	return textResult(out, strings.Join(r.Lines, "\n")), out
}

func (s *Server) runCommand(ctx context.Context, req *mcp.CallToolRequest, in runCommandIn) (*mcp.CallToolResult, jobOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, jobOut{}, err
	}
	_, ask, err := s.guardCaller(ctx, req, scopePane, id, "run a command in pane "+id, false)
	if ask != nil || err != nil {
		return ask, jobOut{}, err
	}
	t := s.waits.Clamp(in.TimeoutSeconds, defaultRunTimeout)
	maxLines, maxBytes := limits(orDefault(in.MaxLines, defaultRunMaxLines), in.MaxBytes)
	r, err := s.waits.Run(ctx, wait.RunRequest{PaneID: id, Command: in.Command, Timeout: t, Detach: in.Detach,
		SuppressHistory: in.SuppressHistory, MaxLines: maxLines, MaxBytes: maxBytes, Progress: progressFunc(ctx, req, t.Duration)})
	if err != nil {
		s.waitEnded(ctx, "failed", id)
		return nil, jobOut{}, explain("running a command in pane "+id, err)
	}
	s.waitEnded(ctx, jobOutcome(r), id)
	res, out := jobReply(r, t)
	return res, out, nil
}

// jobOutcome says in a few words how a job stood when a call on it ended.
func jobOutcome(r wait.JobResult) string {
	switch {
	case r.ExitStatus != nil:
		return fmt.Sprintf("exit status %d", *r.ExitStatus)
	case r.PaneDied:
		return "the pane died"
	case r.Finished:
		return "finished"
	}
	return "job " + r.JobID + " running"
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

type getJobIn struct {
	JobID          string  `json:"jobId"`
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
	MaxLines       int     `json:"maxLines,omitempty"`
	MaxBytes       int     `json:"maxBytes,omitempty"`
}

func (s *Server) getJob(ctx context.Context, req *mcp.CallToolRequest, in getJobIn) (*mcp.CallToolResult, jobOut, error) {
	t := wait.Timeout{}
	if in.TimeoutSeconds > 0 {
		t = s.waits.Clamp(in.TimeoutSeconds, 0)
	}
	maxLines, maxBytes := limits(orDefault(in.MaxLines, defaultRunMaxLines), in.MaxBytes)
	r, err := s.waits.Job(ctx, in.JobID, t, maxLines, maxBytes, progressFunc(ctx, req, t.Duration))
	if err != nil {
		return nil, jobOut{}, err
	}
	if t.Duration > 0 {
		s.waitEnded(ctx, jobOutcome(r), r.PaneID)
	}
	res, out := jobReply(r, t)
	return res, out, nil
}

type waitForTextIn struct {
	PaneID         string   `json:"paneId,omitempty"`
	PaneIDs        []string `json:"paneIds,omitempty"`
	Mode           string   `json:"mode,omitempty"`
	Patterns       []string `json:"patterns,omitempty" jsonschema:"none: any output"`
	Stop           []string `json:"stop,omitempty"`
	Regex          bool     `json:"regex,omitempty"`
	MatchCase      *bool    `json:"matchCase,omitempty" jsonschema:"default true"`
	IdleSeconds    float64  `json:"idleSeconds,omitempty"`
	TimeoutSeconds float64  `json:"timeoutSeconds,omitempty" jsonschema:"default 30"`
	Cursor         string   `json:"cursor,omitempty"`
	MaxLines       int      `json:"maxLines,omitempty"`
	MaxBytes       int      `json:"maxBytes,omitempty"`
}

type waitForTextOut struct {
	Outcome         string        `json:"outcome" jsonschema:"matched, stopped, output, idle, timeout, pane_died, connection_lost, output_lost or cancelled"`
	Matched         string        `json:"matched,omitempty" jsonschema:"the line that matched or stopped the wait (to 512 bytes); the fenced text holds it"`
	Pattern         string        `json:"pattern,omitempty"`
	Cursor          string        `json:"cursor" jsonschema:"pass to the next wait_for_text or capture_since"`
	AlreadyOnScreen bool          `json:"alreadyOnScreen,omitempty" jsonschema:"a pattern matched text already on screen before the wait (not counted)"`
	AlternateScreen bool          `json:"alternateScreen,omitempty" jsonschema:"a full-screen program owns the pane"`
	CursorReset     bool          `json:"cursorReset,omitempty"`
	Reason          string        `json:"reason,omitempty"`
	Lines           int           `json:"lines" jsonschema:"output tail lines, in the second content block"`
	ScreenLines     int           `json:"screenLines,omitempty" jsonschema:"screen rows after the tail, when nothing matched"`
	PaneID          string        `json:"paneId,omitempty" jsonschema:"with paneIds: the pane that decided"`
	Panes           []paneWaitOut `json:"panes,omitempty" jsonschema:"with paneIds: how the wait went in each pane"`
	pane.Truncation
	waitTiming
}

// paneWaitOut is one pane's part in a wait across panes.
type paneWaitOut struct {
	PaneID          string `json:"paneId"`
	Outcome         string `json:"outcome" jsonschema:"as the wait's, or waiting: another pane decided first"`
	ExitStatus      *int   `json:"exitStatus,omitempty"`
	Matched         string `json:"matched,omitempty"`
	Pattern         string `json:"pattern,omitempty"`
	Cursor          string `json:"cursor"`
	AlreadyOnScreen bool   `json:"alreadyOnScreen,omitempty"`
	Reason          string `json:"reason,omitempty"`
}

func (s *Server) waitForText(ctx context.Context, req *mcp.CallToolRequest, in waitForTextIn) (*mcp.CallToolResult, waitForTextOut, error) {
	if err := checkMode(in.Mode); err != nil {
		return nil, waitForTextOut{}, err
	}
	if len(in.PaneIDs) > 0 {
		return s.waitForTextInPanes(ctx, req, in)
	}
	id := in.PaneID
	if c, err := pane.ParseCursor(in.Cursor); id == "" && err == nil {
		id = c.PaneID // a cursor names its pane, as for capture_since
	}
	id, err := s.pane(ctx, id)
	if err != nil {
		return nil, waitForTextOut{}, err
	}
	t := s.waits.Clamp(in.TimeoutSeconds, defaultWaitTimeout)
	maxLines, maxBytes := limits(orDefault(in.MaxLines, defaultWaitTailLines), in.MaxBytes)
	r, err := s.waits.WaitForText(ctx, wait.TextRequest{PaneID: id, Patterns: in.Patterns, Stop: in.Stop, Regex: in.Regex,
		MatchCase: in.MatchCase == nil || *in.MatchCase, Idle: seconds(in.IdleSeconds), Timeout: t, Cursor: in.Cursor,
		MaxLines: maxLines, MaxBytes: maxBytes, Progress: progressFunc(ctx, req, t.Duration), Watching: s.watching(ctx)})
	if err != nil {
		s.waitEnded(ctx, "failed", id)
		return nil, waitForTextOut{}, explain("waiting on pane "+id, err)
	}
	s.waitEnded(ctx, r.Outcome, id)
	out := waitForTextOut{Outcome: r.Outcome, Matched: r.Matched, Pattern: r.Pattern, Cursor: r.Cursor,
		AlreadyOnScreen: r.AlreadyOnScreen, AlternateScreen: r.AlternateScreen, CursorReset: r.CursorReset, Reason: r.Reason,
		Lines: len(r.Lines), ScreenLines: len(r.Screen), Truncation: r.Truncation, waitTiming: timing(r.Elapsed, t)}
	text := strings.Join(r.Lines, "\n")
	if len(r.Screen) > 0 {
		text += "\n--- screen ---\n" + strings.Join(r.Screen, "\n")
	}
	return textResult(out.shown(), text), out, nil
}

// shown is the fields as the first block gives them: a matched line is
// pane text, which the fenced tail holds.
func (o waitForTextOut) shown() waitForTextOut {
	o.Matched = ""
	o.Panes = shownPanes(o.Panes)
	return o
}

// shownPanes is panes without their matched lines, for the first block.
func shownPanes(panes []paneWaitOut) []paneWaitOut {
	if panes == nil {
		return nil
	}
	shown := make([]paneWaitOut, len(panes))
	for i, p := range panes {
		p.Matched = ""
		shown[i] = p
	}
	return shown
}

// checkMode checks a wait's mode across panes.
func checkMode(mode string) error {
	if mode != "" && mode != "any" && mode != "all" {
		return fmt.Errorf("mode %q: want any or all", mode)
	}
	return nil
}

// waitForTextInPanes is wait_for_text over paneIds (and paneId): the
// panes they name, each watched as a lone wait watches it.
func (s *Server) waitForTextInPanes(ctx context.Context, req *mcp.CallToolRequest, in waitForTextIn) (*mcp.CallToolResult, waitForTextOut, error) {
	ids, err := s.panesOf(ctx, withPane(in.PaneID, in.PaneIDs))
	if err != nil {
		return nil, waitForTextOut{}, err
	}
	t := s.waits.Clamp(in.TimeoutSeconds, defaultWaitTimeout)
	maxLines, maxBytes := limits(orDefault(in.MaxLines, defaultWaitTailLines), in.MaxBytes)
	r, err := s.waits.WaitForTextInPanes(ctx, wait.PanesRequest{PaneIDs: ids, All: in.Mode == "all",
		TextRequest: wait.TextRequest{Patterns: in.Patterns, Stop: in.Stop, Regex: in.Regex,
			MatchCase: in.MatchCase == nil || *in.MatchCase, Idle: seconds(in.IdleSeconds), Timeout: t, Cursor: in.Cursor,
			MaxLines: maxLines, MaxBytes: maxBytes, Progress: progressFunc(ctx, req, t.Duration), Watching: s.watching(ctx)}})
	if err != nil {
		s.waitEnded(ctx, "failed", ids...)
		return nil, waitForTextOut{}, explain("waiting on "+panesLabel(ids), err)
	}
	out := waitForTextOut{Outcome: r.Outcome, PaneID: r.PaneID, Matched: r.Matched, Pattern: r.Pattern, Reason: r.Reason,
		waitTiming: timing(r.Elapsed, t)}
	each := s.panesReply(ctx, r)
	out.Panes, out.Cursor, out.AlreadyOnScreen = each.panes, each.deciding.Cursor, each.alreadyOnScreen
	out.Lines, out.ScreenLines, out.Truncation = each.lines, each.screenLines, each.truncation
	return textResult(out.shown(), each.text), out, nil
}

// panesReply is what a wait across panes reports of each pane: the
// panes' outcomes, and their tails (and screens) under a heading each in
// one text, with the counts and truncation of them all.
type panesReply struct {
	panes           []paneWaitOut
	deciding        wait.PaneOutcome // the pane that decided, if any
	text            string
	lines           int
	screenLines     int
	truncation      pane.Truncation
	alreadyOnScreen bool
}

func (s *Server) panesReply(ctx context.Context, r wait.PanesResult) panesReply {
	var out panesReply
	var text []string
	for _, p := range r.Panes {
		s.waitEnded(ctx, p.Outcome, p.PaneID)
		out.panes = append(out.panes, paneWaitOut{PaneID: p.PaneID, Outcome: p.Outcome, Matched: p.Matched, Pattern: p.Pattern,
			ExitStatus: p.ExitStatus, Cursor: p.Cursor, AlreadyOnScreen: p.AlreadyOnScreen, Reason: p.Reason})
		if p.PaneID == r.PaneID {
			out.deciding = p
		}
		out.alreadyOnScreen = out.alreadyOnScreen || p.AlreadyOnScreen
		if p.Outcome == wait.OutcomeWaiting || len(p.Lines)+len(p.Screen) == 0 {
			continue
		}
		out.lines += len(p.Lines)
		out.screenLines += len(p.Screen)
		out.truncation.Truncated = out.truncation.Truncated || p.Truncated
		out.truncation.DroppedLines += p.DroppedLines
		out.truncation.DroppedBytes += p.DroppedBytes
		text = append(text, "--- "+p.PaneID+": "+p.Outcome+" ---")
		text = append(text, p.Lines...)
		if len(p.Screen) > 0 {
			text = append(text, "--- screen of "+p.PaneID+" ---")
			text = append(text, p.Screen...)
		}
	}
	out.text = strings.Join(text, "\n")
	return out
}

// withPane puts paneId, when given, before the targets of paneIds.
func withPane(paneID string, targets []string) []string {
	if paneID == "" {
		return targets
	}
	return append([]string{paneID}, targets...)
}

// panesLabel names panes for a message: the first few, and how many more.
func panesLabel(ids []string) string {
	const shown = 5
	if len(ids) <= shown {
		return "panes " + strings.Join(ids, " ")
	}
	return fmt.Sprintf("panes %s and %d more", strings.Join(ids[:shown], " "), len(ids)-shown)
}

// panesOf returns the panes that targets name, in order and once each: a
// pane id is itself, a window id (@2) its panes, anything else a session
// (an id such as $1, or a name) and its panes.
func (s *Server) panesOf(ctx context.Context, targets []string) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for _, target := range targets {
		var panes []tmux.Pane
		var err error
		switch {
		case strings.HasPrefix(target, "%"):
			if err := checkPaneID(target); err != nil {
				return nil, fmt.Errorf("paneIds: %w", err)
			}
			panes = []tmux.Pane{{ID: target}}
		case strings.HasPrefix(target, "@"):
			if err := checkWindowID(target); err != nil {
				return nil, err
			}
			panes, err = s.tmux.ListPanes(ctx, "", target)
		default:
			if err := checkSessionName(target); err != nil {
				return nil, err
			}
			panes, err = s.tmux.ListPanes(ctx, target, "")
		}
		if err != nil {
			return nil, explain("listing the panes of "+target, err)
		}
		if len(panes) == 0 {
			return nil, fmt.Errorf("%s has no panes; call list_panes", target)
		}
		for _, p := range panes {
			if !seen[p.ID] {
				seen[p.ID] = true
				ids = append(ids, p.ID)
			}
		}
	}
	return ids, nil
}

type waitForCommandIn struct {
	PaneID         string   `json:"paneId,omitempty"`
	PaneIDs        []string `json:"paneIds,omitempty"`
	Mode           string   `json:"mode,omitempty"`
	TimeoutSeconds float64  `json:"timeoutSeconds,omitempty" jsonschema:"default 30"`
	Cursor         string   `json:"cursor,omitempty"`
	MaxLines       int      `json:"maxLines,omitempty"`
	MaxBytes       int      `json:"maxBytes,omitempty"`
}

type waitForCommandOut struct {
	Outcome         string        `json:"outcome" jsonschema:"ended, timeout, no_marks, pane_died, connection_lost, output_lost or cancelled"`
	ExitStatus      *int          `json:"exitStatus,omitempty"`
	DurationSeconds float64       `json:"durationSeconds,omitempty"`
	Running         bool          `json:"running,omitempty"`
	Partial         bool          `json:"partial,omitempty" jsonschema:"output began before tmcp saw it"`
	Cwd             string        `json:"cwd,omitempty" jsonschema:"where it ran"`
	Cursor          string        `json:"cursor"`
	Reason          string        `json:"reason,omitempty"`
	Lines           int           `json:"lines" jsonschema:"output lines, in the second content block"`
	PaneID          string        `json:"paneId,omitempty"`
	Panes           []paneWaitOut `json:"panes,omitempty"`
	pane.Truncation
	waitTiming
}

func (s *Server) waitForCommand(ctx context.Context, req *mcp.CallToolRequest, in waitForCommandIn) (*mcp.CallToolResult, waitForCommandOut, error) {
	if err := checkMode(in.Mode); err != nil {
		return nil, waitForCommandOut{}, err
	}
	if len(in.PaneIDs) > 0 {
		return s.waitForCommandInPanes(ctx, req, in)
	}
	id := in.PaneID
	if c, err := pane.ParseCursor(in.Cursor); id == "" && err == nil {
		id = c.PaneID
	}
	id, err := s.pane(ctx, id)
	if err != nil {
		return nil, waitForCommandOut{}, err
	}
	t := s.waits.Clamp(in.TimeoutSeconds, defaultWaitTimeout)
	maxLines, maxBytes := limits(orDefault(in.MaxLines, defaultRunMaxLines), in.MaxBytes)
	r, err := s.waits.WaitForCommand(ctx, wait.CommandRequest{PaneID: id, Timeout: t, Cursor: in.Cursor,
		MaxLines: maxLines, MaxBytes: maxBytes, Progress: progressFunc(ctx, req, t.Duration), Watching: s.watching(ctx)})
	if err != nil {
		s.waitEnded(ctx, "failed", id)
		return nil, waitForCommandOut{}, explain("waiting for a command in pane "+id, err)
	}
	if r.ExitStatus != nil {
		s.waitEnded(ctx, fmt.Sprintf("%s, exit status %d", r.Outcome, *r.ExitStatus), id)
	} else {
		s.waitEnded(ctx, r.Outcome, id)
	}
	out := waitForCommandOut{Outcome: r.Outcome, ExitStatus: r.ExitStatus, DurationSeconds: round3(r.Duration.Seconds()),
		Running: r.Running, Partial: r.Partial, Cwd: r.Cwd, Cursor: r.Cursor, Reason: r.Reason,
		Lines: len(r.Lines), Truncation: r.Truncation, waitTiming: timing(r.Elapsed, t)}
	return textResult(out, strings.Join(r.Lines, "\n")), out, nil
}

// waitForCommandInPanes is wait_for_command over paneIds (and paneId):
// the panes they name, each watched as a lone wait watches it.
func (s *Server) waitForCommandInPanes(ctx context.Context, req *mcp.CallToolRequest, in waitForCommandIn) (*mcp.CallToolResult, waitForCommandOut, error) {
	ids, err := s.panesOf(ctx, withPane(in.PaneID, in.PaneIDs))
	if err != nil {
		return nil, waitForCommandOut{}, err
	}
	t := s.waits.Clamp(in.TimeoutSeconds, defaultWaitTimeout)
	maxLines, maxBytes := limits(orDefault(in.MaxLines, defaultRunMaxLines), in.MaxBytes)
	r, err := s.waits.WaitForCommandInPanes(ctx, wait.CommandPanesRequest{PaneIDs: ids, All: in.Mode == "all",
		CommandRequest: wait.CommandRequest{Timeout: t, Cursor: in.Cursor, MaxLines: maxLines, MaxBytes: maxBytes,
			Progress: progressFunc(ctx, req, t.Duration), Watching: s.watching(ctx)}})
	if err != nil {
		s.waitEnded(ctx, "failed", ids...)
		return nil, waitForCommandOut{}, explain("waiting for a command in "+panesLabel(ids), err)
	}
	out := waitForCommandOut{Outcome: r.Outcome, PaneID: r.PaneID, Reason: r.Reason, waitTiming: timing(r.Elapsed, t)}
	each := s.panesReply(ctx, r)
	d := each.deciding
	out.Panes, out.Cursor, out.ExitStatus = each.panes, d.Cursor, d.ExitStatus
	if d.PaneID != "" {
		out.DurationSeconds = round3(d.Duration.Seconds())
	}
	out.Lines, out.Truncation = each.lines, each.truncation
	shown := out
	shown.Panes = shownPanes(out.Panes)
	return textResult(shown, each.text), out, nil
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

type channelIn struct {
	Channel        string  `json:"channel"`
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty" jsonschema:"default 30"`
}

type channelOut struct {
	Outcome   string   `json:"outcome" jsonschema:"signalled, timeout, server_gone, connection_lost or cancelled"`
	Signalled []string `json:"signalled,omitempty" jsonschema:"the channels signalled, in order"`
	waitTiming
}

func (s *Server) waitForChannel(ctx context.Context, req *mcp.CallToolRequest, in channelIn) (*mcp.CallToolResult, channelOut, error) {
	t := s.waits.Clamp(in.TimeoutSeconds, defaultChannelTimeout)
	r, err := s.waits.WaitForChannel(ctx, in.Channel, t, progressFunc(ctx, req, t.Duration))
	if err != nil {
		return nil, channelOut{}, explain("waiting on channel "+in.Channel, err)
	}
	return nil, channelOut{Outcome: r.Outcome, Signalled: r.Signalled, waitTiming: timing(r.Elapsed, t)}, nil
}

type signalIn struct {
	Channel string `json:"channel"`
}

type signalOut struct {
	Signalled string `json:"signalled"`
}

func (s *Server) signalChannel(ctx context.Context, _ *mcp.CallToolRequest, in signalIn) (*mcp.CallToolResult, signalOut, error) {
	if err := s.waits.SignalChannel(ctx, in.Channel); err != nil {
		return nil, signalOut{}, explain("signalling channel "+in.Channel, err)
	}
	return nil, signalOut{Signalled: in.Channel}, nil
}

type captureSinceIn struct {
	PaneID   string `json:"paneId,omitempty"`
	Cursor   string `json:"cursor,omitempty"`
	MaxLines int    `json:"maxLines,omitempty"`
	MaxBytes int    `json:"maxBytes,omitempty"`
}

type captureSinceOut struct {
	Cursor          string `json:"cursor" jsonschema:"pass to the next capture_since"`
	Lines           int    `json:"lines" jsonschema:"new complete lines, in the second content block"`
	Partial         string `json:"partial,omitempty" jsonschema:"the unfinished last line (a prompt), fenced in the fields block; returned again once finished"`
	ScreenLines     int    `json:"screenLines,omitempty" jsonschema:"screen rows sent instead of lines: no cursor, a reset, or a full-screen program"`
	MissedBytes     int64  `json:"missedBytes,omitempty" jsonschema:"bytes after the cursor no longer held"`
	OutputLost      bool   `json:"outputLost,omitempty" jsonschema:"tmux dropped some output"`
	Reset           bool   `json:"reset,omitempty"`
	Reason          string `json:"reason,omitempty"`
	AlternateScreen bool   `json:"alternateScreen,omitempty"`
	pane.Truncation
}

func (s *Server) captureSince(ctx context.Context, _ *mcp.CallToolRequest, in captureSinceIn) (*mcp.CallToolResult, captureSinceOut, error) {
	id := in.PaneID
	if in.Cursor == "" || id != "" {
		var err error
		if id, err = s.pane(ctx, in.PaneID); err != nil {
			return nil, captureSinceOut{}, err
		}
	}
	maxLines, maxBytes := limits(in.MaxLines, in.MaxBytes)
	r, err := s.waits.CaptureSince(ctx, id, in.Cursor, maxLines, maxBytes)
	if err != nil {
		return nil, captureSinceOut{}, explain("reading pane "+orAll(id)+" since the cursor", err)
	}
	out := captureSinceOut{Cursor: r.Cursor, Lines: len(r.Lines), Partial: r.Partial, ScreenLines: len(r.Screen),
		MissedBytes: r.MissedBytes, OutputLost: r.OutputLost, Reset: r.Reset, Reason: r.Reason, AlternateScreen: r.AlternateScreen, Truncation: r.Truncation}
	text := strings.Join(r.Lines, "\n")
	if len(r.Screen) > 0 {
		text = strings.Join(r.Screen, "\n")
		out.Lines = 0
	}
	// The unfinished line is pane text too: the first block shows it
	// fenced, the text block keeping to complete lines.
	shown := out
	shown.Partial = fence(r.Partial)
	return textResult(shown, text), out, nil
}
