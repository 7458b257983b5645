package main

// End-to-end tests of the waiting tools (run_command, get_job,
// wait_for_text, wait_for_channel, signal_channel, capture_since): the real
// tmcp binary over stdio against a private tmux server per test, panes
// running sh. Output that must arrive at a chosen moment is written by the
// test straight to the pane's terminal.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	panes "github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// What the waiting tools report, as the wire carries it.

type waitTiming struct {
	ElapsedSeconds          float64 `json:"elapsedSeconds"`
	EffectiveTimeoutSeconds float64 `json:"effectiveTimeoutSeconds"`
	TimeoutClamped          bool    `json:"timeoutClamped"`
}

type truncation struct {
	Truncated    bool `json:"truncated"`
	DroppedLines int  `json:"droppedLines"`
	DroppedBytes int  `json:"droppedBytes"`
}

type jobOut struct {
	JobID      string `json:"jobId"`
	PaneID     string `json:"paneId"`
	Finished   bool   `json:"finished"`
	Running    bool   `json:"running"`
	TimedOut   bool   `json:"timedOut"`
	ExitStatus *int   `json:"exitStatus"`
	PaneDied   bool   `json:"paneDied"`
	Reason     string `json:"reason"`
	TotalLines int    `json:"totalLines"`
	TotalBytes int    `json:"totalBytes"`
	OutputLost bool   `json:"outputLost"`
	Lines      int    `json:"lines"`
	truncation
	waitTiming
}

type waitTextOut struct {
	Outcome         string `json:"outcome"`
	Matched         string `json:"matched"`
	Pattern         string `json:"pattern"`
	Cursor          string `json:"cursor"`
	AlreadyOnScreen bool   `json:"alreadyOnScreen"`
	AlternateScreen bool   `json:"alternateScreen"`
	CursorReset     bool   `json:"cursorReset"`
	Reason          string `json:"reason"`
	Lines           int    `json:"lines"`
	ScreenLines     int    `json:"screenLines"`
	truncation
	waitTiming
}

type channelWaitOut struct {
	Outcome   string   `json:"outcome"`
	Signalled []string `json:"signalled"`
	waitTiming
}

type signalledOut struct {
	Signalled string `json:"signalled"`
}

type sinceOut struct {
	Cursor          string `json:"cursor"`
	Lines           int    `json:"lines"`
	Partial         string `json:"partial"`
	ScreenLines     int    `json:"screenLines"`
	MissedBytes     int64  `json:"missedBytes"`
	Reset           bool   `json:"reset"`
	Reason          string `json:"reason"`
	AlternateScreen bool   `json:"alternateScreen"`
	truncation
}

// screenMark separates a wait's output tail from the screen in its text.
const screenMark = "--- screen ---"

// runCmd calls run_command, which must succeed, and returns its fields and
// its output text.
func (s *session) runCmd(args map[string]any) (jobOut, string) {
	s.t.Helper()
	return decodeText[jobOut](s.t, "run_command", s.call("run_command", args))
}

// getJob calls get_job, which must succeed.
func (s *session) getJob(args map[string]any) (jobOut, string) {
	s.t.Helper()
	return decodeText[jobOut](s.t, "get_job", s.call("get_job", args))
}

// waitText calls wait_for_text, which must succeed.
func (s *session) waitText(args map[string]any) (waitTextOut, string) {
	s.t.Helper()
	return decodeText[waitTextOut](s.t, "wait_for_text", s.call("wait_for_text", args))
}

// since calls capture_since, which must succeed.
func (s *session) since(args map[string]any) (sinceOut, string) {
	s.t.Helper()
	return decodeText[sinceOut](s.t, "capture_since", s.call("capture_since", args))
}

// decodeText checks a text-bearing reply (two text blocks: the fields as
// compact JSON, then the text) and returns its fields and its text.
func decodeText[T any](t *testing.T, name string, res *mcp.CallToolResult) (T, string) {
	t.Helper()
	var out T
	text := paneText(t, name, res)
	decodeStructured(t, name, res, &out)
	return out, text
}

// decodeFields checks a reply that carries fields only (its one text block
// is their JSON) and returns them.
func decodeFields[T any](t *testing.T, name string, res *mcp.CallToolResult) T {
	t.Helper()
	var out T
	if res.IsError {
		t.Fatalf("%s failed: %s", name, allText(res))
	}
	decodeStructured(t, name, res, &out)
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks, want 1 (the fields): %s", name, len(res.Content), allText(res))
	}
	block, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content block is %T, want text", name, res.Content[0])
	}
	checkFieldsBlock(t, name, res, block)
	return out
}

// splitWaitText parses wait_for_text's text: the output tail (lines of
// it, as its fields say: an empty text may be one empty line), then, on a
// miss, the screen after a marker line.
func splitWaitText(text string, lines int) (tail, screen []string) {
	head, rest, found := strings.Cut(text, "\n"+screenMark+"\n")
	if head != "" || lines > 0 {
		tail = strings.Split(head, "\n")
	}
	if found {
		screen = strings.Split(rest, "\n")
	}
	return tail, screen
}

// checkWaitText checks that the counts in a wait's fields match its text,
// and that no escape sequence reached it.
func checkWaitText(t *testing.T, r waitTextOut, text string) (tail, screen []string) {
	t.Helper()
	tail, screen = splitWaitText(text, r.Lines)
	if len(tail) != r.Lines || len(screen) != r.ScreenLines {
		t.Errorf("wait_for_text: fields say %d tail lines and %d screen lines, text has %d and %d: %q", r.Lines, r.ScreenLines, len(tail), len(screen), text)
	}
	if strings.ContainsAny(text, "\x1b\r") {
		t.Errorf("wait_for_text text carries an escape or a carriage return: %q", text)
	}
	if strings.ContainsAny(r.Matched, "\x1b\r") {
		t.Errorf("wait_for_text matched carries an escape or a carriage return: %q", r.Matched)
	}
	return tail, screen
}

// callResult is one tool call made from a goroutine.
type callResult struct {
	res  *mcp.CallToolResult
	err  error
	took time.Duration
	at   time.Time // when the reply came
}

// async starts a tool call and returns where its result will arrive.
func (s *session) async(name string, args map[string]any) <-chan callResult {
	ch := make(chan callResult, 1)
	start := time.Now()
	go func() {
		res, err := s.callErr(name, args)
		ch <- callResult{res: res, err: err, took: time.Since(start), at: time.Now()}
	}()
	return ch
}

// awaitCall takes a call's result, failing the test on a protocol error.
func awaitCall(t *testing.T, name string, ch <-chan callResult) callResult {
	t.Helper()
	r := <-ch
	if r.err != nil {
		t.Fatalf("%s: protocol error after %v: %v", name, r.took, r.err)
	}
	return r
}

// waitFixture is where a wait test begins: a private tmux server whose
// main pane shows a shell prompt, and tmcp over stdio on it, its client
// noting each tools/call it writes.
type waitFixture struct {
	t    *testing.T
	srv  *tmuxtest.Server
	pane string // the main pane
	s    *session
	sent chan time.Time // a tools/call request was written to tmcp
	ttys map[string]*os.File
}

func newWaitFixture(t *testing.T) *waitFixture {
	t.Helper()
	srv := tmuxtest.New(t)
	f := &waitFixture{t: t, srv: srv, pane: shellPane(t, srv), sent: make(chan time.Time, 1), ttys: map[string]*os.File{}}
	f.s = startTMCPWith(t, srv, nil, func(tr mcp.Transport) mcp.Transport { return sentTransport{tr, f.sent} })
	return f
}

// tty returns a pane's terminal, open for writing (see openTTY).
func (f *waitFixture) tty(pane string) *os.File {
	f.t.Helper()
	if f.ttys[pane] == nil {
		f.ttys[pane] = openTTY(f.t, f.srv, pane)
	}
	return f.ttys[pane]
}

// forget drops the note of a call written earlier, so that underway
// waits for the next.
func (f *waitFixture) forget() {
	select {
	case <-f.sent:
	default:
	}
}

// begin starts a tool call and returns, once tmcp has begun it (see
// underway), where its result will arrive.
func (f *waitFixture) begin(name string, args map[string]any) <-chan callResult {
	f.t.Helper()
	f.forget()
	ch := f.s.async(name, args)
	pane, _ := args["paneId"].(string)
	f.underway(f.t, pane)
	return ch
}

// underway returns once tmcp has read the call just started and, for a
// pane, begun to watch it: what the pane writes from then on is output the
// wait must count. A wait counts from where the pane's stream stood when
// tmcp read the request or, on a pane not yet streamed, from the screen it
// read before attaching the stream. A ping answered after the request
// shows the request read; tmcp's client carrying pane output on the pane's
// session shows the stream attached, so the screen read. (Only while no
// other pane of that session is streamed, as in every test here.)
func (f *waitFixture) underway(t *testing.T, pane string) {
	t.Helper()
	select {
	case <-f.sent:
	case <-time.After(callTimeout):
		t.Fatalf("the tools/call request was never written")
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := f.s.cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping after a tools/call: %v", err)
	}
	if pane == "" {
		return
	}
	waitStreamClient(t, f.srv, pane)
}

// waitStreamClient waits until tmcp has attached a client carrying pane
// output (one attached with pause-after) to the session of pane.
func waitStreamClient(t *testing.T, srv *tmuxtest.Server, pane string) {
	t.Helper()
	session := paneFormat(srv, pane, "#{session_name}")
	var clients string
	if !tmuxtest.WaitFor(settle, func() bool {
		clients, _ = srv.Tmux("list-clients", "-F", "#{client_session} #{client_flags}")
		for _, c := range strings.Split(clients, "\n") {
			if name, flags, _ := strings.Cut(c, " "); name == session && strings.Contains(flags, tmux.OutputClientFlag) {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("tmcp never attached a client to stream pane %s of session %s; clients:\n%s", pane, session, clients)
	}
}

// waitWhileWriting calls wait_for_text with args, writes output to the
// terminal of the pane args name once the wait is underway, and returns
// the reply.
func (f *waitFixture) waitWhileWriting(args map[string]any, output string) (waitTextOut, string) {
	f.t.Helper()
	pane, _ := args["paneId"].(string)
	tty := f.tty(pane)
	ch := f.begin("wait_for_text", args)
	writeTTY(f.t, tty, output)
	return decodeText[waitTextOut](f.t, "wait_for_text", awaitCall(f.t, "wait_for_text", ch).res)
}

// openTTY opens a pane's terminal for writing: what the test writes there
// is the pane's output, at a moment the test chooses.
func openTTY(t *testing.T, srv *tmuxtest.Server, pane string) *os.File {
	t.Helper()
	path := paneFormat(srv, pane, "#{pane_tty}")
	tty, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("opening the terminal %s of pane %s: %v", path, pane, err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

// writeTTY writes s to a terminal in one write.
func writeTTY(t *testing.T, tty *os.File, s string) {
	t.Helper()
	if _, err := tty.WriteString(s); err != nil {
		t.Fatalf("writing %q to %s: %v", s, tty.Name(), err)
	}
}

func seqLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		if i > from {
			b.WriteByte('\n')
		}
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

func firstLast(text string) string {
	lines := strings.Split(text, "\n")
	return fmt.Sprintf("%d lines, %q … %q", len(lines), lines[0], lines[len(lines)-1])
}

// ---- run_command and get_job ----

// TestRunCommandReturnsTheRealExitStatusAndExactlyTheOutput runs commands
// of every shape — plain, failing, multi-line scripts and heredocs, tabs,
// control bytes, quotes — each at the prompt, and checks the status, the
// exact output and its counts.
func TestRunCommandReturnsTheRealExitStatusAndExactlyTheOutput(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, pane, s := f.srv, f.pane, f.s

	tests := []struct {
		name, command string
		status        int
		output        string
		shellsOwn     bool // the output is the shell's own message: only the status is exact
	}{
		{name: "one line", command: "echo hello", output: "hello"},
		{name: "nothing", command: "true"},
		{name: "failure", command: "false", status: 1},
		{name: "no trailing newline", command: "printf 'no newline'", output: "no newline"},
		{name: "an empty line inside", command: `printf 'a\n\nb\n'`, output: "a\n\nb"},
		{name: "stderr and a status", command: "echo out; echo err >&2; (exit 42)", status: 42, output: "out\nerr"},
		{name: "colour stripped", command: `printf '\033[31mred\033[0m plain\n'`, output: "red plain"},
		{name: "carriage return overwrites", command: `printf 'one\rtwo\n'`, output: "two"},
		{name: "a syntax error", command: "if then", status: 2, shellsOwn: true},

		{name: "a tab escape", command: `printf 'a\tb\n'`, output: "a\tb"},
		{name: "a raw tab", command: "printf '%s\\n' 'a\tb'", output: "a\tb"},
		{name: "C-c and C-d bytes", command: "echo 'x\x03y\x04z' | od -An -c | tr -s ' '", output: " x 003 y 004 z \\n"},
		{name: "C-d unquoted, as an argument", command: "echo before; : \x04; echo after", output: "before\nafter"},
		{name: "C-c alone", command: "echo '\x03' | od -An -c | tr -s ' '", output: " 003 \\n"},
		{name: "single and double quotes", command: `printf '%s|%s|%s\n' "a'b" 'c"d' "e\\f $((1+2))"`, output: `a'b|c"d|e\f 3`},
		{name: "nothing expanded in single quotes", command: `echo '$HOME ~ #{pane_id} #(true) ;' "semi;colon"`, output: `$HOME ~ #{pane_id} #(true) ; semi;colon`},
		{name: "a backslash at the end", command: `echo 'ends with \'`, output: `ends with \`},
		{name: "non-ASCII", command: "echo 'é ✓'", output: "é ✓"},

		{name: "a loop over lines", command: "for i in 1 2 3\ndo\n  echo line $i\ndone", output: "line 1\nline 2\nline 3"},
		{name: "a quoted heredoc", command: "cat <<'EOF'\n$HOME stays\n  indented \\ too\nEOF", output: "$HOME stays\n  indented \\ too"},
		{name: "an expanding heredoc", command: "x=42\ncat <<EOF\nx is $x\nEOF", output: "x is 42"},
		{name: "a function and a status", command: "f() {\n  echo in f\n  return 7\n}\nf", status: 7, output: "in f"},
		{name: "a blank line between", command: "echo one\n\necho two", output: "one\ntwo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := s.on(t)
			// At the prompt: a line typed before the shell draws its prompt
			// is TestRunCommandTypedAheadKeepsOutputThatMovesTheCursorExact.
			waitPrompt(t, srv, pane)
			r, text := s.runCmd(map[string]any{"paneId": pane, "command": tt.command, "timeoutSeconds": 15})
			if !r.Finished || r.Running || r.TimedOut || status(r.ExitStatus) != strconv.Itoa(tt.status) {
				t.Fatalf("run_command %q: finished %v running %v timedOut %v status %s (reason %q), want finished with %d",
					tt.command, r.Finished, r.Running, r.TimedOut, status(r.ExitStatus), r.Reason, tt.status)
			}
			if tt.shellsOwn {
				return
			}
			if text != tt.output {
				t.Errorf("run_command %q on %s: output %q, want exactly %q", tt.command, pane, text, tt.output)
			}
			wantLines := 0
			if tt.output != "" {
				wantLines = len(strings.Split(tt.output, "\n"))
			}
			if r.Lines != wantLines || r.TotalLines != wantLines || r.Truncated || r.PaneID != pane || r.JobID == "" {
				t.Errorf("run_command %q: %+v, want %d lines of %d, not truncated, pane %s, a jobId", tt.command, r, wantLines, wantLines, pane)
			}
		})
	}
	// None of it reached the line editor: the shell is still at its prompt.
	if got := paneFormat(srv, pane, "#{pane_dead} #{pane_current_command}"); got != "0 sh" {
		t.Errorf("after the runs pane %s is %q, want its shell alive (\"0 sh\")", pane, got)
	}
}

func TestRunCommandKeepsTheLastLinesOfOutputLongerThanHistory(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane, s := f.pane, f.s

	r, text := s.runCmd(map[string]any{"paneId": pane, "command": "seq 1 100000", "timeoutSeconds": 90})
	if !r.Finished || status(r.ExitStatus) != "0" {
		t.Fatalf("seq 1 100000: %+v, want finished with 0", r)
	}
	if r.TotalLines != 100000 || r.Lines != 500 || !r.Truncated || r.DroppedLines != 99500 || r.OutputLost {
		t.Errorf("seq 1 100000: totalLines %d lines %d truncated %v droppedLines %d outputLost %v, want 100000, 500, true, 99500, false",
			r.TotalLines, r.Lines, r.Truncated, r.DroppedLines, r.OutputLost)
	}
	if want := seqLines(99501, 100000); text != want {
		t.Errorf("seq 1 100000: output %s, want the last 500 lines 99501 … 100000", firstLast(text))
	}
	if want := len(seqLines(1, 100000)) + 1; r.TotalBytes != want {
		t.Errorf("seq 1 100000: totalBytes %d, want %d", r.TotalBytes, want)
	}

	// The job keeps more than the reply showed; get_job bounds it anew.
	j, jtext := s.getJob(map[string]any{"jobId": r.JobID, "maxLines": 10})
	if want := seqLines(99991, 100000); jtext != want || j.Lines != 10 || j.TotalLines != 100000 || !j.Truncated {
		t.Errorf("get_job maxLines 10: %+v, output %s, want the last 10 lines of 100000", j, firstLast(jtext))
	}
}

func TestRunCommandReturnsTheLastLinesWhenHistoryIsAlreadyFull(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	srv.Must("set-option", "-g", "history-limit", "100")
	pane := newShellWindow(t, srv)
	s := startTMCP(t, srv, "")

	srv.Must("send-keys", "-t", pane, "seq 1 3000", "Enter")
	waitScreen(t, srv, pane, "the end of seq 1 3000", func(l []string) bool { return hasLine(l, "3000") })
	waitPrompt(t, srv, pane)
	historyFull(t, srv, pane, 100)

	r, text := s.runCmd(map[string]any{"paneId": pane, "command": "seq 1 5000", "timeoutSeconds": 30})
	if !r.Finished || status(r.ExitStatus) != "0" {
		t.Fatalf("seq 1 5000 with history full: %+v, want finished with 0", r)
	}
	if want := seqLines(4501, 5000); text != want {
		t.Errorf("seq 1 5000 with history full: output %s, want the last 500 lines 4501 … 5000", firstLast(text))
	}
	if r.TotalLines != 5000 || r.Lines != 500 || !r.Truncated || r.DroppedLines != 4500 {
		t.Errorf("seq 1 5000 with history full: %+v, want totalLines 5000, lines 500, truncated, droppedLines 4500", r)
	}
}

func TestRunCommandExitReportsItsStatusAndTheShellSurvives(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, pane, s := f.srv, f.pane, f.s
	shellPID := paneFormat(srv, pane, "#{pane_pid}")

	r, text := s.runCmd(map[string]any{"paneId": pane, "command": "echo before; exit 3", "timeoutSeconds": 15})
	if !r.Finished || status(r.ExitStatus) != "3" || text != "before" {
		t.Fatalf("exit 3: %+v output %q, want status 3 and %q", r, text, "before")
	}
	if got := paneFormat(srv, pane, "#{pane_pid} #{pane_dead} #{pane_current_command}"); got != shellPID+" 0 sh" {
		t.Errorf("after exit 3 pane %s is %q, want its shell %s alive and in front (%q)", pane, got, shellPID, shellPID+" 0 sh")
	}
	r, text = s.runCmd(map[string]any{"paneId": pane, "command": "echo alive", "timeoutSeconds": 15})
	if status(r.ExitStatus) != "0" || text != "alive" {
		t.Errorf("a run after exit 3: %+v output %q, want 0 and %q", r, text, "alive")
	}
}

func TestRunCommandWorksTypedAheadIntoABrandNewPane(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	s := f.s

	// The call follows create_window at once, whatever the new shell is
	// doing yet (still tmux's fork, or its login profile running); several
	// panes, since that moment varies.
	for i := range 20 {
		var made createdOut
		s.ok("create_window", map[string]any{"sessionName": "main"}, &made)
		res := s.call("run_command", map[string]any{"paneId": made.PaneID, "command": "echo fresh", "timeoutSeconds": 15})
		if res.IsError {
			t.Errorf("run_command at once in new pane %d (%s): refused: %s", i, made.PaneID, allText(res))
			continue
		}
		r, text := decodeText[jobOut](t, "run_command", res)
		if !r.Finished || status(r.ExitStatus) != "0" || text != "fresh" {
			t.Errorf("run_command at once in new pane %d (%s): %+v output %q, want 0 and %q", i, made.PaneID, r, text, "fresh")
		}
	}
}

func TestRunCommandTypedAheadKeepsOutputThatMovesTheCursorExact(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, s := f.srv, f.s
	dir := t.TempDir()

	// A shell whose start-up is slow (here: its ENV file waits on a FIFO,
	// in the shell itself) is typed into ahead of its first prompt: the
	// typed line is echoed first, the prompt drawn after it, and the
	// command's output begins on the prompt's row.
	for i, tt := range []struct{ command, output string }{
		{`printf 'one\rtwo\n'`, "two"},
		{`printf 'abc\rX\n'`, "Xbc"},
		{`printf '\rstart\n'`, "start"},
	} {
		gate, env := filepath.Join(dir, fmt.Sprint("gate", i)), filepath.Join(dir, fmt.Sprint("env", i))
		if err := syscall.Mkfifo(gate, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(env, []byte("read go < "+gate+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		pane := newWindow(srv, "sh", "-e", "ENV="+env)
		ch := s.async("run_command", map[string]any{"paneId": pane, "command": tt.command, "timeoutSeconds": 15})
		waitScreen(t, srv, pane, "the typed line's echo", func(l []string) bool { return strings.Contains(strings.Join(l, "\n"), "stty -echo") })
		// Only now may the shell finish starting and draw its prompt.
		if err := os.WriteFile(gate, []byte("go\n"), 0); err != nil {
			t.Fatal(err)
		}
		r, text := decodeText[jobOut](t, "run_command", awaitCall(t, "run_command", ch).res)
		if status(r.ExitStatus) != "0" || text != tt.output {
			t.Errorf("run_command %q typed ahead of the first prompt of %s: status %s output %q, want 0 and exactly %q; screen %q",
				tt.command, pane, status(r.ExitStatus), text, tt.output, bareCapture(srv, pane))
		}
	}
}

func TestRunCommandLeavesOnlyOneTypedLineAndTheOutputOnScreen(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, pane, s := f.srv, f.pane, f.s
	srv.Must("send-keys", "-t", pane, `printf '\033[H\033[2J'`, "Enter")
	waitScreen(t, srv, pane, "a cleared screen", func(l []string) bool {
		l = trimBlank(l)
		return len(l) == 1 && strings.TrimSpace(l[0]) == "#"
	})

	s.runCmd(map[string]any{"paneId": pane, "command": "echo visible-output", "timeoutSeconds": 15})
	waitPrompt(t, srv, pane)
	screen := bareCapture(srv, pane)
	if len(screen) != 3 || !strings.HasPrefix(screen[0], "# ") || screen[1] != "visible-output" || strings.TrimSpace(screen[2]) != "#" {
		t.Errorf("screen after run_command: %q, want the one typed line, %q, and the prompt", screen, "visible-output")
	}
}

func TestRunCommandWithSuppressHistoryTypesALeadingSpace(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, pane, s := f.srv, f.pane, f.s

	// typedPrefix returns what precedes the last typed line on its row:
	// the prompt, and any space tmcp typed before the line.
	typedPrefix := func() string {
		t.Helper()
		waitPrompt(t, srv, pane)
		screen := bareCapture(srv, pane)
		// The typed line starts with the helper's call when the
		// command is typed as written, or its reading when handed over.
		for _, start := range []string{"(__tmcp ", "__tmcp_r "} {
			for i := len(screen) - 1; i >= 0; i-- {
				if k := strings.Index(screen[i], start); k >= 0 {
					return screen[i][:k]
				}
			}
		}
		t.Fatalf("no typed line on the screen of %s: %q", pane, screen)
		return ""
	}
	s.runCmd(map[string]any{"paneId": pane, "command": "true", "timeoutSeconds": 15})
	if got := typedPrefix(); got != "# " {
		t.Errorf("without suppressHistory the typed line follows %q, want the prompt %q", got, "# ")
	}
	r, _ := s.runCmd(map[string]any{"paneId": pane, "command": "true", "timeoutSeconds": 15, "suppressHistory": true})
	if status(r.ExitStatus) != "0" {
		t.Errorf("suppressHistory run: %+v, want status 0", r)
	}
	if got := typedPrefix(); got != "#  " {
		t.Errorf("with suppressHistory the typed line follows %q, want the prompt and one space %q", got, "#  ")
	}
}

func TestRunCommandRefusesASecondConcurrentCommandNamingTheFirstJob(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane, s := f.pane, f.s

	cmds := []string{"echo A-1; sleep 2; echo A-2", "echo B-1; sleep 2; echo B-2"}
	var chans []<-chan callResult
	for _, c := range cmds {
		chans = append(chans, s.async("run_command", map[string]any{"paneId": pane, "command": c, "timeoutSeconds": 20}))
	}
	results := []callResult{awaitCall(t, "run_command", chans[0]), awaitCall(t, "run_command", chans[1])}
	win, lose := 0, 1
	if results[0].res.IsError {
		win, lose = 1, 0
	}
	if results[win].res.IsError || !results[lose].res.IsError {
		t.Fatalf("two concurrent run_commands on %s: errors %v and %v, want exactly one refused: %s / %s",
			pane, results[0].res.IsError, results[1].res.IsError, allText(results[0].res), allText(results[1].res))
	}
	r, text := decodeText[jobOut](t, "run_command", results[win].res)
	letter := string("AB"[win])
	if want := letter + "-1\n" + letter + "-2"; text != want || status(r.ExitStatus) != "0" {
		t.Errorf("the command that ran: status %s output %q, want 0 and exactly %q (no output of the other)", status(r.ExitStatus), text, want)
	}
	msg := allText(results[lose].res)
	if !strings.Contains(msg, r.JobID) || !strings.Contains(msg, pane) || !strings.Contains(msg, "get_job") {
		t.Errorf("refusal %q: want it to name the pane %s, the running job %s and get_job", msg, pane, r.JobID)
	}
	if !results[lose].at.Before(results[win].at) || results[lose].took > 1500*time.Millisecond {
		t.Errorf("the refusal came after %v, the run after %v: want the refusal at once, before the first command ends", results[lose].took, results[win].took)
	}
	if r, text := s.runCmd(map[string]any{"paneId": pane, "command": "echo next", "timeoutSeconds": 15}); text != "next" {
		t.Errorf("a run once the pane is free: %+v output %q, want %q", r, text, "next")
	}
}

// interruptRun runs `echo started; sleep 30` in a pane, presses C-c through
// send_keys once it started, and returns the reply and how long after the
// key it came.
func interruptRun(t *testing.T, s *session, srv *tmuxtest.Server, pane string) (jobOut, string, time.Duration) {
	t.Helper()
	ch := s.async("run_command", map[string]any{"paneId": pane, "command": "echo started; sleep 30", "timeoutSeconds": 25})
	waitScreen(t, srv, pane, "started", func(l []string) bool { return hasLine(l, "started") })
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "C-c", "enter": false}, nil)
	interrupted := time.Now()
	res := awaitCall(t, "run_command", ch)
	r, text := decodeText[jobOut](t, "run_command", res.res)
	return r, text, res.at.Sub(interrupted)
}

func TestRunCommandInterruptedByCtrlCReturnsAtOnceWith130(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, pane, s := f.srv, f.pane, f.s

	r, text, took := interruptRun(t, s, srv, pane)
	if !r.Finished || r.Running || r.PaneDied || status(r.ExitStatus) != "130" || !strings.HasPrefix(text, "started") {
		t.Errorf("after C-c: finished %v status %s output %q (reason %q), want finished with 130 after %q", r.Finished, status(r.ExitStatus), text, r.Reason, "started")
	}
	if took > 3*time.Second {
		t.Errorf("after C-c run_command returned %v later, want at once (the timeout was 25s)", took)
	}
	if r, text := s.runCmd(map[string]any{"paneId": pane, "command": "echo still-here", "timeoutSeconds": 15}); text != "still-here" {
		t.Errorf("a run after C-c: %+v output %q, want %q", r, text, "still-here")
	}
}

func TestRunCommandOutputAfterCtrlCIsOnlyWhatTheCommandWrote(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, pane, s := f.srv, f.pane, f.s

	// The terminal echoes the key as ^C; the command never wrote that.
	if _, text, _ := interruptRun(t, s, srv, pane); text != "started" {
		t.Errorf("output of a command interrupted by C-c: %q, want exactly what it wrote, %q", text, "started")
	}
}

func TestRunCommandInAPaneKilledDuringTheRunReturnsPaneDied(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		kill func(t *testing.T, srv *tmuxtest.Server, pane string)
		// A shell killed after its child may still say "Killed" in the
		// pane: then the output only starts with what the command wrote.
		exact bool
	}{
		{"kill-pane", func(t *testing.T, srv *tmuxtest.Server, pane string) {
			srv.Must("kill-pane", "-t", pane)
		}, true},
		{"its processes killed, the pane left dead by remain-on-exit", func(t *testing.T, srv *tmuxtest.Server, pane string) {
			srv.Must("set-option", "-p", "-t", pane, "remain-on-exit", "on")
			shell, _ := strconv.Atoi(paneFormat(srv, pane, "#{pane_pid}"))
			for _, pid := range append(descendants(shell), shell) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			waitPane(t, srv, pane, "#{pane_dead}", "1")
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := tmuxtest.New(t)
			pane := newShellWindow(t, srv)
			s := startTMCP(t, srv, "")

			ch := s.async("run_command", map[string]any{"paneId": pane, "command": "echo started; sleep 30", "timeoutSeconds": 25})
			waitScreen(t, srv, pane, "started", func(l []string) bool { return hasLine(l, "started") })
			tt.kill(t, srv, pane)
			killed := time.Now()
			res := awaitCall(t, "run_command", ch)
			r, text := decodeText[jobOut](t, "run_command", res.res)
			if !r.PaneDied || !r.Finished || r.Running || r.ExitStatus != nil || r.Reason == "" {
				t.Errorf("pane killed during the run: %+v, want paneDied, finished, no exitStatus, a reason", r)
			}
			if text != "started" && (tt.exact || !strings.HasPrefix(text, "started\n")) {
				t.Errorf("pane killed during the run: output %q, want what it printed, %q", text, "started")
			}
			if took := res.at.Sub(killed); took > 4*time.Second {
				t.Errorf("pane killed during the run: run_command returned %v later, want at once (the timeout was 25s)", took)
			}
		})
	}
}

func TestRunCommandThatOutlastsItsWaitBecomesAJobForGetJob(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane, s := f.pane, f.s

	r, _ := s.runCmd(map[string]any{"paneId": pane, "command": "echo begun; sleep 1.5; echo done", "timeoutSeconds": 0.5})
	if !r.TimedOut || !r.Running || r.Finished || r.JobID == "" || r.ExitStatus != nil || r.EffectiveTimeoutSeconds != 0.5 {
		t.Fatalf("run_command outlasting 0.5s: %+v, want timedOut, running, not finished, a jobId, no exitStatus, effectiveTimeoutSeconds 0.5", r)
	}

	now, _ := s.getJob(map[string]any{"jobId": r.JobID})
	if !now.Running || now.Finished || now.JobID != r.JobID {
		t.Errorf("get_job at once: %+v, want job %s still running", now, r.JobID)
	}
	waited, text := s.getJob(map[string]any{"jobId": r.JobID, "timeoutSeconds": 10})
	if !waited.Finished || waited.Running || waited.TimedOut || status(waited.ExitStatus) != "0" || text != "begun\ndone" || waited.PaneID != pane {
		t.Fatalf("get_job waiting 10s: %+v output %q, want finished with 0 and %q", waited, text, "begun\ndone")
	}
	if waited.ElapsedSeconds < 1.5 {
		t.Errorf("get_job: elapsedSeconds %v, want the job's run time (at least 1.5)", waited.ElapsedSeconds)
	}

	// Once finished, every read is the same, but for the fence's token.
	first := s.call("get_job", map[string]any{"jobId": r.JobID})
	second := s.call("get_job", map[string]any{"jobId": r.JobID})
	if !reflect.DeepEqual(first.StructuredContent, second.StructuredContent) || paneText(t, "get_job", first) != paneText(t, "get_job", second) ||
		first.Content[0].(*mcp.TextContent).Text != second.Content[0].(*mcp.TextContent).Text {
		t.Errorf("two reads of a finished job differ:\n%s\n%s", allText(first), allText(second))
	}
	again, againText := decodeText[jobOut](t, "get_job", first)
	again.waitTiming.EffectiveTimeoutSeconds, waited.waitTiming.EffectiveTimeoutSeconds = 0, 0
	if !reflect.DeepEqual(again, waited) || againText != text {
		t.Errorf("get_job without a wait %+v %q differs from the one that waited %+v %q", again, againText, waited, text)
	}
	if msg := s.fail("get_job", map[string]any{"jobId": "no-such-job"}); !strings.Contains(msg, "no-such-job") || !strings.Contains(msg, "run_command") {
		t.Errorf("get_job of an unknown id: %q, want it to name the id and run_command", msg)
	}
}

func TestRunCommandDetachReturnsTheJobIdAtOnce(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane, s := f.pane, f.s

	start := time.Now()
	r, _ := s.runCmd(map[string]any{"paneId": pane, "command": "sleep 1; echo detached", "detach": true})
	took := time.Since(start)
	if r.JobID == "" || r.Finished || !r.Running || r.ExitStatus != nil {
		t.Fatalf("detach: %+v, want a running job's id", r)
	}
	if took > 900*time.Millisecond {
		t.Errorf("detach took %v, want at once (before the 1s command could end)", took)
	}
	j, text := s.getJob(map[string]any{"jobId": r.JobID, "timeoutSeconds": 10})
	if !j.Finished || status(j.ExitStatus) != "0" || text != "detached" {
		t.Errorf("get_job of the detached job: %+v output %q, want 0 and %q", j, text, "detached")
	}
}

func TestRunCommandRefusesAPaneThatCannotTakeACommand(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, s := f.srv, f.s

	busy := newShellWindow(t, srv)
	srv.Must("send-keys", "-t", busy, "sleep 30", "Enter")
	waitPane(t, srv, busy, "#{pane_current_command}", "sleep")

	// Left on: turning remain-on-exit off again lets tmux remove the dead
	// pane, which would make this a test of a missing pane.
	srv.Must("set-option", "-g", "remain-on-exit", "on")
	dead := newWindow(srv, "sh -c 'exit 4'")
	waitPane(t, srv, dead, "#{pane_dead}", "1")

	copying := newShellWindow(t, srv)
	srv.Must("copy-mode", "-t", copying)
	waitPane(t, srv, copying, "#{pane_in_mode}", "1")

	for _, tt := range []struct {
		name, pane string
		want       []string
	}{
		{"running sleep", busy, []string{busy, `"sleep"`, "send_keys"}},
		{"dead", dead, []string{dead, "dead", "split_window"}},
		{"in copy mode", copying, []string{copying, "copy-mode", "exit_copy_mode"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := s.on(t)
			start := time.Now()
			msg := s.fail("run_command", map[string]any{"paneId": tt.pane, "command": "echo should-not-run", "timeoutSeconds": 5})
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("run_command in a pane %s: %q, want it to say %q", tt.name, msg, w)
				}
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("run_command in a pane %s was refused after %v, want at once", tt.name, took)
			}
		})
	}
	if strings.Contains(strings.Join(bareCapture(srv, busy), "\n"), "should-not-run") {
		t.Errorf("the refused command was typed into %s anyway", busy)
	}
}

// ---- wait_for_text ----

func TestWaitForTextNeverMissesALineWrittenJustAfterTheCall(t *testing.T) {
	if tmuxtest.RaceEnabled {
		// Under the race detector a request takes about 2 ms to be read
		// off tmcp's stdin, so a line written 1 ms after it was sent comes
		// before tmcp can know of the call. scripts/test.sh runs this test
		// again without the race detector.
		t.Skip("timing-sensitive: runs in the build without the race detector")
	}
	// Not in parallel: it times events to the millisecond, and the other
	// such tests would load the machine for it (scripts/test.sh).
	f := newWaitFixture(t)
	pane, s, sent := f.pane, f.s, f.sent
	tty := f.tty(pane)

	trials := 100
	if testing.Short() {
		trials = 10
	}
	// A miss costs the wait's timeout; past this many the verdict is
	// known, and the rest of that delay's trials are skipped.
	const enoughMisses = 10
	for _, delay := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond} {
		misses, ran := 0, 0
		for i := 0; i < trials && misses < enoughMisses; i++ {
			ran++
			token := fmt.Sprintf("LINE-%02dms-%03d", delay.Milliseconds(), i)
			ch := s.async("wait_for_text", map[string]any{"paneId": pane, "patterns": []string{token}, "timeoutSeconds": 1})
			// The delay runs from the moment the request is on its way to
			// tmcp (written to its stdin), not from the goroutine's start.
			select {
			case <-sent:
			case <-time.After(callTimeout):
				t.Fatalf("the wait_for_text request was never written")
			}
			time.Sleep(delay) // the point: the line comes this long after the call
			writeTTY(t, tty, token+"\r\n")
			res := awaitCall(t, "wait_for_text", ch)
			r, text := decodeText[waitTextOut](t, "wait_for_text", res.res)
			if r.Outcome != "matched" || !strings.Contains(r.Matched, token) {
				misses++
				if misses <= 3 {
					t.Logf("line written %v after the call, trial %d: outcome %s matched %q alreadyOnScreen %v reason %q; text %q",
						delay, i, r.Outcome, r.Matched, r.AlreadyOnScreen, r.Reason, lastLines(text, 3))
				}
			}
		}
		if misses > 0 {
			t.Errorf("a line written %v after the call was missed in %d of %d trials (of %d planned), want none", delay, misses, ran, trials)
		} else {
			t.Logf("a line written %v after the call: %d trials, no miss", delay, ran)
		}
	}
}

func lastLines(text string, n int) string {
	lines := strings.Split(text, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// sentTransport is a client transport that reports on sent when it has
// written a tools/call request to tmcp.
type sentTransport struct {
	mcp.Transport
	sent chan<- time.Time
}

func (t sentTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return sentConn{c, t.sent}, nil
}

type sentConn struct {
	mcp.Connection
	sent chan<- time.Time
}

func (c sentConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" {
		select {
		case c.sent <- time.Now():
		default:
		}
	}
	return err
}

func TestWaitForTextAnchoredRegexMatchesALineEndedByCRLF(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane := f.pane

	r, text := f.waitWhileWriting(map[string]any{"paneId": pane, "patterns": []string{"^READY$"}, "regex": true, "timeoutSeconds": 10}, "\r\nnot READY yet\r\nREADY\r\nafter\r\n")
	if r.Outcome != "matched" || r.Matched != "READY" || r.Pattern != "^READY$" {
		t.Errorf("^READY$: outcome %s matched %q pattern %q, want matched %q", r.Outcome, r.Matched, r.Pattern, "READY")
	}
	tail, _ := checkWaitText(t, r, text)
	if !slices.Contains(tail, "READY") {
		t.Errorf("^READY$: tail %q, want it to hold the line READY", tail)
	}
}

func TestWaitForTextMatchesColouredWordsAndReturnsNoEscapes(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane := f.pane

	r, text := f.waitWhileWriting(map[string]any{"paneId": pane, "patterns": []string{"BUILD OK in 3s"}, "timeoutSeconds": 10}, "\r\n\x1b[32mBUILD\x1b[0m \x1b[1;32mOK\x1b[0m in \x1b]8;;http://x\x1b\\3s\x1b]8;;\x1b\\\r\n")
	if r.Outcome != "matched" || r.Matched != "BUILD OK in 3s" {
		t.Errorf("coloured words: outcome %s matched %q, want matched %q", r.Outcome, r.Matched, "BUILD OK in 3s")
	}
	checkWaitText(t, r, text)
	if b, _ := json.Marshal(r); strings.Contains(string(b), `\u001b`) {
		t.Errorf("coloured words: the fields carry an escape: %s", b)
	}
}

func TestWaitForTextMatchesAPromptWithoutATrailingNewline(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane := f.pane

	r, text := f.waitWhileWriting(map[string]any{"paneId": pane, "patterns": []string{"Password: $"}, "regex": true, "timeoutSeconds": 10}, "\r\nPassword: ")
	if r.Outcome != "matched" || r.Matched != "Password: " {
		t.Errorf("a prompt with no newline: outcome %s matched %q, want matched %q", r.Outcome, r.Matched, "Password: ")
	}
	checkWaitText(t, r, text)
}

func TestWaitForTextReportsStaleOnScreenTextAsAlreadyOnScreen(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, pane, s := f.srv, f.pane, f.s
	tty := f.tty(pane)

	writeTTY(t, tty, "\r\nSTALE-TOKEN\r\n")
	waitScreen(t, srv, pane, "STALE-TOKEN", func(l []string) bool { return hasLine(l, "STALE-TOKEN") })
	// The point: the line is old by more than the arrival slack. Output
	// that reaches tmcp up to 10 ms before a call counts as written after
	// it, and a screen read by a tmux client is only about that long
	// before the call: under load the line reached tmcp within the slack
	// (6 in 300 runs beside two busy loops).
	time.Sleep(100 * time.Millisecond)
	r, text := s.waitText(map[string]any{"paneId": pane, "patterns": []string{"STALE-TOKEN"}, "timeoutSeconds": 0.5})
	if r.Outcome != "timeout" || r.Matched != "" || !r.AlreadyOnScreen {
		t.Errorf("stale text: outcome %s matched %q alreadyOnScreen %v, want timeout, nothing matched, alreadyOnScreen", r.Outcome, r.Matched, r.AlreadyOnScreen)
	}
	_, screen := checkWaitText(t, r, text)
	if !hasLine(screen, "STALE-TOKEN") {
		t.Errorf("stale text: the timeout's text %q, want the screen (with STALE-TOKEN) after %q", text, screenMark)
	}
}

func TestWaitForTextSkipsTheEchoOfTypedKeys(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane, s := f.pane, f.s

	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "sleep 1; echo MARK"}, nil)
	r, text := s.waitText(map[string]any{"paneId": pane, "patterns": []string{"MARK"}, "timeoutSeconds": 10})
	if r.Outcome != "matched" || r.Matched != "MARK" {
		t.Errorf("typed echo: outcome %s matched %q, want the real output %q", r.Outcome, r.Matched, "MARK")
	}
	if r.ElapsedSeconds < 0.8 {
		t.Errorf("typed echo: matched after %vs, want about 1s (the output, not the echo)", r.ElapsedSeconds)
	}
	checkWaitText(t, r, text)
}

func TestWaitForTextWithIdleSecondsEndsOnceThePaneIsQuiet(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane := f.pane
	tty := f.tty(pane)

	ch := f.begin("wait_for_text", map[string]any{"paneId": pane, "idleSeconds": 0.5, "timeoutSeconds": 10})
	var last time.Time
	for i := 1; i <= 5; i++ {
		writeTTY(t, tty, fmt.Sprintf("TICK-%d\r\n", i))
		last = time.Now()
		// The point: output 150 ms apart, under the 0.5 s of quiet that
		// would end the wait.
		time.Sleep(150 * time.Millisecond)
	}
	res := awaitCall(t, "wait_for_text", ch)
	r, text := decodeText[waitTextOut](t, "wait_for_text", res.res)
	if r.Outcome != "idle" {
		t.Errorf("idleSeconds 0.5: outcome %s, want idle", r.Outcome)
	}
	if quiet := res.at.Sub(last); quiet < 480*time.Millisecond || r.ElapsedSeconds > 5 {
		t.Errorf("idleSeconds 0.5: returned %v after the last output (elapsed %vs), want 0.5s of quiet", quiet, r.ElapsedSeconds)
	}
	tail, _ := checkWaitText(t, r, text)
	if got := strings.Join(tail, "\n"); !strings.Contains(got, "TICK-1\nTICK-2\nTICK-3\nTICK-4\nTICK-5") {
		t.Errorf("idleSeconds: tail %q, want every TICK line", tail)
	}
}

func TestWaitForTextWithoutPatternsEndsOnAnyNewOutput(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane := f.pane

	r, text := f.waitWhileWriting(map[string]any{"paneId": pane, "timeoutSeconds": 10}, "anything new\r\n")
	if r.Outcome != "output" || r.Matched != "anything new" {
		t.Errorf("no patterns: outcome %s matched %q, want output %q", r.Outcome, r.Matched, "anything new")
	}
	checkWaitText(t, r, text)
}

func TestWaitForTextStopWinsOverASuccessPatternInTheSameChunk(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane := f.pane

	r, text := f.waitWhileWriting(map[string]any{"paneId": pane, "patterns": []string{"OK"}, "stop": []string{"FAIL"}, "timeoutSeconds": 10}, "\r\nOK\r\nFAIL\r\n")
	if r.Outcome != "stopped" || r.Matched != "FAIL" || r.Pattern != "FAIL" {
		t.Errorf("OK then FAIL in one write: outcome %s matched %q pattern %q, want stopped by FAIL", r.Outcome, r.Matched, r.Pattern)
	}
	checkWaitText(t, r, text)
}

func TestWaitForTextMatchCaseFalseIgnoresCase(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane, s := f.pane, f.s

	r, _ := f.waitWhileWriting(map[string]any{"paneId": pane, "patterns": []string{"server listening"}, "matchCase": false, "timeoutSeconds": 10}, "\r\nServer LISTENING on :8080\r\n")
	if r.Outcome != "matched" || r.Matched != "Server LISTENING on :8080" {
		t.Errorf("matchCase false: outcome %s matched %q, want matched", r.Outcome, r.Matched)
	}
	r, _ = s.waitText(map[string]any{"paneId": pane, "patterns": []string{"server listening"}, "timeoutSeconds": 0.3})
	if r.Outcome != "timeout" {
		t.Errorf("case-sensitive by default: outcome %s matched %q, want timeout", r.Outcome, r.Matched)
	}
}

func TestWaitForTextReportsAnAlternateScreenProgram(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, pane, s := f.srv, f.pane, f.s

	// The quotes keep the typed line from reading PAINT.
	srv.Must("send-keys", "-t", pane, `sleep 0.5; printf '\033[?1049h'; echo PA""INT; sleep 3`, "Enter")
	r, text := s.waitText(map[string]any{"paneId": pane, "patterns": []string{"PAINT"}, "timeoutSeconds": 2})
	if r.Outcome == "matched" || !r.AlternateScreen {
		t.Errorf("a full-screen program: outcome %s matched %q alternateScreen %v, want it reported as alternateScreen, not matched", r.Outcome, r.Matched, r.AlternateScreen)
	}
	_, screen := checkWaitText(t, r, text)
	if !hasLine(screen, "PAINT") {
		t.Errorf("a full-screen program: text %q, want its screen (with PAINT)", text)
	}
}

func TestWaitForTextBegunWhileAFullScreenProgramRunsMatchesAfterItExits(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, pane, s := f.srv, f.pane, f.s

	// The quotes keep the typed line from reading DONE.
	srv.Must("send-keys", "-t", pane, `printf '\033[?1049h'; sleep 2; printf '\033[?1049l'; echo DO""NE`, "Enter")
	waitPane(t, srv, pane, "#{alternate_on}", "1")
	r, text := s.waitText(map[string]any{"paneId": pane, "patterns": []string{"DONE"}, "timeoutSeconds": 10})
	if r.Outcome != "matched" || r.Matched != "DONE" || r.AlternateScreen {
		t.Errorf("a wait begun on the alternate screen: outcome %s matched %q alternateScreen %v, want DONE matched once the program left it (text %q)", r.Outcome, r.Matched, r.AlternateScreen, text)
	}
}

func TestWaitForTextResumesFromTheReturnedCursor(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane, s := f.pane, f.s

	first, _ := f.waitWhileWriting(map[string]any{"paneId": pane, "patterns": []string{"FIRST"}, "timeoutSeconds": 10}, "\r\nFIRST\r\nSECOND\r\n")
	if first.Outcome != "matched" || first.Matched != "FIRST" || first.Cursor == "" {
		t.Fatalf("wait for FIRST: %+v, want matched with a cursor", first)
	}
	second, text := s.waitText(map[string]any{"paneId": pane, "patterns": []string{"SECOND"}, "cursor": first.Cursor, "timeoutSeconds": 5})
	if second.Outcome != "matched" || second.Matched != "SECOND" || second.CursorReset || second.ElapsedSeconds > 1 {
		t.Errorf("wait for SECOND from FIRST's cursor: %+v, want SECOND matched at once from the stream", second)
	}
	checkWaitText(t, second, text)
	third, _ := s.waitText(map[string]any{"paneId": pane, "patterns": []string{"SECOND"}, "cursor": second.Cursor, "timeoutSeconds": 0.3})
	if third.Outcome != "timeout" {
		t.Errorf("wait for SECOND again from SECOND's cursor: outcome %s matched %q, want timeout (nothing new)", third.Outcome, third.Matched)
	}
}

func TestWaitForTextTakesThePaneFromTheCursor(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane, s := f.pane, f.s
	f.srv.Must("split-window", "-d", "-t", pane, "sh")
	tty := f.tty(pane)

	start, _ := s.since(map[string]any{"paneId": pane})
	writeTTY(t, tty, "\r\nFROM-THE-CURSOR\r\n")
	r, _ := s.waitText(map[string]any{"cursor": start.Cursor, "patterns": []string{"FROM-THE-CURSOR"}, "timeoutSeconds": 5})
	if r.Outcome != "matched" || r.Matched != "FROM-THE-CURSOR" {
		t.Errorf("wait_for_text with a cursor and no paneId, two panes: %+v, want the cursor's pane matched", r)
	}
	msg := s.fail("wait_for_text", map[string]any{"patterns": []string{"x"}, "timeoutSeconds": 0.1})
	if !strings.Contains(msg, "list_panes") {
		t.Errorf("wait_for_text with neither paneId nor cursor, two panes: %q, want a refusal naming list_panes", msg)
	}
}

func TestWaitForTextReportsAPaneThatDies(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	// Not the main pane: killing the last pane would end the server.
	pane := newShellWindow(t, f.srv)

	ch := f.begin("wait_for_text", map[string]any{"paneId": pane, "patterns": []string{"never printed"}, "timeoutSeconds": 20})
	// begin cannot tell this wait underway: the session's output client
	// may be there already, for the fixture's pane. A pane killed before
	// tmcp looked it up is rightly "not found" (seen once in CI); the
	// wait has long begun 300 ms on.
	time.Sleep(300 * time.Millisecond)
	f.srv.Must("kill-pane", "-t", pane)
	killed := time.Now()
	res := awaitCall(t, "wait_for_text", ch)
	r, _ := decodeText[waitTextOut](t, "wait_for_text", res.res)
	if r.Outcome != "pane_died" || r.Reason == "" {
		t.Errorf("pane killed during the wait: outcome %s reason %q, want pane_died with a reason", r.Outcome, r.Reason)
	}
	if took := res.at.Sub(killed); took > 4*time.Second {
		t.Errorf("pane killed during the wait: returned %v later, want at once (the timeout was 20s)", took)
	}
}

// ceilingTMCP starts tmcp with a wait ceiling of 2 seconds.
func ceilingTMCP(t *testing.T, srv *tmuxtest.Server) *session {
	t.Helper()
	return startTMCPWithEnv(t, srv, "", []string{"TMCP_WAIT_MAX_SECONDS=2"})
}

// checkClamped checks a wait that asked for 30s under a 2s ceiling.
func checkClamped(t *testing.T, what string, w waitTiming, took time.Duration) {
	t.Helper()
	if w.EffectiveTimeoutSeconds != 2 || !w.TimeoutClamped {
		t.Errorf("%s asking 30s under a 2s ceiling: effectiveTimeoutSeconds %v timeoutClamped %v, want 2 and true", what, w.EffectiveTimeoutSeconds, w.TimeoutClamped)
	}
	if took < 1900*time.Millisecond || took > 4*time.Second {
		t.Errorf("%s asking 30s under a 2s ceiling returned after %v, want about 2s", what, took)
	}
}

func TestWaitForTextTimeoutAboveTheCeilingIsClamped(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	s := ceilingTMCP(t, srv)

	start := time.Now()
	r, text := s.waitText(map[string]any{"paneId": pane, "patterns": []string{"never printed"}, "timeoutSeconds": 30})
	if r.Outcome != "timeout" {
		t.Errorf("wait_for_text: outcome %s, want timeout", r.Outcome)
	}
	checkClamped(t, "wait_for_text", r.waitTiming, time.Since(start))
	checkWaitText(t, r, text)
}

func TestRunCommandAndGetJobTimeoutsAboveTheCeilingAreClamped(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	s := ceilingTMCP(t, srv)

	start := time.Now()
	r, _ := s.runCmd(map[string]any{"paneId": pane, "command": "sleep 5", "timeoutSeconds": 30})
	if !r.TimedOut || !r.Running {
		t.Errorf("run_command: %+v, want timedOut and running", r)
	}
	checkClamped(t, "run_command", r.waitTiming, time.Since(start))
	start = time.Now()
	j, _ := s.getJob(map[string]any{"jobId": r.JobID, "timeoutSeconds": 30})
	if j.Finished {
		t.Fatalf("get_job: the 5s command finished within %v of a 2s wait: %+v", time.Since(start), j)
	}
	checkClamped(t, "get_job", j.waitTiming, time.Since(start))
}

func TestWaitForChannelTimeoutAboveTheCeilingIsClamped(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	s := ceilingTMCP(t, srv)

	start := time.Now()
	r := decodeFields[channelWaitOut](t, "wait_for_channel", s.call("wait_for_channel", map[string]any{"channel": "never-signalled", "timeoutSeconds": 30}))
	if r.Outcome != "timeout" {
		t.Errorf("wait_for_channel: outcome %s, want timeout", r.Outcome)
	}
	checkClamped(t, "wait_for_channel", r.waitTiming, time.Since(start))
}

func TestWaitForTextHonoursAFractionalTimeout(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane, s := f.pane, f.s

	start := time.Now()
	r, text := s.waitText(map[string]any{"paneId": pane, "patterns": []string{"never printed"}, "timeoutSeconds": 0.3})
	took := time.Since(start)
	if r.Outcome != "timeout" || r.EffectiveTimeoutSeconds != 0.3 || r.TimeoutClamped {
		t.Errorf("timeoutSeconds 0.3: outcome %s effectiveTimeoutSeconds %v clamped %v, want timeout, 0.3, not clamped", r.Outcome, r.EffectiveTimeoutSeconds, r.TimeoutClamped)
	}
	if r.ElapsedSeconds < 0.3 || took > 900*time.Millisecond {
		t.Errorf("timeoutSeconds 0.3: elapsedSeconds %v, call took %v, want 0.3s, not rounded to a whole second", r.ElapsedSeconds, took)
	}
	// A timeout is never an empty answer: the screen comes with it.
	if _, screen := checkWaitText(t, r, text); len(screen) == 0 {
		t.Errorf("timeout: text %q, want the screen", text)
	}
}

func TestWaitForTextSpawnsNoTmuxProcessWhileWaiting(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	script, log := tmuxWrapper(t)
	s := startTMCP(t, srv, "", "-binary", script)

	// A first wait attaches what waits on this pane need; its budget must
	// let the attach finish however loaded the machine is.
	s.waitText(map[string]any{"paneId": pane, "patterns": []string{"never printed"}, "timeoutSeconds": 2})
	before := children(s.pid())
	for _, pid := range before {
		if c := cmdline(pid); !strings.Contains(c, " -C") {
			t.Errorf("before the wait tmcp has child %d %q, not a control client", pid, c)
		}
	}
	started := len(invocations(log))

	ch := s.async("wait_for_text", map[string]any{"paneId": pane, "patterns": []string{"never printed"}, "timeoutSeconds": 1})
	seen := childrenDuring(s.pid(), before, func() {
		if res := <-ch; res.err != nil {
			t.Fatalf("wait_for_text: %v", res.err)
		}
	})
	if len(seen) > 0 {
		t.Errorf("tmcp started processes during a 1s wait_for_text: %v", seen)
	}
	if during := invocations(log)[started:]; len(during) > 0 {
		t.Errorf("tmcp ran tmux %d times during a 1s wait_for_text: %q", len(during), during)
	}
}

// ---- wait_for_channel and signal_channel ----

// channelWaiter returns the pid of tmcp's `tmux wait-for` child for a
// channel, once it runs.
func channelWaiter(t *testing.T, s *session, channel string) int {
	t.Helper()
	var found int
	if !tmuxtest.WaitFor(settle, func() bool {
		for _, pid := range descendants(s.pid()) {
			if c := cmdline(pid); strings.Contains(c, "wait-for") && strings.HasSuffix(c, channel) {
				found = pid
				return true
			}
		}
		return false
	}) {
		t.Fatalf("tmcp never ran wait-for %s; its processes: %v", channel, descendants(s.pid()))
	}
	return found
}

func TestWaitForChannelIsWokenBySignalChannel(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	s := f.s

	channel := "build.done:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	ch := s.async("wait_for_channel", map[string]any{"channel": channel, "timeoutSeconds": 20})
	channelWaiter(t, s, channel)
	sig := decodeFields[signalledOut](t, "signal_channel", s.call("signal_channel", map[string]any{"channel": channel}))
	if sig.Signalled != channel {
		t.Errorf("signal_channel: %+v, want signalled %q", sig, channel)
	}
	signalled := time.Now()
	res := awaitCall(t, "wait_for_channel", ch)
	r := decodeFields[channelWaitOut](t, "wait_for_channel", res.res)
	if r.Outcome != "signalled" || r.TimeoutClamped || r.EffectiveTimeoutSeconds != 20 {
		t.Errorf("wait_for_channel after signal_channel: %+v, want signalled, effectiveTimeoutSeconds 20", r)
	}
	if took := res.at.Sub(signalled); took > 2*time.Second {
		t.Errorf("wait_for_channel returned %v after the signal, want at once", took)
	}
}

func TestWaitForChannelTakesSeveralChannels(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	s := f.s
	// a,b: the first signalled decides, and the other's wait-for ends too.
	ch := s.async("wait_for_channel", map[string]any{"channel": "tests-pass,tests-fail", "timeoutSeconds": 20})
	other := channelWaiter(t, s, "tests-pass")
	channelWaiter(t, s, "tests-fail")
	s.call("signal_channel", map[string]any{"channel": "tests-fail"})
	r := decodeFields[channelWaitOut](t, "wait_for_channel", awaitCall(t, "wait_for_channel", ch).res)
	if r.Outcome != "signalled" || !slices.Equal(r.Signalled, []string{"tests-fail"}) {
		t.Errorf("wait_for_channel tests-pass,tests-fail after tests-fail: %+v, want signalled [tests-fail]", r)
	}
	if !tmuxtest.WaitFor(settle, func() bool { return ended(other) }) {
		t.Errorf("the wait-for of the channel not signalled (pid %d) still runs", other)
	}
	// a+b: each must be.
	ch = s.async("wait_for_channel", map[string]any{"channel": "built+deployed", "timeoutSeconds": 20})
	channelWaiter(t, s, "built")
	channelWaiter(t, s, "deployed")
	s.call("signal_channel", map[string]any{"channel": "built"})
	select {
	case res := <-ch:
		t.Fatalf("wait_for_channel built+deployed answered with only built signalled: %s", allText(res.res))
	case <-time.After(300 * time.Millisecond):
	}
	s.call("signal_channel", map[string]any{"channel": "deployed"})
	r = decodeFields[channelWaitOut](t, "wait_for_channel", awaitCall(t, "wait_for_channel", ch).res)
	if r.Outcome != "signalled" || !slices.Equal(r.Signalled, []string{"built", "deployed"}) {
		t.Errorf("wait_for_channel built+deployed: %+v, want signalled [built deployed]", r)
	}
	if msg := s.fail("wait_for_channel", map[string]any{"channel": "a,b+c"}); !strings.Contains(msg, "commas") {
		t.Errorf("wait_for_channel a,b+c: %q, want a refusal that says how to separate them", msg)
	}
}

func TestWaitForChannelReportsAKilledServerAsServerGone(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, s := f.srv, f.s

	channel := "never-signalled"
	ch := s.async("wait_for_channel", map[string]any{"channel": channel, "timeoutSeconds": 20})
	channelWaiter(t, s, channel)
	srv.Must("kill-server")
	killed := time.Now()
	res := awaitCall(t, "wait_for_channel", ch)
	if res.res.IsError {
		t.Fatalf("wait_for_channel across kill-server: tool error %q, want outcome server_gone", allText(res.res))
	}
	r := decodeFields[channelWaitOut](t, "wait_for_channel", res.res)
	if r.Outcome != "server_gone" {
		t.Errorf("wait_for_channel across kill-server: outcome %s, want server_gone (never signalled)", r.Outcome)
	}
	if took := res.at.Sub(killed); took > 3*time.Second {
		t.Errorf("wait_for_channel returned %v after kill-server, want at once", took)
	}
}

func TestChannelNamesAreValidated(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	s := f.s

	for _, name := range []string{"", "has space", "semi;colon", "new\nline", "#{pane_id}", "#(touch x)", "dollar$", "slash/", strings.Repeat("a", 129), "é"} {
		for _, tool := range []string{"wait_for_channel", "signal_channel"} {
			args := map[string]any{"channel": name}
			if tool == "wait_for_channel" {
				args["timeoutSeconds"] = 1
			}
			msg := s.fail(tool, args)
			if !strings.Contains(msg, "A-Z a-z 0-9 _ . : -") {
				t.Errorf("%s %q: %q, want a refusal giving the allowed characters", tool, name, msg)
			}
		}
	}
	long := strings.Repeat("a", 128)
	sig := decodeFields[signalledOut](t, "signal_channel", s.call("signal_channel", map[string]any{"channel": long}))
	if sig.Signalled != long {
		t.Errorf("signal_channel with a 128-character name: %+v", sig)
	}
	// tmux latched that signal: a wait on the name returns at once.
	r := decodeFields[channelWaitOut](t, "wait_for_channel", s.call("wait_for_channel", map[string]any{"channel": long, "timeoutSeconds": 5}))
	if r.Outcome != "signalled" {
		t.Errorf("wait_for_channel on a latched 128-character name: %+v, want signalled", r)
	}
}

// ---- capture_since ----

func TestCaptureSinceWithoutACursorGivesTheScreenAndACursor(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, pane, s := f.srv, f.pane, f.s
	tty := f.tty(pane)

	writeTTY(t, tty, "\r\nON-SCREEN\r\n")
	waitScreen(t, srv, pane, "ON-SCREEN", func(l []string) bool { return hasLine(l, "ON-SCREEN") })
	r, text := s.since(map[string]any{"paneId": pane})
	want := strings.Join(bareCapture(srv, pane), "\n")
	if text != want || r.Cursor == "" || r.ScreenLines != len(strings.Split(want, "\n")) || r.Lines != 0 || r.Reset {
		t.Errorf("capture_since without a cursor: %+v text %q, want the screen %q and a cursor", r, text, want)
	}
}

func TestCaptureSinceReturnsOnlyWhatIsNewSinceTheCursor(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, pane, s := f.srv, f.pane, f.s
	tty := f.tty(pane)

	writeTTY(t, tty, "\r\nOLD-LINE\r\n")
	waitScreen(t, srv, pane, "OLD-LINE", func(l []string) bool { return hasLine(l, "OLD-LINE") })
	r, _ := s.since(map[string]any{"paneId": pane})
	cursor := r.Cursor

	// Nothing new: nothing returned, the same cursor back.
	quiet, text := s.since(map[string]any{"cursor": cursor})
	if quiet.Lines != 0 || text != "" || quiet.Cursor != cursor || quiet.ScreenLines != 0 {
		t.Errorf("capture_since on a quiet pane: %+v text %q, want nothing and the same cursor", quiet, text)
	}

	writeTTY(t, tty, "NEW-1\r\nNEW-2\r\n")
	got := readSince(t, s, &cursor, 2)
	if strings.Join(got, "\n") != "NEW-1\nNEW-2" {
		t.Errorf("capture_since after two lines: %q, want exactly NEW-1 and NEW-2", got)
	}

	// An unfinished line is partial, and comes back whole once finished.
	writeTTY(t, tty, "half a ")
	var partial sinceOut
	if !tmuxtest.WaitFor(settle, func() bool {
		partial, text = s.since(map[string]any{"cursor": cursor})
		return partial.Partial != ""
	}) {
		t.Fatalf("capture_since never reported the unfinished line")
	}
	if partial.Partial != "half a " || partial.Lines != 0 || text != "" {
		t.Errorf("capture_since of an unfinished line: %+v text %q, want partial %q and no lines", partial, text, "half a ")
	}
	cursor = partial.Cursor
	writeTTY(t, tty, "line\r\n")
	if got := readSince(t, s, &cursor, 1); strings.Join(got, "\n") != "half a line" {
		t.Errorf("capture_since once the line was finished: %q, want %q", got, "half a line")
	}
}

// readSince reads with capture_since from *cursor until n lines came,
// checking that nothing was missed, and leaves *cursor after them.
func readSince(t *testing.T, s *session, cursor *string, n int) []string {
	t.Helper()
	var got []string
	if !tmuxtest.WaitFor(settle, func() bool {
		r, text := s.since(map[string]any{"cursor": *cursor})
		if r.MissedBytes != 0 || r.Reset || r.ScreenLines != 0 || r.Truncated {
			t.Fatalf("capture_since after %d of %d lines: %+v, want lines only, nothing missed", len(got), n, r)
		}
		if r.Lines > 0 {
			got = append(got, strings.Split(text, "\n")...)
		}
		*cursor = r.Cursor
		return len(got) >= n
	}) {
		t.Fatalf("capture_since: %d of %d lines after %v: %q", len(got), n, settle, got)
	}
	return got
}

func TestCaptureSinceAtTheHistoryLimitReturnsEveryLineWithNoFalseLoss(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	srv.Must("set-option", "-g", "history-limit", "50")
	pane := newShellWindow(t, srv)
	tty := openTTY(t, srv, pane)
	s := startTMCP(t, srv, "")

	r, _ := s.since(map[string]any{"paneId": pane})
	cursor := r.Cursor
	writeTTY(t, tty, "\r\n")
	readSince(t, s, &cursor, 1)
	const rounds, perRound = 15, 40
	var got, want []string
	for round := range rounds {
		for i := range perRound {
			line := fmt.Sprintf("R%02d-L%02d", round, i)
			want = append(want, line)
			writeTTY(t, tty, line+"\r\n")
		}
		got = append(got, readSince(t, s, &cursor, perRound)...)
	}
	if !slices.Equal(got, want) {
		t.Errorf("capture_since in rounds over %d small writes: %d lines, want exactly the %d written (first difference at %d)", len(want), len(got), len(want), firstDiff(got, want))
	}
	historyFull(t, srv, pane, 50)
}

// historyFull checks that a pane's history is at its limit: tmux trims a
// tenth of it at a time, so it stays within that of the limit.
func historyFull(t *testing.T, srv *tmuxtest.Server, pane string, limit int) {
	t.Helper()
	var size, lim int
	fmt.Sscan(paneFormat(srv, pane, "#{history_size} #{history_limit}"), &size, &lim)
	if lim != limit || size < limit-limit/10 || size > limit {
		t.Fatalf("history of %s holds %d lines of %d, want it full at its limit %d", pane, size, lim, limit)
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestCaptureSinceRefusesACursorFromAnotherPane(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	a, s := f.pane, f.s
	b := newShellWindow(t, f.srv)

	r, _ := s.since(map[string]any{"paneId": a})
	msg := s.fail("capture_since", map[string]any{"paneId": b, "cursor": r.Cursor})
	if !strings.Contains(msg, a) || !strings.Contains(msg, b) {
		t.Errorf("capture_since of %s with a cursor of %s: %q, want a refusal naming both panes", b, a, msg)
	}
	msg = s.fail("wait_for_text", map[string]any{"paneId": b, "cursor": r.Cursor, "timeoutSeconds": 1})
	if !strings.Contains(msg, a) || !strings.Contains(msg, b) {
		t.Errorf("wait_for_text on %s with a cursor of %s: %q, want a refusal naming both panes", b, a, msg)
	}
}

func TestCaptureSinceRefusesAGarbageCursor(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane, s := f.pane, f.s

	r, _ := s.since(map[string]any{"paneId": pane})
	// The first byte of a cursor is its version: another is not a cursor.
	otherVersion := "B" + r.Cursor[1:]
	for _, bad := range []string{"not a cursor", "AAAA", r.Cursor + "A", r.Cursor[:len(r.Cursor)-2], otherVersion, "%0", strings.Repeat("A", 500)} {
		msg := s.fail("capture_since", map[string]any{"cursor": bad})
		if !strings.Contains(msg, "cursor") || !strings.Contains(msg, "capture_since without a cursor") {
			t.Errorf("capture_since with cursor %q: %q, want a refusal saying to call capture_since without a cursor", bad, msg)
		}
		if msg := s.fail("wait_for_text", map[string]any{"paneId": pane, "cursor": bad, "timeoutSeconds": 1}); !strings.Contains(msg, "cursor") {
			t.Errorf("wait_for_text with cursor %q: %q, want a refusal of the cursor", bad, msg)
		}
	}
}

func TestCaptureSinceAndWaitForTextNeverSilentlyAcceptACursorPastTheEnd(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	id, s := f.pane, f.s

	r, _ := s.since(map[string]any{"paneId": id})
	c, err := panes.ParseCursor(r.Cursor)
	if err != nil {
		t.Fatalf("capture_since gave cursor %q that does not parse: %v", r.Cursor, err)
	}
	// A cursor of the right pane and stream at an offset the pane's output
	// never reached: handed out by nobody, so altered or forged.
	future := panes.Cursor{PaneID: c.PaneID, Generation: c.Generation, Offset: c.Offset + 1000}.String()

	res := s.call("capture_since", map[string]any{"cursor": future})
	if !res.IsError {
		got, _ := decodeText[sinceOut](t, "capture_since", res)
		if !got.Reset || got.Reason == "" {
			t.Errorf("capture_since with a cursor 1000 bytes past the end of %s's output: %+v, want it refused or answered with reset and a reason", id, got)
		}
	}
	res = s.call("wait_for_text", map[string]any{"paneId": id, "cursor": future, "patterns": []string{"never printed"}, "timeoutSeconds": 0.3})
	if !res.IsError {
		got, _ := decodeText[waitTextOut](t, "wait_for_text", res)
		next, err := panes.ParseCursor(got.Cursor)
		if !got.CursorReset || err != nil || next.Offset > c.Offset+100 {
			t.Errorf("wait_for_text with a cursor 1000 bytes past the end of %s's output: %+v, want it refused or reset (not a cursor still past the end, offset %d of %d)", id, got, next.Offset, c.Offset)
		}
	}
}

func TestCaptureSinceAfterARespawnAnswersResetWithAReason(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, pane, s := f.srv, f.pane, f.s

	r, _ := s.since(map[string]any{"paneId": pane})
	old := paneFormat(srv, pane, "#{pane_pid}")
	srv.Must("respawn-pane", "-k", "-t", pane, "sh")
	if !tmuxtest.WaitFor(settle, func() bool { return paneFormat(srv, pane, "#{pane_pid}") != old }) {
		t.Fatalf("pane %s was not respawned", pane)
	}
	waitPrompt(t, srv, pane)

	reset, text := s.since(map[string]any{"cursor": r.Cursor})
	if !reset.Reset || reset.Reason == "" || reset.Cursor == "" || reset.Cursor == r.Cursor || reset.Lines != 0 {
		t.Errorf("capture_since with a cursor from before the respawn: %+v, want reset, a reason and a new cursor", reset)
	}
	if want := strings.Join(bareCapture(srv, pane), "\n"); text != want || reset.ScreenLines == 0 {
		t.Errorf("capture_since after the respawn: text %q (screenLines %d), want the current screen %q", text, reset.ScreenLines, want)
	}

	// The new cursor reads the new shell's output.
	tty := openTTY(t, srv, pane)
	writeTTY(t, tty, "\r\nAFTER-RESPAWN\r\n")
	cursor := reset.Cursor
	if got := readSince(t, s, &cursor, 2); got[len(got)-1] != "AFTER-RESPAWN" {
		t.Errorf("capture_since from the reset cursor: %q, want the end of the prompt line and the line written after", got)
	}
}

func TestCaptureSinceInAFullScreenProgramGivesTheScreen(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	srv, pane, s := f.srv, f.pane, f.s

	r, _ := s.since(map[string]any{"paneId": pane})
	srv.Must("send-keys", "-t", pane, `printf '\033[?1049h'; echo PA""INT-FULL; sleep 5`, "Enter")
	waitPane(t, srv, pane, "#{alternate_on}", "1")
	waitScreen(t, srv, pane, "PAINT-FULL", func(l []string) bool { return hasLine(l, "PAINT-FULL") })

	full, text := s.since(map[string]any{"cursor": r.Cursor})
	if !full.AlternateScreen || full.ScreenLines == 0 || full.MissedBytes != 0 {
		t.Errorf("capture_since in a full-screen program: %+v, want alternateScreen, the screen, nothing missed", full)
	}
	if want := strings.Join(bareCapture(srv, pane), "\n"); text != want {
		t.Errorf("capture_since in a full-screen program: text %q, want the screen %q", text, want)
	}
}

// ---- cancellation and progress ----

func TestCancelledWaitsReturnPromptlyAndLeaveNoChildProcess(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	pane, s := f.pane, f.s

	// Attach what waits need first, so the control clients are known.
	s.waitText(map[string]any{"paneId": pane, "patterns": []string{"never printed"}, "timeoutSeconds": 0.2})
	before := children(s.pid())

	cancelled := func(t *testing.T, name string, args map[string]any, begun func()) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			done <- err
		}()
		begun()
		cancel()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s cancelled: the call succeeded, want it cancelled", name)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("%s cancelled: the call had not returned after 2s", name)
		}
		var now []int
		if !tmuxtest.WaitFor(1500*time.Millisecond, func() bool {
			now = children(s.pid())
			return slices.Equal(now, before)
		}) {
			extra := newChildren(s.pid(), before)
			t.Errorf("after a cancelled %s tmcp's children are %v, want only its control clients %v; extra: %v", name, now, before, extra)
		}
	}
	t.Run("wait_for_channel", func(t *testing.T) {
		var waiter int
		cancelled(t, "wait_for_channel", map[string]any{"channel": "cancel-me", "timeoutSeconds": 30}, func() {
			waiter = channelWaiter(t, s.on(t), "cancel-me")
		})
		if !tmuxtest.WaitFor(1500*time.Millisecond, func() bool { return ended(waiter) }) {
			t.Errorf("the wait-for process %d of a cancelled wait_for_channel still runs: %q", waiter, cmdline(waiter))
		}
	})
	t.Run("wait_for_text", func(t *testing.T) {
		f.forget()
		cancelled(t, "wait_for_text", map[string]any{"paneId": pane, "patterns": []string{"never printed"}, "timeoutSeconds": 30}, func() {
			f.underway(t, pane)
		})
	})
	t.Run("wait_for_text across panes", func(t *testing.T) {
		other := newShellWindow(t, f.srv)
		f.forget()
		cancelled(t, "wait_for_text", map[string]any{"paneIds": []string{pane, other}, "mode": "all", "patterns": []string{"never printed"}, "timeoutSeconds": 30}, func() {
			f.underway(t, pane)
		})
	})
	// tmcp still serves waits on the pane.
	if r, _ := f.waitWhileWriting(map[string]any{"paneId": pane, "patterns": []string{"AFTER-CANCEL"}, "timeoutSeconds": 10}, "\r\nAFTER-CANCEL\r\n"); r.Outcome != "matched" {
		t.Errorf("a wait after the cancelled ones: %+v, want matched", r)
	}
}

func TestClientHangingUpDuringAChannelWaitLeavesNoProcess(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	s := startTMCPOwningStdin(t, srv, "")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_channel", Arguments: map[string]any{"channel": "hang-up", "timeoutSeconds": 60}})
	}()
	waiter := channelWaiter(t, s, "hang-up")
	s.stdin.Close()
	if !tmuxtest.WaitFor(3*time.Second, func() bool { return ended(s.pid()) }) {
		t.Errorf("tmcp still runs 3s after its client hung up during wait_for_channel")
	}
	if !tmuxtest.WaitFor(2*time.Second, func() bool { return ended(waiter) }) {
		t.Errorf("the wait-for process %d outlived tmcp: %q", waiter, cmdline(waiter))
	}
}

func TestLongWaitSendsProgressNotifications(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	pane := shellPane(t, srv)
	var mu sync.Mutex
	got := map[any][]*mcp.ProgressNotificationParams{}
	s := startTMCPWith(t, srv, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			got[req.Params.ProgressToken] = append(got[req.Params.ProgressToken], req.Params)
		},
	}, nil)

	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"wait_for_text", map[string]any{"paneId": pane, "patterns": []string{"never printed"}, "timeoutSeconds": 7}},
		{"wait_for_channel", map[string]any{"channel": "never-signalled", "timeoutSeconds": 7}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			t.Parallel()
			token := tc.tool + "-progress"
			params := &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args}
			params.SetProgressToken(token)
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			res, err := s.cs.CallTool(ctx, params)
			if err != nil {
				t.Fatalf("%s with a progress token: %v", tc.tool, err)
			}
			var r struct {
				Outcome string `json:"outcome"`
			}
			if decodeStructured(t, tc.tool, res, &r); r.Outcome != "timeout" {
				t.Errorf("%s: outcome %s, want timeout", tc.tool, r.Outcome)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got[token]) == 0 {
				t.Fatalf("a 7s %s with a progress token sent no progress notification", tc.tool)
			}
			prev := 0.0
			for _, p := range got[token] {
				if p.Progress <= prev {
					t.Errorf("%s: progress notification %+v: want progress rising above %v", tc.tool, p, prev)
				}
				prev = p.Progress
			}
		})
	}
}
