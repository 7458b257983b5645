package pane

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

func TestTypedRunsAreTheTextBetweenKeyNames(t *testing.T) {
	cases := []struct {
		keys []string
		want []string
	}{
		{[]string{"Escape", ":wq", "Enter"}, []string{":wq"}},
		{[]string{"echo ", "hi", "Enter", "ls -l", "Enter"}, []string{"echo hi", "ls -l"}},
		{[]string{"q"}, []string{"q"}}, // too short to record: pane.Hub.Typed drops it
		{[]string{"Down", "Down", "Enter"}, nil},
		{[]string{"a", "b", "C-c", "cd"}, []string{"ab", "cd"}},
	}
	for _, c := range cases {
		if got := typedRuns(c.keys); !reflect.DeepEqual(got, c.want) {
			t.Errorf("typedRuns(%q) = %q, want %q", c.keys, got, c.want)
		}
	}
}

// TestEveryWayOfTypingRecordsTheEchoAndCountsTheBytes types into a pane in
// each way the hub offers: each counts its bytes on that pane alone, and
// each remembers its text for the waits before it reaches the pane.
func TestEveryWayOfTypingRecordsTheEchoAndCountsTheBytes(t *testing.T) {
	srv := tmuxtest.New(t)
	h := newHub(t, srv)
	ctx := context.Background()
	srv.Must("set-buffer", "-b", "tmcp-test", "echo buffered\n")
	cases := []struct {
		name  string
		typ   func() error
		bytes int64
		line  string // remembered for the waits
	}{
		{"Type with Enter", func() error { return h.Type(ctx, "%0", "echo typed", true) }, int64(len("echo typed\r")), "echo typed"},
		{"Type without Enter", func() error { return h.Type(ctx, "%0", "true ", false) }, int64(len("true ")), "true"},
		{"Keys", func() error { return h.Keys(ctx, "%0", "C-u", "echo ", "keyed", "Enter") }, int64(len("echo keyed\r")), "echo keyed"},
		{"Paste", func() error { return h.Paste(ctx, "%0", "echo pasted\n", false) }, int64(len("echo pasted\n")), "echo pasted"},
		{"PasteBuffer", func() error { return h.PasteBuffer(ctx, "%0", "tmcp-test", len("echo buffered\n"), false) }, int64(len("echo buffered\n")), "echo buffered"},
	}
	for _, c := range cases {
		before := h.TypedBytes("%0")
		if err := c.typ(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := h.TypedBytes("%0") - before; got != c.bytes {
			t.Errorf("%s: counted %d bytes on %%0, want %d", c.name, got, c.bytes)
		}
		typed := h.RecentlyTyped("%0")
		if len(typed) == 0 || strings.TrimSpace(typed[len(typed)-1].Text) != c.line {
			t.Errorf("%s: last line remembered %v, want %q", c.name, typed, c.line)
		}
	}
	if n := h.TypedBytes("%1"); n != 0 {
		t.Errorf("counted %d bytes on %%1, where nothing was typed", n)
	}
	want := []string{"typed", "keyed", "pasted", "buffered"}
	if !tmuxtest.WaitFor(5*time.Second, func() bool {
		// Typed ahead of the prompt, output may follow it on its row.
		ran := map[string]bool{}
		for _, l := range strings.Split(srv.Must("capture-pane", "-p", "-t", "%0"), "\n") {
			if f := strings.Fields(l); len(f) > 0 && !strings.Contains(l, "echo") {
				ran[f[len(f)-1]] = true
			}
		}
		for _, w := range want {
			if !ran[w] {
				return false
			}
		}
		return true
	}) {
		t.Errorf("pane %%0 never showed the output of all four commands %q:\n%s", want, srv.Must("capture-pane", "-p", "-t", "%0"))
	}
}

// TestEveryWayOfTypingStreamsThePaneFirst types into fresh panes, each of
// a session of its own that no client of tmcp's carries, in each way the
// hub offers: each pane is streamed when the call returns, nobody holding
// its stream but its linger, and the stream holds the pane's echo of the
// keys, so it was live before tmux had them.
func TestEveryWayOfTypingStreamsThePaneFirst(t *testing.T) {
	srv := tmuxtest.New(t)
	h := newHub(t, srv)
	ctx := context.Background()
	srv.Must("set-buffer", "-b", "tmcp-test", "echo bu''ffered")
	cases := []struct {
		name string
		typ  func(pane string) error
		echo string // what the pane's shell echoes of the keys
	}{
		{"Type", func(p string) error { return h.Type(ctx, p, "echo ty''ped", false) }, "echo ty''ped"},
		{"Keys", func(p string) error { return h.Keys(ctx, p, "echo ke''yed") }, "echo ke''yed"},
		{"Paste", func(p string) error { return h.Paste(ctx, p, "echo pa''sted", false) }, "echo pa''sted"},
		{"PasteBuffer", func(p string) error { return h.PasteBuffer(ctx, p, "tmcp-test", len("echo bu''ffered"), false) }, "echo bu''ffered"},
		{"TypePasted", func(p string) error { return h.TypePasted(ctx, p, "", "echo tp''asted") }, "tp''asted"},
		{"PasteLine", func(p string) error { return h.PasteLine(ctx, p, "echo pl''ine") }, "echo pl''ine"},
	}
	for i, c := range cases {
		pane := strings.TrimSpace(srv.Must("new-session", "-d", "-s", fmt.Sprintf("typed%d", i), "-P", "-F", "#{pane_id}", "sh"))
		if !tmuxtest.WaitFor(5*time.Second, func() bool { return strings.Contains(srv.Must("capture-pane", "-p", "-t", pane), "#") }) {
			t.Fatalf("%s: pane %s never showed its prompt", c.name, pane)
		}
		if err := c.typ(pane); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s := h.Stream(pane)
		if s == nil {
			t.Fatalf("%s: pane %s is not streamed after typing", c.name, pane)
		}
		if n := h.Holders(pane); n != 0 {
			t.Errorf("%s: %d holders of pane %s's stream, want none (it lingers)", c.name, n, pane)
		}
		if !tmuxtest.WaitFor(5*time.Second, func() bool {
			data, _, _ := s.ReadFrom(0, 0)
			return strings.Contains(string(data), c.echo)
		}) {
			data, _, _ := s.ReadFrom(0, 0)
			t.Errorf("%s: pane %s's stream holds %q, not the echo %q of the keys", c.name, pane, data, c.echo)
		}
	}
}
