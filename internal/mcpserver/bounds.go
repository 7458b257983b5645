package mcpserver

import (
	"encoding/json"

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

// textResult carries a tool's fields and its pane text. The text goes,
// fenced, in its own content block and nowhere else, so it crosses the
// wire once and a model reads it as data; the fields go in
// structuredContent and, compactly, in the first block. A field that
// holds pane text is, in the fields the caller shows there, left out
// (the fenced text holds it) or fenced in place.
func textResult(shown any, text string) *mcp.CallToolResult {
	meta, _ := json.Marshal(shown)
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: string(meta)},
		&mcp.TextContent{Text: fence(text)},
	}}
}
