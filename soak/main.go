// Command soak runs tmcp in process against a private tmux server for a
// while, under load and faults, and checks that it holds up: 32 panes
// driven at once with run_command, wait_for_text and capture_since, a pane
// flooding output, panes killed under calls in flight, and the tmux server
// stopped for a few seconds midway. Every call must answer within its
// bound, correctly or with a well-named error; no goroutine, process or
// memory may leak. It prints a summary and exits 1 on failure.
//
// Usage:
//
//	go run ./soak [-duration 60s] [-panes 32] [-seed N]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	cfg := defaultConfig()
	flag.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long the calls go on")
	flag.IntVar(&cfg.Panes, "panes", cfg.Panes, "panes driven at once, besides the flooding one")
	flag.Int64Var(&cfg.Seed, "seed", 0, "seed for the random choices (0: from the clock)")
	flag.DurationVar(&cfg.KillEvery, "kill-every", cfg.KillEvery, "how often a pane is killed under a call in flight (0: never)")
	flag.DurationVar(&cfg.StopFor, "stop", cfg.StopFor, "how long the tmux server is stopped (SIGSTOP), midway (0: not at all)")
	flag.BoolVar(&cfg.Flood, "flood", cfg.Flood, "flood one pane with output and wait on it the whole time")
	flag.DurationVar(&cfg.Slack, "slack", cfg.Slack, "margin on every bound")
	flag.BoolVar(&cfg.SerialStart, "serial-start", cfg.SerialStart, "start the panes' streams one at a time (looks past faults of concurrent first watches)")
	flag.BoolVar(&cfg.Neighbour, "neighbour", cfg.Neighbour, "give the flooding pane a quiet neighbour, waited on first and now and then")
	flag.StringVar(&cfg.MemProfile, "memprofile", "", "write a heap profile to this file once the calls are over, and to FILE.first after the first quarter")
	quiet := flag.Bool("q", false, "no progress on stderr")
	flag.Parse()
	if cfg.Panes < 1 || cfg.Duration <= 0 || cfg.KillEvery < 0 || cfg.StopFor < 0 {
		fmt.Fprintln(os.Stderr, "soak: -panes and -duration must be positive, -kill-every and -stop not negative")
		os.Exit(2)
	}
	if !*quiet {
		cfg.Log = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	sum.print(os.Stdout)
	if !sum.passed() {
		os.Exit(1)
	}
}
