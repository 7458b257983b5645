package agents

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTheShippedProfilesParseAndNameTheFourAgents(t *testing.T) {
	set := BuiltIn()
	for _, name := range []string{"claude", "codex", "gemini", "aider"} {
		p := set.Select(name, nil)
		if p.Name != name {
			t.Errorf("Select(%q) = profile %q, want %q", name, p.Name, name)
		}
		if p.Key() != "Enter" {
			t.Errorf("profile %s submits with %q, want Enter", name, p.Key())
		}
	}
	// The facts the profiles rest on (DESIGN.md §8).
	claude, codex := set.Select("claude", nil), set.Select("codex", nil)
	if claude.Gap() <= 100*time.Millisecond || codex.Gap() <= 120*time.Millisecond {
		t.Errorf("gaps claude %v, codex %v: want over 100 ms and over 120 ms", claude.Gap(), codex.Gap())
	}
	if !slices.Contains(claude.Busy, "esc to interrupt") || !slices.Contains(claude.Pending, "[Pasted text #") {
		t.Errorf("claude profile %+v lacks its busy line or its paste placeholder", claude)
	}
}

func TestSelectFindsTheAgentByCommandOrByTheForegroundCommandLine(t *testing.T) {
	set := BuiltIn()
	for _, tt := range []struct {
		command string
		argv    []string
		want    string
	}{
		{"claude", nil, "claude"},
		{"/usr/local/bin/codex", nil, "codex"},
		{"node", []string{"node", "/usr/lib/node_modules/.bin/gemini"}, "gemini"},
		{"python3", []string{"/usr/bin/python3", "/home/u/.local/bin/aider", "--model", "x"}, "aider"},
		{"python3", []string{"python3", "script.py", "aider"}, GenericName}, // only the program and its script count
		{"vim", nil, GenericName},
		{"", nil, GenericName},
	} {
		if got := set.Select(tt.command, tt.argv).Name; got != tt.want {
			t.Errorf("Select(%q, %q) = %q, want %q", tt.command, tt.argv, got, tt.want)
		}
	}
}

func TestTheGenericProfileWaitsForStillnessWithDefaults(t *testing.T) {
	p := BuiltIn().Select("top", nil)
	if len(p.Busy)+len(p.Approval)+len(p.Idle)+len(p.Pending) != 0 {
		t.Errorf("generic profile has markers: %+v", p)
	}
	if p.Gap() != DefaultGap || p.Settle() != DefaultSettle || p.Still() != DefaultStill || p.Key() != DefaultSubmitKey {
		t.Errorf("generic profile: gap %v settle %v still %v key %q; want the defaults", p.Gap(), p.Settle(), p.Still(), p.Key())
	}
}

func TestAnOperatorsFileReplacesAProfileByNameAndAddsNewOnesFirst(t *testing.T) {
	file := filepath.Join(t.TempDir(), "profiles.json")
	own := `{"profiles": [
		{"name": "claude", "programs": ["claude"], "busy": ["thinking"], "gapMs": 400, "submitKey": "C-m"},
		{"name": "mine", "programs": ["myagent", "codex"], "stillMs": 3000}
	]}`
	if err := os.WriteFile(file, []byte(own), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	claude := set.Select("claude", nil)
	if !slices.Contains(claude.Busy, "thinking") || slices.Contains(claude.Busy, "esc to interrupt") || claude.Gap() != 400*time.Millisecond || claude.Key() != "C-m" {
		t.Errorf("claude after the operator's file: %+v", claude)
	}
	if got := set.Select("myagent", nil); got.Name != "mine" || got.Still() != 3*time.Second {
		t.Errorf("Select(myagent) = %+v", got)
	}
	if got := set.Select("codex", nil).Name; got != "mine" {
		t.Errorf("Select(codex) = %q: the operator's profiles come first", got)
	}
	if got := set.Select("gemini", nil).Name; got != "gemini" {
		t.Errorf("Select(gemini) = %q: built-ins the file does not name stay", got)
	}
	if n := len(BuiltIn().Select("claude", nil).Busy); n != 1 {
		t.Errorf("the built-in set changed under Load: claude has %d busy markers", n)
	}
}

func TestParseRefusesWhatItCannotUse(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"profiles": [{"name": "a", "gap": 100}]}`, "unknown field"},
		{`{"profiles": [{"programs": ["a"]}]}`, "no name"},
		{`{"profiles": [{"name": "a", "gapMs": -1}]}`, "negative"},
		{`{"profiles": [{"name": "a", "busy": [""]}]}`, "empty marker"},
		{`{"profiles": `, "unexpected EOF"},
	} {
		_, err := Parse([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%s) = %v, want an error saying %q", tt.in, err, tt.want)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("Load of a missing file: no error")
	}
}
