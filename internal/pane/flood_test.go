package pane

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

func TestFloodMeterCountsTheLastWindow(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	half := floodWindow / 2
	type write struct {
		at    time.Duration
		bytes int
	}
	cases := []struct {
		name   string
		writes []write
		want   bool // after the last write
	}{
		{"one write of the whole amount", []write{{0, floodBytes}}, true},
		{"just under", []write{{0, floodBytes - 1}}, false},
		{"two halves of one window", []write{{0, floodBytes / 2}, {half + time.Millisecond, floodBytes / 2}}, true},
		{"a window apart: the first is forgotten", []write{{0, floodBytes / 2}, {2*half + time.Millisecond, floodBytes / 2}}, false},
		{"a steady 1 MB/s", func() []write {
			var w []write
			for i := range 100 {
				w = append(w, write{time.Duration(i) * 100 * time.Millisecond, 100 << 10})
			}
			return w
		}(), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var m floodMeter
			var got bool
			for _, w := range c.writes {
				got = m.add(w.bytes, t0.Add(w.at))
			}
			if got != c.want {
				t.Fatalf("flood after %v: %v, want %v", c.writes, got, c.want)
			}
		})
	}
}

func TestAFloodIsFollowedOnlyWhileNoHolderNeedsEveryByte(t *testing.T) {
	s := NewStream("%1", 1, 1<<20)
	started := make(chan struct{}, 4)
	s.onFlood = func() { started <- struct{}{} }
	chunk := make([]byte, 1<<20)

	release := s.Exact() // a job, a command wait or a recording
	for range floodBytes / len(chunk) {
		s.Write(chunk)
	}
	select {
	case <-started:
		t.Fatal("a flood began to be followed while a holder needed every byte")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	s.Write(chunk)
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("with no holder needing every byte, the flood was not followed")
	}
	// A holder that comes while it is followed has it stop.
	release = s.Exact()
	defer release()
	select {
	case <-s.needAll:
	default:
		t.Fatal("Exact during a followed flood did not ask the follower to stop")
	}
}

// A look finds the rows written since the last one among the rows just
// above the screen, or, when more came than those hold, in the whole
// history: either way each row reaches the stream once, in order.
func TestALookWritesEachNewRowOnceWhereverItIs(t *testing.T) {
	srv := tmuxtest.New(t)
	h := newHub(t, srv)
	ctx := context.Background()
	s, release, err := h.Acquire(ctx, "%0", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := h.tc.HoldOutput(ctx, "%0", true); err != nil {
		t.Fatal(err)
	}
	f := &rowFollower{reach: lookRows}
	if _, err := h.look(s, f, true); err != nil {
		t.Fatal(err)
	}
	from := s.End()
	for _, n := range []struct{ first, last int }{{1, lookRows / 4}, {lookRows/4 + 1, 3 * lookRows}} {
		srv.Must("send-keys", "-t", "%0", fmt.Sprintf("seq %d %d | sed s/^/row-/", n.first, n.last), "Enter")
		last := fmt.Sprintf("row-%d", n.last)
		if !tmuxtest.WaitFor(5*time.Second, func() bool {
			return strings.Contains(srv.Must("capture-pane", "-p", "-t", "%0"), last+"\n")
		}) {
			t.Fatalf("the pane never showed %s", last)
		}
		if _, err := h.look(s, f, false); err != nil {
			t.Fatal(err)
		}
	}
	data, _, _ := s.ReadFrom(from, 0)
	var rows []string
	for _, l := range strings.Split(string(data), "\r\n") {
		if strings.HasPrefix(l, "row-") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 3*lookRows {
		t.Fatalf("the stream got %d rows, want %d", len(rows), 3*lookRows)
	}
	for i, r := range rows {
		if want := fmt.Sprintf("row-%d", i+1); r != want {
			t.Fatalf("row %d of the stream is %q, want %q", i, r, want)
		}
	}
}
