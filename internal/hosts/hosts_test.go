package hosts_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/hosts"
	"github.com/tmcp/tmcp/internal/sshserver"
	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

func TestParseReadsADestinationAndItsSettings(t *testing.T) {
	tests := []struct {
		spec string
		want hosts.Host
	}{
		{"build=me@box", hosts.Host{Name: "build", Destination: "me@box"}},
		{"gpu=alias,socket=/tmp/s,binary=/opt/tmux", hosts.Host{Name: "gpu", Destination: "alias", SocketPath: "/tmp/s", Binary: "/opt/tmux"}},
		{"b_2=h,socket-name=work", hosts.Host{Name: "b_2", Destination: "h", SocketName: "work"}},
	}
	for _, tt := range tests {
		got, err := hosts.Parse(tt.spec)
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.spec, got, err, tt.want)
		}
	}
}

func TestParseRefusesWhatCouldReachSshAsAnOption(t *testing.T) {
	for _, spec := range []string{
		"build",                        // no destination
		"build=",                       // empty destination
		"build=-oProxyCommand=evil",    // an option in the destination's place
		"build=a b",                    // a space
		"build=box\n-oX",               // a line break
		"9build=box",                   // a name not starting with a letter
		"local=box",                    // the local server's name
		"bu:ild=box",                   // a name holding the id separator
		"build=box,socket=",            // an empty setting
		"build=box,port=22",            // an unknown setting
		strings.Repeat("a", 33) + "=b", // a name too long
	} {
		if h, err := hosts.Parse(spec); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", spec, h)
		}
	}
}

func TestPrefixKeepsBatchModeSharingAndHostKeyChecking(t *testing.T) {
	set, err := hosts.New(nil, []hosts.Host{{Name: "b", Destination: "box"}}, hosts.SSH{ConfigFile: "/cfg"})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	h, _ := set.Host("b")
	got := strings.Join(set.Prefix(h), " ")
	for _, want := range []string{"ssh -F /cfg ", "-o BatchMode=yes", "-o ConnectTimeout=5", "-o ServerAliveInterval=5",
		"-o ServerAliveCountMax=3", "-o ControlMaster=auto", "-o ControlPersist=60", " -T -- box"} {
		if !strings.Contains(got, want) {
			t.Errorf("prefix %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "StrictHostKeyChecking") {
		t.Errorf("prefix %q changes host-key checking", got)
	}
	i := strings.Index(got, "ControlPath=")
	dir := filepath.Dir(strings.Fields(got[i+len("ControlPath="):])[0])
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("control directory %s: %v, %v; want a 0700 directory", dir, st, err)
	}
}

// remote starts a private sshd and a tmux server it reaches, and returns
// a set whose host "far" is that tmux server over ssh.
func remote(t *testing.T, extra ...hosts.Host) (*hosts.Set, *tmuxtest.Server) {
	t.Helper()
	tmuxtest.Skip(t)
	sshd, err := sshserver.Start(context.Background())
	if err != nil {
		t.Fatalf("starting sshd: %v", err)
	}
	t.Cleanup(sshd.Close)
	srv := tmuxtest.New(t)
	hs := append([]hosts.Host{{Name: "far", Destination: sshserver.Alias, SocketPath: srv.Socket}}, extra...)
	set, err := hosts.New(nil, hs, hosts.SSH{ConfigFile: sshd.ConfigFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(set.Close)
	return set, srv
}

func TestARemoteClientRunsCommandsOverSshWithTheirBytesIntact(t *testing.T) {
	set, srv := remote(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := set.Client(ctx, "far")
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	if again, _ := set.Client(ctx, "far"); again != c {
		t.Errorf("a second Client call made a new client")
	}
	sessions, err := c.ListSessions(ctx)
	if err != nil || len(sessions) != 1 || sessions[0].Name != "main" {
		t.Fatalf("sessions over ssh: %+v, %v; want main", sessions, err)
	}
	// Shell and tmux specials both: the far shell must see one word.
	payload := `it's $HOME; "x" \ #{pane_id} ~ *`
	for _, run := range []func(context.Context, ...string) ([]string, error){c.Run, c.RunProcess} {
		if _, err := run(ctx, "set-buffer", "-b", "t", payload); err != nil {
			t.Fatalf("set-buffer: %v", err)
		}
		got := srv.Must("show-buffer", "-b", "t")
		if got != payload {
			t.Errorf("buffer on the far server = %q, want %q", got, payload)
		}
	}
	if !c.ControlConnected() {
		t.Errorf("no control client over ssh after commands with a session")
	}
}

func TestAnUnreachableHostFailsFastWithSshsMessage(t *testing.T) {
	set, _ := remote(t, hosts.Host{Name: "down", Destination: sshserver.DownAlias})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := set.Client(ctx, "down")
	if err == nil || !strings.Contains(err.Error(), "Connection refused") || !strings.Contains(err.Error(), "host down") {
		t.Fatalf("connecting to a closed port: %v; want an error naming the host and ssh's reason", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("failing took %v", d)
	}
	if _, err := set.Client(ctx, "nowhere"); err == nil || !strings.Contains(err.Error(), "not configured") {
		t.Errorf("an unknown host: %v; want not configured", err)
	}
	if c, err := set.Client(ctx, "far"); err != nil {
		t.Errorf("the reachable host after the unreachable one: %v", err)
	} else if _, err := c.ListSessions(ctx); err != nil {
		t.Errorf("listing on the reachable host: %v", err)
	}
}

func TestAStreamOverSshEndsAsLostWhenItsConnectionDies(t *testing.T) {
	set, srv := remote(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := set.Client(ctx, "far")
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.PaneInfo(ctx, "%0")
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan tmux.OutputEvent, 64)
	stop, err := c.Watch(ctx, "%0", info.SessionID, func(ev tmux.OutputEvent) {
		if ev.Ended {
			events <- ev
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if killed := sshserver.KillClients(srv.Socket, tmux.OutputClientFlag); len(killed) == 0 {
		t.Fatalf("found no ssh process running the output client")
	}
	select {
	case ev := <-events:
		if !ev.Lost || ev.Reason == "" {
			t.Errorf("end of the stream = %+v; want Lost with a reason", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the stream did not end after its ssh process was killed")
	}
	// The host is still there: the next command reconnects.
	if _, err := c.ListSessions(ctx); err != nil {
		t.Errorf("listing after the drop: %v", err)
	}
}
