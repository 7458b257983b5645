package main

import (
	"strings"
	"testing"
	"time"
)

// A wait already running when text is pasted into its pane must take the
// command's output, not the pane's echo of the pasted line.
func TestWaitForTextSkipsTheEchoOfPastedText(t *testing.T) {
	t.Parallel()
	for _, paste := range []struct {
		name string
		do   func(s *session, pane, text string)
	}{
		{"paste_text", func(s *session, pane, text string) {
			s.ok("paste_text", map[string]any{"paneId": pane, "text": text}, nil)
		}},
		{"paste_buffer", func(s *session, pane, text string) {
			var b struct {
				Name string `json:"name"`
			}
			s.ok("load_buffer", map[string]any{"text": text}, &b)
			s.ok("paste_buffer", map[string]any{"paneId": pane, "name": b.Name}, nil)
		}},
	} {
		t.Run(paste.name, func(t *testing.T) {
			t.Parallel()
			f := newWaitFixture(t)
			ch := f.begin("wait_for_text", map[string]any{"paneId": f.pane, "patterns": []string{"PASTED-MARK"}, "timeoutSeconds": 10})
			paste.do(f.s, f.pane, "sleep 1; echo PASTED-MARK\n")
			r, text := decodeText[waitTextOut](t, "wait_for_text", awaitCall(t, "wait_for_text", ch).res)
			if r.Outcome != "matched" || r.Matched != "PASTED-MARK" {
				t.Errorf("%s: outcome %s matched %q, want the output line PASTED-MARK, not the echo", paste.name, r.Outcome, r.Matched)
			}
			checkWaitText(t, r, text)
		})
	}
}

// A shell may echo a typed line long after tmcp typed it: busy, or on a
// machine under load. Its echo, however late, is still not output.
func TestWaitForTextSkipsAnEchoThatComesLate(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t)
	// bash's line editor echoes a line when it reads it, not when it is
	// typed; with the terminal's own echo off, a line typed while a
	// command runs shows only once the shell reads it.
	pane := newWindow(f.srv, "exec env PS1='$ ' bash --norc --noprofile")
	waitPrompt(t, f.srv, pane)
	f.srv.Must("send-keys", "-t", pane, "-l", "stty -echo; sleep 7; stty echo")
	f.srv.Must("send-keys", "-t", pane, "Enter")
	waitScreen(t, f.srv, pane, "the sleep under way", func(l []string) bool {
		return len(l) > 0 && strings.HasSuffix(strings.TrimRight(l[len(l)-1], " "), "stty echo")
	})

	typed := time.Now()
	f.s.ok("send_keys", map[string]any{"paneId": pane, "keys": "echo LATE-MARK"}, nil)
	// From a cursor taken before the shell reads the line, its echo and
	// its output both come after the wait's start.
	since, _ := f.s.since(map[string]any{"paneId": pane})
	r, text := f.s.waitText(map[string]any{"paneId": pane, "patterns": []string{"LATE-MARK"}, "cursor": since.Cursor, "timeoutSeconds": 15})
	if r.Outcome != "matched" || r.Matched != "LATE-MARK" {
		t.Errorf("an echo %v after the typing: outcome %s matched %q, want the output line LATE-MARK, not the echo; the reply:\n%s", time.Since(typed).Round(time.Second), r.Outcome, r.Matched, text)
	}
	checkWaitText(t, r, text)
}
