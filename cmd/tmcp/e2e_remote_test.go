package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/sshserver"
	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// remoteFixture is tmcp over stdio with two remote hosts reached through
// one private sshd under two names, each a tmux server of its own, and a
// host that refuses connections.
type remoteFixture struct {
	sshd      *sshserver.Server
	local     *tmuxtest.Server
	far, far2 *tmuxtest.Server // the tmux servers of hosts "far" and "far2"
	s         *session
}

// startSSHD starts a private sshd for the test, stopped when it ends; a
// test that needs one needs tmux too, so without tmux it is skipped.
func startSSHD(t *testing.T) *sshserver.Server {
	t.Helper()
	tmuxtest.Skip(t)
	sshd, err := sshserver.Start(context.Background())
	if err != nil {
		t.Fatalf("starting a private sshd: %v", err)
	}
	t.Cleanup(sshd.Close)
	return sshd
}

func newRemoteFixture(t *testing.T) *remoteFixture {
	t.Helper()
	sshd := startSSHD(t)
	f := &remoteFixture{sshd: sshd, local: tmuxtest.New(t), far: tmuxtest.New(t), far2: tmuxtest.New(t)}
	f.s = startTMCP(t, f.local, "", "-ssh-config", sshd.ConfigFile,
		"-host", "far="+sshserver.Alias+",socket="+f.far.Socket,
		"-host", "far2="+sshserver.Alias+",socket="+f.far2.Socket,
		"-host", "down="+sshserver.DownAlias)
	return f
}

func TestRemoteHostCarriesListSendCaptureAndWaits(t *testing.T) {
	t.Parallel()
	f := newRemoteFixture(t)
	s := f.s
	pane := shellPane(t, f.far)

	var panes panesOut
	s.ok("list_panes", map[string]any{"host": "far"}, &panes)
	if len(panes.Panes) != 1 || panes.Panes[0].PaneID != "far:"+pane {
		t.Fatalf("list_panes on far = %+v, want the one pane far:%s", panes.Panes, pane)
	}
	id := panes.Panes[0].PaneID

	w, _ := s.waitText(map[string]any{"paneId": id, "patterns": []string{"never printed"}, "timeoutSeconds": 3})
	if !strings.HasPrefix(w.Cursor, "far:") {
		t.Fatalf("cursor from far = %q (%+v), want it prefixed far:", w.Cursor, w)
	}
	var sent sentOut
	s.ok("send_keys", map[string]any{"paneId": id, "keys": "echo remote-$((6*7))"}, &sent)
	if sent.PaneID != id {
		t.Errorf("send_keys reply names pane %q, want %q", sent.PaneID, id)
	}
	got, _ := s.waitText(map[string]any{"paneId": id, "cursor": w.Cursor, "patterns": []string{"remote-42"}, "timeoutSeconds": 10})
	if got.Outcome != "matched" {
		t.Fatalf("wait_for_text on far: %+v, want matched", got)
	}
	_, text := s.since(map[string]any{"paneId": id, "cursor": w.Cursor})
	if !strings.Contains(text, "remote-42") {
		t.Errorf("capture_since from far's cursor = %q, want the echo's output", text)
	}
	res := s.ok("capture_pane", map[string]any{"paneId": id}, nil)
	if text := paneText(t, "capture_pane", res); !strings.Contains(text, "remote-42") {
		t.Errorf("capture_pane on far = %q, want remote-42", text)
	}
	// The local server saw none of it.
	if screen := strings.Join(bareCapture(f.local, mainPane(f.local)), "\n"); strings.Contains(screen, "remote-42") {
		t.Errorf("the local pane shows the remote text:\n%s", screen)
	}
	var local panesOut
	s.ok("list_panes", nil, &local)
	if len(local.Panes) != 1 || strings.Contains(local.Panes[0].PaneID, ":") {
		t.Errorf("list_panes with no host = %+v, want the local pane, unprefixed", local.Panes)
	}
}

func TestRemoteRunCommandReportsStatusAndExactOutput(t *testing.T) {
	t.Parallel()
	f := newRemoteFixture(t)
	s := f.s
	pane := shellPane(t, f.far)
	id := "far:" + pane
	tests := []struct {
		command string
		status  int
		output  string
	}{
		{"echo hello", 0, "hello"},
		{"false", 1, ""},
		{"echo out; echo err >&2; (exit 42)", 42, "out\nerr"},
		{`echo '$HOME ~ #{pane_id} ;' "it's"`, 0, `$HOME ~ #{pane_id} ; it's`},
		{"echo 'é ✓'", 0, "é ✓"},
		{"for i in 1 2\ndo\n  echo line $i\ndone", 0, "line 1\nline 2"},
	}
	for _, tt := range tests {
		waitPrompt(t, f.far, pane)
		r, text := s.runCmd(map[string]any{"paneId": id, "command": tt.command, "timeoutSeconds": 15})
		if !r.Finished || status(r.ExitStatus) != strconv.Itoa(tt.status) || text != tt.output {
			t.Errorf("run_command %q on far: finished %v status %s output %q (reason %q), want status %d output %q",
				tt.command, r.Finished, status(r.ExitStatus), text, r.Reason, tt.status, tt.output)
		}
		if r.PaneID != id || !strings.HasPrefix(r.JobID, "far:") {
			t.Errorf("run_command %q: paneId %q jobId %q, want %s and a jobId prefixed far:", tt.command, r.PaneID, r.JobID, id)
		}
	}

	// C-c ends a remote job, and get_job finds it by its prefixed id.
	waitPrompt(t, f.far, pane)
	r, _ := s.runCmd(map[string]any{"paneId": id, "command": "sleep 30; echo never", "timeoutSeconds": 1})
	if r.Finished || !strings.HasPrefix(r.JobID, "far:") {
		t.Fatalf("run_command sleep 30 with a 1 s timeout: %+v, want a running job", r)
	}
	s.ok("send_keys", map[string]any{"paneId": id, "keys": "C-c", "enter": false}, nil)
	start := time.Now()
	j, text := s.getJob(map[string]any{"jobId": r.JobID, "timeoutSeconds": 10})
	if !j.Finished || status(j.ExitStatus) == "0" || strings.Contains(text, "never") || time.Since(start) > 5*time.Second {
		t.Errorf("get_job after C-c: finished %v status %s output %q after %v, want it ended promptly with a failure status",
			j.Finished, status(j.ExitStatus), text, time.Since(start))
	}
}

func TestAnUnreachableHostAnswersClearlyAndOthersKeepWorking(t *testing.T) {
	t.Parallel()
	f := newRemoteFixture(t)
	s := f.s
	start := time.Now()
	msg := s.fail("list_panes", map[string]any{"host": "down"})
	if !strings.Contains(msg, "down") || !strings.Contains(msg, "Connection refused") {
		t.Errorf("list_panes on an unreachable host: %q, want the host's name and ssh's reason", msg)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("the unreachable host took %v to answer, want within the command timeout", d)
	}
	s.ok("list_panes", nil, nil)
	s.ok("list_panes", map[string]any{"host": "far"}, nil)

	// A listing with no host names every host's sessions, and the
	// unreachable one as such.
	var all struct {
		Sessions []struct {
			SessionID   string `json:"sessionId"`
			SessionName string `json:"sessionName"`
		} `json:"sessions"`
		Unreachable []struct {
			Host  string `json:"host"`
			Error string `json:"error"`
		} `json:"unreachable"`
	}
	start = time.Now()
	s.ok("list_sessions", nil, &all)
	var ids []string
	for _, ss := range all.Sessions {
		ids = append(ids, ss.SessionID+"|"+ss.SessionName)
	}
	if got := strings.Join(ids, " "); got != "$0|main far:$0|far:main far2:$0|far2:main" {
		t.Errorf("list_sessions with no host = %s, want the local main, then far's and far2's", got)
	}
	if len(all.Unreachable) != 1 || all.Unreachable[0].Host != "down" || !strings.Contains(all.Unreachable[0].Error, "Connection refused") {
		t.Errorf("list_sessions unreachable = %+v, want down with ssh's reason", all.Unreachable)
	}
	var onlyLocal struct {
		Sessions []struct{} `json:"sessions"`
	}
	s.ok("list_sessions", map[string]any{"host": "local"}, &onlyLocal)
	if len(onlyLocal.Sessions) != 1 {
		t.Errorf("list_sessions on host local = %d sessions, want 1", len(onlyLocal.Sessions))
	}
	for _, bad := range []map[string]any{
		{"host": "nowhere"},
		{"host": "-oProxyCommand=touch /tmp/x"},
		{"host": "far2", "paneId": "far:%0"},
	} {
		if msg := s.fail("capture_pane", bad); !strings.Contains(msg, "host") {
			t.Errorf("capture_pane %v: %q, want a refusal naming the host", bad, msg)
		}
	}
}

func TestAWaitAcrossADroppedConnectionEndsAtOnceAndTheHostComesBack(t *testing.T) {
	t.Parallel()
	f := newRemoteFixture(t)
	s := f.s
	id := "far:" + shellPane(t, f.far)
	s.ok("list_panes", map[string]any{"host": "far"}, nil)

	type result struct {
		res     *mcp.CallToolResult
		err     error
		elapsed time.Duration
	}
	done := make(chan result, 1)
	go func() {
		start := time.Now()
		res, err := s.callErr("wait_for_text", map[string]any{"paneId": id, "patterns": []string{"never printed"}, "timeoutSeconds": 30})
		done <- result{res, err, time.Since(start)}
	}()
	// The wait streams the pane through an output client of its own: once
	// it has attached, its connection is cut as a network failure would.
	if !tmuxtest.WaitFor(10*time.Second, func() bool {
		flags, _ := f.far.Tmux("list-clients", "-F", "#{client_flags}")
		return strings.Contains(flags, tmux.OutputClientFlag)
	}) {
		t.Fatalf("the wait attached no output client to far")
	}
	killed := sshserver.KillClients(f.far.Socket, tmux.OutputClientFlag)
	if len(killed) == 0 {
		t.Fatalf("no ssh process carried the wait's output client")
	}
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("wait_for_text across a dropped connection: protocol error %v", r.err)
		}
		w, _ := decodeText[waitTextOut](t, "wait_for_text", r.res)
		if w.Outcome != "connection_lost" || !strings.Contains(w.Reason, "connection") || r.elapsed > 15*time.Second {
			t.Errorf("wait across a dropped connection: outcome %q reason %q after %v, want connection_lost at once",
				w.Outcome, w.Reason, r.elapsed)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the wait did not end after its connection (ssh pid %v) was killed", killed)
	}
	// The host is reached again, and a new wait streams again, from a
	// cursor taken before the keys, so the line cannot come before it.
	since, _ := s.since(map[string]any{"paneId": id})
	s.ok("send_keys", map[string]any{"paneId": id, "keys": "echo back-again"}, nil)
	if w, _ := s.waitText(map[string]any{"paneId": id, "cursor": since.Cursor, "patterns": []string{"back-again"}, "timeoutSeconds": 10}); w.Outcome != "matched" {
		t.Errorf("wait after reconnecting: %+v, want matched", w)
	}
}

func TestTwoHostsOnOneSshdKeepTheirPanesApart(t *testing.T) {
	t.Parallel()
	f := newRemoteFixture(t)
	s := f.s
	p1, p2 := shellPane(t, f.far), shellPane(t, f.far2)
	r1, out1 := s.runCmd(map[string]any{"paneId": "far:" + p1, "command": "echo on-far", "timeoutSeconds": 15})
	r2, out2 := s.runCmd(map[string]any{"paneId": "far2:" + p2, "command": "echo on-far2", "timeoutSeconds": 15})
	if out1 != "on-far" || out2 != "on-far2" || !strings.HasPrefix(r1.JobID, "far:") || !strings.HasPrefix(r2.JobID, "far2:") {
		t.Fatalf("runs on two hosts: %q (%s), %q (%s)", out1, r1.JobID, out2, r2.JobID)
	}
	screen1, screen2 := bareCapture(f.far, p1), bareCapture(f.far2, p2)
	if !hasLine(screen1, "on-far") || hasLine(screen1, "on-far2") || !hasLine(screen2, "on-far2") || hasLine(screen2, "on-far") {
		t.Errorf("cross-talk:\nfar:\n%s\nfar2:\n%s", strings.Join(screen1, "\n"), strings.Join(screen2, "\n"))
	}
	// A job id of one host is not found on the other.
	bare := strings.TrimPrefix(r1.JobID, "far:")
	if msg := s.fail("get_job", map[string]any{"jobId": "far2:" + bare}); msg == "" {
		t.Errorf("far's job found on far2")
	}
}

func TestEveryToolFamilyWorksOnARemoteHost(t *testing.T) {
	t.Parallel()
	sshd := startSSHD(t)
	local, far := tmuxtest.New(t), tmuxtest.New(t)
	audit := t.TempDir() + "/audit"
	s := startTMCPWithEnv(t, local, "destructive", []string{"TMCP_AUDIT=" + audit}, "-ssh-config", sshd.ConfigFile,
		"-host", "far="+sshserver.Alias+",socket="+far.Socket)
	pane := "far:" + shellPane(t, far)

	var info serverInfo
	s.ok("get_server_info", map[string]any{"host": "far"}, &info)
	if info.SocketPath != far.Socket || info.Sessions != 1 || info.CallerPane != "" {
		t.Errorf("get_server_info on far = %+v, want socket %s, 1 session, no caller pane", info, far.Socket)
	}
	var servers struct {
		Servers []struct {
			Path     string `json:"path"`
			State    string `json:"state"`
			Sessions int    `json:"sessions"`
		} `json:"servers"`
	}
	s.ok("list_servers", map[string]any{"host": "far"}, &servers)
	if len(servers.Servers) != 1 || servers.Servers[0].Path != far.Socket || servers.Servers[0].State != "live" {
		t.Errorf("list_servers on far = %+v, want its one live server", servers.Servers)
	}

	var created createdOut
	s.ok("create_window", map[string]any{"host": "far", "sessionName": "main", "name": "w2"}, &created)
	if !strings.HasPrefix(created.WindowID, "far:@") || !strings.HasPrefix(created.PaneID, "far:%") {
		t.Fatalf("create_window on far = %+v, want far: ids", created)
	}
	var split createdOut
	s.ok("split_window", map[string]any{"paneId": created.PaneID}, &split)
	s.ok("rename_window", map[string]any{"windowId": created.WindowID, "newName": "renamed"}, nil)
	var wins windowsOut
	s.ok("list_windows", map[string]any{"sessionName": "far:main"}, &wins)
	if len(wins.Windows) != 2 || wins.Windows[1].WindowID != created.WindowID || wins.Windows[1].SessionName != "far:main" {
		t.Errorf("list_windows of far:main = %+v, want its two windows, named with far:", wins.Windows)
	}
	if got := tmuxOne(far, "list-windows", "-F", "#{window_name}:#{window_panes}"); !strings.Contains(got, "renamed:2") {
		t.Errorf("far's windows after create, split and rename: %q", got)
	}
	s.ok("load_buffer", map[string]any{"host": "far", "name": "b1", "text": "it's $HOME"}, nil)
	if got := tmuxOne(far, "show-buffer", "-b", "b1"); got != "it's $HOME" {
		t.Errorf("far's buffer = %q", got)
	}
	if res := s.ok("show_buffer", map[string]any{"host": "far", "name": "b1"}, nil); !strings.Contains(allText(res), "it's $HOME") {
		t.Errorf("show_buffer on far: %s", allText(res))
	}
	s.ok("paste_text", map[string]any{"paneId": pane, "text": "echo pasted-ok"}, nil)
	s.ok("send_keys", map[string]any{"paneId": pane, "keys": "Enter", "enter": false}, nil)
	waitScreen(t, far, strings.TrimPrefix(pane, "far:"), "pasted-ok", func(l []string) bool { return hasLine(l, "pasted-ok") })
	var pi paneInfo
	s.ok("get_pane_info", map[string]any{"paneId": pane}, &pi)
	if pi.PaneID != pane || pi.IsCaller != nil && *pi.IsCaller {
		t.Errorf("get_pane_info = %+v, want %s, not the caller", pi.paneOut, pane)
	}
	res := s.ok("search_panes", map[string]any{"host": "far", "pattern": "pasted-ok"}, nil)
	if !strings.Contains(allText(res), pane) {
		t.Errorf("search_panes on far: %s, want a match in %s", allText(res), pane)
	}
	// A workspace's ~ is the far tmux server's HOME, not tmcp's.
	farHome := t.TempDir()
	far.Must("set-environment", "-g", "HOME", farHome)
	s.ok("build_workspace", map[string]any{"host": "far", "yaml": "session_name: ws\nstart_directory: ~\nwindows:\n  - window_name: a\n"}, nil)
	if got := tmuxOne(far, "display-message", "-p", "-t", "=ws:", "#{pane_start_path}|#{pane_current_path}"); !strings.Contains(got, farHome) {
		t.Errorf("far's workspace pane starts in %q, want %s", got, farHome)
	}
	s.ok("kill_pane", map[string]any{"paneId": split.PaneID}, nil)
	if got := tmuxOne(far, "list-panes", "-a", "-F", "#{pane_id}"); strings.Contains(got, strings.TrimPrefix(split.PaneID, "far:")) {
		t.Errorf("far still has pane %s: %q", split.PaneID, got)
	}
	if got := tmuxOne(local, "list-windows", "-a", "-F", "#{window_name}"); strings.Contains(got, "renamed") {
		t.Errorf("the local server got the remote window: %q", got)
	}
	log, _ := os.ReadFile(audit)
	if !strings.Contains(string(log), `"host":"far"`) {
		t.Errorf("the audit does not name the host:\n%s", log)
	}
}

func TestAJobAcrossADroppedConnectionCanBeReadAgainAfterReconnecting(t *testing.T) {
	t.Parallel()
	f := newRemoteFixture(t)
	s := f.s
	pane := shellPane(t, f.far)
	id := "far:" + pane
	// Connected and streaming first, so a 1 s run is not spent on that.
	s.runCmd(map[string]any{"paneId": id, "command": "true", "timeoutSeconds": 15})
	waitPrompt(t, f.far, pane)
	r, _ := s.runCmd(map[string]any{"paneId": id, "command": "echo before-drop; sleep 2; echo after-drop", "timeoutSeconds": 1})
	if r.Finished || !strings.HasPrefix(r.JobID, "far:") {
		t.Fatalf("run_command with a 1 s timeout: %+v, want a running job", r)
	}
	// Every connection to far breaks: the command client's and the job's stream.
	if killed := sshserver.KillClients(f.far.Socket, "attach-session"); len(killed) < 2 {
		t.Fatalf("killed %v; want the command client's and the output client's ssh", killed)
	}
	j, text := s.getJob(map[string]any{"jobId": r.JobID, "timeoutSeconds": 20})
	if !j.Finished || j.PaneDied || !j.OutputLost || !strings.Contains(j.Reason, "connection to the host was lost") {
		t.Errorf("get_job after the drop: finished %v paneDied %v outputLost %v reason %q, want finished, not died, output lost, saying the connection was lost",
			j.Finished, j.PaneDied, j.OutputLost, j.Reason)
	}
	// What the command wrote while the connection was down is in the far
	// pane's history: the output goes on from there.
	if text != "before-drop\nafter-drop" || !strings.Contains(j.Reason, "history") {
		t.Errorf("the job's output across the drop = %q (reason %q), want before-drop then after-drop, from the pane's history", text, j.Reason)
	}
	// The pane is free again, and runs the next command exactly.
	waitPrompt(t, f.far, pane)
	if r, text := s.runCmd(map[string]any{"paneId": id, "command": "echo next", "timeoutSeconds": 15}); !r.Finished || text != "next" {
		t.Errorf("run_command after reconnecting: %+v %q", r, text)
	}
}

func TestRemoteResourcesAreReadAndSubscribedUnderTheirHost(t *testing.T) {
	t.Parallel()
	sshd := startSSHD(t)
	local, far := tmuxtest.New(t), tmuxtest.New(t)
	u := &updates{n: map[string]int{}}
	s := launch(t, local, launchOptions{client: &mcp.ClientOptions{ResourceUpdatedHandler: u.handler},
		session: &mcp.ClientSessionOptions{ProtocolVersion: legacyProtocol},
		args:    []string{"-ssh-config", sshd.ConfigFile, "-host", "far=" + sshserver.Alias + ",socket=" + far.Socket}})
	pane := shellPane(t, far)
	id := strings.TrimPrefix(pane, "%")
	window := strings.TrimPrefix(paneFormat(far, pane, "#{window_id}"), "@")

	var panes struct {
		Panes []struct {
			PaneID string `json:"paneId"`
		} `json:"panes"`
	}
	s.readJSON("tmux://hosts/far/windows/"+window+"/panes", &panes)
	if len(panes.Panes) != 1 || panes.Panes[0].PaneID != "far:"+pane {
		t.Errorf("far's window panes resource = %+v, want far:%s", panes.Panes, pane)
	}
	far.Must("send-keys", "-t", pane, "echo res-$((40+2))", "Enter")
	waitScreen(t, far, pane, "res-42", func(l []string) bool { return hasLine(l, "res-42") })
	uri := "tmux://hosts/far/panes/" + id + "/content"
	if c := s.readResource(uri); !strings.Contains(c.Text, "res-42") {
		t.Errorf("%s = %q, want the far pane's screen", uri, c.Text)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("resources/subscribe %s: %v", uri, err)
	}
	far.Must("send-keys", "-t", pane, "echo after-subscribe", "Enter")
	if !tmuxtest.WaitFor(10*time.Second, func() bool { return u.count(uri) > 0 }) {
		t.Errorf("no resources/updated for %s after the far pane wrote", uri)
	}
	far.Must("new-session", "-d", "-s", "only-far", "sh")
	for _, c := range []struct {
		uri, arg string
		context  map[string]string
		want     string
	}{
		{"tmux://hosts/{host}/panes/{id}", "host", nil, "far"},
		{"tmux://hosts/{host}/panes/{id}", "id", map[string]string{"host": "far"}, id + "," + strings.TrimPrefix(tmuxOne(far, "display-message", "-p", "-t", "=only-far:", "#{pane_id}"), "%")},
		{"tmux://hosts/{host}/sessions/{name}/windows", "name", map[string]string{"host": "far"}, "main,only-far"},
	} {
		res, err := s.cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: c.uri},
			Argument: mcp.CompleteParamsArgument{Name: c.arg}, Context: &mcp.CompleteContext{Arguments: c.context}})
		if err != nil || strings.Join(res.Completion.Values, ",") != c.want {
			t.Errorf("completing %s in %s (%v): %v, %v; want %s", c.arg, c.uri, c.context, res, err, c.want)
		}
	}
	if _, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tmux://hosts/nowhere/panes/0"}); err == nil {
		t.Errorf("a resource of an unconfigured host was read")
	}
}

func TestDoctorChecksEachHostAndBadHostFlagsAreRefused(t *testing.T) {
	t.Parallel()
	sshd := startSSHD(t)
	local, far := tmuxtest.New(t), tmuxtest.New(t)
	out, err := runCLI(t, local, []string{"TMCP_SSH_CONFIG=" + sshd.ConfigFile}, "-socket-path", local.Socket, "-doctor",
		"-host", "far="+sshserver.Alias+",socket="+far.Socket, "-host", "down="+sshserver.DownAlias)
	if err == nil || !strings.Contains(out, "host far:  "+sshserver.Alias+": tmux 3") || !strings.Contains(out, "1 sessions") ||
		!strings.Contains(out, "host down:  "+sshserver.DownAlias+": not working") || !strings.Contains(out, "Connection refused") {
		t.Errorf("-doctor with a working and a refused host: %v\n%s", err, out)
	}
	for _, bad := range []string{"far", "-x=box", "far=-oProxyCommand=x", "far=box,port=2"} {
		if out, err := runCLI(t, local, nil, "-socket-path", local.Socket, "-tools", "-host", bad); err == nil {
			t.Errorf("-host %q was accepted:\n%s", bad, out)
		}
	}
}

func TestAWedgedRemoteTmuxCostsACallItsBudgetAndOthersGoOn(t *testing.T) {
	t.Parallel()
	f := newRemoteFixture(t)
	s := f.s
	pane := "far:" + shellPane(t, f.far)
	s.ok("capture_pane", map[string]any{"paneId": pane}, nil) // connected
	t.Cleanup(f.far.Continue)
	f.far.Stop()
	start := time.Now()
	res := s.call("capture_pane", map[string]any{"paneId": pane})
	took := time.Since(start)
	if !res.IsError || !strings.Contains(allText(res), "host far") || !strings.Contains(allText(res), "no answer from tmux") {
		t.Errorf("capture_pane on a stopped remote tmux: %s, want an error naming the host and saying tmux did not answer", allText(res))
	}
	if bound := commandTimeout + stallSlack; took > bound {
		t.Errorf("capture_pane on a stopped remote tmux answered after %v, want within %v", took, bound)
	}
	// Meanwhile the local server and the other host answer.
	s.ok("list_panes", nil, nil)
	s.ok("list_panes", map[string]any{"host": "far2"}, nil)
	f.far.Continue()
	s.ok("capture_pane", map[string]any{"paneId": pane}, nil)
}

func TestAChannelWaitAcrossADroppedConnectionSaysSo(t *testing.T) {
	t.Parallel()
	f := newRemoteFixture(t)
	s := f.s
	s.ok("list_sessions", map[string]any{"host": "far"}, nil)
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := s.callErr("wait_for_channel", map[string]any{"host": "far", "channel": "never-signalled", "timeoutSeconds": 30})
		done <- result{res, err}
	}()
	var killed []int
	if !tmuxtest.WaitFor(10*time.Second, func() bool {
		killed = sshserver.KillClients(f.far.Socket, "wait-for", "never-signalled")
		return len(killed) > 0
	}) {
		t.Fatalf("no ssh process ran the wait-for")
	}
	select {
	case r := <-done:
		var out struct {
			Outcome string `json:"outcome"`
		}
		if r.err != nil {
			t.Fatalf("wait_for_channel: %v", r.err)
		}
		decodeStructured(t, "wait_for_channel", r.res, &out)
		if out.Outcome != "connection_lost" {
			t.Errorf("wait_for_channel across a dropped connection: %q (%s), want connection_lost", out.Outcome, allText(r.res))
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("wait_for_channel did not end after its ssh (pid %v) was killed", killed)
	}
	// Signalling through the host still works.
	done2 := make(chan result, 1)
	go func() {
		res, err := s.callErr("wait_for_channel", map[string]any{"host": "far", "channel": "later", "timeoutSeconds": 20})
		done2 <- result{res, err}
	}()
	// Before or after the wait-for begins: tmux latches a signal nobody waits for.
	s.ok("signal_channel", map[string]any{"host": "far", "channel": "later"}, nil)
	r := <-done2
	if r.err != nil || !strings.Contains(allText(r.res), "signalled") {
		t.Errorf("wait_for_channel on far after signal_channel: %v %s", r.err, allText(r.res))
	}
}

func TestCreateSessionStartsARemoteServerThatWasNotRunning(t *testing.T) {
	t.Parallel()
	sshd := startSSHD(t)
	local, far := tmuxtest.New(t), tmuxtest.Empty(t)
	s := startTMCP(t, local, "", "-ssh-config", sshd.ConfigFile, "-host", "far="+sshserver.Alias+",socket="+far.Socket)
	var none panesOut
	if s.ok("list_panes", map[string]any{"host": "far"}, &none); len(none.Panes) != 0 {
		t.Errorf("list_panes with no remote server: %+v, want none, as locally", none)
	}
	start := time.Now()
	var created createdOut
	s.ok("create_session", map[string]any{"host": "far", "name": "fresh", "command": "sh"}, &created)
	if created.SessionName != "far:fresh" || !strings.HasPrefix(created.PaneID, "far:%") || time.Since(start) > 10*time.Second {
		t.Errorf("create_session on far = %+v after %v, want far:fresh promptly", created, time.Since(start))
	}
	if got := tmuxOne(far, "list-sessions", "-F", "#{session_name}"); got != "fresh" {
		t.Errorf("far's sessions = %q, want fresh", got)
	}
	r, text := s.runCmd(map[string]any{"paneId": created.PaneID, "command": "echo in-fresh", "timeoutSeconds": 15})
	if !r.Finished || text != "in-fresh" {
		t.Errorf("run_command in the new remote session: %+v %q", r, text)
	}
}

func TestRemoteHostsWorkOverHTTPToo(t *testing.T) {
	t.Parallel()
	sshd := startSSHD(t)
	local, far := tmuxtest.New(t), tmuxtest.New(t)
	pane := shellPane(t, far)
	h := startHTTP(t, local, launchOptions{args: []string{"-ssh-config", sshd.ConfigFile, "-host", "far=" + sshserver.Alias + ",socket=" + far.Socket}})
	s := h.connect(t, testToken, nil)
	r, text := s.runCmd(map[string]any{"paneId": "far:" + pane, "command": "echo over-http", "timeoutSeconds": 15})
	if !r.Finished || text != "over-http" || r.PaneID != "far:"+pane {
		t.Errorf("run_command on far over HTTP: %+v %q", r, text)
	}
}
