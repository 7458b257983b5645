package tmux

import (
	"errors"
	"strings"
)

// ErrNUL is returned for an argument holding a NUL byte: tmux arguments are
// C strings, so no quoting can carry one.
var ErrNUL = errors.New("tmux argument contains a NUL byte")

// Quote returns s quoted for tmux's command parser so that it arrives as
// exactly one argument holding exactly the bytes of s.
//
// Every byte outside a small safe set is written as a three-digit octal
// escape inside double quotes. That covers the parser's specials (newline,
// ';', quotes, '$', '~', '#', '{', '}', '\') and bytes that are not valid
// UTF-8, which would otherwise depend on how tmux reads the line.
func Quote(s string) (string, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", ErrNUL
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isSafeByte(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('\\')
		b.WriteByte('0' + c>>6)
		b.WriteByte('0' + (c>>3)&7)
		b.WriteByte('0' + c&7)
	}
	b.WriteByte('"')
	return b.String(), nil
}

// isSafeByte reports whether c may appear unescaped inside double quotes.
func isSafeByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte(" %@:.,_-+=/!?*&()[]<>|^'`", c) >= 0
}

// commandLine joins a command and its arguments into one control-mode line,
// without the trailing newline.
func commandLine(args []string) (string, error) {
	if len(args) == 0 {
		return "", errors.New("empty tmux command")
	}
	var b strings.Builder
	for i, a := range args {
		q, err := Quote(a)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(q)
	}
	return b.String(), nil
}
