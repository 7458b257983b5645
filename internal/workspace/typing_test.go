package workspace

import "testing"

func TestLooksLikePromptReadsTheRowUpToTheCursor(t *testing.T) {
	cases := []struct {
		row  string
		x    int
		want bool
	}{
		{"$ ", 2, true},
		{"# ", 2, true},
		{"user@host:~/src% ", 17, true},
		{"~/src ❯ ", 8, true},
		{"bash-5.2$ ", 10, true},
		{"", 0, false},
		{"loading-rc", 10, false},
		{"Password: ", 10, false},
		{"$ echo hi", 2, true}, // typed ahead: only what precedes the cursor counts
		{"echo hi", 7, false},
	}
	for _, c := range cases {
		if got := looksLikePrompt(c.row, c.x); got != c.want {
			t.Errorf("looksLikePrompt(%q, %d) = %v, want %v", c.row, c.x, got, c.want)
		}
	}
}

func TestShellInFrontKnowsShellsByName(t *testing.T) {
	cases := map[string]bool{"sh": true, "bash": true, "-zsh": true, "dash": true, "mksh": true, "fish": true,
		"/usr/bin/bash": true, "sleep": false, "vim": false, "": false}
	for cmd, want := range cases {
		if got := shellInFront(cmd); got != want {
			t.Errorf("shellInFront(%q) = %v, want %v", cmd, got, want)
		}
	}
}
