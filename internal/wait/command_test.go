package wait

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
)

func osc(payload string) string { return "\x1b]" + payload + "\a" }

// TestCommandWaitReadsTheCommandBetweenItsMarks feeds a wait for a
// command, at a prompt, the output of several emitters, in one piece and
// byte by byte.
func TestCommandWaitReadsTheCommandBetweenItsMarks(t *testing.T) {
	prompt := sm("133;A") + "$ " + sm("133;B")
	for _, tc := range []struct {
		name    string
		in      string
		ended   bool
		status  string // "absent" for none
		lines   string
		partial bool
		rest    string // what follows the cursor
	}{
		{"nothing ran", prompt, false, "absent", "", false, ""},
		{"a command", prompt + "ls\r\n" + sm("133;C") + "a\r\nb\r\n" + sm("133;D;0") + osc("7;file://h/x") + prompt,
			true, "0", "a\nb", false, osc("7;file://h/x") + prompt},
		{"an unfinished last line", prompt + sm("133;C") + "a\r\nno newline" + sm("133;D;1"),
			true, "1", "a\nno newline", false, ""},
		{"zsh's PROMPT_SP blanks after the output", prompt + sm("133;C") + "a\r\n" + "\x1b[7m#\x1b[27m" + strings.Repeat(" ", 79) + "\r \r" + sm("133;D;1"),
			true, "1", "a", false, ""},
		{"the first of two commands", prompt + sm("133;C") + "one\r\n" + sm("133;D;3") + prompt + sm("133;C") + "two\r\n" + sm("133;D;4"),
			true, "3", "one", false, prompt + sm("133;C") + "two\r\n" + sm("133;D;4")},
		{"a terminal's marks with parameters", sm("133;A;cl=m;aid=9") + "$ " + sm("133;C;aid=9") + "x\r\n" + sm("133;D;5;aid=9"),
			true, "5", "x", false, ""},
		{"two emitters", prompt + sm("133;C") + sm("133;C") + "x\r\n" + sm("133;D;6") + sm("133;D;6") + prompt,
			true, "6", "x", false, prompt},
		{"tmcp's job markers inside", prompt + sm("133;C") + osc("133;C;tmcp-1f") + "x\r\n" + osc("133;D;9;tmcp-1f") + sm("133;D;0"),
			true, "0", "x", false, ""},
		{"a prompt ends it, a late D gives the status", sm("133;C") + "x\r\n" + sm("133;A") + sm("133;D;8") + "$ ",
			true, "8", "x", false, "$ "},
		{"a prompt ends it with no status", sm("133;C") + "x\r\n" + sm("133;A") + "$ ",
			true, "absent", "x", false, "$ "},
		{"a command begun before the wait saw it", "tail\r\nlast" + sm("133;D;2") + prompt,
			true, "2", "tail\nlast", true, prompt},
		{"a second emitter's D, late, after an end seen before the wait", "$ " + sm("133;D;6") + prompt,
			false, "absent", "", false, ""},
		{"still running", prompt + sm("133;C") + "x\r\npart", false, "absent", "x", false, ""},
		{"marks a program printed are its output", prompt + sm("133;C") + "x\r\n" + osc("133;D;3") + osc("133;A") + osc("133;D;4;tmcp_n=guess") + "y\r\n" + sm("133;D;0"),
			true, "0", "x\ny", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, how := range []string{"whole", "byte by byte"} {
				w := &commandWait{req: CommandRequest{PaneID: "%1", MaxLines: 100, MaxBytes: 1000},
					tail: pane.NewTailBuffer(100, 1000), dec: pane.NewDecoder(0), tr: pane.NewPromptTracker(0), shellsMark: believed}
				if strings.Contains(tc.name, "seen before the wait") {
					// As WaitForCommand seeds it when the stream saw the end.
					w.tr.Mark(pane.ShellMark{Kind: 'D', Status: 6, HasStatus: true}, 0, time.Now())
				}
				ended := false
				if how == "whole" {
					ended = w.consume([]byte(tc.in))
				} else {
					for i := 0; i < len(tc.in) && !ended; i++ {
						ended = w.consume([]byte{tc.in[i]})
					}
				}
				r := w.finish(pane.NewStream("%1", 1, 0), time.Now())
				status := "absent"
				if r.ExitStatus != nil {
					status = strconv.Itoa(*r.ExitStatus)
				}
				lines := r.Lines
				want := tc.status
				if how != "whole" && strings.Contains(tc.name, "late D") {
					// Only a D in the same piece of output as the A is read.
					want = "absent"
				}
				if ended != tc.ended || status != want || strings.Join(lines, "\n") != tc.lines || r.Partial != tc.partial {
					t.Errorf("%s: ended %v status %s lines %q partial %v; want %v %s %q %v", how, ended, status, lines, r.Partial, tc.ended, want, tc.lines, tc.partial)
				}
				if how == "whole" && ended {
					if rest := tc.in[w.endAt:]; rest != tc.rest {
						t.Errorf("after the end: %q, want %q", rest, tc.rest)
					}
				}
			}
		})
	}
}

func TestReportedEnds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	type report struct {
		pane       string
		generation uint64
		offset     int64
		at         time.Time
	}
	cases := []struct {
		name    string
		reports []report
		pane    string
		gen     uint64
		asOf    time.Time
		want    int64
		wantOK  bool
	}{
		{"reported before the call", []report{{"%1", 1, 100, t0}}, "%1", 1, t0.Add(time.Millisecond), 100, true},
		{"reported after the call", []report{{"%1", 1, 100, t0}}, "%1", 1, t0, 0, false},
		{"another generation", []report{{"%1", 1, 100, t0}}, "%1", 2, t0.Add(time.Second), 0, false},
		{"another pane", []report{{"%1", 1, 100, t0}}, "%2", 1, t0.Add(time.Second), 0, false},
		{"an earlier end does not replace a later", []report{{"%1", 1, 100, t0}, {"%1", 1, 50, t0}}, "%1", 1, t0.Add(time.Second), 100, true},
		{"a later end replaces", []report{{"%1", 1, 100, t0}, {"%1", 1, 150, t0}}, "%1", 1, t0.Add(time.Second), 150, true},
		{"kept a minute", []report{{"%1", 1, 100, t0}, {"%2", 1, 7, t0.Add(reportedEndKept)}}, "%1", 1, t0.Add(2 * reportedEndKept), 100, true},
		{"dropped after", []report{{"%1", 1, 100, t0}, {"%2", 1, 7, t0.Add(reportedEndKept + time.Second)}}, "%1", 1, t0.Add(2 * reportedEndKept), 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var e reportedEnds
			for _, r := range tc.reports {
				e.noteAt(r.pane, r.generation, r.offset, r.at)
			}
			got, ok := e.before(tc.pane, tc.gen, tc.asOf)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("before(%s, %d) = %d, %v; want %d, %v", tc.pane, tc.gen, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestACommandsDurationIsTimedAsItsMarksWereWritten: a wait that reads a
// command's C late (here, with its D, in one piece) times the command as
// the stream timed the marks when they came, from when tmux had them.
func TestACommandsDurationIsTimedAsItsMarksWereWritten(t *testing.T) {
	start, end := sm("133;C")+"a\r\n", sm("133;D;0")
	stream := pane.NewStream("%1", 1, 0)
	stream.SetShellNonce(testNonce)
	stream.WriteAged([]byte(start), 20*time.Millisecond) // tmux held the C 20 ms
	time.Sleep(100 * time.Millisecond)
	stream.Write([]byte(end))
	w := &commandWait{req: CommandRequest{PaneID: "%1", MaxLines: 100, MaxBytes: 1000},
		tail: pane.NewTailBuffer(100, 1000), dec: pane.NewDecoder(0), tr: pane.NewPromptTracker(0), shellsMark: believed}
	if !w.consume([]byte(start + end)) {
		t.Fatal("the command did not end at its D")
	}
	if r := w.finish(stream, time.Now()); r.Duration < 120*time.Millisecond || r.Duration > time.Second {
		t.Errorf("duration %v, want the 100 ms between the writes and the 20 ms tmux held the C", r.Duration)
	}
}
