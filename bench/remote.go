package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/sshserver"
)

// remoteHost is the name the remote rows give the benchmark's own tmux
// server, reached again through a private sshd on loopback: the same
// server locally and over ssh, so the rows differ by the transport alone.
const remoteHost = "far"

// Row labels of the remote group.
const (
	rowListRemote     = "list_sessions on a host over ssh (floor: one `ssh host tmux list-sessions` per call)"
	rowCaptureRemote  = "capture_pane 80x24 on a host over ssh (floor: one `ssh host tmux capture-pane -p` per call)"
	rowRunRemote      = "run_command true on a host over ssh (floor: run_command true, local)"
	rowReactionRemote = "wait_for_text reaction on a host over ssh, write → reply (floor: the same, local)"
)

// remote measures tmcp driving a host over ssh: list_sessions and
// capture_pane beside a fresh ssh process per call (what a server that
// shells out per call pays), and run_command and a wait's reaction beside
// the same tools locally.
func (b *bench) remote(ctx context.Context) error {
	sshd, err := sshserver.Start(ctx)
	if err != nil {
		return err
	}
	defer sshd.Close()
	p, err := b.startRemoteTmcp(ctx, sshd)
	if err != nil {
		return err
	}
	defer p.close()
	far := func(id string) string { return remoteHost + ":" + id }

	sshOnce := func(args ...string) func(context.Context) (time.Duration, error) {
		argv := sshd.SSH(append([]string{"tmux", "-u", "-S", b.srv.Socket}, args...)...)
		return func(ctx context.Context) (time.Duration, error) {
			start := time.Now()
			out, err := childCommand(ctx, b.srv.Env(), argv[0], argv[1:]...).CombinedOutput()
			d := time.Since(start)
			if err != nil {
				return d, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, out)
			}
			return d, nil
		}
	}
	floorList, err := sample(ctx, b.cfg.warmups, b.cfg.n, sshOnce("list-sessions"))
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	list, err := sample(ctx, b.cfg.warmups, b.cfg.n, p.callOnce("list_sessions", map[string]any{"host": remoteHost}, func(r *mcp.CallToolResult) error {
		if !strings.Contains(resultText(r), `"sessionName":"`+remoteHost+":"+sessionName+`"`) {
			return fmt.Errorf("list_sessions on %s lacks session %q: %s", remoteHost, sessionName, resultText(r))
		}
		return nil
	}))
	if err != nil {
		return fmt.Errorf("tmcp list_sessions over ssh: %w", err)
	}
	b.put(durationRow(rowListRemote, unitMs, list, &floorList))

	floorCapture, err := sample(ctx, b.cfg.warmups, b.cfg.n, sshOnce("capture-pane", "-p", "-t", b.srv.pane))
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	capture, err := sample(ctx, b.cfg.warmups, b.cfg.n, p.callOnce("capture_pane", map[string]any{"paneId": far(b.srv.pane)}, func(r *mcp.CallToolResult) error {
		if !strings.Contains(resultText(r), lastRow()) {
			return fmt.Errorf("capture_pane of %s lacks %q", far(b.srv.pane), lastRow())
		}
		return nil
	}))
	if err != nil {
		return fmt.Errorf("tmcp capture_pane over ssh: %w", err)
	}
	b.put(durationRow(rowCaptureRemote, unitMs, capture, &floorCapture))

	n := max(1, b.cfg.n/heavyShare)
	runTrue := func(p *tmcpProcess, pane string) func(context.Context) (time.Duration, error) {
		return p.callOnce("run_command", map[string]any{"paneId": pane, "command": "true"}, func(r *mcp.CallToolResult) error {
			var j jobReply
			if err := decode(r, &j); err != nil {
				return err
			}
			if !j.Finished || j.ExitStatus == nil || *j.ExitStatus != 0 {
				return fmt.Errorf("run_command true in %s did not finish with status 0: %s", pane, resultText(r))
			}
			return nil
		})
	}
	localRun, err := b.srv.newSession(ctx, "run-local")
	if err != nil {
		return err
	}
	remoteRun, err := b.srv.newSession(ctx, "run-remote")
	if err != nil {
		return err
	}
	floorRun, err := sample(ctx, b.cfg.warmups, n, runTrue(b.tmcp, localRun.id))
	if err != nil {
		return fmt.Errorf("local run_command: %w", err)
	}
	run, err := sample(ctx, b.cfg.warmups, n, runTrue(p, far(remoteRun.id)))
	if err != nil {
		return fmt.Errorf("run_command over ssh: %w", err)
	}
	b.put(durationRow(rowRunRemote, unitMs, run, &floorRun))

	floorReact, err := b.reactionOn(ctx, b.tmcp, "react-local", "")
	if err != nil {
		return fmt.Errorf("local wait_for_text: %w", err)
	}
	react, err := b.reactionOn(ctx, p, "react-remote", remoteHost)
	if err != nil {
		return fmt.Errorf("wait_for_text over ssh: %w", err)
	}
	b.put(durationRow(rowReactionRemote, unitMs, react, &floorReact))
	return nil
}

// reactionOn times wait_for_text's reaction on a new session's pane,
// through p, naming the pane with host's prefix when host is not empty.
func (b *bench) reactionOn(ctx context.Context, p *tmcpProcess, session, host string) (summary, error) {
	tp, err := b.srv.newSession(ctx, session)
	if err != nil {
		return summary{}, err
	}
	tty, err := openTTY(tp)
	if err != nil {
		return summary{}, err
	}
	defer tty.Close()
	if host != "" {
		tp.id = host + ":" + tp.id
	}
	return b.reactionSample(ctx, p, tp, tty)
}

// startRemoteTmcp starts tmcp with the benchmark's server configured a
// second time as the remote host remoteHost, through sshd.
func (b *bench) startRemoteTmcp(ctx context.Context, sshd *sshserver.Server) (*tmcpProcess, error) {
	p := &tmcpProcess{cmd: childCommand(ctx, b.srv.Env(), b.bin, "-socket-path", b.srv.Socket,
		"-ssh-config", sshd.ConfigFile, "-host", remoteHost+"="+sshserver.Alias+",socket="+b.srv.Socket), stderr: new(bytes.Buffer)}
	p.cmd.Stderr = p.stderr
	session, err := newClient().Connect(ctx, arrivalTransport{Transport: &mcp.CommandTransport{Command: p.cmd, TerminateDuration: tmcpTerminate}}, nil)
	if err != nil {
		return nil, fmt.Errorf("starting %s with a remote host: %w", b.bin, err)
	}
	p.session = session
	return p, nil
}
