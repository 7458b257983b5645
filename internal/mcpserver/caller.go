package mcpserver

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"
)

// callerLookupTimeout bounds the search for the caller's pane.
const callerLookupTimeout = 2 * time.Second

// Caller is the pane tmcp itself runs in, when it runs inside the tmux
// server it drives.
type Caller struct {
	PaneID string `json:"paneId,omitempty"`
	How    string `json:"how,omitempty"` // "environment" or "process ancestry"
}

// callerPane finds the caller's pane once and remembers it.
func (s *Server) callerPane(ctx context.Context) Caller {
	s.callerOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callerLookupTimeout)
		defer cancel()
		s.caller = s.findCaller(ctx)
	})
	return s.caller
}

// findCaller looks for the pane in $TMUX_PANE when $TMUX names this
// server's socket, and otherwise walks tmcp's ancestors up to a process
// that is some pane's own process.
func (s *Server) findCaller(ctx context.Context) Caller {
	panes, err := s.tmux.ListPanes(ctx, "", "")
	if err != nil || len(panes) == 0 {
		return Caller{}
	}
	if id := os.Getenv("TMUX_PANE"); id != "" {
		socket, _, _ := strings.Cut(os.Getenv("TMUX"), ",")
		if socket == s.tmux.SocketPath() {
			for _, p := range panes {
				if p.ID == id {
					return Caller{PaneID: id, How: "environment"}
				}
			}
		}
	}
	byPID := map[int]string{}
	for _, p := range panes {
		byPID[p.PID] = p.ID
	}
	for pid, hops := os.Getppid(), 0; pid > 1 && hops < 64; hops++ {
		if id, ok := byPID[pid]; ok {
			return Caller{PaneID: id, How: "process ancestry"}
		}
		pid = parentPID(pid)
	}
	return Caller{}
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
func (s *Server) CallerPane(ctx context.Context) string { return s.callerPane(ctx).PaneID }
