package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/mcpserver"
	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxtest"
	"github.com/tmcp/tmcp/internal/wait"
)

// Sizes of the output that must come back whole: a line of 1 MB, and
// 300 KB written without any newline. smallBound is a maxBytes they pass.
const (
	megabyteLine = 1_000_000
	noNewline    = 300_000
	smallBound   = 1000
)

// lineEnd ends every bigLine: a pattern at the very end of the line.
const lineEnd = "<THE-END>"

// matchedBytes bounds wait_for_text's matched field.
const matchedBytes = wait.MaxMatchedBytes

// bigLine returns n bytes of printable ASCII naming their own offsets
// ("0000000.0000008." ...) and ending in lineEnd, so that a cut, a split or
// a loss anywhere shows in a comparison.
func bigLine(n int) string {
	var b strings.Builder
	b.Grow(n + 16)
	for b.Len() < n-len(lineEnd) {
		fmt.Fprintf(&b, "%07d.", b.Len())
	}
	return b.String()[:n-len(lineEnd)] + lineEnd
}

// sizeCase is one output that must come back whole.
type sizeCase struct {
	name    string
	line    string
	newline bool // the line is ended by a newline
}

func sizeCases() []sizeCase {
	return []sizeCase{
		{name: "a 1 MB line", line: bigLine(megabyteLine), newline: true},
		{name: "300 KB without a newline", line: bigLine(noNewline)},
	}
}

// describe shortens a long text for a failure message.
func describe(s string) string {
	if len(s) <= 80 {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%d bytes %q...%q", len(s), s[:30], s[len(s)-30:])
}

// checkTail checks that got is the last bound bytes of line.
func checkTail(t *testing.T, what, got, line string, bound int) {
	t.Helper()
	if want := line[len(line)-bound:]; got != want {
		t.Errorf("%s within maxBytes %d: %s, want the line's last %d bytes %s", what, bound, describe(got), bound, describe(want))
	}
}

func TestRunCommandReturnsALongLineWholeWithinTheByteBound(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	for _, tc := range sizeCases() {
		t.Run(tc.name, func(t *testing.T) {
			s := s.on(t)
			pane := newShellWindow(t, srv)
			file := filepath.Join(t.TempDir(), "out")
			content := tc.line
			if tc.newline {
				content += "\n"
			}
			if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			r, text := s.runCmd(map[string]any{"paneId": pane, "command": "cat " + file, "timeoutSeconds": 30,
				"maxBytes": mcpserver.MaxBytesCeiling})
			if !r.Finished || status(r.ExitStatus) != "0" {
				t.Fatalf("run_command cat of %s on %s: %+v, want finished with 0", tc.name, pane, r)
			}
			if text != tc.line || r.Truncated || r.TotalLines != 1 || r.TotalBytes != len(tc.line)+1 {
				t.Errorf("run_command within maxBytes %d: output %s, %+v; want the line whole, 1 line of %d bytes, not truncated",
					mcpserver.MaxBytesCeiling, describe(text), r, len(tc.line)+1)
			}
			// get_job reads the same job within a smaller bound.
			g, text := s.getJob(map[string]any{"jobId": r.JobID, "maxBytes": smallBound})
			checkTail(t, "get_job", text, tc.line, smallBound)
			if !g.Truncated || g.DroppedBytes != len(tc.line)-smallBound || g.DroppedLines != 0 {
				t.Errorf("get_job within maxBytes %d: %+v, want truncated, %d bytes and 0 lines dropped", smallBound, g, len(tc.line)-smallBound)
			}
		})
	}
}

func TestCaptureSinceReturnsALongLineWholeWithinTheByteBound(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	for _, tc := range sizeCases() {
		t.Run(tc.name, func(t *testing.T) {
			s := s.on(t)
			pane := newShellWindow(t, srv)
			start, _ := s.since(map[string]any{"paneId": pane})
			tty := openTTY(t, srv, pane)
			out := tc.line
			if tc.newline {
				out += "\n"
			}
			writeTTY(t, tty, out)
			// got returns the line as capture_since reports it, complete
			// or as a partial one, and whether all of it has arrived.
			got := func(r sinceOut, text string) (string, bool) {
				if tc.newline {
					return text, r.Lines == 1
				}
				return r.Partial, len(r.Partial) >= len(tc.line) || r.Lines > 0
			}
			var r sinceOut
			var text, line string
			ok := tmuxtest.WaitFor(20*time.Second, func() bool {
				r, text = s.since(map[string]any{"cursor": start.Cursor, "maxBytes": mcpserver.MaxBytesCeiling})
				var done bool
				line, done = got(r, text)
				return done
			})
			if !ok || line != tc.line || r.Truncated || r.MissedBytes != 0 {
				t.Fatalf("capture_since on %s within maxBytes %d: %s, %+v (arrived: %v); want the line whole, not truncated",
					pane, mcpserver.MaxBytesCeiling, describe(line), r, ok)
			}
			small, text := s.since(map[string]any{"cursor": start.Cursor, "maxBytes": smallBound})
			line, _ = got(small, text)
			checkTail(t, "capture_since", line, tc.line, smallBound)
			if !small.Truncated || small.DroppedBytes != len(tc.line)-smallBound {
				t.Errorf("capture_since within maxBytes %d: %+v, want truncated with %d bytes dropped", smallBound, small, len(tc.line)-smallBound)
			}
		})
	}
}

func TestWaitForTextMatchesAtTheEndOfALongLineAndReturnsItWhole(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	for _, tc := range sizeCases() {
		for _, bound := range []int{mcpserver.MaxBytesCeiling, smallBound} {
			t.Run(fmt.Sprintf("%s within %d bytes", tc.name, bound), func(t *testing.T) {
				s := s.on(t)
				pane := newShellWindow(t, srv)
				// From a cursor, so the line counts whenever the wait
				// begins relative to the write.
				start, _ := s.since(map[string]any{"paneId": pane})
				ch := s.async("wait_for_text", map[string]any{"paneId": pane, "patterns": []string{lineEnd},
					"cursor": start.Cursor, "timeoutSeconds": 20, "maxBytes": bound})
				out := tc.line
				if tc.newline {
					out += "\n"
				}
				writeTTY(t, openTTY(t, srv, pane), out)
				r, text := decodeText[waitTextOut](t, "wait_for_text", awaitCall(t, "wait_for_text", ch).res)
				tail, _ := checkWaitText(t, r, text)
				if r.Outcome != "matched" {
					t.Fatalf("wait_for_text for %q at the end of %s: outcome %s (%s), want matched", lineEnd, tc.name, r.Outcome, r.Reason)
				}
				// matched is the line up to the match, within 512 bytes;
				// the tail carries the line.
				if want := tc.line[len(tc.line)-matchedBytes:]; r.Matched != want {
					t.Errorf("wait_for_text matched %s, want the line's last %d bytes", describe(r.Matched), matchedBytes)
				}
				if len(tail) == 0 {
					t.Fatalf("wait_for_text: no tail, want the line")
				}
				if bound < len(tc.line) {
					checkTail(t, "wait_for_text tail", tail[len(tail)-1], tc.line, bound)
					if !r.Truncated || r.DroppedBytes < len(tc.line)-bound {
						t.Errorf("wait_for_text within maxBytes %d: %+v, want the truncation stated", bound, r)
					}
					return
				}
				if tail[len(tail)-1] != tc.line || r.Truncated {
					t.Errorf("wait_for_text tail ends with %s (%+v), want the whole line, not truncated", describe(tail[len(tail)-1]), r)
				}
			})
		}
	}
}

// TestCapturePaneReturnsALongLineFromHistoryWhole: capture_pane reads what
// tmux holds, joining wrapped rows. With history: true a line that the
// history holds whole comes back whole; the screen alone shows only the
// end of a line longer than the screen.
func TestCapturePaneReturnsALongLineFromHistoryWhole(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	// 1 MB at 80 columns is 12,500 rows: more than tmux's default history.
	srv.Must("set-option", "-g", "history-limit", "50000")
	s := startTMCP(t, srv, "")
	for _, tc := range sizeCases() {
		t.Run(tc.name, func(t *testing.T) {
			s := s.on(t)
			pane := newShellWindow(t, srv)
			out := "\n" + tc.line // on a row of its own, not after the prompt
			if tc.newline {
				out += "\n"
			}
			writeTTY(t, openTTY(t, srv, pane), out)
			lastLine := func(text string) string {
				lines := strings.Split(text, "\n")
				return lines[len(lines)-1]
			}
			var r capturePaneResult
			var text string
			if !tmuxtest.WaitFor(20*time.Second, func() bool {
				text = paneText(t, "capture_pane", s.ok("capture_pane", map[string]any{"paneId": pane, "history": true,
					"maxBytes": mcpserver.MaxBytesCeiling}, &r))
				return strings.HasSuffix(text, lineEnd)
			}) {
				t.Fatalf("capture_pane with history of %s never ended with the line: %s", pane, describe(text))
			}
			if got := lastLine(text); got != tc.line {
				t.Errorf("capture_pane with history within maxBytes %d: last line %s, want the line whole (%+v)", mcpserver.MaxBytesCeiling, describe(got), r)
			}
			text = paneText(t, "capture_pane", s.ok("capture_pane", map[string]any{"paneId": pane, "history": true, "maxBytes": smallBound}, &r))
			checkTail(t, "capture_pane with history", text, tc.line, smallBound)
			if !r.Truncated || r.DroppedBytes < len(tc.line)-smallBound {
				t.Errorf("capture_pane with history within maxBytes %d: %+v, want truncated with at least %d bytes dropped", smallBound, r, len(tc.line)-smallBound)
			}
			// The screen alone: the end of the line, at most a screenful.
			text = paneText(t, "capture_pane", s.ok("capture_pane", map[string]any{"paneId": pane, "maxBytes": mcpserver.MaxBytesCeiling}, &r))
			got := lastLine(text)
			if screen := tmuxtest.Width * tmuxtest.Height; got == "" || len(got) > screen || !strings.HasSuffix(tc.line, got) {
				t.Errorf("capture_pane of the screen: last line %s, want the end of the line, at most a screenful (%d bytes)", describe(got), screen)
			}
		})
	}
}

// capturePaneResult is capture_pane's fields.
type capturePaneResult struct {
	PaneID string `json:"paneId"`
	Lines  int    `json:"lines"`
	truncation
}

// TestCaptureSinceCountsExactlyTheBytesTheRingNoLongerHolds: output
// written after a cursor that outruns the stream's byte ring comes back as
// its last bytes, with missedBytes saying exactly how many came before.
func TestCaptureSinceCountsExactlyTheBytesTheRingNoLongerHolds(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	id := shellPane(t, srv)
	s := startTMCP(t, srv, "")
	start, _ := s.since(map[string]any{"paneId": id})

	const lines = 3 * pane.DefaultRingSize / 100
	row := strings.Repeat("r", 98) // 100 bytes a row once the terminal writes "\n" as "\r\n"
	out := strings.Repeat(row+"\n", lines) + "LAST\n"
	writeTTY(t, openTTY(t, srv, id), out)
	delivered := lines*100 + len("LAST\r\n")

	var r sinceLossOut
	var text string
	if !tmuxtest.WaitFor(20*time.Second, func() bool {
		r, text = s.sinceLoss(map[string]any{"cursor": start.Cursor, "maxLines": 2})
		return strings.HasSuffix(text, "\nLAST")
	}) {
		t.Fatalf("capture_since on %s never ended with LAST: %+v %s", id, r, describe(text))
	}
	if want := int64(delivered - pane.DefaultRingSize); r.MissedBytes != want {
		t.Errorf("capture_since after %d bytes through a ring of %d: missedBytes %d, want %d", delivered, pane.DefaultRingSize, r.MissedBytes, want)
	}
	if text != row+"\nLAST" || !r.Truncated || r.OutputLost {
		t.Errorf("capture_since within 2 lines: %+v %s, want the last row and LAST, truncated, no output lost by tmux", r, describe(text))
	}
}

// TestLossIsReportedEndToEnd stops tmcp while a job floods its pane, long
// enough for tmux to pause the pane's output to it (pause-after): tmux
// drops what the pane writes meanwhile. The job and capture_since say so.
// The job has no tape (TMCP_TAPES=off), which would have kept every byte.
func TestLossIsReportedEndToEnd(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	id := shellPane(t, srv)
	s := startTMCPWithEnv(t, srv, "", []string{"TMCP_TAPES=off"})
	start, _ := s.since(map[string]any{"paneId": id})

	stop := filepath.Join(t.TempDir(), "stop")
	flood := fmt.Sprintf("while [ ! -e %s ]; do seq 1 10000; done; echo FLOOD-OVER", stop)
	r, _ := s.runCmd(map[string]any{"paneId": id, "command": flood, "timeoutSeconds": 0.5})
	if !r.Running || r.JobID == "" {
		t.Fatalf("run_command of a flood for 0.5s: %+v, want a running job", r)
	}
	cont := s.stop()
	// tmux pauses a pane only once its output has waited pause-after
	// (10 s for tmcp's clients) unread, and the pane writes again: the
	// stop must outlast it.
	time.Sleep(tmuxPauseAfter + 2*time.Second)
	cont()

	var j jobOut
	if !tmuxtest.WaitFor(20*time.Second, func() bool {
		j, _ = s.getJob(map[string]any{"jobId": r.JobID})
		return j.OutputLost
	}) {
		t.Fatalf("get_job after tmcp was stopped for %v during a flood: %+v, want outputLost", tmuxPauseAfter+2*time.Second, j)
	}
	// The flood goes on past the ring, so capture_since from before it
	// misses bytes too, and counts them.
	if !tmuxtest.WaitFor(30*time.Second, func() bool {
		j, _ = s.getJob(map[string]any{"jobId": r.JobID})
		return j.TotalBytes > pane.DefaultRingSize*5/4
	}) {
		t.Fatalf("get_job: %+v, want the flood past %d bytes", j, pane.DefaultRingSize*5/4)
	}
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	j, text := s.getJob(map[string]any{"jobId": r.JobID, "timeoutSeconds": 20, "maxLines": 1})
	if !j.Finished || !j.OutputLost || text != "FLOOD-OVER" {
		t.Errorf("get_job once the flood ended: %+v %s, want finished with FLOOD-OVER, outputLost", j, describe(text))
	}
	since, _ := s.sinceLoss(map[string]any{"cursor": start.Cursor, "maxLines": 1})
	if !since.OutputLost || since.MissedBytes <= 0 {
		t.Errorf("capture_since from before the flood: %+v, want outputLost and the bytes the ring no longer holds", since)
	}
	t.Logf("lost: job %+v; capture_since %+v", j, since)
}

// TestAJobWhoseEndTmuxDroppedEndsWithItsLastLines stops tmcp while a job
// floods its pane and then writes slowly, long enough for tmux to pause
// the pane's output to tmcp and for the job to end meanwhile: its last
// lines and its end mark are dropped from the stream. With its tape, the
// job keeps every line and its status; with none (TMCP_TAPES=off), it
// still reports the status its shell recorded, and its last lines from the
// pane's history, not the lines it had read before the drop.
func TestAJobWhoseEndTmuxDroppedEndsWithItsLastLines(t *testing.T) {
	t.Parallel()
	for _, tapes := range []bool{true, false} {
		t.Run(fmt.Sprintf("tapes %v", tapes), func(t *testing.T) {
			t.Parallel()
			srv := tmuxtest.New(t)
			id := shellPane(t, srv)
			env := []string{"TMCP_TAPES=off"}
			if tapes {
				env = []string{"TMCP_TAPES=on"}
			}
			s := startTMCPWithEnv(t, srv, "", env)

			// The flood fills what lies between tmux and tmcp; the slow lines
			// that follow make tmux look at the age of what waits, and pause.
			writes := tmuxPauseAfter + 3*time.Second
			cmd := fmt.Sprintf("sleep 1; seq 1 200000; n=0; end=$(($(date +%%s) + %d)); "+
				"while [ $(date +%%s) -lt $end ]; do n=$((n+1)); echo line-$n; sleep 0.05; done; echo TAIL-END $n; exit 3", int(writes/time.Second))
			r, _ := s.runCmd(map[string]any{"paneId": id, "command": cmd, "timeoutSeconds": 0.3})
			if !r.Running || r.JobID == "" {
				t.Fatalf("run_command for 0.3s: %+v, want a running job", r)
			}
			cont := s.stop()
			time.Sleep(1*time.Second + writes + 3*time.Second) // past the job's end
			cont()

			j, text := s.getJob(map[string]any{"jobId": r.JobID, "timeoutSeconds": 20})
			if !j.Finished || j.ExitStatus == nil || *j.ExitStatus != 3 || j.OutputLost == tapes {
				t.Fatalf("get_job of a job that ended while tmux dropped its output: %+v %s, want finished with status 3, outputLost %v", j, describe(text), !tapes)
			}
			lines := strings.Split(text, "\n")
			last := lines[len(lines)-1]
			n, ok := strings.CutPrefix(last, "TAIL-END ")
			if !ok || len(lines) < 3 || lines[len(lines)-2] != "line-"+n {
				t.Fatalf("get_job: %+v %s, want the job's last lines, line-N then TAIL-END N", j, describe(text))
			}
			count, _ := strconv.Atoi(n)
			switch {
			case tapes && j.TotalLines != 200000+count+1:
				t.Errorf("get_job: %d lines, want all %d (seq's, %d line-N and TAIL-END)", j.TotalLines, 200000+count+1, count)
			case !tapes && !strings.Contains(j.Reason, "history"):
				t.Errorf("get_job: reason %q, want the last lines said to come from the pane's history", j.Reason)
			}
			t.Logf("reason %q; %d lines, the last %q", j.Reason, j.TotalLines, lines[max(len(lines)-3, 0):])
		})
	}
}

// stop stops the tmcp process (SIGSTOP) and returns what continues it,
// which the test's end does too.
func (s *session) stop() (cont func()) {
	s.t.Helper()
	if err := syscall.Kill(s.pid(), syscall.SIGSTOP); err != nil {
		s.t.Fatal(err)
	}
	cont = func() { _ = syscall.Kill(s.pid(), syscall.SIGCONT) }
	s.t.Cleanup(cont)
	return cont
}

// tmuxPauseAfter is how long tmux lets a pane's output wait for tmcp
// before it pauses the pane and drops what follows.
const tmuxPauseAfter = tmux.PauseAfterSeconds * time.Second

// sinceLossOut is capture_since's fields with the loss tmux reported.
type sinceLossOut struct {
	sinceOut
	OutputLost bool `json:"outputLost"`
}

// sinceLoss calls capture_since, which must succeed.
func (s *session) sinceLoss(args map[string]any) (sinceLossOut, string) {
	s.t.Helper()
	return decodeText[sinceLossOut](s.t, "capture_since", s.call("capture_since", args))
}

// A job's tape never keeps a dead pane on screen: a pane whose shell dies
// while tmcp is stopped, after printing far more than a pipe holds, is
// freed by tmux at once, as with no tape, and tmcp, continued, still
// reports every line of the job from its tape.
func TestAPaneWhoseShellDiesWhileTmcpIsStoppedIsFreedAtOnce(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	id := newShellWindow(t, srv)
	s := startTMCPWithEnv(t, srv, "", []string{"TMCP_TAPES=on"})
	r, _ := s.runCmd(map[string]any{"paneId": id, "command": "sleep 1; seq 1 200000; kill -9 $$", "timeoutSeconds": 0.3})
	if !r.Running || r.JobID == "" {
		t.Fatalf("run_command for 0.3s: %+v, want a running job", r)
	}
	cont := s.stop()
	gone := func() bool {
		return !slices.Contains(strings.Fields(tmuxOne(srv, "list-panes", "-a", "-F", "#{pane_id}")), id)
	}
	if !tmuxtest.WaitFor(10*time.Second, gone) {
		cont()
		t.Fatalf("pane %s still stands 10 s into the job while tmcp is stopped (its shell printed 200000 lines and died after 1 s)", id)
	}
	cont()
	j, text := s.getJob(map[string]any{"jobId": r.JobID, "timeoutSeconds": 20})
	lines, total := strings.Split(text, "\n"), j.TotalLines
	if lines[len(lines)-1] == "Killed" { // the word of the shell that ran the pane's shell
		lines, total = lines[:len(lines)-1], total-1
	}
	if !j.Finished || !j.PaneDied || j.OutputLost || total != 200000 || lines[len(lines)-1] != "200000" {
		t.Fatalf("get_job of the job whose pane died while tmcp was stopped: %+v %s, want finished, paneDied, nothing lost, all 200000 lines", j, describe(text))
	}
}

// tapeCopiers returns the processes whose command line names a tape of
// tmcp pid: the pipe's commands of its tapes, and their dd.
func tapeCopiers(t *testing.T, pid int) []string {
	t.Helper()
	mark := "tmcp-tapes-" + strconv.Itoa(pid) + "-"
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), mark) {
			found = append(found, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// A killed tmcp's tapes stop copying at once, though tmux still holds
// their pipes open: no file of a tmcp that is gone keeps filling, and tmux
// lets the pane's pipe go at the pane's next write. The next tmcp runs
// there as before.
func TestAKilledTmcpsTapesStopCopying(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	id := newShellWindow(t, srv)
	s := startTMCP(t, srv, "")
	pid := s.pid()
	if r, text := s.runCmd(map[string]any{"paneId": id, "command": "echo taped", "timeoutSeconds": 10}); text != "taped" || status(r.ExitStatus) != "0" {
		t.Fatalf("run_command: %+v %q", r, text)
	}
	if copiers := tapeCopiers(t, pid); len(copiers) == 0 || paneFormat(srv, id, "#{pane_pipe}") != "1" {
		t.Fatalf("no tape open after the run (it stays for the next): copiers %q, pane_pipe %s", copiers, paneFormat(srv, id, "#{pane_pipe}"))
	}
	killTMCPAndItsClients(t, s)
	var copiers []string
	if !tmuxtest.WaitFor(3*time.Second, func() bool {
		copiers = tapeCopiers(t, pid)
		return len(copiers) == 0
	}) {
		t.Errorf("the killed tmcp's tapes still copy 3 s after it died: %q", copiers)
	}
	srv.Must("send-keys", "-t", id, "echo written", "Enter")
	if !tmuxtest.WaitFor(3*time.Second, func() bool { return paneFormat(srv, id, "#{pane_pipe}") == "0" }) {
		t.Errorf("tmux still pipes pane %s after it wrote, with the killed tmcp's tape stopped", id)
	}
	next := startTMCP(t, srv, "")
	if r, text := next.runCmd(map[string]any{"paneId": id, "command": "echo next", "timeoutSeconds": 10}); text != "next" || status(r.ExitStatus) != "0" {
		t.Errorf("run_command from the next tmcp: %+v %q", r, text)
	}
}
