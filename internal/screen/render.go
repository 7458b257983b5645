package screen

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
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
// attributes, wide characters over two cells, and the cursor.
func (r *Renderer) Draw(g *Grid, o Options) (*image.RGBA, error) {
	f, err := r.sized(pixelSize(o.Scale))
	if err != nil {
		return nil, err
	}
	cw, ch := f.cell.X, f.cell.Y
	img := image.NewRGBA(image.Rect(0, 0, g.Cols*cw, g.Rows()*ch))
	draw.Draw(img, img.Bounds(), image.NewUniform(o.Theme.Background), image.Point{}, draw.Src)
	cursor := o.Cursor
	if cursor.Visible && cursor.Y >= 0 && cursor.Y < g.Rows() && cursor.X >= 0 && cursor.X < g.Cols {
		// On the column a wide character covers, the cursor is on that character.
		for cursor.X > 0 && g.Cells[cursor.Y][cursor.X].Width == 0 {
			cursor.X--
		}
	} else {
		cursor.Visible = false
	}
	for y, row := range g.Cells {
		for x, c := range row {
			if c.Width == 0 {
				continue
			}
			fg, bg := colours(&o.Theme, c.Style)
			if cursor.Visible && x == cursor.X && y == cursor.Y {
				fg, bg = bg, o.Theme.Cursor
			}
			cell := image.Rect(x*cw, y*ch, min(x+c.Width, g.Cols)*cw, (y+1)*ch)
			if bg != o.Theme.Background {
				draw.Draw(img, cell, image.NewUniform(bg), image.Point{}, draw.Src)
			}
			if c.Style.Attr&Hidden != 0 {
				continue
			}
			src := image.NewUniform(fg)
			if c.Text != "" && c.Text != " " {
				m := f.mask(c.Text, c.Style.Attr, c.Width)
				draw.DrawMask(img, cell, src, image.Point{}, m, image.Point{}, draw.Over)
			}
			f.decorate(img, cell, src, c.Style.Attr)
		}
	}
	return img, nil
}

// colours returns the foreground and background a cell is drawn in.
func colours(t *Theme, s Style) (fg, bg color.RGBA) {
	fg, bg = t.RGB(s.FG, true), t.RGB(s.BG, false)
	if s.Attr&Reverse != 0 {
		fg, bg = bg, fg
	}
	if s.Attr&Faint != 0 {
		fg = color.RGBA{mix(fg.R, bg.R), mix(fg.G, bg.G), mix(fg.B, bg.B), 0xff}
	}
	return fg, bg
}

// mix is halfway between two channel values.
func mix(a, b uint8) uint8 { return uint8((int(a) + int(b)) / 2) }

// decorate draws the lines an attribute adds: under, over and through.
func (f *sizedFont) decorate(img *image.RGBA, cell image.Rectangle, src image.Image, a Attr) {
	t := max(1, f.cell.Y/16)
	line := func(y int) {
		draw.Draw(img, image.Rect(cell.Min.X, cell.Min.Y+y, cell.Max.X, cell.Min.Y+y+t), src, image.Point{}, draw.Src)
	}
	under := min(f.ascent+t, f.cell.Y-t)
	if a&(Underline|DoubleUnderline) != 0 {
		line(under)
	}
	if a&DoubleUnderline != 0 {
		line(min(under+2*t, f.cell.Y-t))
	}
	if a&Strike != 0 {
		line(f.ascent * 2 / 3)
	}
	if a&Overline != 0 {
		line(0)
	}
}

// mask returns the coverage of a cell's text, cells wide: drawn for box
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
		m.Pix[i] = uint8((int(a) + 8) / 17 * 17)
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
