package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// runSeqLines is how many lines run_command's second row prints; that
	// row, and the count of processes per run, take a quarter of -n's
	// iterations, for time.
	runSeqLines = 10000
	heavyShare  = 4
	// floorOutputLimit bounds a floor's wait for a pane's output: past it
	// the floor client is killed and the row fails.
	floorOutputLimit = 30 * time.Second
	// reactionDelay is how long after sending wait_for_text the line is
	// written: time for the wait to attach, so that the line is new to it.
	reactionDelay = 10 * time.Millisecond
	// reactionWaitSeconds bounds one reaction wait; a wait that attached
	// too late for its line times out, and the iteration is tried again
	// with twice the delay, up to reactionTries times.
	reactionWaitSeconds = 1
	reactionTries       = 5
	// millionStart is how long after sending wait_for_text the million-line
	// command is typed; millionLimit bounds the wait.
	millionStart        = 20 * time.Millisecond
	millionLimitSeconds = 60
	// sinceLines is how many lines the second capture_since row reads.
	sinceLines = 1000
)

// millionCommand is the million-line command; %s is the file its end time
// goes to.
const millionCommand = "seq 1 1000000; date +%%s.%%N > %s; echo MILLION-DONE"

// countedCommands are the tmux commands whose after-hooks count what tmcp
// asks of tmux while it answers quiet capture_since calls. tmcp follows
// every command it sends over a control client with a display-message, so
// these cover every command, over a control client or as a process, that
// reading a pane could need.
var countedCommands = []string{"display-message", "capture-pane", "list-panes", "list-windows", "list-sessions"}

// withStreamFloor attaches a bare control client, with output on, to a
// session of its own, runs f with it and the session's pane, and closes
// it; an error closing it is returned when f succeeded.
func (b *bench) withStreamFloor(ctx context.Context, session string, f func(*controlFloor, benchPane) error) (err error) {
	p, err := b.srv.newSession(ctx, session)
	if err != nil {
		return err
	}
	c, err := startControlFloor(ctx, b.srv, session, streamFloorFlags)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := c.close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	return f(c, p)
}

// runCommand measures run_command of `true` and of `seq 1 10000` beside a
// bare control client that types the command followed by an end mark and
// reads %output until the mark comes back, and `true` also beside tmcp's
// own method done by that bare client; then how many tmux processes tmcp
// starts per run.
func (b *bench) runCommand(ctx context.Context) error {
	return b.withStreamFloor(ctx, "floor-run", func(c *controlFloor, fp benchPane) error {
		tp, err := b.srv.newSession(ctx, "run")
		if err != nil {
			return err
		}
		// floorRun is an iteration that sends the commands lines makes for a
		// fresh token and reads %output until the end mark with that token
		// and status 0.
		marks := 0
		floorRun := func(lines func(token string) []string) func(context.Context) (time.Duration, error) {
			return func(context.Context) (time.Duration, error) {
				marks++
				token := "bench-" + strconv.Itoa(marks)
				mark := newMarker("\x1b]133;D;0;" + token + "\a")
				start := time.Now()
				for _, line := range lines(token) {
					if err := c.send(line, false); err != nil {
						return 0, err
					}
				}
				err := c.awaitOutput(fp.id, floorOutputLimit, mark.feed)
				return time.Since(start), err
			}
		}
		typed := func(command string) func(string) []string {
			return func(token string) []string {
				return []string{sendKeysLine(fp.id, fmt.Sprintf(`%s; printf "\033]133;D;%%s;%s\007" $?`, command, token))}
			}
		}
		method := func(token string) []string { return methodLines(fp.id, "true", token) }
		if err := c.send(sendKeysLine(fp.id, methodHelper), false); err != nil {
			return fmt.Errorf("typing the helper into the floor's pane: %w", err)
		}
		seq := fmt.Sprintf("seq 1 %d", runSeqLines)

		floorTrue, err := sample(ctx, b.cfg.warmups, b.cfg.n, floorRun(typed("true")))
		if err != nil {
			return fmt.Errorf("floor of true: %w", err)
		}
		floorMethod, err := sample(ctx, b.cfg.warmups, b.cfg.n, floorRun(method))
		if err != nil {
			return fmt.Errorf("floor of true by tmcp's method: %w", err)
		}
		tmTrue, err := sample(ctx, b.cfg.warmups, b.cfg.n, b.runOnce(tp.id, "true", 0))
		if err != nil {
			return fmt.Errorf("tmcp run_command true: %w", err)
		}
		r := durationRow(rowRunTrue, unitMs, tmTrue, &floorTrue)
		b.put(r.withTarget("≤ 2× floor", r.Ratio != nil && *r.Ratio <= 2))
		b.put(durationRow(rowRunMethod, unitMs, tmTrue, &floorMethod))
		// Back to back, each run shares the machine with the last one's
		// tail (the shell's write of its end, a printf to a file since
		// 27837ed, a tmux client process before). Spaced out, as an
		// agent's calls are, a run has the machine to itself.
		heavy := max(1, b.cfg.n/heavyShare)
		floorSpaced, err := sample(ctx, b.cfg.warmups, heavy, spaced(floorRun(method)))
		if err != nil {
			return fmt.Errorf("floor of true by tmcp's method, spaced: %w", err)
		}
		tmSpaced, err := sample(ctx, b.cfg.warmups, heavy, spaced(b.runOnce(tp.id, "true", 0)))
		if err != nil {
			return fmt.Errorf("tmcp run_command true, spaced: %w", err)
		}
		b.put(durationRow(rowRunSpaced, unitMs, tmSpaced, &floorSpaced))

		floorSeq, err := sample(ctx, b.cfg.warmups, heavy, floorRun(typed(seq)))
		if err != nil {
			return fmt.Errorf("floor of %s: %w", seq, err)
		}
		tmSeq, err := sample(ctx, b.cfg.warmups, heavy, b.runOnce(tp.id, seq, runSeqLines))
		if err != nil {
			return fmt.Errorf("tmcp run_command %s: %w", seq, err)
		}
		b.put(durationRow(rowRunSeq, unitMs, tmSeq, &floorSeq))

		// The floor's processes would be this program's children.
		floorStarted, err := countChildren(ctx, os.Getpid(), heavy, floorRun(typed("true")))
		if err != nil {
			return fmt.Errorf("floor of true, watched: %w", err)
		}
		started, err := countChildren(ctx, b.tmcp.pid(), heavy, b.runOnce(tp.id, "true", 0))
		if err != nil {
			return fmt.Errorf("tmcp run_command true, watched: %w", err)
		}
		b.put(valueRow(rowProcsRun, unitPerCall, heavy, float64(started)/float64(heavy), ptr(float64(floorStarted)/float64(heavy))))
		return nil
	})
}

// runGap is the pause before each spaced run.
const runGap = 250 * time.Millisecond

// spaced pauses, untimed, before each iteration of once.
func spaced(once func(context.Context) (time.Duration, error)) func(context.Context) (time.Duration, error) {
	return func(ctx context.Context) (time.Duration, error) {
		select {
		case <-time.After(runGap):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		return once(ctx)
	}
}

// methodHelper is a shell function like the helper run_command hands a
// shell once (internal/wait/shellside.go, mirrored here): with one
// argument it marks a run's start in its subshell, with two its end.
const methodHelper = `__tmcp(){ if [ $# -eq 1 ];then trap 'exit 130' INT;printf '\033]133;C;%s\007' "$1";` +
	`else printf '\033]133;D;%s;%s\007' "$2" "$1";fi;}`

// methodLines are the control-mode commands that run command the way
// tmcp's run_command does once the shell has its helper: one typed line,
// the command as written in a subshell between the helper's two calls.
func methodLines(pane, command, token string) []string {
	return []string{sendKeysLine(pane, "(__tmcp "+token+"&&("+command+"));__tmcp "+token+" $?")}
}

// sendKeysLine is the command that types text into a pane and presses Enter.
func sendKeysLine(pane, text string) string {
	return "send-keys -t " + pane + " " + tmuxQuote(text) + " Enter"
}

// jobReply is what the run rows check of run_command's reply.
type jobReply struct {
	Finished   bool   `json:"finished"`
	ExitStatus *int   `json:"exitStatus"`
	TotalLines int    `json:"totalLines"`
	Reason     string `json:"reason"`
}

// runOnce is an iteration that runs command in a pane with run_command and
// checks that it finished with status 0 after printing lines lines, the
// last of them the number lines.
func (b *bench) runOnce(pane, command string, lines int) func(context.Context) (time.Duration, error) {
	return b.tmcp.callOnce("run_command", map[string]any{"paneId": pane, "command": command}, func(r *mcp.CallToolResult) error {
		var j jobReply
		if err := decode(r, &j); err != nil {
			return err
		}
		text := strings.TrimSpace(resultText(r))
		switch {
		case !j.Finished || j.ExitStatus == nil || *j.ExitStatus != 0:
			return fmt.Errorf("run_command %q in %s did not finish with status 0: %s", command, pane, text)
		case j.TotalLines != lines:
			return fmt.Errorf("run_command %q in %s reported %d lines, want %d", command, pane, j.TotalLines, lines)
		case lines > 0 && !strings.HasSuffix(text, "\n"+strconv.Itoa(lines)):
			return fmt.Errorf("run_command %q in %s: output does not end with %d: …%s", command, pane, lines, text[max(0, len(text)-200):])
		}
		return nil
	})
}

// reaction measures how soon wait_for_text answers after a line is written
// to its pane, beside how soon a bare control client reads that line.
// Lines are written to the pane's terminal, as a program in the pane
// would write them, and timed from just before the write.
func (b *bench) reaction(ctx context.Context) error {
	return b.withStreamFloor(ctx, "floor-react", func(c *controlFloor, fp benchPane) error {
		ftty, err := openTTY(fp)
		if err != nil {
			return err
		}
		defer ftty.Close()
		lines := 0
		fl, err := sample(ctx, b.cfg.warmups, b.cfg.n, func(context.Context) (time.Duration, error) {
			lines++
			text := fmt.Sprintf("LINE-%d", lines)
			mark := newMarker(text + "\r")
			time.Sleep(time.Millisecond) // a quiet pane, as tmcp's side has
			var seen time.Time
			wrote := time.Now()
			if _, err := ftty.WriteString(text + "\r\n"); err != nil {
				return 0, err
			}
			err := c.awaitOutput(fp.id, floorOutputLimit, func(p []byte) bool {
				if mark.feed(p) {
					seen = time.Now()
					return true
				}
				return false
			})
			return seen.Sub(wrote), err
		})
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}

		tm, err := b.reactionOn(ctx, b.tmcp, "react", "")
		if err != nil {
			return fmt.Errorf("tmcp: %w", err)
		}
		r := durationRow(rowReaction, unitMs, tm, &fl)
		b.put(r.withTarget("≤ 1 ms median", r.TmcpMedian <= 1))
		return nil
	})
}

// reactionSample times wait_for_text calls on p, each for a line written
// to pane tp (through its terminal tty) just after the call: from the
// write to the reply.
func (b *bench) reactionSample(ctx context.Context, p *tmcpProcess, tp benchPane, tty *os.File) (summary, error) {
	lines := 0
	return sample(ctx, b.cfg.warmups, b.cfg.n, func(ctx context.Context) (time.Duration, error) {
		delay := reactionDelay
		for range reactionTries {
			lines++
			text := fmt.Sprintf("LINE-%d", lines)
			wait, cancel := p.callAsync(ctx, "wait_for_text", map[string]any{"paneId": tp.id,
				"patterns": []string{text}, "timeoutSeconds": reactionWaitSeconds})
			time.Sleep(delay)
			wrote := time.Now()
			if _, err := tty.WriteString(text + "\r\n"); err != nil {
				cancel()
				wait()
				return 0, err
			}
			a := wait()
			if a.err != nil {
				return 0, a.err
			}
			var w struct{ Outcome, Matched string }
			if err := decode(a.r, &w); err != nil {
				return 0, err
			}
			switch {
			case w.Outcome == "timeout":
				delay *= 2 // the wait began after the write: try again, later
				continue
			case w.Outcome != "matched" || !strings.HasSuffix(w.Matched, text): // the first may follow the prompt
				return 0, fmt.Errorf("wait_for_text %q in %s: outcome %s, matched %q", text, tp.id, w.Outcome, w.Matched)
			}
			return a.at.Sub(wrote), nil
		}
		return 0, fmt.Errorf("wait_for_text in %s missed its line %d times in a row, written %v to %v after the call", tp.id, reactionTries, reactionDelay, delay/2)
	})
}

// openTTY opens a pane's terminal for writing: what is written there is
// output of the pane, as if a program in it had written it.
func openTTY(p benchPane) (*os.File, error) {
	f, err := os.OpenFile(p.tty, os.O_WRONLY|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the terminal of pane %s: %w", p.id, err)
	}
	return f, nil
}

// million measures how soon wait_for_text sees ^MILLION-DONE$, printed
// after a million lines, once the command has finished, beside how soon a
// bare control client reads that line. The runs alternate between the two.
func (b *bench) million(ctx context.Context) error {
	return b.withStreamFloor(ctx, "floor-million", func(c *controlFloor, fp benchPane) error {
		tp, err := b.srv.newSession(ctx, "million")
		if err != nil {
			return err
		}
		var fl, tm []time.Duration
		for i := range b.cfg.millions {
			d, err := b.millionFloor(c, fp, i)
			if err != nil {
				return fmt.Errorf("floor: %w", err)
			}
			fl = append(fl, d)
			if d, err = b.millionTmcp(ctx, tp, i); err != nil {
				return fmt.Errorf("tmcp: %w", err)
			}
			tm = append(tm, d)
		}
		ftm, ffl := summarise(tm), summarise(fl)
		r := durationRow(rowMillion, unitMs, ftm, &ffl)
		b.put(r.withTarget("< 500 ms", r.TmcpMedian < 500))
		return nil
	})
}

// millionFloor types the million-line command with a bare control client
// and reads %output until the line MILLION-DONE.
func (b *bench) millionFloor(c *controlFloor, p benchPane, i int) (time.Duration, error) {
	stamp := filepath.Join(b.dir, fmt.Sprintf("million-floor-%d", i))
	if err := c.sendKeys(p.id, fmt.Sprintf(millionCommand, stamp)); err != nil {
		return 0, err
	}
	mark := newMarker("\nMILLION-DONE\r")
	var seen time.Time
	err := c.awaitOutput(p.id, millionLimitSeconds*time.Second, func(data []byte) bool {
		if mark.feed(data) {
			seen = time.Now()
			return true
		}
		return false
	})
	if err != nil {
		return 0, err
	}
	end, err := readStamp(stamp)
	return seen.Sub(end), err
}

// millionTmcp waits with wait_for_text while the command, typed with
// send_keys, runs.
func (b *bench) millionTmcp(ctx context.Context, p benchPane, i int) (time.Duration, error) {
	stamp := filepath.Join(b.dir, fmt.Sprintf("million-tmcp-%d", i))
	at, err := awaitTyped(ctx, b.tmcp, p.id, "^MILLION-DONE$", fmt.Sprintf(millionCommand, stamp), millionStart, millionLimitSeconds)
	if err != nil {
		return 0, err
	}
	end, err := readStamp(stamp)
	return at.Sub(end), err
}

// awaitTyped has p wait with wait_for_text for a line matching pattern (a
// regular expression) in pane, types keys there with send_keys start
// later, and returns when the wait answered; an outcome other than
// matched is an error.
func awaitTyped(ctx context.Context, p *tmcpProcess, pane, pattern, keys string, start time.Duration, limitSeconds int) (time.Time, error) {
	wait, cancel := p.callAsync(ctx, "wait_for_text", map[string]any{"paneId": pane,
		"patterns": []string{pattern}, "regex": true, "timeoutSeconds": limitSeconds})
	time.Sleep(start)
	if _, err := p.call(ctx, "send_keys", map[string]any{"paneId": pane, "keys": keys}); err != nil {
		cancel()
		wait()
		return time.Time{}, err
	}
	a := wait()
	if a.err != nil {
		return time.Time{}, a.err
	}
	var w struct{ Outcome, Reason string }
	if err := decode(a.r, &w); err != nil {
		return time.Time{}, err
	}
	if w.Outcome != "matched" {
		return time.Time{}, fmt.Errorf("wait_for_text %s in %s: outcome %s (%s), want matched", pattern, pane, w.Outcome, w.Reason)
	}
	return a.at, nil
}

// readStamp reads a time written by `date +%s.%N`.
func readStamp(path string) (time.Time, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the time stamp: %w", err)
	}
	return parseStamp(strings.TrimSpace(string(b)))
}

// parseStamp parses SECONDS.NANOSECONDS.
func parseStamp(s string) (time.Time, error) {
	secs, frac, _ := strings.Cut(s, ".")
	sec, err1 := strconv.ParseInt(secs, 10, 64)
	nsec, err2 := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return time.Time{}, fmt.Errorf("time stamp %q: %w", s, err)
	}
	return time.Unix(sec, nsec), nil
}

// sinceReply is what the capture_since rows check of its reply.
type sinceReply struct {
	Cursor      string `json:"cursor"`
	Lines       int    `json:"lines"`
	ScreenLines int    `json:"screenLines"`
	MissedBytes int64  `json:"missedBytes"`
	Reset       bool   `json:"reset"`
}

// captureSince measures capture_since with the cursor at the end of a
// quiet pane, while counting the tmux commands the server runs meanwhile,
// and after 1,000 new lines; the floor of both is capture-pane -p over a
// control client, measured with the first rows.
func (b *bench) captureSince(ctx context.Context) error {
	if b.captureFloor == nil {
		return errors.New("its floor, capture-pane -p over a control client, was not measured")
	}
	p, err := b.srv.newSession(ctx, "since")
	if err != nil {
		return err
	}
	tty, err := openTTY(p)
	if err != nil {
		return err
	}
	defer tty.Close()
	r, err := b.tmcp.call(ctx, "capture_since", map[string]any{"paneId": p.id})
	if err != nil {
		return err
	}
	var first sinceReply
	if err := decode(r, &first); err != nil {
		return err
	}

	quietOnce := b.tmcp.callOnce("capture_since", map[string]any{"cursor": first.Cursor}, func(r *mcp.CallToolResult) error {
		var s sinceReply
		if err := decode(r, &s); err != nil {
			return err
		}
		if s.Cursor != first.Cursor || s.Lines != 0 || s.ScreenLines != 0 || s.Reset {
			return fmt.Errorf("capture_since on quiet pane %s answered %+v, want nothing new and the same cursor", p.id, s)
		}
		return nil
	})
	var quiet summary
	commands, err := b.srv.countCommands(ctx, func() error {
		quiet, err = sample(ctx, b.cfg.warmups, b.cfg.n, quietOnce)
		return err
	})
	if err != nil {
		return fmt.Errorf("quiet pane: %w", err)
	}
	b.notes.QuietCommands, b.notes.QuietCalls = commands, b.cfg.warmups+b.cfg.n
	q := durationRow(rowSinceQuiet, unitMs, quiet, b.captureFloor)
	b.put(q.withTarget("no tmux command", commands == 0))

	cursor, batch := first.Cursor, 0
	since, err := sample(ctx, b.cfg.warmups, b.cfg.n, func(ctx context.Context) (time.Duration, error) {
		batch++
		last := fmt.Sprintf("SINCE-%d-%d", batch, sinceLines)
		var text strings.Builder
		for i := 1; i <= sinceLines; i++ {
			fmt.Fprintf(&text, "SINCE-%d-%d\r\n", batch, i)
		}
		if _, err := tty.WriteString(text.String()); err != nil {
			return 0, err
		}
		// Untimed: tmcp has the lines once a wait from the same cursor sees the last.
		if _, err := b.tmcp.call(ctx, "wait_for_text", map[string]any{"cursor": cursor, "paneId": p.id,
			"patterns": []string{last}, "timeoutSeconds": 10}); err != nil {
			return 0, err
		}
		start := time.Now()
		r, err := b.tmcp.call(ctx, "capture_since", map[string]any{"cursor": cursor})
		d := time.Since(start)
		if err != nil {
			return d, err
		}
		var s sinceReply
		if err := decode(r, &s); err != nil {
			return d, err
		}
		if s.Lines == 0 || s.MissedBytes != 0 || s.Reset || !strings.HasSuffix(strings.TrimSpace(resultText(r)), last) {
			return d, fmt.Errorf("capture_since after %d lines in %s answered %+v, want them ending with %s", sinceLines, p.id, s, last)
		}
		cursor = s.Cursor
		return d, nil
	})
	if err != nil {
		return fmt.Errorf("after %d lines: %w", sinceLines, err)
	}
	b.put(durationRow(rowSince1000, unitMs, since, b.captureFloor))
	return nil
}
