package tmux

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// EscapeFormat returns s with every '#' doubled, so an argument that tmux
// expands as a format (session and window names, start directories)
// arrives as the literal text s and never runs #(…).
func EscapeFormat(s string) string { return strings.ReplaceAll(s, "#", "##") }

// ErrFormatRunsCommand is returned by CheckFormat for a format that could
// make tmux run a shell command.
var ErrFormatRunsCommand = errors.New("format could run a shell command")

// CheckFormat refuses a caller's format that could run a command when
// expanded: #(…) runs one directly, and the E: and T: modifiers expand the
// value of an option or variable as a format of its own, which may hold #(…).
func CheckFormat(f string) error {
	if strings.Contains(f, "#(") {
		return fmt.Errorf("%w: #(…) is not allowed", ErrFormatRunsCommand)
	}
	for rest := f; ; {
		i := strings.Index(rest, "#{")
		if i < 0 {
			return nil
		}
		rest = rest[i+2:]
		mods, _, ok := strings.Cut(rest, ":")
		if !ok || strings.ContainsAny(mods, "}{") {
			continue
		}
		for _, m := range strings.Split(mods, ";") {
			if strings.HasPrefix(m, "E") || strings.HasPrefix(m, "T") {
				return fmt.Errorf("%w: the %q modifier expands a value as a format", ErrFormatRunsCommand, m[:1]+":")
			}
		}
	}
}

// Record and field separators for list formats: control characters that
// names cannot carry (tmux escapes them in names) and paths almost never do.
const (
	recordStart = "\x1e"
	fieldSep    = "\x1f"
)

// listFormat joins format variables into a -F argument whose output parse
// splits back into fields.
func listFormat(vars []string) string {
	var b strings.Builder
	b.WriteString(recordStart)
	for i, v := range vars {
		if i > 0 {
			b.WriteString(fieldSep)
		}
		b.WriteString("#{" + v + "}")
	}
	return b.String()
}

// parseRecords splits list output into records of n fields. A value holding
// a newline (a directory name can) continues on the next line, which does
// not start a record.
func parseRecords(lines []string, n int) ([][]string, error) {
	var joined []string
	for _, l := range lines {
		if strings.HasPrefix(l, recordStart) || len(joined) == 0 {
			joined = append(joined, strings.TrimPrefix(l, recordStart))
			continue
		}
		joined[len(joined)-1] += "\n" + l
	}
	out := make([][]string, 0, len(joined))
	for _, r := range joined {
		f := strings.Split(r, fieldSep)
		if len(f) != n {
			return nil, fmt.Errorf("unreadable tmux list output: %d fields, want %d", len(f), n)
		}
		out = append(out, f)
	}
	return out, nil
}

// fields reads typed values from one record in order.
type fields struct {
	f   []string
	i   int
	err error
}

func (r *fields) str() string {
	s := r.f[r.i]
	r.i++
	return s
}

func (r *fields) num() int {
	s := r.str()
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("field %d: %q is not a number", r.i, s)
	}
	return n
}

// numOr reads a number that tmux may leave empty, giving def then.
func (r *fields) numOr(def int) int {
	if r.f[r.i] == "" {
		r.i++
		return def
	}
	return r.num()
}

func (r *fields) flag() bool { return r.str() == "1" }
