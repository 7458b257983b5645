package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/workspace"
)

// Bounds on a listing of options, variables or hooks: the first items are
// kept, the rest counted in dropped (a name reads one item whole).
const (
	maxSettings      = 300
	maxSettingsBytes = DefaultMaxBytes
)

// optionNamePattern: a built-in option, a user option (@x), or an array
// item (name[2]); nothing tmux's parser could read as more.
var optionNamePattern = regexp.MustCompile(`^@?[A-Za-z0-9_][A-Za-z0-9_.:/-]*(\[[0-9]+\])?$`)

// settingTools returns options, environment, hooks and pipe_pane.
func (s *Server) settingTools() []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: "show_option", Title: "Show an option", Annotations: readOnly(),
			Description: "A tmux option of server, session, window or pane; no name: all."}, s.showOption),
		define(&mcp.Tool{Name: "set_option", Title: "Set an option", Annotations: mutating(true),
			Description: "Set or unset a tmux option (literal); returns the value in force."}, s.setOption),
		define(&mcp.Tool{Name: "show_environment", Title: "Show the environment", Annotations: readOnly(),
			Description: "A session's (or global) environment for new panes."}, s.showEnvironment),
		define(&mcp.Tool{Name: "set_environment", Title: "Set a variable", Annotations: mutating(true),
			Description: "Set or unset a session's (or global) variable for new panes."}, s.setEnvironment),
		define(&mcp.Tool{Name: "show_hooks", Title: "Show hooks", Annotations: readOnly(),
			Description: "A session's (or global) hooks."}, s.showHooks),
		define(&mcp.Tool{Name: "pipe_pane", Title: "Pipe or record a pane", Annotations: mutating(false),
			Description: "Pipe a pane's output to a shell command (# and % literal; none: stop); record: true/false starts/stops an asciicast."}, s.pipePane),
	}
}

// settingOut is one option, variable or hook.
type settingOut struct {
	Name      string `json:"name"`
	Value     string `json:"value" jsonschema:"value, or the hook's command"`
	Inherited bool   `json:"inherited,omitempty" jsonschema:"option not set here: inherited"`
	Removed   bool   `json:"removed,omitempty" jsonschema:"variable removed from the environment"`
}

type settingsOut struct {
	Items   []settingOut `json:"items"`
	Dropped int          `json:"dropped,omitempty" jsonschema:"items not returned; pass a name"`
}

// boundSettings keeps the first items within the bounds; a single item
// (a named read) is kept whole.
func boundSettings(items []tmux.Setting) settingsOut {
	out := settingsOut{Items: []settingOut{}}
	bytes := 0
	for i, it := range items {
		bytes += len(it.Name) + len(it.Value)
		if len(items) > 1 && (i == maxSettings || bytes > maxSettingsBytes) {
			out.Dropped = len(items) - i
			break
		}
		out.Items = append(out.Items, settingOut{Name: it.Name, Value: it.Value, Inherited: it.Inherited, Removed: it.Removed})
	}
	return out
}

type showOptionIn struct {
	Name   string `json:"name,omitempty"`
	Scope  string `json:"scope"`
	Target string `json:"target,omitempty" jsonschema:"id; omitted: global"`
}

// optionTarget checks an option's scope and target, resolving an omitted
// pane, and says where the options are, for messages.
func (s *Server) optionTarget(ctx context.Context, scope, target string) (tmux.OptionScope, string, string, error) {
	switch sc := tmux.OptionScope(scope); sc {
	case tmux.ServerScope:
		if target != "" {
			return "", "", "", fmt.Errorf("server options take no target (target %q given)", target)
		}
		return sc, "", "the server", nil
	case tmux.SessionScope, tmux.WindowScope:
		switch {
		case target == "":
			return sc, "", "the global " + scope + " options", nil
		case sc == tmux.SessionScope:
			return sc, target, "session " + target, checkSessionName(target)
		}
		return sc, target, "window " + target, checkWindowID(target)
	case tmux.PaneScope:
		id, err := s.pane(ctx, target)
		return sc, id, "pane " + id, err
	}
	return "", "", "", fmt.Errorf("scope %q is not one of server, session, window, pane", scope)
}

func checkOptionName(name string) error {
	if !optionNamePattern.MatchString(name) {
		return fmt.Errorf("%q is not an option name (like status-left or @mine); call show_option without name to list them", name)
	}
	return nil
}

func (s *Server) showOption(ctx context.Context, _ *mcp.CallToolRequest, in showOptionIn) (*mcp.CallToolResult, settingsOut, error) {
	if in.Name != "" {
		if err := checkOptionName(in.Name); err != nil {
			return nil, settingsOut{}, err
		}
	}
	scope, target, what, err := s.optionTarget(ctx, in.Scope, in.Target)
	if err != nil {
		return nil, settingsOut{}, err
	}
	opts, err := s.tmux.ShowOptions(ctx, scope, target, in.Name)
	if err != nil {
		doing := "showing the options of " + what
		if in.Name != "" {
			doing = "showing option " + in.Name + " of " + what
		}
		return nil, settingsOut{}, explain(doing, err)
	}
	return nil, boundSettings(opts), nil
}

type setOptionIn struct {
	Name   string `json:"name"`
	Value  string `json:"value,omitempty"`
	Scope  string `json:"scope" jsonschema:"server, session, window or pane"`
	Target string `json:"target,omitempty" jsonschema:"id; omitted: global"`
	Unset  bool   `json:"unset,omitempty"`
}

func (s *Server) setOption(ctx context.Context, _ *mcp.CallToolRequest, in setOptionIn) (*mcp.CallToolResult, settingsOut, error) {
	if err := checkOptionName(in.Name); err != nil {
		return nil, settingsOut{}, err
	}
	if in.Unset && in.Value != "" {
		return nil, settingsOut{}, fmt.Errorf("option %s: give a value or unset: true, not both", in.Name)
	}
	scope, target, what, err := s.optionTarget(ctx, in.Scope, in.Target)
	if err != nil {
		return nil, settingsOut{}, err
	}
	if err := s.tmux.SetOption(ctx, scope, target, in.Name, in.Value, in.Unset); err != nil {
		return nil, settingsOut{}, explain("setting option "+in.Name+" of "+what, err)
	}
	opts, err := s.tmux.ShowOptions(ctx, scope, target, in.Name)
	if err != nil {
		if in.Unset && strings.Contains(err.Error(), "invalid option") {
			// A user option unset where it has no parent is gone.
			return nil, boundSettings(nil), nil
		}
		return nil, settingsOut{}, explain("reading back option "+in.Name+" of "+what, err)
	}
	return nil, boundSettings(opts), nil
}

type showEnvironmentIn struct {
	SessionName string `json:"sessionName,omitempty"`
	Name        string `json:"name,omitempty"`
	Global      bool   `json:"global,omitempty"`
}

// envSession resolves the session of an environment call: "" for the
// global environment.
func (s *Server) envSession(ctx context.Context, session string, global bool) (string, string, error) {
	if global {
		if session != "" {
			return "", "", fmt.Errorf("give sessionName %q or global: true, not both", session)
		}
		return "", "the global environment", nil
	}
	name, err := s.session(ctx, session)
	return name, "the environment of session " + name, err
}

func checkEnvName(name string) error {
	if !workspace.IsEnvName(name) {
		return fmt.Errorf("%q is not a variable name (letters, digits and _, not starting with a digit)", name)
	}
	return nil
}

func (s *Server) showEnvironment(ctx context.Context, _ *mcp.CallToolRequest, in showEnvironmentIn) (*mcp.CallToolResult, settingsOut, error) {
	if in.Name != "" {
		if err := checkEnvName(in.Name); err != nil {
			return nil, settingsOut{}, err
		}
	}
	session, what, err := s.envSession(ctx, in.SessionName, in.Global)
	if err != nil {
		return nil, settingsOut{}, err
	}
	vars, err := s.tmux.ShowEnvironment(ctx, session, in.Name)
	if err != nil {
		return nil, settingsOut{}, explain("reading "+in.Name+" in "+what, err)
	}
	return nil, boundSettings(vars), nil
}

type setEnvironmentIn struct {
	Name        string `json:"name"`
	Value       string `json:"value,omitempty"`
	SessionName string `json:"sessionName,omitempty"`
	Global      bool   `json:"global,omitempty"`
	Unset       bool   `json:"unset,omitempty"`
}

func (s *Server) setEnvironment(ctx context.Context, _ *mcp.CallToolRequest, in setEnvironmentIn) (*mcp.CallToolResult, settingsOut, error) {
	if err := checkEnvName(in.Name); err != nil {
		return nil, settingsOut{}, err
	}
	if in.Unset && in.Value != "" {
		return nil, settingsOut{}, fmt.Errorf("variable %s: give a value or unset: true, not both", in.Name)
	}
	session, what, err := s.envSession(ctx, in.SessionName, in.Global)
	if err != nil {
		return nil, settingsOut{}, err
	}
	if in.Unset {
		err = s.unsetEnvironment(ctx, session, in.Name)
	} else {
		err = s.tmux.SetEnvironment(ctx, session, in.Name, in.Value)
	}
	if err != nil {
		return nil, settingsOut{}, explain("setting "+in.Name+" in "+what, err)
	}
	vars, err := s.tmux.ShowEnvironment(ctx, session, in.Name)
	if err != nil {
		if strings.Contains(err.Error(), "unknown variable") {
			return nil, boundSettings(nil), nil
		}
		return nil, settingsOut{}, explain("reading back "+in.Name+" in "+what, err)
	}
	return nil, boundSettings(vars), nil
}

// unsetEnvironment makes sure new processes do not get a variable: it is
// deleted, and in a session whose global environment has it, marked
// removed so that the global value does not show through.
func (s *Server) unsetEnvironment(ctx context.Context, session, name string) error {
	mask := false
	if session != "" {
		global, err := s.tmux.ShowEnvironment(ctx, "", name)
		mask = err == nil && len(global) == 1 && !global[0].Removed
	}
	return s.tmux.UnsetEnvironment(ctx, session, name, mask)
}

type showHooksIn struct {
	SessionName string `json:"sessionName,omitempty"`
	Global      bool   `json:"global,omitempty"`
}

func (s *Server) showHooks(ctx context.Context, _ *mcp.CallToolRequest, in showHooksIn) (*mcp.CallToolResult, settingsOut, error) {
	session, _, err := s.envSession(ctx, in.SessionName, in.Global)
	if err != nil {
		return nil, settingsOut{}, err
	}
	hooks, err := s.tmux.ShowHooks(ctx, session)
	if err != nil {
		what := "global hooks"
		if session != "" {
			what = "hooks of session " + session
		}
		return nil, settingsOut{}, explain("listing "+what, err)
	}
	return nil, boundSettings(hooks), nil
}

type pipePaneIn struct {
	PaneID  string `json:"paneId,omitempty"`
	Command string `json:"command,omitempty"`
	Record  *bool  `json:"record,omitempty"`
}

type pipedOut struct {
	PaneID   string `json:"paneId"`
	Piped    bool   `json:"piped" jsonschema:"the pane's output now goes to a command"`
	File     string `json:"file,omitempty" jsonschema:"the recording's file, being (or last) written"`
	IsCaller bool   `json:"isCaller,omitempty"`
}

// pipePane is not put to the person even on the caller's pane: a pipe
// only reads the pane's output (-O), never types into it.
func (s *Server) pipePane(ctx context.Context, _ *mcp.CallToolRequest, in pipePaneIn) (*mcp.CallToolResult, pipedOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, pipedOut{}, err
	}
	var file string
	switch {
	case in.Record != nil && in.Command != "":
		return nil, pipedOut{}, errors.New("pipe_pane takes a command or record, not both: call it once for each")
	case in.Record != nil:
		if file, err = s.record(ctx, id, *in.Record); err != nil {
			return nil, pipedOut{}, err
		}
	default:
		doing := "piping pane " + id
		if in.Command == "" {
			doing = "stopping the pipe of pane " + id
		}
		if err := s.tmux.PipePane(ctx, id, in.Command); err != nil {
			return nil, pipedOut{}, explain(doing, err)
		}
	}
	piped, err := s.tmux.Fields(ctx, id, "pane_pipe")
	if err != nil {
		return nil, pipedOut{}, explain("reading whether pane "+id+" is piped", err)
	}
	return nil, pipedOut{PaneID: id, Piped: piped[0] == "1", File: file, IsCaller: s.isCaller(ctx, id)}, nil
}
