package wait

import (
	"strings"
	"testing"
)

func TestMatcher(t *testing.T) {
	tests := []struct {
		name      string
		patterns  []string
		stops     []string
		regex     bool
		matchCase bool
		line      string
		match     int // -1: no match
		stop      int // -1: no stop
	}{
		{"literal anywhere", []string{"READY"}, nil, false, true, "server READY now", 0, -1},
		{"literal is not a regex", []string{"a.c"}, nil, false, true, "abc", -1, -1},
		{"literal dot", []string{"a.c"}, nil, false, true, "xa.cx", 0, -1},
		{"case sensitive by default", []string{"ready"}, nil, false, true, "READY", -1, -1},
		{"matchCase false", []string{"ready"}, nil, false, false, "READY", 0, -1},
		{"anchored regex", []string{"^READY$"}, nil, true, true, "READY", 0, -1},
		{"anchored regex misses a longer line", []string{"^READY$"}, nil, true, true, "NOT READY", -1, -1},
		{"second pattern", []string{"x", "y"}, nil, false, true, "y", 1, -1},
		{"stop", []string{"ok"}, []string{"error", "FAIL"}, false, true, "FAIL: ok", 0, 1},
		{"pattern ending in hash", []string{"#"}, nil, false, true, "root@host:~# ", 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewMatcher(tt.patterns, tt.stops, tt.regex, tt.matchCase)
			if err != nil {
				t.Fatal(err)
			}
			i, ok := m.Match(tt.line)
			if got := map[bool]int{true: i, false: -1}[ok]; got != tt.match {
				t.Errorf("Match(%q) = %d, want %d", tt.line, got, tt.match)
			}
			i, ok = m.Stop(tt.line)
			if got := map[bool]int{true: i, false: -1}[ok]; got != tt.stop {
				t.Errorf("Stop(%q) = %d, want %d", tt.line, got, tt.stop)
			}
		})
	}
}

func TestNewMatcherRefusesBadPatterns(t *testing.T) {
	for name, c := range map[string]struct {
		patterns []string
		regex    bool
	}{
		"empty":         {[]string{""}, false},
		"not RE2":       {[]string{"(a"}, true},
		"backreference": {[]string{`(a)\1`}, true},
		"too long":      {[]string{strings.Repeat("a", MaxPatternLength+1)}, false},
		"too many":      {make([]string, MaxPatterns+1), false},
	} {
		if _, err := NewMatcher(c.patterns, nil, c.regex, true); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// The classic catastrophic pattern is linear under RE2.
func TestMatcherHasNoCatastrophicBacktracking(t *testing.T) {
	m, err := NewMatcher([]string{"(a+)+$"}, nil, true, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Match(strings.Repeat("a", 100000) + "!"); ok {
		t.Fatal("matched a line ending in !")
	}
}

func FuzzMatcherLiteral(f *testing.F) {
	f.Add("READY", "server READY", false)
	f.Add("a.c", "abc", true)
	f.Fuzz(func(t *testing.T, pattern, line string, matchCase bool) {
		if pattern == "" || len(pattern) > MaxPatternLength {
			return
		}
		m, err := NewMatcher([]string{pattern}, nil, false, matchCase)
		if err != nil {
			t.Fatalf("literal %q refused: %v", pattern, err)
		}
		_, got := m.Match(line)
		want := strings.Contains(line, pattern)
		if matchCase && got != want {
			t.Fatalf("literal %q in %q: got %v, want %v", pattern, line, got, want)
		}
		if !matchCase && want && !got {
			t.Fatalf("case-insensitive %q missed %q", pattern, line)
		}
	})
}
