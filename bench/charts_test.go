package main

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// spread returns n durations from base to about twice base.
func spread(base time.Duration, n int) []time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = base + base*time.Duration(i)/time.Duration(n)
	}
	return ds
}

// chartReport is a report with a few rows of each chart.
func chartReport(cfg config) report {
	list := summarise(spread(300*time.Microsecond, 20))
	memory, written, _ := floodLabels(cfg)
	return report{TmuxVersion: "tmux 3.3a", Iterations: 20, Rows: []row{
		durationRow(rowListControl, unitMs, list, ptr(summarise(spread(20*time.Microsecond, 20)))),
		durationRow(rowListProcess, unitMs, list, ptr(summarise(spread(2*time.Millisecond, 20)))),
		durationRow(rowMillion, unitMs, summarise(spread(time.Millisecond, 1)), ptr(summarise(spread(time.Millisecond, 1)))),
		durationRow(rowManyHTTP, unitMs, summarise(spread(time.Millisecond, 50)), ptr(summarise(spread(400*time.Microsecond, 20)))),
		valueRow(rowToolsMutating, unitBytes, 1, 36000, nil),
		valueRow(memory, unitMiB, 1, 25, ptr(3.4)),
		valueRow(written, unitS, 1, 9.8, ptr(3.2)),
	}, Notes: notes{FloodControlSeconds: 20, FloodControlMiB: 3.4, TmcpRestMiB: 16}}
}

func TestChartsDrawEachTimedRowAndTheFlood(t *testing.T) {
	cfg, err := parseFlags([]string{"-short"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := writeCharts(dir, chartReport(cfg), cfg); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]string{
		latencyChart: {"list_sessions", "floor: list-sessions, control client", "floor: list-sessions process"},
		scaleChart:   {"50 HTTP sessions waiting on one pane, write → each reply", "floor: one HTTP session"},
		floodChart:   {"nobody watching the pane: 3.2", "tmcp waiting through the flood: 25", "the bare control client: 3.4"},
	} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := xml.Unmarshal(b, new(struct{})); err != nil {
			t.Errorf("%s is not XML: %v", file, err)
		}
		svg := strings.ReplaceAll(string(b), "&#39;", "'")
		for _, w := range want {
			if !strings.Contains(svg, w) {
				t.Errorf("%s lacks %q", file, w)
			}
		}
		if file == latencyChart && (strings.Count(svg, ">list_sessions") != 1 || strings.Contains(svg, "1M lines")) {
			t.Errorf("%s: list_sessions, timed once against two floors, should be drawn once, and the million-line row's single run not at all", file)
		}
	}
}

func TestChartsNameTheChartsTheirRowsFailedFor(t *testing.T) {
	cfg, err := parseFlags([]string{"-short"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	rep := chartReport(cfg)
	for i := range rep.Rows {
		if strings.Contains(rep.Rows[i].Measurement, "flood") {
			rep.Rows[i].Error = "tmux died"
		}
	}
	dir := t.TempDir()
	err = writeCharts(dir, rep, cfg)
	if err == nil || !strings.Contains(err.Error(), floodChart) {
		t.Fatalf("writeCharts with the flood failed: %v, want an error naming %s", err, floodChart)
	}
	if _, err := os.Stat(filepath.Join(dir, latencyChart)); err != nil {
		t.Errorf("the latency chart was not written beside the failed one: %v", err)
	}
}
