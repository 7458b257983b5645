package wait

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// The check a job falls back on when its end mark was lost tells a shell
// at its prompt from one running a command, whether the shell is the
// pane's own process or a child of it.
func TestShellInFrontTellsAPromptFromARunningCommand(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		command string // the new pane's command; "": the fixture's %0
	}{
		{"the pane's own process", ""},
		// The trailing exit keeps sh -c from replacing itself with the shell.
		{"a shell the pane's process started", "sh -c 'sh; exit'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "%0"
			if tc.command != "" {
				id = strings.TrimSpace(f.srv.Must("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", "%0", tc.command))
				f.waitForPrompt(id)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", id, "#{pane_pid}")))
			if err != nil {
				t.Fatal(err)
			}
			group := f.s.frontGroup(pid)
			if group <= 0 {
				t.Fatalf("frontGroup of a local pane at its prompt: %d", group)
			}
			inFront := func() bool {
				front, ok := f.s.shellInFront(ctx, id, group)
				if !ok {
					t.Fatalf("shellInFront on a local pane: cannot tell")
				}
				return front
			}
			if !inFront() {
				t.Fatalf("a shell at its prompt: not in front")
			}
			f.srv.Must("send-keys", "-t", id, "sleep 3", "Enter")
			if !tmuxtest.WaitFor(2*time.Second, func() bool { return !inFront() }) {
				t.Fatalf("a shell running sleep 3: still in front after 2s")
			}
			if !tmuxtest.WaitFor(5*time.Second, inFront) {
				t.Fatalf("a shell whose sleep ended: not in front again")
			}
		})
	}
	if _, ok := f.s.shellInFront(ctx, "%99", 0); ok {
		t.Errorf("shellInFront on a pane that does not exist: says it can tell")
	}
}
