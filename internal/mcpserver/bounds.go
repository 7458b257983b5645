package mcpserver

import (
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on any text a tool returns. A caller may ask for less or more
// within the ceilings; the last lines are kept.
const (
	DefaultMaxLines = 200
	MaxLinesCeiling = 10000
	DefaultMaxBytes = 32 << 10
	MaxBytesCeiling = 1 << 20
)

// Truncation says what bounding dropped from the start of a text.
type Truncation struct {
	Truncated    bool `json:"truncated"`
	DroppedLines int  `json:"droppedLines,omitempty"`
	DroppedBytes int  `json:"droppedBytes,omitempty"`
}

// limits returns the effective bounds for requested values (0: default).
func limits(maxLines, maxBytes int) (int, int) {
	return clamp(maxLines, DefaultMaxLines, MaxLinesCeiling), clamp(maxBytes, DefaultMaxBytes, MaxBytesCeiling)
}

func clamp(v, def, ceiling int) int {
	switch {
	case v <= 0:
		return def
	case v > ceiling:
		return ceiling
	}
	return v
}

// tail keeps the last lines of text within both bounds. A single line
// longer than maxBytes keeps its end.
func tail(lines []string, maxLines, maxBytes int) ([]string, Truncation) {
	var tr Truncation
	keep := len(lines)
	size := 0
	for i := len(lines) - 1; i >= 0; i-- {
		n := len(lines[i]) + 1
		if len(lines)-i > maxLines || size+n > maxBytes+1 {
			break
		}
		size += n
		keep = i
	}
	if keep == len(lines) && len(lines) > 0 {
		// Not even the last line fits: keep its end.
		last := lines[len(lines)-1]
		cut := len(last) - maxBytes
		for cut < len(last) && cut > 0 && !utf8Start(last[cut]) {
			cut++
		}
		tr = Truncation{Truncated: true, DroppedLines: len(lines) - 1, DroppedBytes: byteCount(lines[:len(lines)-1]) + cut}
		return []string{last[cut:]}, tr
	}
	if keep > 0 {
		tr = Truncation{Truncated: true, DroppedLines: keep, DroppedBytes: byteCount(lines[:keep])}
	}
	return lines[keep:], tr
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func byteCount(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}

// trimTrailingBlank drops empty rows at the bottom of a screen capture.
func trimTrailingBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// textResult carries a tool's fields and its pane text. The text goes in
// its own content block and nowhere else, so it crosses the wire once; the
// fields go in structuredContent and, compactly, in the first block.
func textResult(fields any, text string) *mcp.CallToolResult {
	meta, _ := json.Marshal(fields)
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: string(meta)},
		&mcp.TextContent{Text: text},
	}}
}
