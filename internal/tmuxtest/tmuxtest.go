// Package tmuxtest starts private tmux servers for tests: each on its own
// socket in its own directory, started with no configuration file, running
// sh, and torn down when the test ends, whether it passed or not.
package tmuxtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Width and Height are the size of the first window of every test server.
const (
	Width  = 80
	Height = 24
)

// Server is a private tmux server.
type Server struct {
	t      testing.TB
	Dir    string     // private TMUX_TMPDIR, also holding the socket
	Socket string     // socket path, for -S
	mu     sync.Mutex // guards pid: tests kill and restart servers from goroutines
	pid    int        // the server process, once started
}

// Skip skips the test when tmux is not installed.
func Skip(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed: run scripts/install-deps.sh")
	}
}

// New starts a server with one session, "main", whose pane runs sh.
func New(t testing.TB) *Server {
	t.Helper()
	s := Empty(t)
	s.Start()
	return s
}

// Empty returns a server handle whose socket is not yet served: Start
// starts it, so tests can begin with no server at all.
func Empty(t testing.TB) *Server {
	t.Helper()
	Skip(t)
	dir, err := os.MkdirTemp("", "tmcp-test-")
	if err != nil {
		t.Fatalf("making tmux dir: %v", err)
	}
	s := &Server{t: t, Dir: dir, Socket: filepath.Join(dir, "sock")}
	t.Cleanup(func() {
		s.Kill()
		os.RemoveAll(dir)
	})
	return s
}

// Start starts the server with the session "main" running sh.
func (s *Server) Start() {
	s.t.Helper()
	s.Must("-f", "/dev/null", "new-session", "-d", "-s", "main",
		"-x", strconv.Itoa(Width), "-y", strconv.Itoa(Height), "sh")
	s.Must("set-option", "-g", "default-shell", "/bin/sh")
	pid, _ := strconv.Atoi(strings.TrimSpace(s.Must("display-message", "-p", "#{pid}")))
	s.mu.Lock()
	s.pid = pid
	s.mu.Unlock()
}

// Kill ends the server, if it runs, and removes its socket.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid > 0 {
		// A stopped server must be resumed before it can be told to exit.
		_ = syscall.Kill(s.pid, syscall.SIGCONT)
		_, _ = s.Tmux("kill-server")
		// Only if that process is still this test's server.
		if cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(s.pid) + "/cmdline"); err == nil && bytes.Contains(cmdline, []byte(s.Socket)) {
			_ = syscall.Kill(s.pid, syscall.SIGKILL)
		}
		s.pid = 0
	}
	os.Remove(s.Socket)
}

// Stop and Continue send SIGSTOP and SIGCONT to the server process, to
// wedge it as a hung tmux would be and to release it again.
func (s *Server) Stop()     { s.signal(syscall.SIGSTOP) }
func (s *Server) Continue() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.t.Helper()
	pid := s.PID()
	if pid == 0 {
		s.t.Fatalf("signal %v: tmux server not started", sig)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		s.t.Fatalf("signal %v to tmux server %d: %v", sig, pid, err)
	}
}

// Env is the environment a process needs to reach this server by default:
// the private TMUX_TMPDIR, and no TMUX of an enclosing session.
func (s *Server) Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TMUX=") || strings.HasPrefix(kv, "TMUX_PANE=") || strings.HasPrefix(kv, "TMUX_TMPDIR=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TMUX_TMPDIR="+s.Dir)
}

// Tmux runs a tmux command against the server and returns its output.
func (s *Server) Tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-S", s.Socket}, args...)...)
	cmd.Env = s.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return "", err
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return out.String(), &exec.ExitError{ProcessState: cmd.ProcessState, Stderr: errb.Bytes()}
		}
		return out.String(), nil
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return out.String(), os.ErrDeadlineExceeded
	}
}

// Must runs a tmux command and fails the test if it fails.
func (s *Server) Must(args ...string) string {
	s.t.Helper()
	out, err := s.Tmux(args...)
	if err != nil {
		var ee *exec.ExitError
		msg := err.Error()
		if e, ok := err.(*exec.ExitError); ok {
			ee = e
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		s.t.Fatalf("tmux %s: %s", strings.Join(args, " "), msg)
	}
	return out
}

// PID returns the server's process id, or 0 when it is not running.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

// WaitFor polls cond every few milliseconds until it holds or d passes,
// and reports whether it held. For waiting on tmux's own state in tests.
func WaitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}
