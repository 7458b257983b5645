package pane

import "testing"

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
