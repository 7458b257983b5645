package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/record"
	"github.com/tmcp/tmcp/internal/wait"
)

// identifiers are the arguments an audit line keeps as they are: they name
// things in tmux. Every other string (commands, typed text, patterns,
// values, formats) is logged only as its length and a short digest.
var identifiers = map[string]bool{
	"paneId": true, "windowId": true, "sessionName": true, "jobId": true, "channel": true,
	"cursor": true, "direction": true, "size": true, "name": true, "newName": true, "windowName": true,
}

// digestLen is how many hex digits of SHA-256 an audit line keeps: enough
// to tell payloads apart, too few to guess them back.
const digestLen = 12

// Auditor writes one JSON line per tool call.
type Auditor struct {
	mu sync.Mutex
	w  io.Writer
}

// NewAuditor returns an Auditor writing to w.
func NewAuditor(w io.Writer) *Auditor { return &Auditor{w: w} }

// auditLine is what an audit line holds.
type auditLine struct {
	Time       string  `json:"time"`
	Tool       string  `json:"tool"`
	Outcome    string  `json:"outcome"` // ok, error, or a wait's outcome
	DurationMS float64 `json:"durationMs"`
	Session    string  `json:"session,omitempty"` // the MCP session id, over HTTP
	Host       string  `json:"host,omitempty"`    // the remote host the call ran on
	// Token is the caller's token as its transport names it
	// (TokenInfo.UserID): over HTTP a short fingerprint, never the token.
	Token     string         `json:"token,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Error     string         `json:"error,omitempty"`
	// Recordings are where the call's events begin in the recordings of
	// the panes it acted on.
	Recordings []record.Ref `json:"recordings,omitempty"`
}

// callLine starts the line of a call of tool that began at start and has
// just ended: an "ok" outcome until the caller says otherwise.
func callLine(start time.Time, tool string) auditLine {
	return auditLine{Time: start.UTC().Format(time.RFC3339Nano), Tool: tool, Outcome: "ok",
		DurationMS: float64(time.Since(start).Microseconds()) / 1000}
}

// encode returns the line as JSON, with the call's arguments redacted.
func (l auditLine) encode(args json.RawMessage) ([]byte, error) {
	var m map[string]any
	_ = json.Unmarshal(args, &m)
	l.Arguments = redact(m)
	return json.Marshal(l)
}

// write writes an encoded line.
func (a *Auditor) write(line []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.w.Write(append(line, '\n'))
}

// redact keeps identifiers, numbers and booleans, and replaces payloads by
// their length and digest.
func redact(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		switch v := v.(type) {
		case string:
			if identifiers[k] {
				out[k] = v
			} else {
				out[k] = digest(v)
			}
		case float64, bool, nil:
			out[k] = v
		default:
			b, _ := json.Marshal(v)
			out[k] = digest(string(b))
		}
	}
	return out
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("len=%d sha256=%s", len(s), hex.EncodeToString(sum[:])[:digestLen])
}

// logCall logs a call's audit line: in the audit file when auditing, and
// in the call log the live view reads.
func (s *Server) logCall(line auditLine, args json.RawMessage) {
	b, err := line.encode(args)
	if err != nil {
		return
	}
	if s.audit != nil {
		s.audit.write(b)
	}
	s.calls.add(line.Host, b, args)
}

// arrive notes what a wait must count from, before anything else is done
// with the request: the streams' ends, and for a wait_for_text on a pane
// with no stream yet, that pane's screen.
func (s *Server) arrive(ctx context.Context, req mcp.Request) context.Context {
	st := s.arrivalStamp(req)
	a := wait.Arrival{Read: st.at, At: st.at.Add(-arrivalSlack), Marks: st.marks}
	if st.screens == nil {
		// Not stamped as it was read (a call made in-process): read now.
		st = s.stampNow(ctx, req, st)
	}
	if st.screens != nil {
		select {
		case a.Screens = <-st.screens:
		case <-ctx.Done():
		}
	}
	return wait.WithArrival(ctx, a)
}

// stampNow starts the arrival screen read for a call that was not stamped
// as it was read off the wire.
func (s *Server) stampNow(ctx context.Context, req mcp.Request, st *stamp) *stamp {
	p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
	if !ok || p.Name != "wait_for_text" {
		return st
	}
	raw, err := json.Marshal(map[string]any{"name": p.Name, "arguments": p.Arguments})
	if err != nil {
		return st
	}
	s.startArrivalScreen(st, raw)
	return st
}

// noteRecording notes, in the call of ctx, where the recording of the pane
// its arguments name stands as it begins, if that pane is being recorded.
func (s *Server) noteRecording(ctx context.Context, args json.RawMessage) {
	v := s
	if r := routedTo(ctx); r != nil {
		v = r
	}
	if !v.rec.Recording() {
		return // nothing to note: the arguments are not even read
	}
	var target struct {
		PaneID string `json:"paneId"`
	}
	if json.Unmarshal(args, &target) == nil && target.PaneID != "" {
		v.rec.Note(ctx, target.PaneID)
	}
}

// outcomeFields are the fields of a tool's result that an audit line
// reads its outcome from.
type outcomeFields struct {
	Outcome    string `json:"outcome"`
	ExitStatus *int   `json:"exitStatus"`
	TimedOut   bool   `json:"timedOut"`
}

// reportsOutcome reports whether an output schema has any of the
// outcomeFields: the results of other tools are not decoded again for
// the audit line (a listing of 1,000 panes took 3 ms to).
func reportsOutcome(schema *jsonschema.Schema) bool {
	for _, f := range jsonFields(reflect.TypeFor[outcomeFields]()) {
		if schema.Properties[f.name] != nil {
			return true
		}
	}
	return false
}

// reportsOutcome reports whether tool name's result may have an outcome
// for its audit line; a tool it does not know is assumed to.
func (s *Server) reportsOutcome(name string) bool {
	d, ok := s.definition(name)
	return !ok || d.outcome
}

// observe is receiving middleware for every tool call: it notes where the
// pane streams stood when the call arrived (a wait counts from there), then
// logs an audit line (see logCall) and tells a client that asked for logs
// why a wait ended or a call failed.
func (s *Server) observe(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		start := time.Now()
		params, _ := req.GetParams().(*mcp.CallToolParamsRaw)
		if params == nil {
			return next(ctx, method, req)
		}
		callCtx, cancel := context.WithTimeout(ctx, s.budget(params))
		defer cancel()
		call := record.NewCall(params.Name, params.Arguments)
		callCtx = record.WithCall(callCtx, call)
		s.noteRecording(callCtx, params.Arguments)
		res, err := next(s.arrive(withDeclaredCaller(callCtx, req), req), method, req)
		line := callLine(start, params.Name)
		line.Recordings = call.Refs()
		line.Host = hostOf(ctx)
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			line.Session = ss.ID()
		}
		if e := req.GetExtra(); e != nil && e.TokenInfo != nil {
			line.Token = e.TokenInfo.UserID
		}
		level := mcp.LoggingLevel("info")
		switch r, _ := res.(*mcp.CallToolResult); {
		case err != nil:
			line.Outcome, line.Error, level = "error", err.Error(), "warning"
		case r == nil:
		case r.IsError:
			line.Outcome, level = "error", "warning"
			if len(r.Content) > 0 {
				if t, ok := r.Content[0].(*mcp.TextContent); ok {
					line.Error = t.Text
				}
			}
		case r.InputRequests != nil:
			line.Outcome = "asked the person"
		case s.reportsOutcome(params.Name):
			var fields outcomeFields
			raw, ok := r.StructuredContent.(json.RawMessage) // as structured leaves it
			if !ok {
				raw, _ = json.Marshal(r.StructuredContent)
			}
			_ = json.Unmarshal(raw, &fields)
			switch {
			case fields.Outcome != "":
				line.Outcome = fields.Outcome
			case fields.TimedOut:
				line.Outcome = "timed out, still running"
			case fields.ExitStatus != nil:
				line.Outcome = fmt.Sprintf("exit status %d", *fields.ExitStatus)
			}
		}
		s.logCall(line, params.Arguments)
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && (line.Outcome != "ok" || level != "info") {
			msg := params.Name + ": " + line.Outcome
			if line.Error != "" {
				msg += ": " + line.Error
			}
			_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: "tmcp", Data: msg})
		}
		return res, err
	}
}
