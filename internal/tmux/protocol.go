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
	lineOther  lineKind = iota // a notification tmcp does not act on, or noise
	lineBegin                  // %begin
	lineEnd                    // %end
	lineError                  // %error
	lineOutput                 // %output or %extended-output
	linePause                  // %pause
	lineExit                   // %exit
	lineSessionChanged
	lineLayout // a window or pane came, went or changed shape
)

// notification is one parsed line of control-mode output.
type notification struct {
	kind   lineKind
	guard  guard  // for lineBegin, lineEnd, lineError
	pane   string // for lineOutput and linePause: "%3"
	data   []byte // for lineOutput: the unescaped bytes; for lineExit: the reason
	fields []string
}

// parseNotification parses a line that arrived outside a reply block.
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
			return notification{kind: lineOutput, pane: string(rest)}
		}
		return notification{kind: lineOutput, pane: string(pane), data: unescapeOutput(data)}
	case "%extended-output":
		// %extended-output %P AGE ... : DATA
		pane, tail, _ := bytes.Cut(rest, []byte{' '})
		_, data, _ := bytes.Cut(tail, []byte(" : "))
		return notification{kind: lineOutput, pane: string(pane), data: unescapeOutput(data)}
	case "%pause":
		return notification{kind: linePause, pane: string(bytes.TrimSpace(rest))}
	case "%exit":
		return notification{kind: lineExit, data: append([]byte(nil), rest...)}
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

// unescapeOutput decodes the octal escapes (\ooo) tmux uses in %output data
// for bytes below 0x20, the backslash and bytes above 0x7e. A malformed
// escape is kept as written.
func unescapeOutput(data []byte) []byte {
	if bytes.IndexByte(data, '\\') < 0 {
		return append([]byte(nil), data...)
	}
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '\\' && i+3 < len(data) && isOctal(data[i+1]) && isOctal(data[i+2]) && isOctal(data[i+3]) {
			v, _ := strconv.ParseUint(string(data[i+1:i+4]), 8, 16)
			out = append(out, byte(v))
			i += 3
			continue
		}
		out = append(out, c)
	}
	return out
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }
