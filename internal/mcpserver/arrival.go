package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/wait"
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

// arrivalScreenHold bounds how long reading a call off the wire waits for
// the screens a wait reads as it arrives.
const arrivalScreenHold = 100 * time.Millisecond

// arrivals keeps the stream marks taken as each tool call was read, until
// its handler runs.
type arrivals struct {
	next  atomic.Uint64
	marks sync.Map // uint64 → *stamp
	// prepared, once StartPrepare was called, is closed when the command
	// client is attached (or could not be).
	prepared atomic.Pointer[chan struct{}]
}

// prepareWait bounds how long the answer to initialize waits for the
// command client: a tmux that does not answer must not hold the client's
// start for long.
const prepareWait = time.Second

// Transport wraps a transport so that each tool call is stamped with where
// the pane streams stood the moment it was read off the wire: a wait then
// counts from that moment, however long the call then takes to reach its
// handler. A transport that can call Arrive from its own read loop needs
// no wrapping, and stamps sooner.
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
	if msg != nil {
		c.s.stampArrival(ctx, msg)
	}
	return msg, err
}

// Arrive does what Transport does, for a transport that hands each
// message to it the moment it is read (stdio.Transport's Arrive): with
// no goroutine between reading the call and stamping it, a line a pane
// writes just after the call has less time to come first.
func (s *Server) Arrive(msg jsonrpc.Message) { s.stampArrival(context.Background(), msg) }

func (s *Server) stampArrival(ctx context.Context, msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	if req.Method == "initialize" {
		// No call can come before the answer to initialize: held until
		// the command client is attached, the first call finds it ready,
		// and the screen a wait reads as it arrives is read at once.
		if p := s.arrivals.prepared.Load(); p != nil {
			select {
			case <-*p:
			case <-time.After(prepareWait):
			case <-ctx.Done():
			}
		}
	}
	if req.Method == "tools/call" && req.Extra == nil {
		n := s.stampCall(req.Params)
		req.Extra = &mcp.RequestExtra{Header: http.Header{arrivalHeader: {strconv.FormatUint(n, 10)}}}
	}
}

// StampHTTP does for a request of the streamable HTTP transport what
// Transport does for a stream: when body is one tools/call, it stamps the
// call as it arrives and names the stamp in header, where the SDK hands it
// on to the call. A stamp header the client sent is dropped. The returned
// function, called once the request has been served, forgets a stamp no
// handler took (a call the SDK refused).
func (s *Server) StampHTTP(header http.Header, body []byte) (done func()) {
	header.Del(arrivalHeader)
	var msg struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return func() {}
	}
	n := s.stampCall(msg.Params)
	header.Set(arrivalHeader, strconv.FormatUint(n, 10))
	return func() { s.arrivals.marks.Delete(n) }
}

// stampCall keeps where the pane streams stand now, for the tool call
// with params, and returns the number it is kept under.
func (s *Server) stampCall(params json.RawMessage) uint64 {
	n := s.arrivals.next.Add(1)
	now := time.Now()
	st := &stamp{at: now}
	// The screens first: each moment before they are read is one in which
	// a line written just after the call could be taken for old.
	s.startArrivalScreen(st, params)
	st.marks = s.hub.MarksAt(now.Add(-arrivalSlack))
	if st.placed != nil {
		// The next message is read once the screen reads are queued to
		// tmux ahead of whatever it sends tmux (send_keys typing the line
		// the wait is for), not once they are answered: a burst of waits
		// is read at the pace tmcp queues commands, not at tmux's pace. A
		// tmux slow to take them holds the next message back this long at
		// most.
		select {
		case <-st.placed:
		case <-time.After(arrivalScreenHold):
		}
	}
	s.arrivals.marks.Store(n, st)
	return n
}

// stamp is what was seen of the panes as a tool call was read: where the
// streams ended, and, for a wait_for_text on panes with no stream, their
// screens being read.
type stamp struct {
	at      time.Time // when the call was read
	marks   map[string]pane.Mark
	screens chan map[string][]string // by pane; a pane whose screen could not be read is left out
	placed  chan struct{}            // closed once the reads are queued to tmux, or over
}

// startArrivalScreen begins reading the screens of the panes a
// wait_for_text names (paneId, and the panes of paneIds' targets) when
// tmcp does not stream them, the moment the call is read: their rows then
// are what the wait counts as old. They are read apart, so a tmux that
// does not answer holds no other request back.
func (s *Server) startArrivalScreen(st *stamp, params json.RawMessage) {
	paneID, targets, budget, ok := s.arrivalTargets(params)
	if !ok {
		return
	}
	st.screens = make(chan map[string][]string, 1)
	st.placed = make(chan struct{})
	var placedOnce sync.Once
	allPlaced := func() { placedOnce.Do(func() { close(st.placed) }) }
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), budget)
		defer cancel()
		screens := map[string][]string{}
		defer func() {
			st.screens <- screens
			allPlaced()
		}()
		ids := targets
		if len(targets) > 1 || targets[0] != paneID {
			var err error
			if ids, err = s.panesOf(ctx, targets); err != nil || len(ids) > wait.MaxWaitPanes {
				return
			}
		} else if checkPaneID(paneID) != nil {
			return
		}
		if len(ids) == 1 {
			if rows := s.waits.ArrivalScreen(tmux.WithPlaced(ctx, allPlaced), ids[0]); rows != nil {
				screens[ids[0]] = rows
			}
			return
		}
		// All at once, so that the last pane's screen is not read later
		// than the first's by the time the others take.
		var mu sync.Mutex
		var wg sync.WaitGroup
		var left atomic.Int64
		left.Store(int64(len(ids)))
		for _, id := range ids {
			var once sync.Once
			done := func() {
				once.Do(func() {
					if left.Add(-1) == 0 {
						allPlaced()
					}
				})
			}
			wg.Go(func() {
				defer done()
				if rows := s.waits.ArrivalScreen(tmux.WithPlaced(ctx, done), id); rows != nil {
					mu.Lock()
					screens[id] = rows
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}()
}

// arrivalTargets reads from a tool call's params what startArrivalScreen
// needs: the panes a wait_for_text names, when their screens are to be
// read as it arrives, and the call's budget.
func (s *Server) arrivalTargets(params json.RawMessage) (paneID string, targets []string, budget time.Duration, ok bool) {
	var p mcp.CallToolParamsRaw
	var args struct {
		PaneID  string   `json:"paneId"`
		PaneIDs []string `json:"paneIds"`
		Cursor  string   `json:"cursor"`
	}
	if json.Unmarshal(params, &p) != nil || p.Name != "wait_for_text" || json.Unmarshal(p.Arguments, &args) != nil ||
		args.Cursor != "" {
		return "", nil, 0, false
	}
	targets = args.PaneIDs
	if args.PaneID != "" {
		targets = append([]string{args.PaneID}, targets...)
	}
	if len(targets) == 0 || len(targets) > wait.MaxWaitPanes {
		return "", nil, 0, false
	}
	if len(targets) == 1 && s.hub.Stream(args.PaneID) != nil {
		return "", nil, 0, false // streamed: the stream's mark says where the call begins
	}
	return args.PaneID, targets, s.budget(&p), true
}

// warmArrival reads a made-up wait_for_text call as startArrivalScreen
// would, so that the first real one does not pay for building the JSON
// decoders of its types: a few tenths of a millisecond, in which a line
// written just after the call would be on the screen read as old.
func (s *Server) warmArrival() {
	s.arrivalTargets(json.RawMessage(`{"name":"wait_for_text","arguments":{"paneId":"%0","paneIds":["%1"],"patterns":["x"],"timeoutSeconds":1}}`))
}

// arrivalStamp returns the stamp of a request as it was read, or one taken
// now when it was not stamped.
func (s *Server) arrivalStamp(req mcp.Request) *stamp {
	if extra := req.GetExtra(); extra != nil {
		if n, err := strconv.ParseUint(extra.Header.Get(arrivalHeader), 10, 64); err == nil {
			if st, ok := s.arrivals.marks.LoadAndDelete(n); ok {
				return st.(*stamp)
			}
		}
	}
	now := time.Now()
	return &stamp{at: now, marks: s.hub.MarksAt(now.Add(-arrivalSlack))}
}
