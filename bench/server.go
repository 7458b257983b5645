package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	// sessionName, paneWidth and paneHeight describe the one session of the
	// private server: a single 80x24 pane running sh.
	sessionName = "bench"
	paneWidth   = 80
	paneHeight  = 24
	// textRows rows of rowText are printed on the pane before it is captured.
	textRows = 20
	rowText  = "row %d: the quick brown fox jumps over the lazy dog 0123456789"
	// setupTimeout bounds one tmux command of set-up or teardown, and the
	// wait for the pane's text to appear.
	setupTimeout = 5 * time.Second
	// processWaitDelay bounds how long a killed child may hold its pipes.
	processWaitDelay = time.Second
)

// tmuxServer is the private tmux server the benchmark runs against: its own
// socket in its own directory, no configuration file, and one session whose
// pane runs sh.
type tmuxServer struct {
	socket string   // path given to tmux -S
	env    []string // environment of every process the benchmark starts
	pid    int      // the server process, once known
	pane   string   // id of the session's only pane, like "%0"
}

// startServer starts a server whose socket lives in dir and fills its pane
// with text. The caller must call kill, even when startServer fails.
func startServer(ctx context.Context, dir string) (*tmuxServer, error) {
	s := &tmuxServer{socket: filepath.Join(dir, "sock"), env: isolatedEnv(dir)}
	if _, err := s.tmux(ctx, "-f", "/dev/null", "new-session", "-d", "-s", sessionName,
		"-x", strconv.Itoa(paneWidth), "-y", strconv.Itoa(paneHeight), "sh"); err != nil {
		return s, err
	}
	out, err := s.tmux(ctx, "display-message", "-p", "-t", sessionName, "#{pid} #{pane_id}")
	if err != nil {
		return s, err
	}
	pid, pane, _ := strings.Cut(strings.TrimSpace(out), " ")
	s.pid, _ = strconv.Atoi(pid)
	s.pane = pane
	return s, s.fillPane(ctx)
}

// isolatedEnv is this process's environment without any enclosing tmux
// session, with TMUX_TMPDIR pointing at dir.
func isolatedEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "TMUX" || name == "TMUX_PANE" || name == "TMUX_TMPDIR" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TMUX_TMPDIR="+dir)
}

// command builds an unstarted `tmux -S SOCKET args…`, killed when ctx ends.
func (s *tmuxServer) command(ctx context.Context, args ...string) *exec.Cmd {
	return childCommand(ctx, s.env, "tmux", append([]string{"-S", s.socket}, args...)...)
}

// childCommand builds an unstarted process in its own process group (so a
// terminal's Ctrl-C reaches only the benchmark, which then shuts its
// children down in order), killed when ctx ends.
func childCommand(ctx context.Context, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.WaitDelay = processWaitDelay
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// tmux runs one tmux command, bounded by setupTimeout, and returns its
// standard output.
func (s *tmuxServer) tmux(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	cmd := s.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// fillPane has the pane's shell print textRows rows and waits until the
// last one is on the screen, so every capture reads a full screen of text.
func (s *tmuxServer) fillPane(ctx context.Context) error {
	script := fmt.Sprintf(`i=1; while [ $i -le %d ]; do echo "%s"; i=$((i+1)); done`,
		textRows, strings.Replace(rowText, "%d", "$i", 1))
	if _, err := s.tmux(ctx, "send-keys", "-t", s.pane, "-l", script); err != nil {
		return err
	}
	if _, err := s.tmux(ctx, "send-keys", "-t", s.pane, "Enter"); err != nil {
		return err
	}
	last := lastRow()
	deadline := time.Now().Add(setupTimeout)
	for {
		screen, err := s.tmux(ctx, "capture-pane", "-p", "-t", s.pane)
		if err != nil {
			return err
		}
		if strings.Contains(screen, last) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pane %s did not show %q within %v; it shows:\n%s", s.pane, last, setupTimeout, screen)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// lastRow is the text of the last row fillPane prints: a capture that
// contains it read the whole text.
func lastRow() string { return fmt.Sprintf(rowText, textRows) }

// version returns tmux's version line, such as "tmux 3.3a".
func (s *tmuxServer) version(ctx context.Context) (string, error) {
	out, err := s.tmux(ctx, "-V")
	return strings.TrimSpace(out), err
}

// kill ends the server, whatever state the benchmark left it in. It does
// not use the benchmark's context, which may already be cancelled.
func (s *tmuxServer) kill() {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	_, _ = s.tmux(ctx, "kill-server")
	// Only if that pid is still this benchmark's server.
	if s.pid > 0 {
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(s.pid) + "/cmdline")
		if err == nil && bytes.Contains(cmdline, []byte(s.socket)) {
			_ = syscall.Kill(s.pid, syscall.SIGKILL)
		}
	}
	os.Remove(s.socket)
}
