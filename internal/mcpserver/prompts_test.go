package mcpserver

import (
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
