package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tmcp/tmcp/internal/hosts"
	"github.com/tmcp/tmcp/internal/mcpserver"
	"github.com/tmcp/tmcp/internal/tmux"
)

// doctorTimeout bounds each check, so a stopped tmux cannot hang -doctor;
// hostTimeout each remote host's, past ssh's connect timeout.
const (
	doctorTimeout = 3 * time.Second
	hostTimeout   = hosts.DefaultConnectTimeout + time.Second
)

// doctor prints what tmcp would work with and whether it works: the local
// tmux, then each remote host.
func doctor(ctx context.Context, w io.Writer, tc *tmux.Client, set *hosts.Set, srv *mcpserver.Server, tier mcpserver.Tier) error {
	err := doctorLocal(ctx, w, tc, srv, tier)
	for _, name := range set.Names() {
		h, _ := set.Host(name)
		hctx, cancel := context.WithTimeout(ctx, hostTimeout)
		c, herr := set.Client(hctx, name)
		var sessions []tmux.Session
		if herr == nil {
			sessions, herr = c.ListSessions(hctx)
		}
		cancel()
		if herr != nil {
			fmt.Fprintf(w, "host %s:  %s: not working: %v\n", name, h.Destination, herr)
			err = errors.Join(err, herr)
			continue
		}
		fmt.Fprintf(w, "host %s:  %s: tmux %s, %d sessions, control %v\n", name, h.Destination, c.Version(), len(sessions), c.ControlConnected())
	}
	return err
}

// doctorLocal checks the local tmux.
func doctorLocal(ctx context.Context, w io.Writer, tc *tmux.Client, srv *mcpserver.Server, tier mcpserver.Tier) error {
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	fmt.Fprintf(w, "tmux:        %s (%s)\n", tc.Version(), tc.Binary())
	fmt.Fprintf(w, "socket:      %s\n", tc.SocketPath())
	fmt.Fprintf(w, "tier:        %s (%s)\n", tier, tier.Offers())
	sessions, err := tc.ListSessions(ctx)
	if err != nil {
		fmt.Fprintf(w, "server:      not answering: %v\n", err)
		return err
	}
	if len(sessions) == 0 {
		fmt.Fprintf(w, "server:      not running (create_session starts one)\n")
		return nil
	}
	panes, err := tc.ListPanes(ctx, "", "")
	if err != nil {
		return err
	}
	windows := map[string]bool{}
	for _, p := range panes {
		windows[p.WindowID] = true
	}
	fmt.Fprintf(w, "server:      running: %d sessions, %d windows, %d panes\n", len(sessions), len(windows), len(panes))
	inside := "no"
	if os.Getenv("TMUX") != "" {
		inside = "$TMUX is set"
	}
	if id := srv.CallerPane(ctx); id != "" {
		inside = "yes, in pane " + id
	}
	fmt.Fprintf(w, "inside it:   %s\n", inside)
	start := time.Now()
	_, err = tc.Run(ctx, "display-message", "-p", "ok")
	if err == nil && !tc.ControlConnected() {
		// The command ran, as a separate process: tmux would not attach
		// the control client.
		err = errors.New("tmux did not attach the control client")
	}
	if err != nil {
		fmt.Fprintf(w, "control:     not working (%v); commands fall back to separate tmux processes\n", err)
		return fmt.Errorf("the control connection is not working: %w", err)
	}
	fmt.Fprintf(w, "control:     working (a command took %v)\n", time.Since(start).Round(time.Microsecond))
	return nil
}
