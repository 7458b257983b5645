package mcpserver

import (
	"strings"
	"testing"
)

func TestCheckTitleRefusesWhatTmuxWouldNotSet(t *testing.T) {
	cases := []struct {
		title string
		want  string // "" when the title is fine
	}{
		{"build", ""},
		{"", ""},
		{"#{pane_id} #S %d é ☃", ""},
		{"a\tb", "control character"},
		{"line\nbreak", "control character"},
		{"esc\x1b[31m", "control character"},
		{"del\x7f", "control character"},
		{"bad\xffutf8", "not valid UTF-8"},
		{strings.Repeat("x", maxTitleBytes+1), "more than"},
	}
	for _, c := range cases {
		err := checkText("title", c.title, maxTitleBytes)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("checkText(title, %q) = %v, want it accepted", c.title, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("checkText(title, %q) = %v, want an error saying %q", c.title, err, c.want)
		}
	}
}
