package main

import (
	"testing"
	"time"
)

func TestLevelOfComparesTheMedianOnceWarmedUpWithTheMedianAtTheEnd(t *testing.T) {
	// A soak sampled each second, its calls over at 40 s, and sampled 5 s
	// more while the last ones finish: the warm window is 5-10 s, the end
	// window 30-40 s.
	series := func(v func(sec int) int) []sample {
		var out []sample
		for sec := 0; sec <= 45; sec++ {
			out = append(out, sample{at: time.Duration(sec) * time.Second, files: v(sec)})
		}
		return out
	}
	files := func(x sample) int { return x.files }
	tests := []struct {
		name             string
		samples          []sample
		factor           float64
		slack            int
		warm, end, limit int
		ok               bool
	}{
		{"flat", series(func(int) int { return 20 }), 1.25, 16, 20, 20, 41, true},
		{"bursts are not growth", series(func(sec int) int {
			if sec%4 == 0 {
				return 200 // a burst of processes in flight now and then
			}
			return 20
		}), 1.25, 16, 20, 20, 41, true},
		{"a restart in the middle is not judged", series(func(sec int) int {
			if sec >= 15 && sec < 25 {
				return 500
			}
			return 20
		}), 1.25, 16, 20, 20, 41, true},
		{"a leak is", series(func(sec int) int { return 20 + 2*sec }), 1.25, 16, 36, 90, 61, false},
		{"the calls finishing after the end are not the end", series(func(sec int) int {
			if sec > 40 {
				return 0 // only a few calls left in flight
			}
			return 20 + 2*sec
		}), 1.25, 16, 36, 90, 61, false},
		{"not judged with factor 0", series(func(sec int) int { return 20 + 2*sec }), 0, 16, 36, 90, -1, true},
		{"not judged without samples at the end", series(func(int) int { return 20 })[:20], 1.25, 16, 0, 0, -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := levelOf("open files", tt.samples, 10*time.Second, 30*time.Second, 40*time.Second, files, tt.factor, tt.slack)
			if l.warm != tt.warm || l.end != tt.end || l.limit != tt.limit || l.ok() != tt.ok {
				t.Errorf("levelOf: warm %d, end %d, limit %d, ok %v; want %d, %d, %d, %v", l.warm, l.end, l.limit, l.ok(), tt.warm, tt.end, tt.limit, tt.ok)
			}
		})
	}
}
