package wait

import (
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/pane"
)

// newTextWait returns a wait for patterns at stream offset 0, with no
// typed lines, keeping up to maxBytes of output.
func newTextWait(t *testing.T, maxBytes int, patterns ...string) *textWait {
	t.Helper()
	m, err := NewMatcher(patterns, nil, false, true)
	if err != nil {
		t.Fatal(err)
	}
	return &textWait{req: TextRequest{Patterns: patterns, MaxLines: 100, MaxBytes: maxBytes}, m: m, dec: pane.NewDecoder(0),
		tail: pane.NewTailBuffer(100, maxBytes), echo: newEchoes(func() []pane.TypedLine { return nil })}
}

// TestAWaitMatchesAcrossTheBoundsOfWhatItJudgesAtOnce: output is judged
// maxChunk bytes at a time, and a pattern split by that bound, or at the
// very end of a line longer than it, still matches, with the whole line.
func TestAWaitMatchesAcrossTheBoundsOfWhatItJudgesAtOnce(t *testing.T) {
	long := strings.Repeat("x", 3*maxChunk+5)
	tests := []struct {
		name, out, pattern, line string
	}{
		{"a pattern across the first bound", strings.Repeat("a", maxChunk-3) + "STRADDLE" + long + "\r\n", "STRADDLE",
			strings.Repeat("a", maxChunk-3) + "STRADDLE" + long},
		{"a pattern at the end of a long line", long + "END\r\n", "END", long + "END"},
		{"a pattern at the end of a long line without a newline", long + "END", "END", long + "END"},
		{"a pattern across a bound in a later line", "first\r\n" + strings.Repeat("b", 2*maxChunk-9) + "STRADDLE\r\n", "STRADDLE",
			strings.Repeat("b", 2*maxChunk-9) + "STRADDLE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newTextWait(t, 1<<20, tt.pattern)
			if !w.feed([]byte(tt.out)) {
				t.Fatalf("%d bytes with %q in line of %d bytes: no match", len(tt.out), tt.pattern, len(tt.line))
			}
			if w.res.Outcome != OutcomeMatched || !strings.HasSuffix(tt.line[:strings.Index(tt.line, tt.pattern)+len(tt.pattern)], w.res.Matched) ||
				len(w.res.Matched) != min(len(tt.line), MaxMatchedBytes) {
				t.Errorf("outcome %s matched %d bytes %.40q, want matched, the line's %d bytes up to the match", w.res.Outcome, len(w.res.Matched), w.res.Matched, MaxMatchedBytes)
			}
			if w.unfinished != "" {
				w.tail.Add(w.unfinished)
			}
			// The wait ends at the match: the tail ends with the line as
			// far as it was written then, the pattern included.
			lines, tr := w.tail.Bounded(100, 1<<20)
			through := strings.Index(tt.line, tt.pattern) + len(tt.pattern)
			if len(lines) == 0 || !strings.HasPrefix(tt.line, lines[len(lines)-1]) || len(lines[len(lines)-1]) < through || tr.Truncated {
				t.Errorf("tail %d lines, truncation %+v, want it to end with the line of %d bytes through the match", len(lines), tr, len(tt.line))
			}
		})
	}
}

func TestExcerptBoundsTheMatchedLineAroundTheMatch(t *testing.T) {
	m, err := NewMatcher([]string{"HERE"}, nil, false, true)
	if err != nil {
		t.Fatal(err)
	}
	re := m.patterns[0]
	pad := strings.Repeat("-", 2*MaxMatchedBytes)
	tests := []struct {
		name, line, want string
	}{
		{"a short line is whole", "a HERE b", "a HERE b"},
		{"a match late in a long line: the bytes up to its end", pad + "HERE" + pad, pad[len(pad)-MaxMatchedBytes+4:] + "HERE"},
		{"a match early in a long line: the line's start", "HERE" + pad, "HERE" + pad[:MaxMatchedBytes-4]},
		{"never inside a character", "é" + strings.Repeat("é", MaxMatchedBytes) + "HERE", strings.Repeat("é", (MaxMatchedBytes-4)/2) + "HERE"},
	}
	for _, tt := range tests {
		if got := excerpt(tt.line, re); got != tt.want {
			t.Errorf("%s: excerpt of %d bytes is %d bytes %.30q..., want %d bytes", tt.name, len(tt.line), len(got), got, len(tt.want))
		}
	}
}
