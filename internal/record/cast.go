package record

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// The asciicast v2 format: a header line (a JSON object), then one line per
// event, a JSON array [time, code, data] whose time counts seconds from
// the header's timestamp.

// header is the first line of an asciicast v2 file.
type header struct {
	Version   int    `json:"version"` // always 2
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	Timestamp int64  `json:"timestamp"` // Unix seconds when the file began
	Title     string `json:"title,omitempty"`
}

// Event codes.
const (
	codeOutput = 'o' // data is what the terminal was sent
	codeResize = 'r' // data is the new size, COLSxROWS
	codeMarker = 'm' // data is a label: a chapter mark for players
)

// appendHeader appends the header line of a file begun at start.
func appendHeader(b []byte, start time.Time, width, height int, title string) []byte {
	h, _ := json.Marshal(header{Version: 2, Width: width, Height: height, Timestamp: start.Unix(), Title: title})
	b = append(b, h...)
	return append(b, '\n')
}

// appendEvent appends the line of an event that came elapsed after the
// file began. data is written as a JSON string: bytes that are not UTF-8
// become U+FFFD.
func appendEvent(b []byte, elapsed time.Duration, code byte, data []byte) []byte {
	b = append(b, '[')
	b = strconv.AppendFloat(b, elapsed.Seconds(), 'f', 6, 64)
	b = append(b, ", \""...)
	b = append(b, code)
	b = append(b, "\", "...)
	b = appendString(b, data)
	return append(b, "]\n"...)
}

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes a JSON string holds as they are.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString appends s as a JSON string, escaping what JSON requires and
// nothing more (a terminal's output is mostly plain text).
func appendString(b, s []byte) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && plain[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			if c >= utf8.RuneSelf {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// splitUnfinished splits p before a UTF-8 character that p ends in the
// middle of: tmux may split one character across two %output lines, and
// each half alone would be written as U+FFFD.
func splitUnfinished(p []byte) (whole, rest []byte) {
	for i := len(p) - 1; i >= 0 && i > len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return p[:i], p[i:]
			}
			break
		}
	}
	return p, nil
}
