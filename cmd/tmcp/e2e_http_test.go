package main

// End-to-end tests of tmcp --http: the real binary, the SDK's streamable
// HTTP client, and raw requests for every refusal.

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/syncbuf"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// testToken is the bearer token the HTTP tests configure through TMCP_TOKEN.
const testToken = "test-token-0123456789abcdef"

// httpTMCP is a tmcp serving HTTP against a test's tmux server.
type httpTMCP struct {
	t      *testing.T
	srv    *tmuxtest.Server
	url    string
	stderr *syncbuf.Buffer
	proc   *os.Process
	exited chan struct{} // closed when the process has ended
}

var servingLine = regexp.MustCompile(`serving MCP at (\S+)`)

// startHTTP starts tmcp --http on a free loopback port with o's tier,
// environment and arguments, and waits until it serves. Unless o.env sets
// them, TMCP_TOKEN is testToken and XDG_RUNTIME_DIR a directory of the
// test's.
func startHTTP(t *testing.T, srv *tmuxtest.Server, o launchOptions) *httpTMCP {
	t.Helper()
	o.args = append([]string{"--http", "127.0.0.1:0"}, o.args...)
	env := []string{"XDG_RUNTIME_DIR=" + t.TempDir()}
	if !slices.ContainsFunc(o.env, func(kv string) bool { return strings.HasPrefix(kv, "TMCP_TOKEN=") }) {
		env = append(env, "TMCP_TOKEN="+testToken)
	}
	o.env = append(env, o.env...)
	cmd := tmcpCommand(srv, o)
	h := &httpTMCP{t: t, srv: srv, stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = h.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting tmcp --http: %v", err)
	}
	h.proc = cmd.Process
	go func() {
		_ = cmd.Wait()
		close(h.exited)
	}()
	t.Cleanup(func() {
		h.stop()
		if t.Failed() {
			t.Logf("tmcp stderr:\n%s", h.stderr.String())
		}
	})
	if !tmuxtest.WaitFor(connectTimeout, func() bool {
		if m := servingLine.FindStringSubmatch(h.stderr.String()); m != nil {
			h.url = m[1]
			return true
		}
		select {
		case <-h.exited:
			return true
		default:
			return false
		}
	}) || h.url == "" {
		t.Fatalf("tmcp --http did not report its address; stderr:\n%s", h.stderr.String())
	}
	return h
}

// stop ends tmcp with SIGTERM, and kills it if it has not ended in 5 s.
func (h *httpTMCP) stop() {
	_ = h.proc.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
	case <-time.After(5 * time.Second):
		_ = h.proc.Kill()
		<-h.exited
	}
}

// bearer adds an Authorization header, and any other headers given, to
// every request.
type bearer struct {
	token  string
	header http.Header
	base   http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	for k, v := range b.header {
		r.Header[k] = v
	}
	return b.base.RoundTrip(r)
}

// connect opens an MCP session with token through the SDK's streamable
// HTTP client, speaking 2025-11-25, the last protocol version with
// sessions (what these tests are about); it is closed when the test ends.
func (h *httpTMCP) connect(t *testing.T, token string, opts *mcp.ClientOptions) *session {
	t.Helper()
	return h.connectTo(t, h.url, token, nil, opts)
}

// connectTo is connect through another endpoint (a proxy) to the same
// tmcp, with header added to every request.
func (h *httpTMCP) connectTo(t *testing.T, url, token string, header http.Header, opts *mcp.ClientOptions) *session {
	t.Helper()
	return h.connectSpeaking(t, url, token, header, legacyProtocol, opts)
}

// connectSpeaking is connectTo asking for a protocol version.
func (h *httpTMCP) connectSpeaking(t *testing.T, url, token string, header http.Header, version string, opts *mcp.ClientOptions) *session {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "tmcp-e2e-http", Version: "test"}, opts)
	transport := &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token: token, header: header, base: http.DefaultTransport}}}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %s: %v; stderr: %s", h.url, err, h.stderr.String())
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &session{t: t, srv: h.srv, cs: cs, stderr: h.stderr}
}

// rawRequest sends one HTTP request to the endpoint as edit shapes it, and
// returns the response with its body read.
func (h *httpTMCP) rawRequest(t *testing.T, method, body string, edit func(*http.Request)) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, h.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	if edit != nil {
		edit(req)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", method, h.url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// rawSession opens a session with raw requests and returns its id.
func (h *httpTMCP) rawSession(t *testing.T) string {
	t.Helper()
	resp, body := h.rawRequest(t, http.MethodPost, initializeBody, nil)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %s, session %q: %s", resp.Status, id, body)
	}
	resp, body = h.rawRequest(t, http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		func(r *http.Request) { r.Header.Set("Mcp-Session-Id", id) })
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %s: %s", resp.Status, body)
	}
	return id
}

func TestHTTPRefusesEveryRequestItMustRefuse(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	const maxBody, idle = 4096, time.Second
	h := startHTTP(t, srv, launchOptions{args: []string{"--max-body", "4096", "--session-timeout", idle.String()}})
	expired := h.rawSession(t)
	idleSince := time.Now()
	oversized := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", maxBody) + `"}}`
	cases := []struct {
		name       string
		body       string
		edit       func(*http.Request)
		status     int
		header     string // a header the response must carry, as "Name: substring"
		bodyPhrase string
	}{
		{"no token", initializeBody, func(r *http.Request) { r.Header.Del("Authorization") },
			http.StatusUnauthorized, `Www-Authenticate: Bearer realm="tmcp"`, "no bearer token"},
		{"wrong token", initializeBody, func(r *http.Request) { r.Header.Set("Authorization", "Bearer not-the-token-at-all") },
			http.StatusUnauthorized, `Www-Authenticate: error="invalid_token"`, "invalid token"},
		{"token in the query string", initializeBody, func(r *http.Request) {
			r.Header.Del("Authorization")
			r.URL.RawQuery = "access_token=" + testToken
		}, http.StatusBadRequest, `Www-Authenticate: error="invalid_request"`, "Authorization: Bearer"},
		{"token in the query string beside the header", initializeBody, func(r *http.Request) { r.URL.RawQuery = "token=" + testToken },
			http.StatusBadRequest, "", "a token in the URL"},
		{"a web page's Origin", initializeBody, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") },
			http.StatusForbidden, "", "--allow-origin"},
		{"a rebound Host", initializeBody, func(r *http.Request) { r.Host = "evil.example:" + portOf(h.url) },
			http.StatusForbidden, "", "DNS rebinding"},
		{"loopback Host on another port", initializeBody, func(r *http.Request) { r.Host = "localhost:1" },
			http.StatusForbidden, "", "DNS rebinding"},
		{"an oversized body", oversized, nil, http.StatusRequestEntityTooLarge, "", "--max-body"},
		{"an unknown session id", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			func(r *http.Request) { r.Header.Set("Mcp-Session-Id", "NOSUCHSESSION") }, http.StatusNotFound, "", "session not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := h.rawRequest(t, http.MethodPost, c.body, c.edit)
			if resp.StatusCode != c.status || !strings.Contains(body, c.bodyPhrase) {
				t.Errorf("got %s %q, want %d with %q", resp.Status, body, c.status, c.bodyPhrase)
			}
			if c.header != "" {
				name, want, _ := strings.Cut(c.header, ": ")
				if got := resp.Header.Get(name); !strings.Contains(got, want) {
					t.Errorf("%s: %q, want it to hold %q", name, got, want)
				}
			}
		})
	}
	t.Run("a request from tmcp's own origin is served", func(t *testing.T) {
		u, err := url.Parse(h.url)
		if err != nil {
			t.Fatal(err)
		}
		own := func(r *http.Request) { r.Header.Set("Origin", u.Scheme+"://"+u.Host) }
		if resp, body := h.rawRequest(t, http.MethodPost, initializeBody, own); resp.StatusCode != http.StatusOK {
			t.Errorf("initialize with Origin %s://%s: %s %s", u.Scheme, u.Host, resp.Status, body)
		}
		// The same Origin with a Host that is not this server's stays out.
		rebound := func(r *http.Request) { own(r); r.Host = "evil.example:" + portOf(h.url) }
		if resp, _ := h.rawRequest(t, http.MethodPost, initializeBody, rebound); resp.StatusCode != http.StatusForbidden {
			t.Errorf("tmcp's origin on a rebound Host: %s, want 403", resp.Status)
		}
	})
	t.Run("the same request with the token is served", func(t *testing.T) {
		if resp, body := h.rawRequest(t, http.MethodPost, initializeBody, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("initialize with the token: %s %s", resp.Status, body)
		}
	})
	t.Run("an expired session", func(t *testing.T) {
		// Idleness is the condition under test: the session must see no
		// request for longer than its timeout.
		time.Sleep(time.Until(idleSince.Add(2 * idle)))
		resp, body := h.rawRequest(t, http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			func(r *http.Request) { r.Header.Set("Mcp-Session-Id", expired) })
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("a session idle for %v with --session-timeout %v: %s %q, want 404", 2*idle, idle, resp.Status, body)
		}
	})
}

func portOf(url string) string {
	return url[strings.LastIndex(url, ":")+1 : strings.LastIndex(url, "/")]
}

func TestHTTPServesToolsToTheSDKClient(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	h := startHTTP(t, srv, launchOptions{})
	s := h.connect(t, testToken, nil)
	var sessions sessionsOut
	s.ok("list_sessions", nil, &sessions)
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].SessionName != "main" {
		t.Errorf("list_sessions over HTTP: %+v, want the one session main", sessions)
	}
	r := replyFields[jobOut](t, "run_command", s.call("run_command", map[string]any{"paneId": pane, "command": "echo over-http; false"}))
	if text := paneText(t, "run_command", s.call("get_job", map[string]any{"jobId": r.JobID})); status(r.ExitStatus) != "1" || text != "over-http" {
		t.Errorf("run_command over HTTP: status %s output %q, want 1 and over-http", status(r.ExitStatus), text)
	}
}

func TestHTTPWaitSendsProgressAndMatches(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	h := startHTTP(t, srv, launchOptions{})
	progressed, opts := progressSignal()
	s := h.connect(t, testToken, opts)
	got := callWaiting(context.Background(), t, s, progressed, map[string]any{"paneId": pane, "patterns": []string{"ready-[0-9]+"}, "regex": true, "timeoutSeconds": 15})
	srv.Must("send-keys", "-t", pane, "echo ready-$((40+2))", "Enter")
	res := <-got
	if res == nil {
		return
	}
	if r := replyFields[waitTextOut](t, "wait_for_text", res); r.Outcome != "matched" || r.Matched != "ready-42" {
		t.Errorf("wait_for_text over HTTP: outcome %s matched %q, want matched ready-42", r.Outcome, r.Matched)
	}
}

// startWait calls wait_for_text on a pane for text never printed, and
// returns once the wait runs (see callWaiting).
func startWait(ctx context.Context, t *testing.T, s *session, progressed <-chan struct{}, pane string) <-chan *mcp.CallToolResult {
	t.Helper()
	return callWaiting(ctx, t, s, progressed, map[string]any{"paneId": pane, "patterns": []string{"never printed"}, "timeoutSeconds": 30})
}

// callWaiting calls wait_for_text with args and a progress token, and
// returns once the wait runs: its first progress notification came. The
// result arrives on the channel, nil after a protocol error, which fails
// the test unless ctx was cancelled.
func callWaiting(ctx context.Context, t *testing.T, s *session, progressed <-chan struct{}, args map[string]any) <-chan *mcp.CallToolResult {
	t.Helper()
	params := &mcp.CallToolParams{Name: "wait_for_text", Arguments: args}
	params.SetProgressToken("wait")
	got := make(chan *mcp.CallToolResult, 1)
	go func() {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		res, err := s.cs.CallTool(cctx, params)
		if err != nil && ctx.Err() == nil {
			t.Errorf("wait_for_text %v: %v", args, err)
		}
		got <- res
	}()
	select {
	case <-progressed:
	case <-time.After(settle):
		t.Fatal("the wait sent no progress within 5 s")
	}
	return got
}

func progressSignal() (chan struct{}, *mcp.ClientOptions) {
	ch := make(chan struct{}, 1)
	return ch, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}}
}

// auditLine is what the HTTP tests read of a line of the audit log.
type auditLine struct {
	Tool, Outcome, Session, Token string
}

// awaitAuditLine returns the first line of the audit log in file for
// which want holds, once one is written, or fails the test after settle.
func awaitAuditLine(t *testing.T, file string, want func(auditLine) bool) auditLine {
	t.Helper()
	var line auditLine
	if !tmuxtest.WaitFor(settle, func() bool {
		f, err := os.Open(file)
		if err != nil {
			return false
		}
		defer f.Close()
		for sc := bufio.NewScanner(f); sc.Scan(); {
			line = auditLine{}
			if json.Unmarshal(sc.Bytes(), &line) == nil && want(line) {
				return true
			}
		}
		return false
	}) {
		b, _ := os.ReadFile(file)
		t.Fatalf("no such audit line within %v:\n%s", settle, b)
	}
	return line
}

func TestHTTPCancelledWaitEndsAndIsAuditedWithSessionAndToken(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	h := startHTTP(t, srv, launchOptions{env: []string{"TMCP_AUDIT=" + audit}})
	progressed, opts := progressSignal()
	s := h.connect(t, testToken, opts)
	ctx, cancel := context.WithCancel(context.Background())
	got := startWait(ctx, t, s, progressed, pane)
	cancel()
	<-got
	line := awaitAuditLine(t, audit, func(l auditLine) bool { return l.Tool == "wait_for_text" })
	// The fingerprint is the first 8 hex digits of the token's SHA-256.
	sum := sha256.Sum256([]byte(testToken))
	fingerprint := hex.EncodeToString(sum[:])[:8]
	if line.Outcome != "cancelled" || line.Session != s.cs.ID() || line.Token != fingerprint {
		t.Errorf("audit line %+v, want outcome cancelled, session %s, token %s", line, s.cs.ID(), fingerprint)
	}
	if b, _ := os.ReadFile(audit); strings.Contains(string(b), testToken) {
		t.Errorf("the audit log holds the token itself: %s", b)
	}
	// The session serves on after the cancellation.
	s.ok("list_sessions", nil, nil)
}

func TestHTTPTwoSessionsShareOneEngine(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	other := newShellWindow(t, srv)
	h := startHTTP(t, srv, launchOptions{})
	progressed, opts := progressSignal()
	waiter := h.connect(t, testToken, opts)
	typist := h.connect(t, testToken, nil)
	if waiter.cs.ID() == typist.cs.ID() {
		t.Fatalf("two connections share session id %s", waiter.cs.ID())
	}
	got := callWaiting(context.Background(), t, waiter, progressed, map[string]any{"paneId": pane, "patterns": []string{"hello-from-b"}, "timeoutSeconds": 15})
	// Session B works meanwhile, in another pane and in A's.
	typist.ok("run_command", map[string]any{"paneId": other, "command": "echo busy elsewhere"}, nil)
	typist.ok("run_command", map[string]any{"paneId": pane, "command": "printf 'hello-%s\\n' from-b"}, nil)
	res := <-got
	if res == nil {
		return
	}
	if r := replyFields[waitTextOut](t, "wait_for_text", res); r.Outcome != "matched" || r.Matched != "hello-from-b" {
		t.Errorf("session A's wait: outcome %s matched %q, want the line session B's command printed", r.Outcome, r.Matched)
	}
	// One tmux connection serves both: tmcp's control clients do not
	// multiply with sessions.
	clients := tmuxOne(srv, "list-clients", "-F", "#{client_control_mode}")
	if n := strings.Count(clients, "1"); n > 2 {
		t.Errorf("%d control clients for two sessions on one tmux session; want the engine's own, not one per MCP session", n)
	}
}

func TestHTTPJobOutlivesItsSession(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	h := startHTTP(t, srv, launchOptions{})
	first := h.connect(t, testToken, nil)
	job := replyFields[jobOut](t, "run_command", first.call("run_command", map[string]any{"paneId": pane, "command": "sleep 1; echo finished-late", "detach": true}))
	if job.JobID == "" {
		t.Fatal("run_command with detach gave no jobId")
	}
	if err := first.cs.Close(); err != nil {
		t.Fatalf("closing the first session: %v", err)
	}
	second := h.connect(t, testToken, nil)
	res := second.call("get_job", map[string]any{"jobId": job.JobID, "timeoutSeconds": 10})
	r := replyFields[jobOut](t, "get_job", res)
	if text := paneText(t, "get_job", res); !r.Finished || status(r.ExitStatus) != "0" || text != "finished-late" {
		t.Errorf("get_job from a new session: finished %v status %s output %q, want the first session's job, finished with finished-late", r.Finished, status(r.ExitStatus), text)
	}
}

func TestHTTPTokensCarryTheirOwnTier(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	const readonly, destructive = "readonly-token-0123456789", "destructive-token-0123456789"
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("# tokens\n"+readonly+" readonly\n\n"+destructive+" destructive\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startHTTP(t, srv, launchOptions{tier: "mutating", args: []string{"--token-file", file}})
	ro := h.connect(t, readonly, nil)
	all := h.connect(t, destructive, nil)
	roTools, allTools := ro.toolNames(), all.toolNames()
	for _, name := range []string{"run_command", "send_keys", "kill_pane", "call_mutating_tools_batch", "call_destructive_tools_batch"} {
		if slices.Contains(roTools, name) {
			t.Errorf("the readonly token's session lists %s", name)
		}
		if !slices.Contains(allTools, name) {
			t.Errorf("the destructive token's session does not list %s", name)
		}
	}
	if !slices.Contains(roTools, "list_sessions") {
		t.Errorf("the readonly token's session does not list list_sessions: %v", roTools)
	}
	res, err := ro.callErr("send_keys", map[string]any{"paneId": pane, "keys": []string{"echo no"}})
	if err == nil && !res.IsError {
		t.Errorf("send_keys with the readonly token succeeded: %s", allText(res))
	}
	// TMCP_TOKEN adds a token at TMCP_SAFETY's tier.
	mut := h.connect(t, testToken, nil)
	if names := mut.toolNames(); !slices.Contains(names, "run_command") || slices.Contains(names, "kill_pane") {
		t.Errorf("TMCP_TOKEN under TMCP_SAFETY=mutating: tools %v, want run_command and no kill_pane", names)
	}
	// A session belongs to the token that opened it.
	resp, body := h.rawRequest(t, http.MethodPost, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, func(r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+readonly)
		r.Header.Set("Mcp-Session-Id", all.cs.ID())
		r.Header.Set("Mcp-Protocol-Version", all.cs.InitializeResult().ProtocolVersion)
	})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("the readonly token on the destructive token's session: %s %q, want 403", resp.Status, body)
	}
}

func TestHTTPRefusesATokenFileOthersCanRead(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	cases := []struct {
		name, content string
		mode          os.FileMode
		want          string
	}{
		{"group and world readable", testToken + "\n", 0o644, "chmod 600"},
		{"group readable", testToken + "\n", 0o640, "chmod 600"},
		{"an unknown tier", testToken + " admin\n", 0o600, `tier "admin"`},
		{"a short token", "short readonly\n", 0o600, "too short"},
		{"no token", "# nothing\n", 0o600, "holds no token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "tokens")
			if err := os.WriteFile(file, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(file, c.mode); err != nil {
				t.Fatal(err)
			}
			cmd := tmcpCommand(srv, launchOptions{args: []string{"--http", "127.0.0.1:0", "--token-file", file}})
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || !strings.Contains(string(out), c.want) {
				t.Errorf("tmcp --http with a token file of mode %04o holding %q: %v %q, want a refusal with %q", c.mode, c.content, err, out, c.want)
			}
			if strings.Contains(string(out), testToken) {
				t.Errorf("the refusal prints the token: %q", out)
			}
		})
	}
}

func TestHTTPMakesATokenWhenNoneIsConfigured(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	runtime := t.TempDir()
	h := startHTTP(t, srv, launchOptions{env: []string{"TMCP_TOKEN=", "XDG_RUNTIME_DIR=" + runtime}})
	m := regexp.MustCompile(`bearer token \(tier mutating\) is in (\S+)`).FindStringSubmatch(h.stderr.String())
	if m == nil {
		t.Fatalf("tmcp did not say where its token is; stderr:\n%s", h.stderr.String())
	}
	if !strings.HasPrefix(m[1], runtime) {
		t.Errorf("token file %s, want it under $XDG_RUNTIME_DIR %s", m[1], runtime)
	}
	info, err := os.Stat(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %04o, want 0600", info.Mode().Perm())
	}
	b, _ := os.ReadFile(m[1])
	token := strings.TrimSpace(string(b))
	if len(token) < 32 || strings.Contains(h.stderr.String(), token) {
		t.Errorf("made token %q: want at least 32 characters, never printed", token)
	}
	h.connect(t, token, nil).ok("list_sessions", nil, nil)
}

func TestHTTPCapsSessionsAndCallsInFlight(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	h := startHTTP(t, srv, launchOptions{args: []string{"--max-sessions", "1", "--max-calls", "1"}})
	progressed, opts := progressSignal()
	s := h.connect(t, testToken, opts)
	t.Run("sessions", func(t *testing.T) {
		resp, body := h.rawRequest(t, http.MethodPost, initializeBody, nil)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "--max-sessions") {
			t.Errorf("a second session under --max-sessions 1: %s %q, want 503 naming --max-sessions", resp.Status, body)
		}
	})
	t.Run("calls", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		got := startWait(ctx, t, s, progressed, pane)
		if msg := s.fail("list_sessions", nil); !strings.Contains(msg, "--max-calls") {
			t.Errorf("a second call in flight under --max-calls 1: %q, want a refusal naming --max-calls", msg)
		}
		cancel()
		<-got
		// The client gives up at once; the place frees when tmcp has
		// answered the cancelled wait, a moment later.
		if !tmuxtest.WaitFor(settle, func() bool {
			res, err := s.callErr("list_sessions", nil)
			return err == nil && !res.IsError
		}) {
			t.Errorf("a call after the one in flight was cancelled: %q, want it answered", s.fail("list_sessions", nil))
		}
	})
	t.Run("a closed session frees its place", func(t *testing.T) {
		if err := s.cs.Close(); err != nil {
			t.Fatal(err)
		}
		var status int
		if !tmuxtest.WaitFor(settle, func() bool {
			resp, _ := h.rawRequest(t, http.MethodPost, initializeBody, nil)
			status = resp.StatusCode
			return status == http.StatusOK
		}) {
			t.Errorf("a new session after the only one closed: %d, want 200", status)
		}
	})
}

func TestHTTPStopsGracefullyOnSIGTERM(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	h := startHTTP(t, srv, launchOptions{})
	progressed, opts := progressSignal()
	s := h.connect(t, testToken, opts)
	got := startWait(context.Background(), t, s, progressed, pane)
	start := time.Now()
	if err := h.proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("tmcp --http did not exit within 5 s of SIGTERM")
	}
	took := time.Since(start)
	t.Logf("exited %v after SIGTERM", took.Round(time.Millisecond))
	if took > 2*time.Second {
		t.Errorf("tmcp --http took %v to exit after SIGTERM, want under 2 s", took)
	}
	var res *mcp.CallToolResult
	select {
	case res = <-got:
	case <-time.After(settle):
		t.Fatal("the wait in flight got no answer")
	}
	if res == nil {
		t.Fatal("the wait in flight was answered with an error, not a cancelled outcome")
	}
	if r := replyFields[waitTextOut](t, "wait_for_text", res); r.Outcome != "cancelled" {
		t.Errorf("the wait in flight at SIGTERM: outcome %s, want cancelled", r.Outcome)
	}
	// tmcp's control clients went with it.
	if !tmuxtest.WaitFor(settle, func() bool {
		return !strings.Contains(tmuxOne(srv, "list-clients", "-F", "#{client_control_mode}"), "1")
	}) {
		t.Errorf("control clients left attached after tmcp exited: %q", tmuxOne(srv, "list-clients", "-F", "#{client_pid} #{client_control_mode}"))
	}
}

// tsClient is the directory of the TypeScript client script and its
// node_modules (scripts/install-deps.sh installs them).
const tsClient = "testdata/tsclient"

func TestHTTPServesTheOfficialTypeScriptClient(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the TypeScript SDK's client cannot run here")
	}
	if _, err := os.Stat(filepath.Join(tsClient, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the TypeScript MCP SDK is not installed in %s: run scripts/install-deps.sh (%v)", tsClient, err)
	}
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	h := startHTTP(t, srv, launchOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*callTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", h.url, pane)
	cmd.Dir = tsClient
	cmd.Env = append(os.Environ(), "TMCP_TOKEN="+testToken)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if exit, ok := err.(*exec.ExitError); ok {
			stderr = exit.Stderr
		}
		t.Fatalf("the TypeScript client: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	var got struct {
		SessionID string   `json:"sessionId"`
		Tools     []string `json:"tools"`
		Run       jobOut   `json:"run"`
		RunText   []string `json:"runText"`
		Wait      struct {
			Outcome string `json:"outcome"`
		} `json:"wait"`
		Progress int `json:"progress"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the TypeScript client printed %q: %v", out, err)
	}
	if got.SessionID == "" || !slices.Contains(got.Tools, "run_command") {
		t.Errorf("session %q, tools %v: want a session and run_command among the tools", got.SessionID, got.Tools)
	}
	if status(got.Run.ExitStatus) != "0" || !strings.Contains(strings.Join(got.RunText, "\n"), "from-typescript") {
		t.Errorf("run_command from TypeScript: status %s, text %q; want 0 and from-typescript", status(got.Run.ExitStatus), got.RunText)
	}
	// The client's own timeout (2 s) is shorter than the wait (3 s): only
	// progress kept the call alive.
	if got.Wait.Outcome != "timeout" || got.Progress == 0 {
		t.Errorf("a 3 s wait under a 2 s client timeout reset on progress: outcome %q after %d progress notifications; want timeout after some", got.Wait.Outcome, got.Progress)
	}
}

// cutter is a TCP proxy whose connections the test can cut, as a network
// that drops would.
type cutter struct {
	ln     net.Listener
	target atomic.Value // string: host:port to forward to
	mu     sync.Mutex
	conns  []net.Conn
	cuts   int
}

func newCutter(t *testing.T) *cutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{ln: ln}
	t.Cleanup(func() {
		ln.Close()
		c.cut()
	})
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", c.target.Load().(string))
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	return c
}

// cut closes every connection open through the proxy and returns how many.
func (c *cutter) cut() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.conns)
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
	return n
}

func TestHTTPWaitSurvivesADroppedConnection(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	proxy := newCutter(t)
	h := startHTTP(t, srv, launchOptions{args: []string{"--allow-host", proxy.ln.Addr().String()}})
	proxy.target.Store(strings.TrimSuffix(strings.TrimPrefix(h.url, "http://"), "/mcp"))
	progressed, opts := progressSignal()
	s := h.connectTo(t, "http://"+proxy.ln.Addr().String()+"/mcp", testToken, nil, opts)
	got := callWaiting(context.Background(), t, s, progressed, map[string]any{"paneId": pane, "patterns": []string{"after-the-cut"}, "timeoutSeconds": 15})
	if n := proxy.cut(); n == 0 {
		t.Fatal("no connection to cut")
	}
	srv.Must("send-keys", "-t", pane, "echo after-the-$(echo cut)", "Enter")
	res := <-got
	if res == nil {
		return
	}
	if r := replyFields[waitTextOut](t, "wait_for_text", res); r.Outcome != "matched" || r.Matched != "after-the-cut" {
		t.Errorf("the wait after its connection was cut: outcome %s matched %q, want the line written after the cut", r.Outcome, r.Matched)
	}
}

func TestHTTPGuardsThePaneAClientDeclares(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	declared := mainPane(srv)
	other := newWindow(srv, "sh")
	spare := newWindow(srv, "sh")
	h := startHTTP(t, srv, launchOptions{tier: "destructive"})
	inPane := h.connectTo(t, h.url, testToken, http.Header{"X-Tmcp-Caller-Pane": {declared}}, nil)
	elsewhere := h.connect(t, testToken, nil)
	callers := func(s *session) []string {
		var out struct {
			Panes []struct {
				PaneID   string `json:"paneId"`
				IsCaller bool   `json:"isCaller"`
			} `json:"panes"`
		}
		s.ok("list_panes", nil, &out)
		var ids []string
		for _, p := range out.Panes {
			if p.IsCaller {
				ids = append(ids, p.PaneID)
			}
		}
		return ids
	}
	if got := callers(inPane); !slices.Equal(got, []string{declared}) {
		t.Errorf("isCaller for the session that declared %s: %v", declared, got)
	}
	if got := callers(elsewhere); len(got) != 0 {
		t.Errorf("isCaller for a session that declared no pane: %v, want none", got)
	}
	msg := inPane.fail("kill_pane", map[string]any{"paneId": declared})
	if !strings.Contains(msg, "refusing to kill pane "+declared) || !strings.Contains(msg, "client says it runs") {
		t.Errorf("kill_pane of its own declared pane, from a client that cannot confirm: %q", msg)
	}
	msg = inPane.fail("kill_window", map[string]any{"windowId": tmuxOne(srv, "display-message", "-p", "-t", declared, "#{window_id}")})
	if !strings.Contains(msg, "refusing to kill window") {
		t.Errorf("kill_window of the declared pane's window: %q", msg)
	}
	if !slices.Contains(paneIDs(srv), declared) {
		t.Fatalf("pane %s was killed", declared)
	}
	// Another session's pane is not this one's to guard.
	inPane.ok("kill_pane", map[string]any{"paneId": other}, nil)
	elsewhere.ok("kill_pane", map[string]any{"paneId": spare}, nil)
	if ids := paneIDs(srv); slices.Contains(ids, other) || slices.Contains(ids, spare) {
		t.Errorf("panes %s and %s should be gone: %v", other, spare, ids)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, PEM-encoded,
// and returns their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tmcp test"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestHTTPServesTLSAndWarnsOfPlainHTTPBeyondLoopback(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	t.Run("TLS", func(t *testing.T) {
		certFile, keyFile, pool := selfSigned(t)
		h := startHTTP(t, srv, launchOptions{args: []string{"--tls-cert", certFile, "--tls-key", keyFile}})
		if !strings.HasPrefix(h.url, "https://") {
			t.Fatalf("tmcp with a certificate serves %s, want https", h.url)
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "tmcp-e2e-tls", Version: "test"}, nil)
		tlsTransport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		defer tlsTransport.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		defer cancel()
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url,
			HTTPClient: &http.Client{Transport: bearer{token: testToken, base: tlsTransport}}}, nil)
		if err != nil {
			t.Fatalf("connecting over TLS: %v", err)
		}
		defer cs.Close()
		(&session{t: t, srv: srv, cs: cs, stderr: h.stderr}).ok("list_sessions", nil, nil)
		// Plain HTTP to the TLS port is not served.
		resp, err := http.Post(strings.Replace(h.url, "https://", "http://", 1), "application/json", strings.NewReader(initializeBody))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Errorf("plain HTTP to the TLS port was served")
			}
		}
		if strings.Contains(h.stderr.String(), "warning") {
			t.Errorf("a warning for TLS on loopback: %s", h.stderr.String())
		}
	})
	t.Run("plain HTTP on every address", func(t *testing.T) {
		h := startHTTP(t, srv, launchOptions{args: []string{"--http", "0.0.0.0:0"}})
		if !strings.Contains(h.stderr.String(), "warning: serving plain HTTP on") {
			t.Errorf("no warning for plain HTTP beyond loopback; stderr:\n%s", h.stderr.String())
		}
		local := h.on("http://127.0.0.1:" + portOf(h.url) + "/mcp")
		local.connect(t, testToken, nil).ok("list_sessions", nil, nil)
	})
	t.Run("plain HTTP on loopback", func(t *testing.T) {
		if h := startHTTP(t, srv, launchOptions{}); strings.Contains(h.stderr.String(), "warning") {
			t.Errorf("a warning for loopback: %s", h.stderr.String())
		}
	})
}

// on returns h speaking to another URL of the same tmcp.
func (h *httpTMCP) on(url string) *httpTMCP {
	c := *h
	c.url = url
	return &c
}

func TestHTTPDropsAClientThatSendsHeadersTooSlowly(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	h := startHTTP(t, srv, launchOptions{args: []string{"--read-header-timeout", "500ms"}})
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(h.url, "http://"), "/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A request line and one header, then nothing: the headers never end.
	if _, err := io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:"+portOf(h.url)+"\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(settle))
	_, err = io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("a client whose headers never end was still connected %v later, with --read-header-timeout 500ms", settle)
	}
}

// TestHTTPServesBothProtocolVersionsAtOnce connects a client that speaks
// 2026-07-28 (no sessions: every request names its version) beside one
// with a 2025-11-25 session, to one tmcp: each negotiates its own version,
// runs commands, waits with progress and sees the other's jobs, and the
// newer one's cancelled wait ends.
func TestHTTPServesBothProtocolVersionsAtOnce(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	h := startHTTP(t, srv, launchOptions{env: []string{"TMCP_AUDIT=" + audit}})
	progressed, opts := progressSignal()
	current := h.connectSpeaking(t, h.url, testToken, nil, currentProtocol, opts)
	legacy := h.connect(t, testToken, nil)
	for s, want := range map[*session]string{current: currentProtocol, legacy: legacyProtocol} {
		if got := s.cs.InitializeResult().ProtocolVersion; got != want {
			t.Fatalf("negotiated %s, want %s", got, want)
		}
	}
	if legacy.cs.ID() == "" || current.cs.ID() != "" {
		t.Errorf("session ids: %q for %s, %q for %s; want one only for the older", legacy.cs.ID(), legacyProtocol, current.cs.ID(), currentProtocol)
	}

	r := replyFields[jobOut](t, "run_command", current.call("run_command", map[string]any{"paneId": pane, "command": "echo from-2026; false"}))
	if text := paneText(t, "get_job", legacy.call("get_job", map[string]any{"jobId": r.JobID})); status(r.ExitStatus) != "1" || text != "from-2026" {
		t.Errorf("a 2026-07-28 client's job read by a 2025-11-25 session: status %s output %q, want 1 and from-2026", status(r.ExitStatus), text)
	}
	r = replyFields[jobOut](t, "run_command", legacy.call("run_command", map[string]any{"paneId": pane, "command": "echo from-2025", "detach": true}))
	if j := replyFields[jobOut](t, "get_job", current.call("get_job", map[string]any{"jobId": r.JobID, "timeoutSeconds": 10})); !j.Finished || status(j.ExitStatus) != "0" {
		t.Errorf("a 2025-11-25 session's job read by a 2026-07-28 client: %+v", j)
	}

	got := callWaiting(context.Background(), t, current, progressed, map[string]any{"paneId": pane, "patterns": []string{"ready-[0-9]+"}, "regex": true, "timeoutSeconds": 15})
	srv.Must("send-keys", "-t", pane, "echo ready-$((40+2))", "Enter")
	if res := <-got; res != nil {
		if w := replyFields[waitTextOut](t, "wait_for_text", res); w.Outcome != "matched" || w.Matched != "ready-42" {
			t.Errorf("wait_for_text over 2026-07-28: outcome %s matched %q, want matched ready-42", w.Outcome, w.Matched)
		}
	}

	// A wait the client cancels (it drops the request) ends in tmcp too.
	ctx, cancel := context.WithCancel(context.Background())
	waiting := startWait(ctx, t, current, progressed, pane)
	cancel()
	<-waiting
	awaitAuditLine(t, audit, func(l auditLine) bool { return l.Tool == "wait_for_text" && l.Outcome == "cancelled" })
	if tools := current.tools(); len(tools) == 0 || len(tools) != len(legacy.tools()) {
		t.Errorf("tools/list: %d tools over 2026-07-28, %d over 2025-11-25; want the same, and some", len(tools), len(legacy.tools()))
	}
}
