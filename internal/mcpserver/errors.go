package mcpserver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tmcp/tmcp/internal/tmux"
)

// noAnswerHint is the next step after a command tmux did not answer.
const noAnswerHint = "tmux is not answering (stopped or overloaded); call get_server_info later"

// hints map tmux's messages to the call a model should make next.
var hints = []struct{ tmux, next string }{
	{"can't find pane", "call list_panes to see the panes"},
	{"can't find window", "call list_windows to see the windows"},
	{"can't find session", "call list_sessions to see the sessions"},
	{"no such pane", "call list_panes to see the panes"},
	{"no such window", "call list_windows to see the windows"},
	{"no such session", "call list_sessions to see the sessions"},
	{"invalid option", "check the name, or call show_option without name to list them"},
	{"ambiguous option", "check the name, or call show_option without name to list them"},
	{"unknown variable", "call show_environment without name to list them"},
	{"index in use", "choose a free index (call list_windows) or leave index out"},
	{"no server running", "no tmux server is running; call create_session to start one"},
	{"error connecting to", "no tmux server is running; call create_session to start one"},
	{"duplicate session", "choose another name, or call list_sessions"},
	{"create pane failed", "the window has no room; make the size smaller or kill a pane"},
	{"no space for new pane", "the window has no room; make the size smaller or kill a pane"},
}

// explain turns a tmux failure into an error that says what was being
// done, to which target, tmux's own message, and what to call next.
func explain(doing string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var ce *tmux.CommandError
	if errors.As(err, &ce) {
		msg = ce.Message
	}
	if errors.Is(err, tmux.ErrNoAnswer) {
		return fmt.Errorf("%s: %s; %s", doing, msg, noAnswerHint)
	}
	for _, h := range hints {
		if strings.Contains(msg, h.tmux) {
			return fmt.Errorf("%s: %s; %s", doing, msg, h.next)
		}
	}
	return fmt.Errorf("%s: %s", doing, msg)
}
