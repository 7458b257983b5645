package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type fakeIn struct {
	Name string `json:"name"`
	N    int    `json:"n,omitempty"`
	Loud *bool  `json:"loud,omitempty" jsonschema:"default true"`
}

type fakeOut struct {
	Value string `json:"value"`
}

// fakeTool is a tool whose handler returns what the case asks for.
func fakeTool(res *mcp.CallToolResult, out fakeOut, err error) toolDef {
	return define(&mcp.Tool{Name: "fake", Annotations: readOnly()},
		func(context.Context, *mcp.CallToolRequest, fakeIn) (*mcp.CallToolResult, fakeOut, error) {
			return res, out, err
		})
}

func TestABatchCallIsReportedBounded(t *testing.T) {
	long := strings.Repeat("é", maxBatchCallBytes) // two bytes each
	cases := []struct {
		name                string
		def                 toolDef
		wantErr             string
		wantText, wantValue string
		wantDropped         int
	}{
		{name: "fields only", def: fakeTool(nil, fakeOut{Value: "v"}, nil), wantValue: "v"},
		{name: "fields and pane text", def: fakeTool(textResult(fakeOut{Value: "v"}, "line"), fakeOut{Value: "v"}, nil), wantValue: "v", wantText: "line"},
		{name: "long text keeps its last whole characters", def: fakeTool(textResult(fakeOut{Value: "v"}, long), fakeOut{Value: "v"}, nil),
			wantValue: "v", wantText: long[len(long)-(maxBatchCallBytes-len(`{"value":"v"}`))+1:], wantDropped: len(long) - (maxBatchCallBytes - len(`{"value":"v"}`)) + 1},
		{name: "a result too large is dropped", def: fakeTool(nil, fakeOut{Value: long}, nil), wantDropped: len(`{"value":""}`) + len(long)},
		{name: "a handler error", def: fakeTool(nil, fakeOut{}, errors.New("pane %9 is gone; call list_panes")), wantErr: "pane %9 is gone; call list_panes"},
		{name: "an error result", def: fakeTool(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "refused"}}}, fakeOut{}, nil), wantErr: "refused"},
		{name: "a confirmation to ask", def: fakeTool(&mcp.CallToolResult{InputRequests: mcp.InputRequestMap{confirmID: &mcp.ElicitParams{}}, RequestState: "kill pane %0"}, fakeOut{}, nil),
			wantErr: "it needs the person's confirmation (kill pane %0), which a batch cannot ask for; call fake on its own"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args, err := c.def.call.prepare(json.RawMessage(`{"name":"x"}`))
			if err != nil {
				t.Fatal(err)
			}
			done, err := runInBatch(context.Background(), &mcp.CallToolRequest{}, planned{def: c.def, args: args})
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got fakeOut
			if done.Result != nil {
				b, _ := json.Marshal(done.Result)
				_ = json.Unmarshal(b, &got)
			}
			if got.Value != c.wantValue || done.Text != c.wantText || done.DroppedBytes != c.wantDropped {
				t.Errorf("value %.20q, text %d bytes, dropped %d; want %.20q, %d bytes, %d", got.Value, len(done.Text), done.DroppedBytes, c.wantValue, len(c.wantText), c.wantDropped)
			}
		})
	}
}

func TestBatchArgumentsAreCheckedAsTheSDKChecksThem(t *testing.T) {
	d := fakeTool(nil, fakeOut{}, nil)
	cases := []struct{ args, want string }{
		{`{"name":"x","n":2}`, ""},
		{`{"name":"x","nmae":2}`, "unexpected additional properties"},
		{`{"n":2}`, "missing properties"},
		{`{"name":3}`, "want \"string\""},
		{`[1]`, "unmarshaling arguments"},
	}
	for _, c := range cases {
		_, err := d.call.prepare(json.RawMessage(c.args))
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("prepare(%s): %v, want %q", c.args, err, c.want)
		}
	}
}

// TestBatchChecksArgumentsAsTheSDKDoes gives the same arguments to a tool
// through tools/call, where the SDK checks them, and through a batch's
// check: both must accept or refuse alike, with the same message, and
// the handler must see the same input (defaults applied).
func TestBatchChecksArgumentsAsTheSDKDoes(t *testing.T) {
	var seen []fakeIn
	h := func(_ context.Context, _ *mcp.CallToolRequest, in fakeIn) (*mcp.CallToolResult, fakeOut, error) {
		seen = append(seen, in)
		return nil, fakeOut{Value: in.Name}, nil
	}
	d := define(&mcp.Tool{Name: "fake", Annotations: readOnly()}, h)
	ctx := context.Background()
	m := mcp.NewServer(&mcp.Implementation{Name: "sdk"}, nil)
	mcp.AddTool(m, checkedTool(d), h) // the SDK's own wrapper, not define's registration
	st, ct := mcp.NewInMemoryTransports()
	ss, err := m.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, args := range []string{
		`{"name":"x"}`, `{"name":"x","n":2,"loud":false}`, `{"name":"x","nmae":2}`, `{"n":2}`, `{"name":3}`,
		`{"name":"x","n":1.5}`, `{"name":"x","loud":"yes"}`, `{}`,
	} {
		seen = nil
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("tools/call %s: %v", args, err)
		}
		sdkErr := ""
		if res.IsError {
			sdkErr = batchText(res.Content)
		}
		var ours string
		prepared, err := d.call.prepare(json.RawMessage(args))
		if err != nil {
			ours = err.Error()
		}
		if ours != sdkErr {
			t.Errorf("arguments %s: the SDK says %q, the batch says %q", args, sdkErr, ours)
			continue
		}
		if ours != "" {
			continue
		}
		if _, _, err := d.call.run(ctx, &mcp.CallToolRequest{}, prepared); err != nil {
			t.Fatalf("arguments %s: %v", args, err)
		}
		if len(seen) != 2 || !reflect.DeepEqual(seen[0], seen[1]) {
			t.Errorf("arguments %s: the handler saw %s through the SDK and %s through the batch", args, show(seen, 0), show(seen, 1))
		}
	}
}

func show(seen []fakeIn, i int) string {
	if i >= len(seen) {
		return "nothing"
	}
	b, _ := json.Marshal(seen[i])
	return string(b)
}
