package wait

import (
	"fmt"
	"regexp"
)

// Bounds on patterns. RE2 matching is linear in the text, so these only
// keep a request from being unreasonable, not from stalling the server.
const (
	MaxPatterns      = 16
	MaxPatternLength = 1024
)

// Matcher matches decoded lines against success and stop patterns.
type Matcher struct {
	patterns []*regexp.Regexp
	stops    []*regexp.Regexp
}

// NewMatcher compiles patterns. Literal patterns match anywhere in a line;
// regex patterns are RE2. Matching is case-sensitive unless matchCase is
// false.
func NewMatcher(patterns, stops []string, regex, matchCase bool) (*Matcher, error) {
	if len(patterns)+len(stops) > MaxPatterns {
		return nil, fmt.Errorf("%d patterns: at most %d (patterns and stop together)", len(patterns)+len(stops), MaxPatterns)
	}
	m := &Matcher{}
	compile := func(kind string, list []string) ([]*regexp.Regexp, error) {
		var out []*regexp.Regexp
		for i, p := range list {
			if p == "" {
				return nil, fmt.Errorf("%s[%d] is empty", kind, i)
			}
			if len(p) > MaxPatternLength {
				return nil, fmt.Errorf("%s[%d] is %d bytes: at most %d", kind, i, len(p), MaxPatternLength)
			}
			expr := p
			if !regex {
				expr = regexp.QuoteMeta(p)
			}
			if !matchCase {
				expr = "(?i)" + expr
			}
			re, err := regexp.Compile(expr)
			if err != nil {
				return nil, fmt.Errorf("%s[%d] %q is not an RE2 expression: %v", kind, i, p, err)
			}
			out = append(out, re)
		}
		return out, nil
	}
	var err error
	if m.patterns, err = compile("patterns", patterns); err != nil {
		return nil, err
	}
	if m.stops, err = compile("stop", stops); err != nil {
		return nil, err
	}
	return m, nil
}

// HasPatterns reports whether any success pattern was given.
func (m *Matcher) HasPatterns() bool { return len(m.patterns) > 0 }

// Match returns the index of the first success pattern matching line.
func (m *Matcher) Match(line string) (int, bool) { return first(m.patterns, line) }

// Stop returns the index of the first stop pattern matching line.
func (m *Matcher) Stop(line string) (int, bool) { return first(m.stops, line) }

func first(res []*regexp.Regexp, line string) (int, bool) {
	for i, re := range res {
		if re.MatchString(line) {
			return i, true
		}
	}
	return 0, false
}
