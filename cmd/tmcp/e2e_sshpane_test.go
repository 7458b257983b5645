package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/sshserver"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// TestAWrappedRunBehindARealSSHEndsAtItsInterrupt runs commands through a
// real ssh, in a pane, into a bash with tmcp init on the far side: ssh
// holds the pane's terminal the whole time, so only the far shell's marks
// tell where a command ends. A command that takes the wrapper (cd), cut by
// C-c, ends with the far shell's 130 at once; one that ignores C-c goes on
// and ends with its own status.
func TestAWrappedRunBehindARealSSHEndsAtItsInterrupt(t *testing.T) {
	t.Parallel()
	sshd := startSSHD(t)
	srv := tmuxtest.New(t)
	dir := t.TempDir()
	rc := filepath.Join(dir, "bashrc")
	if err := os.WriteFile(rc, []byte("PS1='far$ '\nHISTFILE=/dev/null\neval \"$("+tmcpBinary+" init bash)\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ssh := "exec ssh -F " + sshd.ConfigFile + " -tt -o BatchMode=yes -o ControlMaster=no -o ControlPath=none " + sshserver.Alias +
		" env -u TMUX -u TMUX_PANE bash --noprofile --rcfile " + rc + " -i"
	pane := newWindow(srv, ssh)
	waitScreen(t, srv, pane, "the far prompt", func(l []string) bool { return hasLine(l, "far$") })
	waitPane(t, srv, pane, "#{pane_current_command}", "ssh")
	s := startTMCP(t, srv, "")
	s.since(map[string]any{"paneId": pane})
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "true"}, nil)
	waitScreen(t, srv, pane, "the far prompt again", func(l []string) bool { return len(l) > 1 && hasLine(l[1:], "far$") })
	// The far shell's marks carry a nonce of its own, which tmcp cannot
	// read there: they are no state of the pane's shell.
	if sh := listedShell(s, pane); sh != nil {
		t.Fatalf("list_panes gives the state %+v from marks tmcp cannot authenticate", sh)
	}
	if r, text := s.runCmd(map[string]any{"paneId": pane, "command": "cd /tmp && pwd", "timeoutSeconds": 15}); status(r.ExitStatus) != "0" || text != "/tmp" {
		t.Fatalf("a wrapped run through ssh: %+v output %q", r, text)
	}
	// Its helper gave the far shell tmcp's nonce: its marks are believed.
	var sh *shellOut
	if !tmuxtest.WaitFor(settle, func() bool { sh = listedShell(s, pane); return sh != nil && sh.State == "prompt" }) {
		t.Fatalf("the far shell's marks, once it has tmcp's nonce, give no prompt state: %+v", sh)
	}
	if sh.Cwd == "" || sh.Cwd == "/tmp" {
		t.Errorf("the far shell's state %+v, want its own cwd from its marks (the run's cd was in a subshell)", sh)
	}

	ch := s.async("run_command", map[string]any{"paneId": pane, "command": "cd /tmp && echo started && sleep 30", "timeoutSeconds": 20})
	waitScreen(t, srv, pane, "the command's first line", func(l []string) bool { return hasLine(l, "started") })
	time.Sleep(100 * time.Millisecond) // sleep in front
	start := time.Now()
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "C-c", "enter": false}, nil)
	r, text := decodeText[jobOut](t, "run_command", awaitCall(t, "run_command", ch).res)
	if took := time.Since(start); status(r.ExitStatus) != "130" || text != "started" || took > 5*time.Second {
		t.Fatalf("C-c on a wrapped run through ssh: %+v output %q after %v, want 130 and %q at once", r, text, took, "started")
	}

	// A command that ignores C-c is not taken for ended by it.
	ch = s.async("run_command", map[string]any{"paneId": pane, "command": "cd /tmp && trap '' INT && echo ignoring && sleep 4 && echo done", "timeoutSeconds": 20})
	waitScreen(t, srv, pane, "the command's first line", func(l []string) bool { return hasLine(l, "ignoring") })
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "C-c", "enter": false}, nil)
	r, text = decodeText[jobOut](t, "run_command", awaitCall(t, "run_command", ch).res)
	if status(r.ExitStatus) != "0" || !strings.HasSuffix(text, "done") {
		t.Fatalf("C-c on a run through ssh that ignores it: %+v output %q, want it to go on and end with 0 and done", r, text)
	}
	if r, text := s.runCmd(map[string]any{"paneId": pane, "command": "echo free", "timeoutSeconds": 15}); status(r.ExitStatus) != "0" || text != "free" {
		t.Fatalf("the pane after C-c through ssh: %+v output %q", r, text)
	}
}
