package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// runCLI runs the tmcp binary with args against srv and returns its output
// and exit error.
func runCLI(t *testing.T, srv *tmuxtest.Server, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(tmcpBinary, args...)
	cmd.Env = append(srv.Env(), env...)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() {
		out, err = cmd.CombinedOutput()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(callTimeout):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("tmcp %v did not finish", args)
	}
	return string(out), err
}

func TestCommandLine(t *testing.T) {
	srv := tmuxtest.New(t)
	sock := []string{"-socket-path", srv.Socket}

	if out, err := runCLI(t, srv, nil, "-version"); err != nil || !strings.HasPrefix(out, "tmcp ") {
		t.Errorf("-version: %q, %v", out, err)
	}

	out, err := runCLI(t, srv, nil, append(sock, "-doctor")...)
	for _, want := range []string{"tmux:        3", "socket:      " + srv.Socket, "tier:        mutating", "server:      running: 1 sessions, 1 windows, 1 panes", "inside it:   no", "control:     working"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("-doctor: %v, output lacks %q:\n%s", err, want, out)
		}
	}

	out, err = runCLI(t, srv, []string{"TMCP_SAFETY=readonly"}, append(sock, "-tools")...)
	if err != nil || !strings.Contains(out, "tier readonly") || !strings.Contains(out, "offered   readonly     capture_pane") ||
		!strings.Contains(out, "withheld  mutating     send_keys") || !strings.Contains(out, "withheld  destructive  kill_server") {
		t.Errorf("-tools at readonly: %v\n%s", err, out)
	}
	out, _ = runCLI(t, srv, []string{"TMCP_SAFETY=everything"}, append(sock, "-tools")...)
	if !strings.Contains(out, "is not readonly, mutating or destructive: using readonly") || !strings.Contains(out, "withheld  mutating     send_keys") {
		t.Errorf("-tools with an unknown tier: %s", out)
	}

	start := time.Now()
	out, err = runCLI(t, srv, nil, "-binary", "/nonexistent/tmux")
	if err == nil || !strings.Contains(out, "/nonexistent/tmux") || time.Since(start) > 5*time.Second {
		t.Errorf("a missing -binary: %v after %v: %q, want a prompt failure naming it", err, time.Since(start), out)
	}
	out, err = runCLI(t, srv, nil, "-binary", "/bin/true")
	if err == nil || !strings.Contains(out, "does not look like tmux") {
		t.Errorf("-binary /bin/true: %v: %q, want a failure at start-up", err, out)
	}
}

// TestDoctorFailsWhenTheControlClientCannotAttach runs -doctor with a tmux
// that runs every command but refuses control mode: commands still work,
// as processes, and -doctor must say the control connection does not.
func TestDoctorFailsWhenTheControlClientCannotAttach(t *testing.T) {
	srv := tmuxtest.New(t)
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "tmux")
	body := fmt.Sprintf("#!/bin/sh\nfor a; do [ \"$a\" = -C ] && { echo 'control mode refused' >&2; exit 1; }; done\nexec '%s' \"$@\"\n", real)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, srv, nil, "-socket-path", srv.Socket, "-binary", script, "-doctor")
	if err == nil || !strings.Contains(out, "server:      running") ||
		!strings.Contains(out, "control:     not working (tmux did not attach the control client)") ||
		!strings.Contains(out, "tmcp: the control connection is not working") {
		t.Errorf("-doctor with control mode refused: %v, want a failure naming the control client:\n%s", err, out)
	}
}

// TestDemoPlaysItsWholeSession runs the README's first command, the demo,
// and checks that every step did what it shows.
func TestDemoPlaysItsWholeSession(t *testing.T) {
	srv := tmuxtest.New(t) // only for a clean environment: the demo makes its own server
	out, err := runCLI(t, srv, nil, "-demo")
	if err != nil {
		t.Fatalf("tmcp -demo: %v\n%s", err, out)
	}
	for _, want := range []string{
		`"exitStatus":2`,          // ls of a missing file
		`"outcome":"matched"`,     // the server said it was listening
		`"outcome":"stopped"`,     // the build printed an error first
		"│ only this is new",      // capture_since: only what is new
		`"completed":[`,           // the batch ran
		`{"paneId":"%1"}`,         // find_pane_by_position in the batch
		"error: format could run", // display_message refused #(…)
		"done: the private tmux server is gone.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tmcp -demo never showed %q; output:\n%s", want, out)
		}
	}
	if strings.Contains(out, "protocol error") {
		t.Errorf("tmcp -demo met a protocol error:\n%s", out)
	}
}
