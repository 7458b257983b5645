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
