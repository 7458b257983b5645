package tmux

import (
	"context"
	"strconv"
)

// Respawn restarts a pane's process, killing the one that runs. An empty
// command runs again the one the pane was made with; dir (taken
// literally, never as a format) is where the new process starts.
func (c *Client) Respawn(ctx context.Context, pane, dir, command string) error {
	return c.RespawnWithEnv(ctx, pane, dir, command, nil)
}

// RespawnWithEnv is Respawn with NAME=VALUE pairs set in the new process's
// environment (tmux's -e), for this start only.
func (c *Client) RespawnWithEnv(ctx context.Context, pane, dir, command string, env []string) error {
	args := []string{"respawn-pane", "-k", "-t", pane}
	if dir != "" {
		args = append(args, "-c", EscapeFormat(dir))
	}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	if command != "" {
		args = append(args, command)
	}
	_, err := c.Run(ctx, args...)
	return err
}

// ClearScreen resets a pane's terminal, which empties its screen and puts
// the cursor at the top; the program in it is sent nothing. Outside a mode,
// the cleared rows go to the history.
func (c *Client) ClearScreen(ctx context.Context, pane string) error {
	_, err := c.Run(ctx, "send-keys", "-R", "-t", pane)
	return err
}

// ClearHistory drops a pane's scrollback.
func (c *Client) ClearHistory(ctx context.Context, pane string) error {
	_, err := c.Run(ctx, "clear-history", "-t", pane)
	return err
}

// EnterCopyMode puts a pane in copy mode (a pane already in it stays) and
// scrolls it up lines rows, as far as the history goes.
func (c *Client) EnterCopyMode(ctx context.Context, pane string, lines int) error {
	if _, err := c.Run(ctx, "copy-mode", "-t", pane); err != nil {
		return err
	}
	if lines <= 0 {
		return nil
	}
	_, err := c.Run(ctx, "send-keys", "-X", "-N", strconv.Itoa(lines), "-t", pane, "scroll-up")
	return err
}

// LeaveMode takes a pane out of copy mode or any other mode; a pane in no
// mode is left as it is.
func (c *Client) LeaveMode(ctx context.Context, pane string) error {
	_, err := c.Run(ctx, "copy-mode", "-q", "-t", pane)
	return err
}

// Rect is where a pane lies in its window, in cells; Right and Bottom are
// the last column and row it covers.
type Rect struct {
	PaneID                   string
	Left, Top, Right, Bottom int
	Active                   bool
}

// Geometry is a window's size and the places of its panes, in tmux's order.
type Geometry struct {
	Width, Height int
	Zoomed        bool // only the active pane shows
	Panes         []Rect
}

var geometryVars = []string{"pane_id", "pane_left", "pane_top", "pane_right", "pane_bottom", "pane_active",
	"window_width", "window_height", "window_zoomed_flag"}

// WindowGeometry returns the size of a window and the place of each of its
// panes.
func (c *Client) WindowGeometry(ctx context.Context, window string) (Geometry, error) {
	var g Geometry
	rows, err := list(ctx, c, []string{"list-panes", "-t", window}, geometryVars, func(r *fields) Rect {
		p := Rect{PaneID: r.str(), Left: r.num(), Top: r.num(), Right: r.num(), Bottom: r.num(), Active: r.flag()}
		g.Width, g.Height, g.Zoomed = r.num(), r.num(), r.flag()
		return p
	})
	g.Panes = rows
	return g, err
}

// DefaultShell returns the shell tmux starts, given no command, in a new
// pane beside target (a session, window or pane; its default-shell
// option), and the id of target's session; with target empty, in a new
// session, whose id is "". With no server running, one is started for
// the question (and ends with it, having no session): the option is what
// the server's configuration makes it.
func (c *Client) DefaultShell(ctx context.Context, target string) (shell, session string, err error) {
	if target != "" {
		f, err := c.Fields(ctx, target, "default-shell", "session_id")
		if err != nil {
			return "", "", err
		}
		return f[0], f[1], nil
	}
	out, err := c.Run(ctx, "show-options", "-gv", "default-shell")
	if IsNoServer(err) {
		out, err = c.RunProcess(ctx, "start-server", ";", "show-options", "-gv", "default-shell")
	}
	if err != nil || len(out) == 0 {
		return "", "", err
	}
	return out[0], "", nil
}
