package main

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxserver"
)

const (
	// panesPerWindow panes share a window: one made by create_window and
	// the rest split from it.
	panesPerWindow = 4
	// floodSession holds the flooding pane and its quiet neighbour.
	floodSession = "flood"
	// floodHead is how long the flood runs before anything watches it.
	floodHead = 500 * time.Millisecond
	// floodCommand floods its pane for as long as the soak runs.
	floodCommand = "while :; do yes flood | head -c 2000000000; done"
	// hangGrace is how long past its bound a call is waited for before it
	// is abandoned as hung.
	hangGrace = 30 * time.Second
	// stopLimit bounds how long the workers may take to finish their
	// last calls once the soak's time is up.
	stopLimit = 2*time.Minute + hangGrace
	// teardownLimit bounds the teardown after a Ctrl-C.
	teardownLimit = 30 * time.Second
	// disruptionsLimit times the duration bounds how long the calls go on
	// waiting for the planned disruptions to be over.
	disruptionsLimit = 5
	// fillSlots is how many panes fill their streams at once: a hundred
	// at once are more output than tmux passes on within a run's wait.
	fillSlots = 4
	// recentJobs is how many of the workers' detached jobs are kept, to
	// be asked after tmcp restarts.
	recentJobs = 8
	// sampleEvery is how often memory, goroutines and open files are sampled.
	sampleEvery = time.Second
	// progressEvery is how often progress is logged.
	progressEvery = 10 * time.Second
)

// config is what a soak does and how strictly it judges.
type config struct {
	Duration  time.Duration // how long the calls go on
	Panes     int           // panes driven at once, besides the flooding one
	Seed      int64         // for the random choices; 0: from the clock
	Flood     bool          // a pane floods output, and is waited on, the whole time
	KillEvery time.Duration // a pane is killed under a call this often; 0: never
	StopFor   time.Duration // how long the tmux server is stopped, midway; 0: not at all
	// TmuxRestarts and TmcpRestarts are how many times the tmux server is
	// killed and started again on its socket, and tmcp closed and started
	// again on the same server; with the stop they are spaced evenly over
	// the middle half of the soak (see plan).
	TmuxRestarts int
	TmcpRestarts int
	// JobsSurviveRestart says tmcp keeps its jobs across its restart:
	// get_job must then know every job started before one and tell its
	// output. Otherwise what get_job says of them is only reported.
	JobsSurviveRestart bool
	Slack              time.Duration // margin on every bound
	Failures           io.Writer     // if set, told every failure as it comes
	Grace              time.Duration // after the resume, calls may still fail
	Settle             time.Duration // at most this long for goroutines and processes to settle
	RSSFactor          float64       // last-quarter RSS may be this many times the first quarter's; 0: not judged
	RSSSlack           int64         // plus this many bytes
	// LiveFactor and LiveSlack bound the live heap (after a collection)
	// at the end against the live heap after the first quarter.
	LiveFactor float64
	LiveSlack  int64
	// GoroutineFactor and GoroutineSlack bound the goroutines at the end
	// against their level once warmed up (see levelOf); FilesFactor and
	// FilesSlack the open files likewise. A factor of 0: not judged.
	GoroutineFactor float64
	GoroutineSlack  int
	FilesFactor     float64
	FilesSlack      int
	Log             io.Writer // progress; nil for none

	// SerialStart starts the panes' streams one at a time, not all at
	// once as the workers would: a way to look past faults of concurrent
	// first watches.
	SerialStart bool
	// Neighbour gives the flooding pane a quiet neighbour in its session,
	// waited on first and now and then.
	Neighbour bool
	// MemProfile, if set, is where a heap profile is written once the
	// calls are over (before tmcp is closed); another is written after
	// the first quarter, to the same name with ".first" added.
	MemProfile string
}

func defaultConfig() config {
	return config{Duration: 60 * time.Second, Panes: 32, Flood: true, Neighbour: true, KillEvery: 4 * time.Second, StopFor: 3 * time.Second,
		TmuxRestarts: 1, TmcpRestarts: 1,
		Slack: 3 * time.Second, Grace: 2 * time.Second, Settle: 15 * time.Second, RSSFactor: 1.5, RSSSlack: 32 << 20,
		LiveFactor: 1.1, LiveSlack: 8 << 20, GoroutineFactor: 1.25, GoroutineSlack: 50, FilesFactor: 1.25, FilesSlack: 16}
}

// soak is one run: the private server, tmcp in process, the client, and
// the goroutines driving them.
type soak struct {
	cfg      config
	srv      *tmuxserver.Server
	c        *caller
	st       *stats
	stop     *stopWindow
	restarts *restarts
	kills    killReport

	disrupt sync.Mutex // one disruption (a kill, the stop, a restart) at a time
	// gate holds the workers and the flood back while a restart makes
	// their panes, or tmcp, again.
	gate gate
	// fills bounds the panes filling their streams at once.
	fills chan struct{}
	// restartingTmux is set while the tmux server is killed and started
	// again: its absence then is no crash.
	restartingTmux atomic.Bool
	stopping       chan struct{}
	stopped        atomic.Bool
	intr           atomic.Bool
	serverGone     atomic.Bool
	wg             sync.WaitGroup
	workers        []*worker
	floodPane      string
	probePane      string // probed while tmux is stopped
	neighbour      string // a quiet pane beside the flooding one
	jobsPane       string // runs the jobs asked after tmcp restarts
	begin          time.Time
	stopRep        stopReport

	mu      sync.Mutex
	tmcp    *instance // the tmcp running now
	closed  bool      // the last tmcp is closed: a restart must not start one
	jobs    []jobCheck
	jobsSeq int
	// disrupting is set while planned disruptions are still to come;
	// disruptionsOver is when the last was over.
	disrupting      bool
	disruptionsOver time.Time
}

func (s *soak) running(ctx context.Context) bool {
	if ctx.Err() != nil {
		s.intr.Store(true)
		return false
	}
	return !s.stopped.Load()
}

func (s *soak) interrupted() bool { return s.intr.Load() }

// checkServer ends the soak early if the tmux server process is gone
// other than by a restart of the soak's: it crashed.
func (s *soak) checkServer() {
	if s.restartingTmux.Load() || s.srv.Alive() || s.serverGone.Swap(true) {
		return
	}
	s.st.fail("tmux crashed", "the tmux server (pid %d) exited at about t%+.1fs though nothing killed it: it crashed (see dmesg)",
		s.srv.PID(), time.Since(epoch()).Seconds())
	s.stopped.Store(true)
}

// sleep sleeps for d, or less if the soak ends or ctx is done.
func (s *soak) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// recoverPanic turns a panic in a soak goroutine into a failure, so the
// deferred teardown still runs.
func (s *soak) recoverPanic(who string) {
	if p := recover(); p != nil {
		buf := make([]byte, 16<<10)
		buf = buf[:runtime.Stack(buf, false)]
		s.st.fail("panic", "%s: %v\n%s", who, p, buf)
	}
}

func (s *soak) logf(format string, args ...any) {
	if s.cfg.Log != nil {
		fmt.Fprintf(s.cfg.Log, "soak: "+format+"\n", args...)
	}
}

// run soaks tmcp as cfg says and returns the summary. An error means the
// soak could not be set up; failures found while soaking are in the summary.
func run(ctx context.Context, cfg config) (*summary, error) {
	if cfg.Seed == 0 {
		cfg.Seed = time.Now().UnixNano()
	}
	start := time.Now()
	soakEpoch.Store(&start)
	st := newStats()
	st.all = cfg.Failures
	s := &soak{cfg: cfg, st: st, stop: &stopWindow{grace: cfg.Grace}, restarts: &restarts{grace: cfg.Grace},
		fills: make(chan struct{}, fillSlots), stopping: make(chan struct{})}
	sum := &summary{cfg: cfg, st: st, kills: &s.kills}

	// After a Ctrl-C the teardown must end; if it does not, the server is
	// removed anyway and the process exits.
	var srvRef atomic.Pointer[tmuxserver.Server]
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-finished:
			return
		case <-ctx.Done():
		}
		select {
		case <-finished:
		case <-time.After(teardownLimit):
			buf := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "soak: teardown still running %v after the interrupt; removing the server and exiting\n%s\n",
				teardownLimit, buf[:runtime.Stack(buf, true)])
			srvRef.Load().Close()
			os.Exit(2)
		}
	}()
	sum.goroutinesStart = runtime.NumGoroutine()

	srv, err := startServer(ctx)
	if err != nil {
		return nil, fmt.Errorf("starting the private tmux server: %w", err)
	}
	srvRef.Store(srv)
	defer srv.Close()
	s.srv = srv
	defer setEnv(map[string]string{"TMUX": "", "TMUX_PANE": "", "TMUX_TMPDIR": srv.Dir})()

	in, err := startTMCP(ctx, srv.Socket)
	if err != nil {
		return nil, err
	}
	s.tmcp = in
	closeAll := s.closeTMCP
	defer closeAll()
	sum.tmuxVersion = in.tc.Version()
	s.c = &caller{st: st, slack: cfg.Slack, hangGrace: hangGrace, observe: s.restarts.observe}
	s.c.cs.Store(in.cs)

	// From here on a failure goes in the summary, which is always given.
	setupStart := time.Now()
	ready := s.setup(ctx, cfg.Seed)
	sum.panesMade = time.Since(setupStart)
	if ready == nil {
		s.logf("%d panes and a flooding pane on %s, made in %.1fs; warming up", len(s.workers), srv.Socket, sum.panesMade.Seconds())
		s.warmUp(ctx)
		if cfg.Flood {
			ready = s.startFlood(ctx)
		}
		sum.warmUp = time.Since(setupStart) - sum.panesMade
	}
	if ready != nil || s.stopped.Load() {
		if s.checkServer(); ready != nil && !s.serverGone.Load() {
			st.fail("setup", "%v", ready)
		}
		sum.early = true
		closeAll()
		sum.goroutinesClosed, sum.procsClosed, _ = settle(cfg.Settle, sum.goroutinesStart, 0)
		return sum, nil
	}

	// The baseline: tmcp warmed up, every pane streamed once.
	sum.goroutinesBefore, sum.stacksBefore = settledGoroutines()
	sum.procsBefore, _ = children()

	samples := &sampler{}
	stopSampling := samples.start(s)
	s.begin = time.Now()
	soakEpoch.Store(&s.begin)
	rng := rand.New(rand.NewSource(cfg.Seed))
	for _, w := range s.workers {
		s.wg.Add(1)
		go w.loop(ctx)
	}
	if cfg.Flood {
		s.wg.Add(1)
		go s.flood(ctx, rand.New(rand.NewSource(rng.Int63())))
	}
	if cfg.KillEvery > 0 {
		s.wg.Add(1)
		go s.killer(ctx, rand.New(rand.NewSource(rng.Int63())))
	}
	if events := plan(cfg.Duration, cfg.TmuxRestarts, cfg.TmcpRestarts, cfg.StopFor > 0); len(events) > 0 {
		s.disrupting = true
		s.wg.Add(1)
		go s.disrupter(ctx, events)
	}
	firstQuarter := time.After(cfg.Duration / 4)
wait:
	for {
		select {
		case <-firstQuarter:
			sum.liveFirst = liveHeap()
			if cfg.MemProfile != "" {
				if err := writeHeapProfile(cfg.MemProfile + ".first"); err != nil {
					s.logf("writing the heap profile: %v", err)
				}
			}
		case <-ctx.Done():
			s.intr.Store(true)
			break wait
		case <-time.After(100 * time.Millisecond):
			if s.stopped.Load() || s.callsOver(time.Now()) {
				break wait
			}
		}
	}
	sum.callsEnd = time.Since(s.begin)
	s.stopped.Store(true)
	close(s.stopping)
	s.logf("time is up; waiting for the calls in flight")
	if !waitGroup(&s.wg, stopLimit) {
		buf := make([]byte, 1<<20)
		st.fail("hang", "the soak's goroutines did not finish their calls within %v of the end:\n%s", stopLimit, buf[:runtime.Stack(buf, true)])
	}
	sum.elapsed = time.Since(s.begin)
	sum.samples = stopSampling()
	sum.liveLast = liveHeap()
	if cfg.MemProfile != "" {
		if err := writeHeapProfile(cfg.MemProfile); err != nil {
			s.logf("writing the heap profile: %v", err)
		}
	}
	sum.stop = s.stopRep
	sum.restarts = s.restarts.done()
	sum.warmEnd, sum.tailFrom = cfg.Duration/4, s.tailFrom()
	sum.interrupted = s.interrupted()
	sum.early = sum.elapsed < cfg.Duration

	if !sum.interrupted && cfg.Flood {
		// Quiet the flood, so what is left to settle is tmcp's own.
		s.c.call(ctx, "send_keys", s.floodPane, map[string]any{"paneId": s.floodPane, "keys": "C-c", "enter": false}, s.c.nonWait())
	}
	if !sum.interrupted {
		s.logf("settling")
		sum.goroutinesAfter, sum.procsAfter, sum.settleTook = settle(cfg.Settle, sum.goroutinesBefore, sum.procsBefore.Tmux)
		sum.stacksAfter = goroutineStacks()
	}

	// Closing tmcp must leave nothing behind: no goroutine, no process.
	closeAll()
	sum.goroutinesClosed, sum.procsClosed, _ = settle(cfg.Settle, sum.goroutinesStart, 0)
	sum.stacksClosed = goroutineStacks()
	return sum, nil
}

// callsOver reports whether the soak's calls are over at now: its
// duration is up, its disruptions are over, and its tail has lasted a
// quarter of the duration, so that the end shows tmcp settled after them
// all. A disrupter stuck far past its time ends the calls anyway (its
// goroutine is then reported as hung).
func (s *soak) callsOver(now time.Time) bool {
	s.mu.Lock()
	disrupting := s.disrupting
	s.mu.Unlock()
	if disrupting {
		return now.After(s.begin.Add(disruptionsLimit * s.cfg.Duration))
	}
	return !now.Before(s.begin.Add(s.tailFrom() + s.cfg.Duration/4))
}

// tailFrom is when, since the calls began, the end that is judged begins:
// three quarters in, or once the disruptions are over if that is later.
func (s *soak) tailFrom() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	tail := 3 * s.cfg.Duration / 4
	if !s.disruptionsOver.IsZero() {
		tail = max(tail, s.disruptionsOver.Sub(s.begin))
	}
	return tail
}

// instance returns the tmcp running now.
func (s *soak) instance() *instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tmcp
}

// closeTMCP closes the tmcp running now, for good.
func (s *soak) closeTMCP() {
	s.mu.Lock()
	in := s.tmcp
	s.closed = true
	s.mu.Unlock()
	in.close()
}

// writeHeapProfile writes the live heap, after a collection, to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// setEnv sets (or, for "", unsets) environment variables for tmcp, which
// reads TMUX, TMUX_PANE and TMUX_TMPDIR, and returns a func restoring them.
func setEnv(vars map[string]string) func() {
	old := map[string]*string{}
	for k, v := range vars {
		if prev, ok := os.LookupEnv(k); ok {
			old[k] = &prev
		} else {
			old[k] = nil
		}
		if v == "" {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, v)
		}
	}
	return func() {
		for k, v := range old {
			if v == nil {
				os.Unsetenv(k)
			} else {
				os.Setenv(k, *v)
			}
		}
	}
}

// panes are the panes a soak drives, made by makePanes.
type panes struct {
	probe, jobs      string // the session's first pane; a pane of its own for jobs
	workers          []string
	flood, neighbour string
}

// setup makes the panes and a worker for each.
func (s *soak) setup(ctx context.Context, seed int64) error {
	p, err := s.makePanes(ctx)
	if err != nil {
		return err
	}
	for i, pane := range p.workers {
		s.workers = append(s.workers, &worker{s: s, idx: i, pane: pane, needFill: true,
			rng: rand.New(rand.NewSource(seed + int64(i) + 1)), victim: make(chan *victim, 1)})
	}
	s.usePanes(p)
	return nil
}

// usePanes makes p the panes of the soak but for the workers'.
func (s *soak) usePanes(p panes) {
	s.probePane, s.jobsPane, s.floodPane, s.neighbour = p.probe, p.jobs, p.flood, p.neighbour
}

// makePanes makes the panes in the server's session: the workers' with
// create_window and split_window, panesPerWindow to a window, and one for
// jobs in a window of its own; the flooding pane and its neighbour in a
// session of their own. The session's first pane is the probe.
func (s *soak) makePanes(ctx context.Context) (panes, error) {
	var p panes
	c := s.c
	r := c.call(ctx, "list_panes", "", map[string]any{"sessionName": sessionName}, c.nonWait())
	listed, _ := r.Fields["panes"].([]any)
	if !r.ok() || len(listed) != 1 {
		return p, fmt.Errorf("list_panes of the new session: %s %v", r.Err, r.Fields)
	}
	// The session's first pane is left alone until the stop, when it is
	// probed: its stream then starts while tmux is stopped.
	p.probe, _ = listed[0].(map[string]any)["paneId"].(string)
	var first, second string
	for i := 0; i < s.cfg.Panes; i++ {
		var r reply
		switch i % panesPerWindow {
		case 0:
			r = c.call(ctx, "create_window", "", map[string]any{"sessionName": sessionName, "command": "sh"}, c.nonWait())
			first = r.str("paneId")
		case 1:
			r = c.call(ctx, "split_window", first, map[string]any{"paneId": first, "direction": "right", "command": "sh"}, c.nonWait())
			second = r.str("paneId")
		case 2:
			r = c.call(ctx, "split_window", first, map[string]any{"paneId": first, "direction": "below", "command": "sh"}, c.nonWait())
		default:
			r = c.call(ctx, "split_window", second, map[string]any{"paneId": second, "direction": "below", "command": "sh"}, c.nonWait())
		}
		if !r.ok() || r.str("paneId") == "" {
			return p, fmt.Errorf("making pane %d: %s", i, r.Err)
		}
		p.workers = append(p.workers, r.str("paneId"))
	}
	r = c.call(ctx, "create_window", "", map[string]any{"sessionName": sessionName, "command": "sh"}, c.nonWait())
	if !r.ok() || r.str("paneId") == "" {
		return p, fmt.Errorf("making the pane for jobs: %s", r.Err)
	}
	p.jobs = r.str("paneId")
	if !s.cfg.Flood {
		return p, nil
	}
	r = c.call(ctx, "create_session", "", map[string]any{"name": floodSession, "command": "sh", "width": serverWidth, "height": serverHeight}, c.nonWait())
	if !r.ok() || r.str("paneId") == "" {
		return p, fmt.Errorf("making the flood's session: %s", r.Err)
	}
	p.flood = r.str("paneId")
	if s.cfg.Neighbour {
		r = c.call(ctx, "split_window", p.flood, map[string]any{"paneId": p.flood, "direction": "right", "command": "sh"}, c.nonWait())
		if !r.ok() || r.str("paneId") == "" {
			return p, fmt.Errorf("making the flood's neighbour: %s", r.Err)
		}
		p.neighbour = r.str("paneId")
	}
	return p, nil
}

// startFlood starts the flood, once the panes are warmed up (filling
// their streams is many times slower while a pane floods), and waits on
// it: first, if there is one, on its quiet neighbour, so that tmcp starts
// streaming the flood's session while the flood runs, as it does for an
// agent waiting on a quiet pane beside a busy one.
func (s *soak) startFlood(ctx context.Context) error {
	c := s.c
	r := c.call(ctx, "send_keys", s.floodPane, map[string]any{"paneId": s.floodPane, "keys": floodCommand, "literal": true}, c.nonWait())
	if !r.ok() {
		return fmt.Errorf("starting the flood: %s", r.Err)
	}
	s.sleep(ctx, floodHead)
	if s.neighbour != "" {
		r = c.call(ctx, "wait_for_text", s.neighbour, map[string]any{"paneId": s.neighbour, "patterns": []string{"never-beside-the-flood"}, "timeoutSeconds": 1}, c.waitBound(1))
		if !r.ok() || r.str("outcome") != "timeout" {
			s.st.fail("wrong", "%s: a wait on the flood's quiet neighbour ended %s %s, want timeout", r.describe(), outcome(r), r.Err)
		}
	}
	r = c.call(ctx, "wait_for_text", s.floodPane, map[string]any{"paneId": s.floodPane, "patterns": []string{"flood"}, "timeoutSeconds": 5}, c.waitBound(5))
	if !r.ok() || r.str("outcome") != "matched" {
		s.st.fail("wrong", "%s: the flood was not seen: %s %s", r.describe(), outcome(r), r.Err)
	}
	return nil
}

// warmUp has every pane streamed, filled and run once, so the baseline
// counts what tmcp keeps while it works. It is done again after each
// restart, the flood quiet, as at first: filling is many times slower
// while a pane floods.
func (s *soak) warmUp(ctx context.Context) {
	if s.cfg.SerialStart {
		for _, w := range s.workers {
			for try := 0; try < 3 && !w.synced; try++ {
				w.resync(ctx)
			}
		}
	}
	var wg sync.WaitGroup
	for _, w := range s.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.recoverPanic(fmt.Sprintf("warm-up of worker %d", w.idx))
			for try := 0; try < 10 && !w.ready(); try++ {
				if w.synced && w.needFill {
					w.fill(ctx, true)
				} else {
					w.step(ctx)
				}
			}
			w.echo(ctx)
			w.since(ctx)
		}()
	}
	wg.Wait()
}

// waitGroup waits for wg for at most d, and reports whether it finished.
func waitGroup(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// liveHeap returns the bytes of live heap objects, after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// settledGoroutines returns the goroutine count at rest: the least of a
// few samples, and the stacks then.
func settledGoroutines() (int, map[string]int) {
	least := runtime.NumGoroutine()
	for i := 0; i < 10; i++ {
		time.Sleep(100 * time.Millisecond)
		least = min(least, runtime.NumGoroutine())
	}
	return least, goroutineStacks()
}

// settle waits up to d for the goroutines to come down to at most
// goroutines and the tmux child processes to at most procs, and returns
// the counts it ended with and how long that took.
func settle(d time.Duration, goroutines, procs int) (int, childProcs, time.Duration) {
	start := time.Now()
	for {
		g := runtime.NumGoroutine()
		p, _ := children()
		if g <= goroutines && p.Tmux <= procs && p.Zombies == 0 || time.Since(start) > d {
			return g, p, time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sample is one reading of memory, goroutines and open files.
type sample struct {
	at         time.Duration // since the soak's calls began
	rss        int64
	heap       int64 // bytes in in-use heap spans
	goroutines int
	files      int // open file descriptors
}

// sampler reads memory, goroutines and open files every sampleEvery and
// logs progress.
type sampler struct {
	mu      sync.Mutex
	samples []sample
}

func (sm *sampler) start(s *soak) (stop func() []sample) {
	quit := make(chan struct{})
	done := make(chan struct{})
	begin := time.Now()
	take := func() sample {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return sample{at: time.Since(begin), rss: rssBytes(), heap: int64(m.HeapInuse), goroutines: runtime.NumGoroutine(), files: openFiles()}
	}
	go func() {
		defer close(done)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		lastLog := time.Now()
		for {
			x := take()
			s.checkServer()
			sm.mu.Lock()
			sm.samples = append(sm.samples, x)
			sm.mu.Unlock()
			if time.Since(lastLog) >= progressEvery {
				lastLog = time.Now()
				calls, failures := s.st.totals()
				s.logf("t=%3.0fs calls=%d failures=%d rss=%s heap=%s goroutines=%d files=%d", x.at.Seconds(), calls, failures, mib(x.rss), mib(x.heap), x.goroutines, x.files)
			}
			select {
			case <-t.C:
			case <-quit:
				return
			}
		}
	}()
	return func() []sample {
		close(quit)
		<-done
		sm.mu.Lock()
		defer sm.mu.Unlock()
		return append(sm.samples, take())
	}
}
