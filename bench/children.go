package main

import (
	"context"
	"fmt"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxserver"
)

// childSampleInterval is how often a childWatcher reads the process table.
// A tmux command process lives for milliseconds, several intervals.
const childSampleInterval = 250 * time.Microsecond

// countChildren runs n iterations while watching pid's children and
// returns how many new children appeared.
func countChildren(ctx context.Context, pid, n int, once func(context.Context) (time.Duration, error)) (int, error) {
	w, err := watchChildren(pid)
	if err != nil {
		return 0, err
	}
	_, err = sample(ctx, 0, n, once)
	seen := w.stop()
	return seen, err
}

// childWatcher counts the child processes of one process that appear while
// it watches, by reading /proc/PID/task/*/children every
// childSampleInterval. A child that started and was reaped between two
// samples would be missed, so the count is a lower bound; a loop of the
// floor's tmux processes, watched the same way, shows how close it gets.
type childWatcher struct {
	pid    int
	before map[int]bool // children already there when the watch began
	quit   chan struct{}
	result chan int
}

// watchChildren starts watching pid's children.
func watchChildren(pid int) (*childWatcher, error) {
	kids, err := tmuxserver.Children(pid)
	if err != nil {
		return nil, fmt.Errorf("reading the children of process %d: %w", pid, err)
	}
	w := &childWatcher{pid: pid, before: map[int]bool{}, quit: make(chan struct{}), result: make(chan int, 1)}
	for _, k := range kids {
		w.before[k] = true
	}
	go w.loop()
	return w, nil
}

func (w *childWatcher) loop() {
	seen := map[int]bool{}
	look := func() {
		kids, _ := tmuxserver.Children(w.pid) // a failed read is one missed sample
		for _, k := range kids {
			if !w.before[k] {
				seen[k] = true
			}
		}
	}
	tick := time.NewTicker(childSampleInterval)
	defer tick.Stop()
	for {
		look()
		select {
		case <-w.quit:
			look()
			w.result <- len(seen)
			return
		case <-tick.C:
		}
	}
}

// stop ends the watch and returns how many new children it saw.
func (w *childWatcher) stop() int {
	close(w.quit)
	return <-w.result
}
