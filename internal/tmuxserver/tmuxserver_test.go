package tmuxserver

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestOpenStartsAServerAsOptionsSayAndCloseLeavesNothing(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed: run scripts/install-deps.sh")
	}
	ctx := context.Background()
	s, err := Open(ctx, Options{Session: "probe", Width: 100, Height: 30, Env: []string{"PROBE=1"}, Unset: []string{"HOME"}})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	out, err := s.Run(ctx, "display-message", "-p", "-t", "=probe:", "#{session_name} #{window_width}x#{window_height} #{pane_current_command}")
	if want := "probe 100x30 sh"; err != nil || strings.TrimSpace(out) != want {
		t.Errorf("the first session: %q, %v; want %q", out, err, want)
	}
	env := s.Env()
	home := slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") })
	if !slices.Contains(env, "PROBE=1") || home || !slices.Contains(env, "TMUX_TMPDIR="+s.Dir) {
		t.Errorf("Env: %q, want PROBE=1, no HOME, TMUX_TMPDIR=%s", env, s.Dir)
	}
	if !s.Alive() {
		t.Errorf("server %d not alive after Open", s.PID())
	}
	pid := s.PID()
	s.Close()
	if s.Alive() || s.PID() != 0 {
		t.Errorf("server %d still alive after Close", pid)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("Close left its directory %s: %v", s.Dir, err)
	}
	s.Close() // a second Close does nothing
}
