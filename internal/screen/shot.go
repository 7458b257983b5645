package screen

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
)

// Bounds on a screenshot's PNG. Models' image inputs take a few thousand
// pixels a side and a few megabytes; a terminal picture is mostly flat
// colour and stays far below the byte bound at any size within the side.
const (
	MaxSide     = 4096    // pixels on either side
	MaxPNGBytes = 3 << 20 // encoded, so under 4 MiB once base64-encoded
	// pngTries bounds how often a picture over MaxPNGBytes is drawn again
	// smaller.
	pngTries = 3
)

// Shot is a grid drawn and encoded as a PNG.
type Shot struct {
	PNG           []byte
	Width, Height int     // pixels
	Scale         float64 // drawn at: below the one asked for when the picture was scaled down to fit
	Scaled        bool    // scaled down to fit MaxSide or MaxPNGBytes
	DroppedRows   int     // rows left out at the top: they did not fit even at MinScale
	DroppedCols   int     // columns left out at the right, likewise
}

// Screenshot draws g and encodes it as a PNG within MaxSide and
// MaxPNGBytes: a grid too large at the scale asked for is drawn smaller,
// down to MinScale, and past that its top rows (the oldest) and right
// columns are left out. The cursor's row is counted in g.
func (r *Renderer) Screenshot(ctx context.Context, g *Grid, o Options) (Shot, error) {
	asked := float64(scaleKey(o.Scale)) / 100
	scale, err := r.fit(g.Cols, g.Rows(), asked)
	if err != nil {
		return Shot{}, err
	}
	shot := Shot{Scale: scale, Scaled: scale < asked}
	cell, err := r.CellSize(scale)
	if err != nil {
		return Shot{}, err
	}
	if rows := MaxSide / cell.Y; g.Rows() > rows {
		shot.DroppedRows = g.Rows() - rows
		g = &Grid{Cols: g.Cols, Cells: g.Cells[shot.DroppedRows:]}
		o.Cursor.Y -= shot.DroppedRows
	}
	if cols := MaxSide / cell.X; g.Cols > cols {
		shot.DroppedCols = g.Cols - cols
		cut := &Grid{Cols: cols, Cells: make([][]Cell, g.Rows())}
		for i, row := range g.Cells {
			cut.Cells[i] = row[:cols]
		}
		g = cut
	}
	for try := 1; ; try++ {
		if err := ctx.Err(); err != nil {
			return Shot{}, err
		}
		o.Scale = shot.Scale
		img, err := r.Draw(g, o)
		if err != nil {
			return Shot{}, err
		}
		var b bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&b, paletted(img)); err != nil {
			return Shot{}, fmt.Errorf("encoding the PNG: %w", err)
		}
		shot.PNG, shot.Width, shot.Height = b.Bytes(), img.Bounds().Dx(), img.Bounds().Dy()
		if b.Len() <= MaxPNGBytes {
			return shot, nil
		}
		smaller := math.Floor(shot.Scale*math.Sqrt(float64(MaxPNGBytes)/float64(b.Len()))*0.95*100) / 100
		if try == pngTries || smaller < MinScale {
			return Shot{}, fmt.Errorf("the picture of %d×%d cells is %d bytes at scale %.2f, over the %d-byte bound; ask for fewer rows",
				g.Cols, g.Rows(), b.Len(), shot.Scale, MaxPNGBytes)
		}
		shot.Scale, shot.Scaled = smaller, true
	}
}

// fit returns the largest scale, at most asked and at least MinScale, at
// which cols×rows cells fit within MaxSide.
func (r *Renderer) fit(cols, rows int, asked float64) (float64, error) {
	scale := asked
	for scale > MinScale {
		cell, err := r.CellSize(scale)
		if err != nil {
			return 0, err
		}
		over := max(float64(cols*cell.X), float64(rows*cell.Y)) / MaxSide
		if over <= 1 {
			break
		}
		// Glyph metrics round to whole pixels, so aim below and check again.
		scale = max(MinScale, math.Min(scale-0.01, math.Floor(scale/over*100)/100))
	}
	return scale, nil
}

// paletted returns img with a palette when it has at most 256 colours, as
// a terminal picture mostly has (glyph edges take a few levels between each
// pair of colours): a PNG of one byte a pixel, unfiltered, is several times
// faster to encode and smaller than one of three. Otherwise img itself.
func paletted(img *image.RGBA) image.Image {
	out := image.NewPaletted(img.Bounds(), make(color.Palette, 0, 256))
	index := map[uint32]uint8{}
	last, lastIndex := uint32(0), uint8(0)
	for i, j := 0, 0; i < len(img.Pix); i, j = i+4, j+1 {
		p := img.Pix[i : i+4 : i+4]
		c := uint32(p[0])<<16 | uint32(p[1])<<8 | uint32(p[2])
		if c != last || i == 0 {
			k, ok := index[c]
			if !ok {
				if len(out.Palette) == 256 {
					return img
				}
				k = uint8(len(out.Palette))
				index[c] = k
				out.Palette = append(out.Palette, color.RGBA{p[0], p[1], p[2], 0xff})
			}
			last, lastIndex = c, k
		}
		out.Pix[j] = lastIndex
	}
	return out
}
