package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/pane"
)

// feedInterval is the least time between two resources/updated for one
// resource while its pane writes: a build log gives a few updates a
// second, not one per line.
const feedInterval = 250 * time.Millisecond

// feeds sends resources/updated for the subscribed pane resources. Each
// subscribed URI has one feed, shared by the sessions subscribed to it,
// which holds the pane's stream from the Hub while anyone is subscribed.
type feeds struct {
	s *Server
	m *mcp.Server // set by addResources, before any session connects

	mu       sync.Mutex
	byURI    map[string]*feed
	sessions map[*mcp.ServerSession]bool // sessions whose end is watched
}

// feed is one subscribed URI.
type feed struct {
	subscribers map[*mcp.ServerSession]bool
	cancel      context.CancelFunc
	done        chan struct{} // closed when the feed's goroutine has ended
}

func (s *Server) newFeeds() *feeds {
	return &feeds{s: s, byURI: map[string]*feed{}, sessions: map[*mcp.ServerSession]bool{}}
}

// options sets the handlers for subscriptions and completions.
func (f *feeds) options(o *mcp.ServerOptions) *mcp.ServerOptions {
	o.SubscribeHandler = f.subscribe
	o.UnsubscribeHandler = f.unsubscribe
	o.CompletionHandler = f.s.complete
	return o
}

func (f *feeds) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	ref, ok := parseResourceURI(uri)
	if !ok {
		return mcp.ResourceNotFoundError(uri)
	}
	if ref.kind != kindPane && ref.kind != kindContent {
		return fmt.Errorf("subscribing to %s: only tmux://panes/{id} and tmux://panes/{id}/content send updates (and their tmux://hosts/{host}/ forms); read %s again instead", uri, uri)
	}
	if f.join(uri, req.Session) {
		f.watchSession(req.Session)
		return nil
	}
	srv, err := f.s.on(ctx, ref)
	if err != nil {
		return fmt.Errorf("subscribing to %s: %w", uri, err)
	}
	stream, release, err := srv.hub.Acquire(ctx, ref.target, 0)
	if err != nil {
		if isMissing(err) {
			return mcp.ResourceNotFoundError(uri)
		}
		return explain("subscribing to "+uri, err)
	}
	f.mu.Lock()
	if f.joinLocked(uri, req.Session) {
		// Another subscriber started the feed meanwhile.
		f.mu.Unlock()
		release()
		f.watchSession(req.Session)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	fd := &feed{subscribers: map[*mcp.ServerSession]bool{req.Session: true}, cancel: cancel, done: make(chan struct{})}
	if old := f.byURI[uri]; old != nil {
		for sess := range old.subscribers { // a feed that ended with its pane
			fd.subscribers[sess] = true
		}
	}
	f.byURI[uri] = fd
	f.mu.Unlock()
	go f.run(ctx, srv.hub, uri, ref.target, stream, release, fd.done)
	f.watchSession(req.Session)
	return nil
}

// join adds a subscriber to the URI's live feed, if there is one.
func (f *feeds) join(uri string, sess *mcp.ServerSession) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.joinLocked(uri, sess)
}

func (f *feeds) joinLocked(uri string, sess *mcp.ServerSession) bool {
	fd := f.byURI[uri]
	if fd == nil {
		return false
	}
	select {
	case <-fd.done:
		return false // ended with its pane; a new one is needed
	default:
	}
	fd.subscribers[sess] = true
	return true
}

func (f *feeds) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	f.drop(req.Params.URI, req.Session)
	return nil
}

// drop ends a session's subscription to a URI, and the URI's feed (its
// goroutine and its hold on the pane's stream) when it was the last.
func (f *feeds) drop(uri string, sess *mcp.ServerSession) {
	f.mu.Lock()
	fd := f.byURI[uri]
	if fd == nil || !fd.subscribers[sess] {
		f.mu.Unlock()
		return
	}
	delete(fd.subscribers, sess)
	if len(fd.subscribers) > 0 {
		f.mu.Unlock()
		return
	}
	delete(f.byURI, uri)
	f.mu.Unlock()
	fd.cancel()
	<-fd.done
}

// watchSession drops a session's subscriptions when it ends (the client
// hung up without unsubscribing).
func (f *feeds) watchSession(sess *mcp.ServerSession) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sessions[sess] {
		return
	}
	f.sessions[sess] = true
	go func() {
		_ = sess.Wait()
		f.mu.Lock()
		delete(f.sessions, sess)
		var uris []string
		for uri, fd := range f.byURI {
			if fd.subscribers[sess] {
				uris = append(uris, uri)
			}
		}
		f.mu.Unlock()
		for _, uri := range uris {
			f.drop(uri, sess)
		}
	}()
}

// run sends resources/updated for uri whenever the pane's stream moves,
// at most once per feedInterval, until ctx ends. When the stream ends (the
// pane died, closed or was respawned) it says so once more and follows a
// respawned pane's new stream; a dead or closed pane ends the feed.
func (f *feeds) run(ctx context.Context, hub *pane.Hub, uri, paneID string, stream *pane.Stream, release func(), done chan struct{}) {
	defer close(done)
	defer func() { release() }()
	end, lost := stream.End(), stream.LostBytes()
	for {
		changed := stream.Changed()
		if e, l := stream.End(), stream.LostBytes(); e != end || l != lost {
			end, lost = e, l
			f.notify(uri)
			if !pause(ctx, feedInterval) {
				return
			}
			continue
		}
		if closed, _ := stream.Closed(); closed {
			f.notify(uri)
			release()
			release = func() {}
			if !pause(ctx, feedInterval) {
				return
			}
			var err error
			if stream, release, err = hub.Acquire(ctx, paneID, 0); err != nil {
				release = func() {}
				return
			}
			end, lost = stream.End(), stream.LostBytes()
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

func (f *feeds) notify(uri string) {
	// The SDK bounds the send itself and logs a failure; a session that
	// hung up is dropped by watchSession.
	_ = f.m.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
}

// pause waits d, or less if ctx ends first; it reports whether ctx is
// still live.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
