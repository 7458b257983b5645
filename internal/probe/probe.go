// Package probe checks whether a service is ready: a TCP port that
// accepts connections, or an HTTP(S) URL that answers as expected. A
// probe runs from a host's point of view: Local dials from tmcp's own
// machine, Remote runs a small POSIX sh script on a remote host over its
// ssh transport, where localhost means that host.
package probe

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Bounds of one probe.
const (
	// MaxTimeout bounds a single probe: a port that swallows SYNs costs
	// this, not the whole wait.
	MaxTimeout = 2 * time.Second
	// MaxBodyBytes is how much of a response body is searched for Body.
	MaxBodyBytes = 64 << 10
	// maxDetail bounds the text of a result's Detail.
	maxDetail = 200
	// userAgent names tmcp to the server it probes.
	userAgent = "tmcp-probe"
)

// DefaultStatus is the status set an HTTP probe accepts unless told
// otherwise: 200–399, as Kubernetes httpGet probes do.
const DefaultStatus = "200-399"

// Target is what a probe checks.
type Target struct {
	// Addr is host:port for a TCP probe; URL is empty then.
	Addr string
	// URL is an http or https URL for an HTTP probe.
	URL string
	// Status is the set of statuses that pass (see ParseStatus).
	Status StatusSet
	// Header, when not empty, is a header that must be present; when
	// HeaderValue is not empty too, its value must contain it.
	Header      string
	HeaderValue string
	// Body, when not empty, must occur in the first MaxBodyBytes of the body.
	Body string
	// Insecure accepts any TLS certificate (a self-signed one).
	Insecure bool
}

// HTTP reports whether t is an HTTP probe.
func (t Target) HTTP() bool { return t.URL != "" }

// String names the target.
func (t Target) String() string {
	if t.HTTP() {
		return t.URL
	}
	return "tcp://" + t.Addr
}

// Result is what one probe found.
type Result struct {
	OK bool
	// Status is the HTTP status received, 0 if none.
	Status int
	// Detail says what was found, in a few words: "accepting connections",
	// "connection refused", "status 503", a TLS error naming the
	// certificate's problem.
	Detail string
}

// Prober runs probes from one host.
type Prober interface {
	Probe(ctx context.Context, t Target) Result
}

// For returns the prober of a host reached through transport (the argv
// that runs a command there, as tmux.Client.Transport returns it): Local
// for none.
func For(transport []string) Prober {
	if len(transport) == 0 {
		return Local{}
	}
	return Remote{Transport: transport}
}

// ParseTarget reads what to probe: a port ("3000", localhost), host:port
// or tcp://host:port, or an http:// or https:// URL.
func ParseTarget(s string) (Target, error) {
	s = strings.TrimSpace(s)
	if strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		return Target{}, fmt.Errorf("target %q holds a control character", s)
	}
	if lower := strings.ToLower(s); strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		u, err := url.Parse(s)
		if err != nil {
			return Target{}, fmt.Errorf("target: %w", err)
		}
		if u.Hostname() == "" {
			return Target{}, fmt.Errorf("target %q names no host", s)
		}
		return Target{URL: u.String()}, nil
	}
	addr := strings.TrimPrefix(s, "tcp://")
	if _, err := strconv.Atoi(addr); err == nil {
		addr = net.JoinHostPort("localhost", addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return Target{}, fmt.Errorf("target %q: want a port, host:port, tcp://host:port or an http(s) URL", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return Target{}, fmt.Errorf("target %q: port %q is not within 1-65535", s, port)
	}
	if host == "" || strings.HasPrefix(host, "-") {
		return Target{}, fmt.Errorf("target %q: want a host before the port", s)
	}
	return Target{Addr: net.JoinHostPort(host, port)}, nil
}

// StatusSet is a set of HTTP statuses, as ranges.
type StatusSet [][2]int

// ParseStatus reads a status set: statuses and ranges separated by
// commas, such as "200-399" or "200,204,301-308"; empty is DefaultStatus.
func ParseStatus(s string) (StatusSet, error) {
	if strings.TrimSpace(s) == "" {
		s = DefaultStatus
	}
	var set StatusSet
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if err1 != nil || err2 != nil || a < 100 || b > 599 || a > b {
			return nil, fmt.Errorf("status %q: want statuses or ranges within 100-599, such as 200-399 or 200,204", s)
		}
		set = append(set, [2]int{a, b})
	}
	return set, nil
}

// Has reports whether status is in the set.
func (s StatusSet) Has(status int) bool {
	for _, r := range s {
		if status >= r[0] && status <= r[1] {
			return true
		}
	}
	return false
}

// ParseHeader reads a header check: "Name" (present) or "Name: value"
// (its value contains value).
func ParseHeader(s string) (name, value string, err error) {
	name, value, _ = strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if s != "" && (name == "" || strings.ContainsAny(name, " \t\r\n")) {
		return "", "", fmt.Errorf("header %q: want Name or Name: value", s)
	}
	return name, value, nil
}

// judge decides an HTTP answer: its status, its headers (a lookup by
// name), the start of its body.
func (t Target) judge(status int, header func(string) []string, body []byte) Result {
	r := Result{Status: status, Detail: "status " + strconv.Itoa(status)}
	if !t.Status.Has(status) {
		return r
	}
	if t.Header != "" {
		values := header(t.Header)
		if len(values) == 0 {
			r.Detail += ", no " + t.Header + " header"
			return r
		}
		if t.HeaderValue != "" && !containsAny(values, t.HeaderValue) {
			r.Detail += fmt.Sprintf(", %s: %s", t.Header, bound(strings.Join(values, ", ")))
			return r
		}
	}
	if t.Body != "" && !strings.Contains(string(body), t.Body) {
		r.Detail += ", body lacks the text"
		return r
	}
	r.OK = true
	return r
}

func containsAny(values []string, sub string) bool {
	for _, v := range values {
		if strings.Contains(v, sub) {
			return true
		}
	}
	return false
}

// bound cuts a detail to maxDetail bytes, on a character boundary.
func bound(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxDetail {
		return s
	}
	return strings.ToValidUTF8(s[:maxDetail], "") + "…"
}

// timeout is one probe's bound under ctx.
func timeout(ctx context.Context) time.Duration {
	d := MaxTimeout
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl))
	}
	return max(d, time.Millisecond)
}
