package pane

import (
	"strings"
	"testing"
	"time"
)

// osc writes an OSC terminated by BEL.
func osc(payload string) string { return "\x1b]" + payload + "\a" }

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
			osc("133;A") + "$ " + osc("133;B") + "echo hi\r\n" + osc("133;C") + "hi\r\n" + osc("133;D;0") + osc("7;file://h/tmp") + osc("133;A") + "$ ",
			trackerWant{marks: true, hasStatus: true, cwd: "/tmp", outputStart: "133;C", commandEnd: "133;D;0"}},
		{"running",
			osc("133;A") + "$ " + osc("133;B") + "make\r\n" + osc("133;C") + "cc -c x.c\r\n",
			trackerWant{marks: true, running: true, outputStart: "133;C", commandEnd: ""}},
		{"a terminal's marks with parameters",
			osc("133;A;cl=m;aid=5") + "$ " + osc("133;B") + osc("133;C;aid=5") + "x\r\n" + osc("133;D;3;aid=5") + osc("133;A;cl=m;aid=6"),
			trackerWant{marks: true, hasStatus: true, status: 3, outputStart: "133;C;aid=5", commandEnd: "133;D;3;aid=5"}},
		{"tmcp's job markers alone are no shell marks",
			"(printf ...)\r\n" + osc("133;C;tmcp-ab12") + "out\r\n" + osc("133;D;0;tmcp-ab12"),
			trackerWant{}},
		{"tmcp's job markers inside a shell's command",
			osc("133;C") + osc("133;C;tmcp-ab12") + "out\r\n" + osc("133;D;5;tmcp-ab12") + osc("133;D;0") + osc("133;A"),
			trackerWant{marks: true, hasStatus: true, status: 0, outputStart: "133;C", commandEnd: "133;D;0", drawn: true}},
		{"two emitters mark the same command once",
			osc("133;A") + osc("133;A") + "$ " + osc("133;C") + osc("133;C") + "x\r\n" + osc("133;D;2") + osc("133;D;2") + osc("133;A") + osc("133;A"),
			trackerWant{marks: true, hasStatus: true, status: 2, outputStart: "133;C", outputStartN: 1, commandEnd: "133;D;2", drawn: true}},
		{"a prompt ends a command that sent no D; a late D gives its status",
			osc("133;C") + "x\r\n" + osc("133;A") + osc("133;D;4") + "$ ",
			trackerWant{marks: true, hasStatus: true, status: 4, outputStart: "133;C", commandEnd: "133;A", drawn: true}},
		{"a prompt ends a command that sent no D",
			osc("133;C") + "x\r\n" + osc("133;A") + "$ ",
			trackerWant{marks: true, outputStart: "133;C", commandEnd: "133;A", drawn: true}},
		{"D of a command begun before the stream",
			"tail of output\r\n" + osc("133;D;1") + osc("133;A") + "$ ",
			trackerWant{marks: true, hasStatus: true, status: 1, commandEnd: "133;D;1", drawn: true}},
		{"D with no status",
			osc("133;C") + osc("133;D") + osc("133;A"),
			trackerWant{marks: true, outputStart: "133;C", commandEnd: "133;D", drawn: true}},
		{"ST terminator and percent-encoded directory",
			"\x1b]7;file://vm/a%20b\x1b\\" + "\x1b]133;A\x1b\\",
			trackerWant{marks: true, cwd: "/a b", drawn: true}},
		// A shell that marks where its prompt ends has drawn it at B, not A:
		// a line typed before B would be echoed twice.
		{"a prompt begun but not drawn, by a shell that marks B",
			osc("133;A") + "$ " + osc("133;B") + "true\r\n" + osc("133;C") + osc("133;D;0") + osc("133;A"),
			trackerWant{marks: true, hasStatus: true, outputStart: "133;C", commandEnd: "133;D;0"}},
		{"a prompt drawn, by a shell that marks B",
			osc("133;A") + "$ " + osc("133;B") + "true\r\n" + osc("133;C") + osc("133;D;0") + osc("133;A") + "$ " + osc("133;B"),
			trackerWant{marks: true, hasStatus: true, outputStart: "133;C", commandEnd: "133;D;0", drawn: true}},
		{"an ESC that is no ST ends the mark too",
			"\x1b]133;C\x1b[0mout\r\n",
			trackerWant{marks: true, running: true, outputStart: "133;C\x1b"}},
		{"cancelled and foreign sequences are no marks",
			"\x1b]133;C\x18" + osc("0;133;A") + "\x1b[133;Ax" + "\x1bP133;A\x1b\\",
			trackerWant{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole := NewPromptTracker(0)
			whole.Write([]byte(tc.in), time.Now())
			check(t, "whole", tc.in, whole.State(), tc.want)
			// Split at every byte: the same state.
			split := NewPromptTracker(0)
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
		if off < len(in) && (in[off] == '\a') {
			off++
		}
		return int64(off)
	}
	want := PromptState{Marks: w.marks, Running: w.running, HasStatus: w.hasStatus, Status: w.status, Cwd: w.cwd, Drawn: w.drawn,
		OutputStart: end(w.outputStart, w.outputStartN), CommandEnd: end(w.commandEnd, w.commandEndN), Offset: int64(len(in))}
	got.Started, got.Ended, got.Host = time.Time{}, time.Time{}, ""
	if got != want {
		t.Errorf("%s: state after %q\n got %+v\nwant %+v", how, in, got, want)
	}
}

func TestPromptTrackerTimesACommand(t *testing.T) {
	tr := NewPromptTracker(100)
	t0 := time.Now()
	tr.Write([]byte(osc("133;C")), t0)
	if st := tr.State(); !st.Running || !st.Started.Equal(t0) || st.OutputStart != 100+int64(len(osc("133;C"))) {
		t.Fatalf("after C: %+v", st)
	}
	t1 := t0.Add(time.Second)
	tr.Write([]byte(osc("133;C")+osc("133;D;7")), t1)
	st := tr.State()
	if st.Running || !st.Started.Equal(t0) || !st.Ended.Equal(t1) || st.Status != 7 {
		t.Fatalf("after a second C and D;7 a second later: %+v, want started %v ended %v", st, t0, t1)
	}
}

func TestStreamFollowsPromptMarks(t *testing.T) {
	s := NewStream("%1", 1, 64)
	s.Write([]byte(osc("133;A") + "$ " + osc("133;C")))
	if st := s.Prompt(); !st.Marks || !st.Running {
		t.Fatalf("after A and C: %+v", st)
	}
	// More than the ring holds: the tracker still sees every byte.
	s.Write([]byte(strings.Repeat("x", 200) + osc("133;D;9")))
	if st := s.Prompt(); st.Running || st.Status != 9 || st.CommandEnd != s.End() {
		t.Fatalf("after D;9: %+v (stream end %d)", st, s.End())
	}
}

// BenchmarkPromptTrackerWrite measures the scan every stream write pays:
// coloured output with a mark now and then.
func BenchmarkPromptTrackerWrite(b *testing.B) {
	chunk := []byte(strings.Repeat("\x1b[1;32mok\x1b[0m   some/path/to/a/file.go\r\n", 200) + osc("133;D;0") + osc("133;A") + osc("133;C"))
	tr := NewPromptTracker(0)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		tr.Write(chunk, time.Time{})
	}
}

func TestATrackerKeepsTheRunTimeTheShellMeasured(t *testing.T) {
	osc := func(s string) string { return "\x1b]" + s + "\a" }
	for _, tc := range []struct {
		name string
		in   string
		took time.Duration
		has  bool
	}{
		{"from tmcp init's D", osc("133;C") + "out\r\n" + osc("133;D;0;tmcp_ms=1004"), 1004 * time.Millisecond, true},
		{"from a second emitter's D, the first giving none", osc("133;C") + osc("133;D;0") + osc("133;D;0;tmcp_ms=5"), 5 * time.Millisecond, true},
		{"the first emitter's, given twice", osc("133;C") + osc("133;D;0;tmcp_ms=7") + osc("133;D;0;tmcp_ms=9"), 7 * time.Millisecond, true},
		{"none from a D without it", osc("133;C") + osc("133;D;0"), 0, false},
		{"none for a command a prompt ended", osc("133;C") + osc("133;D;0;tmcp_ms=3") + osc("133;A") + osc("133;C") + osc("133;A"), 0, false},
	} {
		tr := NewPromptTracker(0)
		tr.Write([]byte(tc.in), time.Now())
		if st := tr.State(); st.Took != tc.took || st.HasTook != tc.has {
			t.Errorf("%s: took %v (%v), want %v (%v)", tc.name, st.Took, st.HasTook, tc.took, tc.has)
		}
	}
}
