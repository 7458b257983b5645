package main

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxserver"
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

// tmuxServer is the private tmux server the benchmark runs against (see
// tmuxserver), with the id of its first session's only pane.
type tmuxServer struct {
	*tmuxserver.Server
	pane string // like "%0"
}

// startServer starts a server whose socket lives in dir and fills its pane
// with text. Its environment has no tmcp setting, so tmcp runs at its
// default tier and ceiling unless a measurement says otherwise. Unless it
// fails, the caller must call Close.
func startServer(ctx context.Context, dir string) (*tmuxServer, error) {
	srv, err := tmuxserver.Open(ctx, tmuxserver.Options{Dir: dir, Session: sessionName,
		Width: paneWidth, Height: paneHeight, Timeout: setupTimeout, Unset: []string{"TMCP_*"}})
	if err != nil {
		return nil, err
	}
	s := &tmuxServer{Server: srv}
	out, err := s.Run(ctx, "display-message", "-p", "-t", sessionName, "#{pane_id}")
	if err == nil {
		s.pane = strings.TrimSpace(out)
		err = s.fillPane(ctx)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// benchPane is a pane of the private server: its id and its terminal.
type benchPane struct {
	id  string // like "%3"
	tty string // like "/dev/pts/4": writing to it is output of the pane
}

// newSession starts a detached 80x24 session running sh, for one
// measurement alone, and returns its pane. A session of its own keeps the
// control clients that stream one measurement's pane away from the others.
func (s *tmuxServer) newSession(ctx context.Context, name string) (benchPane, error) {
	// -N: should the server have died, fail rather than start another.
	out, err := s.Run(ctx, "-N", "new-session", "-d", "-s", name, "-x", strconv.Itoa(paneWidth), "-y", strconv.Itoa(paneHeight),
		"-P", "-F", "#{pane_id} #{pane_tty}", "sh")
	if err != nil {
		return benchPane{}, err
	}
	id, tty, ok := strings.Cut(strings.TrimSpace(out), " ")
	if !ok || !strings.HasPrefix(id, "%") || tty == "" {
		return benchPane{}, fmt.Errorf("new-session %s: unexpected answer %q", name, out)
	}
	// The shell's prompt is out before anything measures the pane.
	return benchPane{id: id, tty: tty}, s.awaitScreen(ctx, id, "")
}

// awaitScreen waits until a pane's screen shows text, or, for "", anything.
func (s *tmuxServer) awaitScreen(ctx context.Context, pane, text string) error {
	deadline := time.Now().Add(setupTimeout)
	for {
		screen, err := s.Run(ctx, "capture-pane", "-p", "-t", pane)
		if err != nil {
			return err
		}
		if text == "" && strings.TrimSpace(screen) != "" || text != "" && strings.Contains(screen, text) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pane %s did not show %q within %v; it shows:\n%s", pane, text, setupTimeout, screen)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
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

// fillPane has the pane's shell print textRows rows and waits until the
// last one is on the screen, so every capture reads a full screen of text.
func (s *tmuxServer) fillPane(ctx context.Context) error {
	script := fmt.Sprintf(`i=1; while [ $i -le %d ]; do echo "%s"; i=$((i+1)); done`,
		textRows, strings.Replace(rowText, "%d", "$i", 1))
	if _, err := s.Run(ctx, "send-keys", "-t", s.pane, "-l", script); err != nil {
		return err
	}
	if _, err := s.Run(ctx, "send-keys", "-t", s.pane, "Enter"); err != nil {
		return err
	}
	return s.awaitScreen(ctx, s.pane, lastRow())
}

// lastRow is the text of the last row fillPane prints: a capture that
// contains it read the whole text.
func lastRow() string { return fmt.Sprintf(rowText, textRows) }

// version returns tmux's version line, such as "tmux 3.3a".
func (s *tmuxServer) version(ctx context.Context) (string, error) {
	out, err := s.Run(ctx, "-V")
	return strings.TrimSpace(out), err
}

// commandCounter is the server option the hooks of countCommands add to.
const commandCounter = "@tmcp_bench_commands"

// countCommands runs during with an after-hook on each of countedCommands
// that counts it, and returns how many of them the server ran meanwhile.
// The benchmark's own set-up commands are not among them.
func (s *tmuxServer) countCommands(ctx context.Context, during func() error) (int, error) {
	if _, err := s.Run(ctx, "set-option", "-g", commandCounter, "0"); err != nil {
		return 0, err
	}
	count := fmt.Sprintf(`set-option -gF %s "#{e|+:#{%s},1}"`, commandCounter, commandCounter)
	var hooked []string
	defer func() {
		for _, h := range hooked {
			_, _ = s.Run(context.WithoutCancel(ctx), "set-hook", "-gu", h)
		}
	}()
	for _, c := range countedCommands {
		if _, err := s.Run(ctx, "set-hook", "-g", "after-"+c, count); err != nil {
			return 0, err
		}
		hooked = append(hooked, "after-"+c)
	}
	if err := during(); err != nil {
		return 0, err
	}
	out, err := s.Run(ctx, "show-options", "-gv", commandCounter)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}
