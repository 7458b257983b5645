package tmux

import (
	"strings"
	"testing"
)

func TestLayoutChecksumMatchesTmux(t *testing.T) {
	// Layouts as tmux 3.3a reported them in window_layout.
	for _, layout := range []string{
		"0213,80x24,0,0{40x24,0,0,3,39x24,41,0,4}",
		"6b21,80x24,0,0[80x12,0,0{40x12,0,0,0,39x12,41,0,2},80x11,0,13,1]",
		"27d1,80x24,0,0[80x11,0,0{39x11,0,0,0,40x11,40,0,2},80x12,0,12,1]",
		"eb98,100x30,0,0{50x30,0,0,3,49x30,51,0,4}",
	} {
		sum, body, _ := strings.Cut(layout, ",")
		if got := LayoutChecksum(body); got != parseHex(t, sum) {
			t.Errorf("checksum of %q = %04x, want %s", body, got, sum)
		}
	}
}

func parseHex(t *testing.T, s string) uint16 {
	t.Helper()
	var v uint16
	for _, c := range s {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= uint16(c - '0')
		case c >= 'a' && c <= 'f':
			v |= uint16(c-'a') + 10
		default:
			t.Fatalf("not hex: %q", s)
		}
	}
	return v
}

func TestCheckLayoutAcceptsNamesAndWellFormedStrings(t *testing.T) {
	cases := []struct {
		in, arg string
		panes   int
	}{
		{"tiled", "tiled", 0},
		{"main-vertical", "main-vertical", 0},
		{"0213,80x24,0,0{40x24,0,0,3,39x24,41,0,4}", "0213,80x24,0,0{40x24,0,0,3,39x24,41,0,4}", 2},
		// Without its checksum, the checksum is added.
		{"80x24,0,0{40x24,0,0,3,39x24,41,0,4}", "0213,80x24,0,0{40x24,0,0,3,39x24,41,0,4}", 2},
		{"6B21,80x24,0,0[80x12,0,0{40x12,0,0,0,39x12,41,0,2},80x11,0,13,1]", "6b21,80x24,0,0[80x12,0,0{40x12,0,0,0,39x12,41,0,2},80x11,0,13,1]", 3},
		{"80x24,0,0,7", "", 1},
	}
	for _, c := range cases {
		arg, panes, err := CheckLayout(c.in)
		if c.arg == "" {
			c.arg = arg // only the count matters
		}
		if err != nil || arg != c.arg || panes != c.panes {
			t.Errorf("CheckLayout(%q) = %q, %d, %v; want %q, %d", c.in, arg, panes, err, c.arg, c.panes)
		}
	}
}

func TestCheckLayoutRefusesWhatTmuxWouldMisread(t *testing.T) {
	cases := []struct{ in, want string }{
		// tmux 3.3a's server crashes on these.
		{"main", "neither a named layout"},
		{"m", "neither a named layout"},
		{"tiledx", "neither a named layout"},
		{"zzzz", "neither a named layout"},
		{"", "neither a named layout"},
		{"bogus", "neither a named layout"},
		{"ffff,80x24,0,0{40x24,0,0,3,39x24,41,0,4}", "checksum ffff does not match"},
		{"80x24,0,0", "needs its id"},
		{"80x24,0,0{40x24,0,0,3,39x24,41,0,4", "'}' expected"},
		{"80x24,0,0{40x24,0,0,3]", "'}' expected"},
		{"80x24,0,0{}", "a number expected"},
		{"0x24,0,0,1", "out of range"},
		{"80x24,0,0,1 trailing", "unexpected ' '"},
		{"80x24,0,0,1;kill-server", "unexpected ';'"},
		{"1234567890x24,0,0,1", "a number expected"},
		{strings.Repeat("1x1,0,0{", 70) + "1x1,0,0,1" + strings.Repeat("}", 70), "nested too deep"},
	}
	for _, c := range cases {
		arg, _, err := CheckLayout(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckLayout(%q) = %q, %v; want an error saying %q", c.in, arg, err, c.want)
		}
	}
}
