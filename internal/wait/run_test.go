package wait

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A run whose line cannot be typed ends with its pane's death when the
// pane is gone (killed as tmcp typed, before its stream said so), and
// with the typing error when the pane lives on.
func TestARunThatCouldNotBeTypedEndsWithItsPanesDeath(t *testing.T) {
	f := newFixture(t)
	gone := strings.TrimSpace(f.srv.Must("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", "%0", "sh"))
	f.srv.Must("kill-pane", "-t", gone)
	for _, tc := range []struct {
		pane   string
		died   bool
		reason string
	}{
		{gone, true, "the pane was closed while the command was typed"},
		{"%0", false, "the command could not be typed: no answer"},
	} {
		j := newJob("abcdef012345", tc.pane, "echo x", time.Now())
		f.s.endUntyped(context.Background(), j, errors.New("no answer"))
		if r := j.result(false, 0, 0); !r.Finished || r.PaneDied != tc.died || r.Reason != tc.reason {
			t.Errorf("pane %s: finished %v paneDied %v reason %q; want paneDied %v, %q", tc.pane, r.Finished, r.PaneDied, r.Reason, tc.died, tc.reason)
		}
	}
}
