package mcpserver

import (
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/tmux"
)

func TestBoundSettingsKeepsTheFirstItemsAndCountsTheRest(t *testing.T) {
	many := make([]tmux.Setting, maxSettings+5)
	for i := range many {
		many[i] = tmux.Setting{Name: "n", Value: "v"}
	}
	big := strings.Repeat("x", maxSettingsBytes)
	cases := []struct {
		name          string
		in            []tmux.Setting
		kept, dropped int
	}{
		{"none", nil, 0, 0},
		{"one huge value is kept whole", []tmux.Setting{{Name: "a", Value: big + big}}, 1, 0},
		{"over the count", many, maxSettings, 5},
		{"over the bytes", []tmux.Setting{{Name: "a", Value: big[:100]}, {Name: "b", Value: big}, {Name: "c"}}, 1, 2},
	}
	for _, c := range cases {
		out := boundSettings(c.in)
		if len(out.Items) != c.kept || out.Dropped != c.dropped || out.Items == nil {
			t.Errorf("%s: kept %d, dropped %d (items nil: %v); want %d and %d", c.name, len(out.Items), out.Dropped, out.Items == nil, c.kept, c.dropped)
		}
	}
}

func TestSettingNamesAreChecked(t *testing.T) {
	options := map[string]bool{
		"status-left": true, "@mine": true, "@a.b:c/d": true, "command-alias[3]": true, "escape-time": true,
		"": false, "status left": false, "-u": false, "@": false, "a\nb": false, "x;kill-server": false, "a[x]": false,
	}
	for name, ok := range options {
		if err := checkOptionName(name); (err == nil) != ok {
			t.Errorf("checkOptionName(%q) = %v, want ok %v", name, err, ok)
		}
	}
	vars := map[string]bool{
		"PATH": true, "_x1": true, "TMCP_VAR": true,
		"": false, "1A": false, "A=B": false, "A B": false, "-A": false, "é": false,
	}
	for name, ok := range vars {
		if err := checkEnvName(name); (err == nil) != ok {
			t.Errorf("checkEnvName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}
