package tmux

import (
	"bytes"
	"strconv"
)

// guard is the header of a %begin, %end or %error line: the server time,
// the command number and the flags (1 when this client sent the command).
type guard struct {
	time, number string
	flags        string
}

// parseGuard splits the fields after a guard keyword.
func parseGuard(rest []byte) (guard, bool) {
	f := bytes.Fields(rest)
	if len(f) != 3 {
		return guard{}, false
	}
	return guard{time: string(f[0]), number: string(f[1]), flags: string(f[2])}, true
}

// lineKind classifies one line of control-mode output read outside a reply.
type lineKind int

const (
	lineOther    lineKind = iota // a notification tmcp does not act on, or noise
	lineBegin                    // %begin
	lineEnd                      // %end
	lineError                    // %error
	lineOutput                   // %output or %extended-output
	linePause                    // %pause
	lineContinue                 // %continue
	lineExit                     // %exit
	lineSessionChanged
	lineLayout // a window or pane came, went or changed shape
)

// notification is one parsed line of control-mode output. Its pane and
// data alias the line: [notification.clone] one that must outlive it.
type notification struct {
	kind   lineKind
	guard  guard  // for lineBegin, lineEnd, lineError
	pane   []byte // for lineOutput, linePause and lineContinue: "%3"
	data   []byte // for lineOutput: the bytes as escaped by tmux; for lineExit: the reason
	age    int    // for lineOutput from %extended-output: milliseconds tmux held the bytes
	fields []string
}

// clone returns n with its own copy of what it took from the line.
func (n notification) clone() notification {
	n.pane = bytes.Clone(n.pane)
	n.data = bytes.Clone(n.data)
	return n
}

// parseNotification parses a line that arrived outside a reply block.
// Output data is left escaped: it is decoded only once the notification
// is acted on, into memory the parser reuses.
func parseNotification(line []byte) notification {
	word, rest, _ := bytes.Cut(line, []byte{' '})
	switch string(word) {
	case "%begin", "%end", "%error":
		g, ok := parseGuard(rest)
		if !ok {
			return notification{kind: lineOther}
		}
		k := lineBegin
		switch string(word) {
		case "%end":
			k = lineEnd
		case "%error":
			k = lineError
		}
		return notification{kind: k, guard: g}
	case "%output":
		pane, data, ok := bytes.Cut(rest, []byte{' '})
		if !ok {
			// A pane that wrote nothing but was flushed: no data.
			return notification{kind: lineOutput, pane: rest}
		}
		return notification{kind: lineOutput, pane: pane, data: data}
	case "%extended-output":
		// %extended-output %P AGE ... : DATA
		pane, tail, _ := bytes.Cut(rest, []byte{' '})
		head, data, _ := bytes.Cut(tail, []byte(" : "))
		ageField, _, _ := bytes.Cut(head, []byte{' '})
		age, _ := strconv.Atoi(string(ageField))
		return notification{kind: lineOutput, pane: pane, data: data, age: max(age, 0)}
	case "%pause":
		return notification{kind: linePause, pane: bytes.TrimSpace(rest)}
	case "%continue":
		return notification{kind: lineContinue, pane: bytes.TrimSpace(rest)}
	case "%exit":
		return notification{kind: lineExit, data: rest}
	case "%session-changed":
		return notification{kind: lineSessionChanged, fields: stringFields(rest)}
	case "%layout-change", "%window-close", "%unlinked-window-close", "%window-add", "%sessions-changed":
		return notification{kind: lineLayout}
	}
	return notification{kind: lineOther}
}

func stringFields(b []byte) []string {
	var out []string
	for _, f := range bytes.Fields(b) {
		out = append(out, string(f))
	}
	return out
}

// appendUnescaped appends to dst the bytes of %output data, decoding the
// octal escapes (\ooo) tmux writes for bytes below 0x20, the backslash and
// bytes above 0x7e. A malformed escape is kept as written.
func appendUnescaped(dst, data []byte) []byte {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\\')
		if i < 0 {
			return append(dst, data...)
		}
		dst = append(dst, data[:i]...)
		data = data[i:]
		if c, ok := octal3(data[1:]); ok {
			dst = append(dst, c)
			data = data[4:]
			continue
		}
		dst = append(dst, '\\')
		data = data[1:]
	}
	return dst
}

// octal3 reads the three octal digits, \000 to \377, that tmux writes
// after a backslash for one byte.
func octal3[S string | []byte](s S) (byte, bool) {
	if len(s) < 3 || s[0] < '0' || s[0] > '3' {
		return 0, false
	}
	n := 0
	for i := range 3 {
		c := s[i]
		if c < '0' || c > '7' {
			return 0, false
		}
		n = n*8 + int(c-'0')
	}
	return byte(n), true
}
