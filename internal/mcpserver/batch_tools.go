package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/pane"
)

// Bounds on a batch.
const (
	// maxBatchCalls is the most calls one batch may hold.
	maxBatchCalls = 32
	// maxBatchCallBytes bounds what a batch reports of one call: its
	// structured result and its text together; past it the text keeps its
	// last bytes, and a result that alone is larger is dropped.
	maxBatchCallBytes = 8 << 10
)

// unbatchable are the waits: a batch must never multiply a wait bound
// as many times as the batch holds waits.
var unbatchable = map[string]bool{"run_command": true, "get_job": true, "wait_for_text": true, "wait_for_channel": true, "wait_for_command": true, "wait_for_ready": true}

// batchNames are the batch tools, by the tier of the calls they run.
var batchNames = map[Tier]string{
	ReadOnly:    "call_readonly_tools_batch",
	Mutating:    "call_mutating_tools_batch",
	Destructive: "call_destructive_tools_batch",
}

// batchTools returns the three batch tools, which run the tools of reg.
func (s *Server) batchTools(reg *batchRegistry) []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: batchNames[ReadOnly], Title: "Batch of read-only calls", Annotations: readOnly(),
			Description: "Run read-only tool calls in order, until one fails; no waits."}, reg.batch(ReadOnly)),
		define(&mcp.Tool{Name: batchNames[Mutating], Title: "Batch of calls", Annotations: mutating(false),
			Description: "Run read-only or mutating tool calls in order, until one fails; no waits."}, reg.batch(Mutating)),
		define(&mcp.Tool{Name: batchNames[Destructive], Title: "Batch of calls, kills too", Annotations: destructive(),
			Description: "Run tool calls of any tier in order, until one fails; no waits."}, reg.batch(Destructive)),
	}
}

// batchRegistry finds the tools a batch calls: the tools defined with the
// batch tools, filled in once they all are.
type batchRegistry struct {
	s     *Server
	tools map[string]toolDef
}

func (r *batchRegistry) lookup(name string) (toolDef, bool) {
	d, ok := r.tools[name]
	return d, ok
}

type batchCall struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

type batchIn struct {
	Calls []batchCall `json:"calls"`
}

// callDone is one call that ran: its structured result and any text it
// returned besides (a pane's lines), bounded together.
type callDone struct {
	Tool         string `json:"tool"`
	Result       any    `json:"result,omitempty"`
	Text         string `json:"text,omitempty"`
	DroppedBytes int    `json:"droppedBytes,omitempty"`
	// shown is Result as the call's own first block gave it: without
	// fields that hold pane text.
	shown any
}

type callFailed struct {
	Index int    `json:"index" jsonschema:"0-based"`
	Tool  string `json:"tool"`
	Error string `json:"error"`
}

type batchOut struct {
	Completed []callDone  `json:"completed"`
	Failed    *callFailed `json:"failed,omitempty"`
	Skipped   []string    `json:"skipped,omitempty"`
}

// planned is a checked call, ready to run.
type planned struct {
	def  toolDef
	args json.RawMessage
}

// batch returns the handler of the batch tool of tier.
func (r *batchRegistry) batch(tier Tier) mcp.ToolHandlerFor[batchIn, batchOut] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in batchIn) (*mcp.CallToolResult, batchOut, error) {
		plan, err := r.plan(tier, in.Calls)
		if err != nil {
			return nil, batchOut{}, fmt.Errorf("%w; nothing was run", err)
		}
		out := batchOut{Completed: []callDone{}}
		for i, p := range plan {
			done, err := r.runAudited(ctx, req, tier, p)
			if err != nil {
				out.Failed = &callFailed{Index: i, Tool: p.def.tool.Name, Error: err.Error()}
				for _, q := range plan[i+1:] {
					out.Skipped = append(out.Skipped, q.def.tool.Name)
				}
				// The first block says what failed (and is what the audit
				// line keeps); the whole report follows, as in structuredContent.
				summary := fmt.Sprintf("call %d (%s) failed after %d completed: %s", i, out.Failed.Tool, len(out.Completed), out.Failed.Error)
				if len(out.Skipped) > 0 {
					summary += fmt.Sprintf("; not run: %s", strings.Join(out.Skipped, ", "))
				}
				res := batchResult(out)
				res.IsError = true
				res.Content = append([]mcp.Content{&mcp.TextContent{Text: summary}}, res.Content...)
				return res, out, nil
			}
			out.Completed = append(out.Completed, done)
		}
		return batchResult(out), out, nil
	}
}

// batchResult is a batch's text content: its fields, each call's result
// as that call's own first block shows it, then a block for each call's
// pane text, fenced under a line that names the call.
func batchResult(out batchOut) *mcp.CallToolResult {
	shown := out
	shown.Completed = make([]callDone, len(out.Completed))
	var texts []mcp.Content
	for i, d := range out.Completed {
		if d.Text != "" {
			texts = append(texts, &mcp.TextContent{Text: fmt.Sprintf("call %d (%s):\n%s", i, d.Tool, fence(d.Text))})
		}
		d.Result, d.Text = d.shown, ""
		shown.Completed[i] = d
	}
	meta, _ := json.Marshal(shown)
	return &mcp.CallToolResult{Content: append([]mcp.Content{&mcp.TextContent{Text: string(meta)}}, texts...)}
}

// plan checks every call before any runs: the tool exists at the server's
// tier and within the batch's, is neither a wait nor a batch, and its
// arguments fit its input schema.
func (r *batchRegistry) plan(tier Tier, calls []batchCall) ([]planned, error) {
	name := batchNames[tier]
	switch {
	case len(calls) == 0:
		return nil, errors.New("calls is empty: give at least one {tool, arguments}")
	case len(calls) > maxBatchCalls:
		return nil, fmt.Errorf("%d calls: a batch holds at most %d; split it", len(calls), maxBatchCalls)
	}
	plan := make([]planned, len(calls))
	for i, c := range calls {
		d, ok := r.lookup(c.Tool)
		switch {
		case !ok || d.tier > r.s.cfg.Tier:
			return nil, fmt.Errorf("call %d: no tool %q at the %s tier; see tools/list", i, c.Tool, r.s.cfg.Tier)
		case isBatchTool(c.Tool):
			return nil, fmt.Errorf("call %d: %s is a batch, and batches do not nest; put its calls in this one", i, c.Tool)
		case unbatchable[c.Tool]:
			return nil, fmt.Errorf("call %d: %s waits, and waits cannot be batched; call it on its own", i, c.Tool)
		case d.tier > tier:
			return nil, fmt.Errorf("call %d: %s is a %s tool, and %s runs only %s ones; use %s", i, c.Tool, d.tier, name, batchScope(tier), batchNames[d.tier])
		}
		raw, err := json.Marshal(c.Arguments)
		if c.Arguments == nil {
			raw = []byte("{}")
		}
		if err == nil {
			raw, err = d.call.prepare(raw)
		}
		if err != nil {
			return nil, fmt.Errorf("call %d (%s): %w", i, c.Tool, err)
		}
		plan[i] = planned{def: d, args: raw}
	}
	return plan, nil
}

func isBatchTool(name string) bool {
	for _, b := range batchNames {
		if name == b {
			return true
		}
	}
	return false
}

func batchScope(t Tier) string {
	switch t {
	case ReadOnly:
		return "readonly"
	case Mutating:
		return "readonly and mutating"
	}
	return "any"
}

// runAudited runs one call of a batch and logs its own audit line (tool "call_…_batch/name"), before the batch's.
func (r *batchRegistry) runAudited(ctx context.Context, req *mcp.CallToolRequest, tier Tier, p planned) (callDone, error) {
	start := time.Now()
	done, err := runInBatch(ctx, req, p)
	line := callLine(start, batchNames[tier]+"/"+p.def.tool.Name)
	if err != nil {
		line.Outcome, line.Error = "error", err.Error()
	}
	r.s.logCall(line, p.args)
	return done, err
}

// runInBatch makes one call of a batch, as its own tools/call would be made, and
// reports it bounded. A call that would ask the person first fails: a
// batch does not stop midway to ask.
func runInBatch(ctx context.Context, req *mcp.CallToolRequest, p planned) (callDone, error) {
	if err := ctx.Err(); err != nil {
		return callDone{}, fmt.Errorf("not run: the batch was cancelled (%v)", err)
	}
	name := p.def.tool.Name
	one := &mcp.CallToolRequest{Session: req.Session, Extra: req.Extra,
		Params: &mcp.CallToolParamsRaw{Name: name, Arguments: p.args}}
	res, out, err := p.def.call.run(ctx, one, p.args)
	switch {
	case err != nil:
		return callDone{}, err
	case res != nil && res.InputRequests != nil:
		return callDone{}, fmt.Errorf("it needs the person's confirmation (%s), which a batch cannot ask for; call %s on its own", res.RequestState, name)
	case res != nil && res.IsError:
		return callDone{}, errors.New(batchText(res.Content))
	}
	done := callDone{Tool: name}
	result, err := json.Marshal(out)
	if err != nil {
		return callDone{}, fmt.Errorf("encoding the result of %s: %w", name, err)
	}
	if len(result) > maxBatchCallBytes {
		done.DroppedBytes += len(result)
		result = nil
	} else {
		done.Result, done.shown = json.RawMessage(result), json.RawMessage(result)
		if res != nil && len(res.Content) > 0 {
			// By convention (textResult) the first block shows the fields.
			if t, ok := res.Content[0].(*mcp.TextContent); ok && json.Valid([]byte(t.Text)) {
				done.shown = json.RawMessage(t.Text)
			}
		}
	}
	if res != nil && len(res.Content) > 1 {
		// The blocks after it hold the pane text, fenced: the batch
		// fences it again in its own reply.
		var texts []string
		for _, c := range res.Content[1:] {
			if t, ok := c.(*mcp.TextContent); ok {
				text, fenced := Unfence(t.Text)
				if !fenced {
					text = t.Text
				}
				texts = append(texts, text)
			}
		}
		done.Text = strings.Join(texts, "\n")
		var cut int
		done.Text, cut = pane.TailBytes(done.Text, maxBatchCallBytes-len(result))
		done.DroppedBytes += cut
	}
	return done, nil
}

// batchText joins the text blocks of a result.
func batchText(content []mcp.Content) string {
	var parts []string
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// invoker runs a tool in-process, as the SDK runs it for tools/call:
// prepare checks the arguments against the input schema and run decodes
// them and calls the handler.
type invoker struct {
	prepare func(args json.RawMessage) (json.RawMessage, error)
	run     func(ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage) (*mcp.CallToolResult, any, error)
}

// invokerFor builds the invoker of the tool called name, whose calls are
// checked against input, resolved once.
func invokerFor[In, Out any](name string, input *jsonschema.Schema, h mcp.ToolHandlerFor[In, Out]) invoker {
	rs := resolve(name, input)
	return invoker{
		prepare: func(args json.RawMessage) (json.RawMessage, error) { return applyInputSchema(rs, args) },
		run: func(ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage) (*mcp.CallToolResult, any, error) {
			var in In
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, nil, fmt.Errorf("decoding arguments: %w", err)
			}
			return h(ctx, req, in)
		},
	}
}
