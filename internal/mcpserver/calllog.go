package mcpserver

import (
	"encoding/json"
	"slices"
	"sync"
)

// recentCalls is how many calls a CallLog keeps: the live view shows the
// latest of a pane's, and an older one is in the audit file if anywhere.
const recentCalls = 512

// paneArguments are the arguments that name panes, alone or in a list.
var paneArguments = map[string]bool{"paneId": true, "targetPaneId": true, "paneIds": true}

// A Call is one tool call as the audit log records it.
type Call struct {
	Seq   uint64   // 1 for the first call logged, then one more each
	Host  string   // the remote host it ran on; "" for the local server
	Panes []string // the pane ids its arguments named, nested ones (a batch's) included
	// Line is its audit line, arguments redacted, as the audit file has it.
	Line json.RawMessage
}

// A CallLog keeps the audit lines of the latest tool calls in memory, for
// the live view, whether or not an audit file is written; it is safe for
// concurrent use. Servers made by WithTier share one.
type CallLog struct {
	mu      sync.Mutex
	calls   []Call // the latest recentCalls, oldest first
	next    uint64
	changed chan struct{} // closed by the next add
}

func newCallLog() *CallLog { return &CallLog{next: 1, changed: make(chan struct{})} }

// add logs a call and wakes whoever waits for one.
func (l *CallLog) add(host string, line []byte, args json.RawMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.calls) == recentCalls {
		l.calls = slices.Delete(l.calls, 0, 1)
	}
	l.calls = append(l.calls, Call{Seq: l.next, Host: host, Panes: panesNamed(args), Line: line})
	l.next++
	close(l.changed)
	l.changed = make(chan struct{})
}

// Since returns the calls kept whose Seq is after seq, oldest first, and a
// channel closed when another is logged. Take the channel with the calls,
// so that a call logged in between is not missed.
func (l *CallLog) Since(seq uint64) ([]Call, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, _ := slices.BinarySearchFunc(l.calls, seq+1, func(c Call, s uint64) int {
		switch {
		case c.Seq < s:
			return -1
		case c.Seq > s:
			return 1
		}
		return 0
	})
	return slices.Clone(l.calls[i:]), l.changed
}

// panesNamed returns the pane ids that a call's arguments name, looking
// into nested objects and lists (a batch's calls).
func panesNamed(args json.RawMessage) []string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return nil
	}
	var panes []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case string:
			if paneArguments[key] && !slices.Contains(panes, v) {
				panes = append(panes, v)
			}
		case []any:
			for _, e := range v {
				walk(key, e)
			}
		case map[string]any:
			for k, e := range v {
				walk(k, e)
			}
		}
	}
	walk("", v)
	return panes
}
