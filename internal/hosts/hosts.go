// Package hosts is the set of tmux servers tmcp talks to: the local one it
// was started with, and the remote hosts the operator named on the command
// line, each reached over OpenSSH with only `tmux -C` running on the far
// side. A caller asks for a server by its configured name and gets a
// tmux.Client; it never builds a connection, and nothing a model sends
// becomes part of an ssh command line.
package hosts

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tmcp/tmcp/internal/tmux"
)

// Defaults of the ssh options every remote connection uses.
const (
	// DefaultConnectTimeout bounds ssh's TCP connect and handshake.
	DefaultConnectTimeout = 5 * time.Second
	// DefaultAliveInterval is how often ssh probes a quiet connection;
	// after DefaultAliveCountMax unanswered probes it gives up, so a dead
	// network ends a connection in about 15 s rather than never.
	DefaultAliveInterval = 5 * time.Second
	DefaultAliveCountMax = 3
	// DefaultPersist is how long the shared master connection outlives its
	// last user, so the next call costs no handshake.
	DefaultPersist = 60 * time.Second
	// exitTimeout bounds `ssh -O exit` when the set closes.
	exitTimeout = 2 * time.Second
	// maxControlDirLen keeps the ControlPath (dir + "/" + 40 hex digits)
	// under the 108 bytes of a Unix socket address.
	maxControlDirLen = 60
)

// namePattern is what a host name may look like: it is matched against
// what the model sends, and never reaches ssh.
var namePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,31}$`)

// Host is one remote tmux server, as the operator configured it.
type Host struct {
	Name        string // what the model calls it, such as "build"
	Destination string // anything ssh accepts: user@box, an alias from an ssh config
	Binary      string // the remote tmux executable; "tmux" if empty
	SocketPath  string // remote -S, if set
	SocketName  string // remote -L, if set (SocketPath wins)
}

// Parse reads a host from the command line's NAME=DESTINATION, optionally
// followed by comma-separated settings: socket=PATH (-S on the far side),
// socket-name=NAME (-L) and binary=PATH (the remote tmux).
//
//	build=me@buildbox
//	gpu=gpu-alias,socket=/tmp/tmux-1000/work,binary=/opt/bin/tmux
func Parse(spec string) (Host, error) {
	name, rest, ok := strings.Cut(spec, "=")
	if !ok {
		return Host{}, fmt.Errorf("host %q: want NAME=DESTINATION[,socket=PATH][,socket-name=NAME][,binary=PATH]", spec)
	}
	fields := strings.Split(rest, ",")
	h := Host{Name: name, Destination: fields[0]}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "socket":
			h.SocketPath = v
		case "socket-name":
			h.SocketName = v
		case "binary":
			h.Binary = v
		default:
			return Host{}, fmt.Errorf("host %q: unknown setting %q (want socket, socket-name or binary)", name, k)
		}
		if v == "" {
			return Host{}, fmt.Errorf("host %q: %s is empty", name, k)
		}
	}
	return h, h.check()
}

// check refuses a host that could not be named safely or that would put
// an option where ssh expects its destination.
func (h Host) check() error {
	if err := CheckName(h.Name); err != nil {
		return err
	}
	d := h.Destination
	switch {
	case d == "":
		return fmt.Errorf("host %q: the destination is empty", h.Name)
	case strings.HasPrefix(d, "-"):
		return fmt.Errorf("host %q: the destination %q starts with '-', which ssh would take for an option", h.Name, d)
	case strings.IndexFunc(d, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return fmt.Errorf("host %q: the destination %q holds a space or a control character", h.Name, d)
	}
	for _, v := range []string{h.Binary, h.SocketPath, h.SocketName} {
		if strings.ContainsAny(v, "\x00\n\r") {
			return fmt.Errorf("host %q: a setting holds a NUL or a line break", h.Name)
		}
	}
	return nil
}

// CheckName says whether name can name a host: a letter, then up to 31
// letters, digits, '-' or '_'. "local" is the local server's.
func CheckName(name string) error {
	if !namePattern.MatchString(name) || name == "local" {
		return fmt.Errorf("host name %q: want a letter then up to 31 letters, digits, - or _ (not \"local\")", name)
	}
	return nil
}

// SSH is how the set runs ssh. Zero fields take the defaults above.
type SSH struct {
	Binary         string // the ssh executable; "ssh" if empty
	ConfigFile     string // -F FILE, if set: the ssh config in place of ~/.ssh/config
	ConnectTimeout time.Duration
	AliveInterval  time.Duration
	AliveCountMax  int
	Persist        time.Duration
}

// Set is the set of tmux servers tmcp talks to. Remote clients are made
// on first use and made again after a failed connect; a client whose
// connection drops reconnects by itself on its next command. A Set is safe
// for concurrent use.
type Set struct {
	local *tmux.Client
	hosts map[string]Host
	names []string
	ssh   SSH
	dir   string // private (0700) directory of the ssh control sockets

	mu      sync.Mutex
	clients map[string]*tmux.Client
	tokens  map[string]chan struct{} // one connect at a time per host
	closed  bool
}

// New returns the set of local and the given remote hosts. Unless it
// fails, the caller must call Close, which also stops the shared ssh
// connections.
func New(local *tmux.Client, hosts []Host, ssh SSH) (*Set, error) {
	s := &Set{local: local, hosts: map[string]Host{}, ssh: ssh, clients: map[string]*tmux.Client{},
		tokens: map[string]chan struct{}{}}
	for _, h := range hosts {
		if err := h.check(); err != nil {
			return nil, err
		}
		if _, dup := s.hosts[h.Name]; dup {
			return nil, fmt.Errorf("host %q is configured twice", h.Name)
		}
		s.hosts[h.Name] = h
		s.names = append(s.names, h.Name)
		s.tokens[h.Name] = make(chan struct{}, 1)
	}
	slices.Sort(s.names)
	if len(hosts) > 0 {
		base := os.TempDir()
		if len(base) > maxControlDirLen-len("/tmcp-ssh-0000000000") {
			base = "/tmp"
		}
		dir, err := os.MkdirTemp(base, "tmcp-ssh-")
		if err != nil {
			return nil, fmt.Errorf("making the ssh control directory: %w", err)
		}
		s.dir = dir
	}
	return s, nil
}

// Local returns the local tmux server's client.
func (s *Set) Local() *tmux.Client { return s.local }

// Names returns the configured remote host names, sorted.
func (s *Set) Names() []string { return s.names }

// Host returns the configuration of the remote host name.
func (s *Set) Host(name string) (Host, bool) {
	h, ok := s.hosts[name]
	return h, ok
}

// Client returns the client of the server name: the local one for "" or
// "local", else the configured remote host, connecting over ssh first if
// it has no client yet. The connect is bounded by ctx.
func (s *Set) Client(ctx context.Context, name string) (*tmux.Client, error) {
	if name == "" || name == "local" {
		return s.local, nil
	}
	h, ok := s.hosts[name]
	if !ok {
		return nil, fmt.Errorf("host %q is not configured (configured: %s)", name, s.list())
	}
	select {
	case s.tokens[name] <- struct{}{}:
		defer func() { <-s.tokens[name] }()
	case <-ctx.Done():
		return nil, fmt.Errorf("host %s (%s): no connection in time: %w", name, h.Destination, ctx.Err())
	}
	s.mu.Lock()
	c, closed := s.clients[name], s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return nil, fmt.Errorf("host %s: tmcp is shutting down", name)
	case c != nil:
		return c, nil
	}
	c, err := tmux.New(ctx, tmux.Options{Binary: h.Binary, SocketPath: h.SocketPath, SocketName: h.SocketName,
		Prefix: s.Prefix(h)})
	if err != nil {
		return nil, fmt.Errorf("host %s (%s) is unreachable or has no working tmux: %w", name, h.Destination, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		return nil, fmt.Errorf("host %s: tmcp is shutting down", name)
	}
	s.clients[name] = c
	return c, nil
}

// Connected returns the clients of the remote hosts connected so far.
func (s *Set) Connected() map[string]*tmux.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]*tmux.Client, len(s.clients))
	for k, v := range s.clients {
		m[k] = v
	}
	return m
}

func (s *Set) list() string {
	if len(s.names) == 0 {
		return "none; the operator adds them with --host NAME=DESTINATION"
	}
	return strings.Join(s.names, ", ")
}

// Prefix returns the ssh argv that runs a command on h: batch mode (never
// a prompt), bounded connect, keep-alives, and one shared master
// connection per destination in the set's private directory. Host-key
// checking stays as the user's ssh configuration has it.
func (s *Set) Prefix(h Host) []string {
	return append(s.sshBase(), "-T", "--", h.Destination)
}

func (s *Set) sshBase() []string {
	o := s.ssh
	bin := o.Binary
	if bin == "" {
		bin = "ssh"
	}
	secs := func(d, def time.Duration) string {
		if d <= 0 {
			d = def
		}
		return strconv.Itoa(max(1, int(d.Round(time.Second)/time.Second)))
	}
	count := o.AliveCountMax
	if count <= 0 {
		count = DefaultAliveCountMax
	}
	v := []string{bin}
	if o.ConfigFile != "" {
		v = append(v, "-F", o.ConfigFile)
	}
	return append(v,
		"-o", "BatchMode=yes",
		"-o", "ConnectTimeout="+secs(o.ConnectTimeout, DefaultConnectTimeout),
		"-o", "ServerAliveInterval="+secs(o.AliveInterval, DefaultAliveInterval),
		"-o", "ServerAliveCountMax="+strconv.Itoa(count),
		"-o", "ControlMaster=auto",
		"-o", "ControlPath="+filepath.Join(s.dir, "%C"),
		"-o", "ControlPersist="+secs(o.Persist, DefaultPersist))
}

// Close closes every remote client, stops the shared ssh connections and
// removes their directory. Later calls of Client fail.
func (s *Set) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	clients := s.clients
	s.clients = map[string]*tmux.Client{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for name, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Close()
			s.exitMaster(s.hosts[name])
		}()
	}
	wg.Wait()
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// exitMaster asks h's shared master connection, if any, to exit.
func (s *Set) exitMaster(h Host) {
	ctx, cancel := context.WithTimeout(context.Background(), exitTimeout)
	defer cancel()
	v := append(s.sshBase(), "-O", "exit", "--", h.Destination)
	cmd := exec.CommandContext(ctx, v[0], v[1:]...)
	cmd.WaitDelay = exitTimeout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	_ = cmd.Run()
}
