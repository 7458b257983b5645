package tmux

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

func TestCaptureAsDrawnKeepsRowsAndTheirColouredSpaces(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	ctx := context.Background()
	// A line longer than the pane wraps onto a second row; a red
	// background ends in spaces.
	long := strings.Repeat("w", tmuxtest.Width+5)
	srv.Must("send-keys", "-t", "%0", `clear; printf '`+long+`\n\033[41mbg   \033[0m\n'`, "Enter")
	// Waited for as printed: the typed command line holds "bg" too, and
	// shows before clear has run.
	if !tmuxtest.WaitFor(5*time.Second, func() bool {
		out, _ := srv.Tmux("capture-pane", "-p", "-t", "%0")
		rows := strings.Split(out, "\n")
		return len(rows) > 2 && strings.HasPrefix(rows[0], "www") && strings.TrimSpace(rows[2]) == "bg"
	}) {
		t.Fatal("the lines never showed")
	}
	joined, err := c.CapturePane(ctx, "%0", CaptureOptions{Styles: true})
	if err != nil {
		t.Fatal(err)
	}
	drawn, err := c.CapturePane(ctx, "%0", CaptureOptions{Styles: true, AsDrawn: true})
	if err != nil {
		t.Fatal(err)
	}
	if joined[0] != long {
		t.Errorf("without AsDrawn the wrapped line is %q, want it joined", joined[0])
	}
	if drawn[0] != long[:tmuxtest.Width] || drawn[1] != "wwwww" {
		t.Errorf("AsDrawn rows 0 and 1: %q, %q; want the line as the pane wraps it", drawn[0], drawn[1])
	}
	if !strings.Contains(drawn[2], "bg   ") {
		t.Errorf("AsDrawn row 2 is %q; want the coloured spaces kept", drawn[2])
	}
}

func TestPaneInfoSaysWhetherTheCursorIsShown(t *testing.T) {
	srv := tmuxtest.New(t)
	c := newClient(t, srv)
	ctx := context.Background()
	for _, shown := range []bool{false, true} {
		seq := `\033[?25l`
		if shown {
			seq = `\033[?25h`
		}
		srv.Must("send-keys", "-t", "%0", "printf '"+seq+"'", "Enter")
		var p Pane
		if !tmuxtest.WaitFor(5*time.Second, func() bool {
			var err error
			p, err = c.PaneInfo(ctx, "%0")
			return err == nil && p.CursorShown == shown
		}) {
			t.Errorf("after %s the cursor is shown: %v", seq, p.CursorShown)
		}
	}
}

// ListPanesBrief reports what it holds as ListPanes does, for every
// listing: all panes, a session's, a window's.
func TestListPanesBriefHoldsWhatListPanesSays(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Must("split-window", "-d", "-t", "main", "sh")
	srv.Must("new-session", "-d", "-s", "other", "sh")
	c := newClient(t, srv)
	ctx := context.Background()
	brief := func(p Pane) Pane {
		return Pane{ID: p.ID, Index: p.Index, WindowID: p.WindowID, WindowIndex: p.WindowIndex, SessionID: p.SessionID,
			SessionName: p.SessionName, Active: p.Active, Command: p.Command, PID: p.PID, Path: p.Path, Title: p.Title,
			Width: p.Width, Height: p.Height, Dead: p.Dead, DeadStatus: -1}
	}
	window := run(t, c, "display-message", "-p", "-t", "main", "#{window_id}")[0]
	for _, tc := range []struct{ name, session, window string }{{"all", "", ""}, {"a session", "main", ""}, {"a window", "", window}} {
		full, err := c.ListPanes(ctx, tc.session, tc.window)
		if err != nil {
			t.Fatalf("%s: ListPanes: %v", tc.name, err)
		}
		got, err := c.ListPanesBrief(ctx, tc.session, tc.window)
		if err != nil {
			t.Fatalf("%s: ListPanesBrief: %v", tc.name, err)
		}
		if len(got) != len(full) || len(full) == 0 {
			t.Fatalf("%s: %d panes brief, %d in full", tc.name, len(got), len(full))
		}
		for i := range full {
			if want := brief(full[i]); got[i] != want {
				t.Errorf("%s: pane %d brief %+v, want %+v", tc.name, i, got[i], want)
			}
		}
	}
}
