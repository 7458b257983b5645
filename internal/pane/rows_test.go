package pane

import (
	"slices"
	"testing"
)

func TestSplitUnfinishedAndLastRowWith(t *testing.T) {
	rows := []string{"a", "b", "a", "$ ", "", " "}
	cases := []struct {
		cursorX    int
		whole      []string
		unfinished string
	}{
		{2, []string{"a", "b", "a"}, "$ "},
		{0, []string{"a", "b", "a", "$ "}, ""},
	}
	for _, c := range cases {
		whole, unfinished := SplitUnfinished(rows, c.cursorX)
		if !slices.Equal(whole, c.whole) || unfinished != c.unfinished {
			t.Errorf("SplitUnfinished(cursorX %d) = %q, %q; want %q, %q", c.cursorX, whole, unfinished, c.whole, c.unfinished)
		}
	}
	for _, c := range []struct {
		anchor uint32
		want   int
	}{{LineHash("a"), 2}, {LineHash("b"), 1}, {LineHash("zz"), -1}, {0, -1}} {
		if got := LastRowWith(rows, c.anchor); got != c.want {
			t.Errorf("LastRowWith(%d) = %d, want %d", c.anchor, got, c.want)
		}
	}
}
