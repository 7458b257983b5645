// Package docs holds tmcp's documentation beside the README; its test
// checks that every link in them leads somewhere.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// link matches a Markdown link's target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// heading matches a Markdown heading.
var heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)

// slug is the anchor a heading gets, as GitHub makes it: lower case, marks
// other than hyphens and underscores dropped, spaces turned to hyphens.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a Markdown file's headings, outside code
// blocks.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	inCode := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
			continue
		}
		if m := heading.FindStringSubmatch(l); m != nil && !inCode {
			out[slug(m[1])] = true
		}
	}
	return out
}

// TestEveryLinkLeadsSomewhere follows each relative link in README.md,
// BENCHMARKS.md and docs/*.md: the file must exist and, when the link
// names an anchor, have a heading with it. Links to the web are left to
// the web.
func TestEveryLinkLeadsSomewhere(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md", "../BENCHMARKS.md")
	checked := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
			}
			body, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s: link %q: %v", file, target, err)
				continue
			}
			checked++
			if anchor != "" && strings.HasSuffix(dest, ".md") && !anchors(string(body))[anchor] {
				t.Errorf("%s: link %q: %s has no heading #%s", file, target, dest, anchor)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d links checked: the pattern finds too few", checked)
	}
}

// TestTheReadmeIsReadInFiveMinutes keeps README.md to what a newcomer
// needs: under 250 lines.
func TestTheReadmeIsReadInFiveMinutes(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n >= 250 {
		t.Errorf("README.md has %d lines, want under 250: move detail into docs/", n)
	}
}
