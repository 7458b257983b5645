package main

import "testing"

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
