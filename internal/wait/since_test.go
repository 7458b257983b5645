package wait

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmuxserver"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

func (f *fixture) since(cursor string) SinceResult {
	f.t.Helper()
	r, err := f.s.CaptureSince(context.Background(), "%0", cursor, 10000, 1<<20)
	if err != nil {
		f.t.Fatalf("CaptureSince: %v", err)
	}
	return r
}

// settle waits until the pane's stream has taken in what was written.
func (f *fixture) settle(want string) {
	f.t.Helper()
	if !tmuxtest.WaitFor(5*time.Second, func() bool {
		s := f.hub.Stream("%0")
		if s == nil {
			return false
		}
		data, _, _ := s.ReadFrom(s.End()-int64(len(want))-64, 0)
		return strings.Contains(string(data), want)
	}) {
		f.t.Fatalf("stream never showed %q", want)
	}
}

func TestCaptureSinceReturnsOnlyNewLines(t *testing.T) {
	f := newFixture(t)
	tty := f.tty("%0")
	fmt.Fprint(tty, "old line\r\n")
	first := f.since("")
	if first.Cursor == "" || len(first.Screen) == 0 {
		t.Fatalf("first read: cursor %q screen %q", first.Cursor, first.Screen)
	}
	fmt.Fprint(tty, "new 1\r\nnew 2\r\nprompt> ")
	f.settle("prompt> ")
	r := f.since(first.Cursor)
	if strings.Join(r.Lines, ",") != "new 1,new 2" || r.Partial != "prompt> " || r.MissedBytes != 0 {
		t.Fatalf("lines %q partial %q missed %d", r.Lines, r.Partial, r.MissedBytes)
	}
	quiet := f.since(r.Cursor)
	if len(quiet.Lines) != 0 || quiet.Partial != "prompt> " {
		t.Fatalf("nothing new, yet lines %q partial %q", quiet.Lines, quiet.Partial)
	}
	fmt.Fprint(tty, "yes\r\n")
	f.settle("yes")
	if r := f.since(quiet.Cursor); strings.Join(r.Lines, ",") != "prompt> yes" {
		t.Fatalf("the finished line: %q", r.Lines)
	}
}

func TestCaptureSinceCountsTheBytesNoLongerHeld(t *testing.T) {
	f := newFixture(t)
	tty := f.tty("%0")
	first := f.since("")
	// Twice the ring, written after the cursor: the oldest part is gone.
	line := strings.Repeat("x", 98) + "\r\n"
	var b strings.Builder
	for b.Len() < 2*pane.DefaultRingSize {
		b.WriteString(line)
	}
	b.WriteString("LAST\r\n")
	fmt.Fprint(tty, b.String())
	f.settle("LAST")
	r := f.since(first.Cursor)
	if r.MissedBytes < int64(pane.DefaultRingSize)/2 || r.Reset {
		t.Fatalf("after %d bytes past the cursor: missedBytes %d, reset %v; want at least %d missed, no reset", b.Len(), r.MissedBytes, r.Reset, pane.DefaultRingSize/2)
	}
	if len(r.Lines) == 0 || r.Lines[len(r.Lines)-1] != "LAST" {
		t.Fatalf("the lines still held should end with LAST, got %d lines", len(r.Lines))
	}
}

func TestCaptureSinceAtTheHistoryLimitReportsNoFalseLoss(t *testing.T) {
	f := newFixture(t)
	f.srv.Must("set-option", "-t", "%0", "history-limit", "50")
	tty := f.tty("%0")
	cursor := f.since("").Cursor
	total := 0
	for round := 0; round < 20; round++ {
		for i := 0; i < 50; i++ {
			fmt.Fprintf(tty, "r%d-%d\r\n", round, i)
		}
		f.settle(fmt.Sprintf("r%d-49", round))
		r := f.since(cursor)
		if r.MissedBytes != 0 || r.Reset || len(r.Lines) != 50 || r.Lines[49] != fmt.Sprintf("r%d-49", round) {
			t.Fatalf("round %d: %d lines (last %q) missed %d reset %v", round, len(r.Lines), r.Lines[len(r.Lines)-1], r.MissedBytes, r.Reset)
		}
		total += len(r.Lines)
		cursor = r.Cursor
	}
	if total != 1000 {
		t.Fatalf("read %d lines, want 1000", total)
	}
}

func TestCaptureSinceRefusesOrResetsForeignCursors(t *testing.T) {
	f := newFixture(t)
	f.srv.Must("split-window", "-t", "%0", "sh")
	if _, err := f.s.CaptureSince(context.Background(), "%0", "garbage", 10, 1000); err == nil {
		t.Error("a malformed cursor was accepted")
	}
	other := pane.Cursor{PaneID: "%1", Generation: 7, Offset: 0}.String()
	if _, err := f.s.CaptureSince(context.Background(), "%0", other, 10, 1000); err == nil {
		t.Error("another pane's cursor was accepted")
	}
	stale := pane.Cursor{PaneID: "%0", Generation: 12345, Offset: 10}.String()
	if r := f.since(stale); !r.Reset || r.Reason == "" || len(r.Screen) == 0 {
		t.Errorf("a stale cursor: reset %v reason %q screen %d rows", r.Reset, r.Reason, len(r.Screen))
	}
	cursor := f.since("").Cursor
	st, end := f.hub.Stream("%0"), f.hub.Stream("%0").End()
	f.srv.Must("respawn-pane", "-k", "-t", "%0", "sh")
	// A cursor with nothing after it is answered without asking tmux: the
	// respawn shows once the new shell has written (its prompt).
	if !tmuxtest.WaitFor(5*time.Second, func() bool { closed, _ := st.Closed(); return closed || st.End() > end }) {
		t.Fatal("the respawned shell of pane %0 wrote nothing")
	}
	if r := f.since(cursor); !r.Reset || !strings.Contains(r.Reason, "respawn") && !strings.Contains(r.Reason, "ended") {
		t.Errorf("after respawn: reset %v reason %q", r.Reset, r.Reason)
	}
}

func TestCaptureSinceShowsTheScreenOfAFullScreenProgram(t *testing.T) {
	f := newFixture(t)
	tty := f.tty("%0")
	cursor := f.since("").Cursor
	fmt.Fprint(tty, "\x1b[?1049h\x1b[HTOP-LIKE")
	f.settle("TOP-LIKE")
	r := f.since(cursor)
	fmt.Fprint(tty, "\x1b[?1049l")
	if !r.AlternateScreen || !strings.Contains(strings.Join(r.Screen, "\n"), "TOP-LIKE") || r.MissedBytes != 0 {
		t.Fatalf("alternate %v screen %q missed %d", r.AlternateScreen, r.Screen, r.MissedBytes)
	}
}

func TestWaitForChannel(t *testing.T) {
	f := newFixture(t)
	if err := CheckChannel("bad name!"); err == nil {
		t.Error("a bad channel name was accepted")
	}
	go f.whileWaiting("ch1", func() { _, _ = f.srv.Tmux("wait-for", "-S", "ch1") })
	r, err := f.s.WaitForChannel(context.Background(), "ch1", Timeout{Duration: 5 * time.Second}, nil)
	if err != nil || r.Outcome != ChannelSignalled {
		t.Fatalf("signalled channel: %+v %v", r, err)
	}
	r, err = f.s.WaitForChannel(context.Background(), "ch2", Timeout{Duration: 200 * time.Millisecond}, nil)
	if err != nil || r.Outcome != ChannelTimeout || r.Elapsed > 2*time.Second {
		t.Fatalf("unsignalled channel: %+v %v", r, err)
	}
	if got := f.s.Clamp(99999, time.Second); !got.Clamped || got.Duration != 30*time.Second {
		t.Fatalf("Clamp above the ceiling: %+v", got)
	}
	// Several: the first of any, or each of all.
	go f.whileWaiting("any2", func() { _, _ = f.srv.Tmux("wait-for", "-S", "any2") })
	r, err = f.s.WaitForChannel(context.Background(), "any1,any2", Timeout{Duration: 5 * time.Second}, nil)
	if err != nil || r.Outcome != ChannelSignalled || !slices.Equal(r.Signalled, []string{"any2"}) {
		t.Fatalf("any1,any2 with any2 signalled: %+v %v", r, err)
	}
	go f.whileWaiting("all2", func() {
		_, _ = f.srv.Tmux("wait-for", "-S", "all2")
		_, _ = f.srv.Tmux("wait-for", "-S", "all1")
	})
	r, err = f.s.WaitForChannel(context.Background(), "all1+all2", Timeout{Duration: 5 * time.Second}, nil)
	if slices.Sort(r.Signalled); err != nil || r.Outcome != ChannelSignalled || !slices.Equal(r.Signalled, []string{"all1", "all2"}) {
		t.Fatalf("all1+all2 with both signalled: %+v %v", r, err)
	}
	go f.whileWaiting("half1", func() { _, _ = f.srv.Tmux("wait-for", "-S", "half1") })
	r, err = f.s.WaitForChannel(context.Background(), "half1+half2", Timeout{Duration: 500 * time.Millisecond}, nil)
	if err != nil || r.Outcome != ChannelTimeout || !slices.Equal(r.Signalled, []string{"half1"}) {
		t.Fatalf("half1+half2 with half1 signalled: %+v %v, want a timeout naming half1", r, err)
	}
	go f.whileWaiting("ch3", f.srv.Kill)
	r, err = f.s.WaitForChannel(context.Background(), "ch3", Timeout{Duration: 5 * time.Second}, nil)
	if err != nil || r.Outcome != ChannelServerGone {
		t.Fatalf("across kill-server: %+v %v, want server_gone", r, err)
	}
}

// whileWaiting runs do once this process runs `tmux wait-for channel`, the
// wait WaitForChannel makes, or after 5 s. It runs on its own goroutine:
// the test's is in the wait.
func (f *fixture) whileWaiting(channel string, do func()) {
	tmuxtest.WaitFor(5*time.Second, func() bool {
		kids, _ := tmuxserver.Children(os.Getpid())
		for _, k := range kids {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(k) + "/cmdline")
			if args := strings.Split(string(cmdline), "\x00"); slices.Contains(args, "wait-for") && slices.Contains(args, channel) {
				return true
			}
		}
		return false
	})
	do()
}

func TestParseChannels(t *testing.T) {
	many := strings.Repeat("c,", maxChannels) + "last"
	for i := 0; i <= maxChannels; i++ {
		many = strings.Replace(many, "c,", "c"+strconv.Itoa(i)+",", 1)
	}
	cases := []struct {
		spec string
		want []string
		all  bool
		err  string
	}{
		{"build", []string{"build"}, false, ""},
		{"a,b", []string{"a", "b"}, false, ""},
		{"a+b+c", []string{"a", "b", "c"}, true, ""},
		{"a,a,b", []string{"a", "b"}, false, ""},
		{"a,b+c", nil, false, "commas"},
		{"", nil, false, "channel"},
		{",", nil, false, "channel"},
		{"a,bad name", nil, false, "bad name"},
		{many, nil, false, "at most"},
	}
	for _, c := range cases {
		got, all, err := ParseChannels(c.spec)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseChannels(%q) = %v, %v; want an error saying %q", c.spec, got, err, c.err)
			}
			continue
		}
		if err != nil || all != c.all || !slices.Equal(got, c.want) {
			t.Errorf("ParseChannels(%q) = %v, all %v, %v; want %v, all %v", c.spec, got, all, err, c.want, c.all)
		}
	}
}
