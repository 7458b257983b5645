// Package record writes asciicast files of pane output: what each recorded
// pane wrote, as tmux's control mode delivered it, with its real timing,
// its resizes, and a marker at each moment tmcp typed into the pane or
// began or ended a wait on it, so that `asciinema play` replays an agent's
// session with its steps as chapter marks.
//
// A [Recorder] follows the panes of one tmux server as a [pane.Observer]:
// with [Options.All] it records every pane while tmcp streams it; [Recorder.Start]
// records one pane until [Recorder.Stop]. Files are written as events come,
// one line each, bounded in size by starting a new file (with its own
// header); a disk that cannot keep up loses output, never holds up the
// stream.
package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

// DefaultMaxBytes bounds one file of a recording unless Options say
// otherwise; past it the recording goes on in a new file.
const DefaultMaxBytes = 64 << 20

// maxLabel bounds a marker's label, in bytes.
const maxLabel = 120

// Options say what a Recorder records and where.
type Options struct {
	// Dir is where the files go. Empty: DefaultDir, made when a first
	// recording begins.
	Dir string
	// All records every pane for as long as tmcp streams it (--record);
	// otherwise only the panes given to Start.
	All bool
	// MaxBytes bounds one file; 0 means DefaultMaxBytes.
	MaxBytes int64
	// Host names the remote host whose panes these are in titles and file
	// names; empty for the local tmux.
	Host string
	// Errors hears of a recording that stopped because it could not be
	// written; nil: nobody.
	Errors io.Writer
}

// A Recorder records the panes of one tmux server. It is safe for
// concurrent use.
type Recorder struct {
	opts   Options
	create func(string) (io.WriteCloser, error) // opens a file; tests replace it

	mu      sync.Mutex
	panes   map[string]*recording
	stopped map[string]bool // panes Stop was called for: not recorded under All until Start
	closed  bool
}

// New returns a Recorder. It touches no file: see [PrepareDir].
func New(opts Options) *Recorder {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	return &Recorder{opts: opts, create: openFile, panes: map[string]*recording{}, stopped: map[string]bool{}}
}

// DefaultDir is where recordings go when no directory was given:
// $XDG_STATE_HOME/tmcp/recordings, or ~/.local/state/tmcp/recordings.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "tmcp", "recordings"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding a directory for recordings: %w", err)
	}
	return filepath.Join(home, ".local", "state", "tmcp", "recordings"), nil
}

// PrepareDir makes dir if needed and checks that files can be made in it,
// returning its absolute path.
func PrepareDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("recording directory %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("recording directory: %w", err)
	}
	probe, err := os.CreateTemp(abs, ".tmcp-probe-*")
	if err != nil {
		return "", fmt.Errorf("recording directory %s cannot be written: %w", abs, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return abs, nil
}

// Streaming records a pane whose stream begins, under Options.All.
func (r *Recorder) Streaming(s *pane.Stream, p tmux.Pane) {
	if !r.opts.All {
		return
	}
	r.mu.Lock()
	skip := r.closed || r.stopped[p.ID]
	r.mu.Unlock()
	if skip {
		return
	}
	if _, err := r.record(s, p, nil); err != nil && r.opts.Errors != nil {
		fmt.Fprintf(r.opts.Errors, "tmcp: %v\n", err)
	}
}

// Typing marks, in a pane's recording, that tmcp is about to type into it,
// labelled with the call doing it (see [WithCall]): once per call and pane.
func (r *Recorder) Typing(ctx context.Context, paneID string) {
	rec := r.recording(paneID)
	if rec == nil {
		return
	}
	if c := callOf(ctx); c == nil || c.firstTyping(paneID) {
		markIn(ctx, rec, c.label())
	}
}

// Seen writes a resize event when a recorded pane's size changed.
func (r *Recorder) Seen(p tmux.Pane) {
	if rec := r.recording(p.ID); rec != nil {
		rec.resize(p.Width, p.Height)
	}
}

// Start records pane p, whose stream is s, until Stop, and returns the
// file being written. release lets go of s: it is called when the
// recording stops or s ends.
func (r *Recorder) Start(s *pane.Stream, p tmux.Pane, release func()) (string, error) {
	r.mu.Lock()
	delete(r.stopped, p.ID)
	r.mu.Unlock()
	return r.record(s, p, release)
}

// record records s, continuing the pane's recording if it has one.
func (r *Recorder) record(s *pane.Stream, p tmux.Pane, release func()) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		if release != nil {
			release()
		}
		return "", errors.New("recording: tmcp is shutting down")
	}
	rec := r.panes[p.ID]
	if rec == nil || rec.isStopped() {
		var err error
		if rec, err = r.begin(p); err != nil {
			if release != nil {
				release()
			}
			return "", err
		}
		r.panes[p.ID] = rec
	}
	if rec.recording(s) {
		if release != nil {
			rec.hold(release)
		}
	} else {
		rec.attach(s, release)
		rec.resize(p.Width, p.Height) // it may have changed while it was not watched
		go r.follow(rec, s)
	}
	path, _ := rec.position()
	return path, nil
}

// follow ends the recording of s when s ends: a recording that held s
// stops, one under All waits for the pane's next stream.
func (r *Recorder) follow(rec *recording, s *pane.Stream) {
	select {
	case <-s.Done():
	case <-rec.done:
		return
	}
	_, reason := s.Closed()
	stopping := func() { rec.mark("tmcp stopped recording: " + reason) }
	if held := rec.detach(s, stopping); held {
		r.mu.Lock()
		if r.panes[rec.paneID] == rec {
			delete(r.panes, rec.paneID)
		}
		r.mu.Unlock()
		rec.stop()
	}
}

// begin makes the recording of pane p. It runs with r.mu held.
func (r *Recorder) begin(p tmux.Pane) (*recording, error) {
	dir := r.opts.Dir
	if dir == "" {
		d, err := DefaultDir()
		if err != nil {
			return nil, err
		}
		if dir, err = PrepareDir(d); err != nil {
			return nil, err
		}
	}
	host := r.opts.Host
	where := host
	if where == "" {
		where, _ = os.Hostname()
	}
	stamp := time.Now().UTC().Format("20060102T150405.000Z")
	parts := []string{stamp}
	if host != "" {
		parts = append(parts, name(host))
	}
	parts = append(parts, name(p.SessionName), "pane"+strings.TrimPrefix(p.ID, "%"))
	base := filepath.Join(dir, strings.Join(parts, "-"))
	title := fmt.Sprintf("tmcp: pane %s of session %s on %s", p.ID, p.SessionName, where)
	return newRecording(p.ID, base, title, p.Width, p.Height, r.opts.MaxBytes, r.create, func(err error) {
		if r.opts.Errors != nil {
			fmt.Fprintf(r.opts.Errors, "tmcp: %v\n", err)
		}
	})
}

// Stop ends the recording of a pane, and under Options.All keeps it from
// being recorded again until Start. It returns the last file written, or
// "" if the pane was not being recorded.
func (r *Recorder) Stop(paneID string) string {
	r.mu.Lock()
	rec := r.panes[paneID]
	delete(r.panes, paneID)
	r.stopped[paneID] = true
	r.mu.Unlock()
	if rec == nil {
		return ""
	}
	rec.mark("tmcp stopped recording")
	return rec.stop()
}

// Close stops every recording, writing what is queued.
func (r *Recorder) Close() {
	r.mu.Lock()
	r.closed = true
	panes := r.panes
	r.panes = map[string]*recording{}
	r.mu.Unlock()
	for _, rec := range panes {
		rec.stop()
	}
}

// Recording reports whether any pane is being recorded now.
func (r *Recorder) Recording() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.panes) > 0
}

// recording returns the live recording of a pane, or nil.
func (r *Recorder) recording(paneID string) *recording {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec := r.panes[paneID]; rec != nil && rec.streaming() {
		return rec
	}
	return nil
}

// A Ref is where a call's events begin in a recording.
type Ref struct {
	PaneID string `json:"paneId"`
	File   string `json:"file"`
	Offset int64  `json:"offset"` // of the line, in bytes
}

// Mark writes a marker labelled label in the recording of a pane, if it
// is being recorded, and notes where in the call of ctx.
func (r *Recorder) Mark(ctx context.Context, paneID, label string) {
	if rec := r.recording(paneID); rec != nil {
		markIn(ctx, rec, label)
	}
}

// markIn writes a marker in rec and notes where in the call of ctx.
func markIn(ctx context.Context, rec *recording, label string) {
	if path, off, ok := rec.mark(shorten(label)); ok {
		callOf(ctx).note(Ref{PaneID: rec.paneID, File: path, Offset: off})
	}
}

// Note notes in the call of ctx where the recording of a pane stands, if
// it is being recorded and the call has no marker there yet.
func (r *Recorder) Note(ctx context.Context, paneID string) {
	if rec := r.recording(paneID); rec != nil {
		path, off := rec.position()
		callOf(ctx).note(Ref{PaneID: paneID, File: path, Offset: off})
	}
}

// A Call is a tool call as recordings see it: what its markers say, and
// where in which recordings they went.
type Call struct {
	tool, args string

	mu     sync.Mutex
	refs   []Ref
	typing map[string]bool // panes the call has typed into
}

// NewCall returns the Call of tool with its arguments (JSON), which its
// markers show shortened.
func NewCall(tool string, args []byte) *Call {
	if len(args) > maxLabel {
		args = args[:maxLabel+1] // enough to be shortened later
	}
	return &Call{tool: tool, args: string(args)}
}

type callKey struct{}

// WithCall returns a context that carries c to the Recorder's markers.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

func callOf(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// Refs returns where the call's events begin in each recording it
// touched, in the order it touched them.
func (c *Call) Refs() []Ref {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Ref(nil), c.refs...)
}

// label is what the call's markers say: the tool and its arguments.
func (c *Call) label() string {
	if c == nil {
		return "tmcp typed"
	}
	args := strings.Join(strings.Fields(c.args), " ")
	if args == "" || args == "{}" || args == "null" {
		return c.tool
	}
	return c.tool + " " + args
}

// Label is the label of a marker for a wait beginning in ctx's call.
func Label(ctx context.Context) string {
	if c := callOf(ctx); c != nil {
		return c.label()
	}
	return "wait began"
}

// EndLabel is the label of a marker for a wait of ctx's call ending with
// outcome.
func EndLabel(ctx context.Context, outcome string) string {
	if c := callOf(ctx); c != nil {
		return c.tool + " ended: " + outcome
	}
	return "wait ended: " + outcome
}

// note keeps the first ref of each pane.
func (c *Call) note(ref Ref) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.refs {
		if r.PaneID == ref.PaneID {
			return
		}
	}
	c.refs = append(c.refs, ref)
}

// firstTyping reports whether this is the call's first typing into a pane.
func (c *Call) firstTyping(paneID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.typing[paneID] {
		return false
	}
	if c.typing == nil {
		c.typing = map[string]bool{}
	}
	c.typing[paneID] = true
	return true
}

// shorten cuts a label to maxLabel bytes, on a character boundary.
func shorten(s string) string {
	if len(s) <= maxLabel {
		return s
	}
	cut := maxLabel - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
