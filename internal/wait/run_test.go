package wait

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// A run whose line tmux refused because its pane is gone (killed as tmcp
// typed, before its stream said so) ends with the pane's death; a refusal
// for a pane that lives, tmux not answering, or a call that ended before
// tmux answered (its client left as tmcp typed), gives the typing error.
func TestARunThatCouldNotBeTypedEndsWithItsPanesDeath(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	gone := strings.TrimSpace(f.srv.Must("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", "%0", "sh"))
	f.srv.Must("kill-pane", "-t", gone)
	refused := f.tc.SendKeys(ctx, gone, true, "echo x")
	var cerr *tmux.CommandError
	if !errors.As(refused, &cerr) {
		t.Fatalf("typing into a killed pane: %v, want tmux's refusal", refused)
	}
	unanswered := errors.New("no answer")
	// A call that ended as its line was marked (tmcp's client left): a
	// tmux error, but no refusal.
	left, leave := context.WithCancel(ctx)
	leave()
	cut := f.tc.SendKeys(left, gone, true, "echo x")
	if !errors.As(cut, &cerr) || tmux.Refused(cut) {
		t.Fatalf("typing with an ended call: %v, want a tmux error that is no refusal", cut)
	}
	for _, tc := range []struct {
		pane   string
		err    error
		died   bool
		reason string
	}{
		{gone, refused, true, "the pane was closed while the command was typed"},
		{"%0", refused, false, "the command could not be typed, so it never ran: " + refused.Error()},
		{gone, unanswered, false, "the command could not be typed, so it never ran: no answer"},
		{gone, cut, false, "the command could not be typed, so it never ran: " + cut.Error()},
	} {
		j := newJob("abcdef012345", tc.pane, "echo x", time.Now())
		f.s.endUntyped(ctx, j, tc.err)
		if r := j.result(false, 0, 0); !r.Finished || r.PaneDied != tc.died || r.Reason != tc.reason {
			t.Errorf("pane %s, error %q: finished %v paneDied %v reason %q; want paneDied %v, %q", tc.pane, tc.err, r.Finished, r.PaneDied, r.Reason, tc.died, tc.reason)
		}
	}
}

// A run whose output tmux dropped is not taken for ended while tmcp still
// hands its lines to the shell, which is in front reading them; once the
// last line is typed, the shell in front ends it.
func TestALostRunIsNotEndedWhileItsLinesAreStillTyped(t *testing.T) {
	f := newFixture(t)
	pid, err := strconv.Atoi(strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", "%0", "#{pane_pid}")))
	if err != nil {
		t.Fatal(err)
	}
	j := newJob("abcdef012345", "%0", "echo x", time.Now())
	j.shellGroup = f.s.frontGroup(pid)
	j.typingBegins()
	j.typedLine(false) // a handover still to come
	stream := pane.NewStream("%0", 1, 1<<16)
	feed := newFeed()
	_, untap := stream.Tap(feed.write)
	defer untap()
	go f.s.follow(j, stream, feed, 0, func() {})
	// tmux keeps dropping the pane's output, from before the run is
	// followed until it ends.
	go func() {
		for {
			stream.Lost(1)
			select {
			case <-j.done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	// Two looks a second apart find the shell in front: not an end yet.
	select {
	case <-j.done:
		t.Fatalf("the run ended while its lines were still typed: %s", j.result(false, 0, 0).Reason)
	case <-time.After(3 * lostEndEvery):
	}
	j.mu.Lock()
	j.typedAll = true
	j.mu.Unlock()
	select {
	case <-j.done:
	case <-time.After(5 * lostEndEvery):
		t.Fatal("the run typed whole, its shell in front, did not end")
	}
	if r := j.result(false, 0, 0); !r.OutputLost || r.ExitStatus != nil || !strings.Contains(r.Reason, "dropped output") {
		t.Fatalf("the run: outputLost %v status %v (%s); want output lost, its status unknown", r.OutputLost, r.ExitStatus, r.Reason)
	}
}

// A key whose send began as tmcp began to type a run's first line may
// land after that line and discard it, unread: the run ends, not run, at
// the key's grace rather than waiting out the handover of its helper.
func TestAKeySentAsTheTypingBeganEndsTheRunItCut(t *testing.T) {
	f := newFixture(t)
	id := f.shellPane("sh", "env PS1='$ ' sh") // a new shell: its first run hands over the helper
	// A script in front, so that the typed lines wait unread; without the
	// echo of ^C only tmcp knows of the key.
	f.srv.Must("send-keys", "-t", id, "stty -echoctl; sh -c 'echo busy; sleep 30; :'", "Enter")
	// Not "busy" on the screen: the echo of the line holds it before stty
	// has run, and a run then finds stty in front.
	if !tmuxtest.WaitFor(5*time.Second, func() bool { return f.runs(id, "sleep") }) {
		t.Fatalf("the script never ran: %q", f.srv.Must("capture-pane", "-p", "-t", id))
	}
	ran := make(chan JobResult, 1)
	go func() {
		r, err := f.s.Run(context.Background(), RunRequest{PaneID: id, Command: "echo ran", Timeout: Timeout{Duration: 20 * time.Second}})
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		ran <- r
	}()
	f.screenShows(id, "__tmcp")
	j := f.s.jobs.running(id)
	if j == nil {
		t.Fatal("no job holds the pane")
	}
	j.mu.Lock()
	began := j.typingFrom
	j.mu.Unlock()
	f.srv.Must("send-keys", "-t", id, "C-c")
	f.s.keysSent(id, []string{"C-c"}, began)
	select {
	case r := <-ran:
		if !r.Finished || r.ExitStatus != nil || !strings.Contains(r.Reason, "C-c") || !strings.Contains(r.Reason, "did not run") {
			t.Fatalf("the run: %+v, want it finished, not run, for C-c", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the run cut by C-c went on past 5 s: %q", f.srv.Must("capture-pane", "-p", "-t", id))
	}
}
