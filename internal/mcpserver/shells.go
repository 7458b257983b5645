package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/shellinit"
)

// shellStart is how a pane tmcp makes with no command starts its shell:
// with tmcp's integration loaded, when the shell is bash, zsh or fish and
// Config.ShellIntegration is on (see shellinit.Dir.Inject).
type shellStart struct {
	in      shellinit.Injection
	session string // the session whose environment lookup read; "" for a new one
	// extra are the variables the call itself sets (a workspace's
	// environment), which the injection's override for the shell alone.
	extra []string
}

// names returns the names of the variables the injection sets.
func (st shellStart) names() []string {
	var names []string
	for _, kv := range st.in.Env {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	return names
}

// startShell returns how to start the shell of a pane made beside target
// (a session, window or pane; "" for a new session) with command and the
// variables extra: its Env is nil where nothing is injected. Failing to
// ask tmux costs the pane its integration, not its making.
func (s *Server) startShell(ctx context.Context, target, command string, extra []string) shellStart {
	st := shellStart{extra: extra}
	if s.shells == nil || command != "" || s.tmux.Remote() {
		return st
	}
	shell, session, err := s.tmux.DefaultShell(ctx, target)
	if err != nil || shell == "" {
		return st
	}
	if !shellinit.Injects(shell) {
		return st // no need to read the environment
	}
	env, err := s.paneEnvironment(ctx, session, extra)
	if err != nil {
		return st
	}
	st.in, _ = s.shells.Inject(shell, func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	})
	st.session = session
	return st
}

// paneEnvironment returns the environment tmux gives a new pane of session
// ("" for a new session): the global one, the session's over it, and then
// extra (NAME=VALUE pairs).
func (s *Server) paneEnvironment(ctx context.Context, session string, extra []string) (map[string]string, error) {
	env := map[string]string{}
	scopes := []string{""}
	if session != "" {
		scopes = append(scopes, session)
	}
	for _, scope := range scopes {
		vars, err := s.tmux.ShowEnvironment(ctx, scope, "")
		if err != nil {
			return nil, fmt.Errorf("reading the environment of %q: %w", scope, err)
		}
		for _, v := range vars {
			if v.Removed {
				delete(env, v.Name)
			} else {
				env[v.Name] = v.Value
			}
		}
	}
	for _, kv := range extra {
		if name, value, ok := strings.Cut(kv, "="); ok {
			env[name] = value
		}
	}
	return env, nil
}

// made tells the pane streams that the pane runs the injected shell,
// whose nonce tmcp knows before the shell has said anything.
func (s *Server) made(st shellStart, paneID string, pid int) {
	if st.in.Env == nil || pid <= 0 {
		return
	}
	s.hub.ExpectShell(paneID, pane.ShellStart{PID: pid, Name: st.in.Shell, Nonce: st.in.Nonce})
}

// sessionMade undoes, in a session just made, what new-session's -e left
// in the session's environment for every later pane: the injection's
// variables are the first shell's only (a workspace's own value of one is
// put back).
func (s *Server) sessionMade(ctx context.Context, st shellStart, session string) error {
	if st.in.Env == nil {
		return nil
	}
	own := map[string]string{}
	for _, kv := range st.extra {
		if name, value, ok := strings.Cut(kv, "="); ok {
			own[name] = value
		}
	}
	for _, name := range st.names() {
		var err error
		if v, ok := own[name]; ok {
			err = s.tmux.SetEnvironment(ctx, session, name, v)
		} else {
			err = s.tmux.UnsetEnvironment(ctx, session, name, false)
		}
		if err != nil {
			return fmt.Errorf("taking the shell integration's %s out of session %s's environment: %w", name, session, err)
		}
	}
	return nil
}

// env returns the -e pairs to make the pane with: the call's own, then the
// injection's.
func (st shellStart) env() []string {
	if st.in.Env == nil {
		return st.extra
	}
	return append(append([]string(nil), st.extra...), st.in.Env...)
}
