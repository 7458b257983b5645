package screen

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

func TestCellSizeIsGoMonosAdvanceAndHeight(t *testing.T) {
	f, err := sfnt.Parse(gomono.TTF)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRenderer()
	for _, scale := range []float64{MinScale, 1, 2, MaxScale} {
		ppem := fixed.I(int(math.Round(FontSize * scale)))
		var b sfnt.Buffer
		i, _ := f.GlyphIndex(&b, 'M')
		advance, err := f.GlyphAdvance(&b, i, ppem, font.HintingNone)
		if err != nil {
			t.Fatal(err)
		}
		m, err := f.Metrics(&b, ppem, font.HintingNone)
		if err != nil {
			t.Fatal(err)
		}
		want := image.Pt(advance.Round(), m.Ascent.Ceil()+m.Descent.Ceil())
		got, err := r.CellSize(scale)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("scale %g: a cell is %v px, want %v (Go Mono at %g px: advance %v, ascent %v, descent %v)",
				scale, got, want, FontSize*scale, advance, m.Ascent, m.Descent)
		}
	}
}

// picture draws rows with the dark theme at scale 1 and returns the image
// and the size of a cell.
func picture(t *testing.T, rows []string, cols int, cursor Cursor) (*image.RGBA, image.Point) {
	t.Helper()
	r := NewRenderer()
	img, err := r.Draw(Parse(rows, cols), Options{Theme: Dark(), Scale: 1, Cursor: cursor})
	if err != nil {
		t.Fatal(err)
	}
	cell, _ := r.CellSize(1)
	if want := image.Rect(0, 0, cols*cell.X, len(rows)*cell.Y); img.Bounds() != want {
		t.Fatalf("the picture is %v, want %v", img.Bounds(), want)
	}
	return toRGBA(img), cell
}

// cellRect is the pixels of the cells from col to col+n-1 of row.
func cellRect(cell image.Point, row, col, n int) image.Rectangle {
	return image.Rect(col*cell.X, row*cell.Y, (col+n)*cell.X, (row+1)*cell.Y)
}

// census counts the colours in a rectangle of img.
func census(img *image.RGBA, r image.Rectangle) map[color.RGBA]int {
	n := map[color.RGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			n[img.RGBAAt(x, y)]++
		}
	}
	return n
}

// between reports whether c lies on the blend from a to b, channel by channel.
func between(c, a, b color.RGBA) bool {
	in := func(v, x, y uint8) bool { return min(x, y) <= v && v <= max(x, y) }
	return in(c.R, a.R, b.R) && in(c.G, a.G, b.G) && in(c.B, a.B, b.B)
}

func TestDrawPaintsEachCellInItsColours(t *testing.T) {
	th := Dark()
	rows := []string{
		"\x1b[31mred\x1b[0m \x1b[7mrev\x1b[0m \x1b[48;5;196m  \x1b[0m \x1b[48;2;10;200;30m  \x1b[0m \x1b[8mhid\x1b[0m \x1b[2;38;2;200;100;50mfnt\x1b[0m",
		"\x1b[38;5;244m漢\x1b[32mx\x1b[0m \x1b[4mu\x1b[0m",
	}
	img, cell := picture(t, rows, 30, Cursor{})
	cases := []struct {
		name     string
		row, col int
		n        int
		fg, bg   color.RGBA // every pixel is one of them or a blend of the two, and both appear
		noFG     bool       // only the background appears
	}{
		{"a red word", 0, 0, 3, th.ANSI[1], th.Background, false},
		{"a reverse-video word", 0, 4, 3, th.Background, th.Foreground, false},
		{"a 256-colour block", 0, 8, 2, color.RGBA{255, 0, 0, 255}, color.RGBA{255, 0, 0, 255}, false},
		{"a true-colour block", 0, 11, 2, color.RGBA{10, 200, 30, 255}, color.RGBA{10, 200, 30, 255}, false},
		{"hidden text", 0, 14, 3, th.Background, th.Background, true},
		{"faint text halfway to the background", 0, 18, 3, blend(color.RGBA{200, 100, 50, 255}, th.Background, 1, 2), th.Background, false},
		{"a wide character over two cells", 1, 0, 2, color.RGBA{128, 128, 128, 255}, th.Background, false},
		{"the character after it, two cells on", 1, 2, 1, th.ANSI[2], th.Background, false},
	}
	for _, c := range cases {
		r := cellRect(cell, c.row, c.col, c.n)
		seen := census(img, r)
		for col, n := range seen {
			if !between(col, c.fg, c.bg) {
				t.Errorf("%s: %d pixels of %v in %v, neither %v nor %v nor a blend", c.name, n, col, r, c.fg, c.bg)
				break
			}
		}
		if seen[c.bg] == 0 || !c.noFG && seen[c.fg] == 0 {
			t.Errorf("%s: colours %v in %v, want both %v and %v", c.name, seen, r, c.fg, c.bg)
		}
	}
	// The wide character's glyph (a hollow box: Go Mono has no CJK) spans
	// both its cells.
	grey := color.RGBA{128, 128, 128, 255}
	for col := range 2 {
		if census(img, cellRect(cell, 1, col, 1))[grey] == 0 {
			t.Errorf("column %d of the wide character has none of its colour", col)
		}
	}
	// An underline is a line across the whole cell.
	u := cellRect(cell, 1, 4, 1)
	full := false
	for y := u.Min.Y; y < u.Max.Y && !full; y++ {
		full = census(img, image.Rect(u.Min.X, y, u.Max.X, y+1))[th.Foreground] == cell.X
	}
	if !full {
		t.Errorf("the underlined cell has no full line of the foreground colour")
	}
}

func TestDrawDrawsTheCursorAsABlock(t *testing.T) {
	th := Dark()
	for _, visible := range []bool{true, false} {
		img, cell := picture(t, []string{"$ ", "\x1b[31m漢"}, 4, Cursor{X: 2, Y: 0, Visible: visible})
		blank := census(img, cellRect(cell, 0, 2, 1))
		if visible && blank[th.Cursor] != cell.X*cell.Y || !visible && blank[th.Background] != cell.X*cell.Y {
			t.Errorf("visible %v: the cursor's blank cell has %v", visible, blank)
		}
		if n := census(img, image.Rect(0, 0, 4*cell.X, 2*cell.Y))[th.Cursor]; !visible && n != 0 {
			t.Errorf("a hidden cursor drew %d pixels", n)
		}
	}
	// On the second column of a wide character, the cursor covers the
	// character, drawn in the background colour.
	img, cell := picture(t, []string{"", "\x1b[31m漢"}, 4, Cursor{X: 1, Y: 1, Visible: true})
	seen := census(img, cellRect(cell, 1, 0, 2))
	if seen[th.Cursor] == 0 || seen[th.Background] == 0 || seen[th.ANSI[1]] != 0 {
		t.Errorf("the cursor on a wide character: colours %v, want the cursor's and the background's only", seen)
	}
}

func TestBoxDrawingLinesMeetAcrossCells(t *testing.T) {
	th := Dark()
	img, cell := picture(t, []string{"┌──┐", "│  │", "└──┘", "╔══╗", "║  ║", "╚══╝", "┏━━┓", "▀▄█░"}, 4, Cursor{})
	line := func(r image.Rectangle) bool { return census(img, r)[th.Foreground] == r.Dx()*r.Dy() }
	// Some row of pixels is the foreground from the left edge to the right
	// one along a box's top; some column, top to bottom down its side.
	for _, top := range []int{0, 3, 6} {
		found := false
		for y := top * cell.Y; y < (top+1)*cell.Y && !found; y++ {
			found = line(image.Rect(cell.X/2, y, 4*cell.X-cell.X/2, y+1))
		}
		if !found {
			t.Errorf("the box at row %d: no unbroken line along its top", top)
		}
	}
	for _, top := range []int{0, 3} {
		found := false
		for x := 0; x < cell.X && !found; x++ {
			found = line(image.Rect(x, top*cell.Y+cell.Y/2, x+1, (top+3)*cell.Y-cell.Y/2))
		}
		if !found {
			t.Errorf("the box at row %d: no unbroken line down its left side", top)
		}
	}
	blocks := []struct {
		col  int
		want int // pixels of the foreground colour
	}{{0, cell.X * (cell.Y / 2)}, {1, cell.X * (cell.Y - cell.Y/2)}, {2, cell.X * cell.Y}, {3, 0}}
	for _, b := range blocks {
		if got := census(img, cellRect(cell, 7, b.col, 1))[th.Foreground]; got != b.want {
			t.Errorf("block element in column %d: %d pixels of the foreground, want %d", b.col, got, b.want)
		}
	}
}

func TestPaletteIsXtermsBeyondTheThemesSixteen(t *testing.T) {
	th := Light()
	cases := []struct {
		c    Color
		want color.RGBA
	}{
		{Indexed(1), th.ANSI[1]},
		{Indexed(16), color.RGBA{0, 0, 0, 255}},
		{Indexed(196), color.RGBA{255, 0, 0, 255}},
		{Indexed(202), color.RGBA{255, 95, 0, 255}},
		{Indexed(231), color.RGBA{255, 255, 255, 255}},
		{Indexed(232), color.RGBA{8, 8, 8, 255}},
		{Indexed(255), color.RGBA{238, 238, 238, 255}},
		{RGB(1, 2, 3), color.RGBA{1, 2, 3, 255}},
	}
	for _, c := range cases {
		if got := th.RGB(c.c, true); got != c.want {
			t.Errorf("%+v is %v, want %v", c.c, got, c.want)
		}
	}
	if th.RGB(Color{}, true) != th.Foreground || th.RGB(Color{}, false) != th.Background {
		t.Errorf("the default colours are not the theme's")
	}
}

func TestScreenshotStaysWithinItsBounds(t *testing.T) {
	r := NewRenderer()
	full := func(cols, rows int) *Grid {
		lines := make([]string, rows)
		for i := range lines {
			lines[i] = fmt.Sprintf("\x1b[3%dm%s", i%8, strings.Repeat(fmt.Sprintf("%d", i%10), cols))
		}
		return Parse(lines, cols)
	}
	cases := []struct {
		name          string
		cols, rows    int
		scale         float64
		scaled        bool
		droppedRows   bool
		wantScaleLess float64 // the scale drawn at is at most this
	}{
		{"a pane that fits is drawn at the scale asked", 80, 24, 2, false, false, 2},
		{"a wide pane at scale 3 is drawn smaller", 400, 50, 3, true, false, 3},
		{"a long history is drawn at the least scale, its oldest rows left out", 100, 3000, 1, true, true, scaleOf(pixelSize(MinScale))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := full(c.cols, c.rows)
			shot, err := r.Screenshot(context.Background(), g, Options{Theme: Dark(), Scale: c.scale, Cursor: Cursor{X: 0, Y: c.rows - 1, Visible: true}})
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(shot.PNG))
			if err != nil {
				t.Fatalf("the PNG does not decode: %v", err)
			}
			cell, _ := r.CellSize(shot.Scale)
			drawnRows := c.rows - shot.DroppedRows
			if b := img.Bounds(); b.Dx() != shot.Width || b.Dy() != shot.Height || shot.Width != c.cols*cell.X || shot.Height != drawnRows*cell.Y {
				t.Errorf("the image is %v, reported %d×%d; %d×%d cells of %v make %d×%d",
					b.Size(), shot.Width, shot.Height, c.cols, drawnRows, cell, c.cols*cell.X, drawnRows*cell.Y)
			}
			if shot.Width > MaxSide || shot.Height > MaxSide || len(shot.PNG) > MaxPNGBytes {
				t.Errorf("%d×%d px, %d bytes: over the bounds", shot.Width, shot.Height, len(shot.PNG))
			}
			if shot.Scaled != c.scaled || (shot.DroppedRows > 0) != c.droppedRows || shot.Scale > c.wantScaleLess || shot.Scale < MinScale {
				t.Errorf("scaled %v to %g, %d rows dropped; want scaled %v, at most %g, rows dropped %v",
					shot.Scaled, shot.Scale, shot.DroppedRows, c.scaled, c.wantScaleLess, c.droppedRows)
			}
			// The cursor stays on the last row, whichever rows were dropped.
			last := cellRect(cell, drawnRows-1, 0, 1)
			if n := census(toRGBA(img), last)[Dark().Cursor]; n == 0 {
				t.Errorf("the cursor on the last row is not drawn")
			}
		})
	}
}

func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok {
		return r
	}
	b := img.Bounds()
	out := image.NewRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			out.Set(x, y, img.At(x, y))
		}
	}
	return out
}

// BenchmarkScreenshot measures parsing, drawing and encoding a full screen
// at scale 1: a test run's output (default text, red and green marks, a
// reverse-video status line), and the worst case, every character in
// another of the 256 colours.
func BenchmarkScreenshot(b *testing.B) {
	screens := map[string]func(cols, row int) string{
		"testrun": func(cols, row int) string {
			switch {
			case row%5 == 4:
				return "\x1b[1;31m--- FAIL\x1b[0m: " + strings.Repeat("TestSomething ", cols/14)
			case row%5 == 2:
				return "\x1b[32mok\x1b[0m   " + strings.Repeat("github.com/x/y ", cols/15)
			}
			return strings.Repeat("    some_test.go:42: got 17, want 18 ", cols/37+1)[:cols]
		},
		"256colours": func(cols, row int) string {
			var s strings.Builder
			for x := range cols {
				fmt.Fprintf(&s, "\x1b[38;5;%dm%c", (x+row)%256, 'a'+rune((x*7+row)%26))
			}
			return s.String()
		},
	}
	for _, name := range []string{"testrun", "256colours"} {
		for _, size := range []image.Point{{80, 24}, {200, 50}} {
			b.Run(fmt.Sprintf("%s/%dx%d", name, size.X, size.Y), func(b *testing.B) {
				rows := make([]string, size.Y)
				for i := range rows {
					rows[i] = screens[name](size.X, i)
				}
				rows[len(rows)-1] = "\x1b[7m" + strings.Repeat(" status ", size.X/8)
				r := NewRenderer()
				ctx := context.Background()
				var n int
				for b.Loop() {
					shot, err := r.Screenshot(ctx, Parse(rows, size.X), Options{Theme: Dark(), Scale: 1})
					if err != nil {
						b.Fatal(err)
					}
					n = len(shot.PNG)
				}
				b.ReportMetric(float64(n), "png-bytes")
			})
		}
	}
}

func TestTrianglesPointTheirWay(t *testing.T) {
	th := Dark()
	img, cell := picture(t, []string{"▲▼▶◀△▽▷◁"}, 8, Cursor{})
	half := func(col int, bottomOrRight, vertical bool) int {
		r := cellRect(cell, 0, col, 1)
		switch {
		case vertical && bottomOrRight:
			r.Min.Y += cell.Y / 2
		case vertical:
			r.Max.Y -= cell.Y / 2
		case bottomOrRight:
			r.Min.X += cell.X / 2
		default:
			r.Max.X -= cell.X / 2
		}
		return census(img, r)[th.Foreground]
	}
	for i, c := range []struct {
		name         string
		wideEndFirst bool // the wide end is at the bottom (or right)
		vertical     bool
	}{{"▲", true, true}, {"▼", false, true}, {"▶", false, false}, {"◀", true, false}} {
		wide, narrow := half(i, c.wideEndFirst, c.vertical), half(i, !c.wideEndFirst, c.vertical)
		if wide <= narrow {
			t.Errorf("%s: %d pixels at its wide end, %d at its point", c.name, wide, narrow)
		}
		filled, hollow := census(img, cellRect(cell, 0, i, 1))[th.Foreground], census(img, cellRect(cell, 0, i+4, 1))[th.Foreground]
		if hollow == 0 || hollow >= filled {
			t.Errorf("%s: the hollow one has %d pixels, the filled one %d", c.name, hollow, filled)
		}
	}
}
