package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// Local probes from tmcp's own machine.
type Local struct{}

// Probe checks t once, within MaxTimeout and ctx.
func (Local) Probe(ctx context.Context, t Target) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout(ctx))
	defer cancel()
	if !t.HTTP() {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", t.Addr)
		if err != nil {
			return Result{Detail: describe(ctx, err)}
		}
		c.Close()
		return Result{OK: true, Detail: "accepting connections"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL, nil)
	if err != nil {
		return Result{Detail: bound(err.Error())}
	}
	req.Header.Set("User-Agent", userAgent)
	// A transport of its own per probe: no connection kept between probes,
	// so each one sees whether the server accepts a new one now.
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true, ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: t.Insecure}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr,
		// The URL's own answer is judged: a redirect is a status like any other.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return Result{Detail: describe(ctx, err)}
	}
	defer resp.Body.Close()
	var body []byte
	if t.Body != "" {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes))
	}
	return t.judge(resp.StatusCode, resp.Header.Values, body)
}

// describe says why a connection or request failed, without the
// request's own words around it.
func describe(ctx context.Context, err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	}
	var tlsErr *tls.CertificateVerificationError
	if errors.As(err, &tlsErr) {
		return "TLS: " + bound(tlsErr.Err.Error()) + " (insecure: true accepts it)"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return bound("no such host: " + dnsErr.Name)
	}
	return bound(strings.TrimPrefix(err.Error(), "dial tcp "))
}
