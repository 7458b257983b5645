// Command soak runs tmcp in process against a private tmux server for a
// while, under load and faults, and checks that it holds up: 32 panes
// driven at once with run_command, wait_for_text and capture_since, a pane
// flooding output, panes killed under calls in flight and new ones made
// for them, and, spaced over the middle half of the run, the tmux server
// stopped for a few seconds, killed and started again on its socket, and
// tmcp closed and started again on the same server. After each restart
// the panes are set up again (at 100 panes that takes about 35 s here),
// and the calls go on past -duration if need be, until a quarter of it has
// passed since the last disruption: the end shows tmcp settled after them.
//
// Every call must answer within its bound, correctly or with a well-named
// error; calls in flight when tmux is killed must end promptly, and after
// it the same tmcp must serve the new server's panes. After tmcp restarts,
// get_job is asked about the jobs started before; with
// -jobs-survive-restart it must still know them. No goroutine, process or
// memory may leak: RSS and the live heap, goroutines and open files at the
// end are judged against their level once tmcp warmed up. It prints a
// summary and exits 1 on failure.
//
// Usage:
//
//	go run ./soak [-duration 60s] [-panes 32] [-tmux-restarts 1] [-tmcp-restarts 1] [-seed N]
//
// The endurance run of issue 15 is
//
//	go run ./soak -duration 30m -panes 100 -tmux-restarts 2
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func main() {
	cfg := defaultConfig()
	flag.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long the calls go on")
	flag.IntVar(&cfg.Panes, "panes", cfg.Panes, "panes driven at once, besides the flooding one")
	flag.Int64Var(&cfg.Seed, "seed", 0, "seed for the random choices (0: from the clock)")
	flag.DurationVar(&cfg.KillEvery, "kill-every", cfg.KillEvery, "how often a pane is killed under a call in flight (0: never)")
	flag.DurationVar(&cfg.StopFor, "stop", cfg.StopFor, "how long the tmux server is stopped (SIGSTOP), midway (0: not at all)")
	flag.IntVar(&cfg.TmuxRestarts, "tmux-restarts", cfg.TmuxRestarts, "how many times the tmux server is killed and started again on its socket under the calls")
	flag.IntVar(&cfg.TmcpRestarts, "tmcp-restarts", cfg.TmcpRestarts, "how many times tmcp is closed and started again on the same tmux server under the calls")
	flag.BoolVar(&cfg.JobsSurviveRestart, "jobs-survive-restart", cfg.JobsSurviveRestart, "require get_job to know, after tmcp restarts, the jobs started before (otherwise its answers are only reported)")
	flag.BoolVar(&cfg.Flood, "flood", cfg.Flood, "flood one pane with output and wait on it the whole time")
	flag.DurationVar(&cfg.Slack, "slack", cfg.Slack, "margin on every bound")
	flag.BoolVar(&cfg.SerialStart, "serial-start", cfg.SerialStart, "start the panes' streams one at a time (looks past faults of concurrent first watches)")
	flag.BoolVar(&cfg.Neighbour, "neighbour", cfg.Neighbour, "give the flooding pane a quiet neighbour, waited on first and now and then")
	flag.StringVar(&cfg.MemProfile, "memprofile", "", "write a heap profile to this file once the calls are over, and to FILE.first after the first quarter")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (tmcp and its client share the process) to this file")
	quiet := flag.Bool("q", false, "no progress on stderr")
	failures := flag.String("failures", "", fmt.Sprintf("write every failure to this file as it comes (the summary shows the first %d)", maxFailuresKept))
	flag.Parse()
	if cfg.Panes < 1 || cfg.Duration <= 0 || cfg.KillEvery < 0 || cfg.StopFor < 0 || cfg.TmuxRestarts < 0 || cfg.TmcpRestarts < 0 {
		fmt.Fprintln(os.Stderr, "soak: -panes and -duration must be positive, -kill-every, -stop, -tmux-restarts and -tmcp-restarts not negative")
		os.Exit(2)
	}
	if !*quiet {
		cfg.Log = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *failures != "" {
		f, err := os.Create(*failures)
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak: failures:", err)
			os.Exit(2)
		}
		defer f.Close()
		cfg.Failures = f
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak: CPU profile:", err)
			os.Exit(2)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	sum, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	sum.print(os.Stdout)
	if !sum.passed() {
		pprof.StopCPUProfile() // os.Exit runs no deferred call
		os.Exit(1)
	}
}
