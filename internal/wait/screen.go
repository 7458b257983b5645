package wait

import (
	"strings"

	"github.com/tmcp/tmcp/internal/pane"
)

// newRows returns the rows of the screen after that were not yet on the
// screen before: the rows a program wrote in between. It aligns the two
// captures, allowing for scrolling and for the last row (a prompt) having
// grown; with no alignment (the screen was cleared, or more went by than
// the captures hold), every row of after not found in before is new.
func newRows(before, after []string) []string {
	rows, _ := alignRows(before, after)
	return rows
}

// alignRows is newRows, and whether the two captures aligned.
func alignRows(before, after []string) (rows []string, ok bool) {
	before, after = pane.TrimBlank(before), pane.TrimBlank(after)
	if len(before) == 0 {
		return after, true
	}
	for shift := 0; shift < len(before); shift++ {
		kept := before[shift:]
		if len(kept) > len(after) {
			continue
		}
		if n, ok := aligned(kept, after); ok {
			return after[n:], true
		}
	}
	seen := map[string]bool{}
	for _, r := range before {
		seen[r] = true
	}
	for _, r := range after {
		if !seen[r] {
			rows = append(rows, r)
		}
	}
	return rows, false
}

// rowsSince returns the rows of all, a read of a pane's whole history and
// screen, written after the capture before: those past the first place
// where before lies whole, or, when its oldest rows have left the history
// too, those newRows finds.
func rowsSince(before, all []string) []string {
	before, all = pane.TrimBlank(before), pane.TrimBlank(all)
	if len(before) == 0 {
		return all
	}
	for j := 0; j+len(before) <= len(all); j++ {
		if n, ok := aligned(before, all[j:]); ok {
			return all[j+n:]
		}
	}
	return newRows(before, all)
}

// aligned reports whether after starts with kept, and the index of the
// first new row: a last kept row that grew counts as new.
func aligned(kept, after []string) (int, bool) {
	for i, r := range kept {
		last := i == len(kept)-1
		switch {
		case after[i] == r:
		case last && strings.HasPrefix(after[i], r):
			return i, true
		default:
			return 0, false
		}
	}
	return len(kept), true
}

// echoes tells the shell's echo of text tmcp typed from the output of what
// it ran. Each typed line explains away one echoed line; the line of a
// run_command is known by its opening as well. The typed lines
// are looked up afresh for each piece of output (see refresh), so keys
// typed after a wait began are known too.
type echoes struct {
	typed func() []pane.TypedLine
	lines []pane.TypedLine // as of the last refresh
	used  map[uint64]bool
}

func newEchoes(typed func() []pane.TypedLine) *echoes {
	return &echoes{typed: typed, used: map[uint64]bool{}}
}

// refresh looks the typed lines up again. Text is recorded as typed before
// its keys are sent, so lines looked up once a piece of output arrived
// cover every echo in it.
func (e *echoes) refresh() { e.lines = e.typed() }

// isEcho reports whether line is the echo of a typed line (the prompt,
// then the text), and consumes that typed line.
func (e *echoes) isEcho(line string) bool {
	line = strings.TrimRight(line, " ")
	for _, t := range e.lines {
		if !e.used[t.Seq] && strings.HasSuffix(line, strings.TrimRight(t.Text, " ")) {
			e.used[t.Seq] = true
			return true
		}
	}
	return isRunLine(line)
}

// isRunLine reports whether a line holds the line a run_command typed,
// whichever tmcp typed it (one that restarted since does not know the
// lines the last one typed). The plain search keeps the pattern off the
// lines of ordinary output.
func isRunLine(line string) bool {
	return strings.Contains(line, "__tmcp") && typedRun.MatchString(line)
}

// minEchoPrefix is the shortest start of a typed line that, ending an
// unfinished line, is taken for its echo in progress.
const minEchoPrefix = 3

// isPartialEcho reports whether an unfinished line ends with the start of
// a typed line: the shell is echoing it.
func (e *echoes) isPartialEcho(partial string) bool {
	if isRunLine(partial) {
		return true
	}
	for _, t := range e.lines {
		if e.used[t.Seq] {
			continue
		}
		for k := len(t.Text); k >= min(minEchoPrefix, len(t.Text)) && k > 0; k-- {
			if strings.HasSuffix(partial, t.Text[:k]) {
				return true
			}
		}
	}
	return false
}
