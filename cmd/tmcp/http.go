package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/tmcp/tmcp/internal/httpserve"
	"github.com/tmcp/tmcp/internal/mcpserver"
)

// httpOptions are the command line of tmcp --http.
type httpOptions struct {
	addr                       string
	tokenFile                  string
	allowOrigins, allowHosts   listFlag
	maxBody                    int64
	maxSessions, maxCalls      int
	sessionTimeout, readHeader time.Duration
	tlsCert, tlsKey            string
}

func (h *httpOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&h.addr, "http", "", "serve MCP over streamable HTTP at `ADDR` (e.g. 127.0.0.1:8765), endpoint "+httpserve.Path+", instead of stdio")
	fs.StringVar(&h.tokenFile, "token-file", "", "with --http: `FILE` of bearer tokens, one a line: TOKEN [readonly|mutating|destructive]; mode 0600 or stricter")
	fs.Var(&h.allowOrigins, "allow-origin", "with --http: an Origin to admit (repeatable, or comma-separated); none by default")
	fs.Var(&h.allowHosts, "allow-host", "with --http: a Host name to admit beside localhost and the bound address (repeatable)")
	fs.Int64Var(&h.maxBody, "max-body", httpserve.DefaultMaxBodyBytes, "with --http: request body limit in bytes")
	fs.IntVar(&h.maxSessions, "max-sessions", httpserve.DefaultMaxSessions, "with --http: sessions open at once")
	fs.IntVar(&h.maxCalls, "max-calls", httpserve.DefaultMaxCallsPerSession, "with --http: tool calls in flight per session")
	fs.DurationVar(&h.sessionTimeout, "session-timeout", httpserve.DefaultSessionTimeout, "with --http: close a session idle this long")
	fs.DurationVar(&h.readHeader, "read-header-timeout", httpserve.DefaultReadHeaderTimeout, "with --http: time allowed to send request headers")
	fs.StringVar(&h.tlsCert, "tls-cert", "", "with --http: serve TLS with this certificate (PEM)")
	fs.StringVar(&h.tlsKey, "tls-key", "", "with --http: the TLS certificate's key (PEM)")
}

// listFlag is a flag that may be given several times, each time one value
// or a comma-separated list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// serveHTTP serves srv over HTTP until a signal, then stops gracefully.
// The tokens come from --token-file and TMCP_TOKEN; with neither, one is
// made (or the one made before for this port is reused) and its file named
// on stderr.
func serveHTTP(ctx context.Context, srv *mcpserver.Server, o httpOptions, tier mcpserver.Tier, stderr io.Writer) error {
	var tokens []httpserve.Token
	if o.tokenFile != "" {
		t, err := httpserve.ReadTokenFile(o.tokenFile, tier)
		if err != nil {
			return err
		}
		tokens = append(tokens, t...)
	}
	t, err := httpserve.EnvToken(os.Getenv("TMCP_TOKEN"), tier)
	if err != nil {
		return err
	}
	tokens = append(tokens, t...)
	bindHost, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return fmt.Errorf("--http %q: want HOST:PORT, such as 127.0.0.1:8765: %w", o.addr, err)
	}
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", o.addr)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	defer ln.Close()
	if len(tokens) == 0 {
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		path, err := httpserve.GeneratedTokenPath(port)
		if err != nil {
			return err
		}
		t, err := httpserve.GenerateToken(path, tier)
		if err != nil {
			return err
		}
		tokens = append(tokens, t)
		fmt.Fprintf(stderr, "tmcp: no --token-file or TMCP_TOKEN: the bearer token (tier %s) is in %s\n", t.Tier, path)
	}
	hs, err := httpserve.New(ctx, srv, ln, httpserve.Config{
		Tokens: tokens, AllowOrigins: o.allowOrigins, AllowHosts: o.allowHosts, BindHost: bindHost,
		MaxBodyBytes: o.maxBody, MaxSessions: o.maxSessions, MaxCallsPerSession: o.maxCalls,
		SessionTimeout: o.sessionTimeout, ReadHeaderTimeout: o.readHeader,
		TLSCert: o.tlsCert, TLSKey: o.tlsKey, Log: stderr,
	})
	if err != nil {
		return err
	}
	return hs.Serve(ctx)
}
