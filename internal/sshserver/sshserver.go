// Package sshserver starts a private OpenSSH server on a free loopback
// port, for tests and benchmarks of remote hosts: its own throwaway host
// and client keys, configuration and authorized_keys in its own directory,
// and an ssh client configuration that reaches it under an alias with
// host-key checking on. Close stops it by pid and removes the directory.
//
// Sessions run with HOME set to the server's directory: the far side's
// login shell then reads none of this machine's start-up files (a bash
// ~/.bashrc that takes a second would otherwise be paid by every ssh
// session), as on a host with a plain shell set-up.
package sshserver

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tmcp/tmcp/internal/syncbuf"
)

const (
	// Sshd is where Debian's openssh-server puts sshd, which must be
	// started by its absolute path.
	Sshd = "/usr/sbin/sshd"
	// privsepDir must exist for sshd to start as root.
	privsepDir = "/run/sshd"
	// startTimeout bounds key generation and the wait for sshd to listen.
	startTimeout = 10 * time.Second
	// stopGrace is how long sshd may take to exit after SIGTERM.
	stopGrace = 2 * time.Second
)

// Aliases in the client configuration (ConfigFile).
const (
	// Alias reaches the server.
	Alias = "tmcp-sshd"
	// DownAlias names a loopback port nothing listens on: a host that
	// refuses connections.
	DownAlias = "tmcp-sshd-down"
)

// Server is a running private sshd.
type Server struct {
	Dir        string // holds keys, configurations, known_hosts and the pid file
	Port       int    // the loopback port sshd listens on
	ConfigFile string // an ssh client configuration (ssh -F) defining Alias and DownAlias

	pid    int           // the listening sshd, once started
	exited chan struct{} // closed once sshd has exited and been reaped
	downFD int           // a socket bound to DownAlias's port and never listening; -1 when none
}

// Start starts a private sshd. Unless it fails, the caller must call Close.
func Start(ctx context.Context) (*Server, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if _, err := os.Stat(Sshd); err != nil {
		return nil, fmt.Errorf("sshd is not installed (scripts/install-deps.sh installs openssh-server): %w", err)
	}
	if err := os.MkdirAll(privsepDir, 0o755); err != nil {
		return nil, fmt.Errorf("making sshd's privilege separation directory: %w", err)
	}
	dir, err := os.MkdirTemp("", "tmcp-sshd-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, ConfigFile: filepath.Join(dir, "ssh_config"), downFD: -1}
	if err := s.start(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) path(name string) string { return filepath.Join(s.Dir, name) }

func (s *Server) start(ctx context.Context) error {
	for _, key := range []string{"host_key", "client_key"} {
		out, err := exec.CommandContext(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "tmcp-test", "-f", s.path(key)).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ssh-keygen %s: %w: %s", key, err, out)
		}
	}
	hostPub, err := os.ReadFile(s.path("host_key.pub"))
	if err != nil {
		return err
	}
	clientPub, err := os.ReadFile(s.path("client_key.pub"))
	if err != nil {
		return err
	}
	// The refusing port first: held for the server's life, neither
	// freePort below nor any other process can be handed it.
	down, err := s.holdRefusingPort()
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Port = port
	me, err := user.Current()
	if err != nil {
		return err
	}
	files := map[string]string{
		"authorized_keys": `environment="HOME=` + s.Dir + `" ` + string(clientPub),
		"known_hosts":     fmt.Sprintf("[127.0.0.1]:%d %s", port, hostPub),
		"sshd_config": strings.Join([]string{
			"Port " + strconv.Itoa(port),
			"ListenAddress 127.0.0.1",
			"HostKey " + s.path("host_key"),
			"PidFile " + s.path("sshd.pid"),
			"AuthorizedKeysFile " + s.path("authorized_keys"),
			"PasswordAuthentication no",
			"KbdInteractiveAuthentication no",
			"PubkeyAuthentication yes",
			"PermitRootLogin prohibit-password",
			"UsePAM no",
			"StrictModes no",
			"PermitUserEnvironment yes",
			"UseDNS no",
			"MaxSessions 100",
			"MaxStartups 100",
			"LogLevel ERROR",
			"",
		}, "\n"),
		"ssh_config": s.hostBlock(Alias, port, me.Username) + "  LogLevel ERROR\n" +
			s.hostBlock(DownAlias, down, me.Username),
	}
	for name, text := range files {
		if err := os.WriteFile(s.path(name), []byte(text), 0o600); err != nil {
			return err
		}
	}
	cmd := exec.Command(Sshd, "-D", "-e", "-f", s.path("sshd_config"))
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	// Its own process group, so Close can end the sessions it forked too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting sshd: %w", err)
	}
	s.pid, s.exited = cmd.Process.Pid, make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(s.exited) }()
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("sshd exited: %v: %s", waitErr, strings.TrimSpace(stderr.String()))
		case <-ctx.Done():
			return fmt.Errorf("sshd did not listen on port %d: %w", port, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// freePort returns a loopback port nothing listened on a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// holdRefusingPort binds a loopback TCP socket without listening on it
// and keeps it until Close: a connection to its port is refused for as
// long as the server runs. A port merely found free could be handed to
// another test's sshd meanwhile, which then answers for the down host.
func (s *Server) holdRefusingPort() (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("making the refusing port's socket: %w", err)
	}
	s.downFD = fd
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return 0, fmt.Errorf("binding the refusing port: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return 0, fmt.Errorf("reading the refusing port: %w", err)
	}
	return sa.(*syscall.SockaddrInet4).Port, nil
}

// hostBlock is the ssh configuration of one name for 127.0.0.1:port.
func (s *Server) hostBlock(alias string, port int, user string) string {
	return strings.Join([]string{
		"Host " + alias,
		"  HostName 127.0.0.1",
		"  Port " + strconv.Itoa(port),
		"  User " + user,
		"  IdentityFile " + s.path("client_key"),
		"  IdentitiesOnly yes",
		"  UserKnownHostsFile " + s.path("known_hosts"),
		"  GlobalKnownHostsFile /dev/null",
		"  StrictHostKeyChecking yes",
		"",
	}, "\n")
}

// SSH returns an ssh command line that runs args on the server through
// Alias, with a fresh connection (no sharing): the floor a tool call over
// one ssh process per call cannot beat.
func (s *Server) SSH(args ...string) []string {
	return append([]string{"ssh", "-F", s.ConfigFile, "-T", "-o", "BatchMode=yes", "-o", "ControlMaster=no", "-o", "ControlPath=none", "--", Alias}, args...)
}

// Close stops sshd and the sessions it forked, by its process group, and
// removes its directory. It may be called more than once, and on nil.
func (s *Server) Close() {
	if s == nil {
		return
	}
	if s.pid > 0 {
		_ = syscall.Kill(-s.pid, syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(stopGrace):
		}
		// The sessions it forked, in its group, and sshd itself if it lingers.
		_ = syscall.Kill(-s.pid, syscall.SIGKILL)
		<-s.exited
		s.pid = 0
	}
	if s.downFD >= 0 {
		syscall.Close(s.downFD)
		s.downFD = -1
	}
	os.RemoveAll(s.Dir)
}

// KillClients kills, by pid, every ssh client process whose command line
// holds all of words, as a network failure would end them, and returns
// their pids.
func KillClients(words ...string) []int {
	entries, _ := os.ReadDir("/proc")
	var killed []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(raw) == 0 {
			continue
		}
		argv := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
		if filepath.Base(argv[0]) != "ssh" {
			continue
		}
		line := strings.Join(argv, " ")
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all && syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	return killed
}
