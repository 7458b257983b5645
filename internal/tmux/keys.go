package tmux

import (
	"strings"
	"unicode/utf8"
)

// keyNames are tmux's names of keys without a character of their own,
// lower-cased (tmux matches them in any case).
var keyNames = map[string]bool{
	"enter": true, "escape": true, "tab": true, "btab": true, "space": true, "bspace": true,
	"up": true, "down": true, "left": true, "right": true, "home": true, "end": true,
	"ic": true, "insert": true, "dc": true, "delete": true, "npage": true, "pagedown": true, "pgdn": true,
	"ppage": true, "pageup": true, "pgup": true, "kpenter": true,
	"f1": true, "f2": true, "f3": true, "f4": true, "f5": true, "f6": true,
	"f7": true, "f8": true, "f9": true, "f10": true, "f11": true, "f12": true,
}

// IsKeyName reports whether tmux takes k as the name of one key rather
// than as text to type: a named key, or one character with modifiers
// (C-c, M-x, ^C, C-S-Up).
func IsKeyName(k string) bool {
	modified := false
	for {
		switch {
		case len(k) > 2 && k[1] == '-' && strings.ContainsRune("CMScms", rune(k[0])):
			k, modified = k[2:], true
			continue
		case len(k) > 1 && k[0] == '^':
			k, modified = k[1:], true
			continue
		}
		break
	}
	lower := strings.ToLower(k)
	if keyNames[lower] || strings.HasPrefix(lower, "kp") && len(lower) == 3 {
		return true
	}
	return modified && utf8.RuneCountInString(k) == 1
}
