// Command tmcp is a Model Context Protocol server that lets AI agents
// drive tmux: list, read, type into, create and kill sessions, windows and
// panes of one tmux server, over stdio or streamable HTTP.
//
// Usage:
//
//	tmcp [-socket-name NAME | -socket-path PATH] [-binary PATH] [--record DIR [--record-max-bytes N]] [--state-dir DIR]
//	     [--host NAME=DESTINATION[,socket=PATH][,socket-name=NAME][,binary=PATH]]… [--ssh-config FILE]
//	tmcp --http ADDR [--token-file FILE] [HTTP flags]
//	tmcp -tools | -doctor | -version | -demo
//	tmcp init bash | zsh | fish
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/tmcp/tmcp/internal/agents"
	"github.com/tmcp/tmcp/internal/hosts"
	"github.com/tmcp/tmcp/internal/mcpserver"
	"github.com/tmcp/tmcp/internal/record"
	"github.com/tmcp/tmcp/internal/shellinit"
	"github.com/tmcp/tmcp/internal/stdio"
	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/wait"
)

// version is tmcp's version, set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	stdin, restoreStdin := stdio.Pollable(os.Stdin)
	stdout, restoreStdout := stdio.Pollable(os.Stdout)
	err := run(os.Args[1:], stdin, stdout, os.Stderr)
	restoreStdin()
	restoreStdout()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tmcp:", err)
		os.Exit(1)
	}
}

// options are tmcp's command line.
type options struct {
	socketName, socketPath, binary string
	tools, doctor, version, demo   bool
	initShell                      string // "tmcp init SHELL": print SHELL's integration snippet
	hosts                          []hosts.Host
	sshConfig                      string
	http                           httpOptions
	record                         record.Options
	stateDir                       string
	noShellIntegration             bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("tmcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.socketName, "socket-name", "", "tmux socket name (like tmux -L)")
	fs.StringVar(&o.socketPath, "socket-path", "", "tmux socket path (like tmux -S); wins over -socket-name")
	fs.StringVar(&o.binary, "binary", "tmux", "tmux executable, checked at start-up")
	fs.Func("host", "a remote tmux over ssh, NAME=DESTINATION[,socket=PATH][,socket-name=NAME][,binary=PATH]; repeatable", func(v string) error {
		h, err := hosts.Parse(v)
		o.hosts = append(o.hosts, h)
		return err
	})
	fs.StringVar(&o.sshConfig, "ssh-config", os.Getenv("TMCP_SSH_CONFIG"), "ssh configuration file for --host connections (ssh -F); default: ssh's own")
	fs.Func("record", "record every pane tmcp watches as asciicast files in `DIR` (asciinema play FILE)", func(v string) error {
		o.record.Dir, o.record.All = v, true
		return nil
	})
	fs.Int64Var(&o.record.MaxBytes, "record-max-bytes", record.DefaultMaxBytes, "bound on one recording file; past it the recording goes on in a new file")
	fs.StringVar(&o.stateDir, "state-dir", defaultStateDir(), "where jobs are kept for a tmcp started later (off: nowhere); default: TMCP_STATE_DIR, else $XDG_STATE_HOME/tmcp, else ~/.local/state/tmcp")
	fs.BoolVar(&o.noShellIntegration, "no-shell-integration", os.Getenv("TMCP_SHELL_INTEGRATION") == "off",
		"start the bash, zsh and fish shells of the panes tmcp makes as tmux would, without tmcp's integration loaded; default: TMCP_SHELL_INTEGRATION=off")
	fs.BoolVar(&o.tools, "tools", false, "print the tools a client is offered at the tier in force, and exit")
	fs.BoolVar(&o.doctor, "doctor", false, "check tmux, the socket and the control connection, and exit")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.BoolVar(&o.demo, "demo", false, "run a scripted agent session against a private tmux server, and exit")
	o.http.flags(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "tmcp %s: an MCP server (stdio, or HTTP with --http) for tmux\n\nUsage: tmcp [flags]\n       tmcp init SHELL   print the shell integration for SHELL (%s)\n\n", version, shellinit.Supported)
		fs.PrintDefaults()
		fmt.Fprintf(fs.Output(), "\nEnvironment:\n  TMCP_SAFETY            readonly | mutating (default) | destructive; anything else means readonly\n")
		fmt.Fprintf(fs.Output(), "  TMCP_WAIT_MAX_SECONDS  ceiling on every wait, 1 to 3600 (default 45)\n")
		fmt.Fprintf(fs.Output(), "  TMCP_AUDIT             stderr, or a file to append one JSON line per tool call to\n")
		fmt.Fprintf(fs.Output(), "  TMCP_AGENT_PROFILES    a JSON file of terminal agent profiles, over the built-in ones (docs/AGENTS.md)\n")
		fmt.Fprintf(fs.Output(), "  TMCP_PROMPTS_AS_TOOLS  1: also offer the prompts through the get_prompt tool\n")
		fmt.Fprintf(fs.Output(), "  TMCP_SHELL_INTEGRATION off: the default of -no-shell-integration\n")
		fmt.Fprintf(fs.Output(), "  TMCP_SSH_CONFIG        the default of -ssh-config\n")
		fmt.Fprintf(fs.Output(), "  TMCP_STATE_DIR         the default of -state-dir\n")
		fmt.Fprintf(fs.Output(), "  TMCP_TOKEN             with --http: a bearer token accepted at the tier TMCP_SAFETY sets\n")
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.Arg(0) == "init" {
		if fs.NArg() != 2 {
			return o, fmt.Errorf("usage: tmcp init SHELL, where SHELL is one of %s", shellinit.Supported)
		}
		o.initShell = fs.Arg(1)
		return o, nil
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return o, nil
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.version {
		fmt.Fprintf(stdout, "tmcp %s\n", version)
		return nil
	}
	if o.initShell != "" {
		script, err := shellinit.Script(o.initShell)
		if err != nil {
			return err
		}
		_, err = io.WriteString(stdout, script)
		return err
	}
	if o.demo {
		return runDemo(stdout)
	}
	if o.record.MaxBytes <= 0 {
		return fmt.Errorf("--record-max-bytes %d: want a positive number of bytes", o.record.MaxBytes)
	}
	if o.record.Dir != "" {
		if o.record.Dir, err = record.PrepareDir(o.record.Dir); err != nil {
			return fmt.Errorf("--record: %w", err)
		}
	}
	tier, recognised := mcpserver.ParseTier(os.Getenv("TMCP_SAFETY"))
	if !recognised {
		fmt.Fprintf(stderr, "tmcp: TMCP_SAFETY=%q is not readonly, mutating or destructive: using readonly\n", os.Getenv("TMCP_SAFETY"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tc, err := tmux.New(ctx, tmux.Options{Binary: o.binary, SocketName: o.socketName, SocketPath: o.socketPath})
	if err != nil {
		return err
	}
	defer tc.Close()
	set, err := hosts.New(tc, o.hosts, hosts.SSH{ConfigFile: o.sshConfig})
	if err != nil {
		return err
	}
	defer set.Close()
	ceiling, err := wait.ParseCeiling(os.Getenv("TMCP_WAIT_MAX_SECONDS"))
	if err != nil {
		return err
	}
	audit, closeAudit, err := openAudit(os.Getenv("TMCP_AUDIT"), stderr)
	if err != nil {
		return err
	}
	defer closeAudit()
	profiles, err := agents.Load(os.Getenv("TMCP_AGENT_PROFILES"))
	if err != nil {
		return fmt.Errorf("TMCP_AGENT_PROFILES: %w", err)
	}
	o.record.Errors = stderr
	cfg := mcpserver.Config{Tier: tier, Version: version, Ceiling: ceiling, Audit: audit,
		PromptsAsTools: os.Getenv("TMCP_PROMPTS_AS_TOOLS") == "1", OverHTTP: o.http.addr != "", Hosts: set, Record: o.record, Log: stderr,
		Profiles: profiles}
	if !o.tools && !o.doctor && o.stateDir != "off" {
		cfg.StateDir = o.stateDir
	}
	cfg.ShellIntegration = !o.tools && !o.doctor && !o.noShellIntegration
	srv := mcpserver.New(tc, cfg)
	defer srv.Close()
	if o.http.addr != "" && !o.tools && !o.doctor {
		go srv.Prepare(ctx)
		return serveHTTP(ctx, srv, o.http, tier, stderr)
	}
	// On a signal, end tmux work at once: calls in flight then return
	// promptly, and the server can stop without waiting out their deadlines.
	stopOnSignal := context.AfterFunc(ctx, func() {
		srv.Close()
		tc.Close()
		set.Close()
	})
	defer stopOnSignal()
	switch {
	case o.tools:
		return printTools(stdout, srv, tier, recognised)
	case o.doctor:
		return doctor(ctx, stdout, tc, set, srv, tier)
	}
	// tmux's command client attaches while the client initializes, not
	// during its first call.
	srv.StartPrepare(ctx)
	return serve(ctx, srv, stdin, stdout)
}

// defaultStateDir is where jobs are kept unless -state-dir says: the XDG
// state directory's tmcp folder.
func defaultStateDir() string {
	if dir := os.Getenv("TMCP_STATE_DIR"); dir != "" {
		return dir
	}
	if dir := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "tmcp")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "tmcp")
	}
	return "off"
}

// serve speaks MCP over stdin and stdout until EOF or a signal.
func serve(ctx context.Context, srv *mcpserver.Server, stdin io.Reader, stdout io.Writer) error {
	// The stdio transport answers any line a client writes instead of
	// ending the session, as the SDK's would.
	// Its read loop stamps each call the moment the call is read.
	transport := &stdio.Transport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}, Arrive: srv.Arrive}
	err := srv.MCPServer(ctx).Run(ctx, transport)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// openAudit opens where TMCP_AUDIT says audit lines go: "stderr", a file
// path (appended to), or nowhere when empty.
func openAudit(where string, stderr io.Writer) (io.Writer, func(), error) {
	switch where {
	case "":
		return nil, func() {}, nil
	case "stderr":
		return stderr, func() {}, nil
	}
	f, err := os.OpenFile(where, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the audit log TMCP_AUDIT=%q: %w", where, err)
	}
	return f, func() { f.Close() }, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// printTools lists the tools, offered or withheld at the tier in force.
func printTools(w io.Writer, srv *mcpserver.Server, tier mcpserver.Tier, recognised bool) error {
	note := ""
	if !recognised {
		note = " (TMCP_SAFETY was not recognised)"
	}
	fmt.Fprintf(w, "tier %s%s: %s\n\n", tier, note, tier.Offers())
	withheld := 0
	tools := srv.Tools()
	width := 0
	for _, t := range tools {
		width = max(width, len(t.Name))
	}
	for _, t := range tools {
		mark := "offered "
		if !t.Offered {
			mark = "withheld"
			withheld++
		}
		fmt.Fprintf(w, "%s  %-12s %-*s %s\n", mark, t.Tier, width, t.Name, t.Description)
	}
	if withheld > 0 {
		fmt.Fprintf(w, "\n%d tools withheld by tier %s; TMCP_SAFETY=destructive offers all.\n", withheld, tier)
	}
	return nil
}
