// Command bench measures tmcp beside the raw floor: the same tmux jobs done
// with bare tmux, over a control-mode client and as separate processes. It
// builds tmcp, starts a private tmux server, drives the binary over stdio as
// an MCP client would, and prints one table: for each measurement tmcp's
// median and p90, the floor's median (the row's label says what the floor
// is), their ratio, and the target where there is one; then notes for
// reading the rows (what an MCP ping costs, how processes and commands were
// counted, the flood as a bare control client sees it). With -charts it
// also draws the latency distributions, the scale rows and the flood as
// SVG charts (BENCHMARKS.md shows those of benchmarks/).
//
// Usage (from the module root):
//
//	go run ./bench [-n N] [-short] [-json] [-flood-lines] [-charts DIR] [-only GROUPS]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
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
	// defaultMillions and shortMillions are the runs of the million-line
	// row; defaultFlood and shortFlood the bytes of the flood.
	defaultMillions = 3
	shortMillions   = 1
	defaultFlood    = 200_000_000
	shortFlood      = 20_000_000
	// callWarmups and startWarmups are untimed iterations run first.
	callWarmups  = 5
	startWarmups = 1
	// startTarget is the bound, in milliseconds, on the median time from
	// starting tmcp to its answer to tools/list.
	startTarget = 40
	// runTimeout bounds the whole benchmark, build included: a safety net
	// well above what a default run takes (under two minutes), room for
	// the -flood-lines flood.
	runTimeout = 15 * time.Minute
	// fillsTimeout bounds a -fills run: an output client per pane takes
	// minutes on a loaded machine.
	fillsTimeout = time.Hour
)

// Row labels, in the order the table prints them; each names its floor.
// The flood's rows name its size and kind (floodLabels).
const (
	rowListControl          = "list_sessions (floor: list-sessions, control client)"
	rowListProcess          = "list_sessions (floor: list-sessions process)"
	rowCaptureControl       = "capture_pane 80x24 (floor: capture-pane -p, control client)"
	rowCaptureProcess       = "capture_pane 80x24 (floor: capture-pane -p process)"
	rowStart                = "process start → tools/list (floor: list-sessions process)"
	rowProcsList            = "tmux processes per list_sessions call (floor: list-sessions processes)"
	rowRunTrue              = "run_command true (floor: send-keys + end mark in %output, control client)"
	rowRunMethod            = "run_command true (floor: tmcp's buffer method, bare control client)"
	rowRunSpaced            = "run_command true, 250 ms apart (floor: tmcp's buffer method, likewise)"
	rowRunSeq               = "run_command seq 1 10000 (floor: send-keys + end mark in %output)"
	rowProcsRun             = "tmux processes per run_command call (floor: the send-keys floor's)"
	rowReaction             = "wait_for_text reaction, write → reply (floor: write → %output)"
	rowMillion              = "wait_for_text after 1M lines, end → reply (floor: end → %output)"
	rowSinceQuiet           = "capture_since, quiet pane (floor: capture-pane -p, control client)"
	rowSince1000            = "capture_since, 1,000 new lines (floor: capture-pane -p, control client)"
	rowToolsReadonly        = "tools/list + instructions, readonly (no floor)"
	rowToolsMutating        = "tools/list + instructions, mutating, the default (no floor)"
	rowToolsDestructive     = "tools/list + instructions, destructive (no floor)"
	rowModelVisible         = "model-visible part of that, mutating (no floor)"
	rowWithoutOutputSchemas = "that list without its output schemas, mutating (no floor)"
	rowListHTTP             = "list_sessions over HTTP (floor: tmcp over stdio)"
	rowReactionHTTP         = "wait_for_text reaction over HTTP, write → reply (floor: tmcp over stdio)"
	rowManyHTTP             = "50 HTTP sessions waiting on one pane, write → each reply (floor: one HTTP session)"
	rowManyHTTPMemory       = "tmcp peak RSS after 50 HTTP sessions waited (floor: tmcp's before they opened)"
	rowListMany             = "list_panes over 1,000 panes (floor: list-panes -a process)"
	rowListManyFormat       = "list_panes over 1,000 panes (floor: list-panes -a -F the 14 fields tmcp asks for, process)"
	rowListManyCPU          = "tmcp CPU per list_panes call over 1,000 panes (no floor)"
	rowBusyCPU              = "tmcp CPU over those rounds (floor: the control clients' over theirs)"
	rowBusyMemory           = "tmcp peak RSS after those rounds (floor: tmcp's before them)"
)

// floodLabels are the labels of the flood's rows: tmcp's memory, how
// long the flood took to write with tmcp waiting on the pane, and with
// tmcp carrying its session but not watching it.
func floodLabels(cfg config) (memory, written, unwatched string) {
	flood := megabytes(cfg.floodBytes) + " flood of " + floodKind(cfg)
	return "tmcp peak RSS, " + flood + " (floor: bare control client's)",
		flood + " written, tmcp waiting (floor: nobody watching)",
		flood + " written, tmcp carrying the session, not watching the pane (floor: no tmcp)"
}

// floodServerLabel is the label of the row of tmux's own CPU time over
// the flood with tmcp carrying the session but not watching the pane.
func floodServerLabel(cfg config) string {
	return "tmux server CPU, " + megabytes(cfg.floodBytes) + " flood of " + floodKind(cfg) +
		", tmcp carrying the session, not watching the pane (floor: no tmcp)"
}

// config is the benchmark's command line.
type config struct {
	n, starts             int  // timed iterations: per call row, and for start-up
	warmups, startWarmups int  // untimed iterations first
	millions              int  // runs of the million-line row
	floodBytes            int  // bytes of the flood
	floodLines            bool // flood with short lines (yes), not one unbroken line
	fills, fillsLoad      int  // -fills: panes whose fills are compared, and busy processes beside them
	busySessions          int  // sessions of busy panes
	busyPanes             int  // busy panes in each
	json                  bool
	charts                string          // directory to write the SVG charts into; "": none
	only                  map[string]bool // the groups to measure, by name; nil: all
}

func main() {
	// A reader that stops early (`go run ./bench | head`) must not kill the
	// benchmark before it removes its tmux server: writes then just fail.
	signal.Ignore(syscall.SIGPIPE)
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
	cfg := config{warmups: callWarmups, startWarmups: startWarmups, millions: defaultMillions, floodBytes: defaultFlood,
		busySessions: defaultBusySessions, busyPanes: defaultBusyPanes}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.n, "n", defaultIterations, "timed iterations per call row")
	short := fs.Bool("short", false, fmt.Sprintf("quick run for CI: -n %d, %d start-ups, %d million-line run, a %s flood, %d×%d busy panes",
		shortIterations, shortStarts, shortMillions, megabytes(shortFlood), shortBusySessions, shortBusyPanes))
	fs.BoolVar(&cfg.json, "json", false, "write the figures as JSON instead of a table")
	fs.StringVar(&cfg.charts, "charts", "", "also write the charts ("+latencyChart+", "+scaleChart+", "+floodChart+") as SVG into `DIR`")
	fs.IntVar(&cfg.fills, "fills", 0, "instead of the table, compare with bare tmux clients how N panes' fills at once lose output, per way of carrying it")
	fs.IntVar(&cfg.fillsLoad, "fills-load", 2, "busy processes beside tmux during -fills")
	fs.BoolVar(&cfg.floodLines, "flood-lines", false, "flood with yes (2-byte lines) instead of one unbroken line of x; at 200 MB this takes minutes")
	names := groupNames()
	only := fs.String("only", "", "measure only these groups, comma-separated: "+strings.Join(names, ", "))
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if *only != "" {
		cfg.only = map[string]bool{}
		for _, name := range strings.Split(*only, ",") {
			if !slices.Contains(names, name) {
				return cfg, fmt.Errorf("-only: no group %q; the groups are %s", name, strings.Join(names, ", "))
			}
			cfg.only[name] = true
		}
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg.starts = defaultStarts
	if *short {
		cfg.starts = shortStarts
		cfg.millions = shortMillions
		cfg.floodBytes = shortFlood
		cfg.busySessions, cfg.busyPanes = shortBusySessions, shortBusyPanes
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
// A measurement that fails is reported in its rows and the others go on;
// run then returns an error, after the report.
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
	timeout := runTimeout
	if cfg.fills > 0 {
		timeout = fillsTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel() // kills any child still running, before the removal

	bin, err := buildTmcp(ctx, dir)
	if err != nil {
		return err
	}
	srv, err := startServer(ctx, dir)
	if err != nil {
		return err
	}
	defer srv.Close()
	if cfg.fills > 0 {
		return fills(ctx, srv, dir, cfg.fills, cfg.fillsLoad, stdout)
	}
	version, err := srv.version(ctx)
	if err != nil {
		return err
	}
	b := &bench{cfg: cfg, dir: dir, bin: bin, srv: srv, rows: map[string]row{}}
	if b.tmcp, err = startTmcp(ctx, newClient(), bin, srv); err != nil {
		return err
	}
	rows := b.measure(ctx)
	if err := b.tmcp.close(); err != nil {
		return err
	}
	rep := report{TmuxVersion: version, Iterations: cfg.n, Starts: cfg.starts, Warmups: cfg.warmups,
		StartWarmups: cfg.startWarmups, FloodBytes: cfg.floodBytes, FloodKind: floodKind(cfg),
		BusySessions: cfg.busySessions, BusyPanes: cfg.busyPanes, Rows: rows, Notes: b.notes}
	if cfg.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = writeTable(stdout, rep)
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if cfg.charts != "" {
		if err := writeCharts(cfg.charts, rep, cfg); err != nil {
			return err
		}
	}
	failed := 0
	for _, r := range rows {
		if r.Error != "" {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d rows failed", failed, len(rows))
	}
	return nil
}

// bench is one run of the benchmark: what it measures against, and the
// rows measured so far.
type bench struct {
	cfg  config
	dir  string // temporary: the binary, the socket, time stamps
	bin  string
	srv  *tmuxServer
	tmcp *tmcpProcess // at the default tier, for every call row
	// captureFloor is capture-pane -p over a control client, measured with
	// the first rows and the floor of capture_since's too.
	captureFloor *summary
	rows         map[string]row
	notes        notes
}

// group is a set of rows measured together, named for -only; if it
// fails, its rows not yet measured carry the error.
type group struct {
	name    string
	labels  []string
	measure func(context.Context) error
}

// groupNames returns the groups' names, in the order they are measured.
func groupNames() []string {
	var names []string
	for _, g := range (&bench{}).groups() {
		names = append(names, g.name)
	}
	return names
}

// groups are the groups of rows, in table order.
func (b *bench) groups() []group {
	floodMemory, floodWritten, floodUnwatched := floodLabels(b.cfg)
	return []group{
		{"basics", []string{rowListControl, rowListProcess, rowCaptureControl, rowCaptureProcess, rowStart, rowProcsList}, b.basics},
		{"run", []string{rowRunTrue, rowRunMethod, rowRunSpaced, rowRunSeq, rowProcsRun}, b.runCommand},
		{"reaction", []string{rowReaction}, b.reaction},
		{"million", []string{rowMillion}, b.million},
		{"since", []string{rowSinceQuiet, rowSince1000}, b.captureSince},
		{"sizes", []string{rowToolsReadonly, rowToolsMutating, rowToolsDestructive, rowModelVisible, rowWithoutOutputSchemas}, b.toolSizes},
		{"http", []string{rowListHTTP, rowReactionHTTP, rowManyHTTP, rowManyHTTPMemory}, b.overHTTP},
		{"panes", []string{rowListMany, rowListManyFormat, rowListManyCPU}, b.listMany},
		{"busy", []string{busyLabel(b.cfg), rowBusyCPU, rowBusyMemory}, b.busyReaction},
		{"remote", []string{rowListRemote, rowCaptureRemote, rowRunRemote, rowReactionRemote}, b.remote},
		{"flood", []string{floodMemory, floodWritten, floodUnwatched, floodServerLabel(b.cfg)}, b.flood},
	}
}

// measure runs every group -only selects and returns their rows in table
// order.
func (b *bench) measure(ctx context.Context) []row {
	var rows []row
	var gone error // set once the tmux server has died
	for _, g := range b.groups() {
		if b.cfg.only != nil && !b.cfg.only[g.name] {
			continue
		}
		err := ctx.Err()
		switch {
		case gone != nil:
			err = gone
		case err == nil:
			err = g.measure(ctx)
			if err != nil && !b.srv.Alive() {
				err = fmt.Errorf("%w; the tmux server (pid %d) is gone: it crashed or was killed (dmesg shows a segfault if it crashed)", err, b.srv.PID())
				gone = fmt.Errorf("not measured: the tmux server (pid %d) died during an earlier measurement", b.srv.PID())
			}
		}
		for _, label := range g.labels {
			r, ok := b.rows[label]
			switch {
			case ok:
			case err != nil:
				r = row{Measurement: label, Error: err.Error()}
			default:
				r = row{Measurement: label, Error: "not measured (a bug in the benchmark)"}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// put records a measured row.
func (b *bench) put(r row) { b.rows[r.Measurement] = r }

// basics measures the first rows: list_sessions and capture_pane against
// both floors, start-up, and the processes list_sessions starts.
func (b *bench) basics(ctx context.Context) error {
	fl, err := measureFloor(ctx, b.srv, b.cfg)
	if err != nil {
		return err
	}
	b.captureFloor = &fl.captureControl
	tm, err := measureTmcp(ctx, b.tmcp, b.bin, b.srv, b.cfg)
	if err != nil {
		return err
	}
	b.put(durationRow(rowListControl, unitMs, tm.list, &fl.listControl))
	b.put(durationRow(rowListProcess, unitMs, tm.list, &fl.listProcess))
	b.put(durationRow(rowCaptureControl, unitMs, tm.capture, &fl.captureControl))
	b.put(durationRow(rowCaptureProcess, unitMs, tm.capture, &fl.captureProcess))
	start := durationRow(rowStart, unitMs, tm.start, &fl.listProcess)
	b.put(start.withTarget(fmt.Sprintf("< %d ms", startTarget), start.TmcpMedian < startTarget))
	// The floor is what the same watcher saw of a loop of list-sessions
	// processes: one a call, less what it missed.
	perCall := float64(tm.processesStarted) / float64(b.cfg.n)
	floorPerCall := float64(fl.watcherSeen) / float64(b.cfg.n)
	b.put(valueRow(rowProcsList, unitPerCall, b.cfg.n, perCall, &floorPerCall).withTarget("0", tm.processesStarted == 0))
	b.notes.MCPPing = timing{MedianMs: round(ms(tm.ping.median), 3), P90Ms: round(ms(tm.ping.p90), 3)}
	b.notes.Processes = processCheck{Seen: fl.watcherSeen, Expected: fl.listProcess.n}
	return nil
}
