package tmux

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseNotification(t *testing.T) {
	tests := []struct {
		line string
		want notification
	}{
		{"%begin 1700000000 12 1", notification{kind: lineBegin, guard: guard{"1700000000", "12", "1"}}},
		{"%end 1700000000 12 0", notification{kind: lineEnd, guard: guard{"1700000000", "12", "0"}}},
		{"%error 1700000000 12 1", notification{kind: lineError, guard: guard{"1700000000", "12", "1"}}},
		{"%begin 1 2", notification{kind: lineOther}},
		{`%output %3 a\015\012b\134c`, notification{kind: lineOutput, pane: []byte("%3"), data: []byte("a\r\nb\\c")}},
		{`%output %3 \303\251`, notification{kind: lineOutput, pane: []byte("%3"), data: []byte("é")}},
		{`%output %3 \30`, notification{kind: lineOutput, pane: []byte("%3"), data: []byte(`\30`)}},
		{`%output %3 \777\400\`, notification{kind: lineOutput, pane: []byte("%3"), data: []byte(`\777\400\`)}},
		{`%extended-output %7 1234 : hi\012`, notification{kind: lineOutput, pane: []byte("%7"), data: []byte("hi\n"), age: 1234}},
		{`%extended-output %7 12 future : x`, notification{kind: lineOutput, pane: []byte("%7"), data: []byte("x"), age: 12}}, // fields a later tmux may add
		{`%extended-output %7 soon : x`, notification{kind: lineOutput, pane: []byte("%7"), data: []byte("x")}},
		{`%extended-output %7 -5 : x`, notification{kind: lineOutput, pane: []byte("%7"), data: []byte("x")}},
		{"%pause %4", notification{kind: linePause, pane: []byte("%4")}},
		{"%exit too far behind", notification{kind: lineExit, data: []byte("too far behind")}},
		{"%session-changed $1 main", notification{kind: lineSessionChanged, fields: []string{"$1", "main"}}},
		{"%window-add @3", notification{kind: lineLayout}},
		{"%window-renamed @3 x", notification{kind: lineOther}},
		{"plain text", notification{kind: lineOther}},
	}
	for _, tt := range tests {
		got := parseNotification([]byte(tt.line))
		if got.kind == lineOutput {
			got.data = appendUnescaped(nil, got.data) // decoded as it is dispatched
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("parseNotification(%q)\n got %+v\nwant %+v", tt.line, got, tt.want)
		}
	}
}

func FuzzUnescapeOutput(f *testing.F) {
	for _, s := range []string{`a\012`, `\\`, `\1`, `\777`, "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := appendUnescaped(nil, []byte(s))
		if len(out) > len(s) {
			t.Fatalf("unescape grew %q to %q", s, out)
		}
		// Escaping what tmux escapes, then unescaping, gives the bytes back.
		if got := appendUnescaped(nil, escapeLikeTmux([]byte(s))); !bytes.Equal(got, []byte(s)) {
			t.Fatalf("round trip of %q gave %q", s, got)
		}
	})
}

// escapeLikeTmux writes bytes as tmux writes %output data.
func escapeLikeTmux(b []byte) []byte {
	var out []byte
	for _, c := range b {
		if c < 0x20 || c == '\\' || c > 0x7e {
			out = append(out, fmt.Sprintf(`\%03o`, c)...)
			continue
		}
		out = append(out, c)
	}
	return out
}

// parserHarness feeds a scripted stream to a reply parser.
type parserHarness struct {
	c      *controlClient
	p      *replyParser
	events []OutputEvent
}

func newParserHarness() *parserHarness {
	h := &parserHarness{}
	h.c = &controlClient{nonce: "n0nce", ready: make(chan struct{})}
	h.c.onEvent = func(ev OutputEvent) {
		ev.Data = bytes.Clone(ev.Data) // valid only during the call
		h.events = append(h.events, ev)
	}
	h.p = &replyParser{c: h.c}
	return h
}

func (h *parserHarness) send(args ...string) *request {
	r, err := h.c.newRequest(args)
	if err != nil {
		panic(err)
	}
	h.c.pending = append(h.c.pending, r)
	return r
}

func (h *parserHarness) feed(lines ...string) {
	for _, l := range lines {
		h.p.line([]byte(l))
	}
}

// reply returns the lines tmux writes for a request whose output is body.
func reply(r *request, number int, body ...string) []string {
	out := []string{fmt.Sprintf("%%begin 100 %d 1", number)}
	out = append(out, body...)
	out = append(out, fmt.Sprintf("%%end 100 %d 1", number),
		fmt.Sprintf("%%begin 100 %d 1", number+1), r.sentinel, fmt.Sprintf("%%end 100 %d 1", number+1))
	return out
}

func done(r *request) bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func TestReplyParserFraming(t *testing.T) {
	t.Run("plain reply", func(t *testing.T) {
		h := newParserHarness()
		r := h.send("list-sessions")
		h.feed(reply(r, 5, "a", "b")...)
		if !done(r) || r.err != nil || strings.Join(r.body, ",") != "a,b" {
			t.Fatalf("got done=%v err=%v body=%q", done(r), r.err, r.body)
		}
	})
	t.Run("error reply", func(t *testing.T) {
		h := newParserHarness()
		r := h.send("kill-pane")
		h.feed("%begin 100 5 1", "can't find pane: %9", "%error 100 5 1", "%begin 100 6 1", r.sentinel, "%end 100 6 1")
		if !done(r) || !r.failed || r.body[0] != "can't find pane: %9" {
			t.Fatalf("got done=%v failed=%v body=%q", done(r), r.failed, r.body)
		}
	})
	t.Run("foreign block and notifications between replies", func(t *testing.T) {
		h := newParserHarness()
		r := h.send("list-sessions")
		h.feed("%begin 100 4 0", "not ours", "%end 100 4 0", `%output %1 hi\012`)
		h.feed(reply(r, 5, "x")...)
		if r.err != nil || strings.Join(r.body, ",") != "x" {
			t.Fatalf("got err=%v body=%q", r.err, r.body)
		}
		if len(h.events) != 1 || string(h.events[0].Data) != "hi\n" {
			t.Fatalf("events %+v", h.events)
		}
	})
	t.Run("output held until the sentinel outlives its line's memory", func(t *testing.T) {
		h := newParserHarness()
		r := h.send("list-sessions")
		// The reader hands each line in memory it then reuses.
		buf := make([]byte, 0, 64)
		for _, l := range reply(r, 5, "x") {
			if strings.HasPrefix(l, "%begin 100 6") {
				buf = append(buf[:0], `%output %1 held\012`...)
				h.p.line(buf)
			}
			buf = append(buf[:0], l...)
			h.p.line(buf)
		}
		if r.err != nil || len(h.events) != 1 || string(h.events[0].Data) != "held\n" || h.events[0].Pane != "%1" {
			t.Fatalf("got err=%v events %+v, want one event of %%1 with %q", r.err, h.events, "held\n")
		}
	})
	t.Run("a hook's block between a reply and its sentinel", func(t *testing.T) {
		h := newParserHarness()
		r := h.send("split-window")
		h.feed("%begin 100 5 1", "%end 100 5 1", "%begin 100 6 0", "%end 100 6 0", "%begin 100 7 1", r.sentinel, "%end 100 7 1")
		if !done(r) || r.err != nil {
			t.Fatalf("got done=%v err=%v", done(r), r.err)
		}
	})
	notices := []struct {
		name   string
		args   []string
		body   []string
		want   []OutputEvent
		wanted []string // the body left to the caller
	}{
		{"a refresh-client's own pause and continue", []string{"refresh-client", "-A", "%3:pause", "-A", "%3:continue"},
			[]string{"%pause %3", "%continue %3"}, []OutputEvent{{Pane: "%3", Paused: true}, {Pane: "%3", Continued: true}}, nil},
		{"a capture's text is never one", []string{"capture-pane", "-p"},
			[]string{"%pause %3", "%continue %3"}, nil, []string{"%pause %3", "%continue %3"}},
	}
	for _, tt := range notices {
		t.Run(tt.name, func(t *testing.T) {
			h := newParserHarness()
			r := h.send(tt.args...)
			h.feed(reply(r, 5, tt.body...)...)
			if !done(r) || r.err != nil || strings.Join(r.body, "\n") != strings.Join(tt.wanted, "\n") {
				t.Fatalf("got done=%v err=%v body=%q, want body %q", done(r), r.err, r.body, tt.wanted)
			}
			if fmt.Sprint(h.events) != fmt.Sprint(tt.want) {
				t.Fatalf("events %+v, want %+v", h.events, tt.want)
			}
		})
	}
	forged := map[string][]string{
		"a foreign block swallowing the sentinel": {"%end 100 5 1", "%begin 100 9 0", "x"},
		"end then text":             {"line", "%end 100 5 1", "more"},
		"end as last line":          {"line", "%end 100 5 1"},
		"end then notification":     {"%end 100 5 1", "%exit", `%output %1 x`},
		"end and a fake sentinel":   {"%end 100 5 1", "%begin 100 6 1", "guess", "%end 100 6 1", "tail"},
		"end and an open sentinel":  {"%end 100 5 1", "%begin 100 6 1", "guess"},
		"error then begin":          {"%error 100 5 1", "%begin 100 7 0"},
		"end of the sentinel alone": {"%end 100 6 1"},
	}
	for name, body := range forged {
		t.Run("forged: "+name, func(t *testing.T) {
			h := newParserHarness()
			r := h.send("capture-pane", "-p")
			h.feed(reply(r, 5, body...)...)
			if !done(r) {
				t.Fatal("request never completed")
			}
			if r.err == nil && strings.Join(r.body, "\n") != strings.Join(body, "\n") {
				t.Fatalf("forged reply accepted with a wrong body %q", r.body)
			}
			if len(h.events) != 0 {
				t.Fatalf("reply text dispatched as notifications: %+v", h.events)
			}
			// The parser is back in step for the next command.
			r2 := h.send("display-message", "-p", "ok")
			h.feed(reply(r2, 20, "ok")...)
			if r2.err != nil || strings.Join(r2.body, ",") != "ok" {
				t.Fatalf("next reply: err=%v body=%q", r2.err, r2.body)
			}
		})
	}
}

// FuzzReplyParser checks the parser's promise: whatever text a reply
// holds, the caller gets exactly that text or errTainted, and the next
// reply is read correctly.
func FuzzReplyParser(f *testing.F) {
	f.Add("a\nb", 5)
	f.Add("%end 100 5 1\nx", 5)
	f.Add("%end 100 5 1\n%begin 100 6 1\nn0nce.1\n%end 100 6 1", 5)
	f.Add("%begin 100 9 0\n%exit", 9)
	f.Fuzz(func(t *testing.T, text string, number int) {
		if strings.Contains(text, "n0nce") {
			return // the nonce is secret: a pane cannot print it
		}
		if number < 0 {
			number = -number
		}
		h := newParserHarness()
		r := h.send("capture-pane", "-p")
		body := strings.Split(text, "\n")
		h.feed(reply(r, number, body...)...)
		if !done(r) {
			t.Fatalf("request never completed")
		}
		if r.err == nil && strings.Join(r.body, "\n") != text {
			t.Fatalf("wrong body accepted: %q, want %q", r.body, text)
		}
		if r.err != nil && !errors.Is(r.err, errTainted) {
			t.Fatalf("unexpected error %v", r.err)
		}
		r2 := h.send("display-message", "-p", "ok")
		h.feed(reply(r2, number+10, "ok")...)
		if r2.err != nil || strings.Join(r2.body, ",") != "ok" {
			t.Fatalf("next reply: err=%v body=%q", r2.err, r2.body)
		}
	})
}

// BenchmarkOutputLine reads one %output line, as a busy pane makes tmux
// write thousands a second, up to the event it hands the stream.
func BenchmarkOutputLine(b *testing.B) {
	lines := map[string]string{
		"ascii": `%output %3 total 48 drwxr-xr-x  2 user user 4096 Jan  1 00:00 src\015\012`,
		"utf8":  `%output %3 \342\224\202 caf\303\251 \342\224\202 na\303\257ve \342\224\202\015\012`,
		// What tmcp's output clients get (pause-after): with tmux's age.
		"extended": `%extended-output %3 12 : total 48 drwxr-xr-x  2 user user 4096 Jan  1 00:00 src\015\012`,
	}
	for name, line := range lines {
		b.Run(name, func(b *testing.B) {
			h := newParserHarness()
			var n int
			h.c.onEvent = func(ev OutputEvent) { n += len(ev.Data) }
			buf := []byte(line)
			b.ReportAllocs()
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				h.p.line(buf)
			}
			if n == 0 {
				b.Fatal("no output reached the event")
			}
		})
	}
}
