package pane

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	// MaxLineLen bounds a line, in characters. A longer line is emitted in
	// pieces of this length, each marked Cut, so nothing is dropped and a
	// program that never writes a newline cannot grow memory without end.
	// It is no less than the largest reply (1 MiB, and a character is at
	// least a byte), so a line a reply can carry is never cut.
	MaxLineLen = 1 << 20
	// MaxSequenceLen bounds what is kept of one escape sequence (CSI
	// parameters, OSC payload). A longer sequence still runs to its
	// terminator, as on the terminal, but has no effect and no event.
	MaxSequenceLen = 4 << 10
	// maxParam caps a numeric CSI parameter so that parsing cannot overflow.
	maxParam = 1 << 16
)

// Control bytes the decoder treats specially.
const (
	bel = 0x07
	bs  = 0x08
	can = 0x18 // cancels an escape sequence
	sub = 0x1a // cancels an escape sequence
	esc = 0x1b
	del = 0x7f
)

// EventKind says what an [Event] reports.
type EventKind uint8

const (
	// EventLine is a completed line: a newline was written, or the line
	// reached MaxLineLen.
	EventLine EventKind = iota + 1
	// EventOSC is an operating system command, such as the shell
	// integration mark "133;D;0".
	EventOSC
	// EventAltScreen is a switch to or from the alternate screen that
	// full-screen programs (vim, less, top) paint on.
	EventAltScreen
	// EventBell is the bell: a BEL written as text, not the one that
	// ends an OSC.
	EventBell
)

// String returns the kind's name, for messages.
func (k EventKind) String() string {
	switch k {
	case EventLine:
		return "line"
	case EventOSC:
		return "osc"
	case EventAltScreen:
		return "altscreen"
	case EventBell:
		return "bell"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// An Event is something the decoder found in the output.
type Event struct {
	Kind EventKind
	// Text is the line, without its line ending, for EventLine, and the
	// payload between "ESC ]" and its terminator for EventOSC. It is valid
	// UTF-8 and holds no control characters, but for tabs in lines.
	Text string
	// Cut reports an EventLine that reached MaxLineLen and continues in
	// the next line.
	Cut bool
	// Alt reports, for EventAltScreen, whether the alternate screen is now
	// shown.
	Alt bool
	// Offset is the stream offset just past the byte that ended the event
	// (the newline, the OSC terminator, the final byte of the sequence).
	Offset int64
}

// A state is where the decoder is in the escape sequence grammar.
type state uint8

const (
	inText      state = iota
	inEscape          // after ESC
	inEscInter        // after ESC and intermediate bytes, awaiting the final byte
	inCSI             // after ESC [, awaiting the final byte
	inOSC             // after ESC ], awaiting BEL or ESC
	inOSCEsc          // ESC inside an OSC: "\" ends it, anything else too
	inString          // a DCS, SOS, PM, APC or title string, awaiting ESC \
	inStringEsc       // ESC inside such a string
)

// A Decoder turns the bytes a pane's program wrote into the lines a reader
// of the terminal would see. Input may be split anywhere, even inside an
// escape sequence, a UTF-8 character or a "\r\n": what is incomplete is
// held until the next call, never lost or reported twice.
//
// Escape sequences are removed. A carriage return moves back to the start
// of the line, so later characters overwrite earlier ones, and a backspace
// moves back one character; erase in line (CSI K) blanks what progress
// bars clear. Tabs are kept; other control characters are dropped, and
// invalid UTF-8 becomes U+FFFD. Lines written on the alternate screen are
// reported like any other, after the EventAltScreen that says where they
// belong; the main screen's unfinished line is put aside meanwhile.
//
// The zero Decoder is ready to use, at offset 0. Work is linear in the
// input.
type Decoder struct {
	off    int64
	state  state
	seq    []byte // CSI parameters or OSC payload so far
	ignore bool   // the sequence is overlong or not one we act on
	utf    [utf8.UTFMax]byte
	nutf   int // bytes held in utf: a valid, incomplete UTF-8 prefix
	line   line
	saved  line // the main screen's line while the alternate one is shown
	alt    bool
}

// NewDecoder returns a decoder whose first input byte is at stream offset
// offset.
func NewDecoder(offset int64) *Decoder { return &Decoder{off: offset} }

// NewDecoderOnAltScreen returns a decoder that starts with the alternate
// screen shown: for a stream joined while a full-screen program runs, so
// that the program's leaving it is seen.
func NewDecoderOnAltScreen(offset int64) *Decoder { return &Decoder{off: offset, alt: true} }

// Reset discards everything held, as after a gap in the stream, and
// continues at stream offset offset on the main screen.
func (d *Decoder) Reset(offset int64) { *d = Decoder{off: offset} }

// ResumeAfter takes up what before, the bytes just ahead of the decoder's
// offset, leaves unfinished: an escape sequence or a UTF-8 character that
// the start of the decoder's input cuts in two, as a chunk of tmux's
// output may end anywhere. Otherwise the rest of a cut sequence would be
// read as text (the payload of a shell's mark on a line of output). Only
// the last two escapes in before count: the last may end a string or OSC
// that the one before began (its ESC \). It sets only where the decoder
// is in a sequence or character, not the line.
func (d *Decoder) ResumeAfter(before []byte) {
	start := bytes.LastIndexByte(before, esc)
	if start > 0 {
		if prev := bytes.LastIndexByte(before[:start], esc); prev >= 0 {
			start = prev
		}
	}
	if start < 0 {
		start = max(len(before)-(utf8.UTFMax-1), 0)
		for start < len(before) && !utf8.RuneStart(before[start]) {
			start++
		}
	}
	var cut Decoder
	cut.Decode(before[start:], nil)
	d.state, d.seq, d.ignore, d.utf, d.nutf = cut.state, cut.seq, cut.ignore, cut.utf, cut.nutf
}

// Offset returns the stream offset of the next byte to decode.
func (d *Decoder) Offset() int64 { return d.off }

// AltScreen reports whether the alternate screen is shown.
func (d *Decoder) AltScreen() bool { return d.alt }

// Partial returns the line being written, which has no newline yet (a
// prompt, for instance). It may be called from within emit to learn the
// line at the moment of an event.
func (d *Decoder) Partial() string { return d.line.grown() }

// Decode consumes p and calls emit, in order, for each event it completes.
func (d *Decoder) Decode(p []byte, emit func(Event)) {
	if emit == nil {
		emit = func(Event) {}
	}
	for _, b := range p {
		d.off++
		if d.state == inText && d.nutf == 0 && b >= 0x20 && b < del {
			d.put(rune(b), emit) // the common case, kept short
			continue
		}
		d.step(b, emit)
	}
}

func (d *Decoder) step(b byte, emit func(Event)) {
	switch d.state {
	case inText:
		d.text(b, emit)
	case inEscape:
		d.escape(b, emit)
	case inEscInter:
		switch {
		case b == esc:
			d.state = inEscape
		case b == can || b == sub:
			d.state = inText
		case b < 0x20:
			d.control(b, emit)
		case b < 0x30: // more intermediates
		case b < del:
			d.state = inText
		case b > del: // not an escape after all
			d.state = inText
			d.text(b, emit)
		}
	case inCSI:
		switch {
		case b == esc:
			d.state = inEscape
		case b == can || b == sub:
			d.state = inText
		case b < 0x20:
			d.control(b, emit)
		case b < 0x30: // intermediates: none of ours has any
			d.ignore = true
		case b < 0x40:
			d.collect(b)
		case b < del:
			d.state = inText
			if !d.ignore {
				d.dispatchCSI(b, emit)
			}
		case b > del:
			d.state = inText
			d.text(b, emit)
		}
	case inOSC:
		switch {
		case b == bel:
			d.state = inText
			d.dispatchOSC(d.off, emit)
		case b == esc:
			d.state = inOSCEsc
		case b == can || b == sub:
			d.state = inText
		case b < 0x20: // ignored inside the string, as terminals do
		default:
			d.collect(b)
		}
	case inOSCEsc:
		if b == '\\' {
			d.state = inText
			d.dispatchOSC(d.off, emit)
			return
		}
		// As in tmux, any ESC ends the string; b begins what follows it.
		d.dispatchOSC(d.off-1, emit)
		d.state = inEscape
		d.escape(b, emit)
	case inString:
		switch b {
		case esc:
			d.state = inStringEsc
		case can, sub:
			d.state = inText
		}
	case inStringEsc:
		switch b {
		case '\\', can, sub:
			d.state = inText
		default:
			d.state = inString
		}
	}
}

// text handles a byte outside any escape sequence.
func (d *Decoder) text(b byte, emit func(Event)) {
	if d.nutf > 0 || b >= utf8.RuneSelf {
		d.utf8(b, emit)
		return
	}
	switch {
	case b == esc:
		d.state = inEscape
	case b < 0x20:
		d.control(b, emit)
	case b == del: // ignored by terminals
	default:
		d.put(rune(b), emit)
	}
}

// utf8 adds b to the held UTF-8 prefix and writes the character once it is
// complete.
func (d *Decoder) utf8(b byte, emit func(Event)) {
	d.utf[d.nutf] = b
	d.nutf++
	p := d.utf[:d.nutf]
	if !utf8.FullRune(p) {
		return
	}
	d.nutf = 0
	r, size := utf8.DecodeRune(p)
	if size == len(p) {
		// A character, or U+FFFD for one bad byte. C1 controls written
		// in UTF-8 show nothing.
		if !isControl(r) {
			d.put(r, emit)
		}
		return
	}
	// b cannot continue the held prefix: the prefix is one bad character
	// and b starts afresh.
	d.put(utf8.RuneError, emit)
	d.text(b, emit)
}

// escape handles the byte after ESC.
func (d *Decoder) escape(b byte, emit func(Event)) {
	switch {
	case b == esc: // a new escape begins
	case b == can || b == sub:
		d.state = inText
	case b < 0x20:
		d.control(b, emit)
	case b == '[':
		d.begin(inCSI)
	case b == ']':
		d.begin(inOSC)
	case b == 'P' || b == 'X' || b == '^' || b == '_' || b == 'k':
		// DCS, SOS, PM, APC, and screen's title string, which tmux honours.
		d.state = inString
	case b < 0x30:
		d.state = inEscInter
	case b < del: // a two-byte escape such as ESC 7 or ESC M
		d.state = inText
	case b > del:
		d.state = inText
		d.text(b, emit)
	}
}

// control executes a C0 control character.
func (d *Decoder) control(b byte, emit func(Event)) {
	switch b {
	case '\n':
		d.emitLine(false, emit)
	case '\r':
		d.line.col = 0
	case bs:
		d.line.col = max(0, d.line.col-1)
	case '\t':
		d.put('\t', emit)
	case bel:
		emit(Event{Kind: EventBell, Offset: d.off})
	}
	// The rest (NUL, form feed ...) show nothing.
}

func (d *Decoder) begin(s state) {
	d.state = s
	d.seq = d.seq[:0]
	d.ignore = false
}

func (d *Decoder) collect(b byte) {
	if len(d.seq) == MaxSequenceLen {
		d.ignore = true
		return
	}
	d.seq = append(d.seq, b)
}

func (d *Decoder) dispatchOSC(off int64, emit func(Event)) {
	if d.ignore {
		return
	}
	// Map also turns invalid UTF-8 into U+FFFD.
	text := strings.Map(func(r rune) rune {
		if isControl(r) {
			return -1
		}
		return r
	}, string(d.seq))
	emit(Event{Kind: EventOSC, Text: text, Offset: off})
}

func (d *Decoder) dispatchCSI(final byte, emit func(Event)) {
	params := d.seq
	switch final {
	case 'h', 'l': // set and reset mode
		if len(params) == 0 || params[0] != '?' {
			return
		}
		for field := range strings.SplitSeq(string(params[1:]), ";") {
			switch n, _ := number(field); n {
			case 47, 1047, 1049:
				d.setAlt(final == 'h', emit)
			}
		}
	case 'K': // erase in line
		if n, ok := number(string(params)); ok {
			d.line.erase(n)
		}
	}
}

// number parses a decimal CSI parameter; empty means 0.
func number(s string) (n int, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = min(n*10+int(s[i]-'0'), maxParam)
	}
	return n, true
}

// isControl reports whether r is a C0 or C1 control character or DEL.
func isControl(r rune) bool { return r < 0x20 || r >= del && r < 0xa0 }

func (d *Decoder) setAlt(on bool, emit func(Event)) {
	if on == d.alt {
		return
	}
	d.alt = on
	if on {
		d.saved, d.line = d.line, line{}
	} else {
		d.line, d.saved = d.saved, line{}
	}
	emit(Event{Kind: EventAltScreen, Alt: on, Offset: d.off})
}

func (d *Decoder) put(r rune, emit func(Event)) {
	if d.line.put(r) {
		d.emitLine(true, emit)
	}
}

func (d *Decoder) emitLine(cut bool, emit func(Event)) {
	text := d.line.String()
	d.line.reset()
	emit(Event{Kind: EventLine, Text: text, Cut: cut, Offset: d.off})
}

// A line is one row of characters with a cursor in it.
//
// Erasing is lazy, so that a stream of erase sequences costs no more than
// the characters written: cells before blank are erased whatever they
// hold, and are cleared only when the cursor comes back to write there.
// An erased cell holds 0, which no character written can be.
type line struct {
	cells []rune
	col   int              // where the next character goes; never past len(cells)
	blank int              // never past len(cells)
	shown *strings.Builder // what grown returned last, for cells[:clean]
	clean int              // cells[:clean] are unchanged since
}

// put writes r at the cursor and reports whether the line is now full.
func (l *line) put(r rune) (full bool) {
	if l.col < l.clean {
		l.clean = 0
	}
	if l.col < l.blank {
		clear(l.cells[l.col+1 : l.blank])
		l.blank = l.col
	}
	if l.col < len(l.cells) {
		l.cells[l.col] = r
	} else {
		l.cells = append(l.cells, r)
	}
	l.col++
	return len(l.cells) >= MaxLineLen
}

// erase applies erase in line: 0 from the cursor to the end, 1 from the
// start through the cursor, 2 the whole line. The cursor does not move.
func (l *line) erase(mode int) {
	if mode != 0 || l.col < l.clean {
		l.clean = 0 // a changed cell, or a blanked start shown as spaces
	}
	switch mode {
	case 0:
		l.cells = l.cells[:l.col]
		l.blank = min(l.blank, l.col)
	case 1:
		l.blank = max(l.blank, min(l.col+1, len(l.cells)))
	case 2:
		l.cells = l.cells[:l.col]
		l.blank = l.col
	}
}

func (l *line) reset() {
	l.cells = l.cells[:0]
	l.col = 0
	l.blank = 0
	l.shown, l.clean = nil, 0
}

// String returns the line as a terminal shows it: erased cells are spaces,
// and nothing after the last character written.
func (l *line) String() string {
	end := l.end()
	if end == l.blank {
		return ""
	}
	if l.shown != nil && l.clean == end {
		return l.shown.String() // read as it grew: rendered already
	}
	var b strings.Builder
	b.Grow(end)
	l.render(&b, 0, end)
	return b.String()
}

// grown returns String, keeping what it rendered, so that a long line read
// as it grows costs its new characters each time, not its length.
func (l *line) grown() string {
	end := l.end()
	if end == l.blank {
		l.clean = 0
		return ""
	}
	if l.shown == nil || l.clean == 0 || l.clean > end {
		// A new builder: the strings the old one returned stay intact.
		l.shown, l.clean = new(strings.Builder), 0
	}
	l.shown.Grow(end - l.clean)
	l.render(l.shown, l.clean, end)
	l.clean = end
	return l.shown.String()
}

// end returns the length of the line as shown: the erased cells after the
// last character written are not.
func (l *line) end() int {
	end := len(l.cells)
	for end > l.blank && l.cells[end-1] == 0 {
		end--
	}
	return end
}

// render writes cells[from:to] as shown.
func (l *line) render(b *strings.Builder, from, to int) {
	for i := from; i < to; i++ {
		r := l.cells[i]
		if i < l.blank || r == 0 {
			r = ' '
		}
		b.WriteRune(r)
	}
}
