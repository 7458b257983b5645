package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/syncbuf"
)

// readTimeout bounds a test's wait for a message it expects; reading
// tens of megabytes under the race detector on a loaded machine is slow.
const readTimeout = time.Minute

func TestDecodeLineReturnsTheMessageOrTheReplyOwed(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       string // the reply on the wire, "request", "response", or "" for nothing
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "request"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/x"}`, "request"},
		{"padded request", " \t{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"} \r\n", "request"},
		{"invalid UTF-8 in a string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", "request"},
		{"response", `{"jsonrpc":"2.0","id":1,"result":{}}`, "response"},
		{"error response", `{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"}}`, "response"},
		{"error response with id null", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}`, ""},
		{"response with a bad version", `{"jsonrpc":"1.0","id":1,"result":{}}`, ""},
		{"empty", ``, ""},
		{"blank", " \t\r\n", ""},
		{"not JSON", `hello`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not JSON"}}`},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"ping"`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not JSON"}}`},
		{"two values", `{} {}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not JSON"}}`},
		{"a number", `42`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: not a JSON-RPC message object"}}`},
		{"empty object", `{}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be \"2.0\""}}`},
		{"no version", `{"id":10,"method":"ping"}`, `{"jsonrpc":"2.0","id":10,"error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be \"2.0\""}}`},
		{"version a number", `{"jsonrpc":2,"id":"s","method":"ping"}`, `{"jsonrpc":"2.0","id":"s","error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be \"2.0\""}}`},
		{"method a number", `{"jsonrpc":"2.0","id":11,"method":5}`, `{"jsonrpc":"2.0","id":11,"error":{"code":-32600,"message":"Invalid Request: the method is not a string"}}`},
		{"method null", `{"jsonrpc":"2.0","id":11,"method":null}`, `{"jsonrpc":"2.0","id":11,"error":{"code":-32600,"message":"Invalid Request: the method is not a string"}}`},
		{"id an object", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: the id is not a string or an integer"}}`},
		{"id a fraction", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: the id is not a string or an integer"}}`},
		{"id past int64", `{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: the id is not a string or an integer"}}`},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: the id must not be null"}}`},
		{"negative id", `{"jsonrpc":"2.0","id":-3,"method":"ping"}`, "request"},
		{"id and nothing else", `{"jsonrpc":"2.0","id":12}`, `{"jsonrpc":"2.0","id":12,"error":{"code":-32600,"message":"Invalid Request: no method, and no result or error"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg, reply := decodeLine([]byte(c.line))
			var got string
			switch {
			case msg != nil && reply != nil:
				t.Fatalf("decodeLine(%q) returned both a message and a reply", c.line)
			case reply != nil:
				b, err := encode(reply)
				if err != nil {
					t.Fatal(err)
				}
				got = string(b)
			case msg != nil:
				_, isReq := msg.(*jsonrpc.Request)
				got = map[bool]string{true: "request", false: "response"}[isReq]
			}
			if got != c.want {
				t.Errorf("decodeLine(%q) = %s, want %s", c.line, got, c.want)
			}
		})
	}
}

// lockedBuffer collects what a connection writes.
type lockedBuffer struct{ syncbuf.Buffer }

func (l *lockedBuffer) Close() error { return nil }

// lines returns the lines written so far.
func (l *lockedBuffer) lines() []string {
	return strings.Split(strings.TrimSuffix(l.String(), "\n"), "\n")
}

// connect connects a Transport reading from in and writing to a buffer.
func connect(t testing.TB, in io.Reader) (mcp.Connection, *lockedBuffer) {
	t.Helper()
	out := &lockedBuffer{}
	c, err := (&Transport{Reader: io.NopCloser(in), Writer: out}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, out
}

// readAll reads messages until the connection reports EOF.
func readAll(t testing.TB, c mcp.Connection) []jsonrpc.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	var msgs []jsonrpc.Message
	for {
		msg, err := c.Read(ctx)
		if errors.Is(err, io.EOF) {
			return msgs
		}
		if err != nil {
			t.Fatalf("Read after %d messages: %v", len(msgs), err)
		}
		msgs = append(msgs, msg)
	}
}

// intID is the request id n.
func intID(n int) jsonrpc.ID {
	id, err := jsonrpc.MakeID(float64(n))
	if err != nil {
		panic(err)
	}
	return id
}

// ids lists the ids of msgs, as JSON.
func ids(msgs []jsonrpc.Message) string {
	var out []string
	for _, m := range msgs {
		switch m := m.(type) {
		case *jsonrpc.Request:
			out = append(out, fmt.Sprintf("%v", m.ID.Raw()))
		case *jsonrpc.Response:
			out = append(out, fmt.Sprintf("r%v", m.ID.Raw()))
		}
	}
	return strings.Join(out, " ")
}

func TestBadLinesAreAnsweredInOrderAndGoodOnesDelivered(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`hello`,
		``,
		`{"jsonrpc":"2.0","id":2,"method":5}`,
		`{"jsonrpc":"2.0","id":99,"result":{}}`,
		strings.Repeat("x", 10<<20),
		`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("p", 20<<20) + `"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`, // no newline after the last line
	}, "\n")
	c, out := connect(t, strings.NewReader(in))
	msgs := readAll(t, c)
	if got, want := ids(msgs), "1 r99 3 4"; got != want {
		t.Errorf("delivered %s, want %s", got, want)
	}
	want := []string{
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not JSON"}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid Request: the method is not a string"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not JSON"}}`,
	}
	if got := out.lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("wrote\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// reply writes the SDK's answer to a request: an empty result.
func reply(t testing.TB, c mcp.Connection, msg jsonrpc.Message) {
	t.Helper()
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return
	}
	result := json.RawMessage(`{}`)
	if req.Method == "initialize" {
		result = json.RawMessage(`{"protocolVersion":"2025-06-18"}`)
	}
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: req.ID, Result: result}); err != nil {
		t.Fatal(err)
	}
}

func TestABatchIsAnsweredAsOneArrayUntilAVersionWithoutBatchesIsAgreed(t *testing.T) {
	in, feed := io.Pipe()
	c, out := connect(t, in)
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	// One writer keeps the lines in order; the pipe blocks each write
	// until the connection has read it.
	lines := make(chan string, 8)
	defer close(lines)
	go func() {
		for l := range lines {
			feed.Write([]byte(l + "\n"))
		}
	}()
	send := func(line string) { lines <- line }
	read := func() jsonrpc.Message {
		t.Helper()
		msg, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}

	send(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},5,{"jsonrpc":"2.0","id":2,"method":"b"}]`)
	first, note, second := read(), read(), read()
	if got := ids([]jsonrpc.Message{first, note, second}); got != "1 <nil> 2" {
		t.Fatalf("batch delivered %s, want 1 <nil> 2", got)
	}
	reply(t, c, second)
	if got := out.lines(); len(got) != 1 || got[0] != "" {
		t.Fatalf("wrote %q before the batch's last call was answered", got)
	}
	reply(t, c, first)
	want := `[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: not a JSON-RPC message object"}},{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":1,"result":{}}]`
	if got := out.lines(); len(got) != 1 || got[0] != want {
		t.Fatalf("batch reply %q, want %s", got, want)
	}

	send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{}}`)
	reply(t, c, read())
	send(`[{"jsonrpc":"2.0","id":3,"method":"a"}]`)
	send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if got := ids([]jsonrpc.Message{read()}); got != "4" {
		t.Fatalf("after a refused batch, delivered %s, want 4", got)
	}
	written := out.lines()
	if got, want := written[len(written)-1], `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: protocol version 2025-06-18 has no JSON-RPC batches"}}`; got != want {
		t.Errorf("batch after 2025-06-18 answered %s, want %s", got, want)
	}
}

func TestConcurrentWritesAndOwnRepliesNeverInterleave(t *testing.T) {
	const n = 200
	in := strings.Repeat("garbage that is not JSON\n", n)
	c, out := connect(t, strings.NewReader(in))
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp := &jsonrpc.Response{ID: intID(i), Result: json.RawMessage(`{"text":"` + strings.Repeat("w", 4096) + `"}`)}
			if err := c.Write(context.Background(), resp); err != nil {
				t.Error(err)
			}
		})
	}
	readAll(t, c)
	wg.Wait()
	lines := out.lines()
	if len(lines) != 2*n {
		t.Errorf("wrote %d lines, want %d", len(lines), 2*n)
	}
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("line %d is not JSON: %.100q", i, l)
		}
	}
}

func TestCloseEndsAWaitingRead(t *testing.T) {
	in, _ := io.Pipe()
	c, _ := connect(t, in)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		done <- err
	}()
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, io.EOF) {
			t.Errorf("Read after Close: %v, want io.EOF", err)
		}
	case <-time.After(readTimeout):
		t.Fatal("Read still waiting after Close")
	}
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: intID(1)}); !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Errorf("Write after Close: %v, want %v", err, mcp.ErrConnectionClosed)
	}
}

// TestArriveSeesEachMessageBeforeReadAndBeforeTheNextLine: Arrive runs in
// the read loop, so what it sets on a message is there when Read returns
// it, and a line after it is not read while Arrive has not returned.
func TestArriveSeesEachMessageBeforeReadAndBeforeTheNextLine(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	release := make(chan struct{})
	var arrived []string
	tr := &Transport{Reader: pr, Writer: &lockedBuffer{}, Arrive: func(msg jsonrpc.Message) {
		req := msg.(*jsonrpc.Request)
		arrived = append(arrived, fmt.Sprint(req.ID.Raw()))
		req.Method += "+arrived"
		if len(arrived) == 1 {
			<-release
		}
	}}
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	written := make(chan struct{})
	go func() {
		defer close(written)
		fmt.Fprintln(pw, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		fmt.Fprintln(pw, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	}()
	select {
	case <-written:
		t.Fatal("the second line was read while Arrive held the first")
	case <-time.After(50 * time.Millisecond): // an absence: the pipe stays full
	}
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	for i := 1; i <= 2; i++ {
		msg, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if req := msg.(*jsonrpc.Request); req.Method != "ping+arrived" {
			t.Errorf("message %d read with method %q, want what Arrive set, %q", i, req.Method, "ping+arrived")
		}
	}
	if got := strings.Join(arrived, " "); got != "1 2" {
		t.Errorf("Arrive saw %q, want \"1 2\"", got)
	}
}

func TestAReplyIsEncodedAsTheSDKEncodesIt(t *testing.T) {
	id := func(v any) jsonrpc.ID {
		t.Helper()
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	tests := []struct {
		name string
		resp *jsonrpc.Response
	}{
		{"number id", &jsonrpc.Response{ID: id(float64(7)), Result: json.RawMessage(`{"content":[]}`)}},
		{"string id with html", &jsonrpc.Response{ID: id("a<b>&c"), Result: json.RawMessage(`{"text":"<x> & y"}`)}},
		{"string id with quotes", &jsonrpc.Response{ID: id(`q"1\`), Result: json.RawMessage(`[1,2]`)}},
		{"large result", &jsonrpc.Response{ID: id(float64(1)), Result: json.RawMessage(`{"panes":[` + strings.Repeat(`{"paneId":"%1","path":"/tmp"},`, 1000) + `{}]}`)}},
		// Left to the SDK's encoder, which compacts them.
		{"result with a newline", &jsonrpc.Response{ID: id(float64(2)), Result: json.RawMessage("{\n\"a\": 1}")}},
		{"no result", &jsonrpc.Response{ID: id(float64(3))}},
		{"error", &jsonrpc.Response{ID: id(float64(4)), Error: &jsonrpc.Error{Code: -32601, Message: "no such method"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encode(tt.resp)
			if err != nil {
				t.Fatal(err)
			}
			want, err := jsonrpc.EncodeMessage(tt.resp)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encode:\n got %.300s\nwant %.300s", got, want)
			}
			if bytes.IndexByte(got, '\n') >= 0 {
				t.Errorf("the reply holds a newline: %q", got)
			}
		})
	}
}
