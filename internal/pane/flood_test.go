package pane

import (
	"testing"
	"time"
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
