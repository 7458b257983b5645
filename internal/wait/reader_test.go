package wait

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
)

// readerFixture is a job and its reader, fed by hand.
func readerFixture(command string) (*job, *reader) {
	j := &job{id: "0123456789ab", command: command, tail: pane.NewTailBuffer(100, 1<<16), done: make(chan struct{})}
	return j, newReader(j, 1000, believed)
}

// testNonce is the nonce of the pane's shell in tests of a reader.
const testNonce = "5ecret0f5hell"

// believed parses a mark as the pane's shell's when it carries testNonce,
// as a pane's stream does with its shell's nonce.
func believed(payload string) (pane.ShellMark, bool) {
	m, ok := pane.ParseShellMark(payload)
	return m, ok && m.Authentic(testNonce)
}

// sm writes a mark of the pane's shell: an OSC 133 with testNonce.
func sm(payload string) string { return osc(payload + ";tmcp_n=" + testNonce) }

// typedEcho is what the terminal shows of a typed line: its text, with the
// token, and the Enter.
func typedEcho(token string) string {
	tag := strings.TrimPrefix(token, markerPrefix)
	return `# (__tmcp ` + tag + `&&(x));__tmcp ` + tag + ` $?` + "\r\n"
}

func mark(kind, token string, status ...int) string {
	if len(status) == 0 {
		return "\x1b]133;" + kind + ";" + token + "\a"
	}
	return fmt.Sprintf("\x1b]133;%s;%d;%s\a", kind, status[0], token)
}

func TestReaderTakesTheOutputBetweenItsMarksWhereverTheReadsSplit(t *testing.T) {
	token := markerPrefix + "01234"
	stream := "\x1b]0;title\a" + typedEcho(token) + mark("C", token) + "out 1\r\nout 2\r\nlast" + mark("D", token, 3) +
		mark("E", token, 3) + "# "
	for i := 0; i <= len(stream); i++ {
		j, r := readerFixture("x")
		now := time.Now()
		done := r.consume([]byte(stream[:i]), now) || r.consume([]byte(stream[i:]), now)
		res := j.result(false, 0, 0)
		if !done || status(res) != "3" || res.Reason != "" || !slices.Equal(res.Lines, []string{"out 1", "out 2", "last"}) {
			t.Fatalf("split at %d: done %v status %s reason %q lines %q, want done, 3, no reason, [out 1, out 2, last]",
				i, done, status(res), res.Reason, res.Lines)
		}
	}
}

func TestReaderEndsAtTheShellsMarkWhenTheWrapperWroteNone(t *testing.T) {
	token := markerPrefix + "01234"
	for _, tt := range []struct {
		name, after, status, reason string
	}{
		{"C-c: the trap exits 130", "started\r\n^C" + mark("E", token, 130), "130", "interrupted by C-c"},
		{"C-z: stopped", "started\r\n^Z" + mark("E", token, 148), "none", "stopped"},
		{"a signal: killed", "started\r\n" + mark("E", token, 143), "143", "signal 15"},
		{"C-z in bash: its job message is no output", "started\r\n^Z\r\n[1]+  Stopped   ( trap 'exit 130' INT; ... )\r\n" + mark("E", token, 148), "none", "stopped"},
		{"C-z at the end of a line", "started^Z\r\n[1]+  Stopped\r\n" + mark("E", token, 148), "none", "stopped"},
		{"the wrapper's own mark comes first", "started\r\n" + mark("D", token, 148) + mark("E", token, 148), "148", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j, r := readerFixture("x")
			if !r.consume([]byte(typedEcho(token)+mark("C", token)+tt.after), time.Now()) {
				t.Fatal("the job did not end at its mark")
			}
			res := j.result(false, 0, 0)
			if status(res) != tt.status || !strings.Contains(res.Reason, tt.reason) || tt.reason == "" && res.Reason != "" ||
				!slices.Equal(res.Lines, []string{"started"}) {
				t.Errorf("status %s reason %q lines %q, want %s, a reason with %q, [started]", status(res), res.Reason, res.Lines, tt.status, tt.reason)
			}
		})
	}
}

func TestReaderCallsALineCutByAKeyNotRunOnlyAfterItsEchoAndAGrace(t *testing.T) {
	token := markerPrefix + "01234"
	for _, tt := range []struct {
		name, stream, more, key string // key: "" if the job must go on
	}{
		{"C-c after the echo", typedEcho(token) + "^C\r\n# ", "", "C-c"},
		{"C-c after the echo of the line's opening", "# (__tmcp 01^C\r\n# ", "", "C-c"},
		{"C-c after the echo of a handed-over line's opening", `# __tmcp_r 0123^C` + "\r\n# ", "", "C-c"},
		{"C-z after the echo, its echo split", typedEcho(token) + "^", "Z", "C-z"},
		{"C-\\ after the echo", typedEcho(token) + "^\\\r\n# ", "", `C-\`},
		{"C-c before the line was typed", "^C\r\n# " + typedEcho(token), "", ""},
		{"C-c before the line was typed, the echo split", "^C\r\n# " + typedEcho(token)[:30], typedEcho(token)[30:], ""},
		{"no key", typedEcho(token) + "# ", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j, r := readerFixture("x")
			now := time.Now()
			if r.consume([]byte(tt.stream), now) || r.consume([]byte(tt.more), now) {
				t.Fatal("the job ended at once, want it to wait for its grace")
			}
			if r.expire(now.Add(keyGrace - time.Millisecond)) {
				t.Fatal("the job ended before its grace")
			}
			ended := r.expire(now.Add(keyGrace))
			res := j.result(false, 0, 0)
			if tt.key == "" {
				if ended || res.Finished {
					t.Fatalf("the job ended (%q), want it to go on", res.Reason)
				}
				return
			}
			if !ended || res.ExitStatus != nil || !strings.Contains(res.Reason, tt.key) || !strings.Contains(res.Reason, "did not run") {
				t.Errorf("ended %v status %s reason %q, want ended, no status, a reason naming %s and saying it did not run", ended, status(res), res.Reason, tt.key)
			}
		})
	}
	t.Run("the start mark within the grace", func(t *testing.T) {
		j, r := readerFixture("x")
		now := time.Now()
		r.consume([]byte(typedEcho(token)+"^C\r\n"), now)
		if r.consume([]byte(mark("C", token)+"ran\r\n"), now) || r.expire(now.Add(time.Minute)) {
			t.Fatalf("the job ended (%q) though it started, want it to go on", j.result(false, 0, 0).Reason)
		}
	})
}

func TestReaderReportsACommandThatExecsAShellOnceItHadTimeToFail(t *testing.T) {
	token := markerPrefix + "01234"
	j, r := readerFixture("exec sh")
	now := time.Now()
	r.consume([]byte(typedEcho(token)+mark("C", token)+"# "), now)
	if r.expire(now.Add(replaceGrace - time.Millisecond)) {
		t.Fatal("ended before its grace")
	}
	if !r.expire(now.Add(replaceGrace)) || !strings.Contains(j.result(false, 0, 0).Reason, "replaced the shell") {
		t.Fatalf("after the grace: %+v, want ended, the shell replaced", j.result(false, 0, 0))
	}

	j, r = readerFixture("exec sh")
	if !r.consume([]byte(typedEcho(token)+mark("C", token)+"sh: not found\r\n"+mark("D", token, 127)), now) || status(j.result(false, 0, 0)) != "127" {
		t.Fatalf("a failed exec: %+v, want status 127", j.result(false, 0, 0))
	}
}

func TestReplacesShell(t *testing.T) {
	for cmd, want := range map[string]bool{
		"exec sh": true, "exec bash -l": true, "  exec /bin/zsh -i ": true,
		"exec sh -c 'echo x'": false, "exec bash script.sh": false, "exec python3": false,
		"sh": false, "exec": false, "exec bash --rcfile x": false,
	} {
		if got := replacesShell(cmd); got != want {
			t.Errorf("replacesShell(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestReaderTakesAKeyTmcpSentAsItsEcho(t *testing.T) {
	token := markerPrefix + "01234"
	j, r := readerFixture("x")
	now := time.Now()
	r.consume([]byte(typedEcho(token)+"\r\n# "), now)
	r.keySent("C-c", now)
	if !r.expire(now.Add(keyGrace)) || !strings.Contains(j.result(false, 0, 0).Reason, "did not run") {
		t.Fatalf("C-c sent before the start: %+v, want the job not run", j.result(false, 0, 0))
	}

	j, r = readerFixture("x")
	r.consume([]byte(typedEcho(token)+mark("C", token)), now)
	r.keySent("C-c", now)
	if r.expire(now.Add(time.Minute)) || j.result(false, 0, 0).Finished {
		t.Fatal("C-c sent after the start ended the job; only its mark may")
	}
}

// A key sent while tmcp hands a run's lines over may have landed ahead of
// them, harmless: each line typed after it is given the whole grace to be
// read, and none runs out while the next line is being typed.
func TestAKeysGraceRunsFromTheLastLineTypedAfterIt(t *testing.T) {
	at := time.Now()
	for _, tt := range []struct {
		name      string
		lastTyped time.Duration // after the key
		readWait  bool
		typedAll  bool
		due       time.Duration // after the key; -1: none while typing
	}{
		{"waiting for the shell to read a line typed before the key", -time.Millisecond, true, false, keyGrace},
		{"waiting for the shell to read a line typed after the key", 200 * time.Millisecond, true, false, 200*time.Millisecond + keyGrace},
		{"typing the next line", 200 * time.Millisecond, false, false, -1},
		{"all typed, the last line after the key", 300 * time.Millisecond, false, true, 300*time.Millisecond + keyGrace},
		{"all typed before the key", -time.Second, false, true, keyGrace},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j, r := readerFixture("x")
			j.typingFrom, j.lastTyped, j.readWait, j.typedAll = at.Add(-2*time.Second), at.Add(tt.lastTyped), tt.readWait, tt.typedAll
			r.keySent("C-c", at)
			if tt.due < 0 {
				if due := r.due(); !due.IsZero() || r.expire(at.Add(time.Hour)) {
					t.Fatalf("due %v, want nothing due while a line is typed", due.Sub(at))
				}
				return
			}
			if due := r.due().Sub(at); due != tt.due {
				t.Fatalf("due %v after the key, want %v", due, tt.due)
			}
			if r.expire(at.Add(tt.due - time.Millisecond)) {
				t.Fatal("the job ended before its grace")
			}
			if !r.expire(at.Add(tt.due)) || !strings.Contains(j.result(false, 0, 0).Reason, "did not run") {
				t.Fatalf("at its grace: %+v, want the job not run", j.result(false, 0, 0))
			}
		})
	}
}

func TestInterruptKey(t *testing.T) {
	for name, want := range map[string]string{
		"C-c": "C-c", "c-C": "C-c", "^C": "C-c", "C-z": "C-z", "^z": "C-z", `C-\`: `C-\`, `^\`: `C-\`,
		"C-d": "", "c": "", "Enter": "", "M-c": "",
	} {
		if got := interruptKey(name); got != want {
			t.Errorf("interruptKey(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestReaderKeepsTheOutputOfACommandThatIgnoredCtrlZ(t *testing.T) {
	token := markerPrefix + "01234"
	want := []string{"started", "^Z"}
	for i := range maxHeldLines + 1 {
		want = append(want, fmt.Sprint("line ", i))
	}
	j, r := readerFixture("x")
	if !r.consume([]byte(typedEcho(token)+mark("C", token)+strings.Join(want, "\r\n")+"\r\n"+mark("D", token, 0)), time.Now()) {
		t.Fatal("the job did not end at its mark")
	}
	if res := j.result(false, 0, 0); status(res) != "0" || !slices.Equal(res.Lines, want) {
		t.Errorf("status %s lines %q, want 0 and %q", status(res), res.Lines, want)
	}
	j, r = readerFixture("x")
	if !r.consume([]byte(typedEcho(token)+mark("C", token)+"started\r\n^Z\r\nmore\r\n"+mark("D", token, 0)), time.Now()) {
		t.Fatal("the job did not end at its mark")
	}
	if res := j.result(false, 0, 0); !slices.Equal(res.Lines, []string{"started", "^Z", "more"}) {
		t.Errorf("lines %q, want the held lines let go at the end", res.Lines)
	}
}

// BenchmarkReaderFirstChunk reads a job whose whole run comes in one read:
// the echo, the start mark, 4096 lines and the end mark.
func BenchmarkReaderFirstChunk(b *testing.B) {
	token := markerPrefix + "01234"
	chunk := []byte(typedEcho(token) + mark("C", token) + strings.Repeat("a line of output\r\n", 4096) + mark("D", token, 0))
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		_, r := readerFixture("x")
		if !r.consume(chunk, time.Now()) {
			b.Fatal("the job did not end at its mark")
		}
	}
}

// TestReaderOfACommandTypedAlone: a command typed with nothing of tmcp's
// around it is bounded by the shell's own marks, whatever their emitter
// adds to them and wherever the reads split.
func TestReaderOfACommandTypedAlone(t *testing.T) {
	osc := func(p string) string { return "\x1b]" + p + "\a" }
	promptSP := "\x1b[1m\x1b[7m%\x1b[27m\x1b[1m\x1b[0m" + strings.Repeat(" ", 79) + "\r \r"
	for _, tc := range []struct {
		name, stream string
		status       string // "" when unknown
		lines        []string
		reason       string
	}{
		{"its output between C and D",
			"echo 'build done'\r\n" + sm("133;C") + "build done\r\n" + sm("133;D;0") + sm("133;A") + "$ ",
			"0", []string{"build done"}, ""},
		{"an emitter's parameters, the last line unended, ST terminators",
			"x\r\n\x1b]133;C;aid=4;tmcp_n=" + testNonce + "\x1b\\" + "a\r\nb" + "\x1b]133;D;7;aid=4;tmcp_n=" + testNonce + "\x1b\\",
			"7", []string{"a", "b"}, ""},
		{"the blanks of zsh's PROMPT_SP before D",
			"x\r\n" + sm("133;C") + "out\r\n" + promptSP + sm("133;D;0"),
			"0", []string{"out"}, ""},
		{"the prompt's own A, before the echo, is not the end",
			sm("133;A") + "$ " + sm("133;B") + "x\r\n" + sm("133;C") + "out\r\n" + sm("133;D;1"),
			"1", []string{"out"}, ""},
		{"C-c: the echo is no output, the status says what the key did",
			"x\r\n" + sm("133;C") + "started\r\n^C\r\n" + sm("133;D;130"),
			"130", []string{"started"}, "interrupted by C-c"},
		{"no status in D",
			"x\r\n" + sm("133;C") + "out\r\n" + sm("133;D") + sm("133;A"),
			"", []string{"out"}, "the shell marked the command's end without its exit status"},
		{"a prompt, no D",
			"x\r\n" + sm("133;C") + "out\r\n" + sm("133;A") + "$ ",
			"", []string{"out"}, "the shell marked the command's end without its exit status"},
		{"a new prompt after the echo, no C: nothing ran",
			"x^C\r\n" + sm("133;A") + "$ ",
			"", nil, "interrupted: C-c reached the shell before it ran the typed line, which was discarded; the command did not run"},
		{"a line the shell could not parse",
			"x ;; y\r\nbash: syntax error near unexpected token `;;'\r\n" + sm("133;A") + "$ ",
			"", nil, "the shell could not parse the command as typed, so it did not run"},
		{"marks a program printed, with a guessed nonce or none, are output",
			"x\r\n" + sm("133;C") + "out\r\n" + osc("133;D;3") + osc("133;D;4;tmcp_n=guess") + osc("133;A;tmcp_n=guess") + "more\r\n" + sm("133;D;0"),
			"0", []string{"out", "more"}, ""},
		{"tmcp's own job marks are not the shell's",
			"x\r\n" + sm("133;C") + osc("133;C;tmcp-abcde") + "out\r\n" + osc("133;D;5;tmcp-abcde") + sm("133;D;0"),
			"0", []string{"out"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for cut := 0; cut <= len(tc.stream); cut++ {
				j := &job{id: "0123456789ab", command: "x", tail: pane.NewTailBuffer(100, 1<<16), done: make(chan struct{}), alone: true}
				r := newReader(j, 1000, believed)
				now := time.Now()
				finished := r.consume([]byte(tc.stream[:cut]), now)
				if !finished {
					finished = r.consume([]byte(tc.stream[cut:]), now)
				}
				if !finished {
					t.Fatalf("cut at %d: the job did not end", cut)
				}
				res := j.result(false, 0, 0)
				if status(res) != map[string]string{"": "none"}[tc.status]+tc.status || !slices.Equal(res.Lines, tc.lines) || res.Reason != tc.reason {
					t.Fatalf("cut at %d: status %s lines %q reason %q; want %q %q %q", cut, status(res), res.Lines, res.Reason, tc.status, tc.lines, tc.reason)
				}
			}
		})
	}
}

// TestReaderEndsAtAFarShellsMarkOnlyOnceItsOwnEndMayBeCut: behind ssh the
// far shell's own D ends a wrapped job whose end mark an interrupt (or a
// loss) may have cut, with its status; without either, or in a pane whose
// shell tmcp can see in front, that D is a command's within the job.
func TestReaderEndsAtAFarShellsMarkOnlyOnceItsOwnEndMayBeCut(t *testing.T) {
	token := markerPrefix + "01234"
	shellD := func(status int) string { return sm(fmt.Sprintf("133;D;%d", status)) }
	for _, tt := range []struct {
		name          string
		far, lost     bool
		after         string
		done          bool
		status, lines string
	}{
		{"behind ssh, after C-c", true, false, "started\r\n^C\r\n" + shellD(130) + "far$ ", true, "130", "started"},
		{"behind ssh, after a loss", true, true, "late line\r\n" + shellD(2) + "far$ ", true, "2", "late line"},
		{"behind ssh, no key and no loss: a command inside the job", true, false, "inner\r\n" + shellD(0) + "$ ", false, "", ""},
		{"a shell tmcp sees in front, after C-c", false, false, "started\r\n^C\r\n" + shellD(130), false, "", ""},
		{"behind ssh, after C-c, a D printed without the shell's nonce", true, false, "started\r\n^C\r\n" + osc("133;D;0") + osc("133;D;0;tmcp_n=guess"), false, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j, r := readerFixture("x")
			if tt.far {
				j.farShell = "ssh"
			}
			j.lost = tt.lost
			done := r.consume([]byte(typedEcho(token)+mark("C", token)+tt.after), time.Now())
			if done != tt.done {
				t.Fatalf("done %v, want %v", done, tt.done)
			}
			if !done {
				return
			}
			if res := j.result(false, 0, 0); status(res) != tt.status || strings.Join(res.Lines, "|") != tt.lines {
				t.Errorf("status %s lines %q (reason %q), want %s %q", status(res), res.Lines, res.Reason, tt.status, tt.lines)
			}
		})
	}
}

// TestAJobsMarksCountOnlyWithTheHelpersNonce: the typed line shows a job's
// token, so a program could print marks with it; only the marks that also
// carry the helper's nonce, which no typed line shows, start and end the
// job, however the reads split them. The R of the line that hands the
// helper over, typed on the screen, counts with the token alone.
func TestAJobsMarksCountOnlyWithTheHelpersNonce(t *testing.T) {
	const nonce = "0f1e2d3c4b5a6978"
	bare := markerPrefix + "01234"
	full := bare + ":" + nonce
	stream := typedEcho(bare) + mark("R", bare) + mark("C", bare) + "spoofed\r\n" + mark("C", full) + "out\r\n" +
		mark("E", bare, 0) + mark("E", bare+":guess", 0) + mark("D", bare+":"+nonce[:8], 0) + "more\r\n" + mark("D", full, 3) + mark("E", full, 3)
	for cut := 0; cut <= len(stream); cut++ {
		j := &job{id: "0123456789ab", command: "x", tail: pane.NewTailBuffer(100, 1<<16), done: make(chan struct{}),
			reads: make(chan struct{}, 2), nonce: nonce}
		r := newReader(j, 1000, believed)
		now := time.Now()
		done := r.consume([]byte(stream[:cut]), now) || r.consume([]byte(stream[cut:]), now)
		if !done {
			t.Fatalf("cut at %d: the job did not end at its own end mark", cut)
		}
		if res := j.result(false, 0, 0); status(res) != "3" || strings.Join(res.Lines, "|") != "out|more" {
			t.Fatalf("cut at %d: status %s lines %q (reason %q), want 3 and out|more", cut, status(res), res.Lines, res.Reason)
		}
		select {
		case <-j.reads:
		default:
			t.Fatalf("cut at %d: the bare R of the handing-over line was not taken for the shell reading", cut)
		}
	}
}

// Each R mark tells the typing once that the shell reads, however the
// reads split: a mark held over for the next read (where a split mark
// would be completed) is not counted again. Counted twice, it let the
// lines handed over go before __tmcp_r read them, echo still on.
func TestReaderCountsEachReadMarkOnce(t *testing.T) {
	token := markerPrefix + "01234"
	stream := mark("R", token) + "\x1b[1A\r\x1b[J" + mark("R", token) + "# " + mark("R", token)
	for i := 0; i <= len(stream); i++ {
		for k := i; k <= len(stream); k++ {
			j, r := readerFixture("x")
			j.reads = make(chan struct{}, 8)
			now := time.Now()
			for _, part := range []string{stream[:i], stream[i:k], stream[k:]} {
				r.consume([]byte(part), now)
			}
			if n := len(j.reads); n != 3 {
				t.Fatalf("reads split at %d and %d: %d R marks counted, want 3", i, k, n)
			}
		}
	}
}
