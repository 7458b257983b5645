package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/mcpserver"
)

const (
	// tmcpPackage is the command under test, relative to the module root.
	tmcpPackage = "./cmd/tmcp"
	// buildTimeout bounds compiling it.
	buildTimeout = 90 * time.Second
	// tmcpTerminate is how long a tmcp whose stdin closed may take to exit
	// before the SDK sends it SIGTERM.
	tmcpTerminate = 2 * time.Second
)

// tmcpResult is what the benchmark measured of tmcp.
type tmcpResult struct {
	list, capture, start summary
	// ping is an MCP round trip that reaches no tmux: what the protocol
	// and the stdio transport cost each call.
	ping summary
	// processesStarted is how many tmux processes (children of tmcp) a
	// childWatcher saw appear during cfg.n list_sessions calls.
	processesStarted int
}

// buildTmcp compiles tmcp from the module enclosing the working directory
// into dir and returns the binary's path.
func buildTmcp(ctx context.Context, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	out, err := childCommand(ctx, nil, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the tmcp module: run `go run ./bench` from the module")
	}
	bin := filepath.Join(dir, "tmcp")
	build := childCommand(ctx, nil, "go", "build", "-o", bin, tmcpPackage)
	build.Dir = filepath.Dir(gomod)
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", tmcpPackage, err, out)
	}
	return bin, nil
}

// measureTmcp times list_sessions and capture_pane calls over p's MCP
// session, then whole start-ups, each in a new one.
func measureTmcp(ctx context.Context, p *tmcpProcess, bin string, srv *tmuxServer, cfg config) (res tmcpResult, err error) {
	listOnce := p.callOnce("list_sessions", nil, func(r *mcp.CallToolResult) error {
		if b, _ := json.Marshal(r.StructuredContent); !bytes.Contains(b, []byte(`"sessionName":"`+sessionName+`"`)) {
			return fmt.Errorf("list_sessions lacks session %q: %s", sessionName, b)
		}
		return nil
	})
	if res.list, err = sample(ctx, cfg.warmups, cfg.n, listOnce); err != nil {
		return res, fmt.Errorf("tmcp list_sessions: %w", err)
	}
	// The watcher costs each call a little, so it watches calls of its own.
	if res.processesStarted, err = countChildren(ctx, p.pid(), cfg.n, listOnce); err != nil {
		return res, fmt.Errorf("tmcp list_sessions, watched: %w", err)
	}
	if res.ping, err = sample(ctx, cfg.warmups, cfg.n, timed(func(ctx context.Context) error {
		return p.session.Ping(ctx, nil)
	})); err != nil {
		return res, fmt.Errorf("MCP ping: %w", err)
	}

	captureOnce := p.callOnce("capture_pane", map[string]any{"paneId": srv.pane}, func(r *mcp.CallToolResult) error {
		if text := resultText(r); !strings.Contains(text, lastRow()) {
			return fmt.Errorf("capture_pane of %s lacks %q: %s", srv.pane, lastRow(), text)
		}
		return nil
	})
	if res.capture, err = sample(ctx, cfg.warmups, cfg.n, captureOnce); err != nil {
		return res, fmt.Errorf("tmcp capture_pane: %w", err)
	}

	client := newClient()
	res.start, err = sample(ctx, cfg.startWarmups, cfg.starts, func(ctx context.Context) (time.Duration, error) {
		return timeStart(ctx, client, bin, srv)
	})
	if err != nil {
		return res, fmt.Errorf("tmcp start to tools/list: %w", err)
	}
	return res, nil
}

// newClient is the MCP client the benchmark speaks as.
func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "tmcp-bench", Version: "1"}, nil)
}

// timeStart starts tmcp, initializes an MCP session, lists the tools and
// returns how long that took; closing the session is not timed.
func timeStart(ctx context.Context, client *mcp.Client, bin string, srv *tmuxServer) (time.Duration, error) {
	start := time.Now()
	p, err := startTmcp(ctx, client, bin, srv)
	if err != nil {
		return 0, err
	}
	tools, err := p.session.ListTools(ctx, nil)
	d := time.Since(start)
	if cerr := p.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	if !slices.ContainsFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == "list_sessions" }) {
		return 0, fmt.Errorf("tools/list answered without list_sessions (%d tools)", len(tools.Tools))
	}
	return d, nil
}

// tmcpProcess is a tmcp binary started over stdio and the MCP session with it.
type tmcpProcess struct {
	cmd     *exec.Cmd
	session *mcp.ClientSession
	stderr  *bytes.Buffer // read only once the process has exited
}

// startTmcp starts bin against the private server and initializes a
// session; env, if any, is added to the process's environment.
func startTmcp(ctx context.Context, client *mcp.Client, bin string, srv *tmuxServer, env ...string) (*tmcpProcess, error) {
	if v, ok := os.LookupEnv("TMCP_TAPES"); ok {
		// The server's environment drops every TMCP_ variable; this one
		// is passed on, so the rows can be taken without tapes.
		env = append([]string{"TMCP_TAPES=" + v}, env...)
	}
	p := &tmcpProcess{cmd: childCommand(ctx, append(srv.Env(), env...), bin, "-socket-path", srv.Socket), stderr: new(bytes.Buffer)}
	p.cmd.Stderr = p.stderr
	session, err := client.Connect(ctx, arrivalTransport{Transport: &mcp.CommandTransport{Command: p.cmd, TerminateDuration: tmcpTerminate}}, nil)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	p.session = session
	return p, nil
}

// arrivalTransport notes when each reply comes off the wire, before the
// SDK decodes and checks it, for the call whose context holds an
// *arrival: the SDK's client takes replies one after another, about a
// millisecond each, so a hundred replies at once would otherwise be timed
// by the client's queue, not by tmcp.
//
// Over a stream (stdio, ssh) a request counts as written once its write
// returns; over HTTP, whose write may last until the reply, once it
// begins: separate POSTs have no order to keep anyway.
type arrivalTransport struct {
	mcp.Transport
	writeBegins bool // a request counts as written as its write begins
}

// arrival is where arrivalTransport puts the time a call's reply arrived,
// and says when the call's request was written.
type arrival struct {
	mu      sync.Mutex
	at      time.Time
	written chan struct{} // closed once the request is on tmcp's stdin
	once    sync.Once
}

type arrivalKey struct{}

func (t arrivalTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &arrivalConn{Connection: c, calls: map[jsonrpc.ID]*arrival{}, writeBegins: t.writeBegins}, nil
}

type arrivalConn struct {
	mcp.Connection
	mu    sync.Mutex
	calls map[jsonrpc.ID]*arrival // by request id, until the reply

	writeBegins bool
}

func (c *arrivalConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	var a *arrival
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if a, ok = ctx.Value(arrivalKey{}).(*arrival); ok {
			c.mu.Lock()
			c.calls[req.ID] = a
			c.mu.Unlock()
		}
	}
	written := func() {
		if a != nil && a.written != nil {
			a.once.Do(func() { close(a.written) })
		}
	}
	if c.writeBegins {
		written()
	}
	err := c.Connection.Write(ctx, msg)
	written()
	return err
}

func (c *arrivalConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		now := time.Now()
		c.mu.Lock()
		a := c.calls[resp.ID]
		delete(c.calls, resp.ID)
		c.mu.Unlock()
		if a != nil {
			a.mu.Lock()
			a.at = now
			a.mu.Unlock()
		}
	}
	return msg, err
}

// pid is the tmcp process's id.
func (p *tmcpProcess) pid() int { return p.cmd.Process.Pid }

// close ends the session, which closes tmcp's stdin and waits for it to exit.
func (p *tmcpProcess) close() error {
	if err := p.session.Close(); err != nil {
		return fmt.Errorf("closing tmcp: %w: %s", err, strings.TrimSpace(p.stderr.String()))
	}
	return nil
}

// callOnce returns an iteration that calls a tool and times the call; the
// reply is checked after the clock stops.
func (p *tmcpProcess) callOnce(tool string, args map[string]any, check func(*mcp.CallToolResult) error) func(context.Context) (time.Duration, error) {
	return func(ctx context.Context) (time.Duration, error) {
		start := time.Now()
		r, err := p.call(ctx, tool, args)
		d := time.Since(start)
		if err != nil {
			return d, err
		}
		return d, check(r)
	}
}

// call calls a tool; a tool error is an error.
func (p *tmcpProcess) call(ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	r, err := p.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", tool, err)
	case r.IsError:
		return nil, fmt.Errorf("%s failed: %s", tool, resultText(r))
	}
	return r, nil
}

// answer is a tool's reply and when it arrived: when the transport read
// it, before the SDK decoded it.
type answer struct {
	r   *mcp.CallToolResult
	err error
	at  time.Time
}

// callAsync calls a tool on a goroutine of its own, and returns once the
// request is written to tmcp (or the call failed before): calls made one
// after another reach tmcp in that order, and before anything the caller
// sends next, such as a ping that shows tmcp has read them all. The
// returned func waits for the answer; cancel abandons the call (tmcp is
// told, and answers at once).
func (p *tmcpProcess) callAsync(ctx context.Context, tool string, args map[string]any) (wait func() answer, cancel func()) {
	ctx, cancel = context.WithCancel(ctx)
	ch := make(chan answer, 1)
	a := &arrival{written: make(chan struct{})}
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		r, err := p.call(context.WithValue(ctx, arrivalKey{}, a), tool, args)
		at := time.Now()
		a.mu.Lock()
		if !a.at.IsZero() {
			at = a.at
		}
		a.mu.Unlock()
		ch <- answer{r: r, err: err, at: at}
	}()
	select {
	case <-a.written:
	case <-returned:
	}
	return func() answer { a := <-ch; cancel(); return a }, cancel
}

// decode unmarshals a tool's structured reply into v.
func decode(r *mcp.CallToolResult, v any) error {
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// resultText joins the text blocks of a tool result, pane text taken out
// of its fence.
func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text, fenced := mcpserver.Unfence(t.Text)
			if !fenced {
				text = t.Text
			}
			parts = append(parts, text)
		}
	}
	return strings.Join(parts, "\n")
}
