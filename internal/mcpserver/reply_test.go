package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/stdio"
)

// serveRaw runs m over tmcp's stdio transport on pipes, as cmd/tmcp
// serves it, and returns a client that keeps each response line as m
// wrote it, after the initialize handshake. The session ends with tb.
func serveRaw(tb testing.TB, m *mcp.Server) *rawRPC {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, &stdio.Transport{Reader: inR, Writer: outW})
		outW.Close()
	}()
	tb.Cleanup(func() { inW.Close(); cancel(); <-done })
	rpc := &rawRPC{w: inW, r: bufio.NewReader(outR)}
	if _, err := rpc.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "reply-test", "version": "1"}}); err != nil {
		tb.Fatal(err)
	}
	if err := rpc.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		tb.Fatal(err)
	}
	return rpc
}

// manyPaneSummaries is a listing of n panes as list_panes reports them,
// each field filled as a pane running a command would fill it.
func manyPaneSummaries(n int) listPanesOut {
	out := listPanesOut{Panes: make([]PaneSummary, n), Total: n}
	for i := range out.Panes {
		out.Panes[i] = PaneSummary{PaneID: fmt.Sprintf("%%%d", i), SessionName: fmt.Sprintf("many-%d", i/100),
			WindowID: fmt.Sprintf("@%d", i), WindowIndex: i % 100, Active: true, Command: "sleep", PID: 100000 + i,
			Path: "/root/src/github.com/tmcp/tmcp", Title: "build-host", Width: 80, Height: 24}
	}
	return out
}

// BenchmarkListPanesReply serves list_panes over 1,000 panes through the
// whole reply path (tmcp's middleware, the tool's registration, the SDK
// and tmcp's stdio transport) with a handler that returns a listing made
// beforehand, so that what is timed, and profiled with -cpuprofile, is
// the server's work per reply and none of tmux's. The client side only
// reads each response line.
func BenchmarkListPanesReply(b *testing.B) {
	s := newTestServer(b, DefaultTier)
	listing := manyPaneSummaries(1000)
	m := s.MCPServer(context.Background())
	// Replaces the real list_panes, which would ask tmux.
	define(&mcp.Tool{Name: "list_panes", Annotations: readOnly()},
		func(context.Context, *mcp.CallToolRequest, listPanesIn) (*mcp.CallToolResult, listPanesOut, error) {
			return nil, listing, nil
		}).add(m)
	benchmarkCalls(b, serveRaw(b, m), map[string]any{"name": "list_panes", "arguments": map[string]any{}})
}

// benchmarkCalls times tools/call requests with params over rpc, one at a
// time, reading each response line.
func benchmarkCalls(b *testing.B, rpc *rawRPC, args map[string]any) {
	b.Helper()
	line, err := rpc.call("tools/call", args)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		// Not rpc.call, which decodes each line to find its id: only the
		// server's work is to count.
		rpc.lastID++
		if err := rpc.send(map[string]any{"jsonrpc": "2.0", "id": rpc.lastID, "method": "tools/call", "params": args}); err != nil {
			b.Fatal(err)
		}
		line, err := rpc.r.ReadBytes('\n')
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{`, rpc.lastID); err != nil || !bytes.HasPrefix(line, []byte(want)) {
			b.Fatalf("response %.200s (%v), want one beginning %s", line, err, want)
		}
	}
	// The process's CPU, server and this client together: the client's
	// share is writing a small request and reading a line.
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the user and system time the process has used.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWaitReply serves a reply shaped as wait_for_text's when its
// line came (a matched line, a cursor, 10 lines of fenced pane text)
// through the same path as BenchmarkListPanesReply: what each of the
// replies to waits on busy panes costs the server.
func BenchmarkWaitReply(b *testing.B) {
	s := newTestServer(b, DefaultTier)
	out := waitForTextOut{Outcome: "matched", Matched: "line-42 done", Pattern: "line-42", Cursor: "%3:1048576", Lines: 10,
		waitTiming: waitTiming{ElapsedSeconds: 0.004, EffectiveTimeoutSeconds: 30}}
	text := strings.Repeat("tick\n", 9) + "line-42 done"
	m := s.MCPServer(context.Background())
	// Not named wait_for_text, whose call is stamped with a read of the
	// pane's screen as it arrives: a tmux round trip.
	define(&mcp.Tool{Name: "wait_reply", Annotations: readOnly()},
		func(context.Context, *mcp.CallToolRequest, waitForTextIn) (*mcp.CallToolResult, waitForTextOut, error) {
			return textResult(out, text), out, nil
		}).add(m)
	benchmarkCalls(b, serveRaw(b, m), map[string]any{"name": "wait_reply", "arguments": map[string]any{"paneId": "%0", "patterns": []string{"line-42"}}})
}

// replyOut has what structured must handle: an embedded struct, fields
// left out when empty, and fields that may be nil.
type replyOut struct {
	Value   string   `json:"value"`
	Items   []string `json:"items"`
	Maybe   *int     `json:"maybe,omitempty"`
	Later   []string `json:"later,omitempty"`
	Ignored []string `json:"-"`
	pane.Truncation
}

// TestRepliesAreTheSDKWrappersReplies calls the same handlers registered
// with the SDK's typed wrapper (mcp.AddTool) and with define, over the
// wire, and checks that a client receives the same: the same structured
// content, the same text blocks (the first, which shows the fields as
// JSON, compared as JSON: the wrapper wrote its keys sorted), the same
// errors for bad arguments and for a handler's failure, and an error
// where the wrapper's output check found a null.
func TestRepliesAreTheSDKWrappersReplies(t *testing.T) {
	full := replyOut{Value: "v <&>", Items: []string{"a", "é"}, Maybe: new(42), Later: []string{"b"}, Ignored: []string{"x"},
		Truncation: pane.Truncation{Truncated: true, DroppedLines: 3}}
	shown, _ := json.Marshal(struct {
		Value string `json:"value"`
	}{full.Value})
	fenced := fence("pane text\n<pane-text X>")
	cases := []struct {
		name string
		res  func() *mcp.CallToolResult // a new result each call: both sides change it
		out  replyOut
		err  error
		args string
		// sdkArgs, if set, are the wrapper's arguments instead ("-": none).
		sdkArgs string
		// sameTo, if set, is where the texts of the two failures may
		// begin to differ.
		sameTo string
	}{
		{name: "fields only", res: func() *mcp.CallToolResult { return nil }, out: full, args: `{"name":"x"}`},
		{name: "empty fields", res: func() *mcp.CallToolResult { return nil }, out: replyOut{Items: []string{}}, args: `{"name":"x"}`},
		{name: "fields and pane text", out: full, args: `{"name":"x"}`, res: func() *mcp.CallToolResult {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(shown)}, &mcp.TextContent{Text: fenced}}}
		}},
		{name: "a handler's error", res: func() *mcp.CallToolResult { return nil }, err: errors.New("pane %9 is gone; call list_panes"), args: `{"name":"x"}`},
		{name: "an error result", args: `{"name":"x"}`, res: func() *mcp.CallToolResult {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "refused"}}}
		}},
		{name: "a null the schema does not allow", res: func() *mcp.CallToolResult { return nil }, out: replyOut{}, args: `{"name":"x"}`},
		{name: "a misspelt argument", res: func() *mcp.CallToolResult { return nil }, out: full, args: `{"name":"x","nmae":1}`},
		{name: "a missing argument", res: func() *mcp.CallToolResult { return nil }, out: full, args: `{}`},
		{name: "defaults applied", res: func() *mcp.CallToolResult { return nil }, out: full, args: `{"name":"x","n":2}`},
		{name: "a default overridden", res: func() *mcp.CallToolResult { return nil }, out: full, args: `{"name":"x","loud":false}`},
		{name: "an argument of the wrong type", res: func() *mcp.CallToolResult { return nil }, out: full, args: `{"name":"x","n":1.5}`},
		{name: "no arguments", res: func() *mcp.CallToolResult { return nil }, out: full},
		// The wrapper panics on null arguments: asked without any, it
		// gives what define's registration gives for null.
		{name: "null arguments", res: func() *mcp.CallToolResult { return nil }, out: full, args: `null`, sdkArgs: "-"},
		// The SDK's decoder quotes the value, encoding/json names its kind.
		{name: "arguments that are not an object", res: func() *mcp.CallToolResult { return nil }, out: full, args: `[1]`,
			sameTo: `validating "arguments": unmarshaling arguments: json: cannot unmarshal `},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var seen []fakeIn
			h := func(_ context.Context, _ *mcp.CallToolRequest, in fakeIn) (*mcp.CallToolResult, replyOut, error) {
				seen = append(seen, in)
				return c.res(), c.out, c.err
			}
			d := define(&mcp.Tool{Name: "fake", Annotations: readOnly()}, h)
			sdk := mcp.NewServer(&mcp.Implementation{Name: "sdk"}, nil)
			mcp.AddTool(sdk, checkedTool(d), h) // the same tool: the same schemas
			ours := mcp.NewServer(&mcp.Implementation{Name: "ours"}, nil)
			d.add(ours)
			sdkArgs := c.args
			switch c.sdkArgs {
			case "":
			case "-":
				sdkArgs = ""
			default:
				sdkArgs = c.sdkArgs
			}
			want := callRaw(t, serveRaw(t, sdk), sdkArgs)
			got := callRaw(t, serveRaw(t, ours), c.args)
			if c.sameTo != "" {
				want, got = failedWith(t, want, c.sameTo), failedWith(t, got, c.sameTo)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("arguments %s:\ngot  %v\nwant %v", c.args, got, want)
			}
			if len(seen) == 2 && !reflect.DeepEqual(seen[0], seen[1]) || len(seen) == 1 {
				t.Errorf("the handler saw %+v through the wrapper and %+v through define", seen[0], seen[1])
			}
		})
	}
}

// checkedTool is d's tool with the schemas tmcp checks its calls and
// replies against, for the SDK's wrapper to check them the same way: the
// closed input schema, not the open one clients are shown, and an output
// schema that gives each field the type docs/TOOLS.md gives it, where
// the one clients are shown names the fields only.
func checkedTool(d toolDef) *mcp.Tool {
	t := *d.tool
	t.InputSchema = d.input
	out := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for name, p := range d.result.Properties {
		out.Properties[name] = &jsonschema.Schema{Type: plainType(p)}
	}
	t.OutputSchema = out
	return &t
}

// callRaw calls the tool fake with args ("": none) and returns the response as a
// client decodes it: the result, with each text block that holds a JSON
// object decoded, or the error's code and whether it says it is about
// the tool's output.
func callRaw(t *testing.T, rpc *rawRPC, args string) any {
	t.Helper()
	rpc.lastID++
	params := map[string]any{"name": "fake"}
	if args != "" {
		params["arguments"] = json.RawMessage(args)
	}
	if err := rpc.send(map[string]any{"jsonrpc": "2.0", "id": rpc.lastID, "method": "tools/call", "params": params}); err != nil {
		t.Fatal(err)
	}
	line, err := rpc.r.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result map[string]any `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if resp.Error != nil {
		return fmt.Sprintf("error %d, about the output: %v", resp.Error.Code, strings.Contains(resp.Error.Message, "validating tool output"))
	}
	blocks, _ := resp.Result["content"].([]any)
	for _, b := range blocks {
		if b, ok := b.(map[string]any); ok {
			var v map[string]any
			if text, _ := b["text"].(string); json.Unmarshal([]byte(text), &v) == nil {
				b["text"] = v
			}
		}
	}
	return resp.Result
}

// failedWith checks that result, as callRaw returns it, is a tool's
// failure whose one text block begins with prefix, and returns it with
// that text cut to prefix.
func failedWith(t *testing.T, result any, prefix string) any {
	t.Helper()
	r, _ := result.(map[string]any)
	blocks, _ := r["content"].([]any)
	if r["isError"] != true || len(blocks) != 1 {
		t.Fatalf("%v: want a failure with one text block", result)
	}
	b := blocks[0].(map[string]any)
	if text, _ := b["text"].(string); !strings.HasPrefix(text, prefix) {
		t.Fatalf("failure %q, want one beginning %q", text, prefix)
	}
	b["text"] = prefix
	return r
}

func TestNonNullFieldsAreTheNilableFieldsTheSchemaTypes(t *testing.T) {
	schema := fullSchema[replyOut]()
	var got []string
	for _, f := range nonNullFields(reflect.TypeFor[replyOut](), schema) {
		got = append(got, f.name+":"+f.typ)
	}
	// maybe and later are left out when nil; Ignored is never written;
	// the embedded Truncation has no field that can be nil.
	if want := []string{"items:array"}; !slices.Equal(got, want) {
		t.Errorf("non-null fields %v, want %v", got, want)
	}
	if f := nonNullFields(reflect.TypeFor[*replyOut](), schema); len(f) != 1 {
		t.Errorf("through a pointer: %v, want items", f)
	}
}

// TestOutputSchemasTypeTheirFieldsAsGoWritesThem checks, for every tool,
// that each field of its documented output schema (docs/TOOLS.md) has the
// JSON type encoding/json gives the Go field, so that with the null check
// of structured every reply is what the reference says without being
// checked against it; and that the compact schema clients are shown names
// those same fields.
func TestOutputSchemasTypeTheirFieldsAsGoWritesThem(t *testing.T) {
	s := &Server{cfg: Config{Tier: Destructive}}
	for _, d := range s.definitions() {
		shown := d.tool.OutputSchema.(*outputSchema)
		if d.out.Kind() != reflect.Struct || plainType(d.result) != "object" || shown.Type != "object" {
			t.Errorf("%s: Out is a %s with a schema of type %q; want a struct, an object", d.tool.Name, d.out.Kind(), plainType(d.result))
			continue
		}
		for _, f := range jsonFields(d.out) {
			if _, ok := shown.Properties[f.name]; !ok && !slices.Contains(hostOnlyOutputs[d.tool.Name], f.name) {
				t.Errorf("%s: field %s is not in the output schema clients are shown", d.tool.Name, f.name)
			}
			p := d.result.Properties[f.name]
			if p == nil {
				t.Errorf("%s: field %s is not in the documented output schema", d.tool.Name, f.name)
				continue
			}
			if want := jsonType(f.field.Type); plainType(p) != want {
				t.Errorf("%s: field %s (%s) has type %q %v in the output schema; encoding/json writes it as %q", d.tool.Name, f.name, f.field.Type, p.Type, p.Types, want)
			}
		}
	}
}

// jsonType is the JSON type encoding/json writes a value of Go type t as,
// apart from null; "" when it may be any (an interface, a type that
// encodes itself).
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(reflect.TypeFor[json.Marshaler]()) || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Marshaler]()) {
		return ""
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string" // base64
		}
		return "array"
	case reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return ""
}

// TestNullArgumentsAreNoArguments sends "arguments": null to a tool whose
// input schema has a default (search_panes' matchCase), which the SDK's
// wrapper panicked on, taking the server down: the call is answered as
// one without arguments (its pattern is missing), and the server answers
// the next.
func TestNullArgumentsAreNoArguments(t *testing.T) {
	rpc := serveRaw(t, newTestServer(t, DefaultTier).MCPServer(context.Background()))
	for _, args := range []any{json.RawMessage(`null`), map[string]any{}} {
		line, err := rpc.call("tools/call", map[string]any{"name": "search_panes", "arguments": args})
		if err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Result struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &resp); err != nil || !resp.Result.IsError || len(resp.Result.Content) != 1 ||
			!strings.Contains(resp.Result.Content[0].Text, "missing properties") {
			t.Errorf("search_panes with arguments %s: %s, want a failure naming the missing properties", args, line)
		}
	}
}

func TestStructuredEncodesWhatAPointerPointsTo(t *testing.T) {
	out := replyOut{Value: "v", Items: []string{}}
	fields := nonNullFields(reflect.TypeFor[*replyOut](), fullSchema[replyOut]())
	byValue, err := structured(nil, out, fields)
	if err != nil {
		t.Fatal(err)
	}
	byPointer, err := structured(nil, &out, fields)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(byPointer.StructuredContent.(json.RawMessage)), string(byValue.StructuredContent.(json.RawMessage)); got != want {
		t.Errorf("through a pointer %s, by value %s", got, want)
	}
	if _, err := structured(nil, (*replyOut)(nil), fields); err == nil || !strings.Contains(err.Error(), "items is null") {
		t.Errorf("a nil pointer: %v, want the zero value's null items refused", err)
	}
}
