package pane

import "strings"

// TrimBlank drops the blank rows at the bottom of a screen capture: the
// part of the screen nothing was written to yet.
func TrimBlank(rows []string) []string {
	for len(rows) > 0 && strings.TrimSpace(rows[len(rows)-1]) == "" {
		rows = rows[:len(rows)-1]
	}
	return rows
}

// SplitUnfinished takes the rows of a history capture (see TrimBlank) and
// separates the row the pane's cursor is on, when the cursor is past its
// start (cursorX > 0): a line not finished yet, such as a prompt.
func SplitUnfinished(rows []string, cursorX int) (whole []string, unfinished string) {
	rows = TrimBlank(rows)
	if len(rows) > 0 && cursorX > 0 {
		return rows[:len(rows)-1], rows[len(rows)-1]
	}
	return rows, ""
}

// LastRowWith returns the index of the last row whose [LineHash] is
// anchor, or -1.
func LastRowWith(rows []string, anchor uint32) int {
	for i := len(rows) - 1; i >= 0 && anchor != 0; i-- {
		if LineHash(rows[i]) == anchor {
			return i
		}
	}
	return -1
}
