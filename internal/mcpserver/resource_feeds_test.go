package mcpserver

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// TestSubscriptionHoldsThePaneStreamOnlyWhileSubscribed checks that a
// subscription's feed lets go of the pane's stream on unsubscribe and when
// the client hangs up without unsubscribing.
func TestSubscriptionHoldsThePaneStreamOnlyWhileSubscribed(t *testing.T) {
	srv := tmuxtest.New(t)
	tc, err := tmux.New(context.Background(), tmux.Options{SocketPath: srv.Socket})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	s := New(tc, Config{Tier: DefaultTier, Version: "test"})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := s.MCPServer(ctx)

	connect := func() *mcp.ClientSession {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := m.Connect(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
		// The legacy protocol, whose resources/subscribe answers only
		// once the feed holds the stream.
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "feed-test"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	released := func(when string) {
		t.Helper()
		if !tmuxtest.WaitFor(5*time.Second, func() bool { return s.hub.Stream("%0") == nil }) {
			t.Errorf("%s: pane %%0's stream is still held", when)
		}
	}
	const uri = "tmux://panes/0/content"

	cs := connect()
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if s.hub.Stream("%0") == nil {
		t.Fatalf("subscribed to %s, but pane %%0 has no stream", uri)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	released("after unsubscribe")

	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	other := connect()
	if err := other.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	// The point: an absence. Nothing outside the feeds shows the hang-up
	// handled; this long is given to a wrong release to show.
	time.Sleep(100 * time.Millisecond)
	if s.hub.Stream("%0") == nil {
		t.Errorf("one of two subscribers hung up, and the stream the other needs was let go")
	}
	other.Close()
	released("after both clients hung up")
}
