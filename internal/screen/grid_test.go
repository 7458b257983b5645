package screen

import (
	"fmt"
	"strings"
	"testing"
)

// at names a cell of a parsed grid: its row and column.
type at struct{ row, col int }

func TestParseReadsSGRAsATerminalDoes(t *testing.T) {
	red, green := Indexed(1), Indexed(2)
	cases := []struct {
		name string
		rows []string
		cols int
		want map[at]Cell
	}{
		{"plain text in the default style", []string{"ab"}, 4, map[at]Cell{
			{0, 0}: {Text: "a", Width: 1}, {0, 1}: {Text: "b", Width: 1}, {0, 2}: {Width: 1}}},
		{"a 16-colour foreground and its reset", []string{"\x1b[31mr\x1b[39md"}, 2, map[at]Cell{
			{0, 0}: {Text: "r", Width: 1, Style: Style{FG: red}}, {0, 1}: {Text: "d", Width: 1}}},
		{"bright colours", []string{"\x1b[91;102mb"}, 1, map[at]Cell{
			{0, 0}: {Text: "b", Width: 1, Style: Style{FG: Indexed(9), BG: Indexed(10)}}}},
		{"a background and its reset", []string{"\x1b[42m \x1b[49m "}, 2, map[at]Cell{
			{0, 0}: {Text: " ", Width: 1, Style: Style{BG: green}}, {0, 1}: {Text: " ", Width: 1}}},
		{"256 colours, ; form", []string{"\x1b[38;5;202;48;5;17mx"}, 1, map[at]Cell{
			{0, 0}: {Text: "x", Width: 1, Style: Style{FG: Indexed(202), BG: Indexed(17)}}}},
		{"256 colours, : form", []string{"\x1b[38:5:202mx"}, 1, map[at]Cell{
			{0, 0}: {Text: "x", Width: 1, Style: Style{FG: Indexed(202)}}}},
		{"true colour, ; form", []string{"\x1b[38;2;10;200;30;48;2;1;2;3mx"}, 1, map[at]Cell{
			{0, 0}: {Text: "x", Width: 1, Style: Style{FG: RGB(10, 200, 30), BG: RGB(1, 2, 3)}}}},
		{"true colour, : form with and without a colour space", []string{"\x1b[38:2::10:200:30mx\x1b[38:2:4:5:6my"}, 2, map[at]Cell{
			{0, 0}: {Text: "x", Width: 1, Style: Style{FG: RGB(10, 200, 30)}}, {0, 1}: {Text: "y", Width: 1, Style: Style{FG: RGB(4, 5, 6)}}}},
		{"a channel past 255 is clamped", []string{"\x1b[38;2;300;0;0mx"}, 1, map[at]Cell{
			{0, 0}: {Text: "x", Width: 1, Style: Style{FG: RGB(255, 0, 0)}}}},
		{"an underline colour takes its parameters and changes nothing else", []string{"\x1b[58;2;1;2;3;31mx\x1b[58:5:9;4my"}, 2, map[at]Cell{
			{0, 0}: {Text: "x", Width: 1, Style: Style{FG: red}}, {0, 1}: {Text: "y", Width: 1, Style: Style{FG: red, Attr: Underline}}}},
		{"attributes on and off", []string{"\x1b[1;2;3mA\x1b[22mB\x1b[23mC"}, 3, map[at]Cell{
			{0, 0}: {Text: "A", Width: 1, Style: Style{Attr: Bold | Faint | Italic}},
			{0, 1}: {Text: "B", Width: 1, Style: Style{Attr: Italic}},
			{0, 2}: {Text: "C", Width: 1}}},
		{"underline styles", []string{"\x1b[4mA\x1b[4:3mB\x1b[4:2mC\x1b[21mD\x1b[4:0mE\x1b[4m\x1b[24mF"}, 6, map[at]Cell{
			{0, 0}: {Text: "A", Width: 1, Style: Style{Attr: Underline}},
			{0, 1}: {Text: "B", Width: 1, Style: Style{Attr: Underline}},
			{0, 2}: {Text: "C", Width: 1, Style: Style{Attr: DoubleUnderline}},
			{0, 3}: {Text: "D", Width: 1, Style: Style{Attr: DoubleUnderline}},
			{0, 4}: {Text: "E", Width: 1},
			{0, 5}: {Text: "F", Width: 1}}},
		{"reverse, hidden, strike, overline, blink and their resets", []string{"\x1b[7;8;9;53;5mA\x1b[27;28;29;55;25mB"}, 2, map[at]Cell{
			{0, 0}: {Text: "A", Width: 1, Style: Style{Attr: Reverse | Hidden | Strike | Overline | Blink}},
			{0, 1}: {Text: "B", Width: 1}}},
		{"0 and an empty SGR reset everything", []string{"\x1b[1;31;42mA\x1b[0mB\x1b[7mC\x1b[mD"}, 4, map[at]Cell{
			{0, 0}: {Text: "A", Width: 1, Style: Style{FG: red, BG: green, Attr: Bold}},
			{0, 1}: {Text: "B", Width: 1}, {0, 2}: {Text: "C", Width: 1, Style: Style{Attr: Reverse}}, {0, 3}: {Text: "D", Width: 1}}},
		{"the style runs on into the next row, as tmux writes only changes", []string{"\x1b[41m  ", "x\x1b[49my"}, 2, map[at]Cell{
			{0, 1}: {Text: " ", Width: 1, Style: Style{BG: Indexed(1)}},
			{1, 0}: {Text: "x", Width: 1, Style: Style{BG: Indexed(1)}}, {1, 1}: {Text: "y", Width: 1}}},
		{"a wide character takes two columns", []string{"漢x😀"}, 5, map[at]Cell{
			{0, 0}: {Text: "漢", Width: 2}, {0, 1}: {Width: 0}, {0, 2}: {Text: "x", Width: 1},
			{0, 3}: {Text: "😀", Width: 2}, {0, 4}: {Width: 0}}},
		{"a wide character with no room left is not drawn", []string{"ab漢"}, 3, map[at]Cell{
			{0, 2}: {Width: 1}}},
		{"box drawing is one column", []string{"┌─┐"}, 3, map[at]Cell{
			{0, 0}: {Text: "┌", Width: 1}, {0, 2}: {Text: "┐", Width: 1}}},
		{"a combining mark joins the character before", []string{"e\u0301x"}, 2, map[at]Cell{
			{0, 0}: {Text: "e\u0301", Width: 1}, {0, 1}: {Text: "x", Width: 1}}},
		{"a row longer than the pane is cut", []string{"abcdef"}, 3, map[at]Cell{
			{0, 2}: {Text: "c", Width: 1}}},
		{"other CSI sequences and OSC strings are skipped", []string{"\x1b[2K\x1b]8;;https://x\x1b\\a\x1b]0;t\x07b\x1b[?25lc"}, 3, map[at]Cell{
			{0, 0}: {Text: "a", Width: 1}, {0, 1}: {Text: "b", Width: 1}, {0, 2}: {Text: "c", Width: 1}}},
		{"SO and SI select DEC line drawing", []string{"\x0elqk\x0fq"}, 4, map[at]Cell{
			{0, 0}: {Text: "┌", Width: 1}, {0, 1}: {Text: "─", Width: 1}, {0, 2}: {Text: "┐", Width: 1}, {0, 3}: {Text: "q", Width: 1}}},
		{"ESC ( 0 and ESC ( B do too", []string{"\x1b(0x\x1b(Bx"}, 2, map[at]Cell{
			{0, 0}: {Text: "│", Width: 1}, {0, 1}: {Text: "x", Width: 1}}},
		{"a tab moves to the next stop", []string{"a\tb"}, 10, map[at]Cell{
			{0, 1}: {Width: 1}, {0, 8}: {Text: "b", Width: 1}}},
		{"a sequence cut off at the end of a row is dropped", []string{"a\x1b[3", "b"}, 1, map[at]Cell{
			{0, 0}: {Text: "a", Width: 1}, {1, 0}: {Text: "b", Width: 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := Parse(c.rows, c.cols)
			if g.Rows() != len(c.rows) || g.Cols != c.cols {
				t.Fatalf("Parse(%q, %d) is %d×%d, want %d×%d", c.rows, c.cols, g.Cols, g.Rows(), c.cols, len(c.rows))
			}
			for i, row := range g.Cells {
				if len(row) != c.cols {
					t.Fatalf("row %d has %d cells, want %d", i, len(row), c.cols)
				}
			}
			for pos, want := range c.want {
				if got := g.Cells[pos.row][pos.col]; got != want {
					t.Errorf("Parse(%q): cell %d,%d is %s, want %s", c.rows, pos.row, pos.col, show(got), show(want))
				}
			}
		})
	}
}

func show(c Cell) string {
	return fmt.Sprintf("{%q w%d fg%+v bg%+v attr%#x}", c.Text, c.Width, c.Style.FG, c.Style.BG, c.Style.Attr)
}

func FuzzParse(f *testing.F) {
	f.Add("\x1b[31;1mred\x1b[0m 漢\x1b[38:2::1:2:3m\x0eq\x0f\t\x1b]8;;x\x07", 20)
	f.Add("\x1b[38;5", 3)
	f.Fuzz(func(t *testing.T, s string, cols int) {
		cols = cols%300 + 1
		if cols < 1 {
			cols = -cols + 1
		}
		g := Parse(strings.Split(s, "\n"), cols)
		for _, row := range g.Cells {
			if len(row) != cols {
				t.Fatalf("a row of %d cells, want %d", len(row), cols)
			}
			for x := 0; x < cols; x++ {
				if w := row[x].Width; w == 2 && (x+1 >= cols || row[x+1].Width != 0) {
					t.Fatalf("a wide cell at %d without the column it covers: %q", x, s)
				}
			}
		}
	})
}
