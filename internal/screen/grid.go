// Package screen holds a pane's cells and draws them: it reads the rows
// tmux's capture-pane -e prints, with their SGR sequences, into a [Grid]
// of styled cells, and a [Renderer] draws a grid as a terminal would, with
// the Go Mono font built in, into a bounded PNG.
package screen

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// ColorKind says which of a terminal's colour spaces a [Color] is in.
type ColorKind uint8

const (
	DefaultColor ColorKind = iota // the theme's foreground or background
	IndexedColor                  // one of the 256 palette entries
	RGBColor                      // a 24-bit colour
)

// Color is a cell's foreground or background colour.
type Color struct {
	Kind    ColorKind
	Index   uint8 // for IndexedColor: 0–15 the theme's, 16–255 xterm's cube and greys
	R, G, B uint8 // for RGBColor
}

// Indexed returns palette colour i.
func Indexed(i uint8) Color { return Color{Kind: IndexedColor, Index: i} }

// RGB returns a 24-bit colour.
func RGB(r, g, b uint8) Color { return Color{Kind: RGBColor, R: r, G: g, B: b} }

// Attr is a set of SGR attributes.
type Attr uint16

const (
	Bold Attr = 1 << iota
	Faint
	Italic
	Underline
	DoubleUnderline
	Blink
	Reverse
	Hidden
	Strike
	Overline
)

// Style is how a cell is drawn.
type Style struct {
	FG, BG Color
	Attr   Attr
}

// Cell is one column of one row.
type Cell struct {
	Text  string // the character and its combining marks; "" for a blank cell
	Width int    // columns it takes: 1, 2 for a wide character, 0 for the column a wide one covers
	Style Style
}

// Grid is a rectangle of cells, Cols wide, each row in Cells.
type Grid struct {
	Cols  int
	Cells [][]Cell
}

// Rows is the number of rows.
func (g *Grid) Rows() int { return len(g.Cells) }

// Parse reads the rows capture-pane -e -N prints for a pane cols wide.
// The style runs on from one row to the next, as tmux writes only what
// changes. A row shorter than cols is padded with blank cells, a longer one
// cut; a wide character takes two columns (go-runewidth's width, which
// follows the same Unicode tables as tmux's). Escape sequences other than
// SGR are skipped; SO and SI switch to and from the DEC line-drawing set,
// whose characters become their Unicode box-drawing equivalents.
func Parse(rows []string, cols int) *Grid {
	g := &Grid{Cols: cols, Cells: make([][]Cell, len(rows))}
	// Ambiguous-width characters (box drawing among them) are one column,
	// as in a UTF-8 locale outside East Asia, whatever this process's locale.
	p := parser{width: &runewidth.Condition{StrictEmojiNeutral: true}}
	for i, row := range rows {
		g.Cells[i] = p.row(row, cols)
	}
	return g
}

// parser carries the style and character set from one row to the next.
type parser struct {
	style   Style
	lineSet bool // SO or ESC ( 0: the DEC special graphics set is in use
	width   *runewidth.Condition
}

const (
	esc = 0x1b
	bel = 0x07
	so  = 0x0e
	si  = 0x0f
)

// tabStop is the width of tmux's default tab stops.
const tabStop = 8

func (p *parser) row(s string, cols int) []Cell {
	cells := make([]Cell, cols)
	for i := range cells {
		cells[i].Width = 1
	}
	x := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == esc:
			i = p.escape(s, i)
			continue
		case c == so:
			p.lineSet = true
		case c == si:
			p.lineSet = false
		case c == '\t':
			x = min((x/tabStop+1)*tabStop, cols)
		case c < 0x20 || c == 0x7f:
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			text := s[i : i+n]
			if p.lineSet {
				if d, ok := decLineDrawing(r); ok {
					r, text = d, string(d)
				}
			}
			i += n
			// Combining marks and other zero-width runes join the character before.
			for i < len(s) {
				m, k := utf8.DecodeRuneInString(s[i:])
				if m < 0x20 || p.width.RuneWidth(m) != 0 {
					break
				}
				text += s[i : i+k]
				i += k
			}
			w := p.width.RuneWidth(r)
			if w == 0 {
				if x > 0 && cells[x-1].Text != "" {
					cells[x-1].Text += text
				}
				continue
			}
			if x+w > cols {
				x = cols // no room: tmux would have wrapped it onto the next row
				continue
			}
			cells[x] = Cell{Text: text, Width: w, Style: p.style}
			for k := 1; k < w; k++ {
				cells[x+k] = Cell{Width: 0, Style: p.style}
			}
			x += w
			continue
		}
		i++
	}
	return cells
}

// escape consumes the escape sequence at s[i] and returns the index after
// it, applying it when it is SGR.
func (p *parser) escape(s string, i int) int {
	if i+1 >= len(s) {
		return len(s)
	}
	switch s[i+1] {
	case '[': // CSI: parameters, intermediates, a final byte in 0x40–0x7e
		j := i + 2
		for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
			j++
		}
		if j < len(s) && s[j] == 'm' {
			p.sgr(s[i+2 : j])
		}
		return min(j+1, len(s))
	case ']', 'P', '_', '^': // strings ended by BEL or ST (ESC \)
		for j := i + 2; j < len(s); j++ {
			if s[j] == bel {
				return j + 1
			}
			if s[j] == esc && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	case '(': // designate G0: line drawing (0) or ASCII (B)
		if i+2 < len(s) && (s[i+2] == '0' || s[i+2] == 'B') {
			p.lineSet = s[i+2] == '0'
		}
		return min(i+3, len(s))
	case ')', '*', '+': // designate G1–G3: one more byte
		return min(i+3, len(s))
	}
	return i + 2
}

// sgr applies one Select Graphic Rendition sequence's parameters, in
// both the ';' and the ':' (ITU T.416) forms of extended colours.
func (p *parser) sgr(params string) {
	if params == "" {
		p.style = Style{}
		return
	}
	fields := strings.Split(params, ";")
	for i := 0; i < len(fields); i++ {
		sub := strings.Split(fields[i], ":")
		n := atoi(sub[0])
		if set, unset, ok := attrParam(n); ok {
			p.style.Attr = p.style.Attr&^unset | set
			continue
		}
		switch {
		case n == 0:
			p.style = Style{}
		case n == 4: // 4:0 off, 4:2 double, 4:1 and 4:3–4:5 (curly, dotted, dashed) drawn single
			p.style.Attr &^= Underline | DoubleUnderline
			switch {
			case len(sub) == 1:
				p.style.Attr |= Underline
			case sub[1] == "0":
			case sub[1] == "2":
				p.style.Attr |= DoubleUnderline
			default:
				p.style.Attr |= Underline
			}
		case n >= 30 && n <= 37:
			p.style.FG = Indexed(uint8(n - 30))
		case n == 38, n == 48, n == 58:
			var c Color
			var ok bool
			if len(sub) > 1 {
				c, ok = extendedColor(sub[1:], true)
			} else {
				var used int
				c, ok, used = extendedColorFields(fields[i+1:])
				i += used
			}
			switch {
			case !ok || n == 58: // underline colour: drawn in the text's colour
			case n == 38:
				p.style.FG = c
			default:
				p.style.BG = c
			}
		case n == 39:
			p.style.FG = Color{}
		case n >= 40 && n <= 47:
			p.style.BG = Indexed(uint8(n - 40))
		case n == 49:
			p.style.BG = Color{}
		case n == 53:
			p.style.Attr |= Overline
		case n == 55:
			p.style.Attr &^= Overline
		case n >= 90 && n <= 97:
			p.style.FG = Indexed(uint8(n - 90 + 8))
		case n >= 100 && n <= 107:
			p.style.BG = Indexed(uint8(n - 100 + 8))
		}
	}
}

// attrParam says which attributes an SGR parameter sets and clears, for
// the parameters that do only that.
func attrParam(n int) (set, unset Attr, ok bool) {
	params := [...]struct {
		n          int
		set, unset Attr
	}{
		{1, Bold, 0}, {2, Faint, 0}, {3, Italic, 0}, {5, Blink, 0}, {6, Blink, 0}, {7, Reverse, 0}, {8, Hidden, 0},
		{9, Strike, 0}, {21, DoubleUnderline, Underline}, {22, 0, Bold | Faint}, {23, 0, Italic},
		{24, 0, Underline | DoubleUnderline}, {25, 0, Blink}, {27, 0, Reverse}, {28, 0, Hidden}, {29, 0, Strike},
		{53, Overline, 0}, {55, 0, Overline},
	}
	for _, p := range params {
		if p.n == n {
			return p.set, p.unset, true
		}
	}
	return 0, 0, false
}

// extendedColorFields reads the colour after a 38 or 48 in the ';' form
// (5;N or 2;R;G;B) and says how many fields it took.
func extendedColorFields(f []string) (Color, bool, int) {
	if len(f) == 0 {
		return Color{}, false, 0
	}
	switch f[0] {
	case "5":
		if len(f) < 2 {
			return Color{}, false, len(f)
		}
		c, ok := extendedColor(f[:2], false)
		return c, ok, 2
	case "2":
		if len(f) < 4 {
			return Color{}, false, len(f)
		}
		c, ok := extendedColor(f[:4], false)
		return c, ok, 4
	}
	return Color{}, false, 1
}

// extendedColor reads 5,N or 2,R,G,B; in the ':' form (colonForm) an RGB
// colour may carry a colour-space id first (2::R:G:B or 2:ID:R:G:B).
func extendedColor(f []string, colonForm bool) (Color, bool) {
	switch f[0] {
	case "5":
		if len(f) >= 2 {
			if n, err := strconv.Atoi(f[1]); err == nil && n >= 0 && n <= 255 {
				return Indexed(uint8(n)), true
			}
		}
	case "2":
		rgb := f[1:]
		if colonForm && len(rgb) == 4 {
			rgb = rgb[1:]
		}
		if len(rgb) == 3 {
			return RGB(channel(rgb[0]), channel(rgb[1]), channel(rgb[2])), true
		}
	}
	return Color{}, false
}

func channel(s string) uint8 { return uint8(min(max(atoi(s), 0), 255)) }

// atoi reads a decimal parameter; an empty or malformed one is 0, as
// terminals take it.
func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}

// decLineDrawing maps a character of the DEC special graphics set, which
// programs select with SO or ESC ( 0 to draw boxes, to Unicode.
func decLineDrawing(r rune) (rune, bool) {
	const from, to = "`afgjklmnopqrstuvwxyz{|}~", "◆▒°±┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·"
	if i := strings.IndexRune(from, r); i >= 0 {
		return []rune(to)[i], true
	}
	return 0, false
}
