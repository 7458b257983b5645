package wait

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWaitForTextAtTheEndOfAMillionLines checks that a pattern printed
// after a million-line burst is matched, with every line seen. How soon
// after the command ends is a benchmark figure (see bench), not asserted.
func TestWaitForTextAtTheEndOfAMillionLines(t *testing.T) {
	if testing.Short() {
		t.Skip("a million lines")
	}
	f := newFixture(t)
	stamp := filepath.Join(t.TempDir(), "end")
	ch := f.begin(TextRequest{Patterns: []string{"^MILLION-DONE$"}, Regex: true, Timeout: Timeout{Duration: 60 * time.Second}})
	cmd := "seq 1 1000000; date +%s.%N > " + stamp + "; echo MILLION-DONE"
	if err := f.hub.Keys(context.Background(), "%0", cmd, "Enter"); err != nil {
		t.Fatal(err)
	}
	r := <-ch
	matchedAt := time.Now()
	if r.Outcome != OutcomeMatched {
		t.Fatalf("outcome %s (%s), want matched", r.Outcome, r.Reason)
	}
	data, err := os.ReadFile(stamp)
	if err != nil {
		t.Fatal(err)
	}
	secs, _ := strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
	ended := time.Unix(0, int64(secs*1e9))
	t.Logf("matched %v after the command ended (%d lines in the tail, %+v)", matchedAt.Sub(ended), len(r.Lines), r.Truncation)
	if !r.Truncation.Truncated || r.Truncation.DroppedLines < 1000000-200 {
		t.Fatalf("the tail should have dropped about a million lines: %+v", r.Truncation)
	}
}
