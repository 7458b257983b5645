package wait

import (
	"strings"
	"testing"
)

func TestTypedAtPromptReadsWhatFollowsThePromptsSign(t *testing.T) {
	for _, tt := range []struct {
		name, row string
		cursor    int
		want      string
	}{
		{"an empty prompt", "$ ", 2, ""},
		{"a line typed", "$ echo half", 11, "echo half"},
		{"root's prompt", "root@vm:/tmp# make -j", 21, "make -j"},
		{"zsh's", "host% ls", 8, "ls"},
		{"fish's, with a path", "root@vm /w/m (main)# ", 21, ""},
		{"a starship arrow", "~/src ❯ git st", 14, "git st"},
		{"text right of the cursor is a right prompt or a suggestion", "$ ls          10:42", 4, "ls"},
		{"the cursor inside the line", "$ echo half", 6, "echo"},
		{"output with no newline, the prompt after it", "cost $ 5$ ", 10, ""},
		{"a prompt of another style: not known", "[me@vm]: echo", 13, ""},
		{"no prompt drawn yet", "", 0, ""},
		{"a sign inside what was typed: only what follows it is named", "$ echo 'a > b'", 14, "b'"},
	} {
		if got := typedAtPrompt(tt.row, tt.cursor); got != tt.want {
			t.Errorf("%s: typedAtPrompt(%q, %d) = %q, want %q", tt.name, tt.row, tt.cursor, got, tt.want)
		}
	}
}

func TestPromptDrawnSeesAPromptsSignAtTheCursor(t *testing.T) {
	zshMark := "%" + strings.Repeat(" ", 79)
	for _, tt := range []struct {
		row     string
		cursorX int
		want    bool
	}{
		{"$ ", 2, true},
		{"$", 2, true}, // the blank after the sign never written
		{"user@host:~/src$ ", 17, true},
		{"root@vm /w/m (main)# ", 21, true},
		{"❯ ", 2, true},
		{"$ echo half", 11, false}, // a line typed at it
		{zshMark, 79, false},       // zsh's mark before its prompt
		{"one", 3, false},          // output
		{"→ ", 2, false},           // a prompt of another style
		{"", 0, false},
	} {
		if got := promptDrawn(tt.row, tt.cursorX); got != tt.want {
			t.Errorf("promptDrawn(%q, %d) = %v, want %v", tt.row, tt.cursorX, got, tt.want)
		}
	}
}
