package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// serveEnv, set in a pane's environment, makes this test binary a small
// server of the readiness tests instead: "late ADDR" starts, waits a
// second and then serves 200 on ADDR; "die ADDR" starts, reads a line
// from its terminal and dies before listening.
const serveEnv = "TMCP_E2E_SERVE"

// serverStartDelay is how long the "late" server takes to listen.
const serverStartDelay = time.Second

func init() {
	spec := os.Getenv(serveEnv)
	if spec == "" {
		return
	}
	mode, addr, _ := strings.Cut(spec, " ")
	fmt.Println("starting on", addr)
	switch mode {
	case "late":
		time.Sleep(serverStartDelay)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Println("Error:", err)
			os.Exit(1)
		}
		fmt.Println("listening on", addr)
		_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "up") }))
	case "die":
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		fmt.Println("Error: the database is not there")
		os.Exit(3)
	}
	os.Exit(2)
}

// serverPane starts this binary as a server of mode on addr in a new
// window of srv, kept when it dies so that its last lines stay readable.
func serverPane(t *testing.T, srv *tmuxtest.Server, mode, addr string) string {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pane := newWindow(srv, fmt.Sprintf("%s='%s %s' exec %s", serveEnv, mode, addr, bin))
	srv.Must("set-option", "-p", "-t", pane, "remain-on-exit", "on")
	waitScreen(t, srv, pane, "the server starting", func(lines []string) bool {
		return strings.Contains(strings.Join(lines, "\n"), "starting on")
	})
	return pane
}

// freeAddr returns a loopback address nothing listens on: a port bound
// and let go a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// readyOut is wait_for_ready's reply.
type readyOut struct {
	Outcome        string  `json:"outcome"`
	Probe          string  `json:"probe"`
	Status         int     `json:"status"`
	Probes         int     `json:"probes"`
	Matched        string  `json:"matched"`
	Pattern        string  `json:"pattern"`
	Lines          int     `json:"lines"`
	ElapsedSeconds float64 `json:"elapsedSeconds"`
}

// ready calls wait_for_ready and returns its fields and its pane text.
func (s *session) ready(args map[string]any) (readyOut, string) {
	s.t.Helper()
	res := s.call("wait_for_ready", args)
	r := replyFields[readyOut](s.t, "wait_for_ready", res)
	return r, paneText(s.t, "wait_for_ready", res)
}

// statusServer serves 503 to its first busy requests and 200 after, and
// counts what it was asked.
type statusServer struct {
	*httptest.Server
	busy     int64
	requests atomic.Int64
	mu       sync.Mutex
	accept   []string // the Accept header of each request
}

func newStatusServer(t *testing.T, busy int64, tls bool) *statusServer {
	t.Helper()
	s := &statusServer{busy: busy}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.accept = append(s.accept, r.Header.Get("Accept"))
		s.mu.Unlock()
		if s.requests.Add(1) <= s.busy {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("X-Ready", "yes")
		fmt.Fprintln(w, "all systems go")
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused TLS handshakes
	if tls {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

func TestWaitForReadyWaitsForAServerThatListensLate(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	progress := &progressLog{watchers: map[any]func(){}}
	s := launch(t, srv, launchOptions{client: &mcp.ClientOptions{ProgressNotificationHandler: progress.handle}})
	addr := freeAddr(t)
	pane := serverPane(t, srv, "late", addr)

	// Called as a client that gives up after 2 s without progress: a
	// server that takes a second to listen is still waited for.
	var notes atomic.Int64
	params := &mcp.CallToolParams{Name: "wait_for_ready", Arguments: map[string]any{"target": "http://" + addr + "/", "paneId": pane,
		"stop": []string{"Error:"}, "timeoutSeconds": 20}}
	params.SetProgressToken("late")
	progress.watch("late", func() { notes.Add(1) })
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := s.cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	r := replyFields[readyOut](t, "wait_for_ready", res)
	if r.Outcome != "ready" || r.Status != 200 || r.Probe != "status 200" {
		t.Fatalf("wait_for_ready on %s = %+v, want ready with status 200", addr, r)
	}
	if r.ElapsedSeconds >= 1 && notes.Load() == 0 {
		t.Errorf("a wait of %gs sent no progress notification", r.ElapsedSeconds)
	}
	if !strings.Contains(strings.Join(bareCapture(srv, pane), "\n"), "listening on") {
		t.Errorf("the server's pane does not say it listens:\n%s", strings.Join(bareCapture(srv, pane), "\n"))
	}

	// A port, as a TCP probe; and one where nothing listens.
	_, port, _ := net.SplitHostPort(addr)
	if r, _ := s.ready(map[string]any{"target": "127.0.0.1:" + port}); r.Outcome != "ready" || r.Probe != "accepting connections" {
		t.Errorf("wait_for_ready on port %s = %+v, want ready, accepting connections", port, r)
	}
	if r, _ := s.ready(map[string]any{"target": "tcp://" + freeAddr(t), "timeoutSeconds": 1}); r.Outcome != "timeout" || r.Probe != "connection refused" {
		t.Errorf("wait_for_ready on a closed port = %+v, want timeout, connection refused", r)
	}
}

func TestWaitForReadyEndsAtOnceWhenTheServersPaneDies(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	progress := &progressLog{watchers: map[any]func(){}}
	s := launch(t, srv, launchOptions{client: &mcp.ClientOptions{ProgressNotificationHandler: progress.handle}})
	addr := freeAddr(t)
	pane := serverPane(t, srv, "die", addr)

	// The server dies once the wait is seen waiting: at its first progress.
	var once sync.Once
	progress.watch("die", func() { once.Do(func() { _, _ = srv.Tmux("send-keys", "-t", pane, "Enter") }) })
	params := &mcp.CallToolParams{Name: "wait_for_ready", Arguments: map[string]any{"target": "http://" + addr + "/", "paneId": pane, "timeoutSeconds": 15}}
	params.SetProgressToken("die")
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := s.cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	r := replyFields[readyOut](t, "wait_for_ready", res)
	text := paneText(t, "wait_for_ready", res)
	if r.Outcome != "pane_died" || r.Probe != "connection refused" || !strings.Contains(text, "the database is not there") {
		t.Fatalf("wait_for_ready while its server died = %+v, text %q; want pane_died, connection refused, and the server's last lines", r, text)
	}
}

func TestWaitForReadyStopsOnAStopLine(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	progress := &progressLog{watchers: map[any]func(){}}
	s := launch(t, srv, launchOptions{client: &mcp.ClientOptions{ProgressNotificationHandler: progress.handle}})
	pane := newShellWindow(t, srv)

	// Typed once the wait is seen waiting; the echo of the typed line is
	// not output, the line it prints is.
	var once sync.Once
	progress.watch("stop", func() {
		once.Do(func() { _, _ = srv.Tmux("send-keys", "-t", pane, "echo 'listen EADDR''INUSE'", "Enter") })
	})
	params := &mcp.CallToolParams{Name: "wait_for_ready", Arguments: map[string]any{"target": freeAddr(t), "paneId": pane,
		"stop": []string{"EADDRINUSE"}, "timeoutSeconds": 15}}
	params.SetProgressToken("stop")
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := s.cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	r := replyFields[readyOut](t, "wait_for_ready", res)
	text := paneText(t, "wait_for_ready", res)
	if r.Outcome != "stopped" || r.Pattern != "EADDRINUSE" || !strings.Contains(text, "listen EADDRINUSE") {
		t.Fatalf("wait_for_ready with a stop line = %+v, text %q; want stopped by EADDRINUSE", r, text)
	}
}

// TestWaitForReadyIsOfferedByDefault: at every tier, with nothing set.
func TestWaitForReadyIsOfferedByDefault(t *testing.T) {
	srv := tmuxtest.New(t)
	for _, tier := range []string{"readonly", ""} {
		if !slices.Contains(startTMCP(t, srv, tier).toolNames(), "wait_for_ready") {
			t.Errorf("wait_for_ready not offered at tier %q", tier)
		}
	}
}

func TestWaitForReadyJudgesStatusHeaderBodyAndTLS(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	busy := newStatusServer(t, 3, false)
	if r, _ := s.ready(map[string]any{"target": busy.URL + "/health", "header": "X-Ready: yes", "body": "systems go", "timeoutSeconds": 15}); r.Outcome != "ready" || r.Probe != "status 200" || r.Probes < 4 {
		t.Errorf("wait_for_ready on a server answering 503 three times = %+v, want ready on status 200 after 4 probes or more", r)
	}
	always := newStatusServer(t, 1<<40, false)
	if r, _ := s.ready(map[string]any{"target": always.URL, "timeoutSeconds": 1}); r.Outcome != "timeout" || r.Probe != "status 503" {
		t.Errorf("wait_for_ready on a server answering 503 = %+v, want timeout, status 503", r)
	}
	if r, _ := s.ready(map[string]any{"target": always.URL, "status": "503", "timeoutSeconds": 5}); r.Outcome != "ready" {
		t.Errorf("wait_for_ready for status 503 = %+v, want ready", r)
	}
	if msg := s.fail("wait_for_ready", map[string]any{"target": always.URL, "status": "ok"}); !strings.Contains(msg, "200-399") {
		t.Errorf("a bad status set: %q, want it to say what a status set looks like", msg)
	}

	secure := newStatusServer(t, 0, true)
	r, _ := s.ready(map[string]any{"target": secure.URL, "timeoutSeconds": 1})
	if r.Outcome != "timeout" || !strings.Contains(r.Probe, "certificate signed by unknown authority") {
		t.Errorf("wait_for_ready on a self-signed certificate = %+v, want timeout naming the certificate's problem", r)
	}
	if r, _ := s.ready(map[string]any{"target": secure.URL, "insecure": true, "timeoutSeconds": 5}); r.Outcome != "ready" {
		t.Errorf("wait_for_ready on a self-signed certificate with insecure = %+v, want ready", r)
	}
}

func TestWaitForReadyProbesFromARemoteHost(t *testing.T) {
	t.Parallel()
	f := newRemoteFixture(t)
	s := f.s
	plain := newStatusServer(t, 2, false)
	r, _ := s.ready(map[string]any{"host": "far", "target": plain.URL, "timeoutSeconds": 15})
	if r.Outcome != "ready" || r.Probe != "status 200" {
		t.Fatalf("wait_for_ready on far = %+v, want ready with status 200", r)
	}
	// curl on the far side asked, not tmcp's Go client (which sends no Accept).
	plain.mu.Lock()
	accept := plain.accept
	plain.mu.Unlock()
	if len(accept) == 0 {
		t.Fatal("the remote probe's requests never reached the server")
	}
	for _, a := range accept {
		if a != "*/*" {
			t.Errorf("a request of the remote probe had Accept %q, want curl's */*: it did not come from the far side", a)
		}
	}

	secure := newStatusServer(t, 0, true)
	if r, _ := s.ready(map[string]any{"host": "far", "target": secure.URL, "timeoutSeconds": 2}); r.Outcome != "timeout" || !strings.Contains(r.Probe, "certificate") {
		t.Errorf("wait_for_ready on far of a self-signed certificate = %+v, want timeout naming the certificate's problem", r)
	}
	if r, _ := s.ready(map[string]any{"host": "far", "target": secure.URL, "insecure": true, "timeoutSeconds": 10}); r.Outcome != "ready" {
		t.Errorf("wait_for_ready on far with insecure = %+v, want ready", r)
	}
	if r, _ := s.ready(map[string]any{"host": "far", "target": freeAddr(t), "timeoutSeconds": 2}); r.Outcome != "timeout" || r.Probe != "connection refused" {
		t.Errorf("wait_for_ready on far of a closed port = %+v, want timeout, connection refused", r)
	}

	// A server in a pane of far, waited on with its pane.
	addr := freeAddr(t)
	pane := serverPane(t, f.far, "late", addr)
	_, port, _ := net.SplitHostPort(addr)
	r, _ = s.ready(map[string]any{"paneId": "far:" + pane, "target": port, "stop": []string{"Error:"}, "timeoutSeconds": 15})
	if r.Outcome != "ready" || r.Probe != "accepting connections" {
		t.Errorf("wait_for_ready on far's pane %s, port %s = %+v, want ready", pane, port, r)
	}
	died := serverPane(t, f.far, "die", freeAddr(t))
	f.far.Must("send-keys", "-t", died, "Enter")
	waitPane(t, f.far, died, "#{pane_dead}", "1")
	if msg := s.fail("wait_for_ready", map[string]any{"paneId": "far:" + died, "target": "1"}); !strings.Contains(msg, "dead") {
		t.Errorf("wait_for_ready on a dead pane of far: %q, want it refused as dead", msg)
	}
}
