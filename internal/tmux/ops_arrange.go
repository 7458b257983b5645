package tmux

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Layouts are the named layouts of tmux 3.3a's select-layout.
var Layouts = []string{"even-horizontal", "even-vertical", "main-horizontal", "main-vertical", "tiled"}

// maxLayoutLen bounds a layout string: tmux parses it recursively, and a
// window has room for no more panes than a string this long describes.
const maxLayoutLen = 16 << 10

// maxLayoutCells bounds a cell's width or height, as tmux's own
// WINDOW_MAXIMUM bounds a window.
const maxLayoutCells = 10000

// LayoutChecksum is tmux's checksum of a layout body (what follows the
// four hex digits and the comma in window_layout).
func LayoutChecksum(body string) uint16 {
	var sum uint16
	for i := 0; i < len(body); i++ {
		sum = sum>>1 + (sum&1)<<15
		sum += uint16(body[i])
	}
	return sum
}

// CheckLayout returns the argument to give select-layout for layout: a
// named layout as it is, or a layout string (as window_layout reports it,
// with or without its checksum) with its checksum, and the number of panes
// the string describes (0 for a named layout). Everything else is refused
// here: tmux 3.3a's server crashes on a layout argument that starts with a
// letter past 'f' and names no layout, so nothing unchecked may reach it.
func CheckLayout(layout string) (arg string, panes int, err error) {
	for _, name := range Layouts {
		if layout == name {
			return layout, 0, nil
		}
	}
	if len(layout) > maxLayoutLen {
		return "", 0, fmt.Errorf("layout string is %d bytes, over %d", len(layout), maxLayoutLen)
	}
	body, sum := layout, ""
	if len(layout) > 5 && layout[4] == ',' && isHex(layout[:4]) {
		body, sum = layout[5:], layout[:4]
	}
	if body == "" || body[0] < '0' || body[0] > '9' {
		return "", 0, fmt.Errorf("layout %q is neither a named layout (%s) nor a layout string like window_layout's", layout, strings.Join(Layouts, ", "))
	}
	p := layoutParser{s: body}
	n, err := p.cell(0)
	if err == nil && p.i < len(p.s) {
		err = fmt.Errorf("unexpected %q at byte %d", p.s[p.i], p.i)
	}
	if err != nil {
		return "", 0, fmt.Errorf("layout string %q: %w", layout, err)
	}
	want := fmt.Sprintf("%04x", LayoutChecksum(body))
	if sum != "" && !strings.EqualFold(sum, want) {
		return "", 0, fmt.Errorf("layout string %q: its checksum %s does not match its cells (they give %s); leave the checksum out to have it added", layout, sum, want)
	}
	return want + "," + body, n, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// layoutParser reads tmux's layout grammar:
//
//	cell = W "x" H "," X "," Y ( "," ID | "{" cells "}" | "[" cells "]" )
//	cells = cell { "," cell }
type layoutParser struct {
	s string
	i int
}

// maxLayoutDepth bounds the nesting of cells.
const maxLayoutDepth = 64

// cell parses one cell and returns the panes (leaves) it holds.
func (p *layoutParser) cell(depth int) (int, error) {
	if depth > maxLayoutDepth {
		return 0, errors.New("cells nested too deep")
	}
	// Width "x" height "," x "," y: the sizes must be cells, the offsets any.
	for k, sep := range []byte{'x', ',', ',', 0} {
		at := p.i
		v, err := p.number()
		if err != nil {
			return 0, err
		}
		if k < 2 && (v < 1 || v > maxLayoutCells) {
			return 0, fmt.Errorf("size %d at byte %d is out of range (1 to %d)", v, at, maxLayoutCells)
		}
		if sep != 0 {
			if err := p.expect(sep); err != nil {
				return 0, err
			}
		}
	}
	if p.i >= len(p.s) {
		return 0, errors.New("a pane needs its id after the position")
	}
	switch c := p.s[p.i]; c {
	case ',':
		p.i++
		if _, err := p.number(); err != nil {
			return 0, err
		}
		return 1, nil
	case '{', '[':
		p.i++
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		total := 0
		for {
			n, err := p.cell(depth + 1)
			if err != nil {
				return 0, err
			}
			total += n
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if err := p.expect(closing); err != nil {
				return 0, err
			}
			return total, nil
		}
	}
	return 0, fmt.Errorf("unexpected %q at byte %d", p.s[p.i], p.i)
}

func (p *layoutParser) number() (int, error) {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	if start == p.i || p.i-start > 9 {
		return 0, fmt.Errorf("a number expected at byte %d", start)
	}
	n, err := strconv.Atoi(p.s[start:p.i])
	return n, err
}

func (p *layoutParser) expect(c byte) error {
	if p.i >= len(p.s) || p.s[p.i] != c {
		return fmt.Errorf("%q expected at byte %d", c, p.i)
	}
	p.i++
	return nil
}
