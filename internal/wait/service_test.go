package wait

import (
	"testing"
	"time"
)

func TestParseCeilingTakesOnlyANumberOfSecondsWithinItsBounds(t *testing.T) {
	tests := []struct {
		v    string
		want time.Duration // 0: an error
	}{
		{"", DefaultCeiling},
		{"1", time.Second},
		{"3600", time.Hour},
		{" 60 ", time.Minute},
		{"1.5", 1500 * time.Millisecond},
		{"0", 0},
		{"0.5", 0},
		{"4000", 0},
		{"abc", 0},
		{"10m", 0},
		{"120abc", 0},
		{"NaN", 0},
		{"Inf", 0},
	}
	for _, tt := range tests {
		got, err := ParseCeiling(tt.v)
		switch {
		case tt.want == 0 && err == nil:
			t.Errorf("ParseCeiling(%q) = %v, want an error", tt.v, got)
		case tt.want != 0 && (err != nil || got != tt.want):
			t.Errorf("ParseCeiling(%q) = %v, %v, want %v", tt.v, got, err, tt.want)
		}
	}
}
