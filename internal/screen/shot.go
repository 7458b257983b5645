package screen

import (
	"bytes"
	"context"
	"fmt"
	"image"
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
	asked := pixelSize(o.Scale)
	size, cell, err := r.fit(g.Cols, g.Rows(), asked)
	if err != nil {
		return Shot{}, err
	}
	shot := Shot{Scaled: size < asked}
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
		shot.Scale = scaleOf(size)
		o.Scale = shot.Scale
		img, err := r.Draw(g, o)
		if err != nil {
			return Shot{}, err
		}
		var b bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&b, img); err != nil {
			return Shot{}, fmt.Errorf("encoding the PNG: %w", err)
		}
		shot.PNG, shot.Width, shot.Height = b.Bytes(), img.Bounds().Dx(), img.Bounds().Dy()
		if b.Len() <= MaxPNGBytes {
			return shot, nil
		}
		smaller := min(size-1, int(float64(size)*math.Sqrt(float64(MaxPNGBytes)/float64(b.Len()))))
		if try == pngTries || smaller < pixelSize(MinScale) {
			return Shot{}, fmt.Errorf("the picture of %d×%d cells is %d bytes at scale %g, over the %d-byte bound; ask for fewer rows",
				g.Cols, g.Rows(), b.Len(), shot.Scale, MaxPNGBytes)
		}
		size, shot.Scaled = smaller, true
	}
}

// fit returns the largest font size, at most asked and at least
// MinScale's, at which cols×rows cells fit within MaxSide, and its cell.
func (r *Renderer) fit(cols, rows, asked int) (int, image.Point, error) {
	for size := asked; ; size-- {
		f, err := r.sized(size)
		if err != nil {
			return 0, image.Point{}, err
		}
		if size == pixelSize(MinScale) || cols*f.cell.X <= MaxSide && rows*f.cell.Y <= MaxSide {
			return size, f.cell, nil
		}
	}
}
