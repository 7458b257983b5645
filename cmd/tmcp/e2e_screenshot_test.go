package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"

	"github.com/tmcp/tmcp/internal/screen"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// knownScreen is printed into a pane for the screenshot tests: on row 0 a
// red word at column 0, a reverse-video word at 4, a 256-colour block
// (202) at 8–11, a true-colour block at 13–16, a yellow CJK character at
// 18–19 and a green x at 20; on rows 1–3 a cyan box over columns 0–3.
const knownScreen = `clear; printf '\033[31mRED\033[0m \033[7mREV\033[0m \033[48;5;202m    \033[0m \033[48;2;10;200;30m    \033[0m \033[33m\346\274\242\033[32mx\033[0m\n\033[36m\342\224\214\342\224\200\342\224\200\342\224\220\n\342\224\202  \342\224\202\n\342\224\224\342\224\200\342\224\200\342\224\230\033[0m\n'`

// shotReply is screenshot_pane's structured reply.
type shotReply struct {
	PaneID string  `json:"paneId"`
	Size   string  `json:"size"`
	Image  string  `json:"image"`
	Scale  float64 `json:"scale"`
	Time   string  `json:"time"`
	Note   string  `json:"note"`
}

// takeShot calls screenshot_pane, checks the reply's shape — a fields
// block equal to structuredContent, then a PNG image block — and returns
// the fields and the decoded picture.
func takeShot(t *testing.T, s *session, args map[string]any) (shotReply, *image.RGBA) {
	t.Helper()
	res := s.call("screenshot_pane", args)
	if res.IsError {
		t.Fatalf("screenshot_pane %v failed: %s", args, allText(res))
	}
	if len(res.Content) != 2 {
		t.Fatalf("screenshot_pane: %d content blocks, want 2 (fields, image)", len(res.Content))
	}
	fields, ok0 := res.Content[0].(*mcp.TextContent)
	pic, ok1 := res.Content[1].(*mcp.ImageContent)
	if !ok0 || !ok1 {
		t.Fatalf("screenshot_pane: content blocks are %T and %T, want text and image", res.Content[0], res.Content[1])
	}
	checkFieldsBlock(t, "screenshot_pane", res, fields)
	var out shotReply
	decodeStructured(t, "screenshot_pane", res, &out)
	if pic.MIMEType != "image/png" {
		t.Errorf("the image is %q, want image/png", pic.MIMEType)
	}
	img, err := png.Decode(bytes.NewReader(pic.Data))
	if err != nil {
		t.Fatalf("the image block (%d bytes) is not a PNG: %v", len(pic.Data), err)
	}
	b := img.Bounds()
	rgba := image.NewRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			rgba.Set(x, y, img.At(x, y))
		}
	}
	if out.Image != fmt.Sprintf("%dx%d", b.Dx(), b.Dy()) {
		t.Errorf("the reply says the image is %s; it is %dx%d", out.Image, b.Dx(), b.Dy())
	}
	return out, rgba
}

// goMonoCell is the size of a terminal cell in Go Mono at scale: its
// advance and its ascent plus descent, read from the font itself.
func goMonoCell(t *testing.T, scale float64) image.Point {
	t.Helper()
	f, err := sfnt.Parse(gomono.TTF)
	if err != nil {
		t.Fatal(err)
	}
	var b sfnt.Buffer
	ppem := fixed.I(int(math.Round(screen.FontSize * scale)))
	i, _ := f.GlyphIndex(&b, 'M')
	advance, err := f.GlyphAdvance(&b, i, ppem, font.HintingNone)
	if err != nil {
		t.Fatal(err)
	}
	m, err := f.Metrics(&b, ppem, font.HintingNone)
	if err != nil {
		t.Fatal(err)
	}
	return image.Pt(advance.Round(), m.Ascent.Ceil()+m.Descent.Ceil())
}

// shotCells is a picture read cell by cell.
type shotCells struct {
	img  *image.RGBA
	cell image.Point
}

// rect is the pixels of n cells of row from col.
func (p shotCells) rect(row, col, n int) image.Rectangle {
	return image.Rect(col*p.cell.X, row*p.cell.Y, (col+n)*p.cell.X, (row+1)*p.cell.Y)
}

// colours counts the colours of a rectangle's pixels.
func (p shotCells) colours(r image.Rectangle) map[color.RGBA]int {
	n := map[color.RGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			n[p.img.RGBAAt(x, y)]++
		}
	}
	return n
}

// solid reports whether every pixel of r is c.
func (p shotCells) solid(r image.Rectangle, c color.RGBA) bool {
	return p.colours(r)[c] == r.Dx()*r.Dy()
}

func TestScreenshotPaneDrawsTheScreenAsATerminalWould(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("send-keys", "-t", "%0", knownScreen, "Enter")
	waitScreen(t, srv, "%0", "the known screen", func(l []string) bool { return len(l) > 3 && strings.HasPrefix(l[3], "└──┘") })
	// The prompt after it sets the cursor; wait until tmux has it there.
	waitScreen(t, srv, "%0", "the prompt", func(l []string) bool { return len(l) > 4 && strings.TrimSpace(l[4]) != "" })
	cursorX, _ := strconv.Atoi(paneFormat(srv, "%0", "#{cursor_x}"))
	cursorY, _ := strconv.Atoi(paneFormat(srv, "%0", "#{cursor_y}"))
	s := startTMCP(t, srv, "readonly")

	before := time.Now().Add(-time.Second)
	out, img := takeShot(t, s, map[string]any{"paneId": "%0"})
	cell := goMonoCell(t, 1)
	p := shotCells{img, cell}
	th := screen.Dark()

	if w, h := tmuxtest.Width*cell.X, tmuxtest.Height*cell.Y; img.Bounds().Size() != image.Pt(w, h) {
		t.Fatalf("the picture is %v px; %d×%d cells of %v (Go Mono at %d px) make %dx%d",
			img.Bounds().Size(), tmuxtest.Width, tmuxtest.Height, cell, screen.FontSize, w, h)
	}
	if taken, err := time.Parse(time.RFC3339, out.Time); out.PaneID != "%0" || out.Size != fmt.Sprintf("%dx%d", tmuxtest.Width, tmuxtest.Height) ||
		out.Scale != 1 || out.Note != "" || err != nil || taken.Before(before.Truncate(time.Second)) || taken.After(time.Now()) {
		t.Errorf("the reply's fields: %+v (time: %v)", out, err)
	}

	// Each word and block: the colours it must be drawn in, every pixel one
	// of them or a blend of the two (a glyph's edge), and both present.
	cases := []struct {
		what     string
		row, col int
		n        int
		fg, bg   color.RGBA
	}{
		{"the red word", 0, 0, 3, th.ANSI[1], th.Background},
		{"the reverse-video word", 0, 4, 3, th.Background, th.Foreground},
		{"the 256-colour block (202)", 0, 8, 4, color.RGBA{255, 95, 0, 255}, color.RGBA{255, 95, 0, 255}},
		{"the true-colour block", 0, 13, 4, color.RGBA{10, 200, 30, 255}, color.RGBA{10, 200, 30, 255}},
		{"the CJK character, over two cells", 0, 18, 2, th.ANSI[3], th.Background},
		{"the x after it", 0, 20, 1, th.ANSI[2], th.Background},
	}
	for _, c := range cases {
		r := p.rect(c.row, c.col, c.n)
		seen := p.colours(r)
		for col, n := range seen {
			if !between(col, c.fg, c.bg) {
				t.Errorf("%s: %d pixels of %v in %v; want only %v, %v and blends", c.what, n, col, r, c.fg, c.bg)
				break
			}
		}
		if seen[c.fg] == 0 || seen[c.bg] == 0 {
			t.Errorf("%s: colours %v in %v; want %v and %v", c.what, seen, r, c.fg, c.bg)
		}
	}
	// The blank cells either side of each block are the background: the
	// blocks sit exactly where the pane has them.
	for _, col := range []int{7, 12, 17, 21} {
		if !p.solid(p.rect(0, col, 1), th.Background) {
			t.Errorf("row 0, column %d should be blank; it has %v", col, p.colours(p.rect(0, col, 1)))
		}
	}
	// The wide character takes both its cells, and the x is two cells on.
	if p.colours(p.rect(0, 19, 1))[th.ANSI[3]] == 0 || p.colours(p.rect(0, 19, 1))[th.ANSI[2]] != 0 {
		t.Errorf("column 19 should be the CJK character's second half; it has %v", p.colours(p.rect(0, 19, 1)))
	}
	// The box: one unbroken cyan line along its top and one down its left
	// side, across the cells they pass through.
	cyan := th.ANSI[6]
	top, side := false, false
	for y := cell.Y; y < 2*cell.Y && !top; y++ {
		top = p.solid(image.Rect(cell.X/2, y, 4*cell.X-cell.X/2, y+1), cyan)
	}
	for x := 0; x < cell.X && !side; x++ {
		side = p.solid(image.Rect(x, cell.Y+cell.Y/2, x+1, 4*cell.Y-cell.Y/2), cyan)
	}
	if !top || !side {
		t.Errorf("the box: an unbroken line along the top %v, down the side %v; want both", top, side)
	}
	if !p.solid(p.rect(2, 1, 2), th.Background) {
		t.Errorf("inside the box should be blank; it has %v", p.colours(p.rect(2, 1, 2)))
	}
	// The cursor: a block on the blank cell tmux has it on, and nowhere else.
	if !p.solid(p.rect(cursorY, cursorX, 1), th.Cursor) {
		t.Errorf("the cursor's cell (%d,%d) has %v; want all %v", cursorX, cursorY, p.colours(p.rect(cursorY, cursorX, 1)), th.Cursor)
	}
	if n := p.colours(img.Bounds())[th.Cursor]; n != cell.X*cell.Y {
		t.Errorf("%d pixels of the cursor's colour; want one cell's, %d", n, cell.X*cell.Y)
	}
}

// between reports whether c lies on the blend from a to b, channel by channel.
func between(c, a, b color.RGBA) bool {
	in := func(v, x, y uint8) bool { return min(x, y) <= v && v <= max(x, y) }
	return in(c.R, a.R, b.R) && in(c.G, a.G, b.G) && in(c.B, a.B, b.B)
}

func TestScreenshotPaneTakesAThemeAScaleARegionAndScrollback(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("send-keys", "-t", "%0", knownScreen, "Enter")
	waitScreen(t, srv, "%0", "the known screen", func(l []string) bool { return len(l) > 3 && strings.HasPrefix(l[3], "└──┘") })
	s := startTMCP(t, srv, "")

	t.Run("light theme at scale 2", func(t *testing.T) {
		_, img := takeShot(t, s, map[string]any{"theme": "light", "scale": 2})
		cell := goMonoCell(t, 2)
		p := shotCells{img, cell}
		if img.Bounds().Size() != image.Pt(tmuxtest.Width*cell.X, tmuxtest.Height*cell.Y) {
			t.Errorf("the picture is %v px; want %d×%d cells of %v", img.Bounds().Size(), tmuxtest.Width, tmuxtest.Height, cell)
		}
		light := screen.Light()
		if !p.solid(p.rect(10, 10, 5), light.Background) || p.colours(p.rect(0, 0, 3))[light.ANSI[1]] == 0 {
			t.Errorf("a blank cell has %v, the red word %v; want the light theme's background and red",
				p.colours(p.rect(10, 10, 5)), p.colours(p.rect(0, 0, 3)))
		}
	})
	t.Run("rows 1 to 3: the box alone", func(t *testing.T) {
		out, img := takeShot(t, s, map[string]any{"paneId": "%0", "startLine": 1, "endLine": 3})
		cell := goMonoCell(t, 1)
		p := shotCells{img, cell}
		if img.Bounds().Size() != image.Pt(tmuxtest.Width*cell.X, 3*cell.Y) || out.Size != fmt.Sprintf("%dx%d", tmuxtest.Width, tmuxtest.Height) {
			t.Errorf("the picture is %v px, reply %+v; want 3 rows of %d cells of %v", img.Bounds().Size(), out, tmuxtest.Width, cell)
		}
		if p.colours(p.rect(0, 0, 4))[screen.Dark().ANSI[6]] == 0 {
			t.Errorf("row 0 of the region is not the box's top: %v", p.colours(p.rect(0, 0, 4)))
		}
	})
	t.Run("scrollback", func(t *testing.T) {
		srv.Must("send-keys", "-t", "%0", "clear; seq 1 60", "Enter")
		waitScreen(t, srv, "%0", "60", func(l []string) bool { return hasLine(l, "60") })
		waitPane(t, srv, "%0", "#{cursor_x}", "2")
		cursorY, _ := strconv.Atoi(paneFormat(srv, "%0", "#{cursor_y}"))
		_, img := takeShot(t, s, map[string]any{"startLine": -30})
		cell := goMonoCell(t, 1)
		if img.Bounds().Dy() != (30+tmuxtest.Height)*cell.Y {
			t.Errorf("30 rows of history and the screen: %d px high, want %d", img.Bounds().Dy(), (30+tmuxtest.Height)*cell.Y)
		}
		// The cursor is as far down the picture as the rows of history above it.
		p := shotCells{img, cell}
		if at := p.rect(30+cursorY, 2, 1); !p.solid(at, screen.Dark().Cursor) {
			t.Errorf("the cursor at row %d of the screen should be at row %d of the picture: %v there", cursorY, 30+cursorY, p.colours(at))
		}
	})
	t.Run("refusals", func(t *testing.T) {
		if msg := s.fail("screenshot_pane", map[string]any{"paneId": "%99"}); !strings.Contains(msg, "%99") {
			t.Errorf("a missing pane: %q, want it named", msg)
		}
		if msg := s.fail("screenshot_pane", map[string]any{"theme": "solarized"}); !strings.Contains(msg, "dark or light") {
			t.Errorf("an unknown theme: %q", msg)
		}
	})
}

// TestScreenshotPaneFitsAHugePaneWithinTheBound takes a pane larger than
// the bound allows at the scale asked for: the picture is scaled down to
// fit, and the reply says so.
func TestScreenshotPaneFitsAHugePaneWithinTheBound(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("resize-window", "-t", "=main:", "-x", "500", "-y", "120")
	waitPane(t, srv, "%0", "#{pane_width}x#{pane_height}", "500x120")
	s := startTMCP(t, srv, "")
	out, img := takeShot(t, s, map[string]any{"scale": 2})
	b := img.Bounds()
	if b.Dx() > screen.MaxSide || b.Dy() > screen.MaxSide || out.Scale >= 2 || !strings.Contains(out.Note, "scaled down") {
		t.Fatalf("a 500x120 pane at scale 2: %v px, reply %+v; want within %d px, scaled down and saying so", b.Size(), out, screen.MaxSide)
	}
	cell := goMonoCell(t, out.Scale)
	if b.Size() != image.Pt(500*cell.X, 120*cell.Y) {
		t.Errorf("at scale %g the picture is %v px; want 500×120 cells of %v", out.Scale, b.Size(), cell)
	}
}

// TestScreenshotPaneRepliesAsJSON checks that a client reading only text
// gets the pane, its size, the image's size and the time.
func TestScreenshotPaneRepliesAsJSON(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "")
	text := allText(s.call("screenshot_pane", nil))
	var fields map[string]any
	if err := json.Unmarshal([]byte(text), &fields); err != nil {
		t.Fatalf("the text block %q is not JSON: %v", text, err)
	}
	for _, k := range []string{"paneId", "size", "image", "time"} {
		if fields[k] == nil {
			t.Errorf("the text block %s has no %s", text, k)
		}
	}
}

// TestScreenshotPaneDrawsARemotePane takes the picture through the far
// host's tmux, over ssh, as every other tool does.
func TestScreenshotPaneDrawsARemotePane(t *testing.T) {
	t.Parallel()
	f := newRemoteFixture(t)
	pane := shellPane(t, f.far)
	f.far.Must("send-keys", "-t", pane, `clear; printf '\033[31mFAR\033[0m\n'`, "Enter")
	waitScreen(t, f.far, pane, "FAR", func(l []string) bool { return hasLine(l, "FAR") })
	out, img := takeShot(t, f.s, map[string]any{"paneId": "far:" + pane})
	if out.PaneID != "far:"+pane {
		t.Errorf("the reply names pane %q, want far:%s", out.PaneID, pane)
	}
	p := shotCells{img, goMonoCell(t, 1)}
	if seen := p.colours(p.rect(0, 0, 3)); seen[screen.Dark().ANSI[1]] == 0 {
		t.Errorf("the far pane's red word is not drawn red: %v", seen)
	}
}
