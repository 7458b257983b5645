// Package agents holds the profiles of the terminal agents (Claude Code,
// Codex CLI, Gemini CLI, aider) that tmcp submits prompts to and waits
// on: what their screens show while busy or asking for approval, how long
// to leave between a paste and the key that submits it, and which key
// that is. The profiles ship in profiles.json; an operator's file
// (TMCP_AGENT_PROFILES) replaces a profile of the same name or adds one.
package agents

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

//go:embed profiles.json
var builtIn []byte

// Defaults for a field a profile leaves out, and the whole of the
// generic profile an unknown program gets: stillness alone.
const (
	DefaultGap       = 200 * time.Millisecond  // paste to submit key
	DefaultSettle    = 50 * time.Millisecond   // quiet that shows a paste was taken
	DefaultStill     = 1000 * time.Millisecond // quiet that ends a turn
	DefaultSubmitKey = "Enter"
	GenericName      = "generic"
)

// Profile is how tmcp drives one terminal agent. Markers are plain text
// matched on the visible screen, case-sensitive.
type Profile struct {
	Name     string   `json:"name"`
	Programs []string `json:"programs"` // the command names that pick this profile
	// Busy markers show while a turn runs (Claude Code shows its prompt
	// sign while busy, so the sign proves nothing).
	Busy []string `json:"busy,omitempty"`
	// Approval markers show when the agent stops to ask the person.
	Approval []string `json:"approval,omitempty"`
	// Idle markers, when given, must show for a turn to count as ended.
	Idle []string `json:"idle,omitempty"`
	// Pending markers stand for pasted text not yet submitted (Claude
	// Code's "[Pasted text #1 +N lines]"); submitting removes them.
	Pending   []string `json:"pending,omitempty"`
	GapMs     int      `json:"gapMs,omitempty"`    // wait from the paste settling to the submit key
	SettleMs  int      `json:"settleMs,omitempty"` // quiet after a paste or a key that shows it was taken
	StillMs   int      `json:"stillMs,omitempty"`  // quiet, no busy marker shown, that ends a turn
	SubmitKey string   `json:"submitKey,omitempty"`
	// Guessed names the fields that are defaults rather than known facts
	// about the program: an operator's file should check them.
	Guessed []string `json:"guessed,omitempty"`
}

// Gap, Settle and Still are the profile's durations, defaults filled in.
func (p Profile) Gap() time.Duration    { return orDefault(p.GapMs, DefaultGap) }
func (p Profile) Settle() time.Duration { return orDefault(p.SettleMs, DefaultSettle) }
func (p Profile) Still() time.Duration  { return orDefault(p.StillMs, DefaultStill) }

// Key is the key that submits, as tmux names it.
func (p Profile) Key() string {
	if p.SubmitKey == "" {
		return DefaultSubmitKey
	}
	return p.SubmitKey
}

func orDefault(ms int, def time.Duration) time.Duration {
	if ms <= 0 {
		return def
	}
	return time.Duration(ms) * time.Millisecond
}

// Set is the profiles in force, searched in order.
type Set struct{ profiles []Profile }

// Parse reads a profiles file: {"profiles": [...]}. Unknown fields are
// refused, so a misspelt field is not silently ignored.
func Parse(data []byte) ([]Profile, error) {
	var f struct {
		Profiles []Profile `json:"profiles"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	for i, p := range f.Profiles {
		switch {
		case p.Name == "":
			return nil, fmt.Errorf("profile %d has no name", i+1)
		case p.GapMs < 0 || p.SettleMs < 0 || p.StillMs < 0:
			return nil, fmt.Errorf("profile %s: gapMs, settleMs and stillMs cannot be negative", p.Name)
		case slices.Contains(p.Busy, "") || slices.Contains(p.Approval, "") || slices.Contains(p.Idle, "") || slices.Contains(p.Pending, ""):
			return nil, fmt.Errorf("profile %s: an empty marker would match every screen", p.Name)
		}
	}
	return f.Profiles, nil
}

// BuiltIn returns the profiles tmcp ships.
func BuiltIn() *Set {
	ps, err := Parse(builtIn)
	if err != nil {
		panic("agents: profiles.json: " + err.Error()) // fixed at build time; a test reads it
	}
	return &Set{profiles: ps}
}

// Load returns the built-in profiles with those of the operator's file,
// if file is not empty: a profile of the file replaces the built-in one of
// the same name, and the file's profiles are searched first.
func Load(file string) (*Set, error) {
	set := BuiltIn()
	if file == "" {
		return set, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("agent profiles: %w", err)
	}
	own, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("agent profiles %s: %w", file, err)
	}
	kept := slices.DeleteFunc(set.profiles, func(b Profile) bool {
		return slices.ContainsFunc(own, func(o Profile) bool { return o.Name == b.Name })
	})
	set.profiles = append(own, kept...)
	return set, nil
}

// Select returns the profile of the program a pane runs: command is tmux's
// #{pane_current_command}; argv, when known, is the command line of the
// process in the pane's foreground (an agent started as "node …/gemini"
// shows as node). A program no profile names gets the generic profile.
func (s *Set) Select(command string, argv []string) Profile {
	names := []string{base(command)}
	for _, a := range argv[:min(len(argv), 2)] {
		if n := base(a); n != "" {
			names = append(names, n)
		}
	}
	for _, p := range s.profiles {
		for _, name := range names {
			if slices.Contains(p.Programs, name) {
				return p
			}
		}
	}
	return Profile{Name: GenericName}
}

// base is a command's name without its directory or a login shell's "-".
func base(command string) string {
	if command == "" {
		return ""
	}
	return path.Base(strings.TrimPrefix(command, "-"))
}
