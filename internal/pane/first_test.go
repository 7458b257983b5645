package pane

import (
	"testing"
	"time"
)

func TestFirstOutputSince(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		notes []firstOutput // noted in order, for panes %0, %1, ...
		pane  string
		since time.Time
		want  string
	}{
		{"after the call", []firstOutput{{at: t0, data: []byte("new")}}, "%0", t0.Add(-time.Millisecond), "new"},
		{"at the call", []firstOutput{{at: t0, data: []byte("new")}}, "%0", t0, "new"},
		{"before the call", []firstOutput{{at: t0, data: []byte("old")}}, "%0", t0.Add(time.Millisecond), ""},
		{"never noted", []firstOutput{{at: t0, data: []byte("x")}}, "%1", time.Time{}, ""},
		{"kept while others come", []firstOutput{{at: t0, data: []byte("a")}, {at: t0.Add(firstOutputKept), data: []byte("b")}}, "%0", time.Time{}, "a"},
		{"dropped once stale", []firstOutput{{at: t0, data: []byte("a")}, {at: t0.Add(firstOutputKept + time.Second), data: []byte("b")}}, "%0", time.Time{}, ""},
		{"the later one stays", []firstOutput{{at: t0, data: []byte("a")}, {at: t0.Add(firstOutputKept + time.Second), data: []byte("b")}}, "%1", time.Time{}, "b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &Hub{panes: map[string]*watched{}, first: map[string]firstOutput{}}
			for i, n := range tc.notes {
				h.noteFirstOutput("%"+string(rune('0'+i)), n.data, n.at)
			}
			if got := string(h.FirstOutputSince(tc.pane, tc.since)); got != tc.want {
				t.Errorf("FirstOutputSince(%s) = %q, want %q", tc.pane, got, tc.want)
			}
			if got := h.FirstOutputSince(tc.pane, time.Time{}); got != nil {
				t.Errorf("taken twice: %q the second time, want nothing", got)
			}
		})
	}
}
