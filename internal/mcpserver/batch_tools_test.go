package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type fakeIn struct {
	Name string `json:"name"`
	N    int    `json:"n,omitempty"`
}

type fakeOut struct {
	Value string `json:"value"`
}

// fakeTool is a tool whose handler returns what the case asks for.
func fakeTool(res *mcp.CallToolResult, out fakeOut, err error) toolDef {
	return define(&mcp.Tool{Name: "fake", Annotations: readOnly("Fake")},
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
		{`[1]`, "arguments must be an object"},
	}
	for _, c := range cases {
		_, err := d.call.prepare(json.RawMessage(c.args))
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("prepare(%s): %v, want %q", c.args, err, c.want)
		}
	}
}
