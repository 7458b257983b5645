package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/hosts"
)

// The tmux:// resources. Ids go without their sigil (windows/2 is @2,
// panes/3 is %3); session names are URL-escaped.
const (
	uriSessions     = "tmux://sessions"
	templateWindows = "tmux://sessions/{name}/windows"
	templatePanes   = "tmux://windows/{id}/panes"
	templatePane    = "tmux://panes/{id}"
	templateContent = "tmux://panes/{id}/content"
	// hostPrefix starts the URI of a remote host's resource: the same
	// paths after tmux://hosts/{host}/.
	hostPrefix = "tmux://hosts/"

	mimeJSON = "application/json"
	mimeText = "text/plain"
)

// maxCompletions is the most values one completion/complete answer
// carries (the MCP limit).
const maxCompletions = 100

// resourceKind says which resource a tmux:// URI names.
type resourceKind int

const (
	kindSessions resourceKind = iota + 1 // tmux://sessions
	kindWindows                          // a session's windows
	kindPanes                            // a window's panes
	kindPane                             // one pane's state
	kindContent                          // one pane's screen text
)

// resourceRef is a parsed tmux:// URI: its kind and its target (a session
// name, a window id like @2 or a pane id like %3).
type resourceRef struct {
	kind   resourceKind
	target string
	host   string // a remote host's name, or "" for the local server
}

// parseResourceURI reads a tmux:// URI; ok is false when it names no
// resource (a wrong shape, an id that is not a number, a bad escape).
func parseResourceURI(uri string) (ref resourceRef, ok bool) {
	if rest, remote := strings.CutPrefix(uri, hostPrefix); remote {
		host, path, found := strings.Cut(rest, "/")
		if !found || hosts.CheckName(host) != nil {
			return ref, false
		}
		ref, ok = parseResourceURI("tmux://" + path)
		ref.host = host
		return ref, ok
	}
	rest, found := strings.CutPrefix(uri, "tmux://")
	if !found {
		return ref, false
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 1 && parts[0] == "sessions":
		return resourceRef{kind: kindSessions}, true
	case len(parts) == 3 && parts[0] == "sessions" && parts[2] == "windows":
		name, err := url.PathUnescape(parts[1])
		if err != nil || checkSessionName(name) != nil {
			return ref, false
		}
		return resourceRef{kind: kindWindows, target: name}, true
	case len(parts) == 3 && parts[0] == "windows" && parts[2] == "panes" && checkWindowID("@"+parts[1]) == nil:
		return resourceRef{kind: kindPanes, target: "@" + parts[1]}, true
	case len(parts) == 2 && parts[0] == "panes" && checkPaneID("%"+parts[1]) == nil:
		return resourceRef{kind: kindPane, target: "%" + parts[1]}, true
	case len(parts) == 3 && parts[0] == "panes" && parts[2] == "content" && checkPaneID("%"+parts[1]) == nil:
		return resourceRef{kind: kindContent, target: "%" + parts[1]}, true
	}
	return ref, false
}

// addResources registers the tmux:// resources and their templates; feeds
// sends their updates to subscribers.
func (s *Server) addResources(m *mcp.Server, f *feeds) {
	f.m = m
	m.AddResource(&mcp.Resource{URI: uriSessions, Name: "sessions", MIMEType: mimeJSON,
		Description: "The tmux sessions, as list_sessions reports them."}, s.readResource)
	for _, t := range []*mcp.ResourceTemplate{
		{URITemplate: templateWindows, Name: "windows", MIMEType: mimeJSON,
			Description: "A session's windows, as list_windows reports them; the name URL-escaped."},
		{URITemplate: templatePanes, Name: "panes", MIMEType: mimeJSON,
			Description: "A window's panes, as list_panes reports them; id without @."},
		{URITemplate: templatePane, Name: "pane", MIMEType: mimeJSON,
			Description: "One pane's state, as get_pane_info reports it; id without %. Subscribable."},
		{URITemplate: templateContent, Name: "pane content", MIMEType: mimeText,
			Description: "A pane's screen text, bounded like capture_pane; id without %. Subscribable."},
	} {
		m.AddResourceTemplate(t, s.readResource)
		if len(s.hostNames()) > 0 {
			remote := *t
			remote.URITemplate = hostPrefix + "{host}/" + strings.TrimPrefix(t.URITemplate, "tmux://")
			remote.Name = "host " + t.Name
			m.AddResourceTemplate(&remote, s.readResource)
		}
	}
	if len(s.hostNames()) > 0 {
		m.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: hostPrefix + "{host}/sessions", Name: "host sessions", MIMEType: mimeJSON,
			Description: "A remote host's tmux sessions."}, s.readResource)
	}
}

// on returns the server a resource reference addresses: s, or the view of
// its remote host.
func (s *Server) on(ctx context.Context, ref resourceRef) (*Server, error) {
	if ref.host == "" {
		return s, nil
	}
	if _, ok := s.cfg.Hosts.Host(ref.host); s.cfg.Hosts == nil || !ok {
		return nil, fmt.Errorf("host %q is not configured", ref.host)
	}
	return s.view(ctx, ref.host)
}

// readResource answers resources/read for every tmux:// URI, with the
// read tools' own code.
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	ref, ok := parseResourceURI(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	s, err := s.on(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", uri, err)
	}
	var v any
	switch ref.kind {
	case kindSessions:
		_, v, err = s.listSessions(ctx, nil, listSessionsIn{})
	case kindWindows:
		_, v, err = s.listWindows(ctx, nil, listWindowsIn{SessionName: ref.target})
	case kindPanes:
		_, v, err = s.listPanes(ctx, nil, listPanesIn{WindowID: ref.target})
	case kindPane:
		_, v, err = s.getPaneInfo(ctx, nil, paneIn{PaneID: ref.target})
	case kindContent:
		var res *mcp.CallToolResult
		res, _, err = s.capturePane(ctx, nil, capturePaneIn{PaneID: ref.target})
		if err == nil {
			text := res.Content[1].(*mcp.TextContent).Text
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeText, Text: text}}}, nil
		}
	}
	if err != nil {
		if isMissing(err) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return nil, fmt.Errorf("reading %s: %w", uri, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", uri, err)
	}
	if ref.host != "" {
		// Ids as the tools give them for this host: prefixed with its name.
		var generic any
		if json.Unmarshal(b, &generic) == nil {
			prefixIDs(generic, ref.host)
			if pb, err := json.Marshal(generic); err == nil {
				b = pb
			}
		}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeJSON, Text: string(b)}}}, nil
}

// isMissing reports whether err says tmux has no such session, window or
// pane.
func isMissing(err error) bool {
	return err != nil && strings.Contains(err.Error(), "can't find ")
}

// complete answers completion/complete: template arguments of the
// resources, and the paneId argument of the prompts.
func (s *Server) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	ref, arg := req.Params.Ref, req.Params.Argument
	if ref != nil && ref.Type == "ref/resource" && strings.HasPrefix(ref.URI, hostPrefix+"{host}/") {
		// A host's template: its host from the names configured, the rest
		// as the local template's, on that host.
		if arg.Name == "host" {
			return &mcp.CompleteResult{Completion: completion(s.hostNames(), arg.Value)}, nil
		}
		var host string
		if c := req.Params.Context; c != nil {
			host = c.Arguments["host"]
		}
		v, err := s.on(ctx, resourceRef{host: host})
		if err != nil || host == "" {
			return &mcp.CompleteResult{Completion: completion(nil, arg.Value)}, nil
		}
		local := *req.Params
		local.Ref = &mcp.CompleteReference{Type: ref.Type, URI: "tmux://" + strings.TrimPrefix(ref.URI, hostPrefix+"{host}/")}
		return v.complete(ctx, &mcp.CompleteRequest{Session: req.Session, Params: &local})
	}
	var values []string
	var err error
	what, trim := "", "" // the targets listed, and the sigil a URI leaves out
	switch {
	case ref.Type == "ref/resource" && ref.URI == templateWindows && arg.Name == "name":
		what = "sessions"
		values, err = s.sessionNames(ctx)
	case ref.Type == "ref/resource" && ref.URI == templatePanes && arg.Name == "id":
		what, trim = "windows", "@"
		values, err = s.windowIDs(ctx)
	case ref.Type == "ref/resource" && (ref.URI == templatePane || ref.URI == templateContent) && arg.Name == "id":
		what, trim = "panes", "%"
		values, err = s.paneIDs(ctx)
	case ref.Type == "ref/prompt" && arg.Name == "paneId":
		what = "panes"
		values, err = s.paneIDs(ctx)
	case ref.Type == "ref/prompt" && arg.Name == "sessionName":
		what = "sessions"
		values, err = s.sessionNames(ctx)
	}
	if err != nil {
		return nil, explain("listing "+what+" to complete", err)
	}
	for i, v := range values {
		values[i] = strings.TrimPrefix(v, trim)
	}
	return &mcp.CompleteResult{Completion: completion(values, arg.Value)}, nil
}

// completion keeps the values that start with prefix, sorted and without
// repeats (a linked window is listed once per session), at most
// maxCompletions of them.
func completion(values []string, prefix string) mcp.CompletionResultDetails {
	out := []string{}
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	out = slices.Compact(out)
	d := mcp.CompletionResultDetails{Values: out, Total: len(out)}
	if len(out) > maxCompletions {
		d.Values, d.HasMore = out[:maxCompletions], true
	}
	return d
}
