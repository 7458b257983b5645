package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// The test's soak is short and small, with the faults of the full one (one
// restart of tmux, one of tmcp): about a minute in all.
const (
	testDuration = 45 * time.Second
	testPanes    = 8
	// testLimit bounds the whole test, set-up and teardown included.
	testLimit = 5 * time.Minute
)

func TestSoakAnswersEveryCallInTimeAndLeaksNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak takes a while; skipped with -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed: run scripts/install-deps.sh")
	}
	cfg := defaultConfig()
	cfg.Duration, cfg.Panes = testDuration, testPanes
	// One restart of each: the tmcp started again must know the jobs of
	// the one before and tell their output.
	cfg.TmuxRestarts, cfg.TmcpRestarts, cfg.JobsSurviveRestart = 1, 1, true
	cfg.Log = logWriter{t}
	if tmuxtest.RaceEnabled {
		// The race detector slows tmcp several times over; the bounds
		// are margins on tmcp's own deadlines, so they widen with it.
		cfg.Slack *= 3
		cfg.Grace *= 3
		// Its shadow memory follows the highest heap ever touched and is
		// never given back, so RSS says nothing of leaks here: the live
		// heap is still judged, and scripts/test.sh runs the soak again
		// without the race detector, where RSS is judged too.
		cfg.RSSFactor = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), testLimit)
	defer cancel()
	sum, err := run(ctx, cfg)
	if err != nil {
		t.Fatalf("setting up the soak: %v", err)
	}
	var b strings.Builder
	sum.print(&b)
	if !sum.passed() {
		t.Fatalf("the soak failed:\n%s", b.String())
	}
	t.Logf("\n%s", b.String())
}

// logWriter sends the soak's progress to the test log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
