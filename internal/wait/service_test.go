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

func TestClampReportsClampedOnlyWhenTheRequestAskedForMore(t *testing.T) {
	s := New(nil, nil, 10*time.Second)
	tests := []struct {
		seconds float64
		def     time.Duration
		want    Timeout
	}{
		{0, 5 * time.Second, Timeout{Duration: 5 * time.Second}},
		{0, time.Minute, Timeout{Duration: 10 * time.Second}},
		{-1, time.Minute, Timeout{Duration: 10 * time.Second}},
		{3, time.Minute, Timeout{Duration: 3 * time.Second}},
		{0.3, time.Minute, Timeout{Duration: 300 * time.Millisecond}},
		{10, time.Minute, Timeout{Duration: 10 * time.Second}},
		{11, time.Second, Timeout{Duration: 10 * time.Second, Clamped: true}},
		{1e300, time.Second, Timeout{Duration: 10 * time.Second, Clamped: true}},
	}
	for _, tt := range tests {
		if got := s.Clamp(tt.seconds, tt.def); got != tt.want {
			t.Errorf("Clamp(%v, %v) under a 10s ceiling = %+v, want %+v", tt.seconds, tt.def, got, tt.want)
		}
	}
}
