package mcpserver

import (
	"testing"

	"github.com/tmcp/tmcp/internal/tmux"
)

// rect is a pane at columns left..right and rows top..bottom.
func rect(id string, left, top, right, bottom int) tmux.Rect {
	return tmux.Rect{PaneID: id, Left: left, Top: top, Right: right, Bottom: bottom}
}

func TestPaneAtFindsThePaneAtEachPlaceOfALayout(t *testing.T) {
	layouts := map[string]tmux.Geometry{
		// One pane.
		"single": {Width: 80, Height: 24, Panes: []tmux.Rect{rect("%0", 0, 0, 79, 23)}},
		// even-horizontal: side by side, the border at column 40.
		"side by side": {Width: 80, Height: 24, Panes: []tmux.Rect{rect("%0", 0, 0, 39, 23), rect("%1", 41, 0, 79, 23)}},
		// even-vertical: stacked, the border at row 12.
		"stacked": {Width: 80, Height: 24, Panes: []tmux.Rect{rect("%0", 0, 0, 79, 11), rect("%1", 0, 13, 79, 23)}},
		// Three columns; the centre falls inside the middle one.
		"three columns": {Width: 80, Height: 24, Panes: []tmux.Rect{rect("%0", 0, 0, 25, 23), rect("%1", 27, 0, 52, 23), rect("%2", 54, 0, 79, 23)}},
		// tiled 2×2.
		"tiled": {Width: 80, Height: 24, Panes: []tmux.Rect{
			rect("%0", 0, 0, 39, 11), rect("%1", 41, 0, 79, 11), rect("%2", 0, 13, 39, 23), rect("%3", 41, 13, 79, 23)}},
		// main-vertical: a tall main pane on the left, two stacked on the right.
		"main vertical": {Width: 80, Height: 24, Panes: []tmux.Rect{
			rect("%0", 0, 0, 49, 23), rect("%1", 51, 0, 79, 11), rect("%2", 51, 13, 79, 23)}},
		// main-horizontal: a wide main pane on top, three side by side below.
		"main horizontal": {Width: 90, Height: 30, Panes: []tmux.Rect{
			rect("%0", 0, 0, 89, 19), rect("%1", 0, 21, 29, 29), rect("%2", 31, 21, 59, 29), rect("%3", 61, 21, 89, 29)}},
		// Zoomed: the active pane covers the window whatever the saved layout.
		"zoomed": {Width: 80, Height: 24, Zoomed: true, Panes: []tmux.Rect{
			rect("%0", 0, 0, 39, 23), {PaneID: "%1", Left: 0, Top: 0, Right: 79, Bottom: 23, Active: true}}},
	}
	cases := []struct {
		layout string
		want   map[string]string // position → pane
	}{
		{"single", map[string]string{"top": "%0", "bottom-right": "%0", "center": "%0"}},
		{"side by side", map[string]string{
			"left": "%0", "right": "%1", "top-left": "%0", "top-right": "%1", "bottom-left": "%0", "bottom-right": "%1",
			"top": "%0", "bottom": "%0", "center": "%0"}},
		{"stacked", map[string]string{
			"top": "%0", "bottom": "%1", "top-left": "%0", "bottom-right": "%1", "left": "%0", "right": "%0", "center": "%0"}},
		{"three columns", map[string]string{"left": "%0", "center": "%1", "top": "%1", "bottom": "%1", "right": "%2"}},
		{"tiled", map[string]string{
			"top-left": "%0", "top-right": "%1", "bottom-left": "%2", "bottom-right": "%3", "center": "%0"}},
		{"main vertical", map[string]string{
			"left": "%0", "center": "%0", "top-right": "%1", "bottom-right": "%2", "right": "%1", "bottom-left": "%0"}},
		{"main horizontal", map[string]string{
			"top": "%0", "center": "%0", "bottom": "%2", "bottom-left": "%1", "bottom-right": "%3", "top-right": "%0"}},
		{"zoomed", map[string]string{"top-left": "%1", "center": "%1", "bottom-right": "%1"}},
	}
	for _, c := range cases {
		for pos, want := range c.want {
			if got := paneAt(layouts[c.layout], pos); got != want {
				t.Errorf("%s layout, %s: got pane %q, want %s", c.layout, pos, got, want)
			}
		}
	}
}

func TestPlacePointKnowsTheNinePlacesAndNothingElse(t *testing.T) {
	cases := []struct {
		position string
		x, y     int
		ok       bool
	}{
		{"top", 39, 0, true},
		{"bottom", 39, 23, true},
		{"left", 0, 11, true},
		{"right", 79, 11, true},
		{"center", 39, 11, true},
		{"centre", 39, 11, true},
		{" Top-Left ", 0, 0, true},
		{"top-right", 79, 0, true},
		{"bottom-left", 0, 23, true},
		{"bottom-right", 79, 23, true},
		{"left-top", 0, 0, false},
		{"top-center", 0, 0, false},
		{"", 0, 0, false},
		{"north", 0, 0, false},
	}
	for _, c := range cases {
		x, y, ok := placePoint(c.position, 80, 24)
		if ok != c.ok || ok && (x != c.x || y != c.y) {
			t.Errorf("placePoint(%q, 80, 24) = %d, %d, %v; want %d, %d, %v", c.position, x, y, ok, c.x, c.y, c.ok)
		}
	}
}
