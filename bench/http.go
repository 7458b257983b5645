package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// httpToken is the bearer token of the benchmark's tmcp --http.
	httpToken = "bench-token-0123456789abcdef"
	// httpSessions is how many MCP sessions wait on one pane at once.
	httpSessions = 50
	// httpRounds and shortHTTPRounds are the timed rounds of the
	// many-sessions row, each one line that every session waits for.
	httpRounds      = 10
	shortHTTPRounds = 3
	// httpWaitStart is how long after sending the waits the line is
	// written: time for every one of them to be read and attached.
	httpWaitStart = 300 * time.Millisecond
	// httpLateTries bounds how often a round begins again, its line
	// written twice as late, when a wait began after the write.
	httpLateTries = 3
	// httpWaitSeconds bounds each of those waits.
	httpWaitSeconds = 10
	// httpStartTimeout bounds tmcp --http's start, until it says where it
	// serves.
	httpStartTimeout = 15 * time.Second
)

// httpTmcp is tmcp serving HTTP against the private server.
type httpTmcp struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer // read only once the process has exited
	exited chan struct{}
}

var servingAt = regexp.MustCompile(`serving MCP at (\S+)`)

// startHTTPTmcp starts bin with --http on a free loopback port and waits
// until it says where it serves.
func startHTTPTmcp(ctx context.Context, bin string, srv *tmuxServer) (*httpTmcp, error) {
	cmd := childCommand(ctx, append(srv.Env(), "TMCP_TOKEN="+httpToken), bin, "-socket-path", srv.Socket,
		"--http", "127.0.0.1:0", "--max-sessions", fmt.Sprint(2*httpSessions), "--max-calls", "4")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s --http: %w", bin, err)
	}
	h := &httpTmcp{cmd: cmd, stderr: new(bytes.Buffer), exited: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			h.stderr.WriteString(sc.Text() + "\n")
			if m := servingAt.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, pipe)
		_ = cmd.Wait()
		close(h.exited)
	}()
	select {
	case h.url = <-found:
		return h, nil
	case <-h.exited:
		return nil, fmt.Errorf("tmcp --http exited at start: %s", strings.TrimSpace(h.stderr.String()))
	case <-time.After(httpStartTimeout):
		h.close()
		return nil, fmt.Errorf("tmcp --http did not say where it serves within %v", httpStartTimeout)
	}
}

// bearer adds the token to every request.
type bearer struct{ base http.RoundTripper }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+httpToken)
	return b.base.RoundTrip(r)
}

// connect opens an MCP session over HTTP with the SDK's streamable client.
func (h *httpTmcp) connect(ctx context.Context) (*tmcpProcess, error) {
	t := &mcp.StreamableClientTransport{Endpoint: h.url, HTTPClient: &http.Client{Transport: bearer{http.DefaultTransport}}}
	cs, err := newClient().Connect(ctx, arrivalTransport{Transport: t, writeBegins: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", h.url, err)
	}
	return &tmcpProcess{cmd: h.cmd, session: cs, stderr: h.stderr}, nil
}

// close stops tmcp --http with SIGTERM, as a person would.
func (h *httpTmcp) close() {
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
	case <-time.After(5 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.exited
	}
}

// overHTTP measures tmcp over streamable HTTP beside tmcp over stdio:
// list_sessions, a wait_for_text reaction, and httpSessions sessions all
// waiting on one pane, with tmcp's memory.
func (b *bench) overHTTP(ctx context.Context) error {
	h, err := startHTTPTmcp(ctx, b.bin, b.srv)
	if err != nil {
		return err
	}
	defer h.close()
	one, err := h.connect(ctx)
	if err != nil {
		return err
	}
	defer one.session.Close()

	check := func(r *mcp.CallToolResult) error {
		if text := resultText(r); !strings.Contains(text, sessionName) {
			return fmt.Errorf("list_sessions lacks session %q: %s", sessionName, text)
		}
		return nil
	}
	stdioList, err := sample(ctx, b.cfg.warmups, b.cfg.n, b.tmcp.callOnce("list_sessions", nil, check))
	if err != nil {
		return fmt.Errorf("list_sessions over stdio: %w", err)
	}
	httpList, err := sample(ctx, b.cfg.warmups, b.cfg.n, one.callOnce("list_sessions", nil, check))
	if err != nil {
		return fmt.Errorf("list_sessions over HTTP: %w", err)
	}
	b.put(durationRow(rowListHTTP, unitMs, httpList, &stdioList))

	tp, err := b.srv.newSession(ctx, "react-http")
	if err != nil {
		return err
	}
	tty, err := openTTY(tp)
	if err != nil {
		return err
	}
	defer tty.Close()
	stdioReact, err := b.reactionSample(ctx, b.tmcp, tp, tty)
	if err != nil {
		return fmt.Errorf("reaction over stdio: %w", err)
	}
	httpReact, err := b.reactionSample(ctx, one, tp, tty)
	if err != nil {
		return fmt.Errorf("reaction over HTTP: %w", err)
	}
	b.put(durationRow(rowReactionHTTP, unitMs, httpReact, &stdioReact))

	before, err := peakMiB(h.cmd.Process.Pid)
	if err != nil {
		return err
	}
	sessions := []*tmcpProcess{one}
	for len(sessions) < httpSessions {
		s, err := h.connect(ctx)
		if err != nil {
			return fmt.Errorf("session %d of %d: %w", len(sessions)+1, httpSessions, err)
		}
		defer s.session.Close()
		sessions = append(sessions, s)
	}
	rounds := httpRounds
	if b.cfg.n < defaultIterations {
		rounds = shortHTTPRounds
	}
	var replies []time.Duration
	start, line := httpWaitStart, 0
	for i := 0; i < 1+rounds; i++ { // the first round is a warm-up
		line++
		ds, err := waitAll(ctx, sessions, tp, tty, fmt.Sprintf("ALL-%d", line), start)
		if errors.Is(err, errLate) && start < httpWaitStart<<httpLateTries {
			// A wait began after the write, as a loaded machine delays
			// it: the round again, the line written later.
			start *= 2
			i--
			continue
		}
		if err != nil {
			return fmt.Errorf("round %d of %d sessions waiting on %s: %w", i+1, httpSessions, tp.id, err)
		}
		if i > 0 {
			replies = append(replies, ds...)
		}
	}
	after, err := peakMiB(h.cmd.Process.Pid)
	if err != nil {
		return err
	}
	b.put(durationRow(rowManyHTTP, unitMs, summarise(replies), &httpReact))
	b.put(valueRow(rowManyHTTPMemory, unitMiB, 1, round(after, 1), ptr(round(before, 1))))
	b.notes.ManyHTTPP99Ms = round(ms(percentile(replies, 99)), 3)
	b.notes.ManyHTTPReplies = len(replies)
	return nil
}

// errLate is a wait that timed out: it began after the line was written.
var errLate = errors.New("a wait began after the line was written")

// waitAll has every session wait for text on pane tp, writes it start
// later, when they all should wait, and returns how long after the write
// each reply came.
func waitAll(ctx context.Context, sessions []*tmcpProcess, tp benchPane, tty io.Writer, text string, start time.Duration) ([]time.Duration, error) {
	waits := make([]func() answer, len(sessions))
	for i, s := range sessions {
		waits[i], _ = s.callAsync(ctx, "wait_for_text", map[string]any{"paneId": tp.id,
			"patterns": []string{text}, "timeoutSeconds": httpWaitSeconds})
	}
	time.Sleep(start)
	wrote := time.Now()
	if _, err := io.WriteString(tty, text+"\r\n"); err != nil {
		return nil, err
	}
	var ds []time.Duration
	var firstErr error
	for i, wait := range waits {
		a := wait()
		var w struct{ Outcome, Matched string }
		switch {
		case a.err != nil:
			firstErr = cmpOr(firstErr, fmt.Errorf("session %d: %w", i+1, a.err))
		case decode(a.r, &w) == nil && w.Outcome == "timeout":
			firstErr = cmpOr(firstErr, fmt.Errorf("session %d: %w", i+1, errLate))
		case decode(a.r, &w) != nil || w.Outcome != "matched" || !strings.HasSuffix(w.Matched, text):
			firstErr = cmpOr(firstErr, fmt.Errorf("session %d: outcome %s, matched %q; want %s", i+1, w.Outcome, w.Matched, text))
		default:
			ds = append(ds, a.at.Sub(wrote))
		}
	}
	return ds, firstErr
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// percentile is the nearest-rank p-th percentile of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[(p*len(s)+99)/100-1]
}
