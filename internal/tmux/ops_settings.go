package tmux

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// OptionScope is the kind of object an option is read from or set on.
type OptionScope string

// The option scopes, as the tools name them.
const (
	ServerScope  OptionScope = "server"
	SessionScope OptionScope = "session"
	WindowScope  OptionScope = "window"
	PaneScope    OptionScope = "pane"
)

// Setting is one option, environment variable or hook as tmux reports it.
type Setting struct {
	Name      string
	Value     string // the option's value, the variable's, or the hook's command
	Inherited bool   // an option with no value of its own here (show-options -A marks it *)
	Removed   bool   // a variable removed from the environment (tmux shows -NAME)
}

// optionTarget returns the flags that address options of scope on target:
// -s for the server; with no target, the global session or window options
// (-g, -w -g); else -t, with -w or -p. tmux itself decides the table of a
// built-in option from its name; the flag matters for user options (@x).
func optionTarget(scope OptionScope, target string) ([]string, error) {
	switch scope {
	case ServerScope:
		return []string{"-s"}, nil
	case SessionScope:
		if target == "" {
			return []string{"-g"}, nil
		}
		return []string{"-t", SessionTarget(target)}, nil
	case WindowScope:
		if target == "" {
			return []string{"-w", "-g"}, nil
		}
		return []string{"-w", "-t", target}, nil
	case PaneScope:
		if target == "" {
			return nil, fmt.Errorf("pane options need a pane")
		}
		return []string{"-p", "-t", target}, nil
	}
	return nil, fmt.Errorf("scope %q is not server, session, window or pane", scope)
}

// ShowOptions returns the options of scope on target (see optionTarget),
// those inherited from a parent marked, or the one named (several for an
// array option). An unknown option is an error ("invalid option").
func (c *Client) ShowOptions(ctx context.Context, scope OptionScope, target, name string) ([]Setting, error) {
	flags, err := optionTarget(scope, target)
	if err != nil {
		return nil, err
	}
	args := append([]string{"show-options", "-A"}, flags...)
	if name != "" {
		args = append(args, "--", name)
	}
	out, err := c.Run(ctx, args...)
	if err != nil {
		return nil, err
	}
	var opts []Setting
	for _, l := range out {
		if l != "" {
			opts = append(opts, ParseOptionLine(l))
		}
	}
	return opts, nil
}

// SetOption sets an option of scope on target to value, literally (never
// -F, so no format in it is expanded now), or unsets it. It refuses to set
// window-size to manual globally: tmux 3.3a can crash on it.
func (c *Client) SetOption(ctx context.Context, scope OptionScope, target, name, value string, unset bool) error {
	if !unset && value == "manual" && target == "" && isWindowSize(name) {
		return errors.New("refusing to set window-size to manual globally: tmux 3.3a can crash on it; set it on one window instead (scope window, target @N)")
	}
	flags, err := optionTarget(scope, target)
	if err != nil {
		return err
	}
	args := append([]string{"set-option"}, flags...)
	if unset {
		args = append(args, "-u", "--", name)
	} else {
		args = append(args, "--", name, value)
	}
	_, err = c.Run(ctx, args...)
	return err
}

// isWindowSize reports whether tmux reads name as window-size: the name or
// an unambiguous prefix of it, at least "window-si" ("window-s" begins
// window-status-* and window-style too), an array index aside.
func isWindowSize(name string) bool {
	name, _, _ = strings.Cut(name, "[")
	return len(name) >= len("window-si") && strings.HasPrefix("window-size", name)
}

// ParseOptionLine reads one line of show-options: the name (with [i] for
// an array item), a * when the value is inherited, and the value as tmux
// quoted it (see UnquoteOption).
func ParseOptionLine(line string) Setting {
	name, value, _ := strings.Cut(line, " ")
	s := Setting{Name: name, Value: UnquoteOption(value)}
	if n, ok := strings.CutSuffix(name, "*"); ok {
		s.Name, s.Inherited = n, true
	}
	return s
}

// UnquoteOption undoes the quoting show-options puts on a value: a pair of
// single quotes for the empty string, "…" or '…' around values with spaces or special
// characters, and backslash escapes (C-style letters, three octal digits,
// or any other character standing for itself).
func UnquoteOption(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' || i+1 == len(v) {
			b.WriteByte(v[i])
			continue
		}
		i++
		if n, ok := octal3(v[i:]); ok {
			b.WriteByte(n)
			i += 2
			continue
		}
		if c, ok := cEscapes[v[i]]; ok {
			b.WriteByte(c)
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// cEscapes are the C-style escapes tmux's vis writes.
var cEscapes = map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'a': '\a', 'v': '\v', 'f': '\f', '0': 0, 's': ' ', 'E': 0x1b}

// envTarget addresses a session's environment, or the global one when
// session is empty.
func envTarget(session string) []string {
	if session == "" {
		return []string{"-g"}
	}
	return []string{"-t", SessionTarget(session)}
}

// ShowEnvironment returns a session's environment (the global one when
// session is empty), or the one variable named. tmux's shell form (-s) is
// read, so a value holding a newline cannot pass for another variable.
func (c *Client) ShowEnvironment(ctx context.Context, session, name string) ([]Setting, error) {
	args := append([]string{"show-environment", "-s"}, envTarget(session)...)
	if name != "" {
		args = append(args, "--", name)
	}
	out, err := c.Run(ctx, args...)
	if err != nil {
		return nil, err
	}
	return ParseShellEnvironment(strings.Join(out, "\n"))
}

// SetEnvironment sets a variable in a session's environment (the global
// one when session is empty), literally (never -F).
func (c *Client) SetEnvironment(ctx context.Context, session, name, value string) error {
	_, err := c.Run(ctx, append(append([]string{"set-environment"}, envTarget(session)...), "--", name, value)...)
	return err
}

// UnsetEnvironment deletes a variable from an environment (-u) or, with
// mask, marks it removed (-r), so new processes of the session do not get
// it even from the global environment.
func (c *Client) UnsetEnvironment(ctx context.Context, session, name string, mask bool) error {
	flag := "-u"
	if mask {
		flag = "-r"
	}
	_, err := c.Run(ctx, append(append([]string{"set-environment", flag}, envTarget(session)...), "--", name)...)
	return err
}

// ParseShellEnvironment reads show-environment -s output: `unset NAME;`
// for a removed variable, `NAME="value"; export NAME;` for a set one,
// where the value may span lines and has $ ` " and \ escaped by a
// backslash.
func ParseShellEnvironment(out string) ([]Setting, error) {
	var vars []Setting
	for rest := out; rest != ""; {
		rest = strings.TrimLeft(rest, "\n")
		if rest == "" {
			break
		}
		if r, ok := strings.CutPrefix(rest, "unset "); ok {
			name, after, ok := strings.Cut(r, ";")
			if !ok {
				return nil, fmt.Errorf("unreadable environment line %q", firstLine(rest))
			}
			vars = append(vars, Setting{Name: name, Removed: true})
			rest = after
			continue
		}
		name, r, ok := strings.Cut(rest, `="`)
		if !ok || strings.Contains(name, "\n") {
			return nil, fmt.Errorf("unreadable environment line %q", firstLine(rest))
		}
		var value strings.Builder
		closed := false
		i := 0
		for ; i < len(r); i++ {
			if r[i] == '\\' && i+1 < len(r) {
				i++
				value.WriteByte(r[i])
				continue
			}
			if r[i] == '"' {
				closed = true
				break
			}
			value.WriteByte(r[i])
		}
		tail := "; export " + name + ";"
		if !closed || !strings.HasPrefix(r[i+1:], tail) {
			return nil, fmt.Errorf("unreadable environment value of %s", name)
		}
		vars = append(vars, Setting{Name: name, Value: value.String()})
		rest = r[i+1+len(tail):]
	}
	return vars, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// ShowHooks returns the hooks that are set on a session or, when session
// is empty, globally (session and window hooks both), each with its
// command as tmux prints it.
func (c *Client) ShowHooks(ctx context.Context, session string) ([]Setting, error) {
	lists := [][]string{{"show-hooks", "-g"}, {"show-hooks", "-g", "-w"}}
	if session != "" {
		lists = [][]string{{"show-hooks", "-t", SessionTarget(session)}}
	}
	var hooks []Setting
	for _, args := range lists {
		out, err := c.Run(ctx, args...)
		if err != nil {
			return nil, err
		}
		for _, l := range out {
			// A hook with no command is listed as its bare name.
			if name, cmd, ok := strings.Cut(l, " "); ok {
				hooks = append(hooks, Setting{Name: name, Value: cmd})
			}
		}
	}
	return hooks, nil
}

// MaxPipeCommand bounds a pipe-pane command once escaped: tmux 3.3a runs
// it through strftime into an 8192-byte buffer and, when it does not fit,
// silently runs an empty command instead.
const MaxPipeCommand = 8191

// EscapeExpansions returns s with every '#' and '%' doubled, so an argument
// that tmux expands both as a format and through strftime (pipe-pane's
// command) arrives as the literal text s: strftime turns %% into %, and
// the format turns ## into #; neither touches the other's character.
func EscapeExpansions(s string) string {
	if !strings.ContainsAny(s, "#%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		if s[i] == '#' || s[i] == '%' {
			b.WriteByte(s[i])
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// PipePane sends a pane's output to a shell command, replacing any pipe it
// had, or, with an empty command, stops piping. The command is run as the
// caller wrote it: no format or strftime sequence in it is expanded.
func (c *Client) PipePane(ctx context.Context, pane, command string) error {
	args := []string{"pipe-pane", "-t", pane}
	if command != "" {
		escaped := EscapeExpansions(command)
		if len(escaped) > MaxPipeCommand {
			return fmt.Errorf("the pipe command is %d bytes once escaped; tmux takes at most %d", len(escaped), MaxPipeCommand)
		}
		args = append(args, escaped)
	}
	_, err := c.Run(ctx, args...)
	return err
}
