// Package tmuxtest gives each test a private tmux server (see tmuxserver),
// torn down when the test ends, passed or not, and the helpers tests use
// to drive it.
package tmuxtest

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxserver"
)

// Width and Height are the size of a test server's first window.
const (
	Width  = tmuxserver.Width
	Height = tmuxserver.Height
)

// Server is a test's private tmux server. Its methods that take no context
// fail the test on error.
type Server struct {
	*tmuxserver.Server
	t testing.TB
}

// Skip skips the test when tmux is not installed.
func Skip(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed: run scripts/install-deps.sh")
	}
}

// New starts a test server with one session, "main", whose pane runs sh.
func New(t testing.TB) *Server {
	t.Helper()
	s := Empty(t)
	s.Start()
	return s
}

// Empty returns a test server whose socket is not yet served: Start
// starts it, so tests can begin with no server at all.
func Empty(t testing.TB) *Server {
	t.Helper()
	Skip(t)
	srv, err := tmuxserver.Prepare(tmuxserver.Options{})
	if err != nil {
		t.Fatalf("making tmux dir: %v", err)
	}
	t.Cleanup(srv.Close)
	return &Server{Server: srv, t: t}
}

// Start launches the server, failing the test if that fails.
func (s *Server) Start() {
	s.t.Helper()
	if err := s.Launch(context.Background()); err != nil {
		s.t.Fatal(err)
	}
}

// Stop and Continue send SIGSTOP and SIGCONT to the server, to wedge it
// as a hung tmux would be and to release it again.
func (s *Server) Stop() {
	s.t.Helper()
	s.must(s.Signal(syscall.SIGSTOP))
}

func (s *Server) Continue() {
	s.t.Helper()
	s.must(s.Signal(syscall.SIGCONT))
}

// must fails the test if err is not nil.
func (s *Server) must(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

// Tmux runs a tmux command against the server and returns its output.
func (s *Server) Tmux(args ...string) (string, error) {
	return s.Run(context.Background(), args...)
}

// Must runs a tmux command and fails the test if it fails.
func (s *Server) Must(args ...string) string {
	s.t.Helper()
	out, err := s.Tmux(args...)
	s.must(err)
	return out
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
