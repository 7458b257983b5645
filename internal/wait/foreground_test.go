package wait

import (
	"context"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// The check a job falls back on when its end mark was lost tells a shell
// at its prompt from one running a command.
func TestShellInFrontTellsAPromptFromARunningCommand(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	inFront := func() bool {
		front, ok := f.s.shellInFront(ctx, "%0")
		if !ok {
			t.Fatalf("shellInFront on a local pane: cannot tell")
		}
		return front
	}
	if !inFront() {
		t.Fatalf("a shell at its prompt: not in front")
	}
	f.srv.Must("send-keys", "-t", "%0", "sleep 3", "Enter")
	if !tmuxtest.WaitFor(2*time.Second, func() bool { return !inFront() }) {
		t.Fatalf("a shell running sleep 3: still in front after 2s")
	}
	if !tmuxtest.WaitFor(5*time.Second, inFront) {
		t.Fatalf("a shell whose sleep ended: not in front again")
	}
	if _, ok := f.s.shellInFront(ctx, "%99"); ok {
		t.Errorf("shellInFront on a pane that does not exist: says it can tell")
	}
}
