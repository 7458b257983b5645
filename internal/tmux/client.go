package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// DefaultCommandTimeout bounds a tmux command whose caller set no
	// deadline of its own.
	DefaultCommandTimeout = 5 * time.Second
	// attachRetryDelay is how long after a failed attach (no session yet)
	// commands go straight to separate processes before attaching is tried
	// again. Short, so a session made by anyone soon brings control mode.
	attachRetryDelay = 250 * time.Millisecond
)

// readOnly are the commands that change nothing, so running one again
// (to get a reply that text inside it cannot forge) is safe.
var readOnly = map[string]bool{
	"capture-pane": true, "display-message": true, "list-sessions": true, "list-windows": true,
	"list-panes": true, "list-buffers": true, "list-clients": true, "show-options": true,
	"show-option": true, "show-buffer": true, "show-environment": true, "show-hooks": true,
}

// Options say which tmux server a Client addresses and how.
type Options struct {
	Binary     string   // tmux executable name or path; "tmux" if empty
	SocketName string   // -L
	SocketPath string   // -S
	Prefix     []string // argv before the binary (a remote transport later)
}

// Client is the connection to one tmux server. Commands go through a
// control-mode client when a session exists to attach to, and otherwise
// run as bounded separate tmux processes. The control client is opened
// lazily, and opened again after the session it was attached to is gone or
// the server restarted. A Client is safe for concurrent use.
type Client struct {
	launcher *Launcher
	version  string
	binary   string
	// closing ends when Close is called, cutting short every command and
	// process still running, so none outlives the client.
	closing context.Context
	stop    context.CancelFunc

	// attaching holds a token while a control client attaches: one at a
	// time, command client and output clients alike, since tmux 3.3a
	// crashes when a client detaches while a control client is attaching.
	attaching chan struct{}
	// gate holds back the commands that notify every control client while
	// one attaches, and an attach while such commands run (see attachGate).
	gate attachGate
	// sent counts the commands written to control clients.
	sent atomic.Int64

	mu         sync.Mutex
	ctl        *controlClient
	connecting chan struct{} // non-nil while an attach is in progress
	retryAfter time.Time     // no attach attempt before this time
	streams    *streamSet
	closed     bool
	closeOnce  sync.Once
}

// New resolves and checks the tmux binary and returns a Client. It fails
// at once if the binary cannot be found or does not run as tmux.
func New(ctx context.Context, opts Options) (*Client, error) {
	bin := opts.Binary
	if bin == "" {
		bin = "tmux"
	}
	if len(opts.Prefix) == 0 {
		path, err := exec.LookPath(bin)
		if err != nil {
			return nil, fmt.Errorf("finding tmux binary %q: %w", bin, err)
		}
		bin = path
	}
	l := &Launcher{Prefix: opts.Prefix, Binary: bin, SocketName: opts.SocketName, SocketPath: opts.SocketPath}
	ctx, cancel := context.WithTimeout(ctx, DefaultCommandTimeout)
	defer cancel()
	out, err := l.run(ctx, "-V")
	if err != nil {
		return nil, fmt.Errorf("checking tmux binary %q: %w", bin, err)
	}
	if len(out) == 0 || !strings.HasPrefix(out[0], "tmux ") {
		return nil, fmt.Errorf("checking tmux binary %q: %q does not look like tmux -V output", bin, strings.Join(out, " "))
	}
	closing, stop := context.WithCancel(context.Background())
	c := &Client{launcher: l, version: strings.TrimPrefix(out[0], "tmux "), binary: bin, closing: closing, stop: stop,
		attaching: make(chan struct{}, 1)}
	c.streams = newStreamSet(c)
	c.gate.afterDetach = func(ctx context.Context) {
		if c.closing.Err() == nil { // once closed, nothing attaches again
			_, _ = c.probe(ctx, "display-message", "-p", "")
		}
	}
	return c, nil
}

// Version returns the tmux version, such as "3.3a".
func (c *Client) Version() string { return c.version }

// Remote reports whether the client reaches its server through a
// transport (ssh): local files and processes say nothing about it.
func (c *Client) Remote() bool { return len(c.launcher.Prefix) > 0 }

// Transport returns a copy of the argv that runs a command on the
// server's host (`ssh … -- HOST`), or nil for a local server: what a probe
// of that host's network runs through, on the same shared connection.
func (c *Client) Transport() []string { return append([]string(nil), c.launcher.Prefix...) }

// Binary returns the resolved path of the tmux executable.
func (c *Client) Binary() string { return c.binary }

// ProcessesStarted reports how many tmux processes the client has started:
// in steady state with a session, a command starts none.
func (c *Client) ProcessesStarted() int64 { return c.launcher.Started() }

// CommandsSent reports how many commands the client has written to its
// control clients (each followed by a sentinel, not counted), its own and
// those that mute and resume panes. With ProcessesStarted it is every
// command tmcp asked of tmux.
func (c *Client) CommandsSent() int64 { return c.sent.Load() }

// attach starts a control client attached to target (empty: tmux's
// choice), once no other attach is in progress, bounded by ctx.
func (c *Client) attach(ctx context.Context, target, flags string, onEvent func(OutputEvent)) (*controlClient, error) {
	select {
	case c.attaching <- struct{}{}:
		defer func() { <-c.attaching }()
	case <-ctx.Done():
		args := []string{"attach-session"}
		if target != "" {
			args = append(args, "-t", target)
		}
		return nil, noAnswer(args, ctx.Err())
	}
	return startControl(ctx, c.launcher, &c.gate, &c.sent, target, flags, onEvent)
}

// notifying lets a command through the gate (see attachGate), and returns
// what lets it out.
func (c *Client) notifying(ctx context.Context, args []string) (leave func(), err error) {
	if !notifiesEveryClient(args) {
		return func() {}, nil
	}
	if err := c.gate.enter(ctx, false); err != nil {
		return nil, noAnswer(args, err)
	}
	return func() {
		if closesSessions(args) {
			c.settleDetaches(ctx)
		}
		c.gate.leave(false)
	}, nil
}

// withDeadline gives ctx the default deadline when it has none.
func withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultCommandTimeout)
}

// bound gives a command its deadline and ends it when the client closes.
func (c *Client) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := withDeadline(ctx)
	stop := context.AfterFunc(c.closing, cancel)
	return ctx, func() { stop(); cancel() }
}

// Run runs one tmux command and returns its output lines. The command is
// bounded by ctx's deadline, or DefaultCommandTimeout when it has none.
func (c *Client) Run(ctx context.Context, args ...string) ([]string, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	if len(args) > 0 && args[0] == "kill-server" {
		// The reply may never come back over a connection the command ends.
		return c.process(ctx, args)
	}
	for attempt := 0; attempt < 2; attempt++ {
		ctl, err := c.control(ctx)
		if err != nil {
			return nil, err
		}
		if ctl == nil {
			out, err := c.process(ctx, args)
			if err == nil && args[0] == "new-session" {
				c.mu.Lock()
				c.retryAfter = time.Time{}
				c.mu.Unlock()
			}
			return out, err
		}
		leave, err := c.notifying(ctx, args)
		if err != nil {
			return nil, err
		}
		out, err := ctl.run(ctx, args)
		leave()
		switch {
		case errors.Is(err, errClosed):
			c.drop(ctl)
			continue
		case errors.Is(err, errTainted) && readOnly[args[0]]:
			// Pane text forged the framing; a process gets an unforgeable reply.
			return c.process(ctx, args)
		case errors.Is(err, errTainted):
			return nil, &CommandError{Args: args, Message: "the command ran, but its reply was forged by text inside it (a pane imitating tmux's framing); it was not run again", Err: err}
		}
		return out, err
	}
	return c.process(ctx, args)
}

// RunProcess runs one tmux command as a separate process, whatever the
// state of the control connection.
func (c *Client) RunProcess(ctx context.Context, args ...string) ([]string, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	return c.process(ctx, args)
}

// process runs a command as a process, through the gate.
func (c *Client) process(ctx context.Context, args []string) ([]string, error) {
	leave, err := c.notifying(ctx, args)
	if err != nil {
		return nil, err
	}
	defer leave()
	return c.launcher.run(ctx, args...)
}

// attachedControl returns the command client if it is attached, else nil.
func (c *Client) attachedControl() *controlClient {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctl != nil && c.ctl.alive() {
		return c.ctl
	}
	return nil
}

// control returns a live command client, attaching one if none is open
// and a session may exist, or nil when commands must run as processes.
func (c *Client) control(ctx context.Context) (*controlClient, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, errors.New("tmux client closed")
		}
		if c.ctl != nil && c.ctl.alive() {
			ctl := c.ctl
			c.mu.Unlock()
			return ctl, nil
		}
		if wait := c.connecting; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, noAnswer([]string{"attach-session"}, ctx.Err())
			}
		}
		if time.Now().Before(c.retryAfter) {
			c.mu.Unlock()
			return nil, nil
		}
		done := make(chan struct{})
		c.connecting = done
		c.mu.Unlock()

		var self atomic.Pointer[controlClient]
		route := c.streams.routeCommand
		ctl, err := c.attach(ctx, "", commandClientFlags, func(ev OutputEvent) {
			route(self.Load(), ev)
		})
		self.Store(ctl)

		c.mu.Lock()
		c.connecting = nil
		close(done)
		if err != nil {
			c.retryAfter = time.Now().Add(attachRetryDelay)
			c.mu.Unlock()
			if ctx.Err() != nil {
				return nil, err
			}
			// No session or no server: tmux will say which on a process.
			return nil, nil
		}
		c.ctl = ctl
		c.mu.Unlock()
		return ctl, nil
	}
}

// Prepare attaches the command client now, when a session exists, so that
// the first command does not wait for it. Without a session it does
// nothing: commands run as processes until one appears.
func (c *Client) Prepare(ctx context.Context) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	c.control(ctx)
}

// drop forgets a command client that has gone away.
func (c *Client) drop(ctl *controlClient) {
	c.mu.Lock()
	if c.ctl == ctl {
		c.ctl = nil
		c.retryAfter = time.Time{}
	}
	c.mu.Unlock()
	ctl.close()
}

// ControlConnected reports whether a command client is attached now.
func (c *Client) ControlConnected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ctl != nil && c.ctl.alive()
}

// ControlSessions returns the ids of the sessions tmcp's own control
// clients are attached to, one entry per client.
func (c *Client) ControlSessions() []string {
	c.mu.Lock()
	ctl := c.ctl
	c.mu.Unlock()
	var ids []string
	if ctl != nil && ctl.alive() {
		ids = append(ids, ctl.sessionID())
	}
	return append(ids, c.streams.sessions()...)
}

// Close ends every control client and waits briefly for them to exit.
// Every call returns only once that is done.
func (c *Client) Close() error {
	c.closeOnce.Do(c.close)
	return nil
}

func (c *Client) close() {
	c.stop()
	c.mu.Lock()
	c.closed = true
	ctl := c.ctl
	c.ctl = nil
	c.mu.Unlock()
	clients := c.streams.closeAll()
	if ctl != nil {
		clients = append(clients, ctl)
	}
	for _, cc := range clients {
		cc.close()
	}
	answering := len(clients) > 0
	for _, cc := range clients {
		cc.wait(quietBound + closeGrace + processWaitDelay)
		answering = answering && !cc.killed.Load()
	}
	if answering {
		// tmux learns that a client went, and tells every control client
		// so, only on its next look at the client's socket: a tmcp that
		// attaches right after this one closed (a restart, an upgrade)
		// would otherwise be mid-attach then, which crashes tmux 3.3a (see
		// attachGate). A command answered by a process comes after that.
		// Not when tmux let no client go in time: it is stopped or
		// swamped, and tmcp must not wait on it to exit.
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		_, _ = c.launcher.run(ctx, "display-message", "-p", "")
		cancel()
	}
}

// SocketPath returns the path of the socket the client addresses, worked
// out as tmux does: -S, else -L NAME (or "default") under TMUX_TMPDIR (or
// /tmp) in tmux-UID, else the socket of the enclosing $TMUX.
//
// For a remote server (a client with a transport prefix) it is the path as
// configured, or the far side's default named by tmux's rule with its
// unknown parts left as they are: it is not a local path.
func (c *Client) SocketPath() string {
	l := c.launcher
	if l.SocketPath != "" {
		return l.SocketPath
	}
	if c.Remote() {
		name := l.SocketName
		if name == "" {
			name = "default"
		}
		return "${TMUX_TMPDIR:-/tmp}/tmux-UID/" + name
	}
	if l.SocketName == "" {
		if env := os.Getenv("TMUX"); env != "" {
			path, _, _ := strings.Cut(env, ",")
			return path
		}
	}
	name := l.SocketName
	if name == "" {
		name = "default"
	}
	return filepath.Join(SocketDir(), name)
}

// SocketDir returns the directory where tmux keeps this user's sockets:
// ${TMUX_TMPDIR:-/tmp}/tmux-UID.
func SocketDir() string {
	dir := os.Getenv("TMUX_TMPDIR")
	if dir == "" {
		dir = "/tmp"
	}
	return filepath.Join(dir, "tmux-"+strconv.Itoa(os.Getuid()))
}
