package tmux

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// PauseAfterSeconds lets tmux pause a pane whose output an output
	// client has not read for that long, instead of disconnecting the
	// client: what the pane writes until it is continued is dropped.
	PauseAfterSeconds = 10
	// OutputClientFlag, PauseAfterSeconds as a client flag, is in the flags
	// of tmcp's output clients (as list-clients shows them) and of no other
	// client of tmcp's.
	OutputClientFlag = "pause-after=10"
	// paneMute and paneResume stop and restart a pane's output to a client.
	// Not "off" and "on": tmux 3.3a crashes (a segfault in the server)
	// when a pane's output is turned off and on again while it writes;
	// pausing and continuing does the same job safely.
	paneMute   = "pause"
	paneResume = "continue"
	// outputClientFlags are for the clients that carry pane output.
	outputClientFlags = "ignore-size," + OutputClientFlag
	// commandClientFlags keep the command client from resizing windows.
	// It mutes each pane of its session at the pane's first output (see
	// streamSet.commandOutput), and its own pause-after tells it apart.
	commandClientFlags = "ignore-size,pause-after=1"
)

// A pane nobody watches is paused at its first output, so that what it
// writes costs it nothing, and continued again (re-armed) after a backoff,
// so that tmcp learns when it next writes: rearmFirst after a pause, then
// twice as long each time the pane writes within rearmQuiet of being
// continued, up to rearmMax; once it has been quiet that long, rearmFirst
// again. A pane that floods thus passes tmcp one piece of output every
// rearmMax.
const (
	rearmFirst = 250 * time.Millisecond
	rearmMax   = 8 * time.Second
	rearmQuiet = time.Second
)

// streamSet holds the control clients that carry pane output: one per
// session that has a watched pane, since tmux sends %output to a client
// only for panes of the session it is attached to. Panes nobody watches are
// switched off at their first output, so they run at full speed.
type streamSet struct {
	c        *Client
	mu       sync.Mutex
	clients  map[string]*controlClient // by session id
	watchers map[string]*watcher       // by pane id
	// flows holds, per output client, what tmcp asked of each pane's
	// output to it and how far tmux has acted on it (see paneFlow).
	flows    map[*controlClient]map[string]*paneFlow
	onLayout func()
	// route takes each event of an output client: deliver, which tests
	// wrap to see what reaches tmcp.
	route func(session string, cc *controlClient, ev OutputEvent)
	// routeCommand takes each event of the command client:
	// commandOutput, which tests wrap likewise.
	routeCommand func(cc *controlClient, ev OutputEvent)
	// choosing holds a token while an output client is found or attached,
	// so that two watches in one session share one client.
	choosing chan struct{}
	// onUnwatched takes the output that made an unwatched pane muted.
	onUnwatched func(pane string, data []byte, at time.Time)
}

// OnUnwatchedOutput makes fn take the first output of each pane nobody
// watches in a session whose output a client carries, the output that gets
// it muted: what such a pane writes first is known, and when. fn gets its
// own copy of the data and must not block.
func (c *Client) OnUnwatchedOutput(fn func(pane string, data []byte, at time.Time)) {
	c.streams.mu.Lock()
	defer c.streams.mu.Unlock()
	c.streams.onUnwatched = fn
}

// OnLayoutChange makes fn run whenever tmux reports, on a client carrying
// pane output, that panes or windows came, went or changed shape: the cue
// to check whether a watched pane has died. fn must not block.
func (c *Client) OnLayoutChange(fn func()) {
	c.streams.mu.Lock()
	defer c.streams.mu.Unlock()
	c.streams.onLayout = fn
}

// CaughtUp returns once tmcp has read all the output of a streamed pane
// that tmux had queued for it when CaughtUp was called: tmux answers an
// output client's commands after the output it queued for that client
// before them, so a command's answer there marks the point. Output tmux
// dropped for a lag (a pause) is not queued, and is not waited for.
func (c *Client) CaughtUp(ctx context.Context, pane string) error {
	s := c.streams
	s.mu.Lock()
	var cc *controlClient
	if w := s.watchers[pane]; w != nil {
		cc = w.client
	}
	s.mu.Unlock()
	if cc == nil {
		return fmt.Errorf("pane %s is not streamed", pane)
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	if _, err := cc.run(ctx, []string{"display-message", "-p", "caught-up"}); err != nil {
		return fmt.Errorf("reading pane %s's output up to now: %w", pane, err)
	}
	return nil
}

// ForgetGonePanes drops what tmcp keeps of the output of panes gone from
// the server, given every pane alive (as ListPanes gives them): each pane
// that ever wrote in a carried session leaves a little state, which a
// long-lived tmcp must not keep for every pane it saw come and go. A
// watched pane is kept (its stream says when it is gone), and so is every
// pane newer than the newest alive: pane ids only grow, so it was made
// after the panes were listed.
func (c *Client) ForgetGonePanes(panes []Pane) {
	alive := make(map[string]bool, len(panes))
	newest := -1
	for _, p := range panes {
		alive[p.ID] = true
		newest = max(newest, paneNumber(p.ID))
	}
	s := c.streams
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, flows := range s.flows {
		for id := range flows {
			if n := paneNumber(id); !alive[id] && s.watchers[id] == nil && n >= 0 && n < newest {
				delete(flows, id)
			}
		}
	}
}

// paneNumber is the number of a pane id ("%12": 12), or -1.
func paneNumber(id string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "%"))
	if err != nil || !strings.HasPrefix(id, "%") {
		return -1
	}
	return n
}

// paneFlow is the state of one pane's output to one output client, as
// tmcp set it. A continue of a paused pane is counted, and sent so that
// tmux writes exactly one %continue for it on the client's stream, in
// order among the pane's output and %pause lines (see continueArgs): the
// count of those read tells which of them tmux has acted on by the point
// the stream is read up to. Commands go through the command client
// where they can (see flowCommand), whose answers do not wait behind the
// output the client has yet to deliver. Guarded by streamSet.mu.
type paneFlow struct {
	muted     bool   // paused by tmcp, for nobody watches it
	continues uint64 // continues sent
	continued uint64 // %continue lines read
	// mutedAt is when the pane wrote what got it muted (or when a watch
	// of it ended); armedAt when tmux last continued it after a mute (its
	// %continue read): between the two, what it wrote never reached tmcp.
	mutedAt, armedAt time.Time
	// backoff is how long the current mute lasts before the re-arm;
	// mutes counts them, so that a re-arm due for an earlier mute
	// does nothing.
	backoff time.Duration
	mutes   uint64
}

// pausedAt reports whether tmcp had the pane's output to its client
// paused at t, so that what the pane wrote then never reached tmcp.
func (f *paneFlow) pausedAt(t time.Time) bool {
	if f.armedAt.After(t) {
		return true // continued after t, so paused at t
	}
	if f.muted || f.continued < f.continues {
		return !f.mutedAt.After(t)
	}
	return false
}

type watcher struct {
	// liveFrom is the number of the continue that began the stream, or
	// ended the watcher's last hold: a %pause read before that continue's
	// %continue answers an earlier mute or hold, not a lag. Guarded by
	// streamSet.mu.
	liveFrom uint64
	// held is set while the watcher has the pane's output paused (see
	// Client.HoldOutput): a %pause then is its own, not a lag. Guarded by
	// streamSet.mu.
	held    bool
	pane    string
	session string
	client  *controlClient
	fn      func(OutputEvent)
}

func newStreamSet(c *Client) *streamSet {
	s := &streamSet{
		c:        c,
		clients:  map[string]*controlClient{},
		watchers: map[string]*watcher{},
		flows:    map[*controlClient]map[string]*paneFlow{},
		choosing: make(chan struct{}, 1),
	}
	s.route = s.deliver
	s.routeCommand = s.commandOutput
	return s
}

// Watch delivers the output of pane (an id such as "%3") in session (its
// session's id, such as "$1", as PaneInfo gives it) to fn from now on,
// until stop is called or the stream ends (fn then gets Ended). fn runs on
// the connection's reader and must not block, nor keep the event's Data
// past its return: that memory is reused.
func (c *Client) Watch(ctx context.Context, pane, session string, fn func(OutputEvent)) (stop func(), err error) {
	return c.streams.watch(ctx, pane, session, fn)
}

func (s *streamSet) watch(ctx context.Context, pane, session string, fn func(OutputEvent)) (func(), error) {
	if !strings.HasPrefix(session, "$") {
		return nil, fmt.Errorf("streaming pane %s: %q is not a session id", pane, session)
	}
	ctx, cancel := s.c.bound(ctx)
	defer cancel()
	// Registered before the client exists, so its first output is routed.
	w := &watcher{pane: pane, session: session, fn: fn}
	s.mu.Lock()
	if _, busy := s.watchers[pane]; busy {
		s.mu.Unlock()
		return nil, fmt.Errorf("pane %s is already streamed", pane)
	}
	s.watchers[pane] = w
	s.mu.Unlock()
	cc, err := s.client(ctx, session)
	if err != nil {
		s.unwatch(pane, w)
		return nil, fmt.Errorf("streaming pane %s: %w", pane, err)
	}
	if err := s.resume(ctx, cc, w); err != nil {
		s.unwatch(pane, w)
		if errors.Is(err, errClosed) && !errors.Is(err, ErrConnectionLost) && s.c.closing.Err() == nil {
			// The client ended since it attached, and not by tmcp's hand.
			return nil, fmt.Errorf("streaming pane %s: %s: %w", pane, sessionGone, err)
		}
		return nil, fmt.Errorf("streaming pane %s: %w", pane, err)
	}
	var once sync.Once
	return func() { once.Do(func() { s.unwatch(pane, w) }) }, nil
}

// resume continues a watched pane's output to its output client cc, and
// returns once tmux has done so: what the pane writes from then on reaches
// the watcher.
func (s *streamSet) resume(ctx context.Context, cc *controlClient, w *watcher) error {
	s.mu.Lock()
	w.client = cc
	// A pane tmcp has not muted is not paused: continuing it as one that
	// is would discard what cc holds of its output from before, which is
	// the watcher's (the pause's discard); it gets a bare continue.
	f := s.flow(cc, w.pane)
	paused := f != nil && f.muted
	n, r, via := s.continuePane(cc, w.pane, paused)
	w.liveFrom = n
	s.mu.Unlock()
	_, err := via.await(ctx, r)
	switch {
	case err == nil && !cc.alive():
		// cc ended as the pane was resumed: its session went, or, with
		// tmux still knowing it, its connection broke.
		return cc.closedErr()
	case err == nil || ctx.Err() != nil || via == cc:
		return err
	}
	// The command client failed, or tmux knows cc no more: cc itself,
	// the same continue (its number is already counted).
	_, err = cc.run(ctx, append([]string{"refresh-client"}, continueArgs(w.pane, paused)...))
	return err
}

// flow returns the state of a pane's output to cc, nil once cc has ended;
// s.mu is held.
func (s *streamSet) flow(cc *controlClient, pane string) *paneFlow {
	flows := s.flows[cc]
	if flows == nil {
		return nil
	}
	f := flows[pane]
	if f == nil {
		f = &paneFlow{}
		flows[pane] = f
	}
	return f
}

// flowCommand posts a refresh-client -A command (args after that flag)
// about cc's panes, through the command client where it can, and returns
// it with the client that carries it; s.mu is held, so that the commands
// of one pane reach tmux in the order their state changed. Through the
// command client, whose answers are not queued behind cc's output, a
// continue takes effect as soon as tmux reads it and the caller hears so
// at once; tmux takes each client's commands in order, so the pane's
// mutes and continues must all go one way, and cc is the way only when
// the command client is not there.
func (s *streamSet) flowCommand(cc *controlClient, args []string) (*request, *controlClient) {
	via, head := cc, []string{"refresh-client"}
	if ctl := s.c.attachedControl(); ctl != nil && cc.name != "" {
		via, head = ctl, []string{"refresh-client", "-t", cc.name}
	}
	return via.post(append(head, args...)...), via
}

// continuePane posts a continue of pane's output to cc and returns the
// number of the last continue counted, the request and the client
// carrying it; s.mu is held. A pane paused (muted, held, or paused by
// tmux for a lag that was read) gets a continue that is counted; one
// that is not gets a bare continue, which tmux writes nothing for.
func (s *streamSet) continuePane(cc *controlClient, pane string, paused bool) (uint64, *request, *controlClient) {
	var n uint64
	if f := s.flow(cc, pane); f != nil {
		f.muted = false
		if paused {
			f.continues++
		}
		n = f.continues
	}
	r, via := s.flowCommand(cc, continueArgs(pane, paused))
	return n, r, via
}

// continueArgs continue a pane's output to a client. For a pane paused
// they pause it first, a no-op on a paused pane, so that tmux writes
// exactly one %continue even were it not paused after all (a continue of
// a pane not paused writes nothing).
func continueArgs(pane string, paused bool) []string {
	if !paused {
		return []string{"-A", pane + ":" + paneResume}
	}
	return []string{"-A", pane + ":" + paneMute, "-A", pane + ":" + paneResume}
}

// mute posts a mute of a pane nobody watches on client cc (an output
// client, or the command client), whose output that got it muted came at
// at, and has it re-armed after its backoff; s.mu is held.
func (s *streamSet) mute(cc *controlClient, pane string, at time.Time) {
	f := s.flow(cc, pane)
	if f == nil {
		return // the client is gone
	}
	f.muted, f.mutedAt = true, at
	f.backoff = nextBackoff(f.backoff, f.armedAt, at)
	f.mutes++
	n := f.mutes
	time.AfterFunc(f.backoff, func() { s.rearm(cc, pane, f, n) })
	s.flowCommand(cc, []string{"-A", pane + ":" + paneMute})
}

// nextBackoff is how long a pane muted by output at at stays muted, the
// last mute having lasted last (0: none yet) and the re-arm after it come
// at armed: twice as long while the pane writes as soon as it is re-armed.
func nextBackoff(last time.Duration, armed, at time.Time) time.Duration {
	if last == 0 || at.Sub(armed) >= rearmQuiet {
		return rearmFirst
	}
	return min(2*last, rearmMax)
}

// rearm continues a pane muted by its n-th mute, if it is still muted so
// and nobody watches it: its next output is taken as its first again.
// The command client leaves its session's panes muted once an output
// client carries them there.
func (s *streamSet) rearm(cc *controlClient, pane string, f *paneFlow, n uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flows[cc][pane] != f || !f.muted || f.mutes != n || s.watchers[pane] != nil || !cc.alive() {
		return
	}
	if out := s.clients[cc.sessionID()]; out != cc && out != nil && out.alive() {
		return
	}
	s.continuePane(cc, pane, true)
}

// continued notes a %continue of a pane read on cc; s.mu is held.
func (s *streamSet) continued(cc *controlClient, pane string) {
	if f := s.flow(cc, pane); f != nil {
		f.continued++
		if f.continued == f.continues && !f.muted {
			f.armedAt = time.Now()
		}
	}
}

// PausedAt reports whether tmcp had a pane's output paused at time t on
// every client of its that carries the pane (paused at its first output,
// or by the end of a watch, and not yet re-armed): the pane may then have
// written around t without tmcp knowing when. A pane no client of tmcp's
// carries is not known to be paused.
func (c *Client) PausedAt(pane string, t time.Time) bool {
	s := c.streams
	s.mu.Lock()
	defer s.mu.Unlock()
	paused := false
	for _, flows := range s.flows {
		if f := flows[pane]; f != nil {
			if !f.pausedAt(t) {
				return false
			}
			paused = true
		}
	}
	return paused
}

// HoldOutput pauses (hold) or continues the output of a streamed pane to
// tmcp. Held, the pane writes at full speed, as if nobody watched it, and
// what it writes until it is continued never reaches the stream's fn:
// tmcp reads it from tmux's history instead. Once HoldOutput returns, fn
// has had all the output tmux sent before the hold.
func (c *Client) HoldOutput(ctx context.Context, pane string, hold bool) error {
	return c.streams.hold(ctx, pane, hold)
}

func (s *streamSet) hold(ctx context.Context, pane string, hold bool) error {
	ctx, cancel := s.c.bound(ctx)
	defer cancel()
	s.mu.Lock()
	w := s.watchers[pane]
	if w == nil || w.client == nil {
		s.mu.Unlock()
		return fmt.Errorf("pane %s is not streamed", pane)
	}
	w.held = hold
	cc := w.client
	if hold {
		s.mu.Unlock()
		// On cc itself: its answer comes after all the output it carried
		// before the pause, which is what HoldOutput promises.
		if _, err := cc.run(ctx, []string{"refresh-client", "-A", pane + ":" + paneMute}); err != nil {
			return fmt.Errorf("holding the output of pane %s: %w", pane, err)
		}
		return nil
	}
	n, r, via := s.continuePane(cc, pane, true)
	w.liveFrom = n
	s.mu.Unlock()
	if _, err := via.await(ctx, r); err != nil {
		return fmt.Errorf("letting the output of pane %s flow: %w", pane, err)
	}
	return nil
}

// client returns the output client for a session, attaching one if needed.
func (s *streamSet) client(ctx context.Context, session string) (*controlClient, error) {
	// Two clients attaching to one session at once would mean closing one,
	// and tmux 3.3a crashes when a client detaches while a control client
	// is still attaching (see Client.attach).
	select {
	case s.choosing <- struct{}{}:
		defer func() { <-s.choosing }()
	case <-ctx.Done():
		return nil, noAnswer([]string{"attach-session", "-t", session}, ctx.Err())
	}
	s.mu.Lock()
	cc := s.clients[session]
	s.mu.Unlock()
	if cc != nil && cc.alive() {
		return cc, nil
	}
	var self atomic.Pointer[controlClient]
	route := s.route
	cc, err := s.c.attach(ctx, session, outputClientFlags, func(ev OutputEvent) {
		route(session, self.Load(), ev)
	})
	if err != nil {
		return nil, err
	}
	self.Store(cc)
	// Its name, for resume: asked now, before it carries any output.
	if out, err := cc.run(ctx, []string{"display-message", "-p", "#{client_name}"}); err == nil && len(out) == 1 {
		cc.name = out[0]
	}
	s.mu.Lock()
	s.clients[session] = cc
	s.flows[cc] = map[string]*paneFlow{}
	s.mu.Unlock()
	go s.ended(session, cc)
	return cc, nil
}

// commandOutput takes an event of the command client. That client carries
// the output of the panes of its own session until each first writes, and
// then mutes the pane, and re-arms it after a while (see rearmFirst): so
// what a pane nobody streams writes first after each re-arm is known, and
// when, from the moment tmcp attached — which is what tells a wait that
// begins on such a pane whether a line came after the call, when the
// screen alone cannot (it shows the line, not when it came). It runs on
// the client's reader.
func (s *streamSet) commandOutput(cc *controlClient, ev OutputEvent) {
	if ev.Layout || cc == nil {
		return
	}
	s.mu.Lock()
	if s.flows[cc] == nil {
		// Its reader is the only caller, so the client ends after this.
		s.flows[cc] = map[string]*paneFlow{}
		go func() {
			<-cc.done
			s.mu.Lock()
			delete(s.flows, cc)
			s.mu.Unlock()
		}()
	}
	if ev.Continued {
		s.continued(cc, ev.Pane)
		s.mu.Unlock()
		return
	}
	f := s.flow(cc, ev.Pane)
	if f.muted {
		s.mu.Unlock()
		return
	}
	// A pause by tmux (the client fell behind) is a mute all the same,
	// with nothing to keep: it is re-armed as one.
	at := time.Now().Add(-ev.Age)
	s.mute(cc, ev.Pane, at)
	_, watched := s.watchers[ev.Pane]
	first := s.onUnwatched
	s.mu.Unlock()
	if !watched && first != nil && len(ev.Data) > 0 {
		first(ev.Pane, append([]byte(nil), ev.Data...), at)
	}
}

// deliver routes one event from an output client. It runs on the client's
// reader, so what it asks of tmux is posted, never awaited.
func (s *streamSet) deliver(session string, cc *controlClient, ev OutputEvent) {
	if ev.Layout {
		s.mu.Lock()
		fn := s.onLayout
		s.mu.Unlock()
		if fn != nil {
			fn()
		}
		return
	}
	s.mu.Lock()
	if ev.Continued {
		s.continued(cc, ev.Pane)
		s.mu.Unlock()
		return
	}
	w := s.watchers[ev.Pane]
	if w != nil && w.client != nil && cc != nil && w.client != cc {
		// Not the client this pane is streamed through.
		s.mu.Unlock()
		return
	}
	if w == nil || w.session != session {
		var first func(string, []byte, time.Time)
		at := time.Now().Add(-ev.Age)
		if f := s.flow(cc, ev.Pane); f != nil && !f.muted {
			// Posted under s.mu, so a watch that resumes the pane after
			// this (under s.mu too) follows the mute.
			s.mute(cc, ev.Pane, at)
			first = s.onUnwatched
		}
		s.mu.Unlock()
		if first != nil && len(ev.Data) > 0 && !ev.Paused {
			first(ev.Pane, append([]byte(nil), ev.Data...), at)
		}
		return
	}
	own := ev.Paused && s.ownPause(cc, w)
	s.mu.Unlock()
	if own {
		return
	}
	w.fn(ev)
	if ev.Paused {
		s.mu.Lock()
		if s.watchers[ev.Pane] == w && !w.held {
			// Not once unwatched or held: the pane stays paused.
			s.continuePane(cc, ev.Pane, true)
		}
		s.mu.Unlock()
	}
}

// ownPause reports whether a %pause of w's pane read now on cc is no loss
// of the watcher's: one tmcp asked for (a hold), or one read before the
// continue that began the stream (or ended its hold), or before the
// stream began. s.mu is held.
func (s *streamSet) ownPause(cc *controlClient, w *watcher) bool {
	if w.held || w.client == nil {
		return true
	}
	f := s.flow(cc, w.pane)
	return f == nil || f.continued < w.liveFrom
}

// ended waits for an output client to go away and ends its streams.
func (s *streamSet) ended(session string, cc *controlClient) {
	<-cc.done
	s.mu.Lock()
	if s.clients[session] == cc {
		delete(s.clients, session)
	}
	delete(s.flows, cc)
	var gone []*watcher
	for pane, w := range s.watchers {
		if w.client == cc {
			delete(s.watchers, pane)
			gone = append(gone, w)
		}
	}
	s.mu.Unlock()
	// Only a transport can break under a live server; a local client
	// that vanishes went with its server, as before.
	lost, why := cc.lost()
	lost = lost && cc.remote
	for _, w := range gone {
		w.fn(OutputEvent{Pane: w.pane, Ended: true, Lost: lost, Reason: why})
	}
}

// unwatch stops a pane's stream: the pane is muted, and its session's
// client stays attached, so the next watch in that session costs a
// command, not a new tmux process.
func (s *streamSet) unwatch(pane string, w *watcher) {
	s.mu.Lock()
	if s.watchers[pane] != w {
		s.mu.Unlock()
		return
	}
	delete(s.watchers, pane)
	if w.client != nil {
		s.mute(w.client, pane, time.Now())
	}
	s.mu.Unlock()
}

// all returns the output clients.
func (s *streamSet) all() []*controlClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	clients := make([]*controlClient, 0, len(s.clients))
	for _, cc := range s.clients {
		clients = append(clients, cc)
	}
	return clients
}

// sessions returns the session ids the output clients are attached to.
func (s *streamSet) sessions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, cc := range s.clients {
		if cc.alive() {
			ids = append(ids, id)
		}
	}
	return ids
}

// closeAll forgets every output client and returns them for closing.
func (s *streamSet) closeAll() []*controlClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []*controlClient
	for id, cc := range s.clients {
		all = append(all, cc)
		delete(s.clients, id)
	}
	return all
}
