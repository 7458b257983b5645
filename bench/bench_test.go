package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// TestBenchmarkMeasuresEveryRow runs the whole benchmark in its -short
// form and checks that every row is there and was measured, not the
// timings: speed is never asserted.
func TestBenchmarkMeasuresEveryRow(t *testing.T) {
	tmuxtest.Skip(t)
	if testing.Short() {
		t.Skip("builds tmcp and starts tmux: not in -short")
	}
	var stdout, stderr bytes.Buffer
	charts := t.TempDir()
	if err := run(context.Background(), []string{"-short", "-json", "-charts", charts}, &stdout, &stderr); err != nil {
		t.Fatalf("benchmark failed: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("-json output is not a report: %v\n%s", err, stdout.String())
	}
	cfg, err := parseFlags([]string{"-short"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	floodMemory, floodWritten, floodUnwatched := floodLabels(cfg)
	want := []string{rowListControl, rowListProcess, rowCaptureControl, rowCaptureProcess, rowStart, rowProcsList,
		rowRunTrue, rowRunMethod, rowRunSpaced, rowRunSeq, rowProcsRun, rowReaction, rowMillion, rowSinceQuiet, rowSince1000,
		rowToolsReadonly, rowToolsMutating, rowToolsDestructive, rowModelVisible, rowWithoutOutputSchemas,
		rowListHTTP, rowReactionHTTP, rowManyHTTP, rowManyHTTPMemory, rowListMany, rowListManyFormat, rowListManyCPU,
		busyLabel(cfg), rowBusyCPU, rowBusyMemory,
		rowListRemote, rowCaptureRemote, rowRunRemote, rowReactionRemote, floodMemory, floodWritten, floodUnwatched, floodServerLabel(cfg)}
	got := map[string]row{}
	for _, r := range rep.Rows {
		got[r.Measurement] = r
	}
	for _, label := range want {
		r, ok := got[label]
		switch {
		case !ok:
			t.Errorf("no row %q", label)
		case r.Error != "":
			t.Errorf("row %q failed: %s", label, r.Error)
		case r.Iterations < 1 || r.Unit == "":
			t.Errorf("row %q was not measured: %+v", label, r)
		}
	}
	if len(rep.Rows) != len(want) {
		t.Errorf("%d rows, want %d", len(rep.Rows), len(want))
	}
	if stderr.Len() > 0 {
		t.Errorf("benchmark wrote to stderr:\n%s", stderr.String())
	}

	for _, chart := range []string{latencyChart, scaleChart, floodChart} {
		if info, err := os.Stat(filepath.Join(charts, chart)); err != nil || info.Size() == 0 {
			t.Errorf("chart %s not written: %v", chart, err)
		}
	}

	// The table form prints the same rows.
	var table bytes.Buffer
	if err := writeTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	for _, label := range append(want, "MCP ping") {
		if !strings.Contains(table.String(), label) {
			t.Errorf("table lacks %q; it reads:\n%s", label, table.String())
		}
	}
}

func TestOnlyTakesTheGroupsByName(t *testing.T) {
	names := map[string]bool{}
	for _, name := range groupNames() {
		if name == "" || names[name] {
			t.Errorf("group name %q is empty or used twice", name)
		}
		names[name] = true
	}
	cases := []struct {
		arg     string
		want    []string
		wantErr bool
	}{
		{arg: "panes", want: []string{"panes"}},
		{arg: "panes,busy", want: []string{"busy", "panes"}},
		{arg: "pane", wantErr: true},
		{arg: "panes,", wantErr: true},
	}
	for _, c := range cases {
		cfg, err := parseFlags([]string{"-only", c.arg}, io.Discard)
		if c.wantErr {
			if err == nil {
				t.Errorf("-only %s: no error", c.arg)
			}
			continue
		}
		if err != nil {
			t.Errorf("-only %s: %v", c.arg, err)
			continue
		}
		got := slices.Sorted(maps.Keys(cfg.only))
		if !slices.Equal(got, c.want) {
			t.Errorf("-only %s selects %v, want %v", c.arg, got, c.want)
		}
	}
}
