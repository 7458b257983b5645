package tmux

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// writeQueueLen is how many commands may wait for the writer before
	// callers block (each still bounded by its context).
	writeQueueLen = 64
	// maxLineLen bounds one line of control-mode output; a longer line
	// means the stream is not what tmux writes, and the client is closed.
	maxLineLen = 64 << 20
	// closeGrace is how long a closing client may take to exit on its own
	// before it is killed (a stopped server never lets it exit).
	closeGrace = 200 * time.Millisecond
)

var (
	// errClosed is returned for a command whose client went away before
	// tmux started it; such a command can safely be sent again elsewhere.
	errClosed = errors.New("control client closed")
	// errTainted is returned when a reply's framing was forged by text
	// inside it; the command ran, but its reply cannot be trusted.
	errTainted = errors.New("reply framing forged by its own content")
)

// sessionGone says why tmux ended a client without a word: a bare %exit,
// nothing on stderr, is what a client attaching, or about to be used, gets
// when its session or its server goes (verified on 3.3a: kill-server
// during an attach).
const sessionGone = "tmux ended the connection: the session or server went away"

// OutputEvent is what a control client learns about a pane's output.
type OutputEvent struct {
	Pane string // "%3"
	Data []byte // bytes the pane's program wrote, unescaped; valid only until the receiver returns
	// Age is how long tmux held Data before it sent it (to the
	// millisecond, from a client with pause-after; else 0): the bytes came
	// from the pane that much before they were read.
	Age    time.Duration
	Paused bool // tmux paused this pane's output: bytes were dropped
	// Continued: tmux continued this pane's output to the client (an
	// answer to tmcp's own command, never passed to a stream).
	Continued bool
	Ended     bool // the stream ended: the pane's session or server is gone
	// Lost, with Ended, says the connection to tmux broke (its client
	// process died, or the network under it) without tmux ending it;
	// Reason then says how.
	Lost   bool
	Reason string
	Layout bool // panes or windows came, went or changed (Pane is empty)
}

// controlClient is one `tmux -C attach` process. Commands are written one
// per line and answered in order; each is followed by a sentinel
// `display-message` whose text is a secret nonce, and a reply is accepted
// only once its sentinel comes back intact. A pane's text inside a reply
// can imitate a guard line, but it cannot produce the nonce, so a forged
// %end is detected instead of trusted.
type controlClient struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *bytes.Buffer
	nonce   string
	onEvent func(OutputEvent)
	sent    *atomic.Int64 // counts the commands written
	writes  chan *request
	kick    chan struct{} // a command was posted
	done    chan struct{} // closed when the reader has finished
	reaped  chan struct{} // closed once the process has been waited for
	ready   chan struct{} // closed once the attach has completed

	mu      sync.Mutex
	pending []*request
	drained bool       // the reader has finished and failed what was pending
	posted  []*request // posted commands the writer has yet to take
	seq     uint64
	session string // "$1", from %session-changed
	// name is an output client's name in tmux (#{client_name}), set before
	// the client is published to its streams; "" if unknown.
	name      string
	exitNote  string
	exited    bool        // tmux said %exit: the client did not just vanish
	remote    bool        // runs through a transport (ssh) that can break on its own
	gate      *attachGate // its detaching notifies every control client
	ended     atomic.Bool // its output ended: it went on its own, not by tmcp's close
	killed    atomic.Bool // close killed it: tmux did not let it go in time
	closeOnce sync.Once
}

// request is one command on its way through a control client.
type request struct {
	args     []string
	line     []byte // command line and sentinel line, newline-terminated
	sentinel string
	started  bool // tmux began the command (its %begin was seen)
	// posted requests are never abandoned: whoever posted one counts on
	// tmux acting on it, whether or not somebody awaits its answer.
	posted bool
	// state is queued until the writer claims the request to write it, or
	// the caller abandons it first, so that a command given up on before
	// it reached tmux is known never to run.
	state  atomic.Int32
	body   []string
	failed bool // tmux answered %error
	err    error
	done   chan struct{}
}

// Request states.
const (
	queued int32 = iota
	claimed
	abandoned
)

// startControl starts a control client attached to target (empty: tmux's
// choice) and waits until the attach is complete.
func startControl(ctx context.Context, l *Launcher, gate *attachGate, sent *atomic.Int64, target string, flags string, onEvent func(OutputEvent)) (*controlClient, error) {
	// -N: attaching must never start a server (which would read the user's
	// configuration and then exit for want of a session).
	args := []string{"-N", "-C", "attach-session", "-f", flags}
	if target != "" {
		args = append(args, "-t", target)
	}
	// The process outlives ctx: it is ended by close, not by the caller.
	cmd := l.command(context.Background(), args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting tmux control client: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("starting tmux control client: %w", err)
	}
	c := &controlClient{
		cmd:     cmd,
		stdin:   stdin,
		stderr:  new(bytes.Buffer),
		nonce:   randomHex(12),
		onEvent: onEvent,
		sent:    sent,
		writes:  make(chan *request, writeQueueLen),
		kick:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		reaped:  make(chan struct{}),
		ready:   make(chan struct{}),
		remote:  len(l.Prefix) > 0,
		gate:    gate,
	}
	cmd.Stderr = &lockedWriter{w: c.stderr, mu: &c.mu}
	if err := gate.enter(ctx, true); err != nil {
		return nil, noAnswer(args, err)
	}
	l.started.Add(1)
	if err := cmd.Start(); err != nil {
		gate.leave(true)
		return nil, fmt.Errorf("starting tmux control client: %w", err)
	}
	// From its first message the server counts the process as a control
	// client, with no state until the attach completes: the gate stays
	// shut until then, or until the process is gone.
	go func() {
		select {
		case <-c.ready:
		case <-c.done:
		}
		gate.leave(true)
	}()
	go c.readLoop(stdout)
	go c.writeLoop()
	select {
	case <-c.ready:
		return c, nil
	case <-c.done:
		c.close()
		// Its stderr is whole once the process has been waited for.
		c.wait(closeGrace + processWaitDelay)
		msg := c.failure()
		if c.endedWithoutAWord() {
			msg = sessionGone + " while the client attached"
		}
		err := &CommandError{Args: args, Message: msg}
		if c.transportFailed(ctx) {
			// ssh died before tmux answered (a network cut, a kill): the
			// same lost connection as one that breaks later, and said so.
			err.Err = ErrConnectionLost
			err.Message = ErrConnectionLost.Error() + " (" + msg + ")"
		}
		return nil, err
	case <-ctx.Done():
		c.close()
		return nil, noAnswer(args, ctx.Err())
	}
}

// transportFailed reports whether a remote client's process, once reaped,
// ended as ssh does when it fails itself or is killed, rather than with
// tmux's own answer (a session that does not exist, say).
func (c *controlClient) transportFailed(ctx context.Context) bool {
	if !c.remote {
		return false
	}
	select {
	case <-c.reaped:
	case <-ctx.Done():
		return false
	}
	st := c.cmd.ProcessState
	return st != nil && (st.ExitCode() == sshFailed || st.ExitCode() < 0)
}

// lockedWriter lets the process's stderr be read while it is written.
type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// failure describes why the client ended, in tmux's words when it gave any.
func (c *controlClient) failure() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if msg := strings.TrimSpace(c.stderr.String()); msg != "" {
		return msg
	}
	if c.exitNote != "" {
		return "control client exited: " + c.exitNote
	}
	return "control client exited"
}

// endedWithoutAWord reports whether tmux ended the client with a bare
// %exit and nothing on stderr.
func (c *controlClient) endedWithoutAWord() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exited && c.exitNote == "" && strings.TrimSpace(c.stderr.String()) == ""
}

// lost reports whether the client ended without tmux ending it (no
// %exit), and how.
func (c *controlClient) lost() (bool, string) {
	c.mu.Lock()
	exited := c.exited
	c.mu.Unlock()
	if exited {
		return false, ""
	}
	return true, c.failure()
}

// alive reports whether the client can still take commands.
func (c *controlClient) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// sessionID returns the id of the session the client is attached to.
func (c *controlClient) sessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// newRequest prepares a command and its sentinel.
func (c *controlClient) newRequest(args []string) (*request, error) {
	line, err := commandLine(args)
	if err != nil {
		return nil, &CommandError{Args: args, Message: err.Error()}
	}
	c.mu.Lock()
	c.seq++
	sentinel := c.nonce + "." + strconv.FormatUint(c.seq, 10)
	c.mu.Unlock()
	return &request{
		args:     args,
		line:     []byte(line + "\ndisplay-message -p " + sentinel + "\n"),
		sentinel: sentinel,
		done:     make(chan struct{}),
	}, nil
}

// post queues a command whose answer nobody needs, without blocking, and
// never drops it: callers record what they asked of tmux (a pane muted or
// resumed) on the strength of it. Posted commands reach tmux in the order
// posted, before any command sent after post returns. What is posted is
// bounded by its callers: a pane is muted or resumed once per change.
// A caller that needs the answer after all gives the request to await.
func (c *controlClient) post(args ...string) *request {
	r, err := c.newRequest(args)
	if err != nil {
		r = &request{args: args, err: err, done: make(chan struct{})}
		close(r.done)
		return r
	}
	r.posted = true
	c.mu.Lock()
	c.posted = append(c.posted, r)
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
	return r
}

// placedKey carries the function WithPlaced gives a context.
type placedKey struct{}

// WithPlaced returns a context under which a command sent over a control
// client calls fn once its place among the commands that client sends is
// fixed: every command sent after that reaches tmux after it. A caller
// that must order its command before later ones need not wait for the
// reply. fn is not called for a command that never gets a place.
func WithPlaced(ctx context.Context, fn func()) context.Context {
	return context.WithValue(ctx, placedKey{}, fn)
}

// placed calls the function WithPlaced gave ctx, if any.
func placed(ctx context.Context) {
	if fn, ok := ctx.Value(placedKey{}).(func()); ok {
		fn()
	}
}

// run sends one command and waits for its verified reply.
func (c *controlClient) run(ctx context.Context, args []string) ([]string, error) {
	r, err := c.newRequest(args)
	if err != nil {
		return nil, err
	}
	select {
	case c.writes <- r:
		placed(ctx)
	case <-c.done:
		return nil, c.closedErr()
	case <-ctx.Done():
		return nil, notSent(args, ctx.Err())
	}
	return c.await(ctx, r)
}

// await waits for the verified reply to a command run or post gave the
// client.
func (c *controlClient) await(ctx context.Context, r *request) ([]string, error) {
	args := r.args
	select {
	case <-r.done:
	case <-c.done:
		// Queued for a writer that has stopped, or put in the queue as the
		// client ended: nobody will take it, so it never reached tmux.
		if r.state.CompareAndSwap(queued, abandoned) {
			return nil, c.closedErr()
		}
		// Taken by the writer: it, or the reader, ends it.
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, noAnswer(args, ctx.Err())
		}
	case <-ctx.Done():
		if !r.posted && r.state.CompareAndSwap(queued, abandoned) {
			return nil, notSent(args, ctx.Err())
		}
		return nil, noAnswer(args, ctx.Err())
	}
	switch {
	case r.err != nil:
		return nil, r.err
	case r.failed:
		return nil, &CommandError{Args: args, Message: strings.Join(r.body, "; ")}
	}
	return r.body, nil
}

// closedErr is the error of a command that never reached tmux because
// the client ended: errClosed, and a lost connection if it was one.
func (c *controlClient) closedErr() error {
	if lost, _ := c.lost(); lost && c.remote {
		return errors.Join(errClosed, ErrConnectionLost)
	}
	return errClosed
}

// writeLoop sends queued commands in order, posted ones before a command
// sent after them. A request joins the pending queue before its bytes are
// written, so the reader always finds it.
func (c *controlClient) writeLoop() {
	for {
		var next *request
		select {
		case next = <-c.writes:
		case <-c.kick:
		case <-c.done:
			return
		}
		c.mu.Lock()
		batch := c.posted
		c.posted = nil
		c.mu.Unlock()
		if next != nil {
			batch = append(batch, next)
		}
		for _, r := range batch {
			if !c.write(r) {
				return
			}
		}
	}
}

// write sends one request, closing the client if tmux cannot take it.
func (c *controlClient) write(r *request) bool {
	if !r.state.CompareAndSwap(queued, claimed) {
		return true // its caller gave up before tmux could see it
	}
	c.mu.Lock()
	if c.drained {
		// Nobody will read a reply: fail it now, not at its deadline.
		c.mu.Unlock()
		r.err = errClosed
		close(r.done)
		return false
	}
	c.pending = append(c.pending, r)
	c.mu.Unlock()
	c.sent.Add(1)
	if _, err := c.stdin.Write(r.line); err != nil {
		c.close()
		return false
	}
	return true
}

// close ends the client: stdin is closed so tmux detaches it, and the
// process is killed if it has not exited within closeGrace.
func (c *controlClient) close() {
	c.closeOnce.Do(func() {
		go func() {
			// Detaching an attached client notifies every control client.
			// One that never attached, or went on its own, is no detach
			// of tmcp's making: holding it back would only delay its end,
			// which settleDetaches may be waiting for under the gate.
			attached := false
			select {
			case <-c.ready:
				if !c.ended.Load() {
					c.quiet()
					attached = c.gate.enter(context.Background(), false) == nil
				}
			default:
			}
			c.stdin.Close()
			select {
			case <-c.done:
			case <-time.After(closeGrace):
				c.killed.Store(true)
				_ = c.cmd.Process.Kill()
			}
			_ = c.cmd.Wait()
			close(c.reaped)
			if attached {
				ctx, cancel := context.WithTimeout(context.Background(), settleBound)
				c.gate.settle(ctx)
				cancel()
				c.gate.leave(false)
			}
		}()
	})
}

// quietBound bounds quiet: a client that does not answer soon (tmux
// stopped or swamped) is closed as it is, so that tmcp still exits at once.
const quietBound = 150 * time.Millisecond

// quiet pauses the output of every pane of the client's session to the
// client, and waits until tmux has done so. tmux 3.3a exits ("fatal: not
// enough data", control_write_pending) when a control client that still
// has a pane's output queued is told to exit while the pane writes: the
// exiting client skips the pane's new output, which moves its offset past
// the queued block, and the block's next write finds nothing. A paused
// pane has its queued output discarded first.
func (c *controlClient) quiet() {
	ctx, cancel := context.WithTimeout(context.Background(), quietBound)
	defer cancel()
	panes, err := c.run(ctx, []string{"list-panes", "-s", "-F", "#{pane_id}"})
	if err != nil || len(panes) == 0 {
		return
	}
	args := []string{"refresh-client"}
	for _, p := range panes {
		args = append(args, "-A", p+":"+paneMute)
	}
	_, _ = c.run(ctx, args)
}

// wait blocks until the client's process has been reaped or d has passed.
func (c *controlClient) wait(d time.Duration) {
	select {
	case <-c.reaped:
	case <-time.After(d):
	}
}

// readLoop reads the client's output until it ends, then fails every
// command still pending.
func (c *controlClient) readLoop(stdout io.Reader) {
	p := &replyParser{c: c}
	br := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := readLine(br)
		if err != nil {
			break
		}
		p.line(line)
	}
	c.ended.Store(true)
	c.close()
	c.mu.Lock()
	pending := c.pending
	c.pending, c.drained = nil, true
	c.mu.Unlock()
	msg := c.failure()
	lost, _ := c.lost()
	lost = lost && c.remote
	for _, r := range pending {
		switch {
		case r.started && lost:
			r.err = &CommandError{Args: r.args, Message: ErrConnectionLost.Error() + " during the command: " + msg, Err: ErrConnectionLost}
		case r.started:
			r.err = &CommandError{Args: r.args, Message: "tmux ended the connection during the command: " + msg}
		case lost:
			r.err = errors.Join(errClosed, ErrConnectionLost)
		default:
			r.err = errClosed
		}
		close(r.done)
	}
	close(c.done)
}

// readLine returns one line without its newline, holding a line split
// across reads until it is whole.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		buf := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull && len(buf) < maxLineLen {
			line, err = br.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	if err != nil {
		return nil, err
	}
	return line[:len(line)-1], nil
}
