package httpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionHeader is the streamable transport's session id header.
const sessionHeader = "Mcp-Session-Id"

// sessionLimit caps the sessions open at once. A POST that carries an
// initialize opens one: it takes a slot, which the session gives back when
// it ends (closed by the client, expired, or failed to initialize). Other
// POSTs without a session id (a client's server/discover probe) get a
// session that ends with the request, and take no slot: the client may
// send its initialize before that request's handler has returned, and a
// slot still held then would refuse it.
type sessionLimit struct {
	slots chan struct{}
	// find returns the open session with an id, or nil.
	find func(id string) *mcp.ServerSession
}

// wrap must sit inside the layer that reads the body (Server.stamp), so
// that the body it peeks at is in memory and within --max-body.
func (l *sessionLimit) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get(sessionHeader) != "" || !carriesInitialize(r) {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case l.slots <- struct{}{}:
		default:
			w.Header().Set("Retry-After", "5")
			http.Error(w, fmt.Sprintf("tmcp: %d sessions are open, the most --max-sessions allows: end one (DELETE) or wait for an idle one to expire", cap(l.slots)), http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
		ss := l.find(w.Header().Get(sessionHeader))
		if ss == nil {
			<-l.slots
			return
		}
		go func() {
			_ = ss.Wait()
			<-l.slots
		}()
	})
}

// carriesInitialize reports whether a request's body is an initialize
// request, alone or in a batch. The body is left to be read again.
func carriesInitialize(r *http.Request) bool {
	if r.Body == nil {
		return false
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	type message struct {
		Method string `json:"method"`
	}
	var one message
	if json.Unmarshal(body, &one) == nil {
		return one.Method == "initialize"
	}
	var batch []message
	if json.Unmarshal(body, &batch) == nil {
		return slices.ContainsFunc(batch, func(m message) bool { return m.Method == "initialize" })
	}
	return false
}

// readBody reads a request's body whole, up to max bytes (413 past it),
// so that it can be looked at before the SDK reads it again. A body cut
// short by a failure to read is answered 400.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, bool) {
	if r.Body == nil {
		return nil, true
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	r.Body.Close()
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		http.Error(w, fmt.Sprintf("tmcp: the request body is over %d bytes, the most --max-body allows", max), http.StatusRequestEntityTooLarge)
		return nil, false
	case err != nil:
		http.Error(w, "tmcp: reading the request body: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, true
}

// calls tracks the tool calls in flight: it caps them per session and, at
// shutdown, cancels them all so that each answers at once with what it
// has (a wait's outcome is then "cancelled").
type calls struct {
	perSession int
	stopping   context.Context // done when the server shuts down

	mu       sync.Mutex
	inFlight map[*mcp.ServerSession]int
	active   gauge
}

func newCalls(perSession int, stopping context.Context) *calls {
	return &calls{perSession: perSession, stopping: stopping, inFlight: map[*mcp.ServerSession]int{}}
}

// middleware is receiving middleware for an MCP server.
func (c *calls) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if method != "tools/call" || ss == nil {
			return next(ctx, method, req)
		}
		if refusal := c.enter(ss); refusal != "" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: refusal}}}, nil
		}
		defer c.leave(ss)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(c.stopping, cancel)
		defer stop()
		return next(ctx, method, req)
	}
}

// enter counts a call in, or says why it is refused.
func (c *calls) enter(ss *mcp.ServerSession) (refusal string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.stopping.Err() != nil:
		return "tmcp is shutting down: call again once it is back"
	case c.inFlight[ss] >= c.perSession:
		return fmt.Sprintf("tmcp: this session has %d tool calls in flight, the most --max-calls allows: wait for one to return, then call again", c.perSession)
	}
	c.inFlight[ss]++
	c.active.add(1)
	return ""
}

func (c *calls) leave(ss *mcp.ServerSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlight[ss]--; c.inFlight[ss] <= 0 {
		delete(c.inFlight, ss)
	}
	c.active.add(-1)
}

// wait waits for every call in flight to return, or for ctx to end.
func (c *calls) wait(ctx context.Context) { c.active.wait(ctx) }

// gauge counts what is in flight.
type gauge struct {
	mu sync.Mutex
	n  int
}

func (g *gauge) add(d int) {
	g.mu.Lock()
	g.n += d
	g.mu.Unlock()
}

// drainPoll is how often wait looks whether all has returned.
const drainPoll = 10 * time.Millisecond

// wait waits until nothing is in flight, or ctx ends.
func (g *gauge) wait(ctx context.Context) {
	for {
		g.mu.Lock()
		n := g.n
		g.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-time.After(drainPoll):
		case <-ctx.Done():
			return
		}
	}
}
