package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/hosts"
	"github.com/tmcp/tmcp/internal/sshserver"
)

// remoteProbes is how many probes the ssh test makes, to report what one
// costs over a shared connection.
const remoteProbes = 20

// TestRemoteProbesRunOverSSH probes through a private sshd, with the
// argv tmcp uses for a remote host (a shared master connection), and logs
// what a probe costs there.
func TestRemoteProbesRunOverSSH(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no ssh client")
	}
	sshd, err := sshserver.Start(context.Background())
	if err != nil {
		t.Skipf("no private sshd: %v", err)
	}
	defer sshd.Close()
	set, err := hosts.New(nil, []hosts.Host{{Name: "far", Destination: sshserver.Alias}}, hosts.SSH{ConfigFile: sshd.ConfigFile, Persist: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	h, _ := set.Host("far")
	prefix := set.Prefix(h)
	remote := Remote{Transport: prefix}
	// The master connection the probes start ends with the test; the set
	// only ends those of its tmux clients.
	defer func() {
		stop := append(append([]string(nil), prefix[:len(prefix)-3]...), "-O", "exit", "--", h.Destination)
		_ = exec.Command(stop[0], stop[1:]...).Run()
	}()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	target, err := ParseTarget(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	target.Status, _ = ParseStatus("")
	tcp, _ := ParseTarget(srv.Listener.Addr().String())
	for _, tt := range []Target{target, tcp} {
		var first, total time.Duration
		for i := range remoteProbes {
			start := time.Now()
			r := remote.Probe(context.Background(), tt)
			took := time.Since(start)
			if !r.OK {
				t.Fatalf("probe %d of %s over ssh: %+v, want it to pass", i, tt, r)
			}
			if i == 0 {
				first = took
			} else {
				total += took
			}
		}
		t.Logf("%s over ssh: first probe %v (the first of all sets up the master connection), then %v a probe", tt, first, total/(remoteProbes-1))
	}
}
