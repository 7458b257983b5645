package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// Units of a row's figures.
const (
	unitMs      = "ms"
	unitS       = "s"
	unitBytes   = "bytes"
	unitMiB     = "MiB"
	unitPerCall = "per call"
	unitCPU     = "% of a core"
	unitCPUMs   = "ms of CPU"
)

// report is everything the benchmark prints, table or JSON.
type report struct {
	TmuxVersion  string `json:"tmuxVersion"`
	Iterations   int    `json:"iterations"`
	Starts       int    `json:"startIterations"`
	Warmups      int    `json:"warmups"`
	StartWarmups int    `json:"startWarmups"`
	FloodBytes   int    `json:"floodBytes"`
	FloodKind    string `json:"floodKind"`
	BusySessions int    `json:"busySessions"`
	BusyPanes    int    `json:"busyPanes"`
	Rows         []row  `json:"rows"`
	Notes        notes  `json:"notes"`
}

// row is one measurement beside its floor, which the label names. Figures
// are in Unit; TmcpP90 is null for a figure measured once, FloorMedian and
// Ratio are null where no tmux job compares.
type row struct {
	Measurement string   `json:"measurement"`
	Unit        string   `json:"unit"`
	Iterations  int      `json:"iterations"`
	TmcpMedian  float64  `json:"tmcpMedian"`
	TmcpP90     *float64 `json:"tmcpP90"`
	FloorMedian *float64 `json:"floorMedian"`
	Ratio       *float64 `json:"ratio"` // tmcp median / floor median
	Target      string   `json:"target,omitempty"`
	MeetsTarget *bool    `json:"meetsTarget,omitempty"`
	Error       string   `json:"error,omitempty"`
	// tmcpSamples and floorSamples are the timed iterations of a
	// durationRow, sorted, for the charts.
	tmcpSamples, floorSamples []time.Duration
}

// notes are figures printed under the table, for reading the rows.
type notes struct {
	// MCPPing is an MCP ping to the same tmcp: a round trip through the
	// SDK and stdio that reaches no tmux.
	MCPPing timing `json:"mcpPing"`
	// Processes says how well the watcher that counts tmcp's tmux
	// processes saw a loop of the floor's own processes.
	Processes processCheck `json:"processWatcherCheck"`
	// QuietCommands is how many tmux commands the server ran while tmcp
	// answered QuietCalls capture_since calls on a quiet pane.
	QuietCommands int `json:"quietCaptureSinceTmuxCommands"`
	QuietCalls    int `json:"quietCaptureSinceCalls"`
	// ModelVisibleBytes is, per tier, what a model reads of the tool list:
	// names, descriptions, input schemas and the instructions.
	ModelVisibleBytes map[string]int `json:"modelVisibleBytes,omitempty"`
	// Flood figures besides the rows': the same flood streamed by a bare
	// control client, and tmcp's peak memory before its flood.
	FloodControlSeconds float64 `json:"floodControlClientSeconds"`
	FloodControlMiB     float64 `json:"floodControlClientPeakMiB"`
	TmcpRestMiB         float64 `json:"tmcpPeakMiBBeforeFlood"`
	// FloodReplySeconds is how long after the flood was written tmcp's
	// wait for the line after it answered.
	FloodReplySeconds float64 `json:"floodTmcpReplyAfterEndSeconds"`
	// FloodFreeRuns and FloodUnwatchedRuns are the seconds each run of
	// the flood took with no tmcp and with tmcp carrying the pane's
	// session but not watching the pane, in the order run (by turns).
	FloodFreeRuns      []float64 `json:"floodNoTmcpRunsSeconds,omitempty"`
	FloodUnwatchedRuns []float64 `json:"floodTmcpNotWatchingRunsSeconds,omitempty"`
	// ManyHTTPP99Ms is the 99th percentile of the replies to the sessions
	// waiting together over HTTP, of ManyHTTPReplies replies.
	ManyHTTPP99Ms   float64 `json:"manyHttpSessionsP99Ms"`
	ManyHTTPReplies int     `json:"manyHttpSessionsReplies"`
	// BusyP99Ms and BusyFloorP99Ms are the 99th percentiles of the waits
	// on busy panes and of their floor.
	BusyP99Ms      float64 `json:"busyPanesP99Ms"`
	BusyFloorP99Ms float64 `json:"busyPanesFloorP99Ms"`
	// BusyMachinePercent is how busy the machine's cores were during the
	// floor's rounds; BusyBurntFloor* are the floor's when this process
	// keeps every core busy for busyBurn as the lines are written.
	BusyMachinePercent     float64 `json:"busyPanesMachineBusyPercent"`
	BusyBurntFloorMedianMs float64 `json:"busyPanesFloorCoresBusyMedianMs"`
	BusyBurntFloorP99Ms    float64 `json:"busyPanesFloorCoresBusyP99Ms"`
	// BusyColdMissed of BusyColdWaits waits on busy panes tmcp did not
	// stream yet missed a line written after tmcp had read them.
	BusyColdMissed int `json:"busyPanesNotStreamedMissed"`
	BusyColdWaits  int `json:"busyPanesNotStreamedWaits"`
	// BusyColdReadMs is how long tmcp took to read those calls: from the
	// first request's write to the answer of a ping written after the last.
	BusyColdReadMs float64 `json:"busyPanesNotStreamedReadMs"`
}

// timing is a median and p90 in milliseconds.
type timing struct {
	MedianMs float64 `json:"medianMs"`
	P90Ms    float64 `json:"p90Ms"`
}

// processCheck is how many of Expected tmux processes of the benchmark's
// own the child watcher saw.
type processCheck struct {
	Seen     int `json:"seen"`
	Expected int `json:"expected"`
}

// durationRow sets timed tmcp iterations beside a timed floor (nil: none),
// in milliseconds or seconds.
func durationRow(label, unit string, tmcp summary, floor *summary) row {
	in := ms
	if unit == unitS {
		in = func(d time.Duration) float64 { return d.Seconds() }
	}
	r := row{Measurement: label, Unit: unit, Iterations: tmcp.n, TmcpMedian: round(in(tmcp.median), 3), tmcpSamples: tmcp.samples}
	if tmcp.n > 1 {
		r.TmcpP90 = ptr(round(in(tmcp.p90), 3))
	}
	if floor != nil {
		r.floorSamples = floor.samples
		r.FloorMedian = ptr(round(in(floor.median), 3))
		if floor.median > 0 {
			r.Ratio = ptr(round(float64(tmcp.median)/float64(floor.median), 2))
		}
	}
	return r
}

// valueRow is a figure measured once (or a count over many calls) beside
// a floor figure of the same kind (nil: none).
func valueRow(label, unit string, n int, tmcp float64, floor *float64) row {
	digits := map[string]int{unitBytes: 0, unitMiB: 1, unitPerCall: 2, unitS: 3, unitCPU: 1, unitCPUMs: 2}[unit]
	r := row{Measurement: label, Unit: unit, Iterations: n, TmcpMedian: round(tmcp, digits)}
	if floor != nil {
		r.FloorMedian = ptr(round(*floor, digits))
		if *floor > 0 {
			r.Ratio = ptr(round(tmcp / *floor, 2))
		}
	}
	return r
}

// withTarget records a row's target and whether it was met.
func (r row) withTarget(target string, met bool) row {
	r.Target, r.MeetsTarget = target, &met
	return r
}

func ptr[T any](v T) *T { return &v }

// round rounds f to digits decimals.
func round(f float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(f*p) / p
}

// figure formats a value of a unit for the table.
func figure(v float64, unit string) string {
	switch unit {
	case unitBytes:
		return fmt.Sprintf("%.0f", v)
	case unitMiB:
		return fmt.Sprintf("%.1f", v)
	case unitPerCall:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// writeTable prints the report as an aligned table, then the notes and
// any errors.
func writeTable(w io.Writer, rep report) error {
	fmt.Fprintf(w, "tmcp vs the raw tmux floor (%s; medians and p90; n timed iterations after %d warm-ups for calls, %d for start-ups, none for the million lines and the flood)\n\n",
		rep.TmuxVersion, rep.Warmups, rep.StartWarmups)
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measurement\tunit\tn\ttmcp median\ttmcp p90\tfloor median\tratio\ttarget")
	var failed []row
	for _, r := range rep.Rows {
		if r.Error != "" {
			failed = append(failed, r)
			fmt.Fprintf(tw, "%s\t%s\t\tERROR (below)\t\t\t\t%s\n", r.Measurement, r.Unit, r.Target)
			continue
		}
		p90, floor, ratio, target := "—", "—", "—", r.Target
		if r.TmcpP90 != nil {
			p90 = figure(*r.TmcpP90, r.Unit)
		}
		if r.FloorMedian != nil {
			floor = figure(*r.FloorMedian, r.Unit)
		}
		if r.Ratio != nil {
			ratio = fmt.Sprintf("%.2f×", *r.Ratio)
		}
		if r.MeetsTarget != nil {
			target += map[bool]string{true: " ✓", false: " ✗"}[*r.MeetsTarget]
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%11s\t%9s\t%12s\t%7s\t%s\n", r.Measurement, r.Unit, r.Iterations,
			figure(r.TmcpMedian, r.Unit), p90, floor, ratio, target)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n") {
		fmt.Fprintln(w, strings.TrimRight(line, " ")) // rows without a target would end in padding
	}
	n := rep.Notes
	fmt.Fprintf(w, "\nNotes:\n")
	if n.Processes.Expected > 0 {
		fmt.Fprintf(w, "- MCP ping to the same tmcp, reaching no tmux: median %.3f ms, p90 %.3f ms.\n"+
			"- Processes were counted in untimed loops by sampling tmcp's children every %v; the same\n"+
			"  watcher saw %d of the %d processes of a `tmux list-sessions` loop.\n",
			n.MCPPing.MedianMs, n.MCPPing.P90Ms, childSampleInterval, n.Processes.Seen, n.Processes.Expected)
	}
	if n.QuietCalls > 0 {
		fmt.Fprintf(w, "- tmux commands the server ran (after-* hooks on %s) during %d quiet capture_since calls: %d.\n",
			strings.Join(countedCommands, ", "), n.QuietCalls, n.QuietCommands)
	}
	if len(n.ModelVisibleBytes) > 0 {
		fmt.Fprintf(w, "- Model-visible part of the tool list (names, descriptions, input schemas, instructions): readonly %d, mutating %d, destructive %d bytes.\n",
			n.ModelVisibleBytes[tierReadonly], n.ModelVisibleBytes[tierMutating], n.ModelVisibleBytes[tierDestructive])
	}
	if n.FloodControlSeconds > 0 {
		fmt.Fprintf(w, "- Flood: tmcp's wait answered %.3f s after the flood was written; tmcp's peak RSS before it: %.1f MiB.\n"+
			"  The same flood streamed by a bare control client (output on, read by this program): written in %.3f s,\n"+
			"  that client's own peak RSS %.1f MiB.\n",
			n.FloodReplySeconds, n.TmcpRestMiB, n.FloodControlSeconds, n.FloodControlMiB)
	}
	if len(n.FloodFreeRuns) > 0 {
		fmt.Fprintf(w, "- Flood runs, by turns: no tmcp %v s; tmcp carrying the session, not watching the pane %v s.\n",
			n.FloodFreeRuns, n.FloodUnwatchedRuns)
	}
	if n.ManyHTTPReplies > 0 {
		fmt.Fprintf(w, "- %d HTTP sessions waiting on one pane: p99 of %d replies %.3f ms after the write.\n",
			httpSessions, n.ManyHTTPReplies, n.ManyHTTPP99Ms)
	}
	if n.BusyP99Ms > 0 {
		fmt.Fprintf(w, "- Waits on %d×%d busy panes: p99 %.3f ms after the write (floor p99 %.3f ms).\n",
			rep.BusySessions, rep.BusyPanes, n.BusyP99Ms, n.BusyFloorP99Ms)
		fmt.Fprintf(w, "- The machine's cores were %.1f%% busy during the floor's rounds; the floor with every core kept busy for %v from the first write: median %.3f ms, p99 %.3f ms.\n",
			n.BusyMachinePercent, busyBurn, n.BusyBurntFloorMedianMs, n.BusyBurntFloorP99Ms)
		fmt.Fprintf(w, "- Waits on those panes before tmcp streamed them, each line written %v after tmcp read the calls (in %.1f ms): %d of %d missed.\n",
			busyColdLead, n.BusyColdReadMs, n.BusyColdMissed, n.BusyColdWaits)
	}
	for _, r := range failed {
		fmt.Fprintf(w, "\nERROR %s:\n  %s\n", r.Measurement, strings.ReplaceAll(r.Error, "\n", "\n  "))
	}
	return nil
}

// megabytes names a flood size, such as "200 MB".
func megabytes(n int) string { return fmt.Sprintf("%d MB", n/1_000_000) }
