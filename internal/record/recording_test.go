package record

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

// readCast reads an asciicast v2 file, failing the test unless it is one
// (see Read).
func readCast(t *testing.T, path string) (Header, []Event) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, events, err := Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return h, events
}

// output joins the data of a recording's output events.
func output(events []Event) string {
	var b strings.Builder
	for _, e := range events {
		if e.Code == "o" {
			b.WriteString(e.Data)
		}
	}
	return b.String()
}

// codes lists the codes and, for markers and resizes, the data of events.
func codes(events []Event) []string {
	var out []string
	for _, e := range events {
		if e.Code == "o" {
			out = append(out, "o")
		} else {
			out = append(out, e.Code+" "+e.Data)
		}
	}
	return out
}

func testPane(id string) tmux.Pane {
	return tmux.Pane{ID: id, SessionName: "main", Width: 80, Height: 24}
}

func TestARecordingKeepsTheOutputItsMarkersAndResizesInOrder(t *testing.T) {
	dir := t.TempDir()
	r := New(Options{Dir: dir})
	s := pane.NewStream("%3", 1, 0)
	path, err := r.Start(s, testPane("%3"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(path, dir+string(filepath.Separator)) || !strings.HasSuffix(path, "-main-pane3.cast") {
		t.Errorf("recording file %q: want it in %s, named for session main and pane 3", path, dir)
	}
	ctx := WithCall(t.Context(), NewCall("send_keys", []byte(`{"keys":"ls"}`)))
	s.Write([]byte("before\r\n"))
	r.Typing(ctx, "%3")
	r.Typing(ctx, "%3") // the same call typing again: no second marker
	s.Write([]byte("caf\xc3"))
	s.Write([]byte("\xa9\r\n"))
	r.Seen(tmux.Pane{ID: "%3", Width: 100, Height: 30})
	r.Seen(tmux.Pane{ID: "%3", Width: 100, Height: 30})
	r.Mark(ctx, "%3", EndLabel(ctx, "matched"))
	if got := r.Stop("%3"); got != path {
		t.Errorf("Stop returned %q, want %q", got, path)
	}
	s.Write([]byte("after stop\r\n"))

	h, events := readCast(t, path)
	if h.Width != 80 || h.Height != 24 || !strings.Contains(h.Title, "%3") || !strings.Contains(h.Title, "main") {
		t.Errorf("header %+v: want 80x24 and a title naming pane %%3 and session main", h)
	}
	if got, want := output(events), "before\r\ncafé\r\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	want := []string{"o", `m send_keys {"keys":"ls"}`, "o", "o", "r 100x30", "m send_keys ended: matched", "m tmcp stopped recording"}
	if got := codes(events); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events %q, want %q", got, want)
	}
	refs := callOf(ctx).Refs()
	if len(refs) != 1 || refs[0].File != path || refs[0].PaneID != "%3" {
		t.Fatalf("refs %+v, want one to %s", refs, path)
	}
	b, _ := os.ReadFile(path)
	if line, _, _ := strings.Cut(string(b[refs[0].Offset:]), "\n"); !strings.Contains(line, `"m", "send_keys`) {
		t.Errorf("the call's offset %d points at %q, want its first marker", refs[0].Offset, line)
	}
}

func TestARemoteHostsRecordingIsNamedForIt(t *testing.T) {
	r := New(Options{Dir: t.TempDir(), Host: "build"})
	path, err := r.Start(pane.NewStream("%1", 1, 0), testPane("%1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	h, _ := readCast(t, path)
	if !strings.HasSuffix(path, "-build-main-pane1.cast") || !strings.HasSuffix(h.Title, "on build") {
		t.Errorf("file %q, title %q: want both to name host build", path, h.Title)
	}
}

func TestLabelsAreTheToolAndItsArgumentsShortened(t *testing.T) {
	long := `{"command":"` + strings.Repeat("x", 300) + `"}`
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"list_panes", "{}", "list_panes"},
		{"list_panes", "", "list_panes"},
		{"send_keys", "{\n  \"keys\": \"ls\"\n}", `send_keys { "keys": "ls" }`},
		{"run_command", long, shorten("run_command " + long[:maxLabel+1])},
	} {
		ctx := WithCall(t.Context(), NewCall(tc.tool, []byte(tc.args)))
		if got := shorten(Label(ctx)); got != tc.want {
			t.Errorf("label of %s %q = %q, want %q", tc.tool, tc.args, got, tc.want)
		}
		if got := shorten(Label(ctx)); len(got) > maxLabel {
			t.Errorf("label of %s is %d bytes, over %d", tc.tool, len(got), maxLabel)
		}
	}
}

func TestARecordingStartsANewFileWithItsOwnHeaderPastMaxBytes(t *testing.T) {
	dir := t.TempDir()
	const maxBytes = 400
	r := New(Options{Dir: dir, MaxBytes: maxBytes})
	s := pane.NewStream("%1", 1, 0)
	path, err := r.Start(s, testPane("%1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for i := range 60 {
		line := fmt.Sprintf("line %02d of the output\r\n", i)
		all.WriteString(line)
		s.Write([]byte(line))
	}
	r.Stop("%1")

	base := strings.TrimSuffix(path, ".cast")
	files, _ := filepath.Glob(filepath.Join(dir, "*.cast"))
	if len(files) < 4 {
		t.Fatalf("%d files for %d bytes of output at %d bytes a file: %q", len(files), all.Len(), maxBytes, files)
	}
	var got strings.Builder
	for i := range files {
		name := PartPath(base, i+1)
		info, err := os.Stat(name)
		if err != nil {
			t.Fatalf("part %d: %v (files %q)", i+1, err, files)
		}
		if info.Size() > maxBytes {
			t.Errorf("part %s is %d bytes, over %d", name, info.Size(), maxBytes)
		}
		h, events := readCast(t, name)
		if h.Width != 80 || len(events) == 0 || events[0].Time > 1 {
			t.Errorf("part %s: header %+v, first event %+v; want its own header and times from its own start", name, h, events)
		}
		got.WriteString(output(events))
	}
	if got.String() != all.String() {
		t.Errorf("the parts hold %q, want %q", got.String(), all.String())
	}
}

// stalledFile is a file whose writes wait until it is let go.
type stalledFile struct {
	io.WriteCloser
	stalled chan struct{}
}

func (f *stalledFile) Write(p []byte) (int, error) {
	<-f.stalled
	return f.WriteCloser.Write(p)
}

func TestASlowDiskDropsOutputAndSaysHowMuchInsteadOfStallingTheStream(t *testing.T) {
	dir := t.TempDir()
	r := New(Options{Dir: dir})
	stalled := make(chan struct{})
	r.create = func(path string) (io.WriteCloser, error) {
		f, err := openFile(path)
		return &stalledFile{WriteCloser: f, stalled: stalled}, err
	}
	s := pane.NewStream("%2", 1, 0)
	path, err := r.Start(s, testPane("%2"), nil)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("y\r\n"), 1<<10)
	const writes = 3 * maxQueued / (3 << 10) // three times what may wait
	// The writes end while the disk is still stalled: none waits for it.
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for range writes {
			s.Write(chunk)
		}
	}()
	select {
	case <-wrote:
	case <-time.After(30 * time.Second):
		close(stalled)
		t.Fatalf("writing %d bytes to a stream recorded on a stalled disk did not end", writes*len(chunk))
	}
	close(stalled)
	rec := r.recording("%2")
	waitUntil(t, "the disk to catch up", func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return rec.queued == 0 })
	s.Write([]byte("end\r\n"))
	r.Stop("%2")

	_, events := readCast(t, path)
	recorded := len(output(events))
	var dropped int
	for _, e := range events {
		if e.Code == "m" && strings.HasPrefix(e.Data, "tmcp dropped") {
			fmt.Sscanf(e.Data, "tmcp dropped %d bytes", &dropped)
		}
	}
	if dropped == 0 || recorded+dropped != writes*len(chunk)+len("end\r\n") {
		t.Errorf("recorded %d bytes and a marker of %d dropped; want the two to make the %d written", recorded, dropped, writes*len(chunk)+5)
	}
	if !strings.HasSuffix(output(events), "end\r\n") {
		t.Error("output after the disk caught up was not recorded")
	}
}

func TestARecordingThatCannotBeWrittenSaysSoAtOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		// root writes anywhere: a path under a file cannot be made by anyone.
		f := filepath.Join(t.TempDir(), "file")
		os.WriteFile(f, nil, 0o600)
		dir = filepath.Join(f, "sub")
	}
	if _, err := PrepareDir(dir); err == nil {
		t.Errorf("PrepareDir(%s) succeeded; want an error", dir)
	}
	r := New(Options{Dir: dir})
	released := false
	if _, err := r.Start(pane.NewStream("%1", 1, 0), testPane("%1"), func() { released = true }); err == nil || !strings.Contains(err.Error(), "%1") {
		t.Errorf("Start in %s: %v, want an error naming the pane", dir, err)
	}
	if !released {
		t.Error("a recording that could not start kept its stream held")
	}
}

func TestAllRecordsEachStreamAndAStoppedPaneOnlyAfterStart(t *testing.T) {
	dir := t.TempDir()
	r := New(Options{Dir: dir, All: true})
	first := pane.NewStream("%4", 1, 0)
	r.Streaming(first, testPane("%4"))
	first.Write([]byte("one\r\n"))
	first.Close("not read for a while")
	waitUntil(t, "the ended stream to be let go", func() bool { return r.recording("%4") == nil })
	second := pane.NewStream("%4", 2, 0)
	wider := testPane("%4")
	wider.Width = 132
	r.Streaming(second, wider)
	second.Write([]byte("two\r\n"))
	path := r.Stop("%4")
	r.Streaming(pane.NewStream("%4", 3, 0), testPane("%4"))
	if r.recording("%4") != nil {
		t.Error("a pane Stop was called for is recorded again by its next stream")
	}
	_, events := readCast(t, path)
	if got := output(events); got != "one\r\ntwo\r\n" {
		t.Errorf("the pane's recording holds %q, want both streams' output in one file", got)
	}
	if got, want := codes(events), []string{"o", "r 132x24", "o", "m tmcp stopped recording"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events %q, want %q: a pane resized while not watched gets its size when watched again", got, want)
	}
	r.Close()
}

func TestAHeldRecordingStopsAndLetsGoWhenItsStreamEnds(t *testing.T) {
	r := New(Options{Dir: t.TempDir()})
	s := pane.NewStream("%5", 1, 0)
	var mu sync.Mutex
	released := 0
	path, err := r.Start(s, testPane("%5"), func() { mu.Lock(); released++; mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	s.Close("the pane was closed")
	waitUntil(t, "the recording to stop", func() bool { mu.Lock(); defer mu.Unlock(); return released == 1 })
	r.Close()
	_, events := readCast(t, path)
	if n := len(events); n == 0 || events[n-1].Data != "tmcp stopped recording: the pane was closed" {
		t.Errorf("events %q: want the last to say the recording stopped and why", codes(events))
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
