package mcpserver

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestRecipesAreWithheldByTierWhenTheyWrite(t *testing.T) {
	cases := []struct {
		tier Tier
		want string
	}{
		{ReadOnly, "find_failing_pane"},
		{Mutating, "start_service find_failing_pane watch_job recover_stuck_pane"},
		{Destructive, "start_service find_failing_pane watch_job recover_stuck_pane"},
	}
	for _, c := range cases {
		s := &Server{cfg: Config{Tier: c.tier}}
		if got := strings.Join(s.promptNames(), " "); got != c.want {
			t.Errorf("tier %s offers %q, want %q", c.tier, got, c.want)
		}
	}
}

func TestRecipeTextFillsArgumentsAndRefusesBadOnes(t *testing.T) {
	byName := map[string]recipe{}
	for _, r := range recipes() {
		byName[r.prompt.Name] = r
	}
	cases := []struct {
		name    string
		args    map[string]string
		want    []string // substrings of the text, or of the error
		wantErr bool
	}{
		{"start_service", map[string]string{"command": "make serve", "readyPattern": "listening on"},
			[]string{`"keys": "make serve"`, `"patterns": ["listening on"]`, `"stop": ["(?i)error`, "capture_since", "list_panes"}, false},
		{"start_service", map[string]string{"command": "x", "readyPattern": "up", "paneId": "%4", "stopPattern": "boom"},
			[]string{"Use pane %4", `"stop": ["boom"]`}, false},
		{"start_service", map[string]string{"command": "x"}, []string{"needs readyPattern"}, true},
		{"start_service", map[string]string{"command": "x", "readyPattern": "y", "colour": "red"}, []string{`no argument "colour"`, "command, readyPattern"}, true},
		{"find_failing_pane", nil, []string{"search_panes", defaultFailPattern[:10], "snapshot_pane"}, false},
		{"find_failing_pane", map[string]string{"pattern": "E[0-9]+", "sessionName": "ci"}, []string{`"pattern": "E[0-9]+"`, `"sessionName": "ci"`}, false},
		{"watch_job", map[string]string{"command": "make test", "paneId": "%2"}, []string{`"command": "make test", "paneId": "%2", "detach": true`, "get_job"}, false},
		{"watch_job", map[string]string{"paneId": "%2"}, []string{`capture_since {"paneId": "%2"}`}, false},
		{"recover_stuck_pane", map[string]string{"paneId": "%7"}, []string{`"paneId": "%7", "keys": "C-c"`, "exit_copy_mode", "respawn_pane"}, false},
		{"recover_stuck_pane", map[string]string{}, []string{"needs paneId"}, true},
	}
	for _, c := range cases {
		text, err := byName[c.name].text(c.args)
		got := text
		if err != nil {
			got = err.Error()
		}
		if (err != nil) != c.wantErr {
			t.Errorf("%s %v: error %v, want error %v", c.name, c.args, err, c.wantErr)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %v: %q lacks %q", c.name, c.args, got, w)
			}
		}
	}
}

// TestRecipeStepsNameRealToolsAndArguments checks every `tool {"arg": …}`
// step of every recipe against the tools' input schemas, so a renamed
// argument cannot leave a recipe telling the model to pass a stale one.
func TestRecipeStepsNameRealToolsAndArguments(t *testing.T) {
	s := &Server{cfg: Config{Tier: Destructive}}
	props := map[string]map[string]bool{}
	for _, d := range s.definitions() {
		b, _ := json.Marshal(d.tool.InputSchema)
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(b, &schema)
		props[d.tool.Name] = map[string]bool{}
		for p := range schema.Properties {
			props[d.tool.Name][p] = true
		}
	}
	step := regexp.MustCompile(`([a-z_]+) \{([^}]*)\}`)
	key := regexp.MustCompile(`"([A-Za-z]+)":`)
	checked := 0
	args := map[string]string{"command": "make", "readyPattern": "up", "paneId": "%1", "pattern": "E", "sessionName": "s"}
	for _, r := range recipes() {
		for _, a := range []map[string]string{args, {"paneId": "%1"}} {
			given := map[string]string{}
			for _, pa := range r.prompt.Arguments {
				if v, ok := a[pa.Name]; ok {
					given[pa.Name] = v
				}
			}
			text, err := r.text(given)
			if err != nil {
				continue
			}
			for _, m := range step.FindAllStringSubmatch(text, -1) {
				tool, body := m[1], m[2]
				checked++
				known, ok := props[tool]
				if !ok {
					t.Errorf("%s: step calls %s, which is not a tool", r.prompt.Name, tool)
					continue
				}
				for _, k := range key.FindAllStringSubmatch(body, -1) {
					if !known[k[1]] {
						t.Errorf("%s: step %s passes %q, not one of its arguments", r.prompt.Name, m[0], k[1])
					}
				}
			}
		}
	}
	if checked < 12 {
		t.Errorf("only %d steps found in the recipes; the step pattern no longer matches them", checked)
	}
}

func TestRecipeValuesAreJSONStrings(t *testing.T) {
	cases := []struct{ in, want string }{
		{"make && ./serve > log", `"make && ./serve > log"`},
		{"a\tb\"c", `"a\tb\"c"`},
		{"\x01", `"\u0001"`},
	}
	for _, c := range cases {
		if got := q(c.in); got != c.want {
			t.Errorf("q(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
