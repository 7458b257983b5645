package main

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/mcpserver"
	"github.com/tmcp/tmcp/internal/tmux"
)

// instance is one tmcp, in process, and the soak's session with it: what
// a restart of tmcp closes and starts again.
type instance struct {
	tc   *tmux.Client
	srv  *mcpserver.Server
	ss   *mcp.ServerSession
	cs   *mcp.ClientSession
	once sync.Once
}

// startTMCP starts a tmcp for the tmux server on socket and connects a
// client session to it. Unless it fails, the caller must call close.
func startTMCP(ctx context.Context, socket string) (*instance, error) {
	tc, err := tmux.New(ctx, tmux.Options{SocketPath: socket})
	if err != nil {
		return nil, err
	}
	// Jobs are kept beside the private server, for the tmcp after a restart.
	cfg := mcpserver.Config{Tier: mcpserver.Destructive, Version: "soak", StateDir: filepath.Join(filepath.Dir(socket), "tmcp-state")}
	in := &instance{tc: tc, srv: mcpserver.New(tc, cfg)}
	serverT, clientT := mcp.NewInMemoryTransports()
	if in.ss, err = in.srv.MCPServer(ctx).Connect(context.Background(), serverT, nil); err != nil {
		in.close()
		return nil, err
	}
	if in.cs, err = mcp.NewClient(&mcp.Implementation{Name: "tmcp-soak"}, nil).Connect(context.Background(), clientT, nil); err != nil {
		in.close()
		return nil, err
	}
	return in, nil
}

// close ends tmcp and the session, in the order cmd/tmcp ends on a
// signal: tmux work first, so the calls in flight return at once, then
// the session. It may be called more than once.
func (in *instance) close() {
	in.once.Do(func() {
		in.srv.Close()
		in.tc.Close()
		if in.ss != nil {
			in.ss.Close()
		}
		if in.cs != nil {
			in.cs.Close()
		}
	})
}
