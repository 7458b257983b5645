package main

// End-to-end tests of what tmcp does with whatever a client writes on its
// stdin: each hostile line gets the JSON-RPC reply named for it, or none
// where the spec says so, and the session goes on.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/syncbuf"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// wireReply is one message tmcp wrote on its stdout.
type wireReply struct {
	Method string          `json:"method"` // set on a notification or request from tmcp
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

// rawWire is tmcp with the test writing raw lines to its stdin and reading
// raw lines from its stdout.
type rawWire struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    chan wireReply // closed at tmcp's EOF
	stderr *syncbuf.Buffer
	exited chan error
}

// startRawTMCP starts tmcp against srv and initializes an MCP session by
// hand; tmcp is killed, if still running, when the test ends.
func startRawTMCP(t *testing.T, srv *tmuxtest.Server) *rawWire {
	t.Helper()
	cmd := tmcpCommand(srv, launchOptions{})
	w := &rawWire{t: t, cmd: cmd, out: make(chan wireReply, 64), stderr: &syncbuf.Buffer{}, exited: make(chan error, 1)}
	cmd.Stderr = w.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting tmcp: %v", err)
	}
	w.in = in
	go w.readReplies(out)
	t.Cleanup(func() {
		_ = in.Close()
		select {
		case <-w.exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-w.exited
		}
		if t.Failed() {
			t.Logf("tmcp stderr:\n%s", w.stderr.String())
		}
	})
	w.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire-e2e","version":"test"}}}`)
	w.await(`"init"`)
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return w
}

// readReplies decodes tmcp's stdout line by line until EOF, then reaps
// tmcp.
func (w *rawWire) readReplies(out io.Reader) {
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			rep := wireReply{raw: string(line)}
			if jerr := json.Unmarshal(line, &rep); jerr != nil {
				rep.Method = "(not JSON)"
			}
			w.out <- rep
		}
		if err != nil {
			break
		}
	}
	close(w.out)
	w.exited <- w.cmd.Wait()
}

// send writes line and a newline to tmcp's stdin.
func (w *rawWire) send(line string) {
	w.t.Helper()
	if _, err := io.WriteString(w.in, line+"\n"); err != nil {
		w.t.Fatalf("writing %s to tmcp: %v", abbrev(line), err)
	}
}

// next returns the next reply, skipping messages tmcp sends of its own;
// ok is false at tmcp's EOF.
func (w *rawWire) next() (rep wireReply, ok bool) {
	w.t.Helper()
	timer := time.NewTimer(callTimeout)
	defer timer.Stop()
	for {
		select {
		case rep, ok := <-w.out:
			if ok && rep.Method != "" && rep.Method != "(not JSON)" {
				continue
			}
			return rep, ok
		case <-timer.C:
			w.t.Fatalf("no reply from tmcp within %v", callTimeout)
		}
	}
}

// await reads replies until the one with the given id (compact JSON),
// failing on any other.
func (w *rawWire) await(id string) wireReply {
	w.t.Helper()
	for {
		rep, ok := w.next()
		if !ok {
			w.t.Fatalf("tmcp ended (exit: %v) before replying to id %s", w.exitStatus(), id)
		}
		if string(rep.ID) == id {
			return rep
		}
		w.t.Fatalf("waiting for the reply to id %s, got %s", id, abbrev(rep.raw))
	}
}

// exitStatus is how tmcp ended, once its stdout has closed.
func (w *rawWire) exitStatus() error {
	select {
	case err := <-w.exited:
		w.exited <- err
		return err
	case <-time.After(5 * time.Second):
		return errors.New("still running")
	}
}

// closeAndWait closes tmcp's stdin, fails on any reply still unread, and
// checks that tmcp ends cleanly at the EOF.
func (w *rawWire) closeAndWait() {
	w.t.Helper()
	_ = w.in.Close()
	for {
		rep, ok := w.next()
		if !ok {
			break
		}
		w.t.Errorf("unexpected reply: %s", abbrev(rep.raw))
	}
	if err := w.exitStatus(); err != nil {
		w.t.Errorf("tmcp ended with %v at EOF, want a clean exit", err)
	}
}

// abbrev shortens a long line for a failure message.
func abbrev(s string) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > 200 {
		return fmt.Sprintf("%q… (%d bytes)", s[:200], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// wantError is one error reply a hostile line must get.
type wantError struct {
	id   string // compact JSON
	code int
}

// hostileLines are lines a client may write, each with the replies
// JSON-RPC 2.0 and MCP name for it.
var hostileLines = []struct {
	name string
	line string
	want []wantError // none: the line is ignored
}{
	{"not JSON", `hello`, []wantError{{"null", -32700}}},
	{"truncated JSON", `{"jsonrpc":"2.0","id":7,"method":"ping"`, []wantError{{"null", -32700}}},
	{"two messages on one line", `{"jsonrpc":"2.0","id":70,"method":"ping"} {"jsonrpc":"2.0","id":71,"method":"ping"}`, []wantError{{"null", -32700}}},
	{"invalid UTF-8 outside strings", "\xff\xfe{\"jsonrpc\":\"2.0\"}", []wantError{{"null", -32700}}},
	{"NUL and control bytes", "\x00\x01\x1b[2J", []wantError{{"null", -32700}}},
	{"a number", `42`, []wantError{{"null", -32600}}},
	{"a string", `"ping"`, []wantError{{"null", -32600}}},
	{"null", `null`, []wantError{{"null", -32600}}},
	{"an empty object", `{}`, []wantError{{"null", -32600}}},
	{"no jsonrpc member", `{"id":10,"method":"ping"}`, []wantError{{"10", -32600}}},
	{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":"v1","method":"ping"}`, []wantError{{`"v1"`, -32600}}},
	{"method not a string", `{"jsonrpc":"2.0","id":11,"method":5}`, []wantError{{"11", -32600}}},
	{"id an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, []wantError{{"null", -32600}}},
	{"id a boolean", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, []wantError{{"null", -32600}}},
	{"id a fraction", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, []wantError{{"null", -32600}}},
	{"id null (MCP forbids it)", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, []wantError{{"null", -32600}}},
	{"neither request nor response", `{"jsonrpc":"2.0","id":12}`, []wantError{{"12", -32600}}},
	{"an empty batch", `[]`, []wantError{{"null", -32600}}},
	{"a batch after batching was dropped (2025-06-18)", `[{"jsonrpc":"2.0","id":13,"method":"ping"}]`, []wantError{{"null", -32600}}},
	{"unknown method", `{"jsonrpc":"2.0","id":14,"method":"no/such/method"}`, []wantError{{"14", -32601}}},
	{"empty method", `{"jsonrpc":"2.0","id":15,"method":""}`, []wantError{{"15", -32601}}},
	{"tools/call with a name that is a number", `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":5}}`, []wantError{{"16", -32602}}},
	{"tools/call with params an array", `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":[1,2]}`, []wantError{{"17", -32602}}},
	{"tools/call with params a string", `{"jsonrpc":"2.0","id":18,"method":"tools/call","params":"x"}`, []wantError{{"18", -32602}}},
	{"tools/call of an unknown tool", `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`, []wantError{{"19", -32602}}},
	{"tools/list with a cursor that is a number", `{"jsonrpc":"2.0","id":20,"method":"tools/list","params":{"cursor":5}}`, []wantError{{"20", -32602}}},
	{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/no_such_thing","params":{}}`, nil},
	{"notification with ill-typed params", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}`, nil},
	{"response nobody asked for", `{"jsonrpc":"2.0","id":99,"result":{}}`, nil},
	{"error response nobody asked for", `{"jsonrpc":"2.0","id":98,"error":{"code":-32000,"message":"no"}}`, nil},
	{"error response with id null", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, nil},
	{"empty line", ``, nil},
	{"blank line", " \t \r", nil},
	{"CRLF line ending", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/no_such_thing\"}\r", nil},
	{"10 MB of garbage", strings.Repeat("x", 10<<20), []wantError{{"null", -32700}}},
	{"10 MB of JSON that is not a message", `{"jsonrpc":"2.0","id":21,"junk":"` + strings.Repeat("y", 10<<20) + `"}`, []wantError{{"21", -32600}}},
	{"10 MB of unknown method", `{"jsonrpc":"2.0","id":22,"method":"no/such/method","params":{"p":"` + strings.Repeat("z", 10<<20) + `"}}`, []wantError{{"22", -32601}}},
}

// goodLines are lines that must be answered as usual, whatever odd bytes
// they carry.
var goodLines = []struct {
	name string
	line string
	id   string
}{
	{"invalid UTF-8 inside a string", "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"ping\",\"params\":{\"_meta\":{\"x\":\"\xff\xc3(\"}}}", "30"},
	{"a 20 MB ping, past the SDK's 16 MB frame limit", `{"jsonrpc":"2.0","id":31,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("p", 20<<20) + `"}}}`, "31"},
	{"whitespace around a message", " \t{\"jsonrpc\":\"2.0\",\"id\":32,\"method\":\"ping\"}  ", "32"},
}

// sendHostile writes one hostile line followed by a ping, and checks the
// replies to both.
func (w *rawWire) sendHostile(n int, line string, want []wantError) {
	w.t.Helper()
	w.send(line)
	pingID := fmt.Sprintf(`"after-%d"`, n)
	w.send(`{"jsonrpc":"2.0","id":` + pingID + `,"method":"ping"}`)
	pending := map[string]int{}
	for _, e := range want {
		pending[e.id] = e.code
	}
	pinged := false
	for !pinged || len(pending) > 0 {
		rep, ok := w.next()
		if !ok {
			w.t.Fatalf("tmcp ended (exit: %v) after %s; still waiting for the ping %s and errors %v", w.exitStatus(), abbrev(line), pingID, pending)
		}
		id := string(rep.ID)
		if id == pingID {
			if rep.Error != nil || string(rep.Result) != "{}" {
				w.t.Errorf("ping %s after %s: got %s, want result {}", pingID, abbrev(line), abbrev(rep.raw))
			}
			pinged = true
			continue
		}
		code, wanted := pending[id]
		switch {
		case !wanted:
			w.t.Errorf("after %s: unexpected reply %s", abbrev(line), abbrev(rep.raw))
		case rep.Error == nil:
			w.t.Errorf("after %s: got %s, want error %d with id %s", abbrev(line), abbrev(rep.raw), code, id)
		case rep.Error.Code != code:
			w.t.Errorf("after %s: error code %d (%q) with id %s, want %d", abbrev(line), rep.Error.Code, rep.Error.Message, id, code)
		}
		delete(pending, id)
	}
}

func TestEveryHostileLineGetsItsReplyAndTheNextRequestIsAnswered(t *testing.T) {
	srv := tmuxtest.New(t)
	for i, c := range hostileLines {
		t.Run(c.name, func(t *testing.T) {
			w := startRawTMCP(t, srv)
			w.sendHostile(i, c.line, c.want)
			w.closeAndWait()
		})
	}
}

func TestOddButValidRequestsAreAnswered(t *testing.T) {
	srv := tmuxtest.New(t)
	for _, c := range goodLines {
		t.Run(c.name, func(t *testing.T) {
			w := startRawTMCP(t, srv)
			w.send(c.line)
			rep := w.await(c.id)
			if rep.Error != nil || string(rep.Result) != "{}" {
				t.Errorf("got %s, want result {}", abbrev(rep.raw))
			}
			w.closeAndWait()
		})
	}
}

func TestOneSessionOutlivesEveryHostileLine(t *testing.T) {
	w := startRawTMCP(t, tmuxtest.New(t))
	for i, c := range hostileLines {
		w.sendHostile(i, c.line, c.want)
	}
	w.send(`{"jsonrpc":"2.0","id":"last","method":"tools/list"}`)
	if rep := w.await(`"last"`); rep.Error != nil || !strings.Contains(string(rep.Result), `"tools"`) {
		t.Errorf("tools/list after every hostile line: got %s", abbrev(rep.raw))
	}
	w.closeAndWait()
}

func TestHostileLinesDuringAWaitAreAnsweredAndTheWaitStillMatches(t *testing.T) {
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	w := startRawTMCP(t, srv)
	w.send(`{"jsonrpc":"2.0","id":"wait","method":"tools/call","params":{"name":"wait_for_text","arguments":{"paneId":"` + pane + `","patterns":["WIRE-DONE"],"timeoutSeconds":50}}}`)
	// sendHostile fails on any reply it did not ask for, the wait's too.
	for i, c := range hostileLines {
		w.sendHostile(i, c.line, c.want)
	}
	srv.Must("send-keys", "-t", pane, "printf 'WIRE-%s\\n' DONE", "Enter")
	rep := w.await(`"wait"`)
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Outcome string `json:"outcome"`
			Matched string `json:"matched"`
		} `json:"structuredContent"`
	}
	if rep.Error != nil || json.Unmarshal(rep.Result, &res) != nil || res.IsError ||
		res.StructuredContent.Outcome != "matched" || res.StructuredContent.Matched != "WIRE-DONE" {
		t.Errorf("wait_for_text on %s after the hostile lines: got %s, want outcome matched on WIRE-DONE", pane, abbrev(rep.raw))
	}
	w.closeAndWait()
}

func TestASignalEndsTheSessionCleanlyAfterHostileLines(t *testing.T) {
	w := startRawTMCP(t, tmuxtest.New(t))
	for i, c := range hostileLines[:5] {
		w.sendHostile(i, c.line, c.want)
	}
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for {
		rep, ok := w.next()
		if !ok {
			break
		}
		t.Errorf("unexpected reply after SIGTERM: %s", abbrev(rep.raw))
	}
	if err := w.exitStatus(); err != nil {
		t.Errorf("tmcp ended with %v on SIGTERM, want a clean exit", err)
	}
}
