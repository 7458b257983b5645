package mcpserver

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tier is a safety tier: which tools a client is offered.
type Tier int

const (
	ReadOnly    Tier = iota // tools that only look
	Mutating                // also tools that type, create and rename
	Destructive             // also tools that kill
)

// DefaultTier is the tier when TMCP_SAFETY is unset.
const DefaultTier = Mutating

// ParseTier reads a TMCP_SAFETY value. Empty means DefaultTier; anything
// unrecognised means ReadOnly, so a typo can never widen access.
func ParseTier(s string) (t Tier, recognised bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return DefaultTier, true
	case "readonly":
		return ReadOnly, true
	case "mutating":
		return Mutating, true
	case "destructive":
		return Destructive, true
	}
	return ReadOnly, false
}

func (t Tier) String() string {
	switch t {
	case ReadOnly:
		return "readonly"
	case Mutating:
		return "mutating"
	}
	return "destructive"
}

// Offers says in a few words what the tier allows.
func (t Tier) Offers() string {
	switch t {
	case ReadOnly:
		return "read only: nothing is typed, created or killed"
	case Mutating:
		return "no kill tools"
	}
	return "everything, kill tools included"
}

// tierOf derives a tool's tier from its annotations, so the two cannot
// disagree.
func tierOf(a *mcp.ToolAnnotations) Tier {
	switch {
	case a.ReadOnlyHint:
		return ReadOnly
	case a.DestructiveHint != nil && *a.DestructiveHint:
		return Destructive
	}
	return Mutating
}

// Annotations for the three kinds of tool. Only wait_for_ready reaches
// outside the tmux server, and says so itself; none other is open-world.
// None has a title: a tool's display title is its own (mcp.Tool.Title,
// which clients read first since protocol 2025-06-18), and the same words
// in the annotations too would cost every tools/list twice.
func readOnly() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)}
}

func mutating(idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{IdempotentHint: idempotent, DestructiveHint: new(bool), OpenWorldHint: new(bool)}
}

func destructive() *mcp.ToolAnnotations {
	yes := true
	return &mcp.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: new(bool)}
}
