package probe

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// refusedAddr returns a loopback address nothing listens on: a port
// bound and let go a moment ago.
func refusedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestProbesJudgeRealServers probes real listeners, from here (Local) and
// through the script a remote host runs (Remote, with `env` standing in
// for ssh: the same sh, bash and curl as on a far side).
func TestProbesJudgeRealServers(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	go func() {
		for {
			c, err := listener.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ready":true}`))
	})
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	plain := httptest.NewServer(mux)
	defer plain.Close()
	secure := httptest.NewUnstartedServer(mux)
	secure.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	secure.StartTLS()
	defer secure.Close()
	refused := refusedAddr(t)

	tests := []struct {
		name   string
		target string
		status string
		header string
		body   string
		insec  bool
		ok     bool
		detail string // contained in the result's detail
	}{
		{name: "port listening", target: listener.Addr().String(), ok: true, detail: "accepting connections"},
		{name: "port refused", target: "tcp://" + refused, detail: "connection refused"},
		{name: "200 passes", target: plain.URL + "/ok", ok: true, detail: "status 200"},
		{name: "503 fails", target: plain.URL + "/busy", detail: "status 503"},
		{name: "503 asked for", target: plain.URL + "/busy", status: "503", ok: true},
		{name: "302 is within 200-399", target: plain.URL + "/moved", ok: true, detail: "status 302"},
		{name: "302 outside 200", target: plain.URL + "/moved", status: "200", detail: "status 302"},
		{name: "header value", target: plain.URL + "/ok", header: "Content-Type: json", ok: true},
		{name: "header value differs", target: plain.URL + "/ok", header: "Content-Type: html", detail: "Content-Type: application/json"},
		{name: "header missing", target: plain.URL + "/ok", header: "X-Ready", detail: "no X-Ready header"},
		{name: "body holds text", target: plain.URL + "/ok", body: `"ready":true`, ok: true},
		{name: "body lacks text", target: plain.URL + "/ok", body: "nope", detail: "body lacks the text"},
		{name: "url refused", target: "http://" + refused + "/", detail: "connection refused"},
		{name: "self-signed refused", target: secure.URL + "/ok", detail: "TLS"},
		{name: "self-signed allowed", target: secure.URL + "/ok", insec: true, ok: true, detail: "status 200"},
	}
	probers := map[string]Prober{"local": Local{}, "remote": Remote{Transport: []string{"env"}}}
	for pname, p := range probers {
		for _, tt := range tests {
			t.Run(pname+"/"+tt.name, func(t *testing.T) {
				target, err := ParseTarget(tt.target)
				if err != nil {
					t.Fatal(err)
				}
				if target.Status, err = ParseStatus(tt.status); err != nil {
					t.Fatal(err)
				}
				if target.Header, target.HeaderValue, err = ParseHeader(tt.header); err != nil {
					t.Fatal(err)
				}
				target.Body, target.Insecure = tt.body, tt.insec
				r := p.Probe(context.Background(), target)
				t.Logf("%s: ok %v, %s", tt.target, r.OK, r.Detail)
				if r.OK != tt.ok || !strings.Contains(r.Detail, tt.detail) {
					t.Errorf("%s probe of %s: ok %v detail %q, want ok %v with %q", pname, tt.target, r.OK, r.Detail, tt.ok, tt.detail)
				}
			})
		}
	}
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in, addr, url, err string
	}{
		{in: "3000", addr: "localhost:3000"},
		{in: "127.0.0.1:8080", addr: "127.0.0.1:8080"},
		{in: "tcp://db:5432", addr: "db:5432"},
		{in: "[::1]:80", addr: "[::1]:80"},
		{in: "http://localhost:3000/health", url: "http://localhost:3000/health"},
		{in: "HTTPS://example.test", url: "https://example.test"},
		{in: "http:///nohost", err: "names no host"},
		{in: "70000", err: "not within 1-65535"},
		{in: "localhost", err: "want a port"},
		{in: "-oProxy:22", err: "want a host"},
		{in: "http://a\nb", err: "control character"},
	}
	for _, tt := range tests {
		got, err := ParseTarget(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseTarget(%q) = %+v, %v; want an error with %q", tt.in, got, err, tt.err)
		case tt.err == "" && (err != nil || got.Addr != tt.addr || got.URL != tt.url):
			t.Errorf("ParseTarget(%q) = %+v, %v; want addr %q url %q", tt.in, got, err, tt.addr, tt.url)
		}
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		in   string
		has  []int
		not  []int
		fail bool
	}{
		{in: "", has: []int{200, 302, 399}, not: []int{199, 400, 503}},
		{in: "200,204,301-308", has: []int{200, 204, 301, 308}, not: []int{201, 300, 309}},
		{in: "503", has: []int{503}, not: []int{200}},
		{in: "99", fail: true},
		{in: "300-200", fail: true},
		{in: "ok", fail: true},
	}
	for _, tt := range tests {
		set, err := ParseStatus(tt.in)
		if (err != nil) != tt.fail {
			t.Errorf("ParseStatus(%q): error %v, want failure %v", tt.in, err, tt.fail)
			continue
		}
		for _, s := range tt.has {
			if !set.Has(s) {
				t.Errorf("ParseStatus(%q) lacks %d", tt.in, s)
			}
		}
		for _, s := range tt.not {
			if set.Has(s) {
				t.Errorf("ParseStatus(%q) has %d", tt.in, s)
			}
		}
	}
}

// TestRemoteScriptKeepsTheTargetOutOfTheCommandLine: the model's URL
// reaches the far side's sh quoted on stdin, and runs nothing there.
func TestRemoteScriptKeepsTheTargetOutOfTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	target := Target{URL: "http://127.0.0.1:1/'$(touch " + dir + "/owned)'`touch " + dir + "/owned2`", Status: StatusSet{{200, 399}}}
	r := Remote{Transport: []string{"env"}}.Probe(context.Background(), target)
	if r.OK {
		t.Fatalf("probe of %s passed: %+v", target.URL, r)
	}
	for _, f := range []string{"owned", "owned2"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("the URL ran a command on the far side (%s exists)", f)
		}
	}
}

// TestRemoteSaysWhatTheFarSideLacks runs the remote script with a PATH
// that holds only sh: no curl, no bash, no nc.
func TestRemoteSaysWhatTheFarSideLacks(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	if err := os.Symlink(sh, filepath.Join(dir, "sh")); err != nil {
		t.Fatal(err)
	}
	bare := Remote{Transport: []string{"env", "PATH=" + dir}}
	for _, tt := range []struct{ target, want string }{
		{"http://127.0.0.1:1/", "an HTTP probe needs curl on this host"},
		{"127.0.0.1:1", "a TCP probe needs bash or nc on this host"},
	} {
		target, err := ParseTarget(tt.target)
		if err != nil {
			t.Fatal(err)
		}
		if r := bare.Probe(context.Background(), target); r.OK || r.Detail != tt.want {
			t.Errorf("probe of %s on a host with only sh: %+v, want %q", tt.target, r, tt.want)
		}
	}
}

// TestRemoteFailuresAreNamed reads what the far side's tools and ssh say
// when a probe finds nothing to judge.
func TestRemoteFailuresAreNamed(t *testing.T) {
	web, tcp := Target{URL: "http://x/"}, Target{Addr: "x:1"}
	tests := []struct {
		name   string
		target Target
		status int
		stderr string
		ok     bool
		want   string
	}{
		{"port open", tcp, 0, "", true, "accepting connections"},
		{"bash refused", tcp, 1, "bash: connect: Connection refused\nbash: line 1: /dev/tcp/x/1: Connection refused\n", false, "connection refused"},
		{"nc refused", tcp, 1, "", false, "not accepting connections"},
		{"timeout(1)", tcp, timedOut, "", false, "no answer in time"},
		{"killed", web, -1, "", false, "no answer in time"},
		{"ssh failed", web, sshFailed, "ssh: connect to host far port 22: Connection refused\n", false, "ssh: connect to host far port 22: Connection refused"},
		{"ssh lost", web, sshFailed, "Connection closed by 127.0.0.1 port 22\n", false, "ssh: Connection closed by 127.0.0.1 port 22"},
		{"curl refused", web, 7, "curl: (7) Failed to connect to x port 1 after 0 ms: Couldn't connect to server\n", false, "connection refused"},
		{"curl timeout", web, 28, "curl: (28) Connection timed out after 2001 milliseconds\n", false, "no answer in time"},
		{"curl certificate", web, 60, "curl: (60) SSL certificate problem: certificate has expired\nMore details here\n", false,
			"TLS: SSL certificate problem: certificate has expired (insecure: true accepts it)"},
		{"curl dns", web, 6, "curl: (6) Could not resolve host: x\n", false, "Could not resolve host: x"},
	}
	for _, tt := range tests {
		if r := remoteFailure(tt.target, tt.status, tt.stderr); r.OK != tt.ok || r.Detail != tt.want {
			t.Errorf("%s: %+v, want ok %v %q", tt.name, r, tt.ok, tt.want)
		}
	}
}
