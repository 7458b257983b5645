package screen

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"sync"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/gofont/gomonobolditalic"
	"golang.org/x/image/font/gofont/gomonoitalic"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// FontSize is the size of Go Mono, in pixels, at scale 1; its cells are
// then 9×19 pixels. A scale sets the size to the nearest whole pixel, the
// sizes a font's hinting is made for.
const FontSize = 15

// Bounds on the scale a grid is drawn at, and on what a Renderer keeps.
const (
	MinScale = 0.5 // below it Go Mono is no longer legible
	MaxScale = 3
	// maxSizes bounds the font sizes kept, maxMasks the glyphs kept per
	// size; past either, the oldest are dropped all at once.
	maxSizes = 8
	maxMasks = 4096
)

// Cursor is where the terminal's cursor is, in the grid's cells.
type Cursor struct {
	X, Y    int
	Visible bool // the program has not hidden it
}

// Options say how a grid is drawn.
type Options struct {
	Theme  Theme
	Scale  float64 // the font's size as a multiple of FontSize; 0 means 1
	Cursor Cursor  // drawn as a block when visible and inside the grid
}

// A Renderer draws grids with Go Mono, built into the binary, so a picture
// looks the same on every host. It keeps the faces and glyphs it has drawn:
// make one and share it. It is safe for concurrent use.
type Renderer struct {
	once  sync.Once
	fonts [4]*opentype.Font // by variant
	err   error

	mu    sync.Mutex
	sizes map[int]*sizedFont // by size in pixels
}

// variant is a font of the family: bit 0 bold, bit 1 italic.
type variant uint8

// NewRenderer returns a Renderer; the fonts are read on first use.
func NewRenderer() *Renderer { return &Renderer{} }

// sizedFont is the family at one size, with the glyph masks drawn so far.
type sizedFont struct {
	mu     sync.Mutex
	faces  [4]font.Face
	cell   image.Point // width and height of one cell, pixels
	ascent int
	masks  map[maskKey]*image.Alpha
}

type maskKey struct {
	text  string
	v     variant
	cells int
}

// pixelSize is the font size, in whole pixels, of a scale within the
// bounds; 0 means 1.
func pixelSize(scale float64) int {
	if scale == 0 {
		scale = 1
	}
	return int(math.Round(min(max(scale, MinScale), MaxScale) * FontSize))
}

// scaleOf is the scale of a font size in pixels, to two decimals.
func scaleOf(size int) float64 { return math.Round(float64(size)/FontSize*100) / 100 }

// CellSize returns the size in pixels of one cell at scale.
func (r *Renderer) CellSize(scale float64) (image.Point, error) {
	f, err := r.sized(pixelSize(scale))
	if err != nil {
		return image.Point{}, err
	}
	return f.cell, nil
}

func (r *Renderer) sized(size int) (*sizedFont, error) {
	r.once.Do(func() {
		for v, ttf := range [4][]byte{gomono.TTF, gomonobold.TTF, gomonoitalic.TTF, gomonobolditalic.TTF} {
			if r.fonts[v], r.err = opentype.Parse(ttf); r.err != nil {
				r.err = fmt.Errorf("reading the built-in Go Mono font: %w", r.err)
				return
			}
		}
	})
	if r.err != nil {
		return nil, r.err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f := r.sizes[size]; f != nil {
		return f, nil
	}
	f := &sizedFont{masks: map[maskKey]*image.Alpha{}}
	for v, ft := range r.fonts {
		face, err := opentype.NewFace(ft, &opentype.FaceOptions{Size: float64(size), DPI: 72, Hinting: font.HintingFull})
		if err != nil {
			return nil, fmt.Errorf("sizing Go Mono at %d px: %w", size, err)
		}
		f.faces[v] = face
	}
	m := f.faces[0].Metrics()
	advance, _ := f.faces[0].GlyphAdvance('M')
	f.ascent = m.Ascent.Ceil()
	f.cell = image.Pt(max(advance.Round(), 1), max(f.ascent+m.Descent.Ceil(), 2))
	if len(r.sizes) >= maxSizes || r.sizes == nil {
		r.sizes = map[int]*sizedFont{}
	}
	r.sizes[size] = f
	return f, nil
}

// Draw draws a grid as a terminal would: each cell's colours and
// attributes, wide characters over two cells, and the cursor. The picture
// has a palette (an *image.Paletted) when 256 colours are enough, as they
// mostly are, and is an *image.RGBA otherwise.
func (r *Renderer) Draw(g *Grid, o Options) (image.Image, error) {
	f, err := r.sized(pixelSize(o.Scale))
	if err != nil {
		return nil, err
	}
	bounds := image.Rect(0, 0, g.Cols*f.cell.X, g.Rows()*f.cell.Y)
	pal := &palettedCanvas{img: image.NewPaletted(bounds, color.Palette{o.Theme.Background}), levels: map[[2]color.RGBA]*[levels]int16{}}
	if f.paint(g, o, pal) {
		return pal.img, nil
	}
	rgba := &rgbaCanvas{img: image.NewRGBA(bounds), levels: map[[2]color.RGBA]*[levels]color.RGBA{}}
	f.paint(g, o, rgba)
	return rgba.img, nil
}

// levels is how many levels of coverage a glyph's pixels take, from the
// background's colour (0) to the text's (levels-1).
const levels = 16

// A canvas takes a picture cell by cell.
type canvas interface {
	// put fills r with fg over bg by coverage: cov holds one level a
	// pixel, row after row, or is nil for a cell of background alone. It
	// reports false when the canvas cannot take the colours.
	put(r image.Rectangle, fg, bg color.RGBA, cov []uint8) bool
}

// paint draws g on c, cell by cell; false if c gave up.
func (f *sizedFont) paint(g *Grid, o Options, c canvas) bool {
	cw, ch := f.cell.X, f.cell.Y
	cursor := o.Cursor
	if cursor.Visible && cursor.Y >= 0 && cursor.Y < g.Rows() && cursor.X >= 0 && cursor.X < g.Cols {
		// On the column a wide character covers, the cursor is on that character.
		for cursor.X > 0 && g.Cells[cursor.Y][cursor.X].Width == 0 {
			cursor.X--
		}
	} else {
		cursor.Visible = false
	}
	scratch := make([]uint8, 2*cw*ch)
	for y, row := range g.Cells {
		for x, cell := range row {
			if cell.Width == 0 {
				continue
			}
			fg, bg := colours(&o.Theme, cell.Style)
			if cursor.Visible && x == cursor.X && y == cursor.Y {
				fg, bg = bg, o.Theme.Cursor
			}
			w := min(x+cell.Width, g.Cols) - x
			var cov []uint8
			if cell.Style.Attr&Hidden == 0 {
				cov = f.coverage(scratch[:w*cw*ch], cell, w)
			}
			if !c.put(image.Rect(x*cw, y*ch, (x+w)*cw, (y+1)*ch), fg, bg, cov) {
				return false
			}
		}
	}
	return true
}

// coverage returns the levels of a cell's text and its lines (underline
// and the like), w cells wide, in buf; nil when it has neither.
func (f *sizedFont) coverage(buf []uint8, c Cell, w int) []uint8 {
	const lines = Underline | DoubleUnderline | Strike | Overline
	hasText := c.Text != "" && c.Text != " "
	if !hasText && c.Style.Attr&lines == 0 {
		return nil
	}
	if hasText {
		m := f.mask(c.Text, c.Style.Attr, c.Width)
		for y := range f.cell.Y {
			copy(buf[y*w*f.cell.X:(y+1)*w*f.cell.X], m.Pix[y*m.Stride:])
		}
	} else {
		clear(buf)
	}
	t := max(1, f.cell.Y/16)
	line := func(y int) {
		for i := y * w * f.cell.X; i < (y+t)*w*f.cell.X; i++ {
			buf[i] = levels - 1
		}
	}
	under := min(f.ascent+t, f.cell.Y-t)
	if c.Style.Attr&(Underline|DoubleUnderline) != 0 {
		line(under)
	}
	if c.Style.Attr&DoubleUnderline != 0 {
		line(min(under+2*t, f.cell.Y-t))
	}
	if c.Style.Attr&Strike != 0 {
		line(f.ascent * 2 / 3)
	}
	if c.Style.Attr&Overline != 0 {
		line(0)
	}
	return buf
}

// colours returns the foreground and background a cell is drawn in.
func colours(t *Theme, s Style) (fg, bg color.RGBA) {
	fg, bg = t.RGB(s.FG, true), t.RGB(s.BG, false)
	if s.Attr&Reverse != 0 {
		fg, bg = bg, fg
	}
	if s.Attr&Faint != 0 {
		fg = blend(fg, bg, 1, 2)
	}
	return fg, bg
}

// blend is n/d of the way from b to a.
func blend(a, b color.RGBA, n, d int) color.RGBA {
	ch := func(x, y uint8) uint8 { return uint8((int(x)*n + int(y)*(d-n) + d/2) / d) }
	return color.RGBA{ch(a.R, b.R), ch(a.G, b.G), ch(a.B, b.B), 0xff}
}

// palettedCanvas draws with at most 256 colours, one byte a pixel: the
// background is entry 0, and each pair of colours takes the levels between
// them its glyphs use.
type palettedCanvas struct {
	img    *image.Paletted
	levels map[[2]color.RGBA]*[levels]int16 // palette entry of each level; -1 until used
}

func (p *palettedCanvas) put(r image.Rectangle, fg, bg color.RGBA, cov []uint8) bool {
	t := p.levels[[2]color.RGBA{fg, bg}]
	if t == nil {
		t = &[levels]int16{}
		for i := range t {
			t[i] = -1
		}
		p.levels[[2]color.RGBA{fg, bg}] = t
	}
	entry := func(level uint8) (uint8, bool) {
		if t[level] < 0 {
			c := blend(fg, bg, int(level), levels-1)
			t[level] = int16(p.img.Palette.Index(c))
			if p.img.Palette[t[level]] != c {
				if len(p.img.Palette) == 256 {
					return 0, false
				}
				t[level] = int16(len(p.img.Palette))
				p.img.Palette = append(p.img.Palette, c)
			}
		}
		return uint8(t[level]), true
	}
	w := r.Dx()
	if cov == nil {
		e, ok := entry(0)
		if !ok {
			return false
		}
		if e == 0 {
			return true // the picture starts as the background
		}
		for y := r.Min.Y; y < r.Max.Y; y++ {
			row := p.img.Pix[y*p.img.Stride+r.Min.X:][:w]
			for i := range row {
				row[i] = e
			}
		}
		return true
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := p.img.Pix[y*p.img.Stride+r.Min.X:][:w]
		for i, level := range cov[(y-r.Min.Y)*w:][:w] {
			e, ok := entry(level)
			if !ok {
				return false
			}
			row[i] = e
		}
	}
	return true
}

// rgbaCanvas draws any number of colours, four bytes a pixel.
type rgbaCanvas struct {
	img    *image.RGBA
	levels map[[2]color.RGBA]*[levels]color.RGBA
}

func (p *rgbaCanvas) put(r image.Rectangle, fg, bg color.RGBA, cov []uint8) bool {
	t := p.levels[[2]color.RGBA{fg, bg}]
	if t == nil {
		t = &[levels]color.RGBA{}
		for i := range t {
			t[i] = blend(fg, bg, i, levels-1)
		}
		p.levels[[2]color.RGBA{fg, bg}] = t
	}
	w := r.Dx()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := p.img.Pix[y*p.img.Stride+4*r.Min.X:][:4*w]
		for i := range w {
			var c color.RGBA
			if cov == nil {
				c = t[0]
			} else {
				c = t[cov[(y-r.Min.Y)*w+i]]
			}
			row[4*i], row[4*i+1], row[4*i+2], row[4*i+3] = c.R, c.G, c.B, c.A
		}
	}
	return true
}

// mask returns the coverage of a cell's text, in levels, cells wide: drawn for box
// drawing, blocks and braille, from the font otherwise, and a hollow box
// for a character Go Mono does not have (CJK and emoji among them).
func (f *sizedFont) mask(text string, a Attr, cells int) *image.Alpha {
	var v variant
	if a&Bold != 0 {
		v |= 1
	}
	if a&Italic != 0 {
		v |= 2
	}
	key := maskKey{text, v, cells}
	f.mu.Lock()
	defer f.mu.Unlock()
	if m := f.masks[key]; m != nil {
		return m
	}
	w, h := f.cell.X*cells, f.cell.Y
	r, n := utf8.DecodeRuneInString(text)
	m, ok := drawn(r, w, h)
	if !ok || n != len(text) {
		m = image.NewAlpha(image.Rect(0, 0, w, h))
		face := f.faces[v]
		if advance, ok := face.GlyphAdvance(r); ok {
			d := font.Drawer{Dst: m, Src: image.Opaque, Face: face,
				Dot: fixed.Point26_6{X: fixed.I(w)/2 - advance/2, Y: fixed.I(f.ascent)}}
			d.DrawString(text)
		} else {
			missing(m)
		}
	}
	// Sixteen levels of coverage look as smooth as 256 at these sizes, and
	// keep a picture's colours few enough for a palette.
	for i, a := range m.Pix {
		m.Pix[i] = uint8((int(a)*(levels-1) + 127) / 255)
	}
	if len(f.masks) >= maxMasks {
		clear(f.masks)
	}
	f.masks[key] = m
	return m
}

// missing draws the hollow box that stands for a character the font lacks.
func missing(m *image.Alpha) {
	b := m.Bounds()
	t := max(1, b.Dx()/9)
	x0, y0, x1, y1 := t, b.Dy()/6, b.Dx()-t, b.Dy()-b.Dy()/6
	fill(m, x0, y0, x1, y0+t)
	fill(m, x0, y1-t, x1, y1)
	fill(m, x0, y0, x0+t, y1)
	fill(m, x1-t, y0, x1, y1)
}
