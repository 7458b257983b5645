package tmux

import "testing"

func TestIsKeyNameTellsKeysFromText(t *testing.T) {
	cases := map[string]bool{
		"Enter": true, "enter": true, "Escape": true, "C-c": true, "c-c": true, "M-x": true, "^C": true,
		"C-S-Up": true, "S-Tab": true, "F12": true, "PageDown": true, "KP5": true, "BSpace": true,
		"q": false, ":wq": false, "echo hi": false, "make": false, "C-": false, "^": false, "^abc": false,
		"Enter2": false, "-l": false, "é": false,
	}
	for k, want := range cases {
		if got := IsKeyName(k); got != want {
			t.Errorf("IsKeyName(%q) = %v, want %v", k, got, want)
		}
	}
}
