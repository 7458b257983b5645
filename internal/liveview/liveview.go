// Package liveview serves a read-only web page that lists the sessions and
// panes of tmcp's tmux server and shows one pane live, beside the audit
// lines of the tool calls made on it. Nothing on the page can type into a
// pane: the view reads, and only through tmcp's own connection, streams
// and call log.
//
// The page and its script are static and hold no data; the data come from
// two endpoints under [DataPath], which the caller must guard with the
// same bearer token as MCP. The script sends the token in an Authorization
// header and keeps it in memory only, so it never reaches a URL, a cookie
// or the browser's storage.
package liveview

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/tmcp/tmcp/internal/mcpserver"
	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

// Paths the view serves: the page, its assets, and its data (PanesPath,
// EventsPath), which need the token.
const (
	PagePath   = "/"
	AssetsPath = "/live/"
	DataPath   = "/live/api/"
	PanesPath  = DataPath + "panes"
	EventsPath = DataPath + "events"
)

const (
	// maxStreams bounds the panes shown live at once, across all viewers:
	// each holds a pane stream and a goroutine.
	maxStreams = 8
	// streamLinger keeps a pane's stream after its viewer leaves, so that
	// a reload continues on the same stream.
	streamLinger = 5 * time.Second
	// listTimeout bounds the listing of the panes.
	listTimeout = 5 * time.Second
)

// contentSecurityPolicy lets the page load its own script and style and
// talk to its own server, and nothing else: no inline script, no frame,
// no form submission.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed static
var static embed.FS

// assets are the files the page loads, by path, with their types.
var assets = map[string]struct{ file, contentType string }{
	PagePath:                {"static/index.html", "text/html; charset=utf-8"},
	AssetsPath + "live.js":  {"static/live.js", "text/javascript; charset=utf-8"},
	AssetsPath + "live.css": {"static/live.css", "text/css; charset=utf-8"},
}

// paneID is the form of a pane id the events endpoint takes: a pane, not
// any tmux target.
var paneID = regexp.MustCompile(`^%[0-9]+$`)

// View serves the live view of one tmcp server.
type View struct {
	tmux     *tmux.Client
	hub      *pane.Hub
	calls    *mcpserver.CallLog
	stopping context.Context // done when the server stops: live streams end
	streams  chan struct{}   // a slot per live stream
}

// New returns the view of srv's tmux server, streams and calls. Its live
// streams end when stopping is done.
func New(stopping context.Context, srv *mcpserver.Server) *View {
	return &View{tmux: srv.Tmux(), hub: srv.Hub(), calls: srv.Calls(), stopping: stopping, streams: make(chan struct{}, maxStreams)}
}

// Page serves the page and its assets, which hold no data and need no
// token; any other path is not found.
func (v *View) Page() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "tmcp: the live view is read-only", http.StatusMethodNotAllowed)
			return
		}
		b, err := static.ReadFile(a.file)
		if err != nil {
			http.Error(w, "tmcp: "+err.Error(), http.StatusInternalServerError)
			return
		}
		secure(w)
		w.Header().Set("Content-Type", a.contentType)
		w.Write(b)
	})
}

// Data serves the data endpoints; the caller guards them with the token.
func (v *View) Data() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PanesPath, v.servePanes)
	mux.HandleFunc("GET "+EventsPath, v.serveEvents)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secure(w)
		mux.ServeHTTP(w, r)
	})
}

// secure sets the headers every response of the view carries.
func secure(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// PaneEntry is one pane as the page lists it.
type PaneEntry struct {
	ID          string `json:"id"`
	Session     string `json:"session"`
	WindowIndex int    `json:"windowIndex"`
	WindowName  string `json:"windowName"`
	Index       int    `json:"index"`
	Command     string `json:"command"`
	Title       string `json:"title"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	Active      bool   `json:"active"`
	Dead        bool   `json:"dead"`
}

func (v *View) servePanes(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), listTimeout)
	defer cancel()
	panes, err := v.tmux.ListPanes(ctx, "", "")
	if err != nil {
		http.Error(w, "tmcp: listing the panes: "+err.Error(), http.StatusBadGateway)
		return
	}
	out := make([]PaneEntry, 0, len(panes))
	for _, p := range panes {
		out = append(out, PaneEntry{ID: p.ID, Session: p.SessionName, WindowIndex: p.WindowIndex, WindowName: p.WindowName,
			Index: p.Index, Command: p.Command, Title: p.Title, Width: p.Width, Height: p.Height, Active: p.Active, Dead: p.Dead})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"panes": out})
}

func (v *View) serveEvents(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("pane")
	if !paneID.MatchString(id) {
		http.Error(w, fmt.Sprintf("tmcp: pane %q: want a pane id such as %%3", id), http.StatusBadRequest)
		return
	}
	select {
	case v.streams <- struct{}{}:
		defer func() { <-v.streams }()
	default:
		w.Header().Set("Retry-After", "5")
		http.Error(w, fmt.Sprintf("tmcp: %d panes are shown live already, the most the live view allows", maxStreams), http.StatusServiceUnavailable)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(v.stopping, cancel)()
	info, err := v.tmux.PaneInfo(ctx, id)
	if err != nil {
		http.Error(w, "tmcp: "+err.Error(), http.StatusNotFound)
		return
	}
	stream, release, err := v.hub.Acquire(ctx, id, streamLinger)
	if err != nil {
		http.Error(w, "tmcp: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer release()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	f := &follower{view: v, out: newEventWriter(w), stream: stream, pane: info}
	f.follow(ctx)
}
