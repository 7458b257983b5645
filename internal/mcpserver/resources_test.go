package mcpserver

import (
	"fmt"
	"slices"
	"testing"
)

func TestParseResourceURIReadsEveryTmuxResource(t *testing.T) {
	cases := []struct {
		uri    string
		ok     bool
		kind   resourceKind
		target string
	}{
		{"tmux://sessions", true, kindSessions, ""},
		{"tmux://sessions/main/windows", true, kindWindows, "main"},
		{"tmux://sessions/my%20work%2Fa/windows", true, kindWindows, "my work/a"},
		{"tmux://windows/2/panes", true, kindPanes, "@2"},
		{"tmux://panes/3", true, kindPane, "%3"},
		{"tmux://panes/3/content", true, kindContent, "%3"},
		{"tmux://panes/%253", false, 0, ""},
		{"tmux://panes/@3", false, 0, ""},
		{"tmux://panes/", false, 0, ""},
		{"tmux://windows/x/panes", false, 0, ""},
		{"tmux://sessions//windows", false, 0, ""},
		{"tmux://sessions/%zz/windows", false, 0, ""},
		{"tmux://panes/3/history", false, 0, ""},
		{"file:///panes/3", false, 0, ""},
	}
	for _, c := range cases {
		ref, ok := parseResourceURI(c.uri)
		if ok != c.ok || ok && (ref.kind != c.kind || ref.target != c.target) {
			t.Errorf("parseResourceURI(%q) = %+v, %v; want kind %d target %q, %v", c.uri, ref, ok, c.kind, c.target, c.ok)
		}
	}
}

func TestCompletionFiltersByPrefixSortsAndDropsRepeats(t *testing.T) {
	many := make([]string, maxCompletions+5)
	for i := range many {
		many[i] = fmt.Sprintf("s%03d", i)
	}
	cases := []struct {
		values  []string
		prefix  string
		want    []string
		total   int
		hasMore bool
	}{
		{[]string{"12", "1", "2", "1"}, "1", []string{"1", "12"}, 2, false},
		{[]string{"main", "work"}, "", []string{"main", "work"}, 2, false},
		{[]string{"main"}, "x", []string{}, 0, false},
		{many, "s", many[:maxCompletions], maxCompletions + 5, true},
	}
	for _, c := range cases {
		got := completion(c.values, c.prefix)
		if !slices.Equal(got.Values, c.want) || got.Total != c.total || got.HasMore != c.hasMore {
			t.Errorf("completion(%v, %q) = %+v; want %v total %d hasMore %v", c.values, c.prefix, got, c.want, c.total, c.hasMore)
		}
	}
}
