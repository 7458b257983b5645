package mcpserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

func TestPanesNamedFindsEveryPaneArgumentNestedOrNot(t *testing.T) {
	cases := []struct {
		args string
		want []string
	}{
		{`{"paneId":"%3","keys":["%4"]}`, []string{"%3"}},
		{`{"paneIds":["%1","%2","%1"]}`, []string{"%1", "%2"}},
		{`{"paneId":"%1","targetPaneId":"%7"}`, []string{"%1", "%7"}},
		{`{"calls":[{"tool":"capture_pane","arguments":{"paneId":"%5"}},{"tool":"send_keys","arguments":{"paneId":"%6","text":"paneId"}}]}`, []string{"%5", "%6"}},
		{`{"sessionName":"main"}`, nil},
		{`not json`, nil},
	}
	for _, c := range cases {
		got := panesNamed(json.RawMessage(c.args))
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("panesNamed(%s) = %q, want %q", c.args, got, c.want)
		}
	}
}

func TestCallLogKeepsTheLatestCallsAndWakesOnEach(t *testing.T) {
	l := newCallLog()
	calls, changed := l.Since(0)
	if len(calls) != 0 {
		t.Fatalf("a new log holds %d calls", len(calls))
	}
	for i := range recentCalls + 10 {
		l.add("", []byte(fmt.Sprintf(`{"n":%d}`, i)), json.RawMessage(`{"paneId":"%1"}`))
	}
	select {
	case <-changed:
	default:
		t.Fatal("adding a call did not close the channel taken before")
	}
	calls, _ = l.Since(0)
	if len(calls) != recentCalls || calls[0].Seq != 11 || calls[len(calls)-1].Seq != recentCalls+10 {
		t.Fatalf("kept %d calls, seq %d to %d; want the latest %d, 11 to %d", len(calls), calls[0].Seq, calls[len(calls)-1].Seq, recentCalls, recentCalls+10)
	}
	later, _ := l.Since(recentCalls + 8)
	if len(later) != 2 || string(later[0].Line) != fmt.Sprintf(`{"n":%d}`, recentCalls+8) || !slices.Equal(later[0].Panes, []string{"%1"}) {
		t.Fatalf("Since(%d) = %+v, want the last two calls, on %%1", recentCalls+8, later)
	}
}
