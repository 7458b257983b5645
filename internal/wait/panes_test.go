package wait

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmux"
)

// TestWaitForTextInPanes writes lines to two panes once both waits are
// waiting, and checks who decided and how each pane went.
func TestWaitForTextInPanes(t *testing.T) {
	cases := []struct {
		name    string
		all     bool
		timeout time.Duration
		writes  []string // pane:line, in order, each after the last settled its pane
		outcome string
		paneID  string
		each    []string // outcome of %0, %1
	}{
		{"any: the second pane matches first", false, 5 * time.Second, []string{"%1:ready one"},
			OutcomeMatched, "%1", []string{OutcomeWaiting, OutcomeMatched}},
		{"any: a stop pattern in one pane ends it", false, 5 * time.Second, []string{"%0:FATAL here"},
			OutcomeStopped, "%0", []string{OutcomeStopped, OutcomeWaiting}},
		{"all: each pane must match", true, 5 * time.Second, []string{"%1:ready one", "%0:ready zero"},
			OutcomeMatched, "%0", []string{OutcomeMatched, OutcomeMatched}},
		{"all: a timeout names the pane that did not match", true, 1500 * time.Millisecond, []string{"%1:ready one"},
			OutcomeTimeout, "", []string{OutcomeTimeout, OutcomeMatched}},
		{"all: a stop pattern ends it at once", true, 5 * time.Second, []string{"%1:ready one", "%0:FATAL here"},
			OutcomeStopped, "%0", []string{OutcomeStopped, OutcomeMatched}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.srv.Must("split-window", "-d", "-t", "main", "sh")
			f.waitForPrompt("%1")
			f.waiting = make(chan string, 2)
			settled := make(chan string, 2)
			f.s.settled = func(id string) { settled <- id }
			ttys := map[string]interface{ WriteString(string) (int, error) }{"%0": f.tty("%0"), "%1": f.tty("%1")}
			done := make(chan PanesResult, 1)
			go func() {
				req := PanesRequest{TextRequest: withDefaults(TextRequest{Patterns: []string{"ready"}, Stop: []string{"FATAL"}}),
					PaneIDs: []string{"%0", "%1"}, All: tc.all}
				req.PaneID, req.Timeout.Duration = "", tc.timeout
				r, err := f.s.WaitForTextInPanes(context.Background(), req)
				if err != nil {
					r.Outcome, r.Reason = "error", err.Error()
				}
				done <- r
			}()
			for range 2 {
				select {
				case <-f.waiting:
				case <-time.After(10 * time.Second):
					t.Fatal("the waits never began")
				}
			}
			for i, w := range tc.writes {
				if _, err := ttys[w[:2]].WriteString(w[3:] + "\r\n"); err != nil {
					t.Fatal(err)
				}
				if i == len(tc.writes)-1 {
					break
				}
				select { // the line settled its pane before the next is written
				case id := <-settled:
					if id != w[:2] {
						t.Fatalf("pane %s settled after a line written to %s", id, w[:2])
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("the wait on %s never took %q", w[:2], w[3:])
				}
			}
			r := <-done
			var each []string
			for _, p := range r.Panes {
				each = append(each, p.Outcome)
			}
			if r.Outcome != tc.outcome || r.PaneID != tc.paneID || fmt.Sprint(each) != fmt.Sprint(tc.each) {
				t.Errorf("outcome %s in pane %q, each %v (reason %q); want %s in %q, each %v",
					r.Outcome, r.PaneID, each, r.Reason, tc.outcome, tc.paneID, tc.each)
			}
			if r.Outcome == OutcomeTimeout && tc.all && r.Reason != "no match yet in %0" {
				t.Errorf("reason %q, want it to name %%0", r.Reason)
			}
			for i, p := range r.Panes {
				if p.PaneID != []string{"%0", "%1"}[i] || p.Cursor == "" {
					t.Errorf("pane %d reported as %q with cursor %q", i, p.PaneID, p.Cursor)
				}
			}
		})
	}
}

// TestWaitsAcrossPanesShareOneStreamPerPane runs two waits across the
// same two panes and a lone wait on one of them: each pane has one
// stream, held by every wait on it, and tmcp one output client for their
// session; a line in the second pane answers both waits across panes.
func TestWaitsAcrossPanesShareOneStreamPerPane(t *testing.T) {
	f := newFixture(t)
	f.srv.Must("split-window", "-d", "-t", "main", "sh")
	f.waitForPrompt("%1")
	f.waiting = make(chan string, 5)
	across := make(chan PanesResult, 2)
	for range 2 {
		go func() {
			req := PanesRequest{TextRequest: withDefaults(TextRequest{Patterns: []string{"ready"}}), PaneIDs: []string{"%0", "%1"}}
			req.PaneID = ""
			r, err := f.s.WaitForTextInPanes(context.Background(), req)
			if err != nil {
				r.Outcome, r.Reason = "error", err.Error()
			}
			across <- r
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	lone := make(chan TextResult, 1)
	go func() {
		r, _ := f.s.WaitForText(ctx, withDefaults(TextRequest{PaneID: "%0", Patterns: []string{"ready"}}))
		lone <- r
	}()
	for range 5 {
		select {
		case <-f.waiting:
		case <-time.After(10 * time.Second):
			t.Fatal("the waits never all began")
		}
	}
	if h0, h1 := f.hub.Holders("%0"), f.hub.Holders("%1"); h0 != 3 || h1 != 2 {
		t.Errorf("stream holders: %%0 %d, %%1 %d; want 3 and 2 (one stream each, held by every wait on it)", h0, h1)
	}
	clients := f.srv.Must("list-clients", "-F", "#{client_flags}")
	if n := strings.Count(clients, tmux.OutputClientFlag); n != 1 {
		t.Errorf("tmcp has %d clients carrying pane output, want 1 for the one session:\n%s", n, clients)
	}
	if _, err := f.tty("%1").WriteString("ready at last\r\n"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if r := <-across; r.Outcome != OutcomeMatched || r.PaneID != "%1" {
			t.Errorf("a wait across panes: outcome %s in pane %q (reason %q), want matched in %%1", r.Outcome, r.PaneID, r.Reason)
		}
	}
	cancel()
	if r := <-lone; r.Outcome != OutcomeCancelled {
		t.Errorf("the lone wait on %%0: outcome %s, want cancelled", r.Outcome)
	}
}
