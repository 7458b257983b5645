package main

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The charts -charts writes, and their geometry.
const (
	latencyChart = "latency.svg" // every timed call row's distribution beside its floor's
	scaleChart   = "scale.svg"   // the same for many HTTP sessions and many panes
	floodChart   = "flood.svg"   // the flood's time and memory, with and without watchers

	chartWidth  = 9 * vg.Inch
	chartMargin = 1.4 * vg.Inch // title and axis, besides the rows
	boxRow      = 0.28 * vg.Inch
	barRow      = 0.4 * vg.Inch
	// minChartSamples is the fewest iterations a distribution needs to be
	// drawn as a box (the million-line row's few runs are not).
	minChartSamples = 5
)

// scaleRows are the rows of the scale chart; the other timed rows are the
// latency chart's.
var scaleRows = map[string]bool{rowManyHTTP: true, rowListMany: true, rowListManyFormat: true}

var (
	tmcpFill  = color.RGBA{R: 0x8e, G: 0xb8, B: 0xe5, A: 0xff}
	floorFill = color.RGBA{R: 0xd9, G: 0xd9, B: 0xd9, A: 0xff}
)

// writeCharts writes the charts of a report into dir as SVG. A chart
// whose rows failed is left out and named in the error.
func writeCharts(dir string, rep report, cfg config) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("making the charts' directory: %w", err)
	}
	var missing []string
	timed := fmt.Sprintf("%s; %d timed iterations a row", rep.TmuxVersion, rep.Iterations)
	for _, c := range []struct {
		file, title string
		keep        func(row) bool
	}{
		{latencyChart, "Each call: tmcp (blue) and the same job done with bare tmux (grey)\n" + timed, func(r row) bool { return !scaleRows[r.Measurement] }},
		{scaleChart, "Many sessions, many panes: tmcp (blue) and its floor (grey)\n" + timed, func(r row) bool { return scaleRows[r.Measurement] }},
	} {
		bs := boxes(rep.Rows, c.keep)
		if len(bs) == 0 {
			missing = append(missing, c.file)
			continue
		}
		if err := saveSVG(filepath.Join(dir, c.file), chartMargin+vg.Length(len(bs))*boxRow, boxChart(c.title, bs)); err != nil {
			return err
		}
	}
	flood := floodPlots(rep, cfg)
	if flood == nil {
		missing = append(missing, floodChart)
	} else if err := saveSVG(filepath.Join(dir, floodChart), 2*chartMargin+6*barRow, flood...); err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("charts not written, their rows failed or were not measured: %s", strings.Join(missing, ", "))
	}
	return nil
}

// box is one distribution of a chart.
type box struct {
	label   string
	samples []time.Duration
	floor   bool
}

// boxes lists the distributions of the timed rows keep selects, each
// tmcp's followed by its floor's. Rows that time the same tmcp iterations
// against two floors (list_sessions against a control client and a
// process) draw tmcp's once.
func boxes(rows []row, keep func(row) bool) []box {
	var out []box
	var last []time.Duration
	for _, r := range rows {
		if r.Error != "" || r.Unit != unitMs || !keep(r) || len(r.tmcpSamples) < minChartSamples {
			continue
		}
		name, floor, _ := strings.Cut(r.Measurement, " (floor: ")
		if len(last) == 0 || &last[0] != &r.tmcpSamples[0] {
			out = append(out, box{label: name, samples: r.tmcpSamples})
			last = r.tmcpSamples
		}
		if len(r.floorSamples) >= minChartSamples {
			out = append(out, box{label: "floor: " + strings.TrimSuffix(floor, ")"), samples: r.floorSamples, floor: true})
		}
	}
	return out
}

// boxChart draws distributions as horizontal Tukey box plots, first at the
// top, on a logarithmic axis of milliseconds: floors of tens of
// microseconds and calls of tens of milliseconds share it.
func boxChart(title string, bs []box) *plot.Plot {
	p := newPlot(title)
	// A long axis label narrows the plot: the key goes in the title.
	p.Title.Text += "\nbox: quartiles and median; whiskers: to 1.5 IQR; dots: beyond"
	p.X.Label.Text = "milliseconds (log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	p.Add(grid)
	names := make([]string, len(bs))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, b := range bs {
		y := len(bs) - 1 - i
		values := make(plotter.Values, len(b.samples))
		for j, d := range b.samples {
			values[j] = max(ms(d), 1e-3) // a log axis has no zero
			lo, hi = min(lo, values[j]), max(hi, values[j])
		}
		bp, err := plotter.NewBoxPlot(boxRow*0.6, float64(y), values)
		if err != nil {
			continue // no values: boxes keeps none such
		}
		bp.Horizontal = true
		bp.FillColor = tmcpFill
		if b.floor {
			bp.FillColor = floorFill
		}
		p.Add(bp)
		names[y] = slack(b.label)
	}
	p.NominalY(names...)
	// The axis runs from power of ten to power of ten, each labelled.
	p.X.Min, p.X.Max = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	return p
}

// floodPlots draws the flood's two figures, or returns nil if its rows
// were not measured.
func floodPlots(rep report, cfg config) []*plot.Plot {
	memLabel, writtenLabel, _ := floodLabels(cfg)
	var mem, written *row
	for i, r := range rep.Rows {
		switch {
		case r.Error != "":
		case r.Measurement == memLabel:
			mem = &rep.Rows[i]
		case r.Measurement == writtenLabel:
			written = &rep.Rows[i]
		}
	}
	n := rep.Notes
	if mem == nil || written == nil || mem.FloorMedian == nil || written.FloorMedian == nil || n.FloodControlSeconds == 0 {
		return nil
	}
	flood := megabytes(cfg.floodBytes) + " flood of " + floodKind(cfg)
	return []*plot.Plot{
		barChart("Time to write a "+flood+" into a pane", "seconds",
			[]string{"nobody watching the pane", "tmcp waiting on it (wait_for_text)", "a bare control client streaming it"},
			[]float64{*written.FloorMedian, written.TmcpMedian, n.FloodControlSeconds}),
		barChart("Peak memory (RSS) of the watcher", "MiB",
			[]string{"tmcp before the flood", "tmcp waiting through the flood", "the bare control client"},
			[]float64{n.TmcpRestMiB, mem.TmcpMedian, *mem.FloorMedian}),
	}
}

// barChart draws one horizontal bar a value, first at the top.
func barChart(title, unit string, names []string, values []float64) *plot.Plot {
	p := newPlot(title)
	p.X.Label.Text = unit
	p.X.Min = 0
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	p.Add(grid)
	vs := make(plotter.Values, len(values))
	labels := make([]string, len(names))
	for i := range values {
		vs[len(values)-1-i] = values[i]
		labels[len(names)-1-i] = slack(fmt.Sprintf("%s: %.3g", names[i], values[i]))
	}
	bars, err := plotter.NewBarChart(vs, barRow*0.6)
	if err == nil {
		bars.Horizontal = true
		bars.Color = tmcpFill
		p.Add(bars)
	}
	p.NominalY(labels...)
	return p
}

// saveSVG draws plots one under the other, their axes aligned, into an SVG
// file chartWidth wide and height high.
func saveSVG(path string, height vg.Length, plots ...*plot.Plot) error {
	c := vgsvg.New(chartWidth, height)
	rows := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		rows[i] = []*plot.Plot{p}
	}
	canvases := plot.Align(rows, draw.Tiles{Rows: len(plots), Cols: 1, PadX: vg.Millimeter * 3, PadY: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}, draw.New(c))
	for i, p := range plots {
		p.Draw(canvases[i][0])
	}
	var svg bytes.Buffer
	if _, err := c.WriteTo(&svg); err != nil {
		return fmt.Errorf("drawing %s: %w", path, err)
	}
	// The text is laid out with Liberation Sans, which is not embedded (it
	// would add half a megabyte a chart): Arial and Helvetica have its
	// metrics, so a browser without it keeps the layout.
	b := bytes.ReplaceAll(svg.Bytes(), []byte("font-family:"+chartFamily+";"), []byte("font-family:"+chartFamilies+";"))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing a chart: %w", err)
	}
	return nil
}

// The charts' font, and the fonts with its metrics a browser may use.
const (
	chartFamily   = "Liberation Sans"
	chartFamilies = "'Liberation Sans',Arial,Helvetica,sans-serif"
)

// newPlot returns a plot whose text is set in the charts' font.
func newPlot(title string) *plot.Plot {
	p := plot.New()
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		f.Typeface, f.Variant = "Liberation", "Sans"
	}
	p.Title.Text = title
	return p
}

// slack pads a label laid out beside an axis with no-break spaces, a
// sixth of its length: set in a wider sans-serif than the one it was
// measured in (DejaVu Sans, where no Arial is), it then still ends before
// the axis.
func slack(label string) string {
	return label + strings.Repeat("\u00a0", utf8.RuneCountInString(label)/6)
}
