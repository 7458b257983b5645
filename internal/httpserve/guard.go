package httpserve

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// realm names tmcp in its WWW-Authenticate challenges.
const realm = "tmcp"

// hostGuard refuses a request whose Host header is not one this server
// answers to: a page whose name was rebound to this machine's address
// (DNS rebinding) still sends its own name as Host. Allowed are the loopback
// names and the bound host with the listening port, and the configured
// names (with any port, or the one they give).
type hostGuard struct {
	port  string
	exact map[string]bool // host:port, lower case
	names map[string]bool // host, any port
}

func newHostGuard(bound net.Addr, bindHost string, allow []string) (*hostGuard, error) {
	_, port, err := net.SplitHostPort(bound.String())
	if err != nil {
		return nil, fmt.Errorf("reading the bound address %s: %w", bound, err)
	}
	g := &hostGuard{port: port, exact: map[string]bool{}, names: map[string]bool{}}
	for _, h := range []string{"localhost", "127.0.0.1", "::1", bindHost} {
		if h != "" && !isUnspecified(h) {
			g.exact[strings.ToLower(net.JoinHostPort(h, port))] = true
		}
	}
	for _, a := range allow {
		a = strings.ToLower(strings.TrimSpace(a))
		if a == "" {
			continue
		}
		if h, p, err := net.SplitHostPort(a); err == nil {
			g.exact[net.JoinHostPort(h, p)] = true
		} else {
			g.names[strings.Trim(a, "[]")] = true
		}
	}
	return g, nil
}

func isUnspecified(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

// allows reports whether a request's Host names this server.
func (g *hostGuard) allows(hostHeader string) bool {
	h := strings.ToLower(hostHeader)
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		// No port: the scheme's default.
		host, port = strings.Trim(h, "[]"), ""
	}
	if g.names[host] {
		return true
	}
	if port == "" {
		return false
	}
	return g.exact[net.JoinHostPort(host, port)]
}

func (g *hostGuard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.allows(r.Host) {
			http.Error(w, fmt.Sprintf("tmcp: Host %q is not this server's (localhost, 127.0.0.1 or [::1] with port %s, the bound address, or a name given with --allow-host): refused against DNS rebinding", r.Host, g.port), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// originGuard refuses a request that carries an Origin header not on the
// allow list (empty unless configured): MCP clients send none, and a web
// page always does. The standard library's CrossOriginProtection is not
// enough here: it admits same-origin requests by the Host alone, where a
// rebound name makes any page same-origin, and it admits GET, which opens
// the event stream. Same-origin is admitted only behind the host guard
// (wrapSameOrigin).
type originGuard struct {
	allowed map[string]bool
}

func newOriginGuard(allow []string) *originGuard {
	g := &originGuard{allowed: map[string]bool{}}
	for _, o := range allow {
		if o = strings.TrimSpace(o); o != "" {
			g.allowed[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
		}
	}
	return g
}

func (g *originGuard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origins := r.Header.Values("Origin"); len(origins) > 0 {
			if len(origins) > 1 || !g.allowed[strings.ToLower(origins[0])] {
				http.Error(w, fmt.Sprintf("tmcp: Origin %q is not allowed (allow it with --allow-origin): cross-site requests are refused", strings.Join(origins, ", ")), http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// wrapSameOrigin is wrap that also admits tmcp's own origin
// (scheme://Host), which a page tmcp serves (the live view) sends with its
// requests, to its data and to /mcp alike.
// It is safe behind the host guard, which has refused a Host that is not
// this server's, so a page elsewhere cannot pass for this one.
func (g *originGuard) wrapSameOrigin(scheme string, next http.Handler) http.Handler {
	checked := g.wrap(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origins := r.Header.Values("Origin"); len(origins) == 1 && strings.EqualFold(origins[0], scheme+"://"+r.Host) {
			next.ServeHTTP(w, r)
			return
		}
		checked.ServeHTTP(w, r)
	})
}

// queryTokenParams are the query parameters a token could be passed in; a
// URL is logged and kept in history, so a token there is refused (RFC 6750
// section 2.3 allows it; tmcp does not).
var queryTokenParams = []string{"access_token", "token"}

// requireToken checks the bearer token on every request, through the
// SDK's middleware (which also binds each session to the token that opened
// it), and adds the WWW-Authenticate challenge RFC 6750 requires on a 401.
func requireToken(k *keyring, next http.Handler) http.Handler {
	checked := auth.RequireBearerToken(k.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		for _, p := range queryTokenParams {
			if q.Has(p) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm=%q, error="invalid_request", error_description="token in the URL refused"`, realm))
				http.Error(w, fmt.Sprintf("tmcp: a token in the URL (%s=…) is refused: send it as the header Authorization: Bearer TOKEN", p), http.StatusBadRequest)
				return
			}
		}
		challenge := fmt.Sprintf("Bearer realm=%q", realm)
		if r.Header.Get("Authorization") != "" {
			challenge += `, error="invalid_token"`
		}
		checked.ServeHTTP(&challengeWriter{ResponseWriter: w, challenge: challenge}, r)
	})
}

// challengeWriter adds a WWW-Authenticate challenge to a 401 response
// that has none.
type challengeWriter struct {
	http.ResponseWriter
	challenge string
}

func (c *challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized && c.Header().Get("WWW-Authenticate") == "" {
		c.Header().Set("WWW-Authenticate", c.challenge)
	}
	c.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (to flush an
// event stream).
func (c *challengeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Flush passes on a flush, for the SDK's event streams.
func (c *challengeWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
