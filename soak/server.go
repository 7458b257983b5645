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
	"sync"
	"syscall"
	"time"
)

const (
	// sessionName, serverWidth and serverHeight describe the private
	// server's one session; its windows take that size.
	sessionName  = "soak"
	serverWidth  = 200
	serverHeight = 50
	// prompt is the pane shells' PS1: distinctive, so a prompt glued to a
	// line of output can be told from the output.
	prompt = "soak$ "
	// setupTimeout bounds each tmux command the soak runs itself.
	setupTimeout = 10 * time.Second
)

// tmuxServer is the soak's private tmux server: its own socket in its own
// directory, no configuration file, panes running sh.
type tmuxServer struct {
	dir    string
	socket string
	env    []string
	pid    int

	killOnce sync.Once
}

// startServer starts a server in a new temporary directory. The caller
// must call kill, even when startServer fails.
func startServer(ctx context.Context) (*tmuxServer, error) {
	dir, err := os.MkdirTemp("", "tmcp-soak-")
	if err != nil {
		return nil, err
	}
	s := &tmuxServer{dir: dir, socket: filepath.Join(dir, "sock"), env: isolatedEnv(dir)}
	if _, err := s.tmux(ctx, "-f", "/dev/null", "new-session", "-d", "-s", sessionName,
		"-x", strconv.Itoa(serverWidth), "-y", strconv.Itoa(serverHeight), "sh"); err != nil {
		return s, err
	}
	if _, err := s.tmux(ctx, "set-option", "-g", "default-shell", "/bin/sh"); err != nil {
		return s, err
	}
	out, err := s.tmux(ctx, "display-message", "-p", "#{pid}")
	if err != nil {
		return s, err
	}
	if s.pid, err = strconv.Atoi(strings.TrimSpace(out)); err != nil || s.pid <= 0 {
		return s, fmt.Errorf("reading the tmux server's pid: %q", out)
	}
	return s, nil
}

// isolatedEnv is this process's environment without an enclosing tmux
// session, with TMUX_TMPDIR in dir and a known prompt for the pane shells.
func isolatedEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "TMUX", "TMUX_PANE", "TMUX_TMPDIR", "PS1", "ENV":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TMUX_TMPDIR="+dir, "PS1="+prompt)
}

// tmux runs one bounded tmux command against the server.
func (s *tmuxServer) tmux(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-S", s.socket}, args...)...)
	cmd.Env = s.env
	cmd.WaitDelay = time.Second
	// Its own process group: a Ctrl-C at the terminal reaches the soak,
	// which then tears the server down in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// signal sends sig to the server process.
func (s *tmuxServer) signal(sig syscall.Signal) error {
	if s.pid <= 0 {
		return fmt.Errorf("signal %v: the tmux server's pid is not known", sig)
	}
	return syscall.Kill(s.pid, sig)
}

// alive reports whether the server process still exists.
func (s *tmuxServer) alive() bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(s.pid) + "/stat")
	if err != nil {
		return false
	}
	_, state := procState(strconv.Itoa(s.pid))
	return len(b) > 0 && state != "Z" && state != "X"
}

// kill ends the server whatever its state (stopped included) and removes
// its directory. It is safe to call more than once, from any goroutine.
func (s *tmuxServer) kill() {
	if s == nil {
		return
	}
	s.killOnce.Do(func() {
		if s.pid > 0 {
			_ = syscall.Kill(s.pid, syscall.SIGCONT)
			_, _ = s.tmux(context.Background(), "kill-server")
			// Only if that pid is still this soak's server.
			if cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(s.pid) + "/cmdline"); err == nil && bytes.Contains(cmdline, []byte(s.socket)) {
				_ = syscall.Kill(s.pid, syscall.SIGKILL)
			}
		}
		os.RemoveAll(s.dir)
	})
}
