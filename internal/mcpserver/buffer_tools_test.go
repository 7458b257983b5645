package mcpserver

import (
	"errors"
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/tmux"
)

func TestCheckKeysRefusesWhatCannotBeSent(t *testing.T) {
	many := make([]string, maxBatchKeys+1)
	for i := range many {
		many[i] = "q"
	}
	cases := []struct {
		keys []string
		want string // in the error; "" for none
	}{
		{[]string{"Escape", ":wq", "Enter"}, ""},
		{[]string{"q"}, ""},
		{many[:maxBatchKeys], ""},
		{nil, "keys is empty"},
		{[]string{}, "keys is empty"},
		{many, "more than 256"},
		{[]string{"a", ""}, "keys[1] is empty"},
		{[]string{"a\x00b"}, "NUL"},
		{[]string{strings.Repeat("x", maxBatchKeyBytes+1)}, "paste_text"},
	}
	for _, c := range cases {
		err := checkKeys(c.keys)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("checkKeys(%d keys %.20q): %v, want %q", len(c.keys), c.keys, err, c.want)
		}
	}
}

func TestCheckBufferName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"notes", true},
		{"buffer0", true},
		{"with space and ünïcode", true},
		{strings.Repeat("n", maxBufferName), true},
		{strings.Repeat("n", maxBufferName+1), false},
		{"new\nline", false},
		{"tab\there", false},
		{"esc\x1b[0m", false},
		{"del\x7f", false},
		{"bad\xffutf8", false},
	}
	for _, c := range cases {
		if err := checkText("buffer name", c.name, maxBufferName); (err == nil) != c.ok {
			t.Errorf("checkText(buffer name, %q) = %v, want ok %v", c.name, err, c.ok)
		}
	}
}

func TestServerStateReadsTheProbe(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{nil, stateLive},
		{errors.Join(errors.New("probing"), tmux.ErrNoAnswer), stateNotAnswering},
		{&tmux.CommandError{Message: "no server running on /tmp/tmux-0/x"}, stateStale},
		{&tmux.CommandError{Message: "error connecting to /tmp/tmux-0/x (Permission denied)"}, "unreachable: error connecting to /tmp/tmux-0/x (Permission denied)"},
		{errors.New("exec: no such file"), "unreachable: exec: no such file"},
	}
	for _, c := range cases {
		if got := serverState(c.err); got != c.want {
			t.Errorf("serverState(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
