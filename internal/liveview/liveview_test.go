package liveview

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/mcpserver"
	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

func TestSeedRowLeavesTheDecoderWhereTmuxHasTheCursor(t *testing.T) {
	cases := []struct {
		row     string
		x       int
		written string
		want    string
	}{
		{"$", 2, "ls", "$ ls"},         // capture-pane trims the prompt's trailing space
		{"$ make", 2, "ls", "$ lske"},  // the cursor was moved back over "make"
		{"", 0, "echo", "echo"},        // an empty row
		{"héllo", 5, "!", "héllo!"},    // columns count characters, not bytes
		{"$ abc", 5, "\b\bz", "$ azc"}, // what follows is written over the row
		{"[####    ]", 0, "\r[#####", "[#####   ]"},
	}
	for _, c := range cases {
		d := pane.NewDecoder(0)
		d.Decode([]byte(seedRow(c.row, c.x)), nil)
		d.Decode([]byte(c.written), nil)
		if got := d.Partial(); got != c.want {
			t.Errorf("row %q, cursor at %d, then %q: the line reads %q, want %q", c.row, c.x, c.written, got, c.want)
		}
	}
}

// viewFixture is a live view of a private tmux server, its data served
// without the token (httpserve adds it), and an MCP client of the same
// tmcp server making calls.
type viewFixture struct {
	srv    *tmuxtest.Server
	data   *httptest.Server
	client *mcp.ClientSession
	pane   string
}

func newViewFixture(t *testing.T) *viewFixture {
	t.Helper()
	srv := tmuxtest.New(t)
	ctx := context.Background()
	tc, err := tmux.New(ctx, tmux.Options{SocketPath: srv.Socket})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.Close() })
	s := mcpserver.New(tc, mcpserver.Config{Tier: mcpserver.DefaultTier, Version: "test"})
	t.Cleanup(s.Close)
	stopping, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	data := httptest.NewServer(New(stopping, s).Data())
	t.Cleanup(data.Close)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCPServer(ctx).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "liveview-test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &viewFixture{srv: srv, data: data, client: cs, pane: strings.TrimSpace(srv.Must("display-message", "-p", "-t", "main", "#{pane_id}"))}
}

// event is one server-sent event.
type event struct {
	name string
	data string
}

// follow opens the events of a pane and returns them as they come; the
// stream is closed when the test ends.
func (f *viewFixture) follow(t *testing.T, paneID string) <-chan event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.data.URL+EventsPath+"?pane="+url.QueryEscape(paneID), nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events of %s: %s, %s", paneID, res.Status, res.Header.Get("Content-Type"))
	}
	events := make(chan event, 100)
	go func() {
		defer res.Body.Close()
		defer close(events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		var ev event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev.name != "":
				events <- ev
				ev = event{}
			}
		}
	}()
	return events
}

// await returns the first event that satisfies ok, failing the test if
// none comes within d.
func await(t *testing.T, events <-chan event, d time.Duration, what string, ok func(event) bool) event {
	t.Helper()
	deadline := time.After(d)
	var seen []string
	for {
		select {
		case ev, open := <-events:
			if !open {
				t.Fatalf("the event stream ended before %s; it sent %q", what, seen)
			}
			seen = append(seen, ev.name+" "+ev.data)
			if ok(ev) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s within %v; the stream sent %q", what, d, seen)
		}
	}
}

func decode[T any](t *testing.T, ev event) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(ev.data), &v); err != nil {
		t.Fatalf("%s event %s: %v", ev.name, ev.data, err)
	}
	return v
}

func TestEventsShowThePaneThenWhatItWritesAndTheCallsOnIt(t *testing.T) {
	f := newViewFixture(t)
	f.srv.Must("send-keys", "-t", f.pane, "echo before-the-view", "Enter")
	tmuxtest.WaitFor(5*time.Second, func() bool {
		return strings.Contains(f.srv.Must("capture-pane", "-p", "-t", f.pane), "\nbefore-the-view")
	})
	events := f.follow(t, f.pane)
	screen := decode[screenEvent](t, await(t, events, 5*time.Second, "the first screen", func(ev event) bool { return ev.name == eventScreen }))
	if !slices.Contains(screen.Lines, "before-the-view") || screen.Alt || screen.Width != tmuxtest.Width {
		t.Fatalf("first screen of %s: %+v, want its rows above the cursor, before-the-view among them, main screen, %d wide", f.pane, screen, tmuxtest.Width)
	}

	f.srv.Must("send-keys", "-t", f.pane, "echo during-the-view", "Enter")
	await(t, events, 2*time.Second, "the line written while viewing", func(ev event) bool {
		return ev.name == eventText && slices.Contains(decode[textEvent](t, ev).Lines, "during-the-view")
	})

	if _, err := f.client.CallTool(context.Background(), &mcp.CallToolParams{Name: "capture_pane", Arguments: map[string]any{"paneId": f.pane}}); err != nil {
		t.Fatal(err)
	}
	calls := decode[[]map[string]any](t, await(t, events, 2*time.Second, "the call on the pane", func(ev event) bool { return ev.name == eventCalls }))
	if len(calls) != 1 || calls[0]["tool"] != "capture_pane" || calls[0]["arguments"].(map[string]any)["paneId"] != f.pane {
		t.Fatalf("calls event %+v, want the one capture_pane call on %s", calls, f.pane)
	}
}

func TestEventsKeepUpWithAFloodAndEndOnItsLastLine(t *testing.T) {
	f := newViewFixture(t)
	events := f.follow(t, f.pane)
	await(t, events, 5*time.Second, "the first screen", func(ev event) bool { return ev.name == eventScreen })
	f.srv.Must("send-keys", "-t", f.pane, "seq 1 300000; echo flood-$((1+1))-end; sleep 30", "Enter")
	var lines, dropped int
	await(t, events, 20*time.Second, "the line after the flood", func(ev event) bool {
		if ev.name != eventText {
			return ev.name == eventScreen && strings.Contains(ev.data, `"flood-2-end"`) // overrun: the screen again
		}
		text := decode[textEvent](t, ev)
		if len(text.Lines) > maxEventLines {
			t.Fatalf("a text event of %d lines, more than %d", len(text.Lines), maxEventLines)
		}
		lines, dropped = lines+len(text.Lines), dropped+text.Dropped
		return slices.Contains(text.Lines, "flood-2-end")
	})
	t.Logf("the flood came as %d lines sent and %d dropped", lines, dropped)
}

func TestEventsShowAFullScreenProgramAsScreens(t *testing.T) {
	f := newViewFixture(t)
	events := f.follow(t, f.pane)
	await(t, events, 5*time.Second, "the first screen", func(ev event) bool { return ev.name == eventScreen })
	f.srv.Must("send-keys", "-t", f.pane, `printf '\033[?1049h\033[Hfull-%s\n' screen; sleep 30`, "Enter")
	await(t, events, 2*time.Second, "a screen of the alternate screen", func(ev event) bool {
		if ev.name != eventScreen {
			return false
		}
		s := decode[screenEvent](t, ev)
		return s.Alt && len(s.Lines) == tmuxtest.Height && s.Lines[0] == "full-screen"
	})
}

func TestEventsRefuseWhatIsNotAPane(t *testing.T) {
	f := newViewFixture(t)
	for target, want := range map[string]int{"main": http.StatusBadRequest, "%1;kill-server": http.StatusBadRequest, "%999": http.StatusNotFound} {
		res, err := http.Get(f.data.URL + EventsPath + "?pane=" + url.QueryEscape(target))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("events of %q: %s, want %d", target, res.Status, want)
		}
	}
}

func TestPanesListsEveryPane(t *testing.T) {
	f := newViewFixture(t)
	f.srv.Must("new-session", "-d", "-s", "other", "sh")
	res, err := http.Get(f.data.URL + PanesPath)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct{ Panes []PaneEntry }
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	var sessions []string
	for _, p := range body.Panes {
		sessions = append(sessions, p.Session)
	}
	if len(body.Panes) != 2 || body.Panes[0].ID != f.pane || !slices.Contains(sessions, "other") {
		t.Fatalf("panes %+v, want %s of main and one of other", body.Panes, f.pane)
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q, want default-src 'none'", csp)
	}
}

// TestEventsOfAViewBegunInsideAMarkShowNoneOfIt opens a second view of a
// pane whose stream stands inside a shell's mark: the rest of the mark is
// not text of the line after it.
func TestEventsOfAViewBegunInsideAMarkShowNoneOfIt(t *testing.T) {
	f := newViewFixture(t)
	first := f.follow(t, f.pane) // keeps the pane's stream while the second begins
	await(t, first, 5*time.Second, "the first view's screen", func(ev event) bool { return ev.name == eventScreen })
	path := strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", f.pane, "#{pane_tty}"))
	tty, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	fmt.Fprint(tty, "\x1b]133;C;tmcp-01")
	time.Sleep(300 * time.Millisecond) // the stream reads it before the second view begins
	second := f.follow(t, f.pane)
	await(t, second, 5*time.Second, "the second view's screen", func(ev event) bool { return ev.name == eventScreen })
	fmt.Fprint(tty, "23abcd\aready-ok\r\n")
	ev := await(t, second, 5*time.Second, "the line after the mark", func(ev event) bool {
		return ev.name == eventText && len(decode[textEvent](t, ev).Lines) > 0
	})
	// The line is the prompt's row as the screen showed it, then ready-ok.
	if lines := decode[textEvent](t, ev).Lines; len(lines) != 1 || !strings.HasSuffix(lines[0], " ready-ok") || strings.Contains(lines[0], "23abcd") {
		t.Errorf("the second view's text: %q, want the prompt's row ending in ready-ok, nothing of the mark", lines)
	}
}
