package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"
)

const (
	// floorClientFlags match tmcp's command client: no resizing, no output.
	floorClientFlags = "ignore-size,no-output"
	// streamFloorFlags are for a bare client that receives pane output: the
	// least a program must do to see what a pane writes.
	streamFloorFlags = "ignore-size"
	// ourFlags is the FLAGS field of the guard lines around a command this
	// client sent; the attach's own block, hooks and other clients' commands
	// carry 0.
	ourFlags = "1"
	// closeWait bounds how long a closed control client may take to exit.
	closeWait = time.Second
	// floorReadBuffer is a floor client's read buffer: larger than most
	// %output lines, so a flood is read without copying.
	floorReadBuffer = 256 << 10
)

// floor holds the raw cost of tmux jobs done with bare tmux: over a control
// client, and as one process per job.
type floor struct {
	listControl, captureControl summary
	listProcess, captureProcess summary
	// watcherSeen is how many of cfg.n list-sessions processes a
	// childWatcher on this process saw: a check on the watcher that counts
	// tmcp's processes.
	watcherSeen int
}

// measureFloor times list-sessions and capture-pane over a bare control
// client, then as separate processes.
func measureFloor(ctx context.Context, srv *tmuxServer, cfg config) (floor, error) {
	var f floor
	cc, err := startControlFloor(ctx, srv, sessionName, floorClientFlags)
	if err != nil {
		return f, err
	}
	f.listControl, err = sample(ctx, cfg.warmups, cfg.n, timed(func(context.Context) error {
		_, err := cc.run("list-sessions")
		return err
	}))
	if err == nil {
		f.captureControl, err = sample(ctx, cfg.warmups, cfg.n, timed(func(context.Context) error {
			return expectLastRow(cc.run("capture-pane -p -t " + srv.pane))
		}))
	}
	if cerr := cc.close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return f, fmt.Errorf("control-mode floor: %w", err)
	}

	listOnce := timed(func(ctx context.Context) error { _, err := runProcess(ctx, srv, "list-sessions"); return err })
	f.listProcess, err = sample(ctx, cfg.warmups, cfg.n, listOnce)
	if err == nil {
		f.captureProcess, err = sample(ctx, cfg.warmups, cfg.n, timed(func(ctx context.Context) error {
			return expectLastRow(runProcess(ctx, srv, "capture-pane", "-p", "-t", srv.pane))
		}))
	}
	if err == nil {
		f.watcherSeen, err = countChildren(ctx, os.Getpid(), cfg.n, listOnce)
	}
	if err != nil {
		return f, fmt.Errorf("process floor: %w", err)
	}
	return f, nil
}

// expectLastRow checks that a capture holds the pane's whole text.
func expectLastRow(body string, err error) error {
	if err == nil && !strings.Contains(body, lastRow()) {
		err = fmt.Errorf("capture lacks %q:\n%s", lastRow(), body)
	}
	return err
}

// runProcess runs one tmux command as its own process and returns its output.
func runProcess(ctx context.Context, srv *tmuxServer, args ...string) (string, error) {
	cmd := srv.Command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// controlFloor is a bare control-mode client: one `tmux -C attach` whose
// stdin takes one command per line and whose stdout frames each reply in
// guard lines, between which come notifications such as %output. It trusts
// the framing, which is safe here because the benchmark itself wrote every
// line a capture can contain. It is read on the caller's goroutine, with
// no copying or handing over beyond what reading a pipe needs, so that it
// is the floor.
type controlFloor struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	killed atomic.Bool // a deadline ran out and the process was killed

	number  string // command number of the block being read; "" between blocks
	ours    bool   // the block answers a command of this client
	body    strings.Builder
	pending []bool  // for each command sent and not yet answered: whether its reply is wanted
	replies []reply // wanted replies read and not yet taken, oldest first
	failed  error   // the first failure of a command whose reply was not wanted
	long    []byte  // scratch for a line longer than the read buffer
	// outputPane and data are the pane and the unescaped bytes of the last
	// output read; both are overwritten by the next read.
	outputPane []byte
	data       []byte
}

// reply is the answer to one command.
type reply struct {
	body string
	err  error
}

// startControlFloor attaches a control client to session with flags and
// reads past the attach's own guard block, after which the client takes
// commands.
func startControlFloor(ctx context.Context, srv *tmuxServer, session, flags string) (*controlFloor, error) {
	cmd := srv.Command(ctx, "-C", "attach-session", "-t", session, "-f", flags)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting control client: %w", err)
	}
	c := &controlFloor{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, floorReadBuffer)}
	for ended := false; !ended; {
		ev, err := c.read()
		if err != nil {
			c.close()
			return nil, fmt.Errorf("attaching control client: %w", err)
		}
		ended = ev == eventBlockEnd
	}
	return c, nil
}

// pid is the client process's id.
func (c *controlFloor) pid() int { return c.cmd.Process.Pid }

// run sends one command line and returns its reply body.
func (c *controlFloor) run(line string) (string, error) {
	if err := c.send(line, true); err != nil {
		return "", err
	}
	for len(c.replies) == 0 {
		if _, err := c.read(); err != nil {
			return "", err
		}
	}
	r := c.replies[0]
	c.replies = c.replies[1:]
	return r.body, r.err
}

// send writes one command line; want says whether run will take its reply.
func (c *controlFloor) send(line string, want bool) error {
	c.pending = append(c.pending, want)
	_, err := io.WriteString(c.stdin, line+"\n")
	return err
}

// sendKeys types text into a pane and presses Enter, without waiting for
// tmux's reply: awaitOutput reads it.
func (c *controlFloor) sendKeys(pane, text string) error {
	return c.send(sendKeysLine(pane, text), false)
}

// awaitOutput reads until found, given each piece of output the pane
// writes, reports true and every command sent has been answered; it gives
// up after limit, killing the client. found may record the time: it is
// called as soon as the piece is read.
func (c *controlFloor) awaitOutput(pane string, limit time.Duration, found func([]byte) bool) error {
	t := time.AfterFunc(limit, func() {
		c.killed.Store(true)
		_ = c.cmd.Process.Kill()
	})
	defer t.Stop()
	for seen := false; !seen || len(c.pending) > 0; {
		ev, err := c.read()
		switch {
		case err != nil && c.killed.Load():
			return fmt.Errorf("pane %s did not write what was awaited within %v", pane, limit)
		case err != nil:
			return err
		case c.failed != nil:
			return c.failed
		case ev == eventOutput && string(c.outputPane) == pane && !seen:
			seen = found(c.data)
		}
	}
	return nil
}

// event is what one line of a control client's output was.
type event int

const (
	eventOther    event = iota // a notification, or a line inside a block
	eventBlockEnd              // the end of a guard block
	eventOutput                // pane output: c.outputPane wrote c.data
	eventPause                 // tmux paused c.outputPane's output for the client
)

// read reads and handles one line: a reply to one of this client's
// commands is queued (or, unwanted, checked for failure); pane output is
// unescaped into c.data.
func (c *controlFloor) read() (event, error) {
	line, err := c.out.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		c.long = append(c.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = c.out.ReadSlice('\n')
			c.long = append(c.long, line...)
		}
		line = c.long
	}
	if err != nil {
		return eventOther, fmt.Errorf("control client ended: %w", err)
	}
	line = line[:len(line)-1]
	if c.number != "" && (len(line) == 0 || line[0] != '%') { // the commonest line inside a block
		if c.ours {
			c.body.Write(line)
			c.body.WriteByte('\n')
		}
		return eventOther, nil
	}
	if pane, data, ok := parseOutput(line); ok && c.number == "" {
		c.outputPane = append(c.outputPane[:0], pane...)
		c.data = unescapeOutput(c.data[:0], data)
		return eventOutput, nil
	}
	if pane, ok := bytes.CutPrefix(line, []byte("%pause ")); ok && c.number == "" {
		c.outputPane = append(c.outputPane[:0], pane...)
		return eventPause, nil
	}
	kind, number, flags, guard := parseGuard(string(line))
	switch {
	case c.number == "" && guard && kind == "%begin":
		c.number, c.ours = number, flags == ourFlags
		c.body.Reset()
	case c.number != "" && guard && (kind == "%end" || kind == "%error") && number == c.number:
		c.number = ""
		if c.ours && len(c.pending) > 0 {
			r := reply{body: c.body.String()}
			if kind == "%error" {
				r.err = errors.New(strings.TrimSpace(r.body))
			}
			want := c.pending[0]
			c.pending = c.pending[1:]
			switch {
			case want:
				c.replies = append(c.replies, r)
			case r.err != nil && c.failed == nil:
				c.failed = r.err
			}
		}
		return eventBlockEnd, nil
	case c.number != "" && c.ours:
		c.body.Write(line)
		c.body.WriteByte('\n')
	}
	return eventOther, nil
}

// parseGuard splits a guard line `%begin|%end|%error TIME NUMBER FLAGS`.
func parseGuard(line string) (kind, number, flags string, ok bool) {
	fields := strings.Fields(line)
	if len(fields) != 4 {
		return "", "", "", false
	}
	switch fields[0] {
	case "%begin", "%end", "%error":
		return fields[0], fields[2], fields[3], true
	}
	return "", "", "", false
}

// parseOutput splits `%output %PANE DATA` and, from a client with
// pause-after, `%extended-output %PANE AGE ... : DATA`.
func parseOutput(line []byte) (pane, data []byte, ok bool) {
	switch {
	case bytes.HasPrefix(line, []byte("%output %")):
		pane, data, _ = bytes.Cut(line[len("%output "):], []byte(" "))
		return pane, data, true
	case bytes.HasPrefix(line, []byte("%extended-output %")):
		pane, rest, _ := bytes.Cut(line[len("%extended-output "):], []byte(" "))
		if _, data, found := bytes.Cut(rest, []byte(" : ")); found {
			return pane, data, true
		}
	}
	return nil, nil, false
}

// unescapeOutput appends to dst the bytes that %output data stands for:
// tmux writes bytes below 0x20, above 0x7e, and the backslash itself as
// three-digit octal escapes.
func unescapeOutput(dst, s []byte) []byte {
	for {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		if i+4 > len(s) || !isOctal(s[i+1:i+4]) {
			dst = append(dst, '\\')
			s = s[i+1:]
			continue
		}
		o := s[i+1 : i+4]
		dst = append(dst, (o[0]-'0')<<6|(o[1]-'0')<<3|(o[2]-'0'))
		s = s[i+4:]
	}
}

// isOctal reports whether o is three octal digits of a byte value.
func isOctal(o []byte) bool {
	return o[0] >= '0' && o[0] <= '3' && o[1] >= '0' && o[1] <= '7' && o[2] >= '0' && o[2] <= '7'
}

// tmuxQuote quotes s as one argument of a tmux command line: in double
// quotes, with every byte tmux would treat specially written in octal.
func tmuxQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '$' || c == '~' || c == '#' || c < 0x20 || c > 0x7e:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// close detaches the client by closing its stdin and waits for it to exit;
// the context it was started with kills it should it not.
func (c *controlFloor) close() error {
	c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if c.killed.Load() {
			return nil
		}
		return err
	case <-time.After(closeWait):
		return errors.New("control client did not exit after its stdin closed")
	}
}

// marker finds a byte string in output that arrives in pieces, however the
// pieces split it.
type marker struct {
	want  []byte
	carry []byte // the last len(want)-1 bytes seen
}

func newMarker(s string) *marker { return &marker{want: []byte(s)} }

// feed looks at the next piece and reports whether the string has appeared.
func (m *marker) feed(p []byte) bool {
	keep := len(m.want) - 1
	if len(m.carry) > 0 {
		joined := append(m.carry[:len(m.carry):len(m.carry)], p[:min(len(p), keep)]...)
		if bytes.Contains(joined, m.want) {
			return true
		}
	}
	if bytes.Contains(p, m.want) {
		return true
	}
	if len(p) >= keep {
		m.carry = append(m.carry[:0], p[len(p)-keep:]...)
	} else {
		m.carry = append(m.carry, p...)
		m.carry = m.carry[max(0, len(m.carry)-keep):]
	}
	return false
}
