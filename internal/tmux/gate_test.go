package tmux

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestNotifiesEveryClient(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		every  bool // tells every control client
		closes bool // may close a session
	}{
		{[]string{"new-session", "-d"}, true, false},
		{[]string{"kill-pane", "-t", "%1"}, true, true},
		{[]string{"kill-session", "-t", "$1"}, true, true},
		{[]string{"select-window", "-t", "@1"}, true, false},
		{[]string{"copy-mode", "-t", "%1"}, true, false},
		{[]string{"send-keys", "-t", "%1", "-X", "cancel"}, true, false},
		{[]string{"send-keys", "-t", "%1", "-l", "ls"}, true, false}, // a key may end copy mode
		{[]string{"respawn-pane", "-k", "-t", "%1"}, true, false},
		{[]string{"clear-history", "-t", "%1"}, true, false},
		{[]string{"paste-buffer", "-b", "b", "-t", "%1"}, false, false}, // written to the pane, past any mode
		{[]string{"capture-pane", "-p"}, false, false},
		{[]string{"split-window", "-d"}, false, false},
		{[]string{"split-window", "-h"}, true, false}, // its new pane is made the active one
		{[]string{"select-pane", "-t", "%2"}, true, false},
		{[]string{"swap-pane", "-d", "-s", "%1", "-t", "%2"}, true, false},
		{nil, false, false},
	} {
		if got := notifiesEveryClient(tt.args); got != tt.every {
			t.Errorf("notifiesEveryClient(%q) = %v, want %v", tt.args, got, tt.every)
		}
		if got := closesSessions(tt.args); got != tt.closes {
			t.Errorf("closesSessions(%q) = %v, want %v", tt.args, got, tt.closes)
		}
	}
}

// The gate lets notifying commands through together, holds them while an
// attach is in progress or waiting, and holds an attach while they run.
func TestAttachGate(t *testing.T) {
	var g attachGate
	ctx := context.Background()
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 50*time.Millisecond) }
	if err := g.enter(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := g.enter(ctx, false); err != nil {
		t.Fatal("a second notifying command was held while no attach was in progress")
	}
	c, cancel := short()
	if err := g.enter(c, true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an attach while commands run: %v, want it held to its deadline", err)
	}
	cancel()
	attached := make(chan error, 1)
	go func() { attached <- g.enter(ctx, true) }()
	for { // until the attach waits
		g.mu.Lock()
		waiting := g.waiting
		g.mu.Unlock()
		if waiting == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	c, cancel = short()
	if err := g.enter(c, false); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a notifying command while an attach waits: %v, want it held", err)
	}
	cancel()
	g.leave(false)
	g.leave(false)
	if err := <-attached; err != nil {
		t.Fatalf("the attach, once the commands ended: %v", err)
	}
	c, cancel = short()
	if err := g.enter(c, false); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a notifying command during an attach: %v, want it held", err)
	}
	cancel()
	g.leave(true)
	if err := g.enter(ctx, false); err != nil {
		t.Fatalf("a notifying command once the attach ended: %v", err)
	}
}
