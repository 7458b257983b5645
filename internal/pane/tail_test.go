package pane

import (
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestTailBytesKeepsTheEndWithinWholeCharacters(t *testing.T) {
	cases := []struct {
		text    string
		max     int
		want    string
		dropped int
	}{
		{"hello", 10, "hello", 0},
		{"hello", 5, "hello", 0},
		{"hello", 3, "llo", 2},
		{"aé", 1, "", 3},   // the 2-byte é does not fit in 1 byte
		{"aéb", 2, "b", 3}, // nor is it cut in half
		{"aéb", 3, "éb", 1},
		{"hello", 0, "", 5},
		{"hello", -1, "", 5},
	}
	for _, c := range cases {
		got, dropped := TailBytes(c.text, c.max)
		if got != c.want || dropped != c.dropped {
			t.Errorf("TailBytes(%q, %d) = %q, %d; want %q, %d", c.text, c.max, got, dropped, c.want, c.dropped)
		}
	}
}

func TestTailBufferJoinsThePiecesOfALine(t *testing.T) {
	tests := []struct {
		name      string
		maxBytes  int
		pieces    []string
		more      []bool
		want      []string
		lines     int
		bytes     int
		truncated bool
	}{
		{name: "pieces of one line, then another",
			maxBytes: 100, pieces: []string{"ab", "cd", "ef", "next"}, more: []bool{true, true, false, false},
			want: []string{"abcdef", "next"}, lines: 2, bytes: 12},
		{name: "an empty piece ends the line",
			maxBytes: 100, pieces: []string{"ab", ""}, more: []bool{true, false},
			want: []string{"ab"}, lines: 1, bytes: 3},
		{name: "a joined line keeps its end within the bound",
			maxBytes: 4, pieces: []string{"abc", "def", "gh"}, more: []bool{true, true, false},
			want: []string{"efgh"}, lines: 1, bytes: 9, truncated: true},
		{name: "a joined line pushes out older lines",
			maxBytes: 6, pieces: []string{"old", "abc", "de"}, more: []bool{false, true, false},
			want: []string{"abcde"}, lines: 2, bytes: 10, truncated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewTailBuffer(10, tt.maxBytes)
			for i, p := range tt.pieces {
				b.AddPiece(p, tt.more[i])
			}
			got, tr := b.Bounded(10, tt.maxBytes)
			if !slices.Equal(got, tt.want) || b.TotalLines() != tt.lines || b.TotalBytes() != tt.bytes || tr.Truncated != tt.truncated {
				t.Errorf("got %q, %d lines, %d bytes, %+v; want %q, %d lines, %d bytes, truncated %v",
					got, b.TotalLines(), b.TotalBytes(), tr, tt.want, tt.lines, tt.bytes, tt.truncated)
			}
			if tr.Truncated && tr.DroppedBytes != tt.bytes-len(strings.Join(tt.want, "\n"))-1 {
				t.Errorf("dropped %d bytes; want %d", tr.DroppedBytes, tt.bytes-len(strings.Join(tt.want, "\n"))-1)
			}
		})
	}
}

func TestASealedTailBufferReadsAndGrowsAsBefore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		add   func(b *TailBuffer)
		after func(b *TailBuffer) // added once sealed
		want  []string
	}{
		{"lines", func(b *TailBuffer) { b.Add("one"); b.Add("two") }, nil, []string{"one", "two"}},
		{"empty lines kept", func(b *TailBuffer) { b.Add(""); b.Add("x"); b.Add("") }, nil, []string{"", "x", ""}},
		{"a line added after", func(b *TailBuffer) { b.Add("one") }, func(b *TailBuffer) { b.Add("two") }, []string{"one", "two"}},
		{"an open line goes on", func(b *TailBuffer) { b.Add("one"); b.AddPiece("tw", true) },
			func(b *TailBuffer) { b.AddPiece("o", false) }, []string{"one", "two"}},
		{"the bounds still hold", func(b *TailBuffer) { b.Add("a"); b.Add("b"); b.Add("c") },
			func(b *TailBuffer) { b.Add("d") }, []string{"b", "c", "d"}},
		{"a line with a newline stays apart", func(b *TailBuffer) { b.Add("a\nb"); b.Add("c") }, nil, []string{"a\nb", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewTailBuffer(3, 100)
			tc.add(b)
			kept, total := b.KeptBytes(), b.TotalBytes()
			b.Seal()
			if b.KeptBytes() != kept || b.TotalBytes() != total {
				t.Errorf("sealing changed the counts: kept %d → %d, total %d → %d", kept, b.KeptBytes(), total, b.TotalBytes())
			}
			if tc.after != nil {
				tc.after(b)
			}
			if got := b.Lines(); !slices.Equal(got, tc.want) {
				t.Errorf("Lines() = %q, want %q", got, tc.want)
			}
			if got, _ := b.Bounded(3, 100); !slices.Equal(got, tc.want) {
				t.Errorf("Bounded() = %q, want %q", got, tc.want)
			}
		})
	}
}

// BenchmarkTailBufferHeldMemory prints the heap a finished job's output
// holds, kept apart and sealed (Seal's figures): a job that wrote 200,000
// lines of 7 bytes (as seq 1 200000 does), of which it keeps the last
// 10,000.
func BenchmarkTailBufferHeldMemory(b *testing.B) {
	for _, seal := range []bool{false, true} {
		name := "apart"
		if seal {
			name = "sealed"
		}
		b.Run(name, func(b *testing.B) {
			var held []*TailBuffer
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for i := 0; b.Loop(); i++ {
				t := NewTailBuffer(10000, 1<<20)
				for n := range 200000 {
					t.Add(strconv.Itoa(1000000 + n + i)) // 7 bytes, each its own string
				}
				if seal {
					t.Seal()
				}
				held = append(held, t)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(held)), "heap-B/job")
			b.ReportMetric(float64(held[0].KeptBytes()), "kept-B/job")
			runtime.KeepAlive(held)
		})
	}
}

func TestWholeLeavesOutALineStillGoingOn(t *testing.T) {
	tests := []struct {
		name   string
		pieces []string
		more   []bool
		want   []string
		lines  int
		bytes  int
	}{
		{name: "whole lines are all kept",
			pieces: []string{"one", "two"}, more: []bool{false, false},
			want: []string{"one", "two"}, lines: 2, bytes: 8},
		{name: "a line in pieces, not ended, is left out",
			pieces: []string{"one", "tw", "o"}, more: []bool{false, true, true},
			want: []string{"one"}, lines: 1, bytes: 4},
		{name: "a line cut to the bound, not ended, counts out all it had",
			pieces: []string{"one", "abcdefgh", "ijklmnop"}, more: []bool{false, true, true},
			want: nil, lines: 1, bytes: 4}, // the long line had pushed "one" out
		{name: "nothing but a line going on",
			pieces: []string{"abc"}, more: []bool{true},
			want: nil, lines: 0, bytes: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewTailBuffer(10, 10)
			for i, p := range tt.pieces {
				b.AddPiece(p, tt.more[i])
			}
			w := b.Whole()
			if got := w.Lines(); !slices.Equal(got, tt.want) && len(got)+len(tt.want) > 0 || w.TotalLines() != tt.lines || w.TotalBytes() != tt.bytes {
				t.Errorf("Whole: %q, %d lines, %d bytes; want %q, %d lines, %d bytes", got, w.TotalLines(), w.TotalBytes(), tt.want, tt.lines, tt.bytes)
			}
			// The copy goes on apart from the buffer.
			w.Add("next")
			if slices.Contains(b.Lines(), "next") {
				t.Errorf("a line added to the copy is in the buffer: %q", b.Lines())
			}
		})
	}
}
