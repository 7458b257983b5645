package record

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestAppendStringWritesWhatJSONDecodesBack(t *testing.T) {
	for _, s := range []string{
		"",
		"plain text",
		`quote " and backslash \`,
		"line\r\nnext\ttab\bback\x00nul\x1b[31mred\x1b[0m\x7f",
		"café, 漢字, 🙂",
		"bad \xff byte, cut \xe2\x82 short, lone \x82",
	} {
		got := appendString(nil, []byte(s))
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("appendString(%q) = %s: not JSON: %v", s, got, err)
			continue
		}
		// encoding/json writes each byte that is not UTF-8 as U+FFFD, as
		// appendString does.
		want, _ := json.Marshal(s)
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("appendString(%q) decodes to %q, want %q", s, back, wantBack)
		}
	}
}

func TestSplitUnfinishedHoldsOnlyACharacterCutShort(t *testing.T) {
	for _, tc := range []struct{ in, whole, rest string }{
		{"abc", "abc", ""},
		{"", "", ""},
		{"caf\xc3", "caf", "\xc3"},
		{"x\xe2\x82", "x", "\xe2\x82"},
		{"x\xf0\x9f\x99", "x", "\xf0\x9f\x99"},
		{"€", "€", ""},
		{"a\xff", "a\xff", ""},                       // not UTF-8 at all: nothing to wait for
		{"\x82\x82\x82\x82", "\x82\x82\x82\x82", ""}, // stray continuation bytes
	} {
		whole, rest := splitUnfinished([]byte(tc.in))
		if string(whole) != tc.whole || string(rest) != tc.rest {
			t.Errorf("splitUnfinished(%q) = %q, %q; want %q, %q", tc.in, whole, rest, tc.whole, tc.rest)
		}
	}
}

func TestAppendEventIsAnAsciicastLine(t *testing.T) {
	line := appendEvent(nil, 1500*time.Millisecond+7*time.Microsecond, codeOutput, []byte("hi\r\n"))
	if want := `[1.500007, "o", "hi\r\n"]` + "\n"; string(line) != want {
		t.Errorf("appendEvent = %q, want %q", line, want)
	}
	h := appendHeader(nil, time.Unix(1700000000, 0), 80, 24, "t")
	if want := `{"version":2,"width":80,"height":24,"timestamp":1700000000,"title":"t"}` + "\n"; string(h) != want {
		t.Errorf("appendHeader = %q, want %q", h, want)
	}
}

func TestReadRefusesWhatIsNotAnAsciicastFile(t *testing.T) {
	const head = `{"version": 2, "width": 80, "height": 24, "timestamp": 1}` + "\n"
	cases := []struct {
		name, file string
		events     int // when it is read
		ok         bool
	}{
		{"header and events", head + `[0.1, "o", "a"]` + "\n" + `[0.2, "m", "x"]` + "\n", 2, true},
		{"empty", "", 0, false},
		{"version 1", `{"version": 1, "width": 80, "height": 24, "timestamp": 1}` + "\n", 0, false},
		{"no size", `{"version": 2, "timestamp": 1}` + "\n", 0, false},
		{"last line cut", head + `[0.1, "o", "a"]`, 0, false},
		{"not JSON", head + "[0.1, \"o\"\n", 0, false},
		{"two fields", head + `[0.1, "o"]` + "\n", 0, false},
		{"time a string", head + `["0.1", "o", "a"]` + "\n", 0, false},
		{"back in time", head + `[0.2, "o", "a"]` + "\n" + `[0.1, "o", "b"]` + "\n", 0, false},
	}
	for _, c := range cases {
		_, events, err := Read(strings.NewReader(c.file))
		if (err == nil) != c.ok || c.ok && len(events) != c.events {
			t.Errorf("%s: %d events, error %v; want ok %v with %d events", c.name, len(events), err, c.ok, c.events)
		}
	}
	_, events, _ := Read(strings.NewReader(head + `[0.1, "o", "a"]` + "\n"))
	if len(events) != 1 || events[0].Offset != int64(len(head)) {
		t.Errorf("events %+v: want one at offset %d", events, len(head))
	}
}
