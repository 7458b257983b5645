// Command bench measures tmcp beside the raw floor: the same tmux jobs done
// with bare tmux, over a control-mode client and as separate processes. It
// builds tmcp, starts a private tmux server, drives the binary over stdio as
// an MCP client would, and prints one table of medians, p90s and ratios,
// followed by how many tmux processes tmcp started per call in steady state
// and what an MCP ping (no tmux at all) costs, for reading the rows against.
//
// Usage (from the module root):
//
//	go run ./bench [-n N] [-short] [-json]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"
)

const (
	// defaultIterations and defaultStarts are the timed iterations of a call
	// row and of the start-up row; shortIterations and shortStarts are
	// -short's, for CI.
	defaultIterations = 200
	defaultStarts     = 20
	shortIterations   = 20
	shortStarts       = 5
	// callWarmups and startWarmups are untimed iterations run first.
	callWarmups  = 5
	startWarmups = 1
	// runTimeout bounds the whole benchmark, build included.
	runTimeout = 3 * time.Minute
)

// Row labels, in the order the table prints them.
const (
	rowList    = "list_sessions call"
	rowCapture = "capture_pane 80x24"
	rowStart   = "process start → tools/list (floor: one tmux list-sessions process)"
)

// config is the benchmark's command line.
type config struct {
	n, starts             int // timed iterations: per call row, and for start-up
	warmups, startWarmups int // untimed iterations first
	json                  bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	interrupted := ctx.Err() != nil
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil && interrupted:
		fmt.Fprintln(os.Stderr, "bench: interrupted; tmux server and files removed")
		os.Exit(130)
	case err != nil:
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{warmups: callWarmups, startWarmups: startWarmups}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.n, "n", defaultIterations, "timed iterations per call row")
	short := fs.Bool("short", false, fmt.Sprintf("quick run for CI: -n %d, %d start-ups", shortIterations, shortStarts))
	fs.BoolVar(&cfg.json, "json", false, "write the figures as JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg.starts = defaultStarts
	if *short {
		cfg.starts = shortStarts
		if !flagSet(fs, "n") {
			cfg.n = shortIterations
		}
	}
	if cfg.n < 1 {
		return cfg, fmt.Errorf("-n %d: need at least one iteration", cfg.n)
	}
	cfg.starts = min(cfg.starts, cfg.n)
	return cfg, nil
}

// flagSet reports whether the command line set the named flag.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// run measures and writes the report. Whatever happens, the private tmux
// server is killed and the temporary directory removed before it returns.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "tmcp-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel() // kills any child still running, before the removal

	bin, err := buildTmcp(ctx, dir)
	if err != nil {
		return err
	}
	srv, err := startServer(ctx, dir)
	defer srv.kill()
	if err != nil {
		return err
	}
	version, err := srv.version(ctx)
	if err != nil {
		return err
	}
	fl, err := measureFloor(ctx, srv, cfg)
	if err != nil {
		return err
	}
	tm, err := measureTmcp(ctx, bin, srv, cfg)
	if err != nil {
		return err
	}
	rep := newReport(cfg, version, fl, tm)
	if cfg.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return writeTable(stdout, rep)
}

// report is everything the benchmark prints, table or JSON.
type report struct {
	TmuxVersion  string       `json:"tmuxVersion"`
	Iterations   int          `json:"iterations"`
	Starts       int          `json:"startIterations"`
	Warmups      int          `json:"warmups"`
	StartWarmups int          `json:"startWarmups"`
	Rows         []row        `json:"rows"`
	Processes    processCount `json:"tmuxProcessesDuringListSessions"`
	// MCPPing is an MCP ping to the same tmcp: a round trip through the
	// SDK and stdio that reaches no tmux, for reading the rows against.
	MCPPing timing `json:"mcpPing"`
}

// timing is a median and p90 in milliseconds.
type timing struct {
	MedianMs float64 `json:"medianMs"`
	P90Ms    float64 `json:"p90Ms"`
}

// row is one measurement beside its floors. Times are milliseconds.
type row struct {
	Measurement          string   `json:"measurement"`
	Iterations           int      `json:"iterations"`
	TmcpMedianMs         float64  `json:"tmcpMedianMs"`
	TmcpP90Ms            float64  `json:"tmcpP90Ms"`
	ControlFloorMedianMs *float64 `json:"controlFloorMedianMs"` // null: no control-mode floor applies
	ProcessFloorMedianMs float64  `json:"processFloorMedianMs"`
	Ratio                float64  `json:"ratio"`        // tmcp median / floor median
	RatioAgainst         string   `json:"ratioAgainst"` // which floor: "control" or "process"
}

// processCount says how many tmux processes tmcp started while answering
// list_sessions in steady state (0 is right), and how well the watcher
// that counted them saw the floor's own processes. The watched calls are
// not the timed ones: sampling /proc slows each call a little.
type processCount struct {
	Calls                int     `json:"calls"`
	Started              int     `json:"started"`
	PerCall              float64 `json:"perCall"`
	WatcherCheckSeen     int     `json:"watcherCheckSeen"`
	WatcherCheckExpected int     `json:"watcherCheckExpected"`
}

func newReport(cfg config, version string, fl floor, tm tmcpResult) report {
	return report{
		TmuxVersion:  version,
		Iterations:   cfg.n,
		Starts:       cfg.starts,
		Warmups:      cfg.warmups,
		StartWarmups: cfg.startWarmups,
		Rows: []row{
			newRow(rowList, tm.list, &fl.listControl, fl.listProcess),
			newRow(rowCapture, tm.capture, &fl.captureControl, fl.captureProcess),
			newRow(rowStart, tm.start, nil, fl.listProcess),
		},
		Processes: processCount{
			Calls:                tm.list.n,
			Started:              tm.processesStarted,
			PerCall:              float64(tm.processesStarted) / float64(tm.list.n),
			WatcherCheckSeen:     fl.watcherSeen,
			WatcherCheckExpected: fl.listProcess.n,
		},
		MCPPing: timing{MedianMs: roundMs(tm.ping.median), P90Ms: roundMs(tm.ping.p90)},
	}
}

// newRow sets tmcp beside its floors; the ratio is against the control
// floor where there is one, else against the process floor.
func newRow(name string, tmcp summary, control *summary, process summary) row {
	r := row{
		Measurement:          name,
		Iterations:           tmcp.n,
		TmcpMedianMs:         roundMs(tmcp.median),
		TmcpP90Ms:            roundMs(tmcp.p90),
		ProcessFloorMedianMs: roundMs(process.median),
		RatioAgainst:         "process",
	}
	against := process.median
	if control != nil {
		c := roundMs(control.median)
		r.ControlFloorMedianMs, r.RatioAgainst = &c, "control"
		against = control.median
	}
	r.Ratio = math.Round(100*float64(tmcp.median)/float64(against)) / 100
	return r
}

// roundMs is d in milliseconds to the microsecond.
func roundMs(d time.Duration) float64 { return math.Round(1000*ms(d)) / 1000 }

// writeTable prints the report as an aligned table.
func writeTable(w io.Writer, rep report) error {
	fmt.Fprintf(w, "tmcp vs the raw tmux floor (%s; medians and p90 in ms; %d iterations after %d warm-ups, start row %d after %d)\n\n",
		rep.TmuxVersion, rep.Iterations, rep.Warmups, rep.Starts, rep.StartWarmups)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measurement\ttmcp median\ttmcp p90\tfloor control-mode median\tfloor process median\tratio")
	for _, r := range rep.Rows {
		control := "—"
		if r.ControlFloorMedianMs != nil {
			control = fmt.Sprintf("%.3f", *r.ControlFloorMedianMs)
		}
		fmt.Fprintf(tw, "%s\t%7.3f\t%7.3f\t%7s\t%7.3f\t%6.2f× %s\n", r.Measurement, r.TmcpMedianMs, r.TmcpP90Ms,
			control, r.ProcessFloorMedianMs, r.Ratio, r.RatioAgainst)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	p := rep.Processes
	_, err := fmt.Fprintf(w, "\ntmux processes tmcp started in steady state: %d over %d list_sessions calls (%.2f per call)\n"+
		"  (a second, untimed loop, watched by sampling tmcp's children every %v; the same watcher\n"+
		"  saw %d of the %d processes of a `tmux list-sessions` loop)\n"+
		"MCP ping to the same tmcp, reaching no tmux: median %.3f ms, p90 %.3f ms\n",
		p.Started, p.Calls, p.PerCall, childSampleInterval, p.WatcherCheckSeen, p.WatcherCheckExpected,
		rep.MCPPing.MedianMs, rep.MCPPing.P90Ms)
	return err
}
