package main

// Helpers for the end-to-end tests (e2e_*_test.go): the tmcp binary built
// once per run, an MCP client speaking to it over stdio, and small readers
// of tmux's and the kernel's view of what happened.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/syncbuf"
	"github.com/tmcp/tmcp/internal/tmuxserver"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// tmcpBinary is the tmcp executable TestMain builds for the whole run.
var tmcpBinary string

const (
	// connectTimeout bounds the MCP handshake with a fresh tmcp.
	connectTimeout = 15 * time.Second
	// callTimeout bounds one tool call from the test's side; tmcp's own
	// per-command deadline (5 s) is well inside it.
	callTimeout = 20 * time.Second
	// settle is how long a test waits for tmux to reach a state it polls for.
	settle = 5 * time.Second
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tmcp-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: making a directory for the binary:", err)
		os.Exit(1)
	}
	tmcpBinary = filepath.Join(dir, "tmcp")
	build := exec.Command("go", "build", "-o", tmcpBinary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building tmcp:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// session is one running tmcp process and the MCP client connected to it.
type session struct {
	t      *testing.T
	srv    *tmuxtest.Server
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	stderr *syncbuf.Buffer
	stdin  io.WriteCloser // tmcp's stdin, when the test holds it
}

// on returns the session reporting to t, for use in a subtest.
func (s *session) on(t *testing.T) *session {
	c := *s
	c.t = t
	return &c
}

// launchOptions say how a test starts tmcp; the zero value starts it
// plainly, with TMCP_SAFETY unset.
type launchOptions struct {
	tier string   // TMCP_SAFETY, unset when empty
	env  []string // more NAME=value pairs for tmcp's environment
	args []string // more command-line arguments
	// ownStdin has the test hold tmcp's stdin (session.stdin), so it can
	// close it at a moment of its choosing: the SDK client's Close waits
	// for the client's own calls in flight before it closes stdin, which
	// hides how tmcp reacts to EOF during a call.
	ownStdin bool
	client   *mcp.ClientOptions        // for notification handlers
	session  *mcp.ClientSessionOptions // for the protocol version asked for
	// wrap, when not nil, wraps the command transport.
	wrap func(mcp.Transport) mcp.Transport
}

// startTMCP starts tmcp against srv with TMCP_SAFETY=tier (unset when tier
// is empty) and connects an MCP client to it.
func startTMCP(t *testing.T, srv *tmuxtest.Server, tier string, args ...string) *session {
	t.Helper()
	return launch(t, srv, launchOptions{tier: tier, args: args})
}

// startTMCPWithEnv is startTMCP with extra environment variables.
func startTMCPWithEnv(t *testing.T, srv *tmuxtest.Server, tier string, env []string, args ...string) *session {
	t.Helper()
	return launch(t, srv, launchOptions{tier: tier, env: env, args: args})
}

// startTMCPOwningStdin is startTMCP with the test holding tmcp's stdin.
func startTMCPOwningStdin(t *testing.T, srv *tmuxtest.Server, tier string, args ...string) *session {
	t.Helper()
	return launch(t, srv, launchOptions{tier: tier, args: args, ownStdin: true})
}

// startTMCPWith is startTMCP with a client made with opts, over the
// command transport wrapped by wrap when it is not nil.
func startTMCPWith(t *testing.T, srv *tmuxtest.Server, opts *mcp.ClientOptions, wrap func(mcp.Transport) mcp.Transport) *session {
	t.Helper()
	return launch(t, srv, launchOptions{client: opts, wrap: wrap})
}

// startTMCPSpeaking is startTMCP with a client made with opts that asks
// for the given protocol version.
func startTMCPSpeaking(t *testing.T, srv *tmuxtest.Server, version string, opts *mcp.ClientOptions) *session {
	t.Helper()
	return launch(t, srv, launchOptions{client: opts, session: &mcp.ClientSessionOptions{ProtocolVersion: version}})
}

// launch starts tmcp against srv as o says and connects an MCP client to
// it. The client is closed, and tmcp with it, when the test ends.
func launch(t *testing.T, srv *tmuxtest.Server, o launchOptions) *session {
	t.Helper()
	cmd := tmcpCommand(srv, o)
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "tmcp-e2e", Version: "test"}, o.client)
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	var transport mcp.Transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}
	var stdin io.WriteCloser
	if o.ownStdin {
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting tmcp: %v", err)
		}
		stdin = in
		transport = &mcp.IOTransport{Reader: out, Writer: in}
	}
	if o.wrap != nil {
		transport = o.wrap(transport)
	}
	cs, err := client.Connect(ctx, transport, o.session)
	if err != nil {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
		t.Fatalf("connecting to tmcp (TMCP_SAFETY=%q): %v; stderr: %s", o.tier, err, stderr.String())
	}
	s := &session{t: t, srv: srv, cmd: cmd, cs: cs, stderr: stderr, stdin: stdin}
	t.Cleanup(func() {
		_ = cs.Close()
		if o.ownStdin {
			// Nobody else reaps this process.
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}
		if t.Failed() {
			if e := stderr.String(); e != "" {
				t.Logf("tmcp stderr:\n%s", e)
			}
		}
	})
	return s
}

// tmcpCommand is the command that starts tmcp against srv with o's tier,
// environment and arguments.
func tmcpCommand(srv *tmuxtest.Server, o launchOptions) *exec.Cmd {
	cmd := exec.Command(tmcpBinary, append([]string{"-socket-path", srv.Socket}, o.args...)...)
	var env []string
	for _, kv := range srv.Env() {
		if !strings.HasPrefix(kv, "TMCP_") {
			env = append(env, kv)
		}
	}
	// Jobs are kept beside the test's tmux server, not in the home.
	env = append(env, "XDG_STATE_HOME="+filepath.Join(srv.Dir, "state"))
	if o.tier != "" {
		env = append(env, "TMCP_SAFETY="+o.tier)
	}
	cmd.Env = append(env, o.env...)
	return cmd
}

// pid returns the tmcp process id.
func (s *session) pid() int { return s.cmd.Process.Pid }

// call makes one tool call; a protocol error fails the test.
func (s *session) call(name string, args map[string]any) *mcp.CallToolResult {
	s.t.Helper()
	res, err := s.callErr(name, args)
	if err != nil {
		s.t.Fatalf("%s %v: protocol error: %v", name, args, err)
	}
	return res
}

// callErr makes one tool call and returns the protocol error, if any.
func (s *session) callErr(name string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	return s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// ok makes a call that must succeed and decodes its structuredContent into
// out (when out is not nil).
func (s *session) ok(name string, args map[string]any, out any) *mcp.CallToolResult {
	s.t.Helper()
	res := s.call(name, args)
	if res.IsError {
		s.t.Fatalf("%s %v failed: %s", name, args, allText(res))
	}
	if out != nil {
		decodeStructured(s.t, name, res, out)
	}
	return res
}

// fail makes a call that must fail as a tool error and returns its message.
func (s *session) fail(name string, args map[string]any) string {
	s.t.Helper()
	res := s.call(name, args)
	if !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		s.t.Fatalf("%s %v succeeded, want a tool error; got %s / %s", name, args, b, allText(res))
	}
	return allText(res)
}

// tools lists the tools tmcp advertises, with their definitions.
func (s *session) tools() []*mcp.Tool {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		s.t.Fatalf("tools/list: %v", err)
	}
	return res.Tools
}

// toolNames lists the names of the tools tmcp advertises, sorted.
func (s *session) toolNames() []string {
	s.t.Helper()
	var names []string
	for _, tool := range s.tools() {
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	return names
}

// tool returns an advertised tool's definition, failing the test when it
// is not advertised.
func (s *session) tool(name string) *mcp.Tool {
	s.t.Helper()
	for _, tool := range s.tools() {
		if tool.Name == name {
			return tool
		}
	}
	s.t.Fatalf("%s is not advertised", name)
	return nil
}

// allTools lists every tool tmcp has, with its definition: the destructive
// tier offers all.
func allTools(t *testing.T) []*mcp.Tool {
	t.Helper()
	return startTMCP(t, tmuxtest.New(t), "destructive").tools()
}

// decodeStructured reads a result's structuredContent into out.
func decodeStructured(t *testing.T, name string, res *mcp.CallToolResult, out any) {
	t.Helper()
	if res.StructuredContent == nil {
		t.Fatalf("%s: reply has no structuredContent; content: %s", name, allText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("%s: re-encoding structuredContent: %v", name, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: decoding structuredContent %s: %v", name, b, err)
	}
}

// allText joins every text block of a result.
func allText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// paneText checks the shape of a text-bearing reply — two text blocks, the
// first the compact JSON of the fields (structuredContent less the pane
// text it holds), the second the pane text, fenced — and returns the pane
// text.
func paneText(t *testing.T, name string, res *mcp.CallToolResult) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s failed: %s", name, allText(res))
	}
	if len(res.Content) != 2 {
		t.Fatalf("%s: %d content blocks, want 2 (fields, text): %s", name, len(res.Content), allText(res))
	}
	meta, ok0 := res.Content[0].(*mcp.TextContent)
	text, ok1 := res.Content[1].(*mcp.TextContent)
	if !ok0 || !ok1 {
		t.Fatalf("%s: content blocks are %T and %T, want two text blocks", name, res.Content[0], res.Content[1])
	}
	checkFieldsBlock(t, name, res, meta)
	inside := unfenced(t, name, text.Text)
	if len(inside) >= 16 && strings.Contains(meta.Text, inside) {
		t.Errorf("%s: the pane text is sent twice (also inside the fields block)", name)
	}
	return inside
}

// fenceOpening is the first line of fenced pane text; its token is 16
// base32 characters.
var fenceOpening = regexp.MustCompile(`\A<pane-text ([A-Z2-7]{16})>\n`)

// unfenced checks that a text block is pane text as tmcp fences it — an
// opening line with a token, the text, a closing line with the same token,
// and a token the text does not hold — and returns the text. An empty
// block holds no pane text and has no fence.
func unfenced(t *testing.T, name, block string) string {
	t.Helper()
	if block == "" {
		return ""
	}
	m := fenceOpening.FindStringSubmatch(block)
	if m == nil {
		t.Fatalf("%s: the pane text does not open with a <pane-text TOKEN> line: %q", name, block)
	}
	closing := "\n</pane-text " + m[1] + ">"
	inside, ok := strings.CutSuffix(block[len(m[0]):], closing)
	switch {
	case !ok:
		t.Fatalf("%s: the pane text does not close with %q: %q", name, closing[1:], block)
	case strings.Contains(inside, m[1]):
		t.Fatalf("%s: the fence's token %s occurs in the text it fences: %q", name, m[1], block)
	}
	return inside
}

// withoutPaneText removes from decoded structuredContent the fields that
// hold pane text and that a fields block leaves to the fenced text:
// matched (wait_for_text, and each of its panes) and each match's lines
// (search_panes).
func withoutPaneText(fields map[string]any) {
	if _, ok := fields["matched"].(string); ok {
		delete(fields, "matched")
	}
	for key, inner := range map[string]string{"panes": "matched", "matches": "lines"} {
		list, _ := fields[key].([]any)
		for _, item := range list {
			if m, ok := item.(map[string]any); ok {
				delete(m, inner)
			}
		}
	}
}

// checkFieldsBlock checks the text block that carries a reply's fields:
// compact JSON, equal to its structuredContent less the fields that hold
// pane text, but for capture_since's partial line, which it fences.
func checkFieldsBlock(t *testing.T, name string, res *mcp.CallToolResult, block *mcp.TextContent) {
	t.Helper()
	if strings.Contains(block.Text, "\n") {
		t.Errorf("%s: the fields block is not compact JSON: %q", name, block.Text)
	}
	var fromBlock, fromStructured map[string]any
	if err := json.Unmarshal([]byte(block.Text), &fromBlock); err != nil {
		t.Fatalf("%s: the fields block is not JSON: %q: %v", name, block.Text, err)
	}
	decodeStructured(t, name, res, &fromStructured)
	withoutPaneText(fromStructured)
	if partial, ok := fromBlock["partial"].(string); ok {
		fromBlock["partial"] = unfenced(t, name+" (partial)", partial)
	}
	if !reflect.DeepEqual(fromBlock, fromStructured) {
		t.Errorf("%s: the fields block %v differs from structuredContent %v", name, fromBlock, fromStructured)
	}
}

// tmuxOne runs a bare tmux command whose answer is one line and returns it.
func tmuxOne(srv *tmuxtest.Server, args ...string) string {
	return strings.TrimRight(srv.Must(args...), "\n")
}

// paneFormat expands a format for a pane with bare tmux.
func paneFormat(srv *tmuxtest.Server, pane, format string) string {
	return tmuxOne(srv, "display-message", "-p", "-t", pane, format)
}

// waitPane polls a pane's format until it equals want, failing the test
// after settle.
func waitPane(t *testing.T, srv *tmuxtest.Server, pane, format, want string) {
	t.Helper()
	var got string
	if !tmuxtest.WaitFor(settle, func() bool {
		out, err := srv.Tmux("display-message", "-p", "-t", pane, format)
		got = strings.TrimRight(out, "\n")
		return err == nil && got == want
	}) {
		t.Fatalf("pane %s: %s is %q, want %q", pane, format, got, want)
	}
}

// waitScreen polls a pane's visible screen until cond holds on its lines.
func waitScreen(t *testing.T, srv *tmuxtest.Server, pane, what string, cond func([]string) bool) {
	t.Helper()
	waitScreenFor(t, srv, pane, settle, what, cond)
}

// hasLine reports whether lines hold exactly line.
func hasLine(lines []string, line string) bool {
	for _, l := range lines {
		if strings.TrimRight(l, " ") == line {
			return true
		}
	}
	return false
}

// newWindow makes a window in session main running command and returns
// its pane id.
func newWindow(srv *tmuxtest.Server, command string, extra ...string) string {
	args := append([]string{"new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "=main:"}, extra...)
	return tmuxOne(srv, append(args, command)...)
}

// waitFile polls until the file holds want, failing the test after settle.
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	var got []byte
	if !tmuxtest.WaitFor(settle, func() bool {
		got, _ = os.ReadFile(path)
		return string(got) == want
	}) {
		t.Fatalf("%s holds %q, want %q", path, got, want)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// children returns the ids of a process's children, sorted; none when it
// is gone.
func children(pid int) []int {
	kids, _ := tmuxserver.Children(pid)
	return kids
}

// newChildren returns pid's children not in known, with their command
// lines.
func newChildren(pid int, known []int) map[int]string {
	out := map[int]string{}
	for _, c := range children(pid) {
		if !slices.Contains(known, c) {
			out[c] = cmdline(c)
		}
	}
	return out
}

// childrenDuring runs f while reading pid's children as often as it can,
// and returns every child not in known seen meanwhile, with the command
// line it had when first seen. A tmux command process lives for
// milliseconds: many samples.
func childrenDuring(pid int, known []int, f func()) map[int]string {
	seen := map[int]string{}
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			for c, cl := range newChildren(pid, known) {
				if _, ok := seen[c]; !ok {
					seen[c] = cl
				}
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	func() {
		defer func() { close(stop); <-sampled }() // also when f fails the test
		f()
	}()
	return seen
}

// descendants returns children, their children and so on.
func descendants(pid int) []int {
	var out []int
	for _, c := range children(pid) {
		out = append(out, c)
		out = append(out, descendants(c)...)
	}
	return out
}

// procStat returns the fields of a process's /proc stat after its name:
// state, ppid, pgrp, session, tty_nr, tpgid… (nil when gone).
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// procState returns a process's state letter from /proc ("" when gone).
func procState(pid int) string {
	if f := procStat(pid); len(f) > 0 {
		return f[0]
	}
	return ""
}

// ended reports whether a process has exited (gone, or a zombie nobody
// has reaped yet).
func ended(pid int) bool {
	st := procState(pid)
	return st == "" || st == "Z" || st == "X"
}

// cmdline returns a process's argv joined by spaces.
func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// attachClient attaches a control-mode client of the test's own to a
// session, as a user's terminal would be, and detaches it when the test
// ends. It returns the client's stdin, for commands.
func attachClient(t *testing.T, srv *tmuxtest.Server, session string) io.Writer {
	t.Helper()
	cmd := exec.Command("tmux", "-S", srv.Socket, "-C", "attach-session", "-f", "ignore-size,no-output", "-t", "="+session)
	cmd.Env = srv.Env()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("attaching a client to %s: %v", session, err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	if !tmuxtest.WaitFor(settle, func() bool {
		out, _ := srv.Tmux("list-clients", "-t", "="+session, "-F", "#{client_pid}")
		return strings.Contains(out, strconv.Itoa(cmd.Process.Pid))
	}) {
		t.Fatalf("the test's client never attached to %s", session)
	}
	return stdin
}

// trimBlank drops empty rows at the bottom of a capture.
func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// bareCapture captures a pane with bare tmux, trailing blank rows dropped.
func bareCapture(srv *tmuxtest.Server, pane string, args ...string) []string {
	out := srv.Must(append([]string{"capture-pane", "-p", "-J", "-t", pane}, args...)...)
	return trimBlank(strings.Split(strings.TrimSuffix(out, "\n"), "\n"))
}

// waitScreenFor is waitScreen with its own time limit.
func waitScreenFor(t *testing.T, srv *tmuxtest.Server, pane string, d time.Duration, what string, cond func([]string) bool) {
	t.Helper()
	var lines []string
	if !tmuxtest.WaitFor(d, func() bool {
		out, err := srv.Tmux("capture-pane", "-p", "-J", "-t", pane)
		lines = strings.Split(strings.TrimRight(out, "\n"), "\n")
		return err == nil && cond(lines)
	}) {
		t.Fatalf("pane %s never showed %s; screen:\n%s", pane, what, strings.Join(lines, "\n"))
	}
}

// mainPane returns the id of the active pane of session main.
func mainPane(srv *tmuxtest.Server) string {
	return paneFormat(srv, "=main:", "#{pane_id}")
}

// sessionNames lists the sessions with bare tmux.
func sessionNames(srv *tmuxtest.Server) []string {
	return strings.Split(tmuxOne(srv, "list-sessions", "-F", "#{session_name}"), "\n")
}

// status shows an exit status for a message: "absent" when there is none.
func status(p *int) string {
	if p == nil {
		return "absent"
	}
	return strconv.Itoa(*p)
}

// tmuxWrapper writes a script that logs each tmux invocation to a file and
// then becomes the real tmux, and returns the script and the log.
func tmuxWrapper(t *testing.T) (script, log string) {
	t.Helper()
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script, log = filepath.Join(dir, "tmux"), filepath.Join(dir, "invocations")
	body := fmt.Sprintf("#!/bin/sh\necho \"$*\" >> '%s'\nexec '%s' \"$@\"\n", log, real)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, log
}

// invocations returns the tmux command lines tmuxWrapper has logged.
func invocations(log string) []string {
	b, _ := os.ReadFile(log)
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// shellPane returns the main pane once its shell shows a prompt.
func shellPane(t *testing.T, srv *tmuxtest.Server) string {
	t.Helper()
	pane := mainPane(srv)
	waitPrompt(t, srv, pane)
	return pane
}

// shellPaneRunning returns the fixture's shell pane when command is empty,
// else a new window running command, once its shell shows its prompt.
func shellPaneRunning(t *testing.T, srv *tmuxtest.Server, command string) string {
	t.Helper()
	if command == "" {
		return shellPane(t, srv)
	}
	pane := newWindow(srv, command)
	waitPrompt(t, srv, pane)
	return pane
}

// newShellWindow makes a window running sh and waits for its prompt.
func newShellWindow(t *testing.T, srv *tmuxtest.Server) string {
	t.Helper()
	pane := newWindow(srv, "sh")
	waitPrompt(t, srv, pane)
	return pane
}

// waitPrompt waits until the last row of a pane is the shell's prompt.
func waitPrompt(t *testing.T, srv *tmuxtest.Server, pane string) {
	t.Helper()
	waitScreen(t, srv, pane, "a shell prompt on its last row", func(lines []string) bool {
		lines = trimBlank(lines)
		if len(lines) == 0 {
			return false
		}
		// The prompt may follow output that ended without a newline.
		last := strings.TrimRight(lines[len(lines)-1], " ")
		return strings.HasSuffix(last, "#") || strings.HasSuffix(last, "$")
	})
}
