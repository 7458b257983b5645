package screen

import (
	"image"
	"strings"
)

// Box drawing, block elements and braille are drawn, not taken from the
// font: a font's glyphs stop short of the cell's edges, and a box drawn
// with them has gaps between rows. Drawn, lines meet across cells as on a
// terminal.

// boxLines holds, for each character from U+2500 to U+257F, the weight of
// its line towards the left, right, top and bottom of the cell: 0 none,
// 1 light, 2 heavy, 3 double; d marks a diagonal, drawn apart. Dashed
// lines are drawn solid and arcs as corners.
const boxLines = "" +
	"1100 2200 0011 0022 1100 2200 0011 0022 1100 2200 0011 0022 0101 0201 0102 0202 " + // ─ ━ │ ┃ ┄ ┅ ┆ ┇ ┈ ┉ ┊ ┋ ┌ ┍ ┎ ┏
	"1001 2001 1002 2002 0110 0210 0120 0220 1010 2010 1020 2020 0111 0211 0121 0112 " + // ┐ ┑ ┒ ┓ └ ┕ ┖ ┗ ┘ ┙ ┚ ┛ ├ ┝ ┞ ┟
	"0122 0221 0212 0222 1011 2011 1021 1012 1022 2021 2012 2022 1101 2101 1201 2201 " + // ┠ ┡ ┢ ┣ ┤ ┥ ┦ ┧ ┨ ┩ ┪ ┫ ┬ ┭ ┮ ┯
	"1102 2102 1202 2202 1110 2110 1210 2210 1120 2120 1220 2220 1111 2111 1211 2211 " + // ┰ ┱ ┲ ┳ ┴ ┵ ┶ ┷ ┸ ┹ ┺ ┻ ┼ ┽ ┾ ┿
	"1121 1112 1122 2121 1221 2112 1212 2221 2212 2122 1222 2222 1100 2200 0011 0022 " + // ╀ ╁ ╂ ╃ ╄ ╅ ╆ ╇ ╈ ╉ ╊ ╋ ╌ ╍ ╎ ╏
	"3300 0033 0301 0103 0303 3001 1003 3003 0310 0130 0330 3010 1030 3030 0311 0133 " + // ═ ║ ╒ ╓ ╔ ╕ ╖ ╗ ╘ ╙ ╚ ╛ ╜ ╝ ╞ ╟
	"0333 3011 1033 3033 3301 1103 3303 3310 1130 3330 3311 1133 3333 0101 1001 1010 " + // ╠ ╡ ╢ ╣ ╤ ╥ ╦ ╧ ╨ ╩ ╪ ╫ ╬ ╭ ╮ ╯
	"0110 dddd dddd dddd 1000 0010 0100 0001 2000 0020 0200 0002 1200 0012 2100 0021" //   ╰ ╱ ╲ ╳ ╴ ╵ ╶ ╷ ╸ ╹ ╺ ╻ ╼ ╽ ╾ ╿

// drawn returns the mask of a character drawn rather than taken from the
// font, in a w×h cell, or false when r is not one of them.
func drawn(r rune, w, h int) (*image.Alpha, bool) {
	switch {
	case r >= 0x2500 && r <= 0x257f:
		m := image.NewAlpha(image.Rect(0, 0, w, h))
		code := strings.Fields(boxLines)[r-0x2500]
		if code == "dddd" {
			diagonal(m, r)
		} else {
			box(m, [4]byte{code[0] - '0', code[1] - '0', code[2] - '0', code[3] - '0'})
		}
		return m, true
	case r >= 0x2580 && r <= 0x259f:
		m := image.NewAlpha(image.Rect(0, 0, w, h))
		block(m, r)
		return m, true
	case r >= 0x2800 && r <= 0x28ff:
		m := image.NewAlpha(image.Rect(0, 0, w, h))
		braille(m, byte(r-0x2800))
		return m, true
	case r == '▲' || r == '△' || r == '▼' || r == '▽' || r == '▶' || r == '▷' || r == '◀' || r == '◁':
		// Sort and fold marks (htop's, a file tree's), which Go Mono lacks.
		m := image.NewAlpha(image.Rect(0, 0, w, h))
		triangle(m, r)
		return m, true
	}
	return nil, false
}

// triangle draws a filled or hollow triangle pointing up, down, right or
// left, in a square centred in the cell.
func triangle(m *image.Alpha, r rune) {
	b := m.Bounds()
	n := min(b.Dx(), b.Dy()) * 4 / 5
	x0, y0 := (b.Dx()-n)/2, (b.Dy()-n)/2
	t := max(1, b.Dx()/9)
	hollow := r == '△' || r == '▽' || r == '▷' || r == '◁'
	for i := range n { // i: the distance from the point; the span across it is i wide
		lo, hi := (n-i)/2, (n+i+1)/2
		for j := lo; j < hi; j++ {
			if hollow && j >= lo+t && j < hi-t && i < n-t {
				continue
			}
			var x, y int
			switch r {
			case '▲', '△':
				x, y = j, i
			case '▼', '▽':
				x, y = j, n-1-i
			case '▶', '▷':
				x, y = n-1-i, j
			default:
				x, y = i, j
			}
			m.Pix[(y0+y)*m.Stride+x0+x] = 0xff
		}
	}
}

const (
	left = iota
	right
	up
	down
)

// box draws lines from the cell's centre to its edges, each with its
// weight. A double line is two light ones, which stop at the inner line of
// a double line crossing them and run on to its outer one otherwise.
func box(m *image.Alpha, weight [4]byte) {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	light := max(1, (w+4)/9)
	heavy := 2 * light
	gap := light // from the centre line to each line of a double line
	cx, cy := (w-light)/2, (h-light)/2
	hasDouble := false
	for _, v := range weight {
		hasDouble = hasDouble || v == 3
	}
	thickness := func(wt byte) int {
		if wt == 2 {
			return heavy
		}
		return light
	}
	// A light or heavy line runs to the far edge of the lines it crosses
	// at the centre, or of itself when none does.
	across := [4]int{}
	for dir := range weight {
		a, b := up, down
		if dir == up || dir == down {
			a, b = left, right
		}
		across[dir] = max(thickness(weight[a])*min(int(weight[a]), 1), thickness(weight[b])*min(int(weight[b]), 1), thickness(weight[dir]))
	}
	for dir, wt := range weight {
		switch wt {
		case 1, 2:
			t := thickness(wt)
			lo, hi := -(across[dir]-light)/2, -(across[dir]-light)/2+across[dir] // the centre's extent, from cx or cy
			if hasDouble {
				lo, hi = -gap, gap+light // to the far line of a double line crossing this one
			}
			switch dir {
			case left:
				fill(m, 0, cy-(t-light)/2, cx+hi, cy-(t-light)/2+t)
			case right:
				fill(m, cx+lo, cy-(t-light)/2, w, cy-(t-light)/2+t)
			case up:
				fill(m, cx-(t-light)/2, 0, cx-(t-light)/2+t, cy+hi)
			case down:
				fill(m, cx-(t-light)/2, cy+lo, cx-(t-light)/2+t, h)
			}
		case 3:
			// The line on one side stops short of a line leaving on that
			// side, and runs on to the far line crossing it otherwise.
			short := func(side int) bool { return weight[side] != 0 }
			switch dir {
			case left, right:
				for _, side := range []int{up, down} {
					y := cy - gap
					if side == down {
						y = cy + gap
					}
					near, far := cx, cx // a light line crossing, or none
					if weight[up] == 3 || weight[down] == 3 {
						near, far = cx-gap, cx+gap // the two lines of a double one
					}
					if dir == left {
						end := far + light
						if short(side) {
							end = near + light
						}
						fill(m, 0, y, end, y+light)
					} else {
						start := near
						if short(side) {
							start = far
						}
						fill(m, start, y, w, y+light)
					}
				}
			case up, down:
				for _, side := range []int{left, right} {
					x := cx - gap
					if side == right {
						x = cx + gap
					}
					near, far := cy, cy
					if weight[left] == 3 || weight[right] == 3 {
						near, far = cy-gap, cy+gap
					}
					if dir == up {
						end := far + light
						if short(side) {
							end = near + light
						}
						fill(m, x, 0, x+light, end)
					} else {
						start := near
						if short(side) {
							start = far
						}
						fill(m, x, start, x+light, h)
					}
				}
			}
		}
	}
}

// diagonal draws ╱, ╲ or both (╳) corner to corner.
func diagonal(m *image.Alpha, r rune) {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	t := max(1, (w+4)/9)
	for y := range h {
		x := (w - 1) * y / max(h-1, 1)
		if r != 0x2571 { // ╲ top left to bottom right
			fill(m, x-t/2, y, x-t/2+t, y+1)
		}
		if r != 0x2572 { // ╱ top right to bottom left
			fill(m, w-1-x-t/2, y, w-1-x-t/2+t, y+1)
		}
	}
}

// block draws the block elements: eighths, halves, quadrants and shades.
func block(m *image.Alpha, r rune) {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	eighthsUp := func(n int) { fill(m, 0, h*(8-n)/8, w, h) }
	eighthsLeft := func(n int) { fill(m, 0, 0, w*n/8, h) }
	quadrants := func(ul, ur, ll, lr bool) {
		if ul {
			fill(m, 0, 0, w/2, h/2)
		}
		if ur {
			fill(m, w/2, 0, w, h/2)
		}
		if ll {
			fill(m, 0, h/2, w/2, h)
		}
		if lr {
			fill(m, w/2, h/2, w, h)
		}
	}
	switch {
	case r == 0x2580:
		fill(m, 0, 0, w, h/2)
	case r <= 0x2588: // ▁ to █: lower eighths
		eighthsUp(int(r - 0x2580))
	case r <= 0x258f: // ▉ to ▏: left eighths
		eighthsLeft(int(0x2590 - r))
	case r == 0x2590:
		fill(m, w/2, 0, w, h)
	case r <= 0x2593: // ░ ▒ ▓
		shade := uint8(64 * (r - 0x2590))
		for i := range m.Pix {
			m.Pix[i] = shade
		}
	case r == 0x2594:
		fill(m, 0, 0, w, h/8)
	case r == 0x2595:
		fill(m, w-w/8, 0, w, h)
	default: // quadrants, U+2596–U+259F
		q := [...][4]bool{
			{false, false, true, false}, {false, false, false, true}, {true, false, false, false}, {true, false, true, true},
			{true, false, false, true}, {true, true, true, false}, {true, true, false, true}, {false, true, false, false},
			{false, true, true, false}, {false, true, true, true},
		}[r-0x2596]
		quadrants(q[0], q[1], q[2], q[3])
	}
}

// braille draws the dots set in a braille pattern's low byte: dots 1–3
// and 7 down the left column, 4–6 and 8 down the right.
func braille(m *image.Alpha, bits byte) {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	dot := max(1, w/4)
	col := [8]int{0, 0, 0, 1, 1, 1, 0, 1}
	row := [8]int{0, 1, 2, 0, 1, 2, 3, 3}
	for i := range 8 {
		if bits&(1<<i) == 0 {
			continue
		}
		x := w*(2*col[i]+1)/4 - dot/2
		y := h*(2*row[i]+1)/8 - dot/2
		fill(m, x, y, x+dot, y+dot)
	}
}

// fill sets the mask to opaque over a rectangle, clipped to the mask.
func fill(m *image.Alpha, x0, y0, x1, y1 int) {
	r := image.Rect(x0, y0, x1, y1).Intersect(m.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			m.Pix[y*m.Stride+x] = 0xff
		}
	}
}
