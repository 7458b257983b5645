package mcpserver

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/pane"
)

// arrivalHeader carries, inside the process only, the number under which
// a tool call's arrival marks were kept.
const arrivalHeader = "X-Tmcp-Arrival"

// arrivalSlack is how long before a request is read its wait begins.
// Between the client writing a request and tmcp reading it lies a pipe and
// the scheduler: when tmcp wakes to find both the request and a pane's
// output waiting, the output may be taken in first though it was written
// after the request. Output that reached tmcp this shortly before the
// request counts as written after it; no person or model can have seen it
// before asking.
const arrivalSlack = 10 * time.Millisecond

// arrivals keeps the stream marks taken as each tool call was read, until
// its handler runs.
type arrivals struct {
	next  atomic.Uint64
	marks sync.Map // uint64 → map[string]pane.Mark
}

// Transport wraps a transport so that each tool call is stamped with where
// the pane streams stood the moment it was read off the wire: a wait then
// counts from that moment, however long the call then takes to reach its
// handler.
func (s *Server) Transport(t mcp.Transport) mcp.Transport {
	return &stampingTransport{Transport: t, s: s}
}

type stampingTransport struct {
	mcp.Transport
	s *Server
}

func (t *stampingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &stampingConn{Connection: c, s: t.s}, nil
}

type stampingConn struct {
	mcp.Connection
	s *Server
}

func (c *stampingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" && req.Extra == nil {
		n := c.s.arrivals.next.Add(1)
		c.s.arrivals.marks.Store(n, c.s.hub.MarksAt(time.Now().Add(-arrivalSlack)))
		req.Extra = &mcp.RequestExtra{Header: http.Header{arrivalHeader: {strconv.FormatUint(n, 10)}}}
	}
	return msg, err
}

// arrivalMarks returns the marks stamped on a request as it was read, or
// the marks now when it was not stamped.
func (s *Server) arrivalMarks(req mcp.Request) map[string]pane.Mark {
	if extra := req.GetExtra(); extra != nil {
		if n, err := strconv.ParseUint(extra.Header.Get(arrivalHeader), 10, 64); err == nil {
			if m, ok := s.arrivals.marks.LoadAndDelete(n); ok {
				return m.(map[string]pane.Mark)
			}
		}
	}
	return s.hub.MarksAt(time.Now().Add(-arrivalSlack))
}
