package mcpserver

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/hosts"
)

// callerLookupTimeout bounds the search for the caller's pane, which runs
// before the first reply: a stopped tmux must not hold start-up long.
const callerLookupTimeout = time.Second

// Caller is the pane tmcp itself runs in, when it runs inside the tmux
// server it drives.
type Caller struct {
	PaneID string
}

// callerCache remembers the caller's pane once found.
type callerCache struct {
	lock  chan struct{} // held while the caller's pane is looked for
	known bool
	pane  Caller
}

// CallerPaneHeader is the HTTP request header in which a client declares
// the pane it runs in. Over HTTP tmcp cannot trace a client's process to a
// pane, so it takes the client's word: the guard then protects that pane
// for that client's calls, as it protects tmcp's own pane for a client
// that started tmcp over stdio.
const CallerPaneHeader = "X-Tmcp-Caller-Pane"

type declaredPaneKey struct{}

// withDeclaredCaller keeps, for one call, the pane its client declares it
// runs in; a value that is not a pane id is ignored.
func withDeclaredCaller(ctx context.Context, req mcp.Request) context.Context {
	e := req.GetExtra()
	if e == nil || e.Header == nil {
		return ctx
	}
	id := strings.TrimSpace(e.Header.Get(CallerPaneHeader))
	if checkPaneID(id) != nil {
		return ctx
	}
	return context.WithValue(ctx, declaredPaneKey{}, id)
}

// callerPane is the pane the calling agent runs in: the pane its client
// declared, else, for a client that started tmcp over stdio, the pane tmcp
// runs in. An HTTP client that declares none has no known pane.
func (s *Server) callerPane(ctx context.Context) Caller {
	if s.host != "" {
		// The guard is local-only: no agent runs in a remote pane of ours.
		return Caller{}
	}
	if id, ok := ctx.Value(declaredPaneKey{}).(string); ok {
		return Caller{PaneID: id}
	}
	if s.cfg.OverHTTP {
		return Caller{}
	}
	return s.ownPane(ctx)
}

// ownPane finds the pane tmcp runs in and remembers the answer, unless tmux
// could not be asked within the call's budget: then the next call asks
// again. One lookup runs at a time; a call waits for it only while its own
// budget lasts.
func (s *Server) ownPane(ctx context.Context) Caller {
	select {
	case s.callers.lock <- struct{}{}:
	case <-ctx.Done():
		return Caller{}
	}
	defer func() { <-s.callers.lock }()
	if s.callers.known {
		return s.callers.pane
	}
	ctx, cancel := context.WithTimeout(ctx, callerLookupTimeout)
	defer cancel()
	c, ok := s.findCaller(ctx)
	if ok {
		s.callers.pane, s.callers.known = c, true
	}
	return c
}

// findCaller looks for the pane in $TMUX_PANE when $TMUX names this
// server's socket, and otherwise walks tmcp's ancestors up to a process
// that is some pane's own process.
func (s *Server) findCaller(ctx context.Context) (c Caller, known bool) {
	panes, err := s.tmux.ListPanes(ctx, "", "")
	if err != nil {
		return Caller{}, false
	}
	if id := os.Getenv("TMUX_PANE"); id != "" {
		socket, _, _ := strings.Cut(os.Getenv("TMUX"), ",")
		if hosts.SameFile(socket, s.tmux.SocketPath()) {
			for _, p := range panes {
				if p.ID == id {
					return Caller{PaneID: id}, true
				}
			}
		}
	}
	byPID := map[int]string{}
	for _, p := range panes {
		byPID[p.PID] = p.ID
	}
	// From tmcp itself, which may be the pane's own process, upwards.
	for pid, hops := os.Getpid(), 0; pid > 1 && hops < 64; hops++ {
		if id, ok := byPID[pid]; ok {
			return Caller{PaneID: id}, true
		}
		pid = parentPID(pid)
	}
	return Caller{}, true
}

// parentPID reads a process's parent from /proc, or 0.
func parentPID(pid int) int {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name in parentheses may hold spaces: read after the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// CallerPane returns the id of the pane tmcp runs in, or "".
func (s *Server) CallerPane(ctx context.Context) string { return s.ownPane(ctx).PaneID }

// isCaller reports whether id is the pane tmcp runs in.
func (s *Server) isCaller(ctx context.Context, id string) bool {
	c := s.callerPane(ctx).PaneID
	return c != "" && c == id
}
