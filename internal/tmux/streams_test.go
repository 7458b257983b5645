package tmux

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// countAfter makes tmux count, in a server option, every run of each
// command named, and returns a func reading the counts once they settle.
func countAfter(t *testing.T, srv *tmuxtest.Server, commands ...string) func() map[string]int {
	t.Helper()
	for _, name := range commands {
		opt := "@count-" + name
		srv.Must("set-option", "-g", opt, "0")
		srv.Must("set-hook", "-g", "after-"+name, fmt.Sprintf(`set-option -gF %s "#{e|+:#{%s},1}"`, opt, opt))
	}
	read := func() map[string]int {
		counts := map[string]int{}
		for _, name := range commands {
			n, err := strconv.Atoi(strings.TrimSpace(srv.Must("show-options", "-gv", "@count-"+name)))
			if err != nil {
				t.Fatal(err)
			}
			counts[name] = n
		}
		return counts
	}
	return func() map[string]int {
		last := read()
		// Until the counts stop moving, which only time can show: three
		// looks 50 ms apart find the same.
		for quiet := 0; quiet < 3; {
			time.Sleep(50 * time.Millisecond)
			now := read()
			if fmt.Sprint(now) == fmt.Sprint(last) {
				quiet++
			} else {
				last, quiet = now, 0
			}
		}
		return last
	}
}

// TestWatchingAPaneOnlyResumesIt: the caller knows the pane's session, so
// watching a pane of a session already streamed sends tmux one command,
// the refresh-client that resumes the pane, and asks it nothing else.
func TestWatchingAPaneOnlyResumesIt(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("split-window", "-d", "-t", "main", "sh")
	c := newClient(t, srv)
	watchQuietly(t, c, "%0")
	settled := countAfter(t, srv, "display-message", "refresh-client")
	before := settled()
	watchQuietly(t, c, "%1")
	after := settled()
	// Every command over control mode is followed by one display-message,
	// its sentinel: one refresh-client means one display-message.
	refresh := after["refresh-client"] - before["refresh-client"]
	display := after["display-message"] - before["display-message"]
	if refresh != 1 || display != 1 {
		t.Errorf("watching %%1 ran refresh-client %d times and display-message %d times, want 1 and 1 (the resume and its sentinel)", refresh, display)
	}
}

// TestStartingAStreamDoesNotWaitBehindTheSessionsOtherOutput: the resume
// that starts a pane's stream goes through the command client, naming the
// session's output client, so it is not answered after all the output that
// client has yet to deliver for the session's other panes: seconds of it
// when one floods and its stream is read slowly.
func TestStartingAStreamDoesNotWaitBehindTheSessionsOtherOutput(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("split-window", "-d", "-t", "main", "sh")
	c := newClient(t, srv)
	// As tmcp does as it starts: the command client is attached.
	if _, err := c.Run(context.Background(), "display-message", "-p", "x"); err != nil {
		t.Fatal(err)
	}
	defer floodBehind(t, c, srv)()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	stop, err := c.Watch(ctx, "%1", "$0", func(OutputEvent) {})
	if err != nil {
		t.Fatalf("starting the stream of %%1 beside a flood read slowly, within 1 s: %v", err)
	}
	stop()
	t.Logf("the stream of %%1 started in %v beside the flood", time.Since(start))
}

// floodBehind floods pane %0 of session $0, watched with a reader slow
// enough that its output client falls seconds behind, and returns once it
// has; the func it returns ends the flood and the watch.
func floodBehind(t *testing.T, c *Client, srv *tmuxtest.Server) func() {
	t.Helper()
	slow, err := c.Watch(context.Background(), "%0", "$0", func(OutputEvent) { time.Sleep(2 * time.Millisecond) })
	if err != nil {
		t.Fatal(err)
	}
	srv.Must("send-keys", "-t", "%0", "yes 0123456789abcdefghijklmnopqrstuvwxyz", "Enter")
	time.Sleep(3 * time.Second)
	return func() {
		srv.Must("send-keys", "-t", "%0", "C-c")
		slow()
	}
}

// TestStartingAStreamRightAfterItsPaneWasMutedDoesNotWaitEither: as
// above, for a pane that has just written its first line beside the flood,
// so that tmcp's mute of it is still on its way: the resume must follow
// the mute, and neither may be a command whose answer waits behind the
// flood (the soak saw capture_since fail for want of tmux's answer on new
// panes this way).
func TestStartingAStreamRightAfterItsPaneWasMutedDoesNotWaitEither(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("split-window", "-d", "-t", "main", "sh")
	c := newClient(t, srv)
	if _, err := c.Run(context.Background(), "display-message", "-p", "x"); err != nil {
		t.Fatal(err)
	}
	firstOf1 := make(chan struct{})
	var once sync.Once
	deliver := c.streams.route
	c.streams.route = func(session string, cc *controlClient, ev OutputEvent) {
		deliver(session, cc, ev) // the mute is posted here
		if ev.Pane == "%1" && len(ev.Data) > 0 {
			once.Do(func() { close(firstOf1) })
		}
	}
	defer floodBehind(t, c, srv)()
	srv.Must("send-keys", "-t", "%1", "echo first-line", "Enter")
	select {
	case <-firstOf1:
	case <-time.After(15 * time.Second):
		t.Fatal("the first output of %1 never reached the output client")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	var resumed atomic.Bool
	stop, err := c.Watch(ctx, "%1", "$0", func(ev OutputEvent) {
		if ev.Paused {
			t.Errorf("the stream of %%1 heard a pause: its own mute taken for a loss")
		}
		if bytes.Contains(ev.Data, []byte("after-resume")) {
			resumed.Store(true)
		}
	})
	if err != nil {
		t.Fatalf("starting the stream of %%1 right after its mute, beside a flood read slowly, within 1 s: %v", err)
	}
	defer stop()
	t.Logf("the stream of %%1 started in %v beside the flood", time.Since(start))
	srv.Must("send-keys", "-t", "%1", "echo after-resume", "Enter")
	if !tmuxtest.WaitFor(20*time.Second, resumed.Load) {
		t.Error("what %1 wrote after its stream started never reached it: the mute came after the resume")
	}
}

// pipedClient returns a control client that writes its commands to w and
// has no tmux behind it: close its done channel to end it.
func pipedClient(w io.WriteCloser) *controlClient {
	return &controlClient{
		stdin:  w,
		nonce:  "n",
		sent:   new(atomic.Int64),
		writes: make(chan *request, writeQueueLen),
		kick:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
}

// TestPostedCommandsAreNeverDropped posts far more commands than the
// write queue holds while tmux takes none: each must still be written, in
// order, once tmux reads again (mutes and resumes are recorded as done
// when posted).
func TestPostedCommandsAreNeverDropped(t *testing.T) {
	pr, pw := io.Pipe()
	c := pipedClient(pw)
	defer close(c.done)
	go c.writeLoop()
	const posts = 4 * writeQueueLen
	for i := 0; i < posts; i++ {
		c.post("refresh-client", "-A", fmt.Sprintf("%%%d:pause", i))
	}
	sc := bufio.NewScanner(pr)
	for i := 0; i < posts; i++ {
		want, _ := commandLine([]string{"refresh-client", "-A", fmt.Sprintf("%%%d:pause", i)})
		if !sc.Scan() || sc.Text() != want {
			t.Fatalf("command %d written as %q, want %q", i, sc.Text(), want)
		}
		if !sc.Scan() || sc.Text() != fmt.Sprintf("display-message -p n.%d", i+1) {
			t.Fatalf("command %d: sentinel %q", i, sc.Text())
		}
	}
}

// TestAnUnwatchedPaneIsMutedAtItsFirstOutput: tmux sends an output client
// the output of every pane of its session; a sibling of the watched pane
// that nobody watches must stop reaching tmcp after its first output, so
// that tmux does not hold it back for a reader that drops it, until tmcp
// re-arms it for a piece more (its %continue), at most twice in the half
// second after the first re-arm.
func TestAnUnwatchedPaneIsMutedAtItsFirstOutput(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("split-window", "-d", "-t", "main", "sh")
	c := newClient(t, srv)
	var sibling, rearms atomic.Int64
	deliver := c.streams.route
	c.streams.route = func(session string, cc *controlClient, ev OutputEvent) {
		switch {
		case ev.Pane == "%1" && len(ev.Data) > 0:
			sibling.Add(1)
		case ev.Pane == "%1" && ev.Continued:
			rearms.Add(1)
		}
		deliver(session, cc, ev)
	}
	watchQuietly(t, c, "%0")
	srv.Must("send-keys", "-t", "%1", "while :; do echo tick; sleep 0.01; done", "Enter")
	if !tmuxtest.WaitFor(3*time.Second, func() bool { return sibling.Load() > 0 }) {
		t.Fatal("the unwatched pane's first output never reached the output client")
	}
	if !tmuxtest.WaitFor(3*time.Second, func() bool { return rearms.Load() > 0 }) {
		t.Fatal("the unwatched pane was never re-armed")
	}
	settled, armed := sibling.Load(), rearms.Load()
	lines := func() string {
		return strings.TrimSpace(srv.Must("display-message", "-p", "-t", "%1", "#{history_size}"))
	}
	before := lines()
	// The point of the sleep: an absence, over half a second of output
	// every 10 ms (some 50 pieces, were the pane not muted).
	time.Sleep(500 * time.Millisecond)
	if after := lines(); after == before {
		t.Fatalf("the unwatched pane stopped writing (history %s lines, then %s): the test proves nothing", before, after)
	}
	const perRearm = 10 // pieces that may come before a re-arm's mute takes effect
	n, r := sibling.Load()-settled, rearms.Load()-armed
	if r > 2 || n > perRearm*(r+1) {
		t.Errorf("the unwatched pane's output kept reaching tmcp: %d events in 500ms over %d more re-arms, want at most %d per re-arm and 2 re-arms",
			n, r, perRearm)
	}
}

// TestAPauseIsReportedAndTheStreamResumed feeds an output client the
// %pause tmux sends when a pane's output waited too long for tmcp: the
// watcher hears Paused (bytes were dropped), and the pane is continued
// while watched, not once unwatched; a %pause read before the %continue
// that began the stream is an earlier mute's and is not a loss.
func TestAPauseIsReportedAndTheStreamResumed(t *testing.T) {
	pr, pw := io.Pipe()
	cc := &controlClient{
		stdin:  pw,
		nonce:  "n",
		sent:   new(atomic.Int64),
		writes: make(chan *request, writeQueueLen),
		kick:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	defer close(cc.done)
	go cc.writeLoop()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if !strings.HasPrefix(sc.Text(), "display-message -p n.") { // not a sentinel
				lines <- sc.Text()
			}
		}
	}()
	// sentSince returns the commands written up to a marker posted now.
	sentSince := func() []string {
		t.Helper()
		cc.post("display-message", "marker")
		marker, _ := commandLine([]string{"display-message", "marker"})
		var got []string
		for {
			select {
			case l := <-lines:
				if l == marker {
					return got
				}
				got = append(got, l)
			case <-time.After(3 * time.Second):
				t.Fatalf("the marker was never written; got %q", got)
			}
		}
	}
	cmd := func(args ...string) string { l, _ := commandLine(args); return l }

	s := newStreamSet(&Client{}) // no command client: cc carries its own commands
	s.flows[cc] = map[string]*paneFlow{"%1": {continues: 1}}
	cc.onEvent = func(ev OutputEvent) { s.deliver("$0", cc, ev) }
	var paused atomic.Int64
	w := &watcher{pane: "%1", session: "$0", client: cc, liveFrom: 1, fn: func(ev OutputEvent) {
		if ev.Paused {
			paused.Add(1)
		}
	}}
	s.watchers["%1"] = w
	p := &replyParser{c: cc}

	// The stream began with continue 1, whose %continue is not read yet:
	// a %pause before it answers an earlier mute.
	p.line([]byte("%pause %1"))
	if paused.Load() != 0 {
		t.Fatalf("a %%pause read before the stream's own %%continue reached the watcher")
	}
	if got := sentSince(); len(got) != 0 {
		t.Fatalf("a %%pause read before the stream's own %%continue made tmcp send %q, want nothing", got)
	}
	p.line([]byte("%continue %1"))
	p.line([]byte("%pause %1"))
	if paused.Load() != 1 {
		t.Fatalf("after %%continue and %%pause the watcher heard %d pauses, want 1", paused.Load())
	}
	want := cmd("refresh-client", "-A", "%1:pause", "-A", "%1:continue")
	if got := sentSince(); len(got) != 1 || got[0] != want {
		t.Fatalf("after %%pause of a watched pane tmcp sent %q, want only %q", got, want)
	}
	p.line([]byte("%continue %1"))
	s.mu.Lock()
	f := *s.flows[cc]["%1"]
	s.mu.Unlock()
	if f.continues != 2 || f.continued != 2 {
		t.Errorf("after a lag's continue: %d continues sent, %d read, want 2 and 2", f.continues, f.continued)
	}
	s.unwatch("%1", w)
	p.line([]byte("%pause %1"))
	if got, want := sentSince(), cmd("refresh-client", "-A", "%1:pause"); len(got) != 1 || got[0] != want {
		t.Fatalf("after unwatching and a %%pause tmcp sent %q, want only the mute %q", got, want)
	}
	if paused.Load() != 1 {
		t.Errorf("the unwatched watcher heard a pause")
	}
}

// TestAnUnwatchedFloodingPaneSendsNothingWhileMuted floods a pane nobody
// watches, in a session whose output tmcp carries because a sibling pane is
// watched, and counts the %output lines of the flooding pane reaching the
// output client. Its first line gets it muted; lines tmux wrote before the
// mute reached it still arrive, ahead of the reply to any command on that
// client sent once the mute was done (tmux answers in order). After that
// reply, none until tmcp re-arms the pane (its %continue), and re-arms
// spaced by a backoff that doubles while the pane floods.
func TestAnUnwatchedFloodingPaneSendsNothingWhileMuted(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("split-window", "-d", "-t", "main", "sh")
	// The flood runs before tmcp carries the session and until the test
	// ends: the pane writes as fast as it can.
	srv.Must("send-keys", "-t", "%1", "yes flood-line-of-some-length", "Enter")
	c := newClient(t, srv)
	var lines, stray, rearms atomic.Int64
	var settled atomic.Bool
	deliver := c.streams.route
	c.streams.route = func(session string, cc *controlClient, ev OutputEvent) {
		switch {
		case ev.Pane != "%1" || ev.Layout:
		case ev.Continued && settled.Load():
			rearms.Add(1)
		case !ev.Paused && !ev.Continued:
			lines.Add(1)
			if settled.Load() && rearms.Load() == 0 {
				stray.Add(1)
			}
		}
		deliver(session, cc, ev)
	}
	watchQuietly(t, c, "%0")
	// Output that reaches the client before tmcp knows the client's name
	// is not muted yet (see streamSet.client): the mute is the first
	// output's after that.
	var cc *controlClient
	if !tmuxtest.WaitFor(5*time.Second, func() bool {
		c.streams.mu.Lock()
		defer c.streams.mu.Unlock()
		cc = c.streams.clients["$0"]
		f := c.streams.flows[cc]["%1"]
		return lines.Load() > 0 && f != nil && f.muted
	}) {
		t.Fatalf("the flooding pane was never muted (%d %%output lines reached the output client)", lines.Load())
	}
	// The barrier: the mute goes through the command client where there
	// is one, so a reply there says tmux has handled it; once a reply on
	// cc is read after that, every line tmux wrote before the mute has
	// been routed. (Within rearmFirst of the mute, or the test proves
	// nothing: a re-arm before the barrier is reported below.)
	if ctl := c.attachedControl(); ctl != nil {
		if _, err := ctl.run(context.Background(), []string{"display-message", "-p", "barrier"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cc.run(context.Background(), []string{"display-message", "-p", "barrier"}); err != nil {
		t.Fatal(err)
	}
	settled.Store(true)
	inFlight := lines.Load()
	history := func() string {
		return strings.TrimSpace(srv.Must("display-message", "-p", "-t", "%1", "#{history_size}:#{cursor_y}"))
	}
	// The point of the sleep: an absence, over a second of flood. The
	// history is cleared first so that it shows the pane still writing.
	srv.Must("clear-history", "-t", "%1")
	start := history()
	time.Sleep(time.Second)
	if end := history(); end == start {
		t.Fatalf("the pane stopped writing (history and cursor %s, then %s): the test proves nothing", start, end)
	}
	if n := stray.Load(); n != 0 {
		t.Errorf("the muted pane sent %d %%output lines once its mute was in force and before it was re-armed, want 0 (%d came before)", n, inFlight)
	}
	// Re-armed rearmFirst after the mute, then twice as long after: at
	// most two re-arms within a second.
	if n := rearms.Load(); n == 0 || n > 2 {
		t.Errorf("the flooding pane was re-armed %d times in a second, want 1 or 2 (after %v, then %v)", n, rearmFirst, 2*rearmFirst)
	}
	t.Logf("%%output lines before the mute took effect: %d; in the second after: %d over %d re-arms", inFlight, lines.Load()-inFlight, rearms.Load())
}

// TestGonePanesAreForgotten: each pane that wrote in a carried session
// leaves its flow; once the pane is gone, a listing of the panes alive
// drops it, but keeps a watched pane's and that of a pane newer than the
// listing.
func TestGonePanesAreForgotten(t *testing.T) {
	srv := tmuxtest.New(t)
	for range 3 {
		srv.Must("split-window", "-d", "-t", "main", "sh")
	}
	c := newClient(t, srv)
	watchQuietly(t, c, "%0")
	flows := func() []string {
		c.streams.mu.Lock()
		defer c.streams.mu.Unlock()
		var ids []string
		for _, f := range c.streams.flows {
			for id := range f {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		return ids
	}
	for _, p := range []string{"%1", "%2", "%3"} {
		srv.Must("send-keys", "-t", p, "echo wrote", "Enter")
	}
	if !tmuxtest.WaitFor(5*time.Second, func() bool { return slices.Equal(flows(), []string{"%0", "%1", "%2", "%3"}) }) {
		t.Fatalf("flows %q, want the watched pane's and one for each pane that wrote", flows())
	}
	srv.Must("kill-pane", "-t", "%1")
	srv.Must("kill-pane", "-t", "%2")
	listed := func(ids ...string) []Pane {
		var panes []Pane
		for _, id := range ids {
			panes = append(panes, Pane{ID: id})
		}
		return panes
	}
	// A listing made before %1, %2 and %3 were: they are newer.
	c.ForgetGonePanes(listed("%0"))
	if got := flows(); !slices.Equal(got, []string{"%0", "%1", "%2", "%3"}) {
		t.Errorf("panes newer than the listing: flows %q, want all kept", got)
	}
	c.ForgetGonePanes(listed("%0", "%3"))
	if got := flows(); !slices.Equal(got, []string{"%0", "%3"}) {
		t.Errorf("after %%1 and %%2 went: flows %q, want %%0's and %%3's", got)
	}
	stop3 := watchQuietly(t, c, "%3")
	c.ForgetGonePanes(listed("%0", "%4"))
	if got := flows(); !slices.Equal(got, []string{"%0", "%3"}) {
		t.Errorf("a watched pane missing from a listing: flows %q, want %%3's kept", got)
	}
	stop3()
	c.ForgetGonePanes(listed("%0", "%4"))
	if got := flows(); !slices.Equal(got, []string{"%0"}) {
		t.Errorf("once unwatched and gone: flows %q, want %%0's alone", got)
	}
}

// TestAStreamWhoseConnectionBrokeAsItStartedSaysSo: an output client
// through a transport (ssh) whose connection breaks as its pane is
// resumed, while tmux still knows the client, so that the resume itself
// succeeds: the stream's start fails as a lost connection, as the
// client's own commands would, not as the session gone.
func TestAStreamWhoseConnectionBrokeAsItStartedSaysSo(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	ctl, err := c.control(context.Background())
	if err != nil || ctl == nil {
		t.Fatalf("no command client: %v", err)
	}
	// A name tmux knows, so that the resume through the command client
	// succeeds: the command client's own.
	name, err := ctl.run(context.Background(), []string{"display-message", "-p", "#{client_name}"})
	if err != nil || len(name) != 1 {
		t.Fatalf("the command client's name: %q, %v", name, err)
	}
	cc := &controlClient{stderr: new(bytes.Buffer), done: make(chan struct{}), remote: true, name: name[0]}
	close(cc.done) // its transport broke: no %exit was read
	err = c.streams.resume(context.Background(), cc, &watcher{pane: "%0", session: "$0"})
	if !errors.Is(err, ErrConnectionLost) {
		t.Errorf("resuming a pane on a client whose connection broke: %v, want a lost connection", err)
	}
	cc.exited = true // tmux ended it: its session went
	err = c.streams.resume(context.Background(), cc, &watcher{pane: "%0", session: "$0"})
	if !errors.Is(err, errClosed) || errors.Is(err, ErrConnectionLost) {
		t.Errorf("resuming a pane on a client tmux ended: %v, want it closed, no lost connection", err)
	}
}

// TestCaughtUpReturnsOnceTheOutputQueuedBeforeItIsRead: a watched pane
// writes a long run of lines and then a mark while tmcp reads its output
// client slowly. Once the mark is on the screen, tmux has queued it for
// the client; CaughtUp returns only after the stream has delivered it.
func TestCaughtUpReturnsOnceTheOutputQueuedBeforeItIsRead(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	deliver := c.streams.route
	c.streams.route = func(session string, cc *controlClient, ev OutputEvent) {
		if ev.Pane == "%0" && len(ev.Data) > 0 {
			time.Sleep(5 * time.Millisecond) // a reader far slower than tmux
		}
		deliver(session, cc, ev)
	}
	var mu sync.Mutex
	var got bytes.Buffer
	stop, err := c.Watch(context.Background(), "%0", "$0", func(ev OutputEvent) {
		mu.Lock()
		defer mu.Unlock()
		got.Write(ev.Data)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	seen := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Contains(got.Bytes(), []byte("CAUGHT-2"))
	}
	srv.Must("send-keys", "-t", "%0", "seq 1 30000; echo CAUGHT-$((1+1))", "Enter")
	if !tmuxtest.WaitFor(10*time.Second, func() bool {
		return strings.Contains(srv.Must("capture-pane", "-p", "-t", "%0"), "CAUGHT-2")
	}) {
		t.Fatal("the mark never reached the screen")
	}
	if seen() {
		t.Fatal("the stream had the mark as soon as the screen did: no output was queued, the test proves nothing")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.CaughtUp(ctx, "%0"); err != nil {
		t.Fatal(err)
	}
	if !seen() {
		t.Error("CaughtUp returned before the stream delivered the output tmux had queued")
	}
	if err := c.CaughtUp(context.Background(), "%1"); err == nil {
		t.Error("CaughtUp on a pane not streamed: no error")
	}
}

func TestOutputClientFlagIsThePauseAfter(t *testing.T) {
	if want := "pause-after=" + strconv.Itoa(PauseAfterSeconds); OutputClientFlag != want {
		t.Errorf("OutputClientFlag %q, want %q", OutputClientFlag, want)
	}
	if strings.Contains(commandClientFlags, OutputClientFlag) {
		t.Errorf("the command client's flags %q hold %q: tests could not tell it from an output client", commandClientFlags, OutputClientFlag)
	}
}

// TestTheCommandClientTimesAPanesFirstOutputAfterEachReArm: the client
// commands go through hands on the first output of each pane of its
// session, with its time, mutes the pane, and continues it after a
// backoff that doubles while the pane keeps writing: each first output
// comes at least that long after the one before.
func TestTheCommandClientTimesAPanesFirstOutputAfterEachReArm(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("split-window", "-d", "-t", "main", "sh")
	c := newClient(t, srv)
	type first struct {
		data string
		at   time.Time
	}
	firsts := make(chan first, 10)
	c.OnUnwatchedOutput(func(pane string, data []byte, at time.Time) {
		if pane == "%1" {
			select {
			case firsts <- first{string(data), at}:
			default:
			}
		}
	})
	c.Prepare(context.Background())
	if !c.ControlConnected() {
		t.Fatal("no command client")
	}
	before := time.Now()
	srv.Must("send-keys", "-t", "%1", "while :; do echo tick; sleep 0.01; done", "Enter")
	var got []first
	for len(got) < 4 {
		select {
		case f := <-firsts:
			got = append(got, f)
		case <-time.After(5*time.Second + rearmMax):
			t.Fatalf("%d first outputs of a pane writing every 10ms reached tmcp, want 4", len(got))
		}
	}
	if f := got[0]; f.at.Before(before) || time.Since(f.at) > 30*time.Second || f.data == "" {
		t.Errorf("first output %q at %v, want some data from after %v", f.data, f.at, before)
	}
	backoff := rearmFirst
	for i := 1; i < len(got); i++ {
		if gap := got[i].at.Sub(got[i-1].at); gap < backoff || got[i].data == "" {
			t.Errorf("first output %d (%q) came %v after the one before, want at least the backoff %v", i, got[i].data, gap, backoff)
		}
		backoff *= 2
	}
	if !c.PausedAt("%1", time.Now()) {
		t.Error("PausedAt: a pane muted at its output is not paused now")
	}
	if c.PausedAt("%0", time.Now()) {
		t.Error("PausedAt: a quiet pane, never muted, is paused")
	}
}

// TestHoldOutputStopsAWatchedPanesOutputUntilLetGo: while a watched pane
// is held, tmux sends tmcp none of what it writes, and no pause of it
// reaches the watcher as a loss; once let go, its output flows again.
func TestHoldOutputStopsAWatchedPanesOutputUntilLetGo(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	var data, pauses atomic.Int64
	stop, err := c.Watch(context.Background(), "%0", "$0", func(ev OutputEvent) {
		switch {
		case ev.Paused:
			pauses.Add(1)
		case len(ev.Data) > 0:
			data.Add(int64(len(ev.Data)))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := c.HoldOutput(context.Background(), "%0", true); err != nil {
		t.Fatal(err)
	}
	held := data.Load()
	srv.Must("send-keys", "-t", "%0", "seq 1 20000 | sed s/^/held-/", "Enter")
	waitRow := func(row string) {
		t.Helper()
		if !tmuxtest.WaitFor(10*time.Second, func() bool {
			return strings.Contains(srv.Must("capture-pane", "-p", "-t", "%0"), row)
		}) {
			t.Fatalf("the pane never showed %s", row)
		}
	}
	waitRow("held-20000")
	if n := data.Load() - held; n != 0 || pauses.Load() != 0 {
		t.Fatalf("while held the watcher got %d bytes and %d pauses, want none", n, pauses.Load())
	}
	if err := c.HoldOutput(context.Background(), "%0", false); err != nil {
		t.Fatal(err)
	}
	srv.Must("send-keys", "-t", "%0", "echo let-go", "Enter")
	waitRow("let-go")
	if !tmuxtest.WaitFor(5*time.Second, func() bool { return data.Load() > held }) {
		t.Fatal("once let go the watcher got nothing of the pane's output")
	}
	if err := c.HoldOutput(context.Background(), "%9", true); err == nil {
		t.Error("HoldOutput of a pane nobody streams: no error")
	}
}

// TestACommandSentOnceAnotherIsPlacedIsWrittenAfterIt: WithPlaced's
// function runs once the command's place in the order written to tmux is
// fixed, so a command sent from then on is written after it, even while
// tmux takes nothing yet.
func TestACommandSentOnceAnotherIsPlacedIsWrittenAfterIt(t *testing.T) {
	pr, pw := io.Pipe()
	c := pipedClient(pw)
	defer close(c.done)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	placed := make(chan struct{})
	go c.run(WithPlaced(ctx, func() { close(placed) }), []string{"display-message", "-p", "first"})
	select {
	case <-placed:
	case <-ctx.Done():
		t.Fatal("the first command was never placed")
	}
	go c.run(ctx, []string{"display-message", "-p", "second"})
	go c.writeLoop()
	sc := bufio.NewScanner(pr)
	var commands []string
	for len(commands) < 2 && sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "display-message -p n.") { // not a sentinel
			commands = append(commands, sc.Text())
		}
	}
	if got := strings.Join(commands, " | "); !strings.Contains(commands[0], "first") || !strings.Contains(commands[1], "second") {
		t.Errorf("written in the order %s, want first, then second", got)
	}
}

// watchQuietly watches a pane of session $0, dropping its output, until
// the test ends or the returned stop is called.
func watchQuietly(t *testing.T, c *Client, pane string) (stop func()) {
	t.Helper()
	stop, err := c.Watch(context.Background(), pane, "$0", func(OutputEvent) {})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return stop
}
