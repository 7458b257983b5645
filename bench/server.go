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
// session or tmcp setting (so tmcp runs at its default tier and ceiling
// unless a measurement says otherwise), with TMUX_TMPDIR pointing at dir.
func isolatedEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "TMUX" || name == "TMUX_PANE" || name == "TMUX_TMPDIR" || strings.HasPrefix(name, "TMCP_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TMUX_TMPDIR="+dir)
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
	out, err := s.tmux(ctx, "-N", "new-session", "-d", "-s", name, "-x", strconv.Itoa(paneWidth), "-y", strconv.Itoa(paneHeight),
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
		screen, err := s.tmux(ctx, "capture-pane", "-p", "-t", pane)
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
	return s.awaitScreen(ctx, s.pane, lastRow())
}

// lastRow is the text of the last row fillPane prints: a capture that
// contains it read the whole text.
func lastRow() string { return fmt.Sprintf(rowText, textRows) }

// version returns tmux's version line, such as "tmux 3.3a".
func (s *tmuxServer) version(ctx context.Context) (string, error) {
	out, err := s.tmux(ctx, "-V")
	return strings.TrimSpace(out), err
}

// alive reports whether the server process still runs (a zombie does not).
func (s *tmuxServer) alive() bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(s.pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	_, rest, _ := bytes.Cut(stat, []byte(") "))
	return len(rest) > 0 && rest[0] != 'Z' && rest[0] != 'X'
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

// commandCounter is the server option the hooks of countCommands add to.
const commandCounter = "@tmcp_bench_commands"

// countCommands runs during with an after-hook on each of countedCommands
// that counts it, and returns how many of them the server ran meanwhile.
// The benchmark's own set-up commands are not among them.
func (s *tmuxServer) countCommands(ctx context.Context, during func() error) (int, error) {
	if _, err := s.tmux(ctx, "set-option", "-g", commandCounter, "0"); err != nil {
		return 0, err
	}
	count := fmt.Sprintf(`set-option -gF %s "#{e|+:#{%s},1}"`, commandCounter, commandCounter)
	var hooked []string
	defer func() {
		for _, h := range hooked {
			_, _ = s.tmux(context.WithoutCancel(ctx), "set-hook", "-gu", h)
		}
	}()
	for _, c := range countedCommands {
		if _, err := s.tmux(ctx, "set-hook", "-g", "after-"+c, count); err != nil {
			return 0, err
		}
		hooked = append(hooked, "after-"+c)
	}
	if err := during(); err != nil {
		return 0, err
	}
	out, err := s.tmux(ctx, "show-options", "-gv", commandCounter)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}
