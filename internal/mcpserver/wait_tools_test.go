package mcpserver

import (
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/wait"
)

// clientGivesUp is when many clients cancel a tool call (the TypeScript
// SDK's default request timeout, Codex's tool timeout).
const clientGivesUp = 60 * time.Second

func TestDefaultWaitsFitUnderTheCeilingAndTheClientsMinute(t *testing.T) {
	if room := clientGivesUp - wait.DefaultCeiling; room < 10*time.Second {
		t.Errorf("the default ceiling %v leaves %v before clients give up at %v; want at least 10s", wait.DefaultCeiling, room, clientGivesUp)
	}
	for _, c := range []struct {
		name string
		d    time.Duration
	}{
		{"run_command", defaultRunTimeout},
		{"wait_for_text", defaultWaitTimeout},
		{"wait_for_channel", defaultChannelTimeout},
	} {
		if c.d >= wait.DefaultCeiling {
			t.Errorf("%s's default timeout %v is not under the default ceiling %v, so every call without a timeout would be clamped", c.name, c.d, wait.DefaultCeiling)
		}
	}
}
