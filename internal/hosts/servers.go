package hosts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/tmcp/tmcp/internal/tmux"
)

// Server is one tmux server socket, as Servers found and probed it.
type Server struct {
	Path     string
	Sessions int
	Current  bool  // the server c itself addresses
	Err      error // why the probe failed: see tmux.ErrNoAnswer and tmux.IsNoServer
}

// Servers lists the tmux servers beside the one c addresses, each probed
// within probe, at most max of them (more reports the sockets left out).
// For a local client that is every socket in this user's tmux socket
// directory, and c's own; for a remote one only the server it was
// configured with, since only tmux runs on the far side and its socket
// directory cannot be read.
func Servers(ctx context.Context, c *tmux.Client, probe time.Duration, max int) (servers []Server, more int, err error) {
	current := c.SocketPath()
	if c.Remote() {
		n, err := c.ProbeServer(ctx, "", probe)
		return []Server{{Path: current, Sessions: n, Current: true, Err: err}}, 0, nil
	}
	paths, err := socketsIn(tmux.SocketDir())
	if err != nil {
		return nil, 0, err
	}
	if !slices.ContainsFunc(paths, func(p string) bool { return sameFile(p, current) }) {
		if _, err := os.Stat(current); err == nil {
			paths = append(paths, current)
		}
	}
	if len(paths) > max {
		more = len(paths) - max
		paths = paths[:max]
	}
	servers = make([]Server, len(paths))
	var wg sync.WaitGroup
	for i, path := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := c.ProbeServer(ctx, path, probe)
			servers[i] = Server{Path: path, Sessions: n, Current: sameFile(path, current), Err: err}
		}()
	}
	wg.Wait()
	return servers, more, nil
}

// socketsIn lists the sockets in dir, sorted; a missing dir holds none.
func socketsIn(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the tmux socket directory %s: %w", dir, err)
	}
	var paths []string
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(paths)
	return paths, nil
}

// SameFile reports whether two paths name one socket, however written.
func SameFile(a, b string) bool { return sameFile(a, b) }

func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
