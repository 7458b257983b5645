package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/mcpserver"
)

// commandDeadline is tmcp's bound on one tmux command (tmux.DefaultCommandTimeout):
// a call that is not a wait must answer within it, plus the margin.
const commandDeadline = 5 * time.Second

// reply is one tool call as the soak saw it.
type reply struct {
	Tool   string
	Pane   string
	Start  time.Time
	End    time.Time
	Bound  time.Duration
	Fields map[string]any
	Text   string // the second content block: pane text
	Err    string // the tool's error, or the protocol's
	Kind   string // the error's kind (err* below); "" when it succeeded
	Hung   bool   // abandoned: no answer long past its bound
}

func (r reply) ok() bool               { return r.Err == "" }
func (r reply) latency() time.Duration { return r.End.Sub(r.Start) }
func (r reply) str(k string) string    { s, _ := r.Fields[k].(string); return s }
func (r reply) flag(k string) bool     { b, _ := r.Fields[k].(bool); return b }
func (r reply) num(k string) (int, bool) {
	f, ok := r.Fields[k].(float64)
	return int(f), ok
}

// lines returns the first n lines of the text block, n from the "lines" field.
func (r reply) lines() []string {
	n, _ := r.num("lines")
	if n <= 0 {
		return nil
	}
	ls := strings.Split(r.Text, "\n")
	if len(ls) > n {
		ls = ls[:n]
	}
	return ls
}

// fieldsBrief shows a reply's fields compactly, for a failure message.
func (r reply) fieldsBrief() string {
	b, _ := json.Marshal(r.Fields)
	if len(b) > 400 {
		return string(b[:397]) + "..."
	}
	return string(b)
}

// describe names a call for a failure message.
func (r reply) describe() string {
	return fmt.Sprintf("%s on %s at t%+.1fs (took %.2fs)", r.Tool, orNone(r.Pane), r.Start.Sub(epoch()).Seconds(), r.latency().Seconds())
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Error kinds: what an error says, in one word.
const (
	errNotAnswering    = "tmux_not_answering"
	errPaneNotFound    = "pane_not_found"
	errPaneDead        = "pane_dead"
	errPaneClosed      = "pane_closed"
	errStreamEnded     = "stream_ended"
	errConnEnded       = "connection_ended"
	errConnLost        = "connection_lost"
	errPaneBusy        = "pane_busy"
	errNotAtPrompt     = "not_at_prompt"
	errAlreadyStreamed = "already_streamed"
	errServerGone      = "server_gone"
	errCancelled       = "cancelled"
	errHung            = "hung"
	errProtocol        = "protocol"
	errUnnamed         = "unnamed"
)

// toolErrorKind classifies a tool's error message by the name it gives
// the failure.
func toolErrorKind(msg string) string {
	switch {
	case strings.Contains(msg, "no answer from tmux in time"):
		return errNotAnswering
	case strings.Contains(msg, "can't find pane"), strings.Contains(msg, "no such pane"):
		return errPaneNotFound
	case strings.Contains(msg, "is dead"):
		return errPaneDead
	case strings.Contains(msg, "the pane was closed"), strings.Contains(msg, "the pane's process exited"),
		strings.Contains(msg, "the pane was respawned"):
		return errPaneClosed
	case strings.Contains(msg, "session or server went away"):
		return errStreamEnded
	case strings.Contains(msg, "ended the connection"):
		return errConnEnded
	case strings.Contains(msg, "connection to tmux was lost"):
		return errConnLost
	case strings.Contains(msg, "no server running"), strings.Contains(msg, "server exited unexpectedly"),
		strings.Contains(msg, "error connecting to"):
		return errServerGone
	case strings.Contains(msg, "is already streamed"):
		return errAlreadyStreamed
	case strings.Contains(msg, "is busy with job"):
		return errPaneBusy
	case strings.Contains(msg, "not a shell at its prompt"):
		return errNotAtPrompt
	}
	return errUnnamed
}

// caller makes tool calls over an MCP client session and keeps the books.
type caller struct {
	// cs is the session calls go over: a new one after tmcp restarts.
	cs atomic.Pointer[mcp.ClientSession]
	st *stats
	// observe, if set, sees every call once it has ended.
	observe func(reply)
	slack   time.Duration
	// hangGrace is how long past its bound a call is given before it is
	// abandoned as hung, so the soak itself never hangs.
	hangGrace time.Duration
}

// nonWait is the bound of a call that does not wait.
func (c *caller) nonWait() time.Duration { return commandDeadline + c.slack }

// waitBound is the bound of a wait of timeout seconds: the wait, one more
// tmux command (the screen read at its end), and the margin.
func (c *caller) waitBound(timeout float64) time.Duration {
	return time.Duration(timeout*float64(time.Second)) + commandDeadline + c.slack
}

// call makes one tool call bounded by bound, records it, and returns it.
// pane names the pane the call concerns, for messages. A call past its
// bound is a failure, whatever it answered.
func (c *caller) call(ctx context.Context, tool, pane string, args map[string]any, bound time.Duration) reply {
	cctx, cancel := context.WithTimeout(ctx, bound+c.hangGrace)
	defer cancel()
	r := reply{Tool: tool, Pane: pane, Bound: bound, Start: time.Now()}
	res, err := c.cs.Load().CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	r.End = time.Now()
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
		r.Hung, r.Kind = true, errHung
		r.Err = fmt.Sprintf("abandoned: no answer within %v", bound+c.hangGrace)
	case err != nil:
		r.Err, r.Kind = "protocol error: "+err.Error(), errProtocol
		if errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled) {
			r.Kind = errCancelled
		}
	case res.IsError:
		r.Err = "tool error with no text"
		if len(res.Content) > 0 {
			if t, ok := res.Content[0].(*mcp.TextContent); ok {
				r.Err = t.Text
			}
		}
		r.Kind = toolErrorKind(r.Err)
	default:
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			_ = json.Unmarshal(b, &r.Fields)
		}
		if len(res.Content) > 1 {
			if t, ok := res.Content[1].(*mcp.TextContent); ok {
				r.Text = t.Text
				if text, fenced := mcpserver.Unfence(t.Text); fenced {
					r.Text = text
				}
			}
		}
	}
	c.st.record(r)
	if c.observe != nil {
		c.observe(r)
	}
	if r.latency() > bound && ctx.Err() == nil {
		c.st.fail("bound", "%s: exceeded its bound of %.1fs%s", r.describe(), bound.Seconds(), errSuffix(r))
	}
	return r
}

func errSuffix(r reply) string {
	if r.Err == "" {
		return ""
	}
	return " (" + r.Err + ")"
}

// outcome names how a call ended, per tool.
func outcome(r reply) string {
	if !r.ok() {
		return "error:" + r.Kind
	}
	switch r.Tool {
	case "run_command", "get_job":
		switch {
		case r.flag("paneDied"):
			return "paneDied"
		case r.flag("timedOut"):
			return "timedOut"
		case r.flag("finished"):
			return "finished"
		}
		return "running"
	case "wait_for_text":
		return r.str("outcome")
	case "capture_since":
		switch n, _ := r.num("missedBytes"); {
		case r.flag("reset"):
			return "reset"
		case n > 0:
			return "missed"
		}
		if n, _ := r.num("screenLines"); n > 0 {
			return "screen"
		}
		return "lines"
	}
	return "ok"
}

// stats are the books of a soak: calls, outcomes, errors, latencies and
// failures. It is safe for concurrent use.
type stats struct {
	mu       sync.Mutex
	calls    map[string]int
	outcomes map[string]map[string]int
	errKinds map[string]int
	maxLat   map[string]time.Duration
	notes    map[string]int
	failures []string
	failCats map[string]int
	// all, if set, is told every failure as it is recorded, not only the
	// first maxFailuresKept.
	all io.Writer
}

func newStats() *stats {
	return &stats{calls: map[string]int{}, outcomes: map[string]map[string]int{}, errKinds: map[string]int{},
		maxLat: map[string]time.Duration{}, notes: map[string]int{}, failCats: map[string]int{}}
}

func (s *stats) record(r reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[r.Tool]++
	if s.outcomes[r.Tool] == nil {
		s.outcomes[r.Tool] = map[string]int{}
	}
	s.outcomes[r.Tool][outcome(r)]++
	if !r.ok() {
		s.errKinds[r.Kind]++
	}
	if l := r.latency(); l > s.maxLat[r.Tool] {
		s.maxLat[r.Tool] = l
	}
}

// maxFailuresKept bounds the failure messages kept for the summary.
const maxFailuresKept = 60

// fail records a failure of category cat.
func (s *stats) fail(cat, format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failCats[cat]++
	line := fmt.Sprintf("[%s] ", cat) + fmt.Sprintf(format, args...)
	if len(s.failures) < maxFailuresKept {
		s.failures = append(s.failures, line)
	}
	if s.all != nil {
		fmt.Fprintf(s.all, "t%+.1fs %s\n", time.Since(epoch()).Seconds(), line)
	}
}

// note counts something worth reporting that is not a failure.
func (s *stats) note(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes[what]++
}

func (s *stats) totals() (calls, failures int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.calls {
		calls += n
	}
	for _, n := range s.failCats {
		failures += n
	}
	return calls, failures
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
