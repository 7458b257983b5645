package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// testRunScreen prints a screen of a failing test run: default text, red
// and green marks, and a reverse-video line at the end.
const testRunScreen = `clear; i=0; while [ $i -lt 200 ]; do i=$((i+1)); ` +
	`case $((i % 5)) in 4) printf '\033[1;31m--- FAIL\033[0m: TestSomething/case_%d (0.01s)\n' $i;; ` +
	`2) printf '\033[32mok\033[0m   github.com/x/y/z%d  0.0%ds\n' $i $((i % 10));; ` +
	`*) printf '    some_test.go:%d: got %d, want %d; the rest of a long line of output\n' $i $i $((i+1));; esac; done; ` +
	`printf '\033[7m FAIL \033[0m done\n'`

// BenchmarkScreenshotPane takes a screenshot of a pane showing a test run,
// through tmux as a call does: the pane's state, its capture, the drawing
// and the PNG.
func BenchmarkScreenshotPane(b *testing.B) {
	for _, size := range []struct{ cols, rows int }{{80, 24}, {200, 50}} {
		b.Run(fmt.Sprintf("%dx%d", size.cols, size.rows), func(b *testing.B) {
			srv := tmuxtest.New(b)
			srv.Must("resize-window", "-t", "=main:", "-x", fmt.Sprint(size.cols), "-y", fmt.Sprint(size.rows))
			srv.Must("send-keys", "-t", "%0", testRunScreen, "Enter")
			if !tmuxtest.WaitFor(5*time.Second, func() bool {
				out, _ := srv.Tmux("capture-pane", "-p", "-t", "%0")
				return strings.Contains(out, " FAIL  done")
			}) {
				b.Fatal("the test run never finished printing")
			}
			tc, err := tmux.New(context.Background(), tmux.Options{SocketPath: srv.Socket})
			if err != nil {
				b.Fatal(err)
			}
			defer tc.Close()
			s := New(tc, Config{Tier: ReadOnly, Version: "bench"})
			defer s.Close()
			var res *mcp.CallToolResult
			var out screenshotPaneOut
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), CommandTimeout)
				res, out, err = s.screenshotPane(ctx, nil, screenshotPaneIn{PaneID: "%0"})
				cancel()
				if err != nil {
					b.Fatal(err)
				}
			}
			if want := fmt.Sprintf("%dx%d", size.cols, size.rows); out.Size != want {
				b.Fatalf("the pane is %s, want %s", out.Size, want)
			}
			b.ReportMetric(float64(len(res.Content[1].(*mcp.ImageContent).Data)), "png-bytes")
		})
	}
}
