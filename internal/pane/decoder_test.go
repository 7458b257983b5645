package pane

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// show renders an event compactly for the tables: "abc" is a line, "abc+"
// a line cut at MaxLineLen, "osc 133;D;0" an OSC, "alt on"/"alt off" a
// switch of screen.
func show(e Event) string {
	switch e.Kind {
	case EventLine:
		if e.Cut {
			return e.Text + "+"
		}
		return e.Text
	case EventOSC:
		return "osc " + e.Text
	case EventAltScreen:
		if e.Alt {
			return "alt on"
		}
		return "alt off"
	}
	return e.Kind.String()
}

// decode feeds chunks to a new decoder and returns its events and the
// partial line left at the end.
func decode(chunks ...[]byte) (events []Event, partial string) {
	var d Decoder
	for _, c := range chunks {
		d.Decode(c, func(e Event) { events = append(events, e) })
	}
	return events, d.Partial()
}

func shown(events []Event) []string {
	out := []string{}
	for _, e := range events {
		out = append(out, show(e))
	}
	return out
}

var decoderTests = []struct {
	name    string
	in      string
	want    []string
	partial string
}{
	// Lines.
	{"newline ends a line", "a\nb\n", []string{"a", "b"}, ""},
	{"CRLF ends a line", "a\r\nb\r\n", []string{"a", "b"}, ""},
	{"empty lines count", "\n\r\n", []string{"", ""}, ""},
	{"a prompt without newline is partial", "out\n$ ", []string{"out"}, "$ "},
	{"carriage return overwrites progress", "10%\r20%\r100%\n", []string{"100%"}, ""},
	{"carriage return keeps the longer tail", "abcdef\rXY\n", []string{"XYcdef"}, ""},
	{"backspace moves one character left", "ab\bc\n", []string{"ac"}, ""},
	{"backspace stops at the line start", "\b\bab\n", []string{"ab"}, ""},
	{"backspace moves over a wide character", "é€\bx\n", []string{"éx"}, ""},
	{"tab is kept", "a\tb\n", []string{"a\tb"}, ""},
	{"other controls are dropped", "a\x00b\x07c\x0bd\x0ce\x0ef\x7fg\n", []string{"bell", "abcdefg"}, ""},

	// The bell.
	{"a bell is an event and shows nothing", "a\x07b\n", []string{"bell", "ab"}, ""},
	{"a bell inside a CSI rings", "\x1b[1\x07mx\n", []string{"bell", "x"}, ""},
	{"the BEL that ends an OSC is no bell", "\x1b]0;t\x07\x1b]133;A\x07$ ", []string{"osc 0;t", "osc 133;A"}, "$ "},
	{"a BEL inside a DCS is no bell", "\x1bPa\x07b\x1b\\x\n", []string{"x"}, ""},

	// Escape sequences.
	{"colours are stripped", "\x1b[1;31mred\x1b[0m\n", []string{"red"}, ""},
	{"private CSI is stripped", "\x1b[?25lx\x1b[?2004h\n", []string{"x"}, ""},
	{"cursor movement is stripped", "\x1b[2;5Hx\x1b[3Dy\x1b[Az\n", []string{"xyz"}, ""},
	{"CSI with an intermediate is stripped", "\x1b[2 qx\x1b[>4;1m\n", []string{"x"}, ""},
	{"a control inside CSI still acts", "a\x1b[1\nmb\n", []string{"a", "b"}, ""},
	{"DEL inside CSI is ignored", "\x1b[1\x7fmx\n", []string{"x"}, ""},
	{"CAN cancels a CSI", "\x1b[12\x18x\n", []string{"x"}, ""},
	{"SUB cancels a CSI", "\x1b[12\x1ax\n", []string{"x"}, ""},
	{"ESC restarts a sequence", "\x1b[1\x1b[2mx\n", []string{"x"}, ""},
	{"a high byte ends a CSI and is text", "\x1b[1é\n", []string{"é"}, ""},
	{"two- and three-byte escapes are stripped", "\x1b(B\x1b)0\x1b=\x1b>\x1b7\x1b8\x1bMx\x1b#8\n", []string{"x"}, ""},
	{"a control after ESC acts", "a\x1b\n7b\n", []string{"a", "b"}, ""},
	{"ESC then a high byte is text", "\x1bé\n", []string{"é"}, ""},
	{"ESC intermediates then a high byte is text", "\x1b(é\n", []string{"é"}, ""},

	// OSC and other strings.
	{"OSC ended by BEL", "\x1b]0;title\x07x\n", []string{"osc 0;title", "x"}, ""},
	{"OSC ended by ST", "\x1b]133;D;0\x1b\\x\n", []string{"osc 133;D;0", "x"}, ""},
	{"OSC ended by another escape", "\x1b]2;t\x1b[1mx\n", []string{"osc 2;t", "x"}, ""},
	{"empty OSC", "\x1b]\x07", []string{"osc "}, ""},
	{"controls inside OSC are ignored", "\x1b]0;a\nb\r\x7fc\x07", []string{"osc 0;abc"}, ""},
	{"UTF-8 inside OSC is kept", "\x1b]0;café\x07", []string{"osc 0;café"}, ""},
	{"invalid UTF-8 inside OSC is replaced", "\x1b]0;\xff\x07", []string{"osc 0;\uFFFD"}, ""},
	{"CAN cancels an OSC", "\x1b]0;t\x18x\n", []string{"x"}, ""},
	{"OSC markers bracket output", "\x1b]133;C\x07out\r\n\x1b]133;D;1\x07$ ", []string{"osc 133;C", "out", "osc 133;D;1"}, "$ "},
	{"DCS is stripped", "\x1bPq#0;2;0;0;0#0~~@@\x1b\\x\n", []string{"x"}, ""},
	{"DCS keeps an inner escape that is not ST", "\x1bPtmux;\x1b\x1b]0;t\x07\x1b\\x\n", []string{"x"}, ""},
	{"SOS, PM and APC are stripped", "\x1bXa\x1b\\\x1b^b\x1b\\\x1b_c\x1b\\x\n", []string{"x"}, ""},
	{"screen's title string is stripped", "\x1bktitle\x1b\\x\n", []string{"x"}, ""},
	{"CAN cancels a DCS", "\x1bPabc\x18x\n", []string{"x"}, ""},

	// Erase in line.
	{"erase to the end clears a longer line", "downloading\r\x1b[Kdone\n", []string{"done"}, ""},
	{"erase to the end with parameter 0", "abcdef\b\b\b\x1b[0K\n", []string{"abc"}, ""},
	{"erase to the start blanks through the cursor", "abcdef\b\b\x1b[1K\n", []string{"     f"}, ""},
	{"erase the whole line", "abc\x1b[2K\n", []string{""}, ""},
	{"erase the whole line, then write at the cursor", "abc\x1b[2Kx\n", []string{"   x"}, ""},
	{"erase, return and rewrite", "abcdef\x1b[2K\rxy\n", []string{"xy"}, ""},
	{"erased cells between writes read as spaces", "abcdef\x1b[2Kz\rxy\n", []string{"xy    z"}, ""},
	{"written spaces are kept", "ab  \n", []string{"ab  "}, ""},
	{"erase a prefix, return and overwrite", "abcdef\b\b\x1b[1K\rx\n", []string{"x    f"}, ""},
	{"a private erase is stripped", "abc\r\x1b[?Kx\n", []string{"xbc"}, ""},
	{"an unknown erase mode is stripped", "abc\r\x1b[5Kx\n", []string{"xbc"}, ""},

	// Alternate screen.
	{"1049 enters and leaves", "\x1b[?1049hpaint\n\x1b[?1049lback\n", []string{"alt on", "paint", "alt off", "back"}, ""},
	{"1047 enters and leaves", "\x1b[?1047h\x1b[?1047l", []string{"alt on", "alt off"}, ""},
	{"47 enters and leaves", "\x1b[?47h\x1b[?47l", []string{"alt on", "alt off"}, ""},
	{"combined modes switch once", "\x1b[?1049;1047;25h\x1b[?25;1049l", []string{"alt on", "alt off"}, ""},
	{"entering twice reports once", "\x1b[?1049h\x1b[?47h", []string{"alt on"}, ""},
	{"leaving the main screen reports nothing", "\x1b[?1049l", []string{}, ""},
	{"1049 without ? is not the alternate screen", "\x1b[1049h", []string{}, ""},
	{"the main line is kept across the alternate screen", "$ \x1b[?1049hmenu\x1b[?1049lvim", []string{"alt on", "alt off"}, "$ vim"},
	{"the alternate line is partial while shown", "$ \x1b[?1049hmenu", []string{"alt on"}, "menu"},

	// UTF-8.
	{"multibyte characters", "é€😀\n", []string{"é€😀"}, ""},
	{"an invalid byte becomes U+FFFD", "a\xffb\n", []string{"a\uFFFDb"}, ""},
	{"a lone continuation byte becomes U+FFFD", "a\x80b\n", []string{"a\uFFFDb"}, ""},
	{"a cut-short character is one U+FFFD", "\xe2\x82x\n", []string{"\uFFFDx"}, ""},
	{"a cut-short character before ESC", "\xe2\x82\x1b[mx\n", []string{"\uFFFDx"}, ""},
	{"a cut-short character before newline", "a\xf0\x9f\n", []string{"a\uFFFD"}, ""},
	{"a surrogate is invalid", "\xed\xa0\x80\n", []string{"\uFFFD\uFFFD\uFFFD"}, ""},
	{"an overlong form is invalid", "\xc0\xaf\n", []string{"\uFFFD\uFFFD"}, ""},
	{"C1 controls in UTF-8 are dropped", "a\u009bb\u0085c\n", []string{"abc"}, ""},
	{"an incomplete character is held, not shown", "ab\xe2\x82", []string{}, "ab"},
}

func TestDecoder(t *testing.T) {
	for _, tt := range decoderTests {
		t.Run(tt.name, func(t *testing.T) {
			events, partial := decode([]byte(tt.in))
			if got := shown(events); !slices.Equal(got, tt.want) || partial != tt.partial {
				t.Errorf("Decode(%q) = %q, partial %q; want %q, partial %q", tt.in, got, partial, tt.want, tt.partial)
			}
		})
	}
}

// TestDecoderSplitAnywhereGivesTheSameResult feeds every table input in
// three pieces, split at every pair of byte boundaries, and one byte at a
// time.
func TestDecoderSplitAnywhereGivesTheSameResult(t *testing.T) {
	for _, tt := range decoderTests {
		in := []byte(tt.in)
		want, wantPartial := decode(in)
		check := func(how string, chunks ...[]byte) {
			got, partial := decode(chunks...)
			if !slices.Equal(got, want) || partial != wantPartial {
				t.Errorf("%s: %q split %s gives %v, partial %q; unsplit gives %v, partial %q",
					tt.name, tt.in, how, got, partial, want, wantPartial)
			}
		}
		for i := range len(in) + 1 {
			for j := i; j <= len(in); j++ {
				check(fmt.Sprintf("at %d and %d", i, j), in[:i], in[i:j], in[j:])
			}
		}
		var bytewise [][]byte
		for i := range in {
			bytewise = append(bytewise, in[i:i+1])
		}
		check("byte by byte", bytewise...)
	}
}

func TestDecoderReportsWhereEachEventEnds(t *testing.T) {
	const base = 1000
	parts := []struct {
		in   string
		want string // the event this part ends, if any
	}{
		{"ab\r\n", "ab"},
		{"\x1b]133;C\x07", "osc 133;C"},
		{"out", ""},
		{"put\n", "output"},
		{"\x1b]133;D;0\x1b\\", "osc 133;D;0"},
		{"\x1b]2;t", ""},
		{"\x1b", "osc 2;t"}, // ended by the ESC, not by the byte after it
		{"[?1049h", "alt on"},
		{"\x1b[?1049l", "alt off"},
		{"\x07", "bell"},
	}
	var in strings.Builder
	var want []string
	off := int64(base)
	for _, p := range parts {
		in.WriteString(p.in)
		off += int64(len(p.in))
		if p.want != "" {
			want = append(want, fmt.Sprintf("%s @%d", p.want, off))
		}
	}
	d := NewDecoder(base)
	var got []string
	d.Decode([]byte(in.String()), func(e Event) {
		got = append(got, fmt.Sprintf("%s @%d", show(e), e.Offset))
	})
	if !slices.Equal(got, want) {
		t.Errorf("Decode(%q) from offset %d = %q; want %q", in.String(), base, got, want)
	}
	if d.Offset() != off {
		t.Errorf("Offset() = %d; want %d", d.Offset(), off)
	}
}

func TestDecoderPartialInsideEmitIsTheLineAtTheEvent(t *testing.T) {
	var d Decoder
	var atMarker string
	d.Decode([]byte("no newline\x1b]133;D;0\x07\r\n$ "), func(e Event) {
		if e.Kind == EventOSC {
			atMarker = d.Partial()
		}
	})
	if atMarker != "no newline" {
		t.Errorf("Partial() at the OSC = %q; want %q", atMarker, "no newline")
	}
}

func TestDecoderCutsLongLinesWithoutLosingCharacters(t *testing.T) {
	in := strings.Repeat("a", MaxLineLen) + strings.Repeat("b", MaxLineLen+2) + "\n"
	events, _ := decode([]byte(in))
	var got []string
	for _, e := range events {
		got = append(got, fmt.Sprintf("%c×%d cut=%v", e.Text[0], len(e.Text), e.Cut))
	}
	want := []string{
		fmt.Sprintf("a×%d cut=true", MaxLineLen),
		fmt.Sprintf("b×%d cut=true", MaxLineLen),
		"b×2 cut=false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("a line of %d characters gives %q; want %q", 2*MaxLineLen+2, got, want)
	}
	if events[0].Offset != MaxLineLen {
		t.Errorf("first cut ends at offset %d; want %d", events[0].Offset, MaxLineLen)
	}
}

func TestDecoderBoundsEscapeSequences(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"an OSC at the bound is kept",
			"\x1b]" + strings.Repeat("x", MaxSequenceLen) + "\x07",
			[]string{"osc " + strings.Repeat("x", MaxSequenceLen)}},
		{"an OSC over the bound is dropped, up to its terminator",
			"\x1b]" + strings.Repeat("x", MaxSequenceLen+1) + "\nstill inside\x07after\n",
			[]string{"after"}},
		{"a CSI over the bound is dropped",
			"\x1b[?" + strings.Repeat("1", MaxSequenceLen) + ";1049hX\n",
			[]string{"X"}},
		{"a huge CSI parameter saturates",
			"\x1b[" + strings.Repeat("9", 40) + "Kx\n",
			[]string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Decoder
			var got []string
			d.Decode([]byte(tt.in), func(e Event) { got = append(got, show(e)) })
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %.60q; want %.60q", got, tt.want)
			}
			if cap(d.seq) > 2*MaxSequenceLen {
				t.Errorf("sequence buffer grew to %d bytes; bound is %d", cap(d.seq), MaxSequenceLen)
			}
		})
	}
}

func TestDecoderResetForgetsHeldInput(t *testing.T) {
	var d Decoder
	d.Decode([]byte("old\x1b[?1049hmid\x1b]0;unfinished"), nil)
	d.Reset(500)
	events, _ := []Event(nil), ""
	d.Decode([]byte("new\n"), func(e Event) { events = append(events, e) })
	if got := shown(events); !slices.Equal(got, []string{"new"}) || events[0].Offset != 504 || d.AltScreen() {
		t.Errorf("after Reset(500), %q gives %q at %d, alt %v; want [new] at 504 on the main screen",
			"new\n", got, events[0].Offset, d.AltScreen())
	}
}

// BenchmarkDecoderErase shows the lazy erase: a full line erased and
// rewritten over and over must cost about as much per byte as plain text
// (compare with BenchmarkDecoder); a decoder that paid the line's length on
// each erase would be thousands of times slower here.
func BenchmarkDecoderErase(b *testing.B) {
	long := strings.Repeat("x", MaxLineLen-1)
	erasing := []byte(long + strings.Repeat("\x1b[1K\x1b[2K\x1b[K", 20000) + "\rx\n")
	b.SetBytes(int64(len(erasing)))
	for b.Loop() {
		var d Decoder
		d.Decode(erasing, nil)
	}
}

func FuzzDecoder(f *testing.F) {
	for _, tt := range decoderTests {
		f.Add([]byte(tt.in), uint16(len(tt.in)/2))
	}
	f.Fuzz(func(t *testing.T, in []byte, split uint16) {
		want, wantPartial := decode(in)
		i := int(split) % (len(in) + 1)
		got, partial := decode(in[:i], in[i:])
		if !slices.Equal(got, want) || partial != wantPartial {
			t.Fatalf("%q split at %d gives %v, %q; unsplit gives %v, %q", in, i, got, partial, want, wantPartial)
		}
		var bytewise [][]byte
		for i := range in {
			bytewise = append(bytewise, in[i:i+1])
		}
		if got, partial := decode(bytewise...); !slices.Equal(got, want) || partial != wantPartial {
			t.Fatalf("%q byte by byte gives %v, %q; unsplit gives %v, %q", in, got, partial, want, wantPartial)
		}
		for _, s := range append(shown(want), wantPartial) {
			if !utf8.ValidString(s) {
				t.Fatalf("%q gives invalid UTF-8 %q", in, s)
			}
			for _, r := range s {
				if r != '\t' && isControl(r) {
					t.Fatalf("%q gives %q, which holds control character %U", in, s, r)
				}
			}
		}
		var prev int64
		for _, e := range want {
			if e.Offset < prev || e.Offset > int64(len(in)) {
				t.Fatalf("%q gives event %v at offset %d after %d, input length %d", in, show(e), e.Offset, prev, len(in))
			}
			prev = e.Offset
		}
	})
}

func BenchmarkDecoder(b *testing.B) {
	chunk := []byte(strings.Repeat("\x1b[1;32mok\x1b[0m  compiling crate número 42 of 99\r\n", 100))
	b.SetBytes(int64(len(chunk)))
	var d Decoder
	for b.Loop() {
		d.Decode(chunk, nil)
	}
}

// checkPartials decodes in one byte at a time and checks, after each, that
// the line kept for Partial reads as one rendered afresh.
func checkPartials(t *testing.T, in []byte) {
	t.Helper()
	var d Decoder
	for i := range in {
		d.Decode(in[i:i+1], nil)
		fresh := d.line
		fresh.shown, fresh.clean = nil, 0
		if got, want := d.Partial(), fresh.String(); got != want {
			t.Fatalf("%q after %d bytes: Partial %q, rendered afresh %q", in, i+1, got, want)
		}
	}
}

func TestPartialReadAsALineGrowsIsTheLineRenderedAfresh(t *testing.T) {
	for _, tt := range decoderTests {
		checkPartials(t, []byte(tt.in))
	}
	for _, in := range []string{
		"abc\rX\x1b[Kdef",
		"abcdef\x1b[1Kgh\x1b[2Kij\rk",
		"long line é✓ growing\bX\b\b\x1b[Kmore",
		"12345\r\x1b[3C9\x1b[0Kz",
		"ab\x1b[?1049hfull\x1b[?1049lcd",
	} {
		checkPartials(t, []byte(in))
	}
}

func FuzzDecoderPartial(f *testing.F) {
	for _, tt := range decoderTests {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkPartials(t, in) })
}

// TestDecoderResumedInsideASequenceReadsNoneOfItAsText starts a decoder at
// every offset of output, primed with what came before, as a wait that
// joins a stream between two of tmux's chunks does: its lines are the
// tails of the whole output's lines, and its marks are whole.
func TestDecoderResumedInsideASequenceReadsNoneOfItAsText(t *testing.T) {
	in := []byte("$ run\x1b]133;C;tmcp-e532e\aready-1-ok\n" +
		"\x1b[1;31mred\x1b[0m and \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ é€😀\n" +
		"\x1bPq#0;2;0;0;0\x1b\\after a string\n" +
		"\x1b]133;D;0\a\x1b]7;file://h/tmp\a$ ")
	full, _ := decode(in)
	lineAt := map[int64]string{}
	for _, e := range full {
		if e.Kind == EventLine {
			lineAt[e.Offset] = e.Text
		}
	}
	for i := range len(in) + 1 {
		d := NewDecoder(int64(i))
		d.ResumeAfter(in[:i])
		var got []Event
		d.Decode(in[i:], func(e Event) { got = append(got, e) })
		var wantOSC, gotOSC []Event
		for _, e := range full {
			if e.Kind == EventOSC && e.Offset > int64(i) {
				wantOSC = append(wantOSC, e)
			}
		}
		for _, e := range got {
			switch e.Kind {
			case EventOSC:
				gotOSC = append(gotOSC, e)
			case EventLine:
				if whole, ok := lineAt[e.Offset]; !ok || !strings.HasSuffix(whole, e.Text) {
					t.Errorf("resumed at %d: line %q ending at %d is not the tail of %q", i, e.Text, e.Offset, whole)
				}
			}
		}
		if !slices.Equal(gotOSC, wantOSC) {
			t.Errorf("resumed at %d: marks %v, want %v", i, shown(gotOSC), shown(wantOSC))
		}
	}
}
