package wait

import (
	"slices"
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

func TestEchoes(t *testing.T) {
	e := newEchoes(func() []pane.TypedLine { return []pane.TypedLine{{Seq: 1, Text: "sleep 1; echo MARK"}} })
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
}
