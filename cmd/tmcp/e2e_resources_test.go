package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// readResource reads a resource and returns its one content block.
func (s *session) readResource(uri string) *mcp.ResourceContents {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		s.t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		s.t.Fatalf("resources/read %s: %d contents, want one for the URI: %+v", uri, len(res.Contents), res.Contents)
	}
	return res.Contents[0]
}

// readJSON reads a JSON resource into out.
func (s *session) readJSON(uri string, out any) {
	s.t.Helper()
	c := s.readResource(uri)
	if c.MIMEType != "application/json" {
		s.t.Errorf("%s: mimeType %q, want application/json", uri, c.MIMEType)
	}
	if err := json.Unmarshal([]byte(c.Text), out); err != nil {
		s.t.Fatalf("%s: not JSON: %v: %q", uri, err, c.Text)
	}
}

// tmuxList runs a bare tmux list command and returns its lines, sorted.
func tmuxList(srv *tmuxtest.Server, args ...string) []string {
	lines := strings.Split(strings.TrimRight(srv.Must(args...), "\n"), "\n")
	sort.Strings(lines)
	return lines
}

func TestResourcesAreListedWithTheirTemplates(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "readonly")
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := s.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 1 || res.Resources[0].URI != "tmux://sessions" || res.Resources[0].MIMEType != "application/json" {
		t.Errorf("resources/list: %+v, want tmux://sessions (application/json) only", res.Resources)
	}
	tres, err := s.cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, rt := range tres.ResourceTemplates {
		got[rt.URITemplate] = rt.MIMEType
	}
	want := map[string]string{
		"tmux://sessions/{name}/windows": "application/json",
		"tmux://windows/{id}/panes":      "application/json",
		"tmux://panes/{id}":              "application/json",
		"tmux://panes/{id}/content":      "text/plain",
	}
	if len(got) != len(want) {
		t.Errorf("resources/templates/list: %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("template %s: mimeType %q, want %q (templates: %v)", k, got[k], v, got)
		}
	}
	caps := s.cs.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.Subscribe || caps.Completions == nil {
		t.Errorf("capabilities %+v: want resources with subscribe, and completions", caps)
	}
}

func TestResourcesReadWhatTmuxHas(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("new-session", "-d", "-s", "my work", "sh")
	srv.Must("split-window", "-d", "-t", "=my work:", "sh")
	srv.Must("send-keys", "-t", "%0", "clear; echo resource-text", "Enter")
	waitScreen(t, srv, "%0", "the text", func(l []string) bool { return hasLine(l, "resource-text") })
	s := startTMCP(t, srv, "readonly")

	var sessions struct {
		Sessions []struct {
			SessionName string `json:"sessionName"`
			Windows     int    `json:"windows"`
		} `json:"sessions"`
	}
	s.readJSON("tmux://sessions", &sessions)
	var names []string
	for _, ss := range sessions.Sessions {
		names = append(names, ss.SessionName)
	}
	sort.Strings(names)
	if want := tmuxList(srv, "list-sessions", "-F", "#{session_name}"); !slices.Equal(names, want) {
		t.Errorf("tmux://sessions names %v, tmux has %v", names, want)
	}

	var windows struct {
		Windows []struct {
			WindowID    string `json:"windowId"`
			SessionName string `json:"sessionName"`
			Panes       int    `json:"panes"`
		} `json:"windows"`
	}
	s.readJSON("tmux://sessions/my%20work/windows", &windows)
	wantWindows := tmuxList(srv, "list-windows", "-t", "=my work", "-F", "#{window_id} #{window_panes}")
	var gotWindows []string
	for _, w := range windows.Windows {
		gotWindows = append(gotWindows, w.WindowID+" "+strconv.Itoa(w.Panes))
		if w.SessionName != "my work" {
			t.Errorf("window %s of tmux://sessions/my%%20work/windows is in session %q", w.WindowID, w.SessionName)
		}
	}
	if !slices.Equal(gotWindows, wantWindows) {
		t.Fatalf("tmux://sessions/my%%20work/windows: %v, tmux has %v", gotWindows, wantWindows)
	}

	window := windows.Windows[0].WindowID
	var panes struct {
		Panes []struct {
			PaneID string `json:"paneId"`
		} `json:"panes"`
	}
	s.readJSON("tmux://windows/"+strings.TrimPrefix(window, "@")+"/panes", &panes)
	var gotPanes []string
	for _, p := range panes.Panes {
		gotPanes = append(gotPanes, p.PaneID)
	}
	sort.Strings(gotPanes)
	if want := tmuxList(srv, "list-panes", "-t", window, "-F", "#{pane_id}"); !slices.Equal(gotPanes, want) || len(want) != 2 {
		t.Errorf("tmux://windows/%s/panes: %v, tmux has %v", window, gotPanes, want)
	}

	var detail struct {
		PaneID   string `json:"paneId"`
		Command  string `json:"command"`
		PID      int    `json:"pid"`
		Width    int    `json:"width"`
		WindowID string `json:"windowId"`
	}
	s.readJSON("tmux://panes/0", &detail)
	if got, want := strings.Join([]string{detail.PaneID, detail.Command, strconv.Itoa(detail.PID), strconv.Itoa(detail.Width), detail.WindowID}, " "),
		paneFormat(srv, "%0", "#{pane_id} #{pane_current_command} #{pane_pid} #{pane_width} #{window_id}"); got != want {
		t.Errorf("tmux://panes/0: %q, tmux has %q", got, want)
	}

	content := s.readResource("tmux://panes/0/content")
	if content.MIMEType != "text/plain" {
		t.Errorf("tmux://panes/0/content: mimeType %q, want text/plain", content.MIMEType)
	}
	if got, want := unfenced(t, "tmux://panes/0/content", content.Text), strings.Join(bareCapture(srv, "%0"), "\n"); got != want {
		t.Errorf("tmux://panes/0/content:\n%q\ntmux shows:\n%q", got, want)
	}
}

func TestResourcesMissingTargetsAreNotFound(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCP(t, srv, "readonly")
	for _, uri := range []string{
		"tmux://sessions/nosuch/windows",
		"tmux://windows/99/panes",
		"tmux://panes/99",
		"tmux://panes/99/content",
		"tmux://panes/x/content",
		"tmux://panes/0/history",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		_, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		cancel()
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != mcp.CodeResourceNotFound || !strings.Contains(string(je.Data), uri) {
			t.Errorf("resources/read %s: %v, want the resource-not-found error naming the URI", uri, err)
		}
	}
}

func TestResourceTemplateArgumentsComplete(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("new-session", "-d", "-s", "my work", "sh")
	srv.Must("new-session", "-d", "-s", "other", "sh")
	s := startTMCP(t, srv, "readonly")
	complete := func(refType, ref, arg, value string) []string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		p := &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: refType}, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}}
		if refType == "ref/prompt" {
			p.Ref.Name = ref
		} else {
			p.Ref.URI = ref
		}
		res, err := s.cs.Complete(ctx, p)
		if err != nil {
			t.Fatalf("completion/complete %s %s=%q: %v", ref, arg, value, err)
		}
		return res.Completion.Values
	}
	trim := func(lines []string, sigil string) []string {
		for i := range lines {
			lines[i] = strings.TrimPrefix(lines[i], sigil)
		}
		return lines
	}
	cases := []struct {
		refType, ref, arg, value string
		want                     []string
	}{
		{"ref/resource", "tmux://sessions/{name}/windows", "name", "", tmuxList(srv, "list-sessions", "-F", "#{session_name}")},
		{"ref/resource", "tmux://sessions/{name}/windows", "name", "my", []string{"my work"}},
		{"ref/resource", "tmux://windows/{id}/panes", "id", "", trim(tmuxList(srv, "list-windows", "-a", "-F", "#{window_id}"), "@")},
		{"ref/resource", "tmux://panes/{id}", "id", "", trim(tmuxList(srv, "list-panes", "-a", "-F", "#{pane_id}"), "%")},
		{"ref/resource", "tmux://panes/{id}/content", "id", "2", []string{"2"}},
		{"ref/resource", "tmux://panes/{id}/content", "id", "9", []string{}},
		{"ref/prompt", "find_failing_pane", "sessionName", "o", []string{"other"}},
	}
	for _, c := range cases {
		if got := complete(c.refType, c.ref, c.arg, c.value); !slices.Equal(got, c.want) {
			t.Errorf("complete %s %s=%q: %q, want %q", c.ref, c.arg, c.value, got, c.want)
		}
	}
}

// updates counts the resources/updated notifications per URI.
type updates struct {
	mu sync.Mutex
	n  map[string]int
}

func (u *updates) handler(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.n[req.Params.URI]++
}

func (u *updates) count(uri string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n[uri]
}

// Protocol versions the subscription tests speak: the legacy one sends
// resources/subscribe and resources/unsubscribe; the current one opens a
// subscriptions/listen stream and cancels it to unsubscribe.
const (
	legacyProtocol  = "2025-11-25"
	currentProtocol = "2026-07-28"
)

func TestPaneSubscriptionSendsCoalescedUpdatesUntilUnsubscribed(t *testing.T) {
	for _, version := range []string{legacyProtocol, currentProtocol} {
		t.Run(version, func(t *testing.T) {
			srv := tmuxtest.New(t)
			pane := shellPane(t, srv)
			id := strings.TrimPrefix(pane, "%")
			u := &updates{n: map[string]int{}}
			s := startTMCPSpeaking(t, srv, version, &mcp.ClientOptions{ResourceUpdatedHandler: u.handler})
			if got := s.cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated protocol %s, want %s", got, version)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()

			content, detail := "tmux://panes/"+id+"/content", "tmux://panes/"+id
			for _, uri := range []string{content, detail} {
				if err := s.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
					t.Fatalf("resources/subscribe %s: %v", uri, err)
				}
			}
			// A listen stream is opened asynchronously: the feed holds the
			// pane's stream once tmcp attached a client to carry it.
			waitStreamClient(t, srv, pane)

			// A build log: 4000 lines in bursts of 100, with small sleeps.
			const lines = 4000
			start := time.Now()
			srv.Must("send-keys", "-t", pane, "i=0; while [ $i -lt 40 ]; do seq 1 100 | sed s/^/log-/; sleep 0.05; i=$((i+1)); done; echo build-done", "Enter")
			waitScreenFor(t, srv, pane, 30*time.Second, "build-done", func(l []string) bool { return hasLine(l, "build-done") })
			elapsed := time.Since(start)
			// The point: more than one coalescing interval (250 ms), for
			// the last update.
			time.Sleep(600 * time.Millisecond)
			bound := int(elapsed/(250*time.Millisecond)) + 3
			t.Logf("%d lines in %v: %d updates for %s, %d for %s", lines, elapsed.Round(time.Millisecond), u.count(content), content, u.count(detail), detail)
			for _, uri := range []string{content, detail} {
				if got := u.count(uri); got < 1 || got > bound || got > lines/20 {
					t.Errorf("%s: %d updates for %d lines written in %v; want at least 1 and at most %d (one per 250ms)", uri, got, lines, elapsed, bound)
				}
			}

			for _, uri := range []string{content, detail} {
				if err := s.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
					t.Fatalf("resources/unsubscribe %s: %v", uri, err)
				}
			}
			// The point of both sleeps: an absence. Nothing outside tmcp shows
			// a listen stream cancelled (asynchronously); then no update may
			// come in the second after the output.
			time.Sleep(300 * time.Millisecond)
			before, beforeDetail := u.count(content), u.count(detail)
			srv.Must("send-keys", "-t", pane, "seq 1 300; echo after-unsubscribe", "Enter")
			waitScreen(t, srv, pane, "after-unsubscribe", func(l []string) bool { return hasLine(l, "after-unsubscribe") })
			time.Sleep(time.Second)
			if after, afterDetail := u.count(content), u.count(detail); after != before || afterDetail != beforeDetail {
				t.Errorf("updates after unsubscribe: %s %d→%d, %s %d→%d; want none", content, before, after, detail, beforeDetail, afterDetail)
			}
		})
	}
}

func TestSubscriptionsAreRefusedWhereNoUpdatesCome(t *testing.T) {
	srv := tmuxtest.New(t)
	s := startTMCPSpeaking(t, srv, legacyProtocol, nil)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cases := []struct{ uri, want string }{
		{"tmux://sessions", "read tmux://sessions again"},
		{"tmux://windows/0/panes", "only tmux://panes/{id} and tmux://panes/{id}/content send updates"},
		{"tmux://panes/99/content", "Resource not found"},
		{"tmux://panes/x", "Resource not found"},
	}
	for _, c := range cases {
		err := s.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: c.uri})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("resources/subscribe %s: %v, want an error saying %q", c.uri, err, c.want)
		}
	}
	// Unsubscribing from what was never subscribed is harmless.
	if err := s.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "tmux://panes/0"}); err != nil {
		t.Errorf("resources/unsubscribe without a subscription: %v", err)
	}
}
