// Package workspace reads a tmuxp-style YAML document into a Plan: the
// session, its windows and their panes, with every directory resolved and
// every command in the order it is to be typed. It only reads and checks;
// it makes nothing in tmux. An error about a part of the document names
// its line; one about the whole (too large, empty) has none.
package workspace

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Bounds on a document and what it asks for.
const (
	MaxBytes          = 64 << 10  // the document itself
	MaxWindows        = 32        // windows in a session
	MaxPanesPerWindow = 16        // panes in one window
	MaxTypedBytes     = 256 << 10 // all the commands typed, together
)

// Plan is a checked workspace, ready to build.
type Plan struct {
	Session     string
	dir         string   // the session's start directory; "" for tmux's default
	Environment []string // KEY=VALUE, in the document's order
	Windows     []Window
	dirs        []Dir
}

// Window is one window to make.
type Window struct {
	Name   string // "" lets tmux name it
	Layout string // as the LayoutChecker returned it; "" for none
	Named  bool   // Layout is a named layout, not a layout string
	Focus  bool   // the window to select at the end
	Panes  []Pane // at least one
}

// Pane is one pane to make, and what to type into its shell.
type Pane struct {
	Dir      string   // start directory; "" for tmux's default
	Commands []string // typed in order, each followed by Enter
	Focus    bool     // the pane to select in its window
}

// Dir is a start directory the document names, and the line naming it.
type Dir struct {
	Path string
	Line int
}

// Dirs lists the start directories the plan uses, so a caller can check
// that they exist before anything is made (tmux silently falls back to
// another directory when one is missing).
func (p Plan) Dirs() []Dir { return p.dirs }

// envName is what an environment variable may be called.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// IsEnvName reports whether name is a portable environment variable name:
// letters, digits and _, not starting with a digit.
func IsEnvName(name string) bool { return envName.MatchString(name) }

// A LayoutChecker checks a window's layout as the document gives it and
// returns what to hand tmux, and how many panes a layout string describes
// (0 for a named layout).
type LayoutChecker func(layout string) (arg string, panes int, err error)

// Keys each level of the document accepts.
var (
	sessionKeys = []string{"session_name", "start_directory", "environment", "shell_command_before", "windows"}
	windowKeys  = []string{"window_name", "layout", "start_directory", "shell_command_before", "focus", "panes"}
	paneKeys    = []string{"shell_command", "start_directory", "focus"}
)

// Error is a problem with the document, at a line (0 when it has none).
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

func errAt(n *yaml.Node, format string, args ...any) error {
	return &Error{Line: n.Line, Msg: fmt.Sprintf(format, args...)}
}

// Parse reads a document. home replaces a leading ~ in a start directory;
// a relative start directory is taken from the one above it (the
// window's, then the session's), which must then be absolute.
func Parse(doc []byte, home string, checkLayout LayoutChecker) (Plan, error) {
	if len(doc) > MaxBytes {
		return Plan{}, &Error{Msg: fmt.Sprintf("the document is %d bytes; at most %d", len(doc), MaxBytes)}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return Plan{}, &Error{Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return Plan{}, &Error{Msg: "the document is empty: give session_name and windows"}
	}
	p := parser{home: home, checkLayout: checkLayout}
	return p.session(deref(root.Content[0]))
}

type parser struct {
	home        string
	checkLayout LayoutChecker
	plan        Plan
	typed       int
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// fields reads a mapping, refusing keys it does not know and keys given
// twice. what names the mapping in errors.
func fields(n *yaml.Node, what string, known []string) (map[string]*yaml.Node, []*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, nil, errAt(n, "%s must be a mapping (key: value lines), not %s", what, kind(n))
	}
	out := map[string]*yaml.Node{}
	var order []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, nil, errAt(k, "%s has a key that is not a plain name", what)
		}
		if known != nil && !slices.Contains(known, k.Value) {
			return nil, nil, errAt(k, "%q is not supported in %s; use %s", k.Value, what, strings.Join(known, ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, nil, errAt(k, "%q is given twice in %s", k.Value, what)
		}
		out[k.Value] = v
		order = append(order, k)
	}
	return out, order, nil
}

// scalarAt returns the plain value of key in mapping n, or "".
func scalarAt(n *yaml.Node, key string) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := deref(n.Content[i]), deref(n.Content[i+1]); k.Value == key && v.Kind == yaml.ScalarNode {
			return v.Value
		}
	}
	return ""
}

func kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	if n.Tag == "!!null" {
		return "empty"
	}
	return fmt.Sprintf("%q", n.Value)
}

// text reads a scalar as a string (numbers and booleans as written).
func text(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", errAt(n, "%s must be a string, not %s", what, kind(n))
	}
	if strings.ContainsRune(n.Value, 0) {
		return "", errAt(n, "%s holds a NUL byte", what)
	}
	return n.Value, nil
}

func boolean(n *yaml.Node, what string) (bool, error) {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		return false, errAt(n, "%s must be true or false, not %s", what, kind(n))
	}
	return b, nil
}

// commands reads a shell_command or shell_command_before: one string, a
// list of strings, or nothing.
func (p *parser) commands(n *yaml.Node, what string) ([]string, error) {
	var out []string
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return nil, nil
	case n.Kind == yaml.SequenceNode:
		for _, c := range n.Content {
			s, err := text(deref(c), "each command of "+what)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	default:
		s, err := text(n, what)
		if err != nil {
			return nil, errAt(n, "%s must be a command or a list of commands, not %s", what, kind(n))
		}
		out = []string{s}
	}
	kept := out[:0]
	for _, c := range out {
		if strings.ContainsAny(c, "\n\r") {
			return nil, errAt(n, "%s: a command must be one line; give several as a list", what)
		}
		if c != "" {
			kept = append(kept, c)
		}
	}
	return kept, nil
}

// dir resolves a start_directory against parent.
func (p *parser) dir(n *yaml.Node, parent string) (string, error) {
	d := "~" // YAML reads a bare ~ as null; here it can only mean home
	if n.Kind != yaml.ScalarNode || n.Value != "~" {
		var err error
		if d, err = text(n, "start_directory"); err != nil {
			return "", err
		}
	}
	switch {
	case d == "":
		return "", errAt(n, "start_directory is empty")
	case d == "~" || strings.HasPrefix(d, "~/"):
		if p.home == "" {
			return "", errAt(n, "start_directory %q: no home directory is known to expand ~", d)
		}
		d = p.home + d[1:]
	case !path.IsAbs(d):
		if parent == "" {
			return "", errAt(n, "start_directory %q is relative, and no absolute start_directory above it says relative to what", d)
		}
		d = path.Join(parent, d)
	}
	d = path.Clean(d)
	p.plan.dirs = append(p.plan.dirs, Dir{Path: d, Line: n.Line})
	return d, nil
}

func (p *parser) session(n *yaml.Node) (Plan, error) {
	f, _, err := fields(n, "the document", sessionKeys)
	if err != nil {
		return Plan{}, err
	}
	nameNode, ok := f["session_name"]
	if !ok {
		return Plan{}, errAt(n, "session_name is missing")
	}
	name, err := text(nameNode, "session_name")
	if err != nil {
		return Plan{}, err
	}
	if name == "" || strings.ContainsAny(name, ":.") {
		return Plan{}, errAt(nameNode, "session_name %q: give a non-empty name without ':' or '.' (tmux would change them)", name)
	}
	p.plan.Session = name
	if d, ok := f["start_directory"]; ok {
		if p.plan.dir, err = p.dir(d, ""); err != nil {
			return Plan{}, err
		}
	}
	if e, ok := f["environment"]; ok {
		if err := p.environment(e); err != nil {
			return Plan{}, err
		}
	}
	var before []string
	if b, ok := f["shell_command_before"]; ok {
		if before, err = p.commands(b, "shell_command_before"); err != nil {
			return Plan{}, err
		}
	}
	ws, ok := f["windows"]
	if !ok {
		return Plan{}, errAt(n, "windows is missing: give a list of windows")
	}
	if ws.Kind != yaml.SequenceNode || len(ws.Content) == 0 {
		return Plan{}, errAt(ws, "windows must be a list of at least one window, not %s", kind(ws))
	}
	if len(ws.Content) > MaxWindows {
		return Plan{}, errAt(ws, "%d windows; at most %d", len(ws.Content), MaxWindows)
	}
	focused := 0
	for i, w := range ws.Content {
		win, err := p.window(deref(w), i, before)
		if err != nil {
			return Plan{}, err
		}
		if win.Focus {
			if focused++; focused > 1 {
				return Plan{}, errAt(w, "more than one window has focus: true")
			}
		}
		p.plan.Windows = append(p.plan.Windows, win)
	}
	return p.plan, nil
}

func (p *parser) environment(n *yaml.Node) error {
	f, order, err := fields(n, "environment", nil)
	if err != nil {
		return err
	}
	for _, k := range order {
		if !envName.MatchString(k.Value) {
			return errAt(k, "environment: %q is not a variable name", k.Value)
		}
		v := f[k.Value]
		if v.Kind != yaml.ScalarNode {
			return errAt(v, "environment: %s must be a string, not %s", k.Value, kind(v))
		}
		if strings.ContainsRune(v.Value, 0) {
			return errAt(v, "environment: %s holds a NUL byte", k.Value)
		}
		p.plan.Environment = append(p.plan.Environment, k.Value+"="+v.Value)
	}
	return nil
}

func (p *parser) window(n *yaml.Node, index int, before []string) (Window, error) {
	what := fmt.Sprintf("window %d", index)
	if name := scalarAt(n, "window_name"); name != "" {
		what = fmt.Sprintf("window %q", name)
	}
	f, _, err := fields(n, what, windowKeys)
	if err != nil {
		return Window{}, err
	}
	var w Window
	if v, ok := f["window_name"]; ok {
		if w.Name, err = text(v, "window_name"); err != nil {
			return Window{}, err
		}
	}
	layoutPanes := 0
	layout, hasLayout := f["layout"]
	if hasLayout {
		if w.Layout, err = text(layout, "layout"); err != nil {
			return Window{}, err
		}
		if w.Layout, layoutPanes, err = p.checkLayout(w.Layout); err != nil {
			return Window{}, errAt(layout, "%v", err)
		}
		w.Named = layoutPanes == 0
	}
	if v, ok := f["focus"]; ok {
		if w.Focus, err = boolean(v, "focus"); err != nil {
			return Window{}, err
		}
	}
	dir := p.plan.dir
	if v, ok := f["start_directory"]; ok {
		if dir, err = p.dir(v, p.plan.dir); err != nil {
			return Window{}, err
		}
	}
	if v, ok := f["shell_command_before"]; ok {
		more, err := p.commands(v, "shell_command_before")
		if err != nil {
			return Window{}, err
		}
		before = append(before[:len(before):len(before)], more...)
	}
	panes, ok := f["panes"]
	if !ok {
		pane := Pane{Dir: dir, Commands: before}
		if err := p.count(n, pane.Commands); err != nil {
			return Window{}, err
		}
		w.Panes = []Pane{pane}
		return w, fitsLayout(layout, layoutPanes, what, len(w.Panes))
	}
	if panes.Kind != yaml.SequenceNode || len(panes.Content) == 0 {
		return Window{}, errAt(panes, "panes of %s must be a list of at least one pane, not %s", what, kind(panes))
	}
	if len(panes.Content) > MaxPanesPerWindow {
		return Window{}, errAt(panes, "%s has %d panes; at most %d", what, len(panes.Content), MaxPanesPerWindow)
	}
	focused := 0
	for _, pn := range panes.Content {
		pane, err := p.pane(deref(pn), what, dir, before)
		if err != nil {
			return Window{}, err
		}
		if pane.Focus {
			if focused++; focused > 1 {
				return Window{}, errAt(pn, "more than one pane of %s has focus: true", what)
			}
		}
		w.Panes = append(w.Panes, pane)
	}
	return w, fitsLayout(layout, layoutPanes, what, len(w.Panes))
}

// fitsLayout refuses a layout string that describes another number of
// panes than the window has.
func fitsLayout(layout *yaml.Node, layoutPanes int, window string, panes int) error {
	if layoutPanes == 0 || layoutPanes == panes {
		return nil
	}
	return errAt(layout, "the layout describes %d panes, and %s has %d", layoutPanes, window, panes)
}

// pane reads one item of panes: a command, nothing (a blank pane), or a
// mapping with shell_command, start_directory and focus.
func (p *parser) pane(n *yaml.Node, window, dir string, before []string) (Pane, error) {
	pane := Pane{Dir: dir, Commands: before[:len(before):len(before)]}
	if n.Kind == yaml.MappingNode {
		f, _, err := fields(n, "a pane of "+window, paneKeys)
		if err != nil {
			return Pane{}, err
		}
		if v, ok := f["start_directory"]; ok {
			if pane.Dir, err = p.dir(v, dir); err != nil {
				return Pane{}, err
			}
		}
		if v, ok := f["focus"]; ok {
			if pane.Focus, err = boolean(v, "focus"); err != nil {
				return Pane{}, err
			}
		}
		if v, ok := f["shell_command"]; ok {
			cmds, err := p.commands(v, "shell_command")
			if err != nil {
				return Pane{}, err
			}
			pane.Commands = append(pane.Commands, cmds...)
		}
	} else {
		cmds, err := p.commands(n, "a pane of "+window)
		if err != nil {
			return Pane{}, err
		}
		pane.Commands = append(pane.Commands, cmds...)
	}
	if err := p.count(n, pane.Commands); err != nil {
		return Pane{}, err
	}
	return pane, nil
}

// count bounds what the whole document types.
func (p *parser) count(n *yaml.Node, cmds []string) error {
	for _, c := range cmds {
		p.typed += len(c) + 1
	}
	if p.typed > MaxTypedBytes {
		return errAt(n, "the commands add up to more than %d bytes", MaxTypedBytes)
	}
	return nil
}
