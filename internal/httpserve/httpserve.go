// Package httpserve serves tmcp over MCP's streamable HTTP transport,
// through the official SDK's handler, safely by default: a bearer token on
// every request (each token with its own safety tier), Host and Origin
// checks against DNS rebinding and cross-site requests, limits on bodies,
// sessions and calls, TLS, and a graceful stop. It also serves the
// read-only live view (package liveview) behind the same checks. Every
// session, whatever its tier, drives the same engine: one tmux connection,
// one stream per pane, one table of jobs.
package httpserve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/liveview"
	"github.com/tmcp/tmcp/internal/mcpserver"
)

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// Defaults for the limits, each overridable in Config.
const (
	DefaultMaxBodyBytes       = 4 << 20 // a 1 MB argument, JSON-escaped, fits
	DefaultMaxSessions        = 64
	DefaultMaxCallsPerSession = 16
	DefaultSessionTimeout     = time.Hour
	DefaultReadHeaderTimeout  = 10 * time.Second
)

// idleConnTimeout closes a keep-alive connection left unused this long.
const idleConnTimeout = 2 * time.Minute

// ShutdownGrace bounds a graceful stop: in it the calls in flight are
// cancelled and answered, the sessions closed and the connections ended.
const ShutdownGrace = 1500 * time.Millisecond

// Config says how tmcp serves HTTP. Zero limits take the defaults.
type Config struct {
	Tokens       []Token  // accepted bearer tokens; at least one
	AllowOrigins []string // Origin values admitted; none by default
	AllowHosts   []string // Host names admitted beside loopback and the bound address
	// BindHost is the host part of the address asked for, admitted as a
	// Host with the listening port.
	BindHost string

	MaxBodyBytes       int64         // request body cap (413 past it)
	MaxSessions        int           // sessions open at once (503 past it)
	MaxCallsPerSession int           // tool calls in flight per session
	SessionTimeout     time.Duration // an idle session is closed after this
	ReadHeaderTimeout  time.Duration // against clients that send headers slowly

	TLSCert, TLSKey string    // serve TLS with this certificate and key (both or neither)
	Log             io.Writer // where warnings go; nil: nowhere
}

func (c *Config) defaults() {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MaxCallsPerSession <= 0 {
		c.MaxCallsPerSession = DefaultMaxCallsPerSession
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.ReadHeaderTimeout <= 0 {
		c.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// Server serves one tmcp engine over HTTP on one listener.
type Server struct {
	cfg      Config
	ln       net.Listener
	tls      *tls.Config
	servers  map[mcpserver.Tier]*mcp.Server
	calls    *calls
	requests *gauge // POST requests being served
	stop     context.CancelFunc
	handler  http.Handler
}

// New prepares to serve srv on ln: one MCP server per tier the tokens
// carry, all sharing srv's engine.
func New(ctx context.Context, srv *mcpserver.Server, ln net.Listener, cfg Config) (*Server, error) {
	cfg.defaults()
	keys, err := newKeyring(cfg.Tokens)
	if err != nil {
		return nil, err
	}
	hosts, err := newHostGuard(ln.Addr(), cfg.BindHost, cfg.AllowHosts)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, ln: ln, servers: map[mcpserver.Tier]*mcp.Server{}, requests: &gauge{}}
	if cfg.TLSCert != "" || cfg.TLSKey != "" {
		if cfg.TLSCert == "" || cfg.TLSKey == "" {
			return nil, errors.New("TLS needs both --tls-cert and --tls-key")
		}
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("loading the TLS certificate and key: %w", err)
		}
		s.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	stopping, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.calls = newCalls(cfg.MaxCallsPerSession, stopping)
	for _, t := range keys.token {
		if s.servers[t.Tier] == nil {
			m := srv.WithTier(t.Tier).MCPServer(ctx)
			m.AddReceivingMiddleware(s.calls.middleware)
			s.servers[t.Tier] = m
		}
	}
	sdk := mcp.NewStreamableHTTPHandler(s.serverFor, &mcp.StreamableHTTPOptions{
		SessionTimeout:      cfg.SessionTimeout,
		MaxRequestBodyBytes: cfg.MaxBodyBytes,
		EventStore:          mcp.NewMemoryEventStore(nil),
		// The host guard below does this job, and admits --allow-host.
		DisableLocalhostProtection: true,
	})
	// MCP 2026-07-28 has no sessions: each request carries its protocol
	// version, and the SDK serves it only statelessly. Jobs and cursors
	// live in the engine, so such a client loses nothing.
	stateless := mcp.NewStreamableHTTPHandler(s.serverFor, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		MaxRequestBodyBytes:          cfg.MaxBodyBytes,
		DisableLocalhostProtection:   true,
		PropagateRequestCancellation: true, // a client that drops the request cancels the call
	})
	limit := &sessionLimit{slots: make(chan struct{}, cfg.MaxSessions), find: s.session}
	origins := newOriginGuard(cfg.AllowOrigins)
	// A request from tmcp's own origin (scheme://Host, the Host checked
	// first) is same-site by definition, on /mcp as on the live view.
	endpoint := hosts.wrap(origins.wrapSameOrigin(s.scheme(), requireToken(keys, s.stamp(srv, byProtocol(stateless, limit.wrap(sdk))))))
	mux := http.NewServeMux()
	mux.Handle(Path, endpoint)
	// The live view's page is its own origin's: its requests carry that
	// Origin, admitted beside the allowed ones once the Host is checked.
	live := liveview.New(stopping, srv)
	mux.Handle(liveview.PagePath, hosts.wrap(origins.wrapSameOrigin(s.scheme(), live.Page())))
	mux.Handle(liveview.DataPath, hosts.wrap(origins.wrapSameOrigin(s.scheme(), requireToken(keys, live.Data()))))
	s.handler = mux
	return s, nil
}

// firstSessionless is the first protocol version without sessions.
const firstSessionless = "2026-07-28"

// byProtocol sends a request that names a protocol version without
// sessions (Mcp-Protocol-Version, as the SDK's client sends from
// server/discover on) and belongs to no session to stateless, and every
// other, the sessions of 2025-11-25 and before, to sessions. Versions are
// dates, so they compare as strings.
func byProtocol(stateless, sessions http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(sessionHeader) == "" && r.Header.Get("Mcp-Protocol-Version") >= firstSessionless {
			stateless.ServeHTTP(w, r)
			return
		}
		sessions.ServeHTTP(w, r)
	})
}

// serverFor picks the MCP server of the tier of the request's token.
func (s *Server) serverFor(r *http.Request) *mcp.Server {
	t, ok := tierOf(r)
	if !ok {
		return nil
	}
	return s.servers[t]
}

// session returns the open session with an id, or nil.
func (s *Server) session(id string) *mcp.ServerSession {
	if id == "" {
		return nil
	}
	for _, m := range s.servers {
		for ss := range m.Sessions() {
			if ss.ID() == id {
				return ss
			}
		}
	}
	return nil
}

// stamp reads a POST's body within the size cap and stamps the tool call
// it carries as it arrives (see mcpserver.Server.StampHTTP).
func (s *Server) stamp(srv *mcpserver.Server, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		s.requests.add(1)
		defer s.requests.add(-1)
		body, ok := readBody(w, r, s.cfg.MaxBodyBytes)
		if !ok {
			return
		}
		done := srv.StampHTTP(r.Header, body)
		defer done()
		next.ServeHTTP(w, r)
	})
}

// Handler is the server's HTTP handler, endpoint and checks included.
func (s *Server) Handler() http.Handler { return s.handler }

// scheme is the URL scheme served.
func (s *Server) scheme() string {
	if s.tls != nil {
		return "https"
	}
	return "http"
}

// URL is the endpoint's address as the listener is bound.
func (s *Server) URL() string { return s.scheme() + "://" + s.ln.Addr().String() + Path }

// LiveURL is the live view's address as the listener is bound.
func (s *Server) LiveURL() string {
	return s.scheme() + "://" + s.ln.Addr().String() + liveview.PagePath
}

// Tiers lists the tiers served, lowest first.
func (s *Server) Tiers() []mcpserver.Tier {
	var ts []mcpserver.Tier
	for t := range s.servers {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts
}

// Serve says where it serves (on Config.Log, with a warning when that is
// plain HTTP beyond loopback), serves until ctx ends, then stops
// gracefully within ShutdownGrace: it stops accepting, cancels every tool
// call in flight so each answers with what it has, closes the sessions,
// and returns.
func (s *Server) Serve(ctx context.Context) error {
	if s.tls == nil && !isLoopback(s.ln.Addr()) {
		fmt.Fprintf(s.cfg.Log, "tmcp: warning: serving plain HTTP on %s, beyond loopback: tokens and tmux contents cross the network in clear; use --tls-cert and --tls-key, or a TLS proxy\n", s.ln.Addr())
	}
	fmt.Fprintf(s.cfg.Log, "tmcp: serving MCP at %s (tiers %v)\n", s.URL(), s.Tiers())
	fmt.Fprintf(s.cfg.Log, "tmcp: read-only live view at %s (asks for the same token)\n", s.LiveURL())
	hs := &http.Server{Handler: s.handler, ReadHeaderTimeout: s.cfg.ReadHeaderTimeout, IdleTimeout: idleConnTimeout,
		TLSConfig: s.tls}
	served := make(chan error, 1)
	go func() {
		if s.tls != nil {
			served <- hs.ServeTLS(s.ln, "", "")
		} else {
			served <- hs.Serve(s.ln)
		}
	}()
	select {
	case err := <-served:
		s.stop()
		return fmt.Errorf("serving HTTP: %w", err)
	case <-ctx.Done():
	}
	grace, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	s.stop()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(grace) }()
	// Calls answer, their responses are written, then the sessions (and
	// the event streams they hold open) end.
	s.calls.wait(grace)
	s.requests.wait(grace)
	for _, m := range s.servers {
		for ss := range m.Sessions() {
			ss.Close()
		}
	}
	if err := <-shut; err != nil {
		hs.Close()
	}
	<-served
	return nil
}

func isLoopback(a net.Addr) bool {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
