package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmcp/tmcp/internal/hosts"
	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

const (
	// maxBatchKeys and maxBatchKeyBytes bound one send_keys_batch call.
	maxBatchKeys     = 256
	maxBatchKeyBytes = 64 << 10
	// maxBufferName bounds a buffer name, in bytes.
	maxBufferName = 128
	// maxLoadBytes bounds the text load_buffer takes.
	maxLoadBytes = 1 << 20
	// maxListedBuffers bounds the buffer names a reply or an error lists.
	maxListedBuffers = 20
	// maxServers bounds the sockets list_servers probes.
	maxServers = 64
	// probeTimeout bounds the probe of one server: a wedged one is reported
	// as not answering instead of holding the call.
	probeTimeout = 2 * time.Second
)

// bufferTools returns send_keys_batch, the paste buffers and list_servers.
func (s *Server) bufferTools() []toolDef {
	return []toolDef{
		define(&mcp.Tool{Name: "send_keys_batch", Title: "Send a key sequence", Annotations: mutating(false),
			Description: "Keys in order, no Enter added (Escape, :wq, Enter): pagers, editors."}, s.sendKeysBatch),
		define(&mcp.Tool{Name: "load_buffer", Title: "Load a paste buffer", Annotations: mutating(false),
			Description: "Put exact text into a paste buffer."}, s.loadBuffer),
		define(&mcp.Tool{Name: "paste_buffer", Title: "Paste a buffer", Annotations: mutating(false),
			Description: "Paste a tmux buffer into a pane (buffer kept)."}, s.pasteBuffer),
		define(&mcp.Tool{Name: "show_buffer", Title: "Show a paste buffer", Annotations: readOnly(),
			Description: "A paste buffer's text (its end); no name: the latest, and all names."}, s.showBuffer),
		define(&mcp.Tool{Name: "delete_buffer", Title: "Delete a paste buffer", Annotations: destructive(),
			Description: "Delete a paste buffer."}, s.deleteBuffer),
		define(&mcp.Tool{Name: "list_servers", Title: "List tmux servers", Annotations: readOnly(),
			Description: "This user's tmux sockets: live or stale, sessions, tmcp's own."}, s.listServers),
	}
}

type sendKeysBatchIn struct {
	PaneID string   `json:"paneId,omitempty"`
	Keys   []string `json:"keys"`
}

// keysOut says how many keys went to which pane.
type keysOut struct {
	PaneID   string `json:"paneId"`
	Keys     int    `json:"keys"`
	IsCaller bool   `json:"isCaller,omitempty"`
}

func (s *Server) sendKeysBatch(ctx context.Context, req *mcp.CallToolRequest, in sendKeysBatchIn) (*mcp.CallToolResult, keysOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, keysOut{}, err
	}
	if err := checkKeys(in.Keys); err != nil {
		return nil, keysOut{}, fmt.Errorf("nothing sent to pane %s: %w", id, err)
	}
	isCaller, ask, err := s.guardCaller(ctx, req, scopePane, id, "type into pane "+id, false)
	if ask != nil || err != nil {
		return ask, keysOut{}, err
	}
	if err := s.hub.Keys(ctx, id, in.Keys...); err != nil {
		return nil, keysOut{}, explain("sending keys to pane "+id, err)
	}
	return nil, keysOut{PaneID: id, Keys: len(in.Keys), IsCaller: isCaller}, nil
}

// checkKeys refuses an empty or oversized key list, or an empty key.
func checkKeys(keys []string) error {
	if len(keys) == 0 {
		return errors.New("keys is empty; give key names like [\"q\"] or [\"Escape\", \":wq\", \"Enter\"]")
	}
	if len(keys) > maxBatchKeys {
		return fmt.Errorf("%d keys, more than %d in one call; split them over several calls", len(keys), maxBatchKeys)
	}
	size := 0
	for i, k := range keys {
		if k == "" {
			return fmt.Errorf("keys[%d] is empty", i)
		}
		if strings.IndexByte(k, 0) >= 0 {
			return fmt.Errorf("keys[%d] holds a NUL byte, which tmux cannot take", i)
		}
		size += len(k)
	}
	if size > maxBatchKeyBytes {
		return fmt.Errorf("keys total %d bytes, more than %d; use paste_text for long text", size, maxBatchKeyBytes)
	}
	return nil
}

// bufferOut names the buffer a buffer tool used, and its size.
type bufferOut struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

// pasteOut says which buffer was pasted into which pane.
type pasteOut struct {
	bufferOut
	PaneID   string `json:"paneId"`
	IsCaller bool   `json:"isCaller,omitempty"`
}

// findBuffer returns the buffer called name, or the most recent one when
// name is empty, with every buffer (most recent first). A missing buffer
// is an error naming it and the buffers there are.
func (s *Server) findBuffer(ctx context.Context, name string) (tmux.Buffer, []tmux.Buffer, error) {
	if name != "" {
		if err := checkText("buffer name", name, maxBufferName); err != nil {
			return tmux.Buffer{}, nil, err
		}
	}
	all, err := s.tmux.ListBuffers(ctx)
	if err != nil {
		return tmux.Buffer{}, nil, explain("listing paste buffers", err)
	}
	if len(all) == 0 {
		what := "there are no paste buffers"
		if name != "" {
			what = fmt.Sprintf("no buffer %q: there are no paste buffers", name)
		}
		return tmux.Buffer{}, nil, fmt.Errorf("%s; call load_buffer to make one", what)
	}
	if name == "" {
		return all[0], all, nil
	}
	for _, b := range all {
		if b.Name == name {
			return b, all, nil
		}
	}
	return tmux.Buffer{}, nil, fmt.Errorf("no buffer %q; the buffers are %s; call show_buffer with no name to list them", name, bufferNames(all))
}

// bufferNames quotes the first buffer names for a message.
func bufferNames(all []tmux.Buffer) string {
	return firstIDs(idsOf(all, func(b tmux.Buffer) string { return strconv.Quote(b.Name) }))
}

type loadBufferIn struct {
	Name string `json:"name,omitempty"`
	Text string `json:"text"`
}

func (s *Server) loadBuffer(ctx context.Context, _ *mcp.CallToolRequest, in loadBufferIn) (*mcp.CallToolResult, bufferOut, error) {
	if in.Name != "" {
		if err := checkText("buffer name", in.Name, maxBufferName); err != nil {
			return nil, bufferOut{}, err
		}
	}
	switch {
	case in.Text == "":
		return nil, bufferOut{}, errors.New("text is empty: a tmux buffer cannot be empty; call delete_buffer to remove one")
	case len(in.Text) > maxLoadBytes:
		return nil, bufferOut{}, fmt.Errorf("text is %d bytes, more than %d", len(in.Text), maxLoadBytes)
	case strings.IndexByte(in.Text, 0) >= 0:
		return nil, bufferOut{}, errors.New("text holds a NUL byte, which tmux cannot take in a command")
	}
	if err := s.tmux.SetBuffer(ctx, in.Name, in.Text); err != nil {
		return nil, bufferOut{}, explain("loading buffer "+orNew(in.Name), err)
	}
	name := in.Name
	if name == "" {
		// tmux named it: it is now the most recent buffer.
		b, _, err := s.findBuffer(ctx, "")
		if err != nil {
			return nil, bufferOut{}, fmt.Errorf("the buffer was loaded, but finding its name failed: %w", err)
		}
		name = b.Name
	}
	return nil, bufferOut{Name: name, Bytes: len(in.Text)}, nil
}

func orNew(name string) string {
	if name == "" {
		return "(new)"
	}
	return fmt.Sprintf("%q", name)
}

type pasteBufferIn struct {
	PaneID    string `json:"paneId,omitempty"`
	Name      string `json:"name,omitempty"`
	Bracketed *bool  `json:"bracketed,omitempty" jsonschema:"default true"`
}

func (s *Server) pasteBuffer(ctx context.Context, req *mcp.CallToolRequest, in pasteBufferIn) (*mcp.CallToolResult, pasteOut, error) {
	id, err := s.pane(ctx, in.PaneID)
	if err != nil {
		return nil, pasteOut{}, err
	}
	b, _, err := s.findBuffer(ctx, in.Name)
	if err != nil {
		return nil, pasteOut{}, err
	}
	isCaller, ask, err := s.guardCaller(ctx, req, scopePane, id, "paste into pane "+id, false)
	if ask != nil || err != nil {
		return ask, pasteOut{}, err
	}
	if err := s.hub.PasteBuffer(ctx, id, b.Name, b.Size, in.Bracketed == nil || *in.Bracketed); err != nil {
		return nil, pasteOut{}, explain(fmt.Sprintf("pasting buffer %q into pane %s", b.Name, id), err)
	}
	return nil, pasteOut{bufferOut: bufferOut{Name: b.Name, Bytes: b.Size}, PaneID: id, IsCaller: isCaller}, nil
}

type showBufferIn struct {
	Name     string `json:"name,omitempty"`
	MaxBytes int    `json:"maxBytes,omitempty"`
}

type showBufferOut struct {
	Name         string `json:"name"`
	Truncated    bool   `json:"truncated"`
	DroppedBytes int    `json:"droppedBytes,omitempty"`
	// Buffers lists every buffer, most recent first, when no name was given.
	Buffers []string `json:"buffers,omitempty"`
}

func (s *Server) showBuffer(ctx context.Context, _ *mcp.CallToolRequest, in showBufferIn) (*mcp.CallToolResult, showBufferOut, error) {
	b, all, err := s.findBuffer(ctx, in.Name)
	if err != nil {
		return nil, showBufferOut{}, err
	}
	text, err := s.tmux.ShowBuffer(ctx, b.Name, b.Size)
	if err != nil {
		return nil, showBufferOut{}, explain(fmt.Sprintf("reading buffer %q", b.Name), err)
	}
	_, maxBytes := limits(0, in.MaxBytes)
	text, dropped := pane.TailBytes(text, maxBytes)
	out := showBufferOut{Name: b.Name, Truncated: dropped > 0, DroppedBytes: dropped}
	if in.Name == "" {
		for i, other := range all {
			if i == maxListedBuffers {
				break
			}
			out.Buffers = append(out.Buffers, other.Name)
		}
	}
	return textResult(out, text), out, nil
}

type deleteBufferIn struct {
	Name string `json:"name"`
}

func (s *Server) deleteBuffer(ctx context.Context, _ *mcp.CallToolRequest, in deleteBufferIn) (*mcp.CallToolResult, bufferOut, error) {
	if in.Name == "" {
		return nil, bufferOut{}, errors.New("name is required; call show_buffer with no name to list the buffers")
	}
	b, _, err := s.findBuffer(ctx, in.Name)
	if err != nil {
		return nil, bufferOut{}, err
	}
	if err := s.tmux.DeleteBuffer(ctx, b.Name); err != nil {
		return nil, bufferOut{}, explain(fmt.Sprintf("deleting buffer %q", b.Name), err)
	}
	return nil, bufferOut{Name: b.Name, Bytes: b.Size}, nil
}

// Server states list_servers reports.
const (
	stateLive         = "live"          // answers
	stateStale        = "stale"         // a socket file with no server behind it
	stateNotAnswering = "not answering" // a server that did not answer in time
	stateUnreachable  = "unreachable"   // could not be asked (see error)
)

// ServerInfo is one tmux server socket of this user.
type ServerInfo struct {
	Path     string `json:"path"`
	State    string `json:"state"`
	Sessions int    `json:"sessions"`
	Current  bool   `json:"current,omitempty"`
}

type listServersOut struct {
	Servers []ServerInfo `json:"servers"`
	More    int          `json:"more,omitempty" jsonschema:"sockets not probed"`
}

func (s *Server) listServers(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, listServersOut, error) {
	found, more, err := hosts.Servers(ctx, s.tmux, probeTimeout, maxServers)
	if err != nil {
		return nil, listServersOut{}, err
	}
	out := listServersOut{Servers: make([]ServerInfo, len(found)), More: more}
	for i, f := range found {
		out.Servers[i] = ServerInfo{Path: f.Path, Sessions: f.Sessions, Current: f.Current, State: serverState(f.Err)}
	}
	return nil, out, nil
}

// serverState reads a probe's outcome as a state; an unexpected failure
// carries its message.
func serverState(err error) string {
	var ce *tmux.CommandError
	switch {
	case err == nil:
		return stateLive
	case errors.Is(err, tmux.ErrNoAnswer):
		return stateNotAnswering
	case strings.Contains(err.Error(), "no server running"):
		return stateStale
	case errors.As(err, &ce):
		return stateUnreachable + ": " + ce.Message
	}
	return stateUnreachable + ": " + err.Error()
}
