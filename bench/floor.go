package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

const (
	// floorClientFlags match tmcp's command client: no resizing, no output.
	floorClientFlags = "ignore-size,no-output"
	// ourFlags is the FLAGS field of the guard lines around a command this
	// client sent; the attach's own block, hooks and other clients' commands
	// carry 0.
	ourFlags = "1"
	// closeWait bounds how long a closed control client may take to exit.
	closeWait = time.Second
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
	cc, err := startControlFloor(ctx, srv)
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
	cmd := srv.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// controlFloor is a bare control-mode client: one `tmux -C attach` whose
// stdin takes one command per line and whose stdout frames each reply in
// guard lines. It trusts the framing, which is safe here because the
// benchmark itself wrote every line a capture can contain.
type controlFloor struct {
	wait  func() error
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startControlFloor attaches a control client and reads past the attach's
// own guard block, after which the client takes commands.
func startControlFloor(ctx context.Context, srv *tmuxServer) (*controlFloor, error) {
	cmd := srv.command(ctx, "-C", "attach-session", "-t", sessionName, "-f", floorClientFlags)
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
	c := &controlFloor{wait: cmd.Wait, stdin: stdin, out: bufio.NewReaderSize(stdout, 64<<10)}
	if _, err := c.readReply(""); err != nil {
		c.close()
		return nil, fmt.Errorf("attaching control client: %w", err)
	}
	return c, nil
}

// run sends one command line and returns its reply body.
func (c *controlFloor) run(line string) (string, error) {
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		return "", err
	}
	return c.readReply(ourFlags)
}

// readReply reads lines until the end of the next guard block whose FLAGS
// field is flags (any block when flags is empty), skipping notifications
// and other blocks, and returns the block's body.
func (c *controlFloor) readReply(flags string) (string, error) {
	var body strings.Builder
	number := "" // the block's command number, once its %begin is read
	for {
		line, err := c.out.ReadString('\n')
		if err != nil {
			return "", fmt.Errorf("control client ended: %w", err)
		}
		line = strings.TrimSuffix(line, "\n")
		kind, n, f, guard := parseGuard(line)
		switch {
		case number == "" && guard && kind == "%begin" && (flags == "" || f == flags):
			number = n
		case number != "" && guard && (kind == "%end" || kind == "%error") && n == number:
			if kind == "%error" {
				return "", errors.New(strings.TrimSpace(body.String()))
			}
			return body.String(), nil
		case number != "":
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
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

// close detaches the client by closing its stdin and waits for it to exit;
// the context it was started with kills it should it not.
func (c *controlFloor) close() error {
	c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(closeWait):
		return errors.New("control client did not exit after its stdin closed")
	}
}
