package pane

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

func newHub(t *testing.T, srv *tmuxtest.Server) *Hub {
	t.Helper()
	tc, err := tmux.New(context.Background(), tmux.Options{SocketPath: srv.Socket})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHub(tc)
	t.Cleanup(func() { h.Close(); tc.Close() })
	return h
}

// TestFirstStreamsOfManyPanesAtOnce starts the streams of several panes of
// one session at the same moment, several times over for each pane: every
// caller of a pane gets the one stream, tmux survives (it crashes when a
// client detaches while another attaches), and each byte arrives once.
func TestFirstStreamsOfManyPanesAtOnce(t *testing.T) {
	srv := tmuxtest.New(t)
	const panes = 6
	ids := []string{"%0"}
	for i := 1; i < panes; i++ {
		ids = append(ids, strings.TrimSpace(srv.Must("split-window", "-d", "-t", "main", "-P", "-F", "#{pane_id}", "sh")))
		srv.Must("select-layout", "-t", "main", "tiled")
	}
	h := newHub(t, srv)
	streams := make([][]*Stream, panes)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, id := range ids {
		for k := 0; k < 3; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, release, err := h.Acquire(context.Background(), id, time.Minute)
				if err != nil {
					t.Errorf("Acquire %s: %v", id, err)
					return
				}
				defer release()
				mu.Lock()
				streams[i] = append(streams[i], s)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	for i, ss := range streams {
		for _, s := range ss {
			if s != ss[0] {
				t.Fatalf("pane %s got %d different streams", ids[i], len(ss))
			}
		}
	}
	if _, err := srv.Tmux("list-sessions"); err != nil {
		t.Fatalf("the tmux server died: %v", err)
	}
	for i, id := range ids {
		tty, err := os.OpenFile(strings.TrimSpace(srv.Must("display-message", "-p", "-t", id, "#{pane_tty}")), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		token := fmt.Sprintf("ONCE-%d", i)
		fmt.Fprintf(tty, "%s\r\n", token)
		tty.Close()
		s := streams[i][0]
		if !tmuxtest.WaitFor(3*time.Second, func() bool {
			data, _, _ := s.ReadFrom(0, 0)
			return strings.Contains(string(data), token)
		}) {
			t.Fatalf("pane %s: %s never arrived", id, token)
		}
		time.Sleep(50 * time.Millisecond) // the point: time for a second copy to show
		data, _, _ := s.ReadFrom(0, 0)
		if n := strings.Count(string(data), token); n != 1 {
			t.Errorf("pane %s: %s arrived %d times", id, token, n)
		}
	}
}

func TestAStreamThatEndedIsLetGoOnRelease(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("split-window", "-d", "-t", "main", "sh")
	h := newHub(t, srv)
	s, release, err := h.Acquire(context.Background(), "%1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	srv.Must("kill-pane", "-t", "%1")
	if !tmuxtest.WaitFor(3*time.Second, func() bool { closed, _ := s.Closed(); return closed }) {
		t.Fatal("the stream of a killed pane never ended")
	}
	release()
	if h.Stream("%1") != nil {
		t.Fatal("the hub still holds the ended stream after its last release")
	}
}

func TestTypedRemembersOnlyLinesLongEnoughToTellFromOutput(t *testing.T) {
	h := &Hub{typedLines: map[string][]TypedLine{}, typedBytes: map[string]int64{}}
	h.typed(context.Background(), "%0", "y", len("y"))
	h.typed(context.Background(), "%0", "ls\n  q \nmake test\n\n", len("ls\n  q \nmake test\n\n"))
	h.typed(context.Background(), "%0", "C-c", len("C-c"))
	var got []string
	for _, l := range h.RecentlyTyped("%0") {
		got = append(got, l.Text)
	}
	if want := []string{"make test", "C-c"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("typed y, ls, q, make test, C-c: remembered %q, want %q", got, want)
	}
}

func TestTypedForgetsPanesWhoseLinesAreOld(t *testing.T) {
	h := &Hub{typedLines: map[string][]TypedLine{}, typedBytes: map[string]int64{}}
	h.typed(context.Background(), "%1", "echo gone pane", 15)
	h.typed(context.Background(), "%2", "echo quiet pane", 16)
	// %1's line is older than the memory, %2's is not.
	h.typedLines["%1"][0].at = time.Now().Add(-typedMemory - time.Second)
	h.typed(context.Background(), "%3", "echo busy pane", 15)
	if _, kept := h.typedLines["%1"]; kept {
		t.Errorf("the lines of %%1, typed more than %v ago, are still held", typedMemory)
	}
	for _, id := range []string{"%2", "%3"} {
		if len(h.RecentlyTyped(id)) != 1 {
			t.Errorf("pane %s: recently typed %v, want its one line", id, h.RecentlyTyped(id))
		}
	}
}

// A pane that is gone takes its count of typed bytes with it, once the
// panes are checked.
func TestTypedBytesGoWithTheirPane(t *testing.T) {
	srv := tmuxtest.New(t)
	gone := strings.TrimSpace(srv.Must("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main", "sh"))
	h := newHub(t, srv)
	ctx := context.Background()
	for _, id := range []string{"%0", gone} {
		if err := h.Type(ctx, id, "true", true); err != nil {
			t.Fatal(err)
		}
	}
	srv.Must("kill-pane", "-t", gone)
	h.checkPanes()
	h.mu.Lock()
	_, keptGone := h.typedBytes[gone]
	kept := h.typedBytes["%0"]
	h.mu.Unlock()
	if keptGone || kept != 5 {
		t.Fatalf("typed bytes after %s was killed: kept for it %v, %d for %%0; want none for it and 5 for %%0", gone, keptGone, kept)
	}
}

// TestABurstOfLayoutChangesCostsFewListings changes a streamed session's
// layout many times in one tmux command: each change is a notification,
// but the checks they call for must be coalesced, not one listing of all
// panes per notification, and the last change must still be checked.
func TestABurstOfLayoutChangesCostsFewListings(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("split-window", "-d", "-t", "main", "sh")
	h := newHub(t, srv)
	s, release, err := h.Acquire(context.Background(), "%0", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	const counter = "@listings"
	srv.Must("set-option", "-g", counter, "0")
	srv.Must("set-hook", "-g", "after-list-panes", fmt.Sprintf(`set-option -gF %s "#{e|+:#{%s},1}"`, counter, counter))
	listings := func() int {
		n, err := strconv.Atoi(strings.TrimSpace(srv.Must("show-options", "-gv", counter)))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	const changes = 60
	var burst []string
	for i := 0; i < changes; i++ {
		layout := "even-horizontal"
		if i%2 == 1 {
			layout = "even-vertical"
		}
		if i > 0 {
			burst = append(burst, ";")
		}
		burst = append(burst, "select-layout", "-t", "main", layout)
	}
	srv.Must(burst...)
	// The listings run after the burst; wait until they stop coming, which
	// only time can show: four looks 100 ms apart find the same count.
	last, quiet := -1, 0
	for quiet < 4 {
		time.Sleep(100 * time.Millisecond)
		if n := listings(); n != last {
			last, quiet = n, 0
		} else {
			quiet++
		}
	}
	t.Logf("%d layout changes, %d listings", changes, last)
	if last == 0 || last > changes/10 {
		t.Errorf("%d layout changes caused %d listings of the panes, want at least 1 and at most %d", changes, last, changes/10)
	}
	// A change after the burst is still noticed.
	srv.Must("kill-pane", "-t", "%0")
	if !tmuxtest.WaitFor(3*time.Second, func() bool { closed, _ := s.Closed(); return closed }) {
		t.Fatal("after the burst, the stream of a killed pane never ended")
	}
}

// TestAPauseIsALossInTheStream: when tmux paused a pane's output for
// tmcp, bytes were dropped, and readers of the stream must learn it.
func TestAPauseIsALossInTheStream(t *testing.T) {
	s := NewStream("%1", 1, DefaultRingSize)
	f := feed(s)
	f(tmux.OutputEvent{Pane: "%1", Data: []byte("before ")})
	f(tmux.OutputEvent{Pane: "%1", Paused: true})
	f(tmux.OutputEvent{Pane: "%1", Data: []byte("after")})
	if s.LostBytes() < 1 {
		t.Errorf("after a pause the stream reports %d bytes lost, want at least 1", s.LostBytes())
	}
	if data, _, _ := s.ReadFrom(0, 0); string(data) != "before after" {
		t.Errorf("read %q, want the output on both sides of the pause, %q", data, "before after")
	}
}

// observation is what a test Observer was told.
type observation struct {
	mu        sync.Mutex
	streaming []string // pane id and the stream's end when it was told
	typing    []string // pane id and the call's label
	seen      []tmux.Pane
}

type callLabel struct{}

func (o *observation) Streaming(s *Stream, p tmux.Pane) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.streaming = append(o.streaming, fmt.Sprintf("%s@%d", p.ID, s.End()))
}

func (o *observation) Typing(ctx context.Context, paneID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	label, _ := ctx.Value(callLabel{}).(string)
	o.typing = append(o.typing, paneID+" "+label)
}

func (o *observation) Seen(p tmux.Pane) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, p)
}

func TestHubTellsItsObserverOfStreamsTypingAndPaneStates(t *testing.T) {
	srv := tmuxtest.New(t)
	h := newHub(t, srv)
	o := &observation{}
	h.Observe(o)
	ctx := context.Background()
	s, release, err := h.Acquire(ctx, "%0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	// The pane's first output, noticed before the stream began, is its
	// seed: written ahead of everything.
	seeded, _ := s.Seeded()
	// A second holder shares the stream: no second Streaming.
	_, release2, err := h.Acquire(ctx, "%0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	release2()
	callCtx := context.WithValue(ctx, callLabel{}, "send_keys")
	if err := h.Type(callCtx, "%0", "echo hi", true); err != nil {
		t.Fatal(err)
	}
	if err := h.Keys(callCtx, "%0", "C-c"); err != nil {
		t.Fatal(err)
	}
	if err := h.Paste(callCtx, "%0", "# pasted", false); err != nil {
		t.Fatal(err)
	}
	srv.Must("resize-window", "-t", "main", "-x", "71", "-y", "19")
	if _, err := h.Refresh(ctx, "%0"); err != nil {
		t.Fatal(err)
	}

	o.mu.Lock()
	defer o.mu.Unlock()
	if want := []string{fmt.Sprintf("%%0@%d", seeded)}; strings.Join(o.streaming, " ") != strings.Join(want, " ") {
		t.Errorf("Streaming calls %q, want %q: once, before the first byte past the seed", o.streaming, want)
	}
	if want := []string{"%0 send_keys", "%0 send_keys", "%0 send_keys"}; strings.Join(o.typing, "|") != strings.Join(want, "|") {
		t.Errorf("Typing calls %q, want %q: one per Type, Keys and Paste, with the call's context", o.typing, want)
	}
	if n := len(o.seen); n == 0 || o.seen[n-1].Width != 71 || o.seen[n-1].Height != 19 {
		t.Errorf("Seen calls %+v, want the last to show pane %%0 at 71x19", o.seen)
	}
}
