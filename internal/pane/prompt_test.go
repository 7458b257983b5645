package pane

import (
	"strings"
	"testing"
	"time"
)

// osc writes an OSC terminated by BEL.
func osc(payload string) string { return "\x1b]" + payload + "\a" }

// testNonce is the nonce of the shells the tests make up.
const testNonce = "5ecret0f7he5hell"

// sm writes a shell's mark: an OSC 133 that carries testNonce.
func sm(payload string) string { return osc(payload + ";tmcp_n=" + testNonce) }

func TestParseShellMark(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ShellMark
		ok   bool
	}{
		{"133;A", ShellMark{Kind: 'A'}, true},
		{"133;A;cl=m;aid=12", ShellMark{Kind: 'A'}, true},
		{"133;B", ShellMark{Kind: 'B'}, true},
		{"133;C", ShellMark{Kind: 'C'}, true},
		{"133;D;0", ShellMark{Kind: 'D', HasStatus: true}, true},
		{"133;D;130;aid=12", ShellMark{Kind: 'D', Status: 130, HasStatus: true}, true},
		{"133;D", ShellMark{Kind: 'D'}, true},
		{"133;D;;aid=1", ShellMark{Kind: 'D'}, true},
		{"133;D;7;tmcp_ms=1004", ShellMark{Kind: 'D', Status: 7, HasStatus: true, Took: 1004 * time.Millisecond, HasTook: true}, true},
		{"133;D;0;aid=3;tmcp_ms=0", ShellMark{Kind: 'D', HasStatus: true, HasTook: true}, true},
		{"133;D;0;tmcp_ms=-5", ShellMark{Kind: 'D', HasStatus: true}, true},
		{"133;D;2;tmcp_ms=9;tmcp_n=abc", ShellMark{Kind: 'D', Status: 2, HasStatus: true, Took: 9 * time.Millisecond, HasTook: true, Nonce: "abc"}, true},
		{"133;A;tmcp_cwd=file://h/a%3Bb;tmcp_n=abc", ShellMark{Kind: 'A', Host: "h", Dir: "/a;b", Nonce: "abc"}, true},
		{"133;B;tmcp_n=abc", ShellMark{Kind: 'B', Nonce: "abc"}, true},
		{"133;C;tmcp-0123:abc", ShellMark{}, false},
		{"133;D;0;tmcp_ms=1.5", ShellMark{Kind: 'D', HasStatus: true}, true},
		{"7;file://vm/tmp/a%20b%25%C3%A9", ShellMark{Kind: '7', Host: "vm", Dir: "/tmp/a b%é"}, true},
		{"7;file:///home/me", ShellMark{Kind: '7', Dir: "/home/me"}, true},
		{"7;kitty-shell-cwd://h/x", ShellMark{Kind: '7', Host: "h", Dir: "/x"}, true},
		// tmcp's own run_command markers carry the job's token last.
		{"133;C;tmcp-0123abcd", ShellMark{}, false},
		{"133;D;0;tmcp-0123abcd", ShellMark{}, false},
		{"133;P;k=i", ShellMark{}, false},
		{"133;", ShellMark{}, false},
		{"133;AB", ShellMark{}, false},
		{"0;title 133;A", ShellMark{}, false},
		{"7;http://h/x", ShellMark{}, false},
		{"7;%zz", ShellMark{}, false},
	} {
		got, ok := ParseShellMark(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseShellMark(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// trackerWant is what a tracker test checks; offsets are found in the
// input by the position just past the nth occurrence of a mark.
type trackerWant struct {
	marks, running, hasStatus bool
	drawn                     bool
	otherPrompt               bool // the last mark, a prompt's, carried another nonce
	status                    int
	cwd                       string
	outputStart, commandEnd   string // a mark's payload whose end is the offset; "" for -1
	outputStartN, commandEndN int    // which occurrence of it (0: the first)
}

func TestPromptTrackerFollowsMarks(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want trackerWant
	}{
		{"no marks", "$ ls\r\nfile\r\n$ ", trackerWant{}},
		{"at the prompt after a command",
			sm("133;A") + "$ " + sm("133;B") + "echo hi\r\n" + sm("133;C") + "hi\r\n" + sm("133;D;0") + osc("7;file://h/tmp") + sm("133;A;tmcp_cwd=file://h/tmp") + "$ ",
			trackerWant{marks: true, hasStatus: true, cwd: "/tmp", outputStart: "133;C", commandEnd: "133;D;0"}},
		{"running",
			sm("133;A") + "$ " + sm("133;B") + "make\r\n" + sm("133;C") + "cc -c x.c\r\n",
			trackerWant{marks: true, running: true, outputStart: "133;C", commandEnd: ""}},
		{"a terminal's marks with parameters",
			sm("133;A;cl=m;aid=5") + "$ " + sm("133;B") + sm("133;C;aid=5") + "x\r\n" + sm("133;D;3;aid=5") + sm("133;A;cl=m;aid=6"),
			trackerWant{marks: true, hasStatus: true, status: 3, outputStart: "133;C;aid=5", commandEnd: "133;D;3;aid=5"}},
		{"tmcp's job markers alone are no shell marks",
			"(printf ...)\r\n" + osc("133;C;tmcp-ab12") + "out\r\n" + osc("133;D;0;tmcp-ab12"),
			trackerWant{}},
		{"tmcp's job markers inside a shell's command",
			sm("133;C") + osc("133;C;tmcp-ab12") + "out\r\n" + osc("133;D;5;tmcp-ab12") + sm("133;D;0") + sm("133;A"),
			trackerWant{marks: true, hasStatus: true, status: 0, outputStart: "133;C", commandEnd: "133;D;0", drawn: true}},
		{"two emitters mark the same command once",
			sm("133;A") + sm("133;A") + "$ " + sm("133;C") + sm("133;C") + "x\r\n" + sm("133;D;2") + sm("133;D;2") + sm("133;A") + sm("133;A"),
			trackerWant{marks: true, hasStatus: true, status: 2, outputStart: "133;C", outputStartN: 1, commandEnd: "133;D;2", drawn: true}},
		{"a prompt ends a command that sent no D; a late D gives its status",
			sm("133;C") + "x\r\n" + sm("133;A") + sm("133;D;4") + "$ ",
			trackerWant{marks: true, hasStatus: true, status: 4, outputStart: "133;C", commandEnd: "133;A", drawn: true}},
		{"a prompt ends a command that sent no D",
			sm("133;C") + "x\r\n" + sm("133;A") + "$ ",
			trackerWant{marks: true, outputStart: "133;C", commandEnd: "133;A", drawn: true}},
		{"D of a command begun before the stream",
			"tail of output\r\n" + sm("133;D;1") + sm("133;A") + "$ ",
			trackerWant{marks: true, hasStatus: true, status: 1, commandEnd: "133;D;1", drawn: true}},
		{"D with no status",
			sm("133;C") + sm("133;D") + sm("133;A"),
			trackerWant{marks: true, outputStart: "133;C", commandEnd: "133;D", drawn: true}},
		{"ST terminator and percent-encoded directory, with A",
			"\x1b]7;file://vm/x\x1b\\" + "\x1b]133;A;tmcp_cwd=file://vm/a%20b;tmcp_n=" + testNonce + "\x1b\\",
			trackerWant{marks: true, cwd: "/a b", drawn: true}},
		{"a program's OSC 7 is not the shell's directory",
			sm("133;A;tmcp_cwd=file://vm/home") + osc("7;file://vm/etc"),
			trackerWant{marks: true, cwd: "/home", drawn: true}},
		{"marks without the nonce are a program's output",
			osc("133;A") + "$ " + osc("133;B") + osc("133;C") + "x\r\n" + osc("133;D;0") + osc("7;file://h/tmp"),
			trackerWant{}},
		{"marks with a guessed nonce are a program's output",
			sm("133;A") + sm("133;B") + "$ run\r\n" + sm("133;C") + "out\r\n" + osc("133;D;0;tmcp_n=guess") + osc("133;A;tmcp_n=guess") + osc("133;B;tmcp_n=guess"),
			trackerWant{marks: true, running: true, outputStart: "133;C", otherPrompt: true}},
		// A shell that marks where its prompt ends has drawn it at B, not A:
		// a line typed before B would be echoed twice.
		{"a prompt begun but not drawn, by a shell that marks B",
			sm("133;A") + "$ " + sm("133;B") + "true\r\n" + sm("133;C") + sm("133;D;0") + sm("133;A"),
			trackerWant{marks: true, hasStatus: true, outputStart: "133;C", commandEnd: "133;D;0"}},
		{"a prompt drawn, by a shell that marks B",
			sm("133;A") + "$ " + sm("133;B") + "true\r\n" + sm("133;C") + sm("133;D;0") + sm("133;A") + "$ " + sm("133;B"),
			trackerWant{marks: true, hasStatus: true, outputStart: "133;C", commandEnd: "133;D;0", drawn: true}},
		{"an ESC that is no ST ends the mark too",
			"\x1b]133;C;tmcp_n=" + testNonce + "\x1b[0mout\r\n",
			trackerWant{marks: true, running: true, outputStart: "133;C;tmcp_n=" + testNonce + "\x1b"}},
		{"cancelled and foreign sequences are no marks",
			"\x1b]133;C\x18" + osc("0;133;A") + "\x1b[133;Ax" + "\x1bP133;A\x1b\\",
			trackerWant{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole := NewPromptTracker(0)
			whole.SetNonce(testNonce)
			whole.Write([]byte(tc.in), time.Now())
			check(t, "whole", tc.in, whole.State(), tc.want)
			// Split at every byte: the same state.
			split := NewPromptTracker(0)
			split.SetNonce(testNonce)
			for i := 0; i < len(tc.in); i++ {
				split.Write([]byte{tc.in[i]}, time.Now())
			}
			check(t, "byte by byte", tc.in, split.State(), tc.want)
		})
	}
}

func check(t *testing.T, how, in string, got PromptState, w trackerWant) {
	t.Helper()
	end := func(mark string, n int) int64 {
		if mark == "" {
			return -1
		}
		off := 0
		for ; n >= 0; n-- {
			i := strings.Index(in[off:], "\x1b]"+mark)
			if i < 0 {
				t.Fatalf("test input lacks mark %q", mark)
			}
			off += i + 2 + len(mark)
		}
		// Past the rest of the mark (its nonce) and its terminator.
		for !strings.HasSuffix(mark, "\x1b") && off < len(in) && in[off] != '\a' && in[off] != '\x1b' {
			off++
		}
		if off < len(in) && in[off] == '\a' {
			off++
		}
		return int64(off)
	}
	want := PromptState{Marks: w.marks, Running: w.running, HasStatus: w.hasStatus, Status: w.status, Cwd: w.cwd, Drawn: w.drawn, OtherPrompt: w.otherPrompt,
		OutputStart: end(w.outputStart, w.outputStartN), CommandEnd: end(w.commandEnd, w.commandEndN), Offset: int64(len(in))}
	got.Started, got.Ended, got.Host = time.Time{}, time.Time{}, ""
	if got != want {
		t.Errorf("%s: state after %q\n got %+v\nwant %+v", how, in, got, want)
	}
}

func TestPromptTrackerTimesACommand(t *testing.T) {
	tr := NewPromptTracker(100)
	tr.SetNonce(testNonce)
	t0 := time.Now()
	tr.Write([]byte(sm("133;C")), t0)
	if st := tr.State(); !st.Running || !st.Started.Equal(t0) || st.OutputStart != 100+int64(len(sm("133;C"))) {
		t.Fatalf("after C: %+v", st)
	}
	t1 := t0.Add(time.Second)
	tr.Write([]byte(sm("133;C")+sm("133;D;7")), t1)
	st := tr.State()
	if st.Running || !st.Started.Equal(t0) || !st.Ended.Equal(t1) || st.Status != 7 {
		t.Fatalf("after a second C and D;7 a second later: %+v, want started %v ended %v", st, t0, t1)
	}
}

func TestStreamFollowsPromptMarks(t *testing.T) {
	s := NewStream("%1", 1, 64)
	s.SetShellNonce(testNonce)
	s.Write([]byte(sm("133;A") + "$ " + sm("133;C")))
	if st := s.Prompt(); !st.Marks || !st.Running {
		t.Fatalf("after A and C: %+v", st)
	}
	// More than the ring holds: the tracker still sees every byte.
	s.Write([]byte(strings.Repeat("x", 200) + sm("133;D;9")))
	if st := s.Prompt(); st.Running || st.Status != 9 || st.CommandEnd != s.End() {
		t.Fatalf("after D;9: %+v (stream end %d)", st, s.End())
	}
}

// BenchmarkPromptTrackerWrite measures the scan every stream write pays:
// coloured output with a mark now and then.
func BenchmarkPromptTrackerWrite(b *testing.B) {
	chunk := []byte(strings.Repeat("\x1b[1;32mok\x1b[0m   some/path/to/a/file.go\r\n", 200) + sm("133;D;0") + sm("133;A") + sm("133;C"))
	tr := NewPromptTracker(0)
	tr.SetNonce(testNonce)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		tr.Write(chunk, time.Time{})
	}
}

func TestATrackerKeepsTheRunTimeTheShellMeasured(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		took time.Duration
		has  bool
	}{
		{"from tmcp init's D", sm("133;C") + "out\r\n" + sm("133;D;0;tmcp_ms=1004"), 1004 * time.Millisecond, true},
		{"from a second emitter's D, the first giving none", sm("133;C") + sm("133;D;0") + sm("133;D;0;tmcp_ms=5"), 5 * time.Millisecond, true},
		{"the first emitter's, given twice", sm("133;C") + sm("133;D;0;tmcp_ms=7") + sm("133;D;0;tmcp_ms=9"), 7 * time.Millisecond, true},
		{"none from a D without it", sm("133;C") + sm("133;D;0"), 0, false},
		{"none for a command a prompt ended", sm("133;C") + sm("133;D;0;tmcp_ms=3") + sm("133;A") + sm("133;C") + sm("133;A"), 0, false},
	} {
		tr := NewPromptTracker(0)
		tr.SetNonce(testNonce)
		tr.Write([]byte(tc.in), time.Now())
		if st := tr.State(); st.Took != tc.took || st.HasTook != tc.has {
			t.Errorf("%s: took %v (%v), want %v (%v)", tc.name, st.Took, st.HasTook, tc.took, tc.has)
		}
	}
}

func TestATrackerBelievesHeldMarksOnceItLearnsTheirNonce(t *testing.T) {
	tr := NewPromptTracker(0)
	// A shell's first prompt, before tmcp knows its nonce, and a program's
	// marks with a guessed one.
	in := sm("133;A") + sm("133;B") + osc("133;C;tmcp_n=guess") + osc("133;D;9;tmcp_n=guess")
	tr.Write([]byte(in), time.Now())
	if st := tr.State(); st.Marks {
		t.Fatalf("state %+v before the nonce is known, want no marks believed", st)
	}
	if !tr.HeldUnknown() || tr.HeldUnknown() {
		t.Errorf("HeldUnknown: want true once, then false")
	}
	tr.SetNonce(testNonce)
	if st := tr.State(); !st.Marks || !st.Drawn || st.Running || st.HasStatus {
		t.Errorf("state %+v once the nonce is known, want the held prompt drawn and nothing of the guessed C and D", st)
	}
	if !tr.Holding() {
		t.Errorf("the guessed marks are no longer held, want them kept for a nonce still to learn")
	}
	// A second shell in the pane: its nonce joins the first's.
	tr.Write([]byte(osc("133;C;tmcp_n=inner")+"x\r\n"+osc("133;D;4;tmcp_n=inner")), time.Now())
	tr.SetNonce("inner")
	if st := tr.State(); st.Running || !st.HasStatus || st.Status != 4 {
		t.Errorf("state %+v after the inner shell's nonce is learned, want its command ended with 4", st)
	}
	tr.Write([]byte(sm("133;C")), time.Now())
	if st := tr.State(); !st.Running {
		t.Errorf("state %+v: the outer shell's C is no longer believed", st)
	}
}
