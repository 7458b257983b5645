// Package tmuxserver starts private tmux servers, for the bench and soak
// commands and, through tmuxtest, for tests: each on its own socket in its
// own directory, started with no configuration file, its panes running sh,
// in an environment free of any enclosing tmux session, and killed at the
// end whatever state it was left in.
package tmuxserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Width and Height are the size of the first window of a server whose
// Options leave it out.
const (
	Width  = 80
	Height = 24
)

const (
	// commandTimeout bounds each tmux command of Run when Options.Timeout
	// is 0.
	commandTimeout = 10 * time.Second
	// waitDelay bounds how long a killed tmux client may hold its pipes.
	waitDelay = time.Second
)

// Options describe a private server. The zero value is a server like
// every test's: one session "main" of Width by Height.
type Options struct {
	// Dir holds the socket and is the server's TMUX_TMPDIR. If empty, a
	// new temporary directory named after Session (tmcp-test-* if that is
	// empty too) is made, and Close removes it.
	Dir string
	// Session names the first session; "main" if empty.
	Session string
	// Width and Height size the first session; Width and Height if 0.
	Width, Height int
	// Timeout bounds each tmux command of Run; commandTimeout if 0.
	Timeout time.Duration
	// Env holds NAME=value pairs set in the environment of the server and
	// of every command, in place of any inherited value of NAME.
	Env []string
	// Unset names further variables left out of that environment; a name
	// ending in "*" leaves out every variable it is a prefix of.
	Unset []string
}

// Server is a private tmux server.
type Server struct {
	Dir    string // private TMUX_TMPDIR, also holding the socket
	Socket string // socket path, for -S

	opts   Options
	ownDir bool // Dir was made here: Close removes it

	mu      sync.Mutex // guards started and pid: a server may be killed and restarted from other goroutines
	started bool       // a server may run on the socket: Kill must end it
	pid     int        // the server process, once known
}

// Open starts a server as opts describe. Unless it fails, the caller must
// call Close.
func Open(ctx context.Context, opts Options) (*Server, error) {
	s, err := Prepare(opts)
	if err != nil {
		return nil, err
	}
	if err := s.Launch(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Prepare returns a server whose socket is not yet served; Launch starts
// it. Unless it fails, the caller must call Close.
func Prepare(opts Options) (*Server, error) {
	pattern := "tmcp-test-"
	if opts.Session == "" {
		opts.Session = "main"
	} else {
		pattern = "tmcp-" + opts.Session + "-"
	}
	if opts.Width == 0 {
		opts.Width = Width
	}
	if opts.Height == 0 {
		opts.Height = Height
	}
	if opts.Timeout == 0 {
		opts.Timeout = commandTimeout
	}
	s := &Server{Dir: opts.Dir, opts: opts}
	if s.Dir == "" {
		dir, err := os.MkdirTemp("", pattern)
		if err != nil {
			return nil, err
		}
		s.Dir, s.ownDir = dir, true
	}
	s.Socket = filepath.Join(s.Dir, "sock")
	return s, nil
}

// Launch starts the server with its first session running sh, and makes sh
// the shell of every later pane too.
func (s *Server) Launch(ctx context.Context) error {
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	// SHELL is the server's first default-shell, which runs the first
	// pane's command: with the user's bash, the pane would show bash
	// until bash had started sh.
	if _, err := s.run(ctx, []string{"SHELL=/bin/sh"}, "-f", "/dev/null", "new-session", "-d", "-s", s.opts.Session,
		"-x", strconv.Itoa(s.opts.Width), "-y", strconv.Itoa(s.opts.Height), "sh"); err != nil {
		return err
	}
	if _, err := s.Run(ctx, "set-option", "-g", "default-shell", "/bin/sh"); err != nil {
		return err
	}
	out, err := s.Run(ctx, "display-message", "-p", "#{pid}")
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || pid <= 0 {
		return fmt.Errorf("reading the tmux server's pid: %q", out)
	}
	s.mu.Lock()
	s.pid = pid
	s.mu.Unlock()
	return nil
}

// Kill ends the server, if it runs, whatever its state (stopped included),
// and removes its socket; Launch may start it again. It does not take a
// context: the caller's may already be done.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A caller may start the server with its own new-session, unknown here
	// but for the socket.
	if _, err := os.Stat(s.Socket); s.started || err == nil {
		if s.pid > 0 {
			// A stopped server must be resumed before it can be told to exit.
			_ = syscall.Kill(s.pid, syscall.SIGCONT)
		}
		_, _ = s.Run(context.Background(), "kill-server")
		// Only if that process is still this server.
		if s.pid > 0 {
			if cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(s.pid) + "/cmdline"); err == nil && bytes.Contains(cmdline, []byte(s.Socket)) {
				_ = syscall.Kill(s.pid, syscall.SIGKILL)
			}
		}
		s.started, s.pid = false, 0
	}
	os.Remove(s.Socket)
}

// Close kills the server and removes its directory if Prepare made it. It
// may be called more than once, from any goroutine, and on nil.
func (s *Server) Close() {
	if s == nil {
		return
	}
	s.Kill()
	if s.ownDir {
		os.RemoveAll(s.Dir)
	}
}

// Signal sends sig to the server process.
func (s *Server) Signal(sig syscall.Signal) error {
	pid := s.PID()
	if pid == 0 {
		return fmt.Errorf("signal %v: tmux server not started", sig)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("signal %v to tmux server %d: %w", sig, pid, err)
	}
	return nil
}

// PID returns the server's process id, or 0 when it is not running.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

// Alive reports whether the server process still runs (a zombie does not).
func (s *Server) Alive() bool {
	pid := s.PID()
	if pid == 0 {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name, which may hold
	// spaces and parentheses itself.
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	rest = bytes.TrimLeft(rest, " ")
	return len(rest) > 0 && rest[0] != 'Z' && rest[0] != 'X'
}

// Env is the environment a process needs to reach this server by default:
// the private TMUX_TMPDIR, no TMUX of an enclosing session, and Options.Env
// without Options.Unset.
func (s *Server) Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !s.leftOut(name) {
			env = append(env, kv)
		}
	}
	return append(append(env, "TMUX_TMPDIR="+s.Dir), s.opts.Env...)
}

// leftOut reports whether Env leaves out the inherited variable name.
func (s *Server) leftOut(name string) bool {
	switch name {
	case "TMUX", "TMUX_PANE", "TMUX_TMPDIR":
		return true
	}
	for _, u := range s.opts.Unset {
		if prefix, ok := strings.CutSuffix(u, "*"); ok && strings.HasPrefix(name, prefix) || u == name {
			return true
		}
	}
	return slices.ContainsFunc(s.opts.Env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
}

// Command builds an unstarted `tmux -S SOCKET args…` in Env, killed when
// ctx ends. It runs in its own process group, so that a terminal's Ctrl-C
// reaches only the command driving it, which then tears down in order.
func (s *Server) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-S", s.Socket}, args...)...)
	cmd.Env = s.Env()
	cmd.WaitDelay = waitDelay
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// Run runs one tmux command against the server, bounded by
// Options.Timeout, and returns its standard output.
func (s *Server) Run(ctx context.Context, args ...string) (string, error) {
	return s.run(ctx, nil, args...)
}

// run is Run with env added to the command's environment.
func (s *Server) run(ctx context.Context, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	cmd := s.Command(ctx, args...)
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
