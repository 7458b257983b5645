package tmux

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// countAfter makes tmux count, in a server option, every run of each
// command named, and returns a func reading the counts once they settle.
func countAfter(t *testing.T, srv *tmuxtest.Server, commands ...string) func() map[string]int {
	t.Helper()
	for _, name := range commands {
		opt := "@count-" + name
		srv.Must("set-option", "-g", opt, "0")
		srv.Must("set-hook", "-g", "after-"+name, fmt.Sprintf(`set-option -gF %s "#{e|+:#{%s},1}"`, opt, opt))
	}
	read := func() map[string]int {
		counts := map[string]int{}
		for _, name := range commands {
			n, err := strconv.Atoi(strings.TrimSpace(srv.Must("show-options", "-gv", "@count-"+name)))
			if err != nil {
				t.Fatal(err)
			}
			counts[name] = n
		}
		return counts
	}
	return func() map[string]int {
		last := read()
		for quiet := 0; quiet < 3; {
			time.Sleep(50 * time.Millisecond)
			now := read()
			if fmt.Sprint(now) == fmt.Sprint(last) {
				quiet++
			} else {
				last, quiet = now, 0
			}
		}
		return last
	}
}

// TestWatchingAPaneOnlyResumesIt: the caller knows the pane's session, so
// watching a pane of a session already streamed sends tmux one command,
// the refresh-client that resumes the pane, and asks it nothing else.
func TestWatchingAPaneOnlyResumesIt(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("split-window", "-d", "-t", "main", "sh")
	c := newClient(t, srv)
	stop, err := c.Watch(context.Background(), "%0", "$0", func(OutputEvent) {})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	settled := countAfter(t, srv, "display-message", "refresh-client")
	before := settled()
	stop1, err := c.Watch(context.Background(), "%1", "$0", func(OutputEvent) {})
	if err != nil {
		t.Fatal(err)
	}
	defer stop1()
	after := settled()
	// Every command over control mode is followed by one display-message,
	// its sentinel: one refresh-client means one display-message.
	refresh := after["refresh-client"] - before["refresh-client"]
	display := after["display-message"] - before["display-message"]
	if refresh != 1 || display != 1 {
		t.Errorf("watching %%1 ran refresh-client %d times and display-message %d times, want 1 and 1 (the resume and its sentinel)", refresh, display)
	}
}

// TestPostedCommandsAreNeverDropped posts far more commands than the
// write queue holds while tmux takes none: each must still be written, in
// order, once tmux reads again (mutes and resumes are recorded as done
// when posted).
func TestPostedCommandsAreNeverDropped(t *testing.T) {
	pr, pw := io.Pipe()
	c := &controlClient{
		stdin:  pw,
		nonce:  "n",
		writes: make(chan *request, writeQueueLen),
		kick:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	defer close(c.done)
	go c.writeLoop()
	const posts = 4 * writeQueueLen
	for i := 0; i < posts; i++ {
		c.post("refresh-client", "-A", fmt.Sprintf("%%%d:pause", i))
	}
	sc := bufio.NewScanner(pr)
	for i := 0; i < posts; i++ {
		want, _ := commandLine([]string{"refresh-client", "-A", fmt.Sprintf("%%%d:pause", i)})
		if !sc.Scan() || sc.Text() != want {
			t.Fatalf("command %d written as %q, want %q", i, sc.Text(), want)
		}
		if !sc.Scan() || sc.Text() != fmt.Sprintf("display-message -p n.%d", i+1) {
			t.Fatalf("command %d: sentinel %q", i, sc.Text())
		}
	}
}
