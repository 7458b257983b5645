package pane

import (
	"context"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

func TestRefreshClosesTheStreamOfARespawnedOrClosedPaneButNotOnASlowTmux(t *testing.T) {
	srv := tmuxtest.New(t)
	h := newHub(t, srv)
	s, release, err := h.Acquire(context.Background(), "%0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer release()

	srv.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err = h.Refresh(ctx, "%0")
	cancel()
	srv.Continue()
	if closed, reason := s.Closed(); err == nil || closed {
		t.Fatalf("Refresh on a stalled tmux: err %v, stream closed %v (%s), want an error and the stream left open", err, closed, reason)
	}

	if p, err := h.Refresh(context.Background(), "%0"); err != nil || p.ID != "%0" {
		t.Fatalf("Refresh of a live pane: %+v %v", p, err)
	}
	if closed, reason := s.Closed(); closed {
		t.Fatalf("Refresh of a live pane closed its stream: %s", reason)
	}

	srv.Must("respawn-pane", "-k", "-t", "%0", "sh")
	if _, err := h.Refresh(context.Background(), "%0"); err != nil {
		t.Fatal(err)
	}
	if closed, reason := s.Closed(); !closed || reason != "the pane was respawned" {
		t.Fatalf("after respawn-pane: stream closed %v (%q), want closed as respawned", closed, reason)
	}

	srv.Must("split-window", "-t", "%0", "sh")
	s1, release1, err := h.Acquire(context.Background(), "%1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer release1()
	srv.Must("kill-pane", "-t", "%1")
	if _, err := h.Refresh(context.Background(), "%1"); err == nil {
		t.Fatal("Refresh of a closed pane: no error")
	}
	if closed, _ := s1.Closed(); !closed {
		t.Fatal("Refresh of a closed pane left its stream open")
	}
}
