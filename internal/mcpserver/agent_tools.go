package mcpserver

import (
	"context"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/wait"
)

// Steering a terminal agent (Claude Code, Codex CLI, Gemini CLI, aider) in
// another pane: submit a prompt to it, and wait for its turn to end. The
// programs' profiles are in internal/agents.
const (
	// submitBudget bounds a submission: the paste shown, the gap, and up
	// to three submit keys each given time to show.
	submitBudget = 15 * time.Second
	// submitScreenRows is how many of the screen's last rows a submission
	// returns.
	submitScreenRows = 20
)

func (s *Server) agentTools() []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: "submit_prompt", Title: "Submit a prompt to an agent", Annotations: mutating(false),
			Description: "Paste a prompt (newlines kept) into a terminal agent or other full-screen program, submit it after its profile's gap, check it was taken. Never Escape. Shells: run_command."}, s.submitPrompt),
		define(&mcp.Tool{Name: "wait_for_screen", Title: "Wait for a screen to settle", Annotations: readOnly(),
			Description: "Wait on a pane's screen (alternate too): a pattern shows, or no busy marker and still for stillSeconds (the agent's turn ended), or the bell."}, s.waitForScreen),
	}
}

type submitPromptIn struct {
	PaneID string `json:"paneId,omitempty"`
	Text   string `json:"text"`
}

type submitPromptOut struct {
	Profile    string `json:"profile"`
	PasteShown bool   `json:"pasteShown"`
	Attempts   int    `json:"attempts" jsonschema:"submit keys sent"`
	Verified   bool   `json:"verified"`
	How        string `json:"how,omitempty"`
}

func (s *Server) submitPrompt(ctx context.Context, req *mcp.CallToolRequest, in submitPromptIn) (*mcp.CallToolResult, submitPromptOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, submitPromptOut{}, err
	}
	_, ask, err := s.guardCaller(ctx, req, scopePane, id, "submit a prompt in pane "+id, false)
	if ask != nil || err != nil {
		return ask, submitPromptOut{}, err
	}
	r, err := s.waits.SubmitPrompt(ctx, wait.SubmitRequest{PaneID: id, Text: in.Text})
	if err != nil {
		return nil, submitPromptOut{}, explain("submitting a prompt in pane "+id, err)
	}
	out := submitPromptOut{Profile: r.Profile, PasteShown: r.PasteShown, Attempts: r.Attempts, Verified: r.Verified, How: r.How}
	rows := pane.TrimBlank(r.Screen)
	return textResult(out, strings.Join(rows[max(0, len(rows)-submitScreenRows):], "\n")), out, nil
}

type waitForScreenIn struct {
	PaneID         string   `json:"paneId,omitempty"`
	Patterns       []string `json:"patterns,omitempty" jsonschema:"RE2, per row"`
	Busy           []string `json:"busy,omitempty" jsonschema:"default: the profile's"`
	StillSeconds   float64  `json:"stillSeconds,omitempty" jsonschema:"default 1"`
	TimeoutSeconds float64  `json:"timeoutSeconds,omitempty" jsonschema:"default 30"`
}

type waitForScreenOut struct {
	Outcome string `json:"outcome" jsonschema:"matched, approval, idle, bell, timeout, pane_died, connection_lost or cancelled"`
	Pattern string `json:"pattern,omitempty"`
	Profile string `json:"profile"`
	Reason  string `json:"reason,omitempty"`
	waitTiming
}

func (s *Server) waitForScreen(ctx context.Context, req *mcp.CallToolRequest, in waitForScreenIn) (*mcp.CallToolResult, waitForScreenOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, waitForScreenOut{}, err
	}
	t := s.waits.Clamp(in.TimeoutSeconds, defaultWaitTimeout)
	r, err := s.waits.WaitForScreen(ctx, wait.ScreenRequest{PaneID: id, Patterns: in.Patterns, Busy: in.Busy,
		Still: seconds(in.StillSeconds), Timeout: t, Progress: progressFunc(ctx, req, t.Duration), Watching: s.watching(ctx)})
	if err != nil {
		s.waitEnded(ctx, "failed", id)
		return nil, waitForScreenOut{}, explain("waiting on the screen of pane "+id, err)
	}
	s.waitEnded(ctx, r.Outcome, id)
	out := waitForScreenOut{Outcome: r.Outcome, Pattern: r.Pattern, Profile: r.Profile, Reason: r.Reason, waitTiming: timing(r.Elapsed, t)}
	return textResult(out, strings.Join(pane.TrimBlank(r.Screen), "\n")), out, nil
}
