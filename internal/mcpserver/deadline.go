package mcpserver

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/wait"
)

// CommandTimeout is the budget of a tool call that does not wait: every
// tmux call it makes shares it, so a stopped tmux fails the call within
// this time, whatever the call does.
const CommandTimeout = 5 * time.Second

// waitDefaults are the tools that wait, with the timeout each waits when
// the call gives none (0: it waits only when asked to).
var waitDefaults = map[string]time.Duration{
	"run_command":      defaultRunTimeout,
	"wait_for_text":    defaultWaitTimeout,
	"wait_for_command": defaultWaitTimeout,
	"wait_for_channel": defaultChannelTimeout,
	"wait_for_ready":   defaultProbeWaitTimeout,
	"wait_for_screen":  defaultWaitTimeout,
	"submit_prompt":    submitBudget,
	"get_job":          0,
}

// budget is how long a tool call may take in all, decided once as it
// enters: a wait's effective timeout plus the grace for its final read, or
// CommandTimeout. Everything below reads it from the context's deadline.
func (s *Server) budget(p *mcp.CallToolParamsRaw) time.Duration {
	def, waits := waitDefaults[p.Name]
	if !waits {
		return CommandTimeout
	}
	var args struct {
		TimeoutSeconds float64 `json:"timeoutSeconds"`
	}
	_ = json.Unmarshal(p.Arguments, &args)
	if args.TimeoutSeconds <= 0 && def == 0 {
		return CommandTimeout
	}
	return wait.Budget(s.waits.Clamp(args.TimeoutSeconds, def))
}
