package wait

import (
	"context"
	"strings"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

// When tmux pauses a pane for a client too far behind (pause-after), it
// drops what the pane writes until the client resumes it: a job that ends
// meanwhile loses its last lines with its end mark, and those are the
// lines its caller wants most (a build's error, a test's summary). The
// pane's history still holds them, so a job whose end mark went by unseen
// takes them from there.

// anchorLines is how many of the last lines read before a drop must be
// found together among the history's rows to say where the rows go on.
const anchorLines = 3

// mendFromHistory puts back the end of the output of a job that has
// ended after tmux dropped some of it, the end mark with it: the rows of
// the pane's history above the cursor's row (the shell's next prompt, or
// the row it will draw it on). Where the history still holds the row that
// ran the job, those rows are its whole output; otherwise they go on from
// the lines read before the drop (joined reports they were found among
// the rows, so nothing is missing between). taken says whether any row
// was put back.
func (s *Service) mendFromHistory(ctx context.Context, j *job) (taken, joined bool) {
	j.mu.Lock()
	kept := j.beforeLoss
	j.mu.Unlock()
	if kept == nil {
		return false, false
	}
	p, err := s.tc.PaneInfo(ctx, j.paneID)
	if err != nil || p.AlternateOn || p.CursorY == 0 && p.HistorySize == 0 {
		return false, false
	}
	above := p.CursorY - 1 // -1: the last row of the history
	rows, err := s.tc.CapturePane(ctx, j.paneID, tmux.CaptureOptions{History: true, End: &above})
	if err != nil {
		return false, false
	}
	whole, found, _ := j.outputIn(rows, true)
	tail := kept
	if found {
		tail = pane.NewTailBuffer(jobTailLines, jobTailBytes)
	} else {
		whole, joined = rowsAfter(kept.Lines(), rows)
	}
	for _, l := range whole {
		tail.Add(l)
	}
	j.mu.Lock()
	j.tail = tail
	j.mu.Unlock()
	return true, found || joined
}

// rowsAfter returns the rows of a history that follow the last lines of
// an output read before a drop: those after the one place where the last
// anchorLines lines are found together (joined), or after the last of
// several such places, where output repeats itself (nothing is given
// twice, some rows may be missing). Where they are not found, the drop
// outran the history: all its rows, but for any that begin it with the
// end of the anchor.
func rowsAfter(before, rows []string) (after []string, joined bool) {
	anchor := before[max(len(before)-anchorLines, 0):]
	if len(anchor) == 0 {
		return pane.TrimBlank(rows), false
	}
	found, at := 0, -1
	for end := len(anchor); end <= len(rows); end++ {
		if sameRows(anchor, rows[end-len(anchor):end]) {
			found, at = found+1, end
		}
	}
	if found > 0 {
		return pane.TrimBlank(rows[at:]), found == 1
	}
	// The history may begin within the anchor: its first rows are then
	// not given twice, though too few to tell a coincidence.
	for k := min(len(anchor)-1, len(rows)); k > 0; k-- {
		if sameRows(anchor[len(anchor)-k:], rows[:k]) {
			return pane.TrimBlank(rows[k:]), false
		}
	}
	return pane.TrimBlank(rows), false
}

// sameRows reports whether lines read from a pane's output and rows of
// its history show the same text: a history row holds spaces where the
// output had tabs, and trailing spaces where it had none.
func sameRows(lines, rows []string) bool {
	for i := range lines {
		if strings.Join(strings.Fields(lines[i]), " ") != strings.Join(strings.Fields(rows[i]), " ") {
			return false
		}
	}
	return true
}

// mend is mendFromHistory within d, as a note for the job's reason.
func (s *Service) mend(j *job, d time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	switch taken, joined := s.mendFromHistory(ctx, j); {
	case joined:
		return "its output after the drop is as the pane's history holds it"
	case taken:
		return "its last lines are as the pane's history holds them; the output between was lost"
	}
	return ""
}
