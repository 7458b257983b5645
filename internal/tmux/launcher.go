package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// processWaitDelay bounds how long tmcp waits for a tmux process's pipes
// to close once it has exited or been killed. A tmux client hands its
// stdout to the server, so a stopped server keeps the pipe open after the
// client is gone: without this bound a killed client would hold its caller
// until the server resumed.
const processWaitDelay = 100 * time.Millisecond

// sshFailed is the status ssh exits with when it fails itself (cannot
// connect, authenticate, or lost the connection), as opposed to the
// remote command's status, which tmux never makes 255.
const sshFailed = 255

// Launcher starts every tmux process tmcp runs, control clients and one-off
// commands alike. Prefix lets a transport (such as `ssh -T … -- HOST`)
// stand in front of the binary without touching callers.
type Launcher struct {
	// Prefix is the argv placed before the binary; empty for local tmux.
	// A transport joins the words after it into one line that a shell on
	// the far side splits again, as ssh does, so with a Prefix each of
	// those words is quoted for a POSIX shell.
	Prefix     []string
	Binary     string // the tmux executable
	SocketName string // -L NAME, if set
	SocketPath string // -S PATH, if set (wins over SocketName)

	started atomic.Int64
}

// argv returns the full argument vector for a tmux invocation.
func (l *Launcher) argv(args ...string) []string {
	v := []string{l.Binary}
	if len(l.Prefix) > 0 {
		// The far side's locale is unknown (ssh passes none): without -u a
		// tmux in the C locale writes '_' for the control characters that
		// separate list fields, and for every non-ASCII character.
		v = append(v, "-u")
	}
	switch {
	case l.SocketPath != "":
		v = append(v, "-S", l.SocketPath)
	case l.SocketName != "":
		v = append(v, "-L", l.SocketName)
	}
	v = append(v, args...)
	if len(l.Prefix) == 0 {
		return v
	}
	for i, w := range v {
		v[i] = ShellQuote(w)
	}
	return append(append([]string(nil), l.Prefix...), v...)
}

// ShellQuote returns s as one word for a POSIX shell: inside single
// quotes, where only the single quote itself needs care.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// command builds an unstarted tmux process. When ctx ends the process is
// killed and its pipes are released within processWaitDelay.
func (l *Launcher) command(ctx context.Context, args ...string) *exec.Cmd {
	v := l.argv(args...)
	cmd := exec.CommandContext(ctx, v[0], v[1:]...)
	cmd.WaitDelay = processWaitDelay
	// Its own process group, so a SIGINT aimed at tmcp's terminal group does
	// not reach tmux clients before tmcp has closed them in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// Started reports how many tmux processes this launcher has started.
func (l *Launcher) Started() int64 { return l.started.Load() }

// run starts one tmux command as its own process and returns its output
// lines. A non-zero exit becomes a *CommandError carrying tmux's message.
func (l *Launcher) run(ctx context.Context, args ...string) ([]string, error) {
	cmd := l.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	l.started.Add(1)
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) {
		// It exited 0 and wrote all it had; only the server's copy of its
		// stdout was still open.
		err = nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, noAnswer(args, ctxErr)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			return nil, &CommandError{Args: args, Message: msg, Err: err}
		}
		if len(l.Prefix) > 0 && (exitErr.ExitCode() == sshFailed || exitErr.ExitCode() < 0) {
			// ssh's own failure (or a death by signal), not tmux's answer:
			// the transport could not connect or broke.
			return nil, &CommandError{Args: args, Message: msg, Err: ErrConnectionLost}
		}
		return nil, &CommandError{Args: args, Message: msg}
	}
	return splitLines(stdout.String()), nil
}

// splitLines splits command output into lines, dropping the final newline.
func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// CommandError reports a tmux command that failed or got no answer.
type CommandError struct {
	Args    []string // the command and its arguments
	Message string   // tmux's own message, or what went wrong on the way
	Err     error    // the underlying cause, if any
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("tmux %s: %s", describe(e.Args), e.Message)
}

func (e *CommandError) Unwrap() error { return e.Err }

// Refused reports whether err holds tmux's refusal of a command: tmux
// answered it with an error (a pane not found, a bad option). A command
// that got no answer, was never sent or lost its connection was not
// refused: what tmux would have said is not known.
func Refused(err error) bool {
	var cerr *CommandError
	return errors.As(err, &cerr) && !errors.Is(err, ErrNoAnswer) && !errors.Is(err, ErrConnectionLost) && !errors.Is(err, ErrNotSent)
}

// ErrNoAnswer is wrapped by the error of every tmux command or probe that
// got no answer in time: the server is wedged, stopped or overloaded.
var ErrNoAnswer = errors.New("no answer from tmux in time")

// ErrConnectionLost is wrapped by the error of a command whose connection
// to a remote tmux broke under it (its transport died without tmux ending
// the connection). The server may be fine; the next command reconnects.
var ErrConnectionLost = errors.New("the connection to tmux was lost")

// ErrNotSent is wrapped, beside ErrNoAnswer, by the error of a command
// whose caller gave up before it was written to tmux: it never runs. A
// command without it that got no answer may still run once tmux resumes.
var ErrNotSent = errors.New("the command never reached tmux")

// noAnswer is the error of a command that got no answer before ctxErr (the
// reason its context ended) cut the wait short.
func noAnswer(args []string, ctxErr error) *CommandError {
	return &CommandError{Args: args, Message: ErrNoAnswer.Error(), Err: errors.Join(ErrNoAnswer, ctxErr)}
}

// notSent is noAnswer for a command that was never written to tmux.
func notSent(args []string, ctxErr error) *CommandError {
	return &CommandError{Args: args, Message: ErrNoAnswer.Error(), Err: errors.Join(ErrNoAnswer, ErrNotSent, ctxErr)}
}

// describe names a command briefly for an error: its verb and short
// arguments, never a long payload.
func describe(args []string) string {
	var parts []string
	for i, a := range args {
		if i >= 4 {
			parts = append(parts, "…")
			break
		}
		if len(a) > 24 {
			a = a[:21] + "..."
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
