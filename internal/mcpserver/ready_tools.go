package mcpserver

import (
	"context"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/probe"
	"github.com/tmcp/tmcp/internal/wait"
)

// defaultProbeWaitTimeout is a readiness wait's, before the ceiling clamps it.
const defaultProbeWaitTimeout = 30 * time.Second

// readyTools returns wait_for_ready.
func (s *Server) readyTools() []toolDef {
	// It only looks, but at the network beyond tmux: open-world.
	annotations := readOnly()
	openWorld := true
	annotations.OpenWorldHint = &openWorld
	return []toolDef{
		define(&mcp.Tool{Name: "wait_for_ready", Title: "Wait for a port or URL", Annotations: annotations,
			Description: "Wait until a port listens or a URL answers (status 200-399); paneId: the server's pane, whose death or stop line ends it."}, s.waitForReady),
	}
}

type waitForReadyIn struct {
	Target          string   `json:"target" jsonschema:"port, host:port or URL"`
	PaneID          string   `json:"paneId,omitempty"`
	Stop            []string `json:"stop,omitempty"`
	Status          string   `json:"status,omitempty"`
	Header          string   `json:"header,omitempty" jsonschema:"Name or Name: value"`
	Body            string   `json:"body,omitempty" jsonschema:"substring"`
	Insecure        bool     `json:"insecure,omitempty"`
	IntervalSeconds float64  `json:"intervalSeconds,omitempty" jsonschema:"default 0.25"`
	StableSeconds   float64  `json:"stableSeconds,omitempty"`
	TimeoutSeconds  float64  `json:"timeoutSeconds,omitempty" jsonschema:"default 30"`
}

type waitForReadyOut struct {
	Outcome     string `json:"outcome" jsonschema:"ready, stopped, pane_died, connection_lost, timeout or cancelled"`
	Probe       string `json:"probe" jsonschema:"the last probe's result: status 503, connection refused, a TLS error…"`
	Status      int    `json:"status,omitempty" jsonschema:"the last HTTP status"`
	Probes      int    `json:"probes" jsonschema:"probes made"`
	Matched     string `json:"matched,omitempty" jsonschema:"the pane's line that stopped the wait; the fenced text holds it"`
	Pattern     string `json:"pattern,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Lines       int    `json:"lines" jsonschema:"the pane's last lines, in the second content block"`
	ScreenLines int    `json:"screenLines,omitempty" jsonschema:"screen rows after them"`
	pane.Truncation
	waitTiming
}

func (s *Server) waitForReady(ctx context.Context, req *mcp.CallToolRequest, in waitForReadyIn) (*mcp.CallToolResult, waitForReadyOut, error) {
	target, err := probe.ParseTarget(in.Target)
	if err != nil {
		return nil, waitForReadyOut{}, err
	}
	if target.Status, err = probe.ParseStatus(in.Status); err != nil {
		return nil, waitForReadyOut{}, err
	}
	if target.Header, target.HeaderValue, err = probe.ParseHeader(in.Header); err != nil {
		return nil, waitForReadyOut{}, err
	}
	target.Body, target.Insecure = in.Body, in.Insecure
	id := ""
	if in.PaneID != "" {
		if id, err = s.pane(ctx, in.PaneID); err != nil {
			return nil, waitForReadyOut{}, err
		}
	}
	t := s.waits.Clamp(in.TimeoutSeconds, defaultProbeWaitTimeout)
	r, err := s.waits.WaitForReady(ctx, wait.ReadyRequest{Target: target, Interval: seconds(in.IntervalSeconds),
		Stable: seconds(in.StableSeconds), Timeout: t, PaneID: id, Stop: in.Stop, Progress: progressFunc(ctx, req, t.Duration), Watching: s.watching(ctx)})
	if err != nil {
		s.waitEnded(ctx, "failed", ids(id)...)
		return nil, waitForReadyOut{}, explain("waiting for "+target.String()+" to be ready", err)
	}
	s.waitEnded(ctx, r.Outcome, ids(id)...)
	out := waitForReadyOut{Outcome: r.Outcome, Probe: r.Probe.Detail, Status: r.Probe.Status, Probes: r.Probes,
		Matched: r.Matched, Pattern: r.Pattern, Reason: r.Reason, Lines: len(r.Lines), ScreenLines: len(r.Screen),
		Truncation: r.Truncation, waitTiming: timing(r.Elapsed, t)}
	text := strings.Join(r.Lines, "\n")
	if len(r.Screen) > 0 {
		text += "\n--- screen ---\n" + strings.Join(r.Screen, "\n")
	}
	// The matched line is pane text: the fenced text holds it.
	shown := out
	shown.Matched = ""
	return textResult(shown, text), out, nil
}

// ids is the pane id, if any, as a list.
func ids(id string) []string {
	if id == "" {
		return nil
	}
	return []string{id}
}
