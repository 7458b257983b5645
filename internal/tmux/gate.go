package tmux

import (
	"context"
	"slices"
	"sync"
	"time"
)

// attachGate keeps tmcp from crashing tmux 3.3a. Its server sets a control
// client's flag as the client begins to identify itself, but makes the
// client's state only once it is done; some notifications go to every
// control client with the flag, and writing one to a client still
// identifying dereferences that missing state. So tmcp's commands that
// cause such a notification wait while one of its clients attaches, and
// an attach waits for those in flight. An attach waiting holds back new
// such commands, so a stream of them cannot starve it. The zero gate is
// open.
type attachGate struct {
	// afterDetach returns once tmux has dealt with what it read before:
	// a client that exited is then known to have detached.
	afterDetach func(ctx context.Context)

	mu        sync.Mutex
	attaching int
	waiting   int // attaches waiting for the commands in flight
	notifying int
	changed   chan struct{} // closed and replaced at each change
}

// enter waits until the gate lets an attach (attach) or a notifying
// command through, and counts it in; ctx bounds the wait.
func (g *attachGate) enter(ctx context.Context, attach bool) error {
	waiting := false
	defer func() {
		if waiting {
			g.mu.Lock()
			g.waiting--
			g.signal()
			g.mu.Unlock()
		}
	}()
	for {
		g.mu.Lock()
		if attach && g.notifying == 0 || !attach && g.attaching == 0 && g.waiting == 0 {
			if attach {
				g.attaching++
			} else {
				g.notifying++
			}
			g.mu.Unlock()
			return nil
		}
		if attach && !waiting {
			waiting = true
			g.waiting++
		}
		if g.changed == nil {
			g.changed = make(chan struct{})
		}
		changed := g.changed
		g.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// settle runs afterDetach, if there is one.
func (g *attachGate) settle(ctx context.Context) {
	if g.afterDetach != nil {
		g.afterDetach(ctx)
	}
}

// signal wakes whoever waits for a change; g.mu is held.
func (g *attachGate) signal() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// leave counts out what enter let through.
func (g *attachGate) leave(attach bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if attach {
		g.attaching--
	} else {
		g.notifying--
	}
	g.signal()
}

// notifiesEveryClient reports whether a command can make tmux 3.3a write
// a notification to every control client, attached or not: a session
// made, closed or renamed (%sessions-changed, %session-renamed), a
// session's current window changed (%session-window-changed), a window's
// active pane changed (%window-pane-changed), a pane's mode changed
// (%pane-mode-changed), or a client detached (%client-detached). Commands
// that only notify the clients of a session (a window added, a layout
// changed) are safe. A pane leaves a mode when it is respawned or its
// history cleared, and may when it is sent keys: in copy mode they go to
// the mode's key table, where q or Escape ends it.
func notifiesEveryClient(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "new-session", "kill-session", "rename-session", "kill-server",
		"new-window", "kill-window", "kill-pane", "respawn-window",
		"select-window", "next-window", "previous-window", "last-window",
		"swap-window", "move-window", "link-window", "unlink-window",
		"break-pane", "join-pane", "move-pane",
		"select-pane", "last-pane", "swap-pane", "rotate-window",
		"copy-mode", "clock-mode", "choose-tree", "choose-client", "choose-buffer", "customize-mode",
		"detach-client", "switch-client", "attach-session",
		"send-keys", "respawn-pane", "clear-history",
		"pipe-pane": // closing a dead pane's pipe destroys the pane, and may close its session
		return true
	case "split-window":
		return !slices.Contains(args[1:], "-d") // the new pane becomes the active one
	}
	return false
}

// closesSessions reports whether a command can close a session (by
// killing or moving away its last pane or window). tmux detaches the
// session's clients after it has answered, and each detach notifies every
// control client.
func closesSessions(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "kill-session", "kill-window", "kill-pane", "unlink-window",
		"move-window", "join-pane", "move-pane", "break-pane":
		return true
	}
	return false
}

// settleBound bounds how long a command that closed sessions holds the
// gate while tmcp's clients of those sessions go.
const settleBound = 2 * time.Second

// settleDetaches waits, after a command that may have closed sessions,
// until tmcp's control clients attached to a session now gone have exited
// and tmux has dealt with their going, so that their detaching is over
// before the gate opens.
func (c *Client) settleDetaches(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, settleBound)
	defer cancel()
	out, err := c.probe(ctx, "list-sessions", "-F", "#{session_id}")
	if err != nil && ctx.Err() != nil {
		return
	}
	live := map[string]bool{} // none when tmux said there are none
	for _, id := range out {
		live[id] = true
	}
	var gone []*controlClient
	for _, cl := range c.controlClients() {
		if id := cl.sessionID(); id != "" && !live[id] {
			gone = append(gone, cl)
		}
	}
	if len(gone) == 0 {
		return
	}
	for _, cl := range gone {
		select {
		case <-cl.reaped:
		case <-ctx.Done():
			return
		}
	}
	c.gate.settle(ctx)
}

// probe runs a command on the command client as it is, or as a process:
// never attaching one, which would wait for the gate its caller holds.
func (c *Client) probe(ctx context.Context, args ...string) ([]string, error) {
	c.mu.Lock()
	ctl := c.ctl
	c.mu.Unlock()
	if ctl != nil && ctl.alive() {
		if out, err := ctl.run(ctx, args); err == nil {
			return out, nil
		}
	}
	return c.launcher.run(ctx, args...)
}

// controlClients returns tmcp's control clients: the command client and
// the output clients.
func (c *Client) controlClients() []*controlClient {
	c.mu.Lock()
	ctl := c.ctl
	c.mu.Unlock()
	clients := c.streams.all()
	if ctl != nil {
		clients = append(clients, ctl)
	}
	return clients
}
