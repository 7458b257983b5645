package wait

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/pane"
)

func TestNewRows(t *testing.T) {
	tests := []struct {
		name          string
		before, after []string
		want          []string
	}{
		{"nothing new", []string{"$ ls", "a b", "$ "}, []string{"$ ls", "a b", "$ ", ""}, nil},
		{"appended", []string{"$ run"}, []string{"$ run", "READY", "$ "}, []string{"READY", "$ "}},
		{"prompt grew", []string{"$ "}, []string{"$ echo x", "x", "$ "}, []string{"$ echo x", "x", "$ "}},
		{"scrolled", []string{"1", "2", "3"}, []string{"2", "3", "4"}, []string{"4"}},
		{"cleared", []string{"old", "stuff"}, []string{"new", "old"}, []string{"new"}},
		{"empty before", nil, []string{"a"}, []string{"a"}},
	}
	for _, tt := range tests {
		if got := newRows(tt.before, tt.after); !slices.Equal(got, tt.want) {
			t.Errorf("%s: newRows = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRowsSince(t *testing.T) {
	long := func(prefix string, n int) []string {
		var rows []string
		for i := range n {
			rows = append(rows, fmt.Sprintf("%s%d", prefix, i))
		}
		return rows
	}
	before := append(long("old", 5), "$ ")
	tests := []struct {
		name   string
		before []string
		all    []string
		want   []string
	}{
		{"nothing new", before, append(long("older", 3), before...), nil},
		{"deep below", before, slices.Concat(long("older", 3), before[:5], []string{"$ run", "NEW"}, long("x", 700)),
			slices.Concat([]string{"$ run", "NEW"}, long("x", 700))},
		{"its oldest rows gone from the history", before, slices.Concat(before[3:5], []string{"$ run", "NEW"}, long("x", 9)),
			slices.Concat([]string{"$ run", "NEW"}, long("x", 9))},
		{"all of it gone", before, slices.Concat([]string{"NEW"}, long("x", 9)), slices.Concat([]string{"NEW"}, long("x", 9))},
		{"the first place it lies whole", []string{"a", "b"}, []string{"a", "b", "NEW", "a", "b"}, []string{"NEW", "a", "b"}},
	}
	for _, tt := range tests {
		if got := rowsSince(tt.before, tt.all); !slices.Equal(got, tt.want) {
			t.Errorf("%s: rowsSince = %.80q, want %.80q", tt.name, got, tt.want)
		}
	}
}

func TestEchoes(t *testing.T) {
	e := newEchoes(func() []pane.TypedLine { return []pane.TypedLine{{Seq: 1, Text: "sleep 1; echo MARK"}} })
	e.refresh()
	if !e.isPartialEcho("$ sleep 1; ec") {
		t.Error("a half-echoed line was not taken for echo")
	}
	if e.isEcho("MARK") {
		t.Error("the output MARK was taken for the echo")
	}
	if !e.isEcho("$ sleep 1; echo MARK") {
		t.Error("the echo was not recognised")
	}
	if e.isEcho("$ sleep 1; echo MARK") {
		t.Error("one typed line explained away two echoes")
	}
	// The line of a run_command typed by a tmcp that has restarted since.
	for _, l := range []string{"soak$ (__tmcp 2db68&&(sleep 1; echo MARK));__tmcp 2db68 $?", "(__tmcp 2db68&&(sleep 1; echo MARK));__tmcp 2db68 $?"} {
		if !e.isEcho(l) {
			t.Errorf("%q, a run's line no typed line explains, was not taken for echo", l)
		}
	}
	if !e.isPartialEcho("$ (__tmcp 2db68&&(sleep 1; echo MA") {
		t.Error("a run's line half echoed, unknown to the typed lines, was not taken for echo")
	}
}

func TestRowsTakeOnlyTheLastRowForAnEchoInProgress(t *testing.T) {
	typed := []pane.TypedLine{{Seq: 1, Text: "echo hi"}}
	tests := []struct {
		name    string
		rows    []string
		matched bool
	}{
		{"an output row ending like the typed line", []string{"output: ech", "# "}, true},
		{"the typed line being echoed on the last row", []string{"# output: ech"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewMatcher([]string{"output"}, nil, false, true)
			if err != nil {
				t.Fatal(err)
			}
			w := &textWait{req: TextRequest{Patterns: []string{"output"}}, m: m, dec: pane.NewDecoder(0),
				tail: pane.NewTailBuffer(100, 1<<16), echo: newEchoes(func() []pane.TypedLine { return typed })}
			if got := w.rows(tt.rows); got != tt.matched {
				t.Fatalf("rows %q with %q typed: matched %v (%q), want %v", tt.rows, typed[0].Text, got, w.res.Matched, tt.matched)
			}
		})
	}
}

func TestAChunkLooksUpTheTypedLinesOnce(t *testing.T) {
	lookups := 0
	typed := func() []pane.TypedLine {
		lookups++
		return []pane.TypedLine{{Seq: 1, Text: "echo hi"}}
	}
	m, err := NewMatcher([]string{"never"}, nil, false, true)
	if err != nil {
		t.Fatal(err)
	}
	w := &textWait{req: TextRequest{Patterns: []string{"never"}}, m: m, dec: pane.NewDecoder(0),
		tail: pane.NewTailBuffer(100, 1<<16), echo: newEchoes(typed)}
	w.chunk([]byte(strings.Repeat("a line of output\r\n", 1000) + "a prompt "))
	if lookups != 1 {
		t.Fatalf("a chunk of 1000 lines looked the typed lines up %d times, want once", lookups)
	}
}
