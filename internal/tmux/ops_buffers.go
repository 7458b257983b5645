package tmux

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The buffers Paste makes and deletes again are named privateBufferPrefix
// and privateBufferRandom random bytes in hex; listings leave them out.
const (
	privateBufferPrefix = "tmcp-"
	privateBufferRandom = 6
)

// Buffer is one tmux paste buffer.
type Buffer struct {
	Name string
	Size int // bytes
}

var bufferVars = []string{"buffer_name", "buffer_size"}

// ListBuffers lists the paste buffers, most recent first, leaving out the
// private ones Paste is using. With no server running it returns none.
func (c *Client) ListBuffers(ctx context.Context) ([]Buffer, error) {
	all, err := list(ctx, c, []string{"list-buffers"}, bufferVars, func(r *fields) Buffer {
		return Buffer{Name: r.str(), Size: r.num()}
	})
	if IsNoServer(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, b := range all {
		if !isPrivateBuffer(b.Name) {
			out = append(out, b)
		}
	}
	return out, nil
}

// isPrivateBuffer reports whether name is one of Paste's own buffers.
func isPrivateBuffer(name string) bool {
	hex, ok := strings.CutPrefix(name, privateBufferPrefix)
	if !ok || len(hex) != 2*privateBufferRandom {
		return false
	}
	for _, r := range hex {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// SetBuffer puts text into the buffer called name, made if needed, as the
// most recent buffer; an empty name lets tmux name a new one.
func (c *Client) SetBuffer(ctx context.Context, name, text string) error {
	args := []string{"set-buffer"}
	if name != "" {
		args = append(args, "-b", name)
	}
	_, err := c.Run(ctx, append(args, "--", text)...)
	return err
}

// PasteBuffer pastes the buffer called name into a pane, deleting the
// buffer afterwards with del. With bracketed, programs that asked for
// bracketed paste receive it as a paste, not as typing.
func (c *Client) PasteBuffer(ctx context.Context, name, pane string, bracketed, del bool) error {
	args := []string{"paste-buffer", "-b", name, "-t", pane}
	if del {
		args = append(args, "-d")
	}
	if bracketed {
		args = append(args, "-p")
	}
	_, err := c.Run(ctx, args...)
	return err
}

// ShowBuffer returns the exact content of the buffer called name, whose
// size is known from ListBuffers. It runs as a separate process: a
// control client receives the content escaped, and a process the bytes.
func (c *Client) ShowBuffer(ctx context.Context, name string, size int) (string, error) {
	lines, err := c.RunProcess(ctx, "show-buffer", "-b", name)
	if err != nil {
		return "", err
	}
	text := strings.Join(lines, "\n")
	if len(text) < size {
		// The output's last newline was taken as the end of its last line.
		text += "\n"
	}
	return text, nil
}

// DeleteBuffer deletes the buffer called name.
func (c *Client) DeleteBuffer(ctx context.Context, name string) error {
	_, err := c.Run(ctx, "delete-buffer", "-b", name)
	return err
}

// ProbeServer asks the tmux server on socket how many sessions it has,
// within timeout, as a separate process started by this client's
// launcher. A socket with no server behind it gives an error for which
// IsNoServer holds; a server that does not answer gives ErrNoAnswer. An
// empty socket probes the client's own server.
func (c *Client) ProbeServer(ctx context.Context, socket string, timeout time.Duration) (int, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	ctx, cancelProbe := context.WithTimeout(ctx, timeout)
	defer cancelProbe()
	l := &Launcher{Prefix: c.launcher.Prefix, Binary: c.launcher.Binary, SocketPath: socket}
	if socket == "" {
		l.SocketPath, l.SocketName = c.launcher.SocketPath, c.launcher.SocketName
	}
	out, err := l.run(ctx, "list-sessions", "-F", "#{session_id}")
	c.launcher.started.Add(l.Started())
	switch {
	case err != nil && ctx.Err() != nil:
		return 0, fmt.Errorf("probing %s: %w", socket, ErrNoAnswer)
	case err != nil && strings.Contains(err.Error(), "no sessions"):
		return 0, nil
	case err != nil:
		return 0, err
	}
	return len(out), nil
}
