package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmux"
)

const (
	// manyPanes is how many panes the server holds while list_panes is
	// timed over all of them; listManyTarget bounds its median, in ms.
	manyPanes      = 1000
	listManyTarget = 20
	// manySessions share the extra panes, one window each; their panes
	// run manyCommand, which costs the machine next to nothing.
	manySessions = 10
	manyCommand  = "sleep 1000000"
	// manyTimeout bounds making one session's panes, or removing them
	// all: tmux takes 40-60 ms to start a pane on a busy 2-core machine.
	manyTimeout = 60 * time.Second
)

// listMany times list_panes over manyPanes panes, from the call to the
// moment the client's transport reads the reply, beside bare
// `tmux list-panes -a` processes, then removes the panes it made.
func (b *bench) listMany(ctx context.Context) error {
	made, err := b.addPanes(ctx)
	defer func() {
		if len(made) > 0 {
			b.removeSessions(made)
		}
	}()
	if err != nil {
		return err
	}
	// The floors: tmux's default listing, and the one tmcp asks for, whose
	// fields (a pane's command and path among them) cost tmux more.
	listed := func(args ...string) func(context.Context) error {
		return func(ctx context.Context) error {
			out, err := runProcess(ctx, b.srv, args...)
			if n := strings.Count(out, "\n"); err == nil && n != manyPanes {
				err = fmt.Errorf("tmux %s listed %d panes, want %d", strings.Join(args[:2], " "), n, manyPanes)
			}
			return err
		}
	}
	bare, err := sample(ctx, b.cfg.warmups, b.cfg.n, timed(listed("list-panes", "-a")))
	if err != nil {
		return fmt.Errorf("list-panes -a floor: %w", err)
	}
	formatted, err := sample(ctx, b.cfg.warmups, b.cfg.n, timed(listed("list-panes", "-a", "-F", tmux.BriefPaneListFormat())))
	if err != nil {
		return fmt.Errorf("list-panes -a -F floor: %w", err)
	}
	check := func(r *mcp.CallToolResult) error {
		var out struct {
			Panes []json.RawMessage `json:"panes"`
			Total int               `json:"total"`
		}
		raw, _ := json.Marshal(r.StructuredContent)
		if err := json.Unmarshal(raw, &out); err != nil || len(out.Panes) != manyPanes || out.Total != manyPanes {
			return fmt.Errorf("list_panes returned %d of %d panes, want %d (%v)", len(out.Panes), out.Total, manyPanes, err)
		}
		return nil
	}
	// Timed to when the client's transport reads the reply, as the
	// reactions are: the SDK's client then decodes half a megabyte and
	// checks it against the output schema, on the same two cores.
	call := func(ctx context.Context) (time.Duration, error) {
		start := time.Now()
		wait, _ := b.tmcp.callAsync(ctx, "list_panes", nil)
		a := wait()
		if a.err != nil {
			return 0, a.err
		}
		return a.at.Sub(start), check(a.r)
	}
	// tmcp's CPU over the calls, warm-ups included, is what reading tmux's
	// listing and encoding and checking the reply cost it, beside tmux's time.
	before, err := cpuTicks([]int{b.tmcp.pid()})
	if err != nil {
		return err
	}
	tm, err := sample(ctx, b.cfg.warmups, b.cfg.n, call)
	if err != nil {
		return fmt.Errorf("tmcp list_panes: %w", err)
	}
	after, err := cpuTicks([]int{b.tmcp.pid()})
	if err != nil {
		return err
	}
	cpuMs := float64(after-before) * 1000 / clockTicks / float64(b.cfg.warmups+b.cfg.n)
	target := fmt.Sprintf("≤ %d ms", listManyTarget)
	r := durationRow(rowListMany, unitMs, tm, &bare)
	b.put(r.withTarget(target, r.TmcpMedian <= listManyTarget))
	r = durationRow(rowListManyFormat, unitMs, tm, &formatted)
	b.put(r.withTarget(target, r.TmcpMedian <= listManyTarget))
	b.put(valueRow(rowListManyCPU, unitCPUMs, b.cfg.warmups+b.cfg.n, cpuMs, nil))
	return nil
}

// addPanes brings the server to manyPanes panes with new sessions of
// windows running manyCommand, each session made by one tmux process, and
// returns the sessions it made.
func (b *bench) addPanes(ctx context.Context) ([]string, error) {
	out, err := b.srv.Run(ctx, "list-panes", "-a", "-F", "#{pane_id}")
	if err != nil {
		return nil, err
	}
	missing := manyPanes - strings.Count(out, "\n")
	var made []string
	for i := 0; missing > 0; i++ {
		name := "many-" + strconv.Itoa(i)
		n := min(missing, (manyPanes+manySessions-1)/manySessions)
		args := []string{"new-session", "-d", "-s", name, manyCommand}
		for range n - 1 {
			args = append(args, ";", "new-window", "-d", "-t", name+":", manyCommand)
		}
		sctx, cancel := context.WithTimeout(ctx, manyTimeout)
		_, err := runProcess(sctx, b.srv, args...)
		cancel()
		if err != nil {
			// %.200w: the error quotes the whole command line, a hundred commands long.
			return made, fmt.Errorf("making %d panes in session %s: %.200w", n, name, err)
		}
		made = append(made, name)
		missing -= n
	}
	return made, nil
}

// removeSessions kills the sessions addPanes made, and their panes.
func (b *bench) removeSessions(names []string) {
	ctx, cancel := context.WithTimeout(context.Background(), manyTimeout)
	defer cancel()
	var args []string
	for _, name := range names {
		if len(args) > 0 {
			args = append(args, ";")
		}
		args = append(args, "kill-session", "-t", "="+name)
	}
	_, _ = runProcess(ctx, b.srv, args...)
}
