package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/tmux"
)

func TestExplainRecognisesACommandTmuxDidNotAnswer(t *testing.T) {
	unanswered := &tmux.CommandError{
		Args:    []string{"list-panes"},
		Message: "no answer from tmux in time",
		Err:     errors.Join(tmux.ErrNoAnswer, context.DeadlineExceeded),
	}
	for _, err := range []error{unanswered, fmt.Errorf("streaming pane %%1: %w", unanswered)} {
		got := explain("listing panes", err).Error()
		want := "listing panes: no answer from tmux in time; " + noAnswerHint
		if got != want {
			t.Errorf("explain(%v) = %q, want %q", err, got, want)
		}
	}
	// A pane's text that merely says the words is not tmux failing to answer.
	if got := explain("reading", errors.New("no answer from tmux in time")).Error(); strings.Contains(got, noAnswerHint) {
		t.Errorf("explain of plain text = %q, want no hint", got)
	}
}
