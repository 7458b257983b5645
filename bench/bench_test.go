package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// TestBenchmarkPrintsEveryRow runs the whole benchmark at its smallest
// size and checks the table, not the timings: speed is never asserted.
func TestBenchmarkPrintsEveryRow(t *testing.T) {
	tmuxtest.Skip(t)
	if testing.Short() {
		t.Skip("builds tmcp and starts tmux: not in -short")
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-n", "3"}, &stdout, &stderr); err != nil {
		t.Fatalf("benchmark failed: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	out := stdout.String()
	for _, want := range []string{rowList, rowCapture, rowStart, "tmux processes tmcp started in steady state"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q; it reads:\n%s", want, out)
		}
	}
	if stderr.Len() > 0 {
		t.Errorf("benchmark wrote to stderr:\n%s", stderr.String())
	}
}
