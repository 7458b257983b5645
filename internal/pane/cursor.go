package pane

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

const (
	// cursorVersion is the first byte of every encoded cursor, so the form
	// can change without old cursors being misread; anchoredVersion is
	// that of a cursor with an Anchor, which follows the offset.
	cursorVersion   = 1
	anchoredVersion = 2
	// maxPaneIDLen bounds the pane id a cursor may carry; tmux ids are "%N".
	maxPaneIDLen = 64
	// maxCursorLen bounds the text ParseCursor will decode: the longest
	// cursor is a version, a 64-byte id and five varints, base64 encoded.
	maxCursorLen = 128
)

// ErrBadCursor is returned, wrapped with the reason, for a string that is
// not a cursor made by [Cursor.String].
var ErrBadCursor = errors.New("pane: malformed cursor")

// A Cursor is a position in the output of one pane: the offset of the next
// byte to read in one generation of the pane's [Stream]. Callers pass it
// around as the opaque string from [Cursor.String].
type Cursor struct {
	PaneID     string
	Generation uint64
	Offset     int64
	// Anchor is the [LineHash] of the last whole line before Offset, or
	// zero: what finds the cursor's place in the pane's history once its
	// stream is gone (tmcp restarted).
	Anchor uint32
	// PanePID is the pane's process as the cursor was made, kept with an
	// anchor: a pane respawned since is not read on from its history.
	PanePID int
}

// LineHash is a line's anchor: a hash of its text without trailing
// spaces, as the line is decoded and as tmux's history shows it. It is
// never zero.
func LineHash(line string) uint32 {
	line = strings.TrimRight(line, " ")
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(line); i++ {
		h = (h ^ uint32(line[i])) * 16777619
	}
	return max(h, 1)
}

// String returns the cursor as a short URL-safe string that
// [ParseCursor] reads back.
func (c Cursor) String() string {
	b := make([]byte, 0, 1+5*binary.MaxVarintLen64+len(c.PaneID))
	version := byte(cursorVersion)
	if c.Anchor != 0 {
		version = anchoredVersion
	}
	b = append(b, version)
	b = binary.AppendUvarint(b, uint64(len(c.PaneID)))
	b = append(b, c.PaneID...)
	b = binary.AppendUvarint(b, c.Generation)
	b = binary.AppendUvarint(b, uint64(c.Offset))
	if c.Anchor != 0 {
		b = binary.AppendUvarint(b, uint64(c.Anchor))
		b = binary.AppendUvarint(b, uint64(max(c.PanePID, 0)))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseCursor reads a cursor made by [Cursor.String]. Any other string,
// including a truncated or altered one, is refused with an error wrapping
// [ErrBadCursor].
func ParseCursor(s string) (Cursor, error) {
	bad := func(format string, args ...any) (Cursor, error) {
		return Cursor{}, fmt.Errorf("%w: "+format, append([]any{ErrBadCursor}, args...)...)
	}
	if s == "" {
		return bad("empty")
	}
	if len(s) > maxCursorLen {
		return bad("%d characters, longer than any cursor", len(s))
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return bad("not base64url: %v", err)
	}
	if len(b) == 0 { // base64 skips newlines, so "\n" decodes to nothing
		return bad("empty")
	}
	version := b[0]
	if version != cursorVersion && version != anchoredVersion {
		return bad("unknown version %d", version)
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	switch {
	case k <= 0:
		return bad("truncated pane id length")
	case n == 0 || n > maxPaneIDLen:
		return bad("pane id length %d outside 1..%d", n, maxPaneIDLen)
	case n > uint64(len(b)-k):
		return bad("truncated pane id")
	}
	b = b[k:]
	var c Cursor
	c.PaneID, b = string(b[:n]), b[n:]
	if !utf8.ValidString(c.PaneID) {
		return bad("pane id is not UTF-8")
	}
	if c.Generation, k = binary.Uvarint(b); k <= 0 {
		return bad("truncated generation")
	}
	b = b[k:]
	off, k := binary.Uvarint(b)
	if k <= 0 {
		return bad("truncated offset")
	}
	if off > math.MaxInt64 {
		return bad("offset %d out of range", off)
	}
	c.Offset = int64(off)
	b = b[k:]
	if version == anchoredVersion {
		anchor, k := binary.Uvarint(b)
		if k <= 0 || anchor == 0 || anchor > math.MaxUint32 {
			return bad("truncated or bad anchor")
		}
		c.Anchor, b = uint32(anchor), b[k:]
		pid, k := binary.Uvarint(b)
		if k <= 0 || pid > math.MaxInt32 {
			return bad("truncated or bad pane process")
		}
		c.PanePID, b = int(pid), b[k:]
	}
	if len(b) > 0 {
		return bad("%d trailing bytes", len(b))
	}
	// Only one string may stand for a cursor (no padded varints).
	if c.String() != s {
		return bad("not in canonical form")
	}
	return c, nil
}
