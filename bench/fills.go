package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The fills comparison (-fills N) measures, with bare tmux clients only,
// which way of carrying a job's output loses none of it when many panes
// write at once: N panes of one session each print `seq 1 200000` at the
// same moment (about 1.5 MB each, the soak's fill), under -fills-load busy
// processes beside tmux, and each design's client checks every pane's
// bytes against what seq wrote.

const (
	fillLines = 200000
	fillEnd   = "FILLEND"
	// fillLimit bounds one design's run; a pane not done by then counts
	// as lost.
	fillLimit = 15 * time.Minute
)

// fillDesign is one way of carrying the panes' output to a reader.
type fillDesign struct {
	name string
	// carry starts carrying the panes' output and returns what each
	// pane's reader received once every pane is done or ctx ends.
	carry func(f *fillRun, ctx context.Context) (map[string]*fillResult, error)
}

// fillResult is what reached a reader of one pane.
type fillResult struct {
	data   []byte
	paused int // %pause notifications for the pane
}

// fillRun is one design's session of panes, waiting for the go file.
type fillRun struct {
	srv     *tmuxServer
	session string
	panes   []string
	dir     string
	goFile  string
}

// fillExpected is the bytes each pane writes, as the terminal sends them
// (the line discipline turns each newline into CR LF).
func fillExpected() []byte {
	var b bytes.Buffer
	for i := 1; i <= fillLines; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteString("\r\n")
	}
	b.WriteString(fillEnd + "\r\n")
	return b.Bytes()
}

// fillDesigns are the ways compared.
func fillDesigns() []fillDesign {
	return []fillDesign{
		{"one output client, pause-after=10 (tmcp's before)", func(f *fillRun, ctx context.Context) (map[string]*fillResult, error) {
			return f.oneClient(ctx, 10)
		}},
		{"pipe-pane -O into a file per pane", (*fillRun).pipes},
		{"one output client, pause-after=60", func(f *fillRun, ctx context.Context) (map[string]*fillResult, error) {
			return f.oneClient(ctx, 60)
		}},
		{"an output client per pane, pause-after=10", (*fillRun).clientPerPane},
	}
}

// fills runs every design in turn on n panes and prints a table.
func fills(ctx context.Context, srv *tmuxServer, dir string, n, load int, w io.Writer) error {
	want := fillExpected()
	stopLoad := busyLoad(load)
	defer stopLoad()
	fmt.Fprintf(w, "%d panes of one session print seq 1 %d at once (%d bytes each), %d busy processes beside tmux\n\n",
		n, fillLines, len(want), load)
	fmt.Fprintf(w, "%-52s %6s %6s %6s %9s\n", "design", "whole", "lost", "paused", "seconds")
	for i, d := range fillDesigns() {
		f, err := newFillRun(ctx, srv, filepath.Join(dir, fmt.Sprintf("fills-%d", i)), fmt.Sprintf("fills%d", i), n)
		if err != nil {
			return err
		}
		start := time.Now()
		got, err := d.carry(f, ctx)
		took := time.Since(start)
		_, _ = srv.Run(ctx, "kill-session", "-t", f.session)
		if err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
		whole, paused := 0, 0
		for _, p := range f.panes {
			r := got[p]
			if r != nil && bytes.Equal(r.data, want) {
				whole++
			}
			if r != nil && r.paused > 0 {
				paused++
			}
		}
		fmt.Fprintf(w, "%-52s %6d %6d %6d %9.1f\n", d.name, whole, n-whole, paused, took.Seconds())
	}
	return nil
}

// busyLoad starts n processes that spin, and returns what stops them.
func busyLoad(n int) func() {
	var cmds []*exec.Cmd
	for range n {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if c.Start() == nil {
			cmds = append(cmds, c)
		}
	}
	return func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
}

// newFillRun makes a session of n panes (one window each), every one
// waiting for the go file before it prints its fill.
func newFillRun(ctx context.Context, srv *tmuxServer, dir, session string, n int) (*fillRun, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f := &fillRun{srv: srv, session: session, dir: dir, goFile: filepath.Join(dir, "go")}
	command := fmt.Sprintf("while [ ! -e %s ]; do sleep 0.02; done; seq 1 %d; echo %s; exec sleep 3600", f.goFile, fillLines, fillEnd)
	for i := range n {
		args := []string{"new-window", "-d", "-t", session + ":", "-P", "-F", "#{pane_id}", command}
		if i == 0 {
			args = []string{"new-session", "-d", "-s", session, "-x", "80", "-y", "24", "-P", "-F", "#{pane_id}", command}
		}
		out, err := srv.Run(ctx, args...)
		if err != nil {
			return nil, fmt.Errorf("making fill pane %d: %w", i, err)
		}
		f.panes = append(f.panes, strings.TrimSpace(out))
	}
	return f, nil
}

// start lets every pane print.
func (f *fillRun) start() error { return os.WriteFile(f.goFile, nil, 0o600) }

// readFills reads a control client until each pane in mine has printed
// its end line or ctx ends, keeping each one's bytes and pauses.
func readFills(ctx context.Context, c *controlFloor, mine []string, got map[string]*fillResult, mu *sync.Mutex) error {
	left := map[string]bool{}
	for _, p := range mine {
		left[p] = true
	}
	stop := context.AfterFunc(ctx, func() { _ = c.cmd.Process.Kill() })
	defer stop()
	end := []byte(fillEnd + "\r\n")
	for len(left) > 0 {
		ev, err := c.read()
		if err != nil {
			if ctx.Err() != nil {
				return nil // the rest count as lost
			}
			return err
		}
		switch ev {
		case eventOutput:
			p := string(c.outputPane)
			if !left[p] {
				continue
			}
			mu.Lock()
			r := got[p]
			r.data = append(r.data, c.data...)
			done := bytes.HasSuffix(r.data, end)
			mu.Unlock()
			if done {
				delete(left, p)
			}
		case eventPause:
			p := string(c.outputPane)
			if left[p] {
				mu.Lock()
				got[p].paused++
				mu.Unlock()
				// Continued, as tmcp does, so the pane's end still comes.
				_ = c.send("refresh-client -A '"+p+":continue'", false)
			}
		}
	}
	return nil
}

// oneClient carries every pane through one output client.
func (f *fillRun) oneClient(ctx context.Context, pauseAfter int) (map[string]*fillResult, error) {
	c, err := startControlFloor(ctx, f.srv, f.session, "ignore-size,pause-after="+strconv.Itoa(pauseAfter))
	if err != nil {
		return nil, err
	}
	defer c.close()
	got := f.results()
	if err := f.start(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, fillLimit)
	defer cancel()
	var mu sync.Mutex
	return got, readFills(ctx, c, f.panes, got, &mu)
}

// clientPerPane carries each pane through an output client of its own,
// on which every other pane is paused.
func (f *fillRun) clientPerPane(ctx context.Context) (map[string]*fillResult, error) {
	var clients []*controlFloor
	defer func() {
		for _, c := range clients {
			c.close()
		}
	}()
	for _, p := range f.panes {
		c, err := startControlFloor(ctx, f.srv, f.session, "ignore-size,pause-after=10")
		if err != nil {
			return nil, err
		}
		clients = append(clients, c)
		for _, other := range f.panes {
			if other != p {
				if _, err := c.run("refresh-client -A '" + other + ":pause'"); err != nil {
					return nil, err
				}
			}
		}
	}
	got := f.results()
	if err := f.start(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, fillLimit)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(clients))
	for i, c := range clients {
		wg.Go(func() { errs[i] = readFills(ctx, c, f.panes[i:i+1], got, &mu) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return got, nil
}

// pipes copies each pane's output into a file with pipe-pane -O, while
// one output client has every pane paused, as tmcp mutes the panes it
// does not stream.
func (f *fillRun) pipes(ctx context.Context) (map[string]*fillResult, error) {
	c, err := startControlFloor(ctx, f.srv, f.session, "ignore-size,pause-after=10")
	if err != nil {
		return nil, err
	}
	defer c.close()
	files := map[string]string{}
	for i, p := range f.panes {
		if _, err := c.run("refresh-client -A '" + p + ":pause'"); err != nil {
			return nil, err
		}
		files[p] = filepath.Join(f.dir, fmt.Sprintf("pane-%d", i))
		if _, err := c.run("pipe-pane -O -t " + p + " 'exec cat > " + files[p] + "'"); err != nil {
			return nil, err
		}
	}
	if err := f.start(); err != nil {
		return nil, err
	}
	got := f.results()
	end := []byte(fillEnd + "\r\n")
	deadline := time.Now().Add(fillLimit)
	for left := len(f.panes); left > 0 && time.Now().Before(deadline); {
		left = 0
		for _, p := range f.panes {
			data, _ := os.ReadFile(files[p])
			got[p].data = data
			if !bytes.HasSuffix(data, end) {
				left++
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return got, nil
}

// results makes an empty result for each pane.
func (f *fillRun) results() map[string]*fillResult {
	got := map[string]*fillResult{}
	for _, p := range f.panes {
		got[p] = &fillResult{}
	}
	return got
}
