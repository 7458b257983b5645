package pane

import (
	"testing"
	"time"
)

func TestTheFirstOutputIsKeptForAWhileAndTakenOnce(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		notes []firstOutput // noted in order, for panes %0, %1, ...
		pane  string
		want  string
	}{
		{"noted", []firstOutput{{at: t0, data: []byte("new")}}, "%0", "new"},
		{"never noted", []firstOutput{{at: t0, data: []byte("x")}}, "%1", ""},
		{"kept while others come", []firstOutput{{at: t0, data: []byte("a")}, {at: t0.Add(firstOutputKept), data: []byte("b")}}, "%0", "a"},
		{"dropped once stale", []firstOutput{{at: t0, data: []byte("a")}, {at: t0.Add(firstOutputKept + time.Second), data: []byte("b")}}, "%0", ""},
		{"the later one stays", []firstOutput{{at: t0, data: []byte("a")}, {at: t0.Add(firstOutputKept + time.Second), data: []byte("b")}}, "%1", "b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &Hub{panes: map[string]*watched{}, first: map[string]firstOutput{}}
			for i, n := range tc.notes {
				h.noteFirstOutput("%"+string(rune('0'+i)), n.data, n.at)
			}
			if f, _ := h.takeFirstOutput(tc.pane); string(f.data) != tc.want {
				t.Errorf("takeFirstOutput(%s) = %q, want %q", tc.pane, f.data, tc.want)
			}
			if f, ok := h.takeFirstOutput(tc.pane); ok {
				t.Errorf("taken twice: %q the second time, want nothing", f.data)
			}
		})
	}
}

// TestEachReArmsFirstOutputReplacesThePanesEarlierOne: a pane re-armed
// after its first output notes its next one with its own time, which a
// stream begun then is seeded with.
func TestEachReArmsFirstOutputReplacesThePanesEarlierOne(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	h := &Hub{panes: map[string]*watched{}, first: map[string]firstOutput{}}
	h.noteFirstOutput("%0", []byte("first"), t0)
	later := t0.Add(300 * time.Millisecond)
	h.noteFirstOutput("%0", []byte("after the re-arm"), later)
	if f, ok := h.takeFirstOutput("%0"); !ok || string(f.data) != "after the re-arm" || !f.at.Equal(later) {
		t.Errorf("takeFirstOutput = %q at %v (%v), want the re-arm's output at %v", f.data, f.at, ok, later)
	}
}
