package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/record"
	"github.com/tmcp/tmcp/internal/wait"
)

// A call reaches a remote host in one of two ways: a "host" argument
// naming it, or ids that a remote host's replies carried, prefixed with
// its name ("build:%3"). The route middleware takes both off the
// arguments, so every tool below sees plain ids, runs the call on that
// host's view of the server (its own tmux client, streams and jobs), and
// prefixes the ids of the reply again. Nothing in a call reaches ssh: the
// host is looked up among the names the operator configured.

// hostArg is the argument naming a host.
const hostArg = "host"

// idKeys are the argument and reply fields whose values name something
// of one tmux server (panes, windows, sessions, jobs, cursors): prefixed
// with their host's name in a remote host's replies. A session name can
// be prefixed too: tmux never leaves a ':' in one.
var idKeys = map[string]bool{
	"paneId": true, "windowId": true, "sessionId": true, "targetPaneId": true,
	"jobId": true, "cursor": true, "nextCursor": true, "sessionName": true,
}

// hostOnlyOutputs are the result fields that only remote hosts can fill:
// without hosts they are left out of the output schemas, which are then
// as small as before hosts existed.
var hostOnlyOutputs = map[string][]string{"list_sessions": {"unreachable"}}

// hostViews holds one Server per remote host, made on its first call and
// shared by the tier views of the server.
type hostViews struct {
	mu    sync.Mutex
	views map[string]*Server
}

type routeKey struct{}

// localOnlyKey marks a call that named the local server explicitly.
type localOnlyKey struct{}

// localOnly reports whether a call named the local server explicitly.
func localOnly(ctx context.Context) bool {
	b, _ := ctx.Value(localOnlyKey{}).(bool)
	return b
}

// HostError is a remote host a listing could not reach, and why.
type HostError struct {
	Host  string `json:"host"`
	Error string `json:"error"`
}

// remoteShare is the part of a listing's remaining budget that remote
// hosts may take, so that an unreachable one leaves time for the reply.
const remoteShare = 0.8

// listRemoteSessions adds every remote host's sessions to a listing made
// with no host, their ids prefixed, and the hosts it could not reach in
// time as such rather than as the call's failure.
func (s *Server) listRemoteSessions(ctx context.Context, in listSessionsIn, out *listSessionsOut) {
	names := s.hostNames()
	if len(names) == 0 {
		return
	}
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(float64(time.Until(dl))*remoteShare))
		defer cancel()
	}
	type listing struct {
		out listSessionsOut
		err error
	}
	got := make([]listing, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := s.view(ctx, name)
			if err != nil {
				got[i].err = err
				return
			}
			_, got[i].out, got[i].err = v.listSessions(ctx, nil, in)
		}()
	}
	wg.Wait()
	for i, name := range names {
		if got[i].err != nil {
			out.Unreachable = append(out.Unreachable, HostError{Host: name, Error: got[i].err.Error()})
			continue
		}
		out.Total += got[i].out.Total
		for _, ss := range got[i].out.Sessions {
			ss.SessionID, ss.SessionName = name+":"+ss.SessionID, name+":"+ss.SessionName
			out.Sessions = append(out.Sessions, ss)
		}
	}
}

// routedTo returns the host view a call was routed to, if any.
func routedTo(ctx context.Context) *Server {
	v, _ := ctx.Value(routeKey{}).(*Server)
	return v
}

// hostOf returns the host a call runs on: "" for the local server.
func hostOf(ctx context.Context) string {
	if v := routedTo(ctx); v != nil {
		return v.host
	}
	return ""
}

// view returns the Server of host name, connecting to it first.
func (s *Server) view(ctx context.Context, name string) (*Server, error) {
	s.hostViews.mu.Lock()
	v := s.hostViews.views[name]
	s.hostViews.mu.Unlock()
	if v != nil {
		return v, nil
	}
	tc, err := s.cfg.Hosts.Client(ctx, name)
	if err != nil {
		return nil, err
	}
	s.hostViews.mu.Lock()
	defer s.hostViews.mu.Unlock()
	if v := s.hostViews.views[name]; v != nil {
		return v, nil
	}
	hub := pane.NewHub(tc)
	cfg := s.cfg
	cfg.Hosts = nil
	cfg.Record.Host = name
	rec := record.New(cfg.Record)
	hub.Observe(rec)
	v = &Server{tmux: tc, hub: hub, waits: wait.New(tc, hub, cfg.Ceiling), rec: rec, audit: s.audit, arrivals: &arrivals{},
		// tmcp never runs inside a remote pane: no caller to guard there.
		callers: &callerCache{lock: make(chan struct{}, 1), known: true},
		screens: s.screens, cfg: cfg, host: name, hostViews: &hostViews{}}
	v.keepJobs()
	if cfg.Profiles != nil {
		v.waits.SetProfiles(cfg.Profiles)
	}
	if s.hostViews.views == nil {
		s.hostViews.views = map[string]*Server{}
	}
	s.hostViews.views[name] = v
	return v, nil
}

// closeViews stops the streams and jobs of every host view.
func (s *Server) closeViews() {
	s.hostViews.mu.Lock()
	views := s.hostViews.views
	s.hostViews.views = nil
	s.hostViews.mu.Unlock()
	for _, v := range views {
		v.Close()
	}
}

// hostNames returns the configured remote hosts.
func (s *Server) hostNames() []string {
	if s.cfg.Hosts == nil {
		return nil
	}
	return s.cfg.Hosts.Names()
}

// addHostArg offers the host argument on every tool, when hosts are
// configured; without them the tools stay as they were, byte for byte.
// The argument is a bare string (25 bytes a tool): the instructions list
// the names once, rather than an enum repeating them in every schema.
func (s *Server) addHostArg(defs []toolDef) {
	if len(s.hostNames()) == 0 {
		for _, d := range defs {
			if out, ok := d.tool.OutputSchema.(*outputSchema); ok {
				for _, f := range hostOnlyOutputs[d.tool.Name] {
					delete(out.Properties, f)
				}
			}
		}
		return
	}
	for _, d := range defs {
		for _, in := range []*jsonschema.Schema{d.tool.InputSchema.(*jsonschema.Schema), d.input} {
			if in.Properties == nil {
				in.Properties = map[string]*jsonschema.Schema{}
			}
			in.Properties[hostArg] = &jsonschema.Schema{Type: "string"}
		}
	}
}

// route sends a tools/call to the host it names, by its host argument or
// its ids' prefix, and prefixes the ids of a remote host's reply.
func (s *Server) route(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		params, _ := req.GetParams().(*mcp.CallToolParamsRaw)
		if method != "tools/call" || params == nil || len(s.hostNames()) == 0 || len(params.Arguments) == 0 {
			return next(ctx, method, req)
		}
		var args map[string]any
		if json.Unmarshal(params.Arguments, &args) != nil {
			return next(ctx, method, req)
		}
		host, err := s.takeHost(args)
		if err != nil {
			return toolError(err), nil
		}
		raw, err := json.Marshal(args)
		if err != nil {
			return toolError(err), nil
		}
		params.Arguments = raw
		switch host {
		case "":
			return next(ctx, method, req)
		case "local":
			return next(context.WithValue(ctx, localOnlyKey{}, true), method, req)
		}
		cctx, cancel := context.WithTimeout(ctx, s.budget(params))
		v, err := s.view(cctx, host)
		cancel()
		if err != nil {
			return toolError(fmt.Errorf("%s: %w; other hosts and the local tmux are unaffected", params.Name, err)), nil
		}
		res, err := next(context.WithValue(ctx, routeKey{}, v), method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && err == nil {
			prefixResult(r, host)
		}
		return res, err
	}
}

// takeHost removes the host argument and the host prefixes of ids from
// args, and returns the one host they name ("" for the local server, and
// "local" when the call named it).
func (s *Server) takeHost(args map[string]any) (string, error) {
	host := ""
	explicitLocal := false
	if h, ok := args[hostArg]; ok {
		name, _ := h.(string)
		if name == "local" {
			explicitLocal = true
		}
		if name != "local" && name != "" {
			if _, known := s.cfg.Hosts.Host(name); !known {
				return "", fmt.Errorf("host %q is not configured; configured hosts: %s", h, strings.Join(s.hostNames(), ", "))
			}
			host = name
		}
		delete(args, hostArg)
	}
	explicit := host
	seen := ""
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				str, ok := x.(string)
				if !ok || !idKeys[k] {
					if err := walk(x); err != nil {
						return err
					}
					continue
				}
				name, id, found := strings.Cut(str, ":")
				if !found || s.knownHost(name) == "" {
					continue
				}
				name = s.knownHost(name)
				if seen != "" && seen != name || explicit != "" && name != explicit && name != "local" {
					return fmt.Errorf("%s %q belongs to another host than the call's (%s): a call runs on one host", k, str, or(explicit, seen))
				}
				seen = name
				v[k] = id
			}
		case []any:
			for _, x := range v {
				if err := walk(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(args); err != nil {
		return "", err
	}
	if host == "" && seen != "local" {
		host = seen
	}
	if host == "" && (explicitLocal || seen == "local") {
		host = "local"
	}
	return host, nil
}

// knownHost returns name if it names a configured host or the local one.
func (s *Server) knownHost(name string) string {
	if name == "local" {
		return name
	}
	if _, ok := s.cfg.Hosts.Host(name); ok {
		return name
	}
	return ""
}

// toolError is a failed call's result.
func toolError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}

// prefixResult marks the ids of a remote host's reply with the host's
// name, in the structured result and in the text block that shows it;
// an error names the host.
func prefixResult(r *mcp.CallToolResult, host string) {
	if r.IsError {
		for _, c := range r.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				t.Text = "host " + host + ": " + t.Text
				break
			}
		}
		return
	}
	var fields any // the structured result, before prefixing
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			var v any
			if json.Unmarshal(b, &v) == nil {
				_ = json.Unmarshal(b, &fields)
				prefixIDs(v, host)
				r.StructuredContent = v
			}
		}
	}
	// The first text block is rewritten only where it shows the fields
	// (pane text left out or fenced): text that happens to be JSON stays
	// as it was written.
	if len(r.Content) > 0 && fields != nil {
		if t, ok := r.Content[0].(*mcp.TextContent); ok && strings.HasPrefix(t.Text, "{") {
			var v any
			if json.Unmarshal([]byte(t.Text), &v) == nil && within(v, fields) {
				prefixIDs(v, host)
				if b, err := json.Marshal(v); err == nil {
					t.Text = string(b)
				}
			}
		}
	}
}

// within reports whether the decoded JSON a is b, or b with some object
// keys left out or some strings fenced, at any depth.
func within(a, b any) bool {
	switch a := a.(type) {
	case string:
		text, fenced := Unfence(a)
		return a == b || fenced && text == b
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok {
			return false
		}
		for k, x := range a {
			if y, ok := bm[k]; !ok || !within(x, y) {
				return false
			}
		}
		return true
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return false
		}
		for i := range a {
			if !within(a[i], bs[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// prefixIDs prefixes every id field in v with host and ":".
func prefixIDs(v any, host string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if str, ok := x.(string); ok && idKeys[k] && str != "" {
				v[k] = host + ":" + str
				continue
			}
			prefixIDs(x, host)
		}
	case []any:
		for _, x := range v {
			prefixIDs(x, host)
		}
	}
}
