package pane

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// TestAHeldStreamEndsWhenItsPaneDiesWithoutAWord: a pane left dead by
// remain-on-exit is not announced by tmux; the hub's own poll must close
// the stream of a pane somebody holds, with nobody asking.
func TestAHeldStreamEndsWhenItsPaneDiesWithoutAWord(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("set-option", "-g", "remain-on-exit", "on")
	h := newHub(t, srv)
	s, release, err := h.Acquire(context.Background(), "%0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	srv.Must("send-keys", "-t", "%0", "exit", "Enter")
	if !tmuxtest.WaitFor(10*time.Second, func() bool { closed, _ := s.Closed(); return closed }) {
		t.Fatalf("the stream of %%0 stayed open after its shell exited (pane dead: %s)", srv.Must("display-message", "-p", "-t", "%0", "#{pane_dead}"))
	}
	if _, reason := s.Closed(); !strings.Contains(reason, "process ended") {
		t.Errorf("the stream of %%0 closed with %q, want its process's end", reason)
	}
}

// TestAStreamNobodyHoldsIsNotPolled: after its last holder releases it, a
// lingering stream costs tmux nothing.
func TestAStreamNobodyHoldsIsNotPolled(t *testing.T) {
	srv := tmuxtest.New(t)
	h := newHub(t, srv)
	_, release, err := h.Acquire(context.Background(), "%0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	sent := func() int64 { return h.tc.CommandsSent() + h.tc.ProcessesStarted() }
	before := sent()
	if !tmuxtest.WaitFor(5*time.Second, func() bool { return sent() > before }) {
		t.Fatal("a held stream's pane was never asked about: the test proves nothing")
	}
	release()
	before = sent()
	time.Sleep(2 * livenessEvery) // the measurement window
	if n := sent() - before; n != 0 || h.Stream("%0") == nil {
		t.Errorf("a lingering stream nobody holds: %d commands sent in %v (stream kept: %v), want 0", n, 2*livenessEvery, h.Stream("%0") != nil)
	}
}
