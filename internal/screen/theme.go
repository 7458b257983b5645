package screen

import (
	"fmt"
	"image/color"
)

// Theme is the colours a terminal draws with where the program leaves the
// choice to it: the default foreground and background, the cursor, and
// palette entries 0–15.
type Theme struct {
	Name       string
	Foreground color.RGBA
	Background color.RGBA
	Cursor     color.RGBA // the block under the cursor; its character is drawn in Background
	ANSI       [16]color.RGBA
}

// Dark is light text on a dark background, the default.
func Dark() Theme {
	return Theme{Name: "dark", Foreground: hex(0xe4e4e4), Background: hex(0x161616), Cursor: hex(0xf2c200),
		ANSI: [16]color.RGBA{
			hex(0x000000), hex(0xd83a3a), hex(0x3db34e), hex(0xcf9f1f), hex(0x3a76f0), hex(0xbf4fbf), hex(0x2fb3c4), hex(0xc6c6c6),
			hex(0x6e6e6e), hex(0xff6060), hex(0x70e080), hex(0xffd75f), hex(0x72a2ff), hex(0xff82ff), hex(0x62e0f0), hex(0xffffff),
		}}
}

// Light is dark text on a light background.
func Light() Theme {
	return Theme{Name: "light", Foreground: hex(0x1f1f1f), Background: hex(0xfbfbfb), Cursor: hex(0x1f5fd0),
		ANSI: [16]color.RGBA{
			hex(0x000000), hex(0xbf1b27), hex(0x1a7f37), hex(0x936200), hex(0x0550ae), hex(0x8250df), hex(0x137a82), hex(0x9a9a9a),
			hex(0x5a5a5a), hex(0xe0303c), hex(0x2a9a48), hex(0xb07d00), hex(0x2a6fd8), hex(0xa060f0), hex(0x1d99a2), hex(0xc8c8c8),
		}}
}

// ThemeNamed returns the theme called name: "dark" (also "") or "light".
func ThemeNamed(name string) (Theme, error) {
	switch name {
	case "", "dark":
		return Dark(), nil
	case "light":
		return Light(), nil
	}
	return Theme{}, fmt.Errorf("theme %q is not dark or light", name)
}

// RGB resolves a colour as this theme draws it; fg says whether c is a
// foreground, which decides what the default colour is.
func (t *Theme) RGB(c Color, fg bool) color.RGBA {
	switch c.Kind {
	case IndexedColor:
		return t.palette(c.Index)
	case RGBColor:
		return color.RGBA{c.R, c.G, c.B, 0xff}
	}
	if fg {
		return t.Foreground
	}
	return t.Background
}

// palette returns entry i of the 256-colour palette: the theme's 16, then
// xterm's 6×6×6 colour cube and its 24 greys.
func (t *Theme) palette(i uint8) color.RGBA {
	switch {
	case i < 16:
		return t.ANSI[i]
	case i < 232:
		i -= 16
		level := func(v uint8) uint8 {
			if v == 0 {
				return 0
			}
			return 55 + 40*v
		}
		return color.RGBA{level(i / 36), level(i / 6 % 6), level(i % 6), 0xff}
	}
	g := 8 + 10*(i-232)
	return color.RGBA{g, g, g, 0xff}
}

func hex(v uint32) color.RGBA {
	return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff}
}
