package wait

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tmcp/tmcp/internal/agents"
	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

const (
	// DefaultCeiling bounds every wait unless TMCP_WAIT_MAX_SECONDS says
	// otherwise; MinCeiling and MaxCeiling bound that setting. It sits
	// well under the 60 s after which many clients give up on a call (the
	// TypeScript SDK's request timeout, Codex's tool timeout), so a wait
	// answers before its client cancels it.
	DefaultCeiling = 45 * time.Second
	MinCeiling     = time.Second
	MaxCeiling     = time.Hour
	// progressEvery is how often a wait tells the client it is alive: often
	// enough for a client that resets a timeout of a few seconds on progress.
	progressEvery = time.Second
	// streamLinger keeps a pane's stream going after a wait or read, so a
	// cursor used again within that time continues exactly.
	streamLinger = 10 * time.Minute
)

// Service runs waits on the panes of one tmux server.
type Service struct {
	tc      *tmux.Client
	hub     *pane.Hub
	ceiling time.Duration
	jobs    *jobTable
	helpers *helperTable
	ends    *reportedEnds
	// waiting, when tests set it, is called with the pane of each text
	// wait once its start is taken and it waits for output: the moment
	// a test may make the pane do what the wait is for.
	waiting func(paneID string)
	// settled, when tests set it, is called with each pane of a wait
	// across panes whose own wait has ended, as the wait takes note of it.
	settled func(paneID string)

	keep *keeper // where jobs are kept for later tmcp processes; nil: nowhere

	profiles *agents.Set // the agent profiles (agents.go)

	holdAt string        // the step TMCP_TEST_HOLD names; "": none (exits.go)
	abort  chan struct{} // closed when tmcp, shutting down, gives up the typing in flight
	shutMu sync.Mutex
	shut   bool // shutting down: no run begins
	// typingJobs are the jobs whose lines tmcp is typing (exits.go).
	typingJobs map[*job]struct{}

	// Tapes of jobs' output (tape.go), unless TMCP_TAPES=off; their files
	// live in tapesDir, made at the first tape, beside the FIFO tapesAlive
	// holds open.
	noTapes    bool
	tapesOnce  sync.Once
	tapesDir   string
	tapesAlive *os.File
	tapesErr   error
	tapesMu    sync.Mutex
	tapes      map[string]*tape // open, by pane
	tapeCount  int              // tapes opened: names their files

	closeOnce sync.Once
}

// New returns a Service. ceiling bounds every wait.
func New(tc *tmux.Client, hub *pane.Hub, ceiling time.Duration) *Service {
	s := &Service{tc: tc, hub: hub, ceiling: ceiling, jobs: newJobTable(), helpers: newHelperTable(), ends: &reportedEnds{},
		holdAt: holdStep(), noTapes: os.Getenv(tapesEnv) == "off", tapes: map[string]*tape{}, abort: make(chan struct{}), typingJobs: map[*job]struct{}{},
		profiles: agents.BuiltIn()}
	if hub != nil { // a Service that only clamps timeouts needs none
		hub.OnKeys(s.keysSent)
	}
	return s
}

// Ceiling returns the bound on every wait.
func (s *Service) Ceiling() time.Duration { return s.ceiling }

// ParseCeiling reads TMCP_WAIT_MAX_SECONDS: empty gives DefaultCeiling;
// a value outside [MinCeiling, MaxCeiling] or not a number is an error.
func ParseCeiling(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return DefaultCeiling, nil
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(secs) {
		return 0, fmt.Errorf("TMCP_WAIT_MAX_SECONDS=%q is not a number of seconds", v)
	}
	if secs < MinCeiling.Seconds() || secs > MaxCeiling.Seconds() {
		return 0, fmt.Errorf("TMCP_WAIT_MAX_SECONDS=%q: must be within [%v, %v]", v, MinCeiling, MaxCeiling)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// Timeout is a wait's effective bound.
type Timeout struct {
	Duration time.Duration
	Clamped  bool // the request asked for more than the ceiling
}

// Seconds returns the bound in seconds.
func (t Timeout) Seconds() float64 { return t.Duration.Seconds() }

// Clamp turns a requested timeout in seconds (0 or less: def) into the
// effective one, never above the ceiling. It is reported clamped only
// when the request asked for more: a default above the ceiling is the
// server's own choice.
func (s *Service) Clamp(seconds float64, def time.Duration) Timeout {
	switch {
	case seconds > s.ceiling.Seconds():
		return Timeout{Duration: s.ceiling, Clamped: true}
	case seconds > 0:
		return Timeout{Duration: time.Duration(seconds * float64(time.Second))}
	}
	return Timeout{Duration: min(def, s.ceiling)}
}

// progress calls fn every progressEvery until stop is called.
func progress(fn func(elapsed time.Duration), start time.Time) (stop func()) {
	if fn == nil {
		return func() {}
	}
	t := time.NewTicker(progressEvery)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-t.C:
				fn(time.Since(start))
			case <-done:
				return
			}
		}
	}()
	return func() { t.Stop(); close(done) }
}

// Close ends every job's bookkeeping; the commands themselves go on in
// their panes. The runs being typed are first finished or aborted, so
// that no pane waits for more of them (settleTyping): Close takes up to
// finishWait and abortWait for it.
func (s *Service) Close() {
	s.closeOnce.Do(func() {
		s.settleTyping()
		if s.keep != nil {
			s.keep.close()
		}
		s.jobs.closeAll()
		s.closeTapes()
		s.removeTapeDir()
	})
}
