package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

func newClient(t *testing.T, srv *tmuxtest.Server) *Client {
	t.Helper()
	c, err := New(context.Background(), Options{SocketPath: srv.Socket})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func run(t *testing.T, c *Client, args ...string) []string {
	t.Helper()
	out, err := c.Run(context.Background(), args...)
	if err != nil {
		t.Fatalf("Run %v: %v", args, err)
	}
	return out
}

func TestNewRejectsABinaryThatIsNotTmux(t *testing.T) {
	for _, bin := range []string{"/nonexistent/tmux", "true", "sh"} {
		if _, err := New(context.Background(), Options{Binary: bin}); err == nil {
			t.Errorf("New with binary %q: no error", bin)
		}
	}
}

func TestQuoteDeliversHostileStringsAsOneArgument(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	cases := map[string]string{
		"newline":      "a\nb",
		"semicolon":    "a ; kill-server ; b",
		"quotes":       `"'\"\'`,
		"dollar":       "$HOME ${HOME} $(id)",
		"tilde":        "~ ~root",
		"hash":         "# #",
		"format":       "#{pane_id} #{session_name",
		"shell format": "#(touch /tmp/tmcp-should-not-exist)",
		"control":      "\x01\x07\x1b[31m\x7f\t\r",
		"invalid utf8": "\xff\xfe\xc3 é 日本",
		"braces":       "{ } %if %endif",
		"backslash":    `\ \\ \n \044`,
		"trailing nl":  "x\n",
		"one megabyte": strings.Repeat("0123456789abcdef", 1<<16),
	}
	for name, value := range cases {
		t.Run(name, func(t *testing.T) {
			run(t, c, "set-option", "-g", "@probe", value)
			got := strings.Join(run(t, c, "show-option", "-gv", "@probe"), "\n")
			if got != value {
				t.Errorf("round trip of %q: got %q", short(value), short(got))
			}
		})
	}
}

func short(s string) string {
	if len(s) > 60 {
		return s[:60] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

func FuzzQuoteRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a\nb", "#(id)", "$x ~ ;", "\xff\x01", `\"`} {
		f.Add(s)
	}
	srv := tmuxtest.New(f)
	c, err := New(context.Background(), Options{SocketPath: srv.Socket})
	if err != nil {
		f.Fatal(err)
	}
	defer c.Close()
	f.Fuzz(func(t *testing.T, value string) {
		if strings.IndexByte(value, 0) >= 0 {
			if _, err := Quote(value); !errors.Is(err, ErrNUL) {
				t.Fatalf("Quote of a NUL byte: err %v, want ErrNUL", err)
			}
			return
		}
		if _, err := c.Run(context.Background(), "set-option", "-g", "@fuzz", value); err != nil {
			t.Fatalf("set-option %q: %v", value, err)
		}
		out, err := c.Run(context.Background(), "show-option", "-gv", "@fuzz")
		if err != nil {
			t.Fatalf("show-option: %v", err)
		}
		if got := strings.Join(out, "\n"); got != value {
			t.Fatalf("round trip of %q: got %q", value, got)
		}
	})
}

func TestCommandsGoOverControlModeInSteadyState(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	run(t, c, "list-sessions")
	before := c.ProcessesStarted()
	for i := 0; i < 20; i++ {
		run(t, c, "list-sessions")
	}
	if n := c.ProcessesStarted() - before; n != 0 {
		t.Errorf("20 commands started %d tmux processes, want 0", n)
	}
}

func TestNoSessionFallsBackToProcessesThenAttaches(t *testing.T) {
	srv := tmuxtest.Empty(t)
	c := newClient(t, srv)
	if _, err := c.Run(context.Background(), "list-sessions"); err == nil || !strings.Contains(err.Error(), "list-sessions") {
		t.Fatalf("list-sessions with no server: err %v, want tmux's error naming the command", err)
	}
	srv.Start()
	if !tmuxtest.WaitFor(2*time.Second, func() bool {
		_, err := c.Run(context.Background(), "list-sessions")
		return err == nil && c.ControlConnected()
	}) {
		t.Fatal("control mode never attached after a session appeared")
	}
	before := c.ProcessesStarted()
	run(t, c, "list-sessions")
	if n := c.ProcessesStarted() - before; n != 0 {
		t.Errorf("after attaching, a command started %d processes, want 0", n)
	}
}

func TestReconnectsAfterTheServerRestarts(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	run(t, c, "list-sessions")
	srv.Kill()
	srv.Start()
	out := run(t, c, "list-sessions", "-F", "#{session_name}")
	if len(out) != 1 || out[0] != "main" {
		t.Fatalf("after restart: list-sessions = %q", out)
	}
	run(t, c, "list-sessions")
	before := c.ProcessesStarted()
	for i := 0; i < 5; i++ {
		run(t, c, "list-sessions")
	}
	if n := c.ProcessesStarted() - before; n != 0 {
		t.Errorf("after restart, 5 commands started %d processes, want 0", n)
	}
}

func TestKillingTheAttachedSessionReconnects(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("new-session", "-d", "-s", "other", "sh")
	c := newClient(t, srv)
	run(t, c, "list-sessions")
	attached := c.ControlSessions()[0]
	run(t, c, "kill-session", "-t", attached)
	out := run(t, c, "list-sessions", "-F", "#{session_id}")
	if len(out) != 1 || out[0] == attached {
		t.Fatalf("after killing %s: sessions %q", attached, out)
	}
	if !c.ControlConnected() {
		t.Error("not attached again after the attached session was killed")
	}
}

// checkNoAnswer checks that err is the error of a command tmux did not
// answer: recognisable as ErrNoAnswer, carrying the context's reason, and
// saying so in its message.
func checkNoAnswer(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrNoAnswer) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%s: err %v, want one that is ErrNoAnswer and context.DeadlineExceeded", what, err)
	}
	if err != nil && !strings.Contains(err.Error(), "no answer from tmux in time") {
		t.Errorf("%s: message %q does not say tmux gave no answer in time", what, err)
	}
	if Refused(err) {
		t.Errorf("%s: %v taken for tmux's refusal", what, err)
	}
}

// Only tmux's own error answer is a refusal: a command cut short by its
// caller says nothing of what tmux would have answered.
func TestRefusedIsTmuxsAnswerOnly(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	run(t, c, "list-sessions")
	_, refused := c.Run(context.Background(), "send-keys", "-t", "%99", "x")
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	_, cut := c.Run(ended, "send-keys", "-t", "%99", "x")
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"a pane not found", refused, true},
		{"a call that ended first", cut, false},
		{"a wrapped refusal", fmt.Errorf("typing: %w", refused), true},
		{"another error", errors.New("x"), false},
		{"no error", nil, false},
	} {
		if got := Refused(tc.err); got != tc.want {
			t.Errorf("Refused(%s: %v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestStoppedServerGivesAPromptNamedError(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	run(t, c, "list-sessions")
	srv.Stop()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	took := make([]time.Duration, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, errs[i] = c.Run(ctx, "list-sessions")
			took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "list-sessions") {
			t.Errorf("call %d on a stopped server: err %v, want an error naming list-sessions", i, err)
		}
		if took[i] > 2*time.Second {
			t.Errorf("call %d took %v with a 500ms deadline", i, took[i])
		}
		checkNoAnswer(t, fmt.Sprintf("call %d on a stopped server", i), err)
	}
	short, cancelShort := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := c.RunProcess(short, "list-sessions")
	cancelShort()
	checkNoAnswer(t, "a process on a stopped server", err)
	srv.Continue()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := c.Run(ctx, "list-sessions"); err != nil {
		t.Fatalf("after SIGCONT: %v", err)
	}
}

// lastCommandNumber returns the number tmux gave the last command it ran.
// tmux numbers the commands of all its clients in one sequence, so a
// control client of the test's own reads it from its guard lines.
func lastCommandNumber(t *testing.T, srv *tmuxtest.Server) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := srv.Command(ctx, "-C", "attach-session", "-f", "ignore-size,no-output")
	cmd.Stdin = strings.NewReader("display-message -p probe\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probing tmux's command numbers: %v", err)
	}
	last := -1
	for _, line := range strings.Split(string(out), "\n") {
		var when, number, flags int
		if _, err := fmt.Sscanf(line, "%%end %d %d %d", &when, &number, &flags); err == nil {
			last = number
		}
	}
	if last < 0 {
		t.Fatalf("probing tmux's command numbers: no guard line in %q", out)
	}
	return last
}

// TestForgedGuardLinesInAPaneDoNotCorruptAReply writes, to a pane's
// terminal, guard lines with the time and the command numbers the next
// captures will carry, then captures the pane until one capture meets its
// own forged %end: that reply must still be exactly the screen.
func TestForgedGuardLinesInAPaneDoNotCorruptAReply(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("new-session", "-d", "-s", "tall", "-x", "80", "-y", "60", "sh")
	pane := strings.TrimSpace(srv.Must("display-message", "-p", "-t", "=tall:", "#{pane_id}"))
	tty, err := os.OpenFile(strings.TrimSpace(srv.Must("display-message", "-p", "-t", pane, "#{pane_tty}")), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	c := newClient(t, srv)
	run(t, c, "list-sessions")
	last, now := lastCommandNumber(t, srv), time.Now().Unix()
	var forged strings.Builder
	forged.WriteString("\x1b[H\x1b[2J")
	for n := last + 1; n <= last+28; n++ {
		fmt.Fprintf(&forged, "%%end %d %d 1\r\n%%end %d %d 1\r\n", now, n, now+1, n)
	}
	fmt.Fprint(tty, forged.String())
	if !tmuxtest.WaitFor(3*time.Second, func() bool {
		return strings.Contains(srv.Must("capture-pane", "-p", "-t", pane), fmt.Sprintf("%%end %d %d 1", now+1, last+28))
	}) {
		t.Fatalf("pane never showed the forged lines:\n%s", srv.Must("capture-pane", "-p", "-t", pane))
	}
	want := strings.TrimRight(srv.Must("capture-pane", "-p", "-t", pane), "\n")
	for i := 0; i < 20; i++ {
		before := c.ProcessesStarted()
		got := strings.TrimRight(strings.Join(run(t, c, "capture-pane", "-p", "-t", pane), "\n"), "\n")
		if got != want {
			t.Fatalf("capture %d over control mode differs from the screen:\n got %q\nwant %q", i, got, want)
		}
		if c.ProcessesStarted() > before {
			// The forgery was met and detected; the connection is in step.
			if out := run(t, c, "display-message", "-p", "ok"); len(out) != 1 || out[0] != "ok" {
				t.Fatalf("after the forged reply: display-message = %q", out)
			}
			return
		}
	}
	t.Fatalf("no capture met a forged guard (numbers %d to %d, times %d and %d): the defence was not exercised", last+1, last+28, now, now+1)
}

// TestWatchingAndUnwatchingABusyPaneLeavesTheServerUp guards against a
// tmux 3.3a crash: turning a pane's output off and on again while it
// writes kills the server, so streams are muted by pausing instead.
func TestWatchingAndUnwatchingABusyPaneLeavesTheServerUp(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("send-keys", "-t", "main", "while :; do seq 1 200; sleep 0.01; done", "Enter")
	c := newClient(t, srv)
	var got atomic.Int64
	for i := 0; i < 40; i++ {
		before := got.Load()
		stop, err := c.Watch(context.Background(), "%0", "$0", func(ev OutputEvent) { got.Add(int64(len(ev.Data))) })
		if err != nil {
			t.Fatalf("watch %d: %v", i, err)
		}
		// Unwatched only once output came while watched.
		if !tmuxtest.WaitFor(3*time.Second, func() bool { return got.Load() > before }) {
			t.Fatalf("watch %d: no output streamed", i)
		}
		stop()
	}
	if _, err := srv.Tmux("list-sessions"); err != nil {
		t.Fatalf("the tmux server died: %v", err)
	}
	if got.Load() == 0 {
		t.Fatal("no output was streamed")
	}
}

// TestHooksDoNotMakeCommandsRunTwice: an after-command hook answers with a
// block of its own between a command's reply and tmcp's sentinel, which
// must not be taken for forged framing (a forged reply is never re-run
// unless the command only reads).
func TestHooksDoNotMakeCommandsRunTwice(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("set-hook", "-g", "after-split-window", "select-layout even-vertical")
	srv.Must("set-hook", "-g", "after-set-option", "set -g @hooked 1")
	c := newClient(t, srv)
	run(t, c, "list-sessions")
	run(t, c, "split-window", "-d", "-t", "main", "sh")
	if n := strings.Count(srv.Must("list-panes", "-t", "main"), "\n"); n != 2 {
		t.Fatalf("one split-window made %d panes, want 2", n)
	}
	before := c.ProcessesStarted()
	run(t, c, "set-option", "-g", "@counter", "x")
	if c.ProcessesStarted() != before {
		t.Fatal("a hook's block made the command run again as a process")
	}
}

func TestPrepareAttachesBeforeTheFirstCommand(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	c.Prepare(context.Background())
	if !c.ControlConnected() {
		t.Fatal("after Prepare with a session running, no command client is attached")
	}
	before := c.ProcessesStarted()
	run(t, c, "list-sessions")
	if n := c.ProcessesStarted() - before; n != 0 {
		t.Errorf("the first command after Prepare started %d tmux processes, want 0", n)
	}
}

func TestPrepareWithoutASessionLeavesCommandsWorking(t *testing.T) {
	srv := tmuxtest.Empty(t)
	c := newClient(t, srv)
	c.Prepare(context.Background())
	if c.ControlConnected() {
		t.Fatal("Prepare attached although no session exists")
	}
	srv.Must("new-session", "-d", "-s", "late", "sh")
	tmuxtest.WaitFor(2*time.Second, func() bool {
		_, err := c.Run(context.Background(), "list-sessions")
		return err == nil && c.ControlConnected()
	})
	if !c.ControlConnected() {
		t.Error("after a session appeared, commands did not go over a command client")
	}
}

func TestSocketPathIsWorkedOutAsTmuxDoes(t *testing.T) {
	t.Setenv("TMUX_TMPDIR", "/run/x")
	t.Setenv("TMUX", "/tmp/tmux-9/outer,123,0")
	uid := fmt.Sprint(os.Getuid())
	cases := []struct {
		l    *Launcher
		want string
	}{
		{&Launcher{SocketPath: "/s/p", SocketName: "n"}, "/s/p"},
		{&Launcher{SocketName: "n"}, "/run/x/tmux-" + uid + "/n"},
		{&Launcher{}, "/tmp/tmux-9/outer"},
	}
	for _, tc := range cases {
		c := &Client{launcher: tc.l}
		if got := c.SocketPath(); got != tc.want {
			t.Errorf("SocketPath with -S %q -L %q = %q, want %q", tc.l.SocketPath, tc.l.SocketName, got, tc.want)
		}
	}
	if got, want := SocketDir(), "/run/x/tmux-"+uid; got != want {
		t.Errorf("SocketDir = %q, want %q", got, want)
	}
	t.Setenv("TMUX", "")
	t.Setenv("TMUX_TMPDIR", "")
	if got, want := (&Client{launcher: &Launcher{}}).SocketPath(), "/tmp/tmux-"+uid+"/default"; got != want {
		t.Errorf("SocketPath outside tmux = %q, want %q", got, want)
	}
}

// TestACommandWrittenAfterTheReaderEndedFailsAtOnce: a command the writer
// takes just after the reader has failed every pending one must fail too,
// not wait for a reply nobody will read until its deadline.
func TestACommandWrittenAfterTheReaderEndedFailsAtOnce(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	ctl, err := c.control(context.Background())
	if err != nil || ctl == nil {
		t.Fatalf("attaching a command client: %v", err)
	}
	srv.Kill()
	select {
	case <-ctl.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the reader did not end after the server was killed")
	}
	r, err := ctl.newRequest([]string{"list-sessions"})
	if err != nil {
		t.Fatal(err)
	}
	if ctl.write(r) {
		t.Error("write reported success on a client whose reader has ended")
	}
	select {
	case <-r.done:
		if !errors.Is(r.err, errClosed) {
			t.Errorf("the command failed with %v, want %v", r.err, errClosed)
		}
	case <-time.After(time.Second):
		t.Fatal("the command was left pending after the reader ended")
	}
}

// TestACommandSentToAClientThatEndedFailsAtOnce: a command handed to a
// control client that has ended (its server killed) fails at once as
// never sent, whether it lost the race to the client's end or was queued
// for a writer that has stopped: it does not wait out its deadline, and
// is not reported as tmux not answering.
func TestACommandSentToAClientThatEndedFailsAtOnce(t *testing.T) {
	srv := tmuxtest.New(t)
	l := &Launcher{Binary: "tmux", SocketPath: srv.Socket}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cc, err := startControl(ctx, l, &attachGate{}, new(atomic.Int64), "main", commandClientFlags, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.close()
	srv.Kill()
	select {
	case <-cc.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the control client did not end with its server")
	}
	// The writes queue has room, so each command may be queued for the
	// stopped writer: without care, one in two would wait out its deadline.
	for i := 0; i < 20; i++ {
		rctx, rcancel := context.WithTimeout(context.Background(), 3*time.Second)
		start := time.Now()
		_, err := cc.run(rctx, []string{"display-message", "-p", "x"})
		rcancel()
		if took := time.Since(start); !errors.Is(err, errClosed) || took > time.Second {
			t.Fatalf("command %d to a client that ended: %v after %v, want errClosed at once", i, err, took.Round(time.Millisecond))
		}
	}
}

// Before a control client is closed, quiet pauses on it the output of
// every pane of its session, and returns once tmux has: the flooding
// pane's output stops reaching the client, so none is queued for it as it
// exits (tmux 3.3a exits when an exiting client has some queued for a pane
// that goes on writing).
func TestQuietPausesEveryPaneOfTheClientsSession(t *testing.T) {
	srv := tmuxtest.New(t)
	flood := strings.TrimSpace(srv.Must("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main", "sh", "-c", "yes flood"))
	l := &Launcher{Binary: "tmux", SocketPath: srv.Socket}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var mu sync.Mutex
	paused := map[string]bool{}
	outputs := 0
	cc, err := startControl(ctx, l, &attachGate{}, new(atomic.Int64), "main", outputClientFlags, func(ev OutputEvent) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case ev.Paused:
			paused[ev.Pane] = true
		case ev.Pane == flood && len(ev.Data) > 0:
			outputs++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.close()
	if !tmuxtest.WaitFor(3*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return outputs > 0 }) {
		t.Fatal("the flooding pane's output never reached the client")
	}
	cc.quiet()
	// tmux has paused them once quiet returns; its %pause lines, which
	// came in the reply, reach the client's reader just after.
	var names []string
	if !tmuxtest.WaitFor(2*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		names = names[:0]
		for p := range paused {
			names = append(names, p)
		}
		return paused["%0"] && paused[flood]
	}) {
		t.Fatalf("after quiet, the panes paused on the client are %v; want %%0 and %s", names, flood)
	}
	mu.Lock()
	before := outputs
	mu.Unlock()
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	after := outputs
	mu.Unlock()
	if after != before {
		t.Errorf("the flooding pane's output went on reaching the quieted client: %d pieces, then %d", before, after)
	}
}
