package pane

import (
	"strings"
	"unicode/utf8"
)

// Truncation says what bounding dropped from the start of a text.
type Truncation struct {
	Truncated    bool `json:"truncated"`
	DroppedLines int  `json:"droppedLines,omitempty"`
	DroppedBytes int  `json:"droppedBytes,omitempty"`
}

// Tail keeps the last lines within both bounds (a line costs its length
// plus one). When not even the last line fits, the end of it is kept.
func Tail(lines []string, maxLines, maxBytes int) ([]string, Truncation) {
	keep, size := len(lines), 0
	for i := len(lines) - 1; i >= 0; i-- {
		n := len(lines[i]) + 1
		if len(lines)-i > maxLines || size+n > maxBytes+1 {
			break
		}
		size += n
		keep = i
	}
	if keep == len(lines) && len(lines) > 0 {
		last, cut := TailBytes(lines[len(lines)-1], maxBytes)
		return []string{last}, Truncation{Truncated: true, DroppedLines: len(lines) - 1, DroppedBytes: byteCount(lines[:len(lines)-1]) + cut}
	}
	if keep == 0 {
		return lines, Truncation{}
	}
	return lines[keep:], Truncation{Truncated: true, DroppedLines: keep, DroppedBytes: byteCount(lines[:keep])}
}

// TailBytes keeps the last n bytes of s, not starting inside a UTF-8
// character, and says how many bytes it dropped.
func TailBytes(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	cut := len(s) - max(n, 0)
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return s[cut:], cut
}

func byteCount(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}

// TailBuffer keeps the last lines of a text that arrives line by line,
// within a line and a byte bound, and counts everything it saw, so that a
// long output costs bounded memory and is reported with its true size.
type TailBuffer struct {
	maxLines, maxBytes int
	lines              []string
	head               int // index of the oldest kept line in lines
	bytes              int // bytes of the kept lines, newline included
	totalLines         int
	totalBytes         int
	open               bool // the last line continues in the next piece
	lastBytes          int  // bytes of the last line as added, its newline included
	// sealed holds the kept lines joined by newlines once Seal was called
	// (and lines nothing), until a line is added again.
	sealed   string
	isSealed bool
}

// NewTailBuffer returns a buffer keeping at most maxLines lines and
// maxBytes bytes.
func NewTailBuffer(maxLines, maxBytes int) *TailBuffer {
	return &TailBuffer{maxLines: maxLines, maxBytes: maxBytes}
}

// Add appends one line.
func (b *TailBuffer) Add(line string) { b.AddPiece(line, false) }

// AddPiece appends part of a line; with more, the line goes on in the next
// piece, as after a [Decoder] event marked Cut. The pieces are kept as one
// line, of which the last maxBytes bytes are held.
func (b *TailBuffer) AddPiece(piece string, more bool) {
	b.unseal()
	if b.open && len(b.lines) > b.head {
		last := len(b.lines) - 1
		joined, _ := TailBytes(b.lines[last]+piece, b.maxBytes)
		b.bytes += len(joined) - len(b.lines[last])
		b.lines[last] = joined
		b.totalBytes += len(piece)
		b.lastBytes += len(piece)
	} else {
		b.totalLines++
		b.totalBytes += len(piece) + 1
		b.lastBytes = len(piece) + 1
		b.lines = append(b.lines, piece)
		b.bytes += len(piece) + 1
	}
	b.open = more
	for len(b.lines)-b.head > b.maxLines || b.bytes > b.maxBytes+1 && len(b.lines)-b.head > 1 {
		b.bytes -= len(b.lines[b.head]) + 1
		b.lines[b.head] = ""
		b.head++
	}
	if b.head > len(b.lines)/2 && b.head > 64 {
		b.lines = append([]string(nil), b.lines[b.head:]...)
		b.head = 0
	}
}

// Lines returns the kept lines, oldest first.
func (b *TailBuffer) Lines() []string {
	if b.isSealed {
		return strings.Split(b.sealed, "\n")
	}
	return b.lines[b.head:]
}

// Seal keeps the lines as one string until another is added. A finished
// job's output is kept long and read seldom, and each line held apart
// costs a string header and its allocation's rounding besides its bytes:
// the last 10,000 lines of seq 1 200000, 80 KB counted in KeptBytes, held
// 424 KB apart and 82 KB sealed (BenchmarkTailBufferHeldMemory), so the
// finished jobs' bound, counted in KeptBytes, holds only once sealed.
// Lines that hold a newline are left apart.
func (b *TailBuffer) Seal() {
	kept := b.lines[b.head:]
	if b.isSealed || len(kept) == 0 {
		return
	}
	for _, l := range kept {
		if strings.Contains(l, "\n") {
			return
		}
	}
	b.sealed, b.isSealed = strings.Join(kept, "\n"), true
	b.lines, b.head = nil, 0
}

// unseal holds the lines apart again, for a line to be added.
func (b *TailBuffer) unseal() {
	if !b.isSealed {
		return
	}
	b.lines, b.head = strings.Split(b.sealed, "\n"), 0
	b.sealed, b.isSealed = "", false
}

// Whole returns a copy of the buffer up to its last whole line: a line
// whose rest is still to come is left out, and out of the counts.
func (b *TailBuffer) Whole() *TailBuffer {
	lines := b.Lines()
	c := &TailBuffer{maxLines: b.maxLines, maxBytes: b.maxBytes, lines: append([]string(nil), lines...),
		bytes: b.bytes, totalLines: b.totalLines, totalBytes: b.totalBytes}
	if b.open && len(lines) > 0 {
		last := len(lines) - 1
		c.bytes -= len(lines[last]) + 1
		c.lines = c.lines[:last]
		c.totalLines--
		c.totalBytes -= b.lastBytes
	}
	return c
}

// KeptBytes is the size of the kept lines, a newline each.
func (b *TailBuffer) KeptBytes() int { return b.bytes }

// TotalLines and TotalBytes count every line added, kept or not.
func (b *TailBuffer) TotalLines() int { return b.totalLines }

// TotalBytes counts the bytes of every line added, a newline each.
func (b *TailBuffer) TotalBytes() int { return b.totalBytes }

// Bounded returns the last lines within tighter bounds, with what was
// dropped counted against everything ever added. The lines are a copy:
// the buffer blanks the lines it drops, and a caller may read them while
// others are added.
func (b *TailBuffer) Bounded(maxLines, maxBytes int) ([]string, Truncation) {
	lines, _ := Tail(b.Lines(), maxLines, maxBytes)
	lines = append([]string(nil), lines...)
	droppedLines, droppedBytes := b.totalLines-len(lines), b.totalBytes-byteCount(lines)
	if droppedLines == 0 && droppedBytes == 0 {
		return lines, Truncation{}
	}
	return lines, Truncation{Truncated: true, DroppedLines: droppedLines, DroppedBytes: droppedBytes}
}
