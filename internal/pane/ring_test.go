package pane

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestRingReadFrom(t *testing.T) {
	tests := []struct {
		name       string
		capacity   int
		writes     []string
		off        int64
		limit      int
		want       string
		wantNext   int64
		wantMissed int64
	}{
		{"empty ring reads nothing", 8, nil, 0, 0, "", 0, 0},
		{"reads everything held", 8, []string{"abc", "de"}, 0, 0, "abcde", 5, 0},
		{"reads from an offset", 8, []string{"abcde"}, 2, 0, "cde", 5, 0},
		{"limit bounds the read", 8, []string{"abcde"}, 1, 2, "bc", 3, 0},
		{"reading at the end gives nothing", 8, []string{"abc"}, 3, 0, "", 3, 0},
		{"an offset past the end reads at the end", 8, []string{"abc"}, 9, 0, "", 3, 0},
		{"a negative offset reads from zero", 8, []string{"abc"}, -4, 0, "abc", 3, 0},
		{"wraps around the end of the buffer", 4, []string{"abc", "def"}, 2, 0, "cdef", 6, 0},
		{"limit across the wrap", 4, []string{"abc", "def"}, 3, 2, "de", 5, 0},
		{"an old offset counts what was dropped", 4, []string{"abc", "def"}, 0, 0, "cdef", 6, 2},
		{"dropped bytes and a limit", 4, []string{"abcdefgh"}, 1, 3, "efg", 7, 3},
		{"a write larger than the ring keeps its tail", 4, []string{"ab", "0123456789"}, 0, 0, "6789", 12, 8},
		{"exactly full", 4, []string{"ab", "cd"}, 0, 0, "abcd", 4, 0},
		{"negative offset after drops counts from zero", 4, []string{"abcdef"}, -1, 0, "cdef", 6, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRing(tt.capacity)
			for _, w := range tt.writes {
				r.Write([]byte(w))
			}
			data, next, missed := r.ReadFrom(tt.off, tt.limit)
			if string(data) != tt.want || next != tt.wantNext || missed != tt.wantMissed {
				t.Errorf("writes %q, ReadFrom(%d, %d) = %q, %d, %d; want %q, %d, %d",
					tt.writes, tt.off, tt.limit, data, next, missed, tt.want, tt.wantNext, tt.wantMissed)
			}
		})
	}
}

func TestRingStartAndEndCountEveryByte(t *testing.T) {
	r := NewRing(4)
	for i, want := range []struct{ start, end int64 }{{0, 3}, {2, 6}, {5, 9}} {
		r.Write([]byte("xyz"))
		if r.Start() != want.start || r.End() != want.end {
			t.Errorf("after write %d: Start, End = %d, %d; want %d, %d", i+1, r.Start(), r.End(), want.start, want.end)
		}
	}
}

func TestRingDefaultCapacity(t *testing.T) {
	r := NewRing(0)
	r.Write(make([]byte, DefaultRingSize+1))
	if r.Start() != 1 {
		t.Errorf("NewRing(0) after %d bytes: Start = %d; want 1", DefaultRingSize+1, r.Start())
	}
}

// TestRingMatchesAFullHistory writes random chunks and checks every read
// against a copy of everything ever written.
func TestRingMatchesAFullHistory(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, capacity := range []int{1, 7, 64} {
		r := NewRing(capacity)
		var history []byte
		for range 500 {
			chunk := make([]byte, rng.IntN(3*capacity))
			for i := range chunk {
				chunk[i] = byte(rng.Uint32())
			}
			r.Write(chunk)
			history = append(history, chunk...)

			off := rng.Int64N(int64(len(history)) + 2)
			limit := rng.IntN(capacity + 2)
			data, next, missed := r.ReadFrom(off, limit)
			start := max(0, int64(len(history)-capacity))
			from := max(off, start)
			from = min(from, int64(len(history)))
			to := int64(len(history))
			if limit > 0 {
				to = min(to, from+int64(limit))
			}
			wantMissed := max(0, start-off)
			if !bytes.Equal(data, history[from:to]) || next != to || missed != wantMissed {
				t.Fatalf("capacity %d, %d bytes written: ReadFrom(%d, %d) = %x, %d, %d; want %x, %d, %d",
					capacity, len(history), off, limit, data, next, missed, history[from:to], to, wantMissed)
			}
		}
	}
}

func TestRingReadReturnsACopy(t *testing.T) {
	r := NewRing(4)
	r.Write([]byte("abcd"))
	data, _, _ := r.ReadFrom(0, 0)
	r.Write([]byte("wxyz"))
	if string(data) != "abcd" {
		t.Errorf("data read before a later write = %q; want %q", data, "abcd")
	}
}
