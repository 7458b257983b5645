package pane

import (
	"encoding/base64"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCursorRoundTrips(t *testing.T) {
	tests := []Cursor{
		{PaneID: "%0"},
		{PaneID: "%3", Generation: 1, Offset: 12345},
		{PaneID: "%4294967295", Generation: math.MaxUint64, Offset: math.MaxInt64},
		{PaneID: strings.Repeat("p", maxPaneIDLen), Generation: 7, Offset: 1 << 40},
		{PaneID: "pané", Generation: 2, Offset: 1},
		{PaneID: "%3", Generation: 9, Offset: 77, Anchor: LineHash("build ok"), PanePID: 4242},
		{PaneID: "%3", Generation: 9, Offset: 77, Anchor: math.MaxUint32, PanePID: math.MaxInt32},
	}
	for _, c := range tests {
		s := c.String()
		got, err := ParseCursor(s)
		if err != nil || got != c {
			t.Errorf("ParseCursor(%q) = %+v, %v; want %+v", s, got, err, c)
		}
		if strings.ContainsAny(s, "+/=") {
			t.Errorf("%+v.String() = %q; want URL-safe characters only", c, s)
		}
	}
}

func TestCursorLengthStaysUnderTheBound(t *testing.T) {
	c := Cursor{PaneID: strings.Repeat("p", maxPaneIDLen), Generation: math.MaxUint64, Offset: math.MaxInt64, Anchor: math.MaxUint32, PanePID: math.MaxInt32}
	if n := len(c.String()); n > maxCursorLen {
		t.Errorf("longest cursor has %d characters; maxCursorLen is %d", n, maxCursorLen)
	}
}

func TestParseCursorRefusesMalformedStrings(t *testing.T) {
	valid := Cursor{PaneID: "%3", Generation: 1, Offset: 99}.String()
	enc := base64.RawURLEncoding.EncodeToString
	tests := []struct {
		name, in, reason string
	}{
		{"empty", "", "empty"},
		{"only newlines", "\n\r\n", "empty"},
		{"not base64", "%3:1:99", "not base64url"},
		{"standard base64 padding", valid + "==", "not base64url"},
		{"a newline base64 would skip", valid[:4] + "\n" + valid[4:], "canonical"},
		{"too long", strings.Repeat("A", maxCursorLen+1), "longer than any cursor"},
		{"unknown version", enc([]byte{3, 2, '%', '3', 1, 99}), "unknown version 3"},
		{"anchored with no anchor", enc([]byte{2, 2, '%', '3', 1, 99}), "bad anchor"},
		{"anchored with anchor zero", enc([]byte{2, 2, '%', '3', 1, 99, 0, 1}), "bad anchor"},
		{"anchored with no pane process", enc([]byte{2, 2, '%', '3', 1, 99, 7}), "bad pane process"},
		{"anchor past 32 bits", enc([]byte{2, 2, '%', '3', 1, 99, 0x80, 0x80, 0x80, 0x80, 0x10}), "bad anchor"},
		{"truncated", valid[:len(valid)-2], "truncated"},
		{"only a version", enc([]byte{1}), "truncated pane id length"},
		{"empty pane id", Cursor{Generation: 1}.String(), "pane id length 0"},
		{"pane id too long", Cursor{PaneID: strings.Repeat("p", maxPaneIDLen+1)}.String(), "pane id length 65"},
		{"pane id runs past the end", enc([]byte{1, 9, '%', '3'}), "truncated pane id"},
		{"pane id not UTF-8", enc([]byte{1, 2, '%', 0xff, 1, 99}), "not UTF-8"},
		{"no offset", enc([]byte{1, 2, '%', '3', 1}), "truncated offset"},
		{"negative offset", Cursor{PaneID: "%3", Offset: -1}.String(), "out of range"},
		{"trailing bytes", enc([]byte{1, 2, '%', '3', 1, 99, 0}), "1 trailing bytes"},
		{"padded varint", enc([]byte{1, 2, '%', '3', 0x81, 0x00, 99}), "canonical"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseCursor(tt.in)
			if !errors.Is(err, ErrBadCursor) || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("ParseCursor(%q) = %+v, %v; want an ErrBadCursor saying %q", tt.in, c, err, tt.reason)
			}
			if c != (Cursor{}) {
				t.Errorf("ParseCursor(%q) returned %+v with its error; want the zero Cursor", tt.in, c)
			}
		})
	}
}

func FuzzCursor(f *testing.F) {
	f.Add("%3", uint64(1), int64(99), Cursor{PaneID: "%3", Generation: 1, Offset: 99}.String())
	f.Add("", uint64(0), int64(-1), "")
	f.Add("%0", uint64(math.MaxUint64), int64(math.MaxInt64), "AQIlMwFj")
	f.Add("x", uint64(5), int64(5), "garbage!")
	f.Fuzz(func(t *testing.T, pane string, gen uint64, off int64, garbage string) {
		c := Cursor{PaneID: pane, Generation: gen, Offset: off}
		got, err := ParseCursor(c.String())
		valid := pane != "" && len(pane) <= maxPaneIDLen && off >= 0 && utf8.ValidString(pane)
		switch {
		case valid && (err != nil || got != c):
			t.Errorf("ParseCursor(%+v.String()) = %+v, %v; want it back", c, got, err)
		case !valid && err == nil:
			t.Errorf("ParseCursor(%+v.String()) accepted an invalid cursor", c)
		}

		if got, err := ParseCursor(garbage); err == nil && got.String() != garbage {
			t.Errorf("ParseCursor(%q) = %+v, which encodes as %q; two strings name one cursor", garbage, got, got.String())
		}
	})
}

func TestLineHashIgnoresTrailingSpacesAndIsNeverZero(t *testing.T) {
	if LineHash("make: done") != LineHash("make: done   ") {
		t.Error("trailing spaces change a line's hash: tmux's history may keep them or not")
	}
	if LineHash("a") == LineHash("b") || LineHash("") == 0 {
		t.Errorf("LineHash: a %d, b %d, empty %d", LineHash("a"), LineHash("b"), LineHash(""))
	}
}
