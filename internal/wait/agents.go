package wait

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tmcp/tmcp/internal/agents"
	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

// Bounds of a submission. A paste the program never shows is submitted
// all the same after pasteShowWait (the reply says whether it showed);
// each submit key is given verifyWait to change the screen.
const (
	pasteShowWait  = 3 * time.Second
	verifyWait     = 2 * time.Second
	submitAttempts = 3
	// verifyPaint bounds how long a check of the screen after the submit
	// key waits for the program to pause: a spinner never does.
	verifyPaint = 150 * time.Millisecond
	// screenEvery bounds how often a wait on a screen reads it while the
	// program writes: the stream says when it wrote, a read what it shows.
	screenEvery = 50 * time.Millisecond
)

// Outcomes of a wait on a screen, beside matched, timeout, pane_died,
// connection_lost and cancelled.
const (
	OutcomeBell     = "bell"     // the program rang the bell
	OutcomeApproval = "approval" // an approval marker of its profile shows
	// OutcomeIdle (idle) here: no busy marker shows and the screen has
	// been still for the still time.
)

// SetProfiles sets the agent profiles that submissions and waits on
// screens pick from; the built-in ones until then (New).
func (s *Service) SetProfiles(set *agents.Set) { s.profiles = set }

// front returns the name and command line of the program in front in a
// pane: the leader of the terminal's foreground group, or, when that is
// a shell that started a program without job control (a pane made to run
// "sh -c agent"), the newest program it started. It reads /proc, which
// only a tmcp on the pane's machine can; elsewhere it is tmux's
// #{pane_current_command} alone.
func (s *Service) front(info tmux.Pane) (name string, argv []string) {
	name = info.Command
	if s.tc.Remote() || info.PID <= 0 {
		return name, nil
	}
	_, pid, err := processGroups(info.PID)
	for depth := 0; err == nil && pid > 0 && depth < 4; depth++ {
		proc := "/proc/" + strconv.Itoa(pid)
		b, err := os.ReadFile(proc + "/cmdline")
		if err != nil {
			break
		}
		comm, _ := os.ReadFile(proc + "/comm")
		name, argv = strings.TrimSpace(string(comm)), strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		kids, _ := os.ReadFile(proc + "/task/" + strconv.Itoa(pid) + "/children")
		f := strings.Fields(string(kids))
		if !isShell(name) || len(f) == 0 {
			break
		}
		pid, err = strconv.Atoi(f[len(f)-1])
	}
	return name, argv
}

// screenWatch follows a pane for a wait on what its screen shows: its
// stream says when the program wrote and whether it rang the bell (a BEL
// outside an OSC, which tmux 3.3a passes to a control client as it is),
// a capture what the screen shows.
type screenWatch struct {
	s       *Service
	paneID  string
	stream  *pane.Stream
	f       *feed
	dec     *pane.Decoder
	last    time.Time // when the program last wrote, or the watch began
	bells   int
	release func()
}

// errPaneGone ends a watch whose stream closed: the pane died, or its
// connection broke.
var errPaneGone = errors.New("the pane's stream ended")

func (s *Service) watchScreen(ctx context.Context, info tmux.Pane) (*screenWatch, error) {
	stream, release, err := s.hub.Acquire(ctx, info.ID, streamLinger)
	if err != nil {
		return nil, err
	}
	f := newFeed()
	from, untap := stream.Tap(f.write)
	dec := pane.NewDecoder(from)
	if info.AlternateOn {
		dec = pane.NewDecoderOnAltScreen(from)
	}
	dec.ResumeAfter(stream.Before(from))
	return &screenWatch{s: s, paneID: info.ID, stream: stream, f: f, dec: dec, last: time.Now(),
		release: func() { untap(); release() }}, nil
}

// take reads what the pane wrote since the last take, and reports
// whether it wrote anything.
func (w *screenWatch) take() bool {
	data := w.f.take()
	if len(data) == 0 {
		return false
	}
	w.last = time.Now()
	w.dec.Decode(data, func(ev pane.Event) {
		if ev.Kind == pane.EventBell {
			w.bells++
		}
	})
	return true
}

// await waits until the pane writes (quiet 0) or, with quiet, until it
// has written nothing for that long, but no longer than limit; it reports
// whether that came. since is the time that counts as the last write when
// waiting for quiet.
func (w *screenWatch) await(ctx context.Context, quiet, limit time.Duration) (bool, error) {
	deadline := time.Now().Add(limit)
	seen := w.last
	for {
		w.take()
		if closed, _ := w.stream.Closed(); closed {
			return false, errPaneGone
		}
		left := time.Until(deadline)
		var next time.Duration
		if quiet > 0 {
			next = quiet - time.Since(w.last)
		} else if w.last.After(seen) {
			return true, nil
		} else {
			next = left
		}
		if quiet > 0 && next <= 0 {
			return true, nil
		}
		if left <= 0 {
			return false, nil
		}
		t := time.NewTimer(min(next, left))
		select {
		case <-w.f.ready:
		case <-t.C:
		case <-w.stream.Done():
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		}
		t.Stop()
	}
}

// screen reads the rows the pane shows, as drawn, trailing spaces cut.
func (w *screenWatch) screen(ctx context.Context) ([]string, error) {
	rows, err := w.s.tc.CapturePane(ctx, w.paneID, tmux.CaptureOptions{AsDrawn: true})
	for i, r := range rows {
		rows[i] = strings.TrimRight(r, " ")
	}
	return rows, err
}

// SubmitRequest is a prompt to submit to the program in a pane.
type SubmitRequest struct {
	PaneID string
	Text   string
}

// SubmitResult says how a submission went.
type SubmitResult struct {
	Profile    string
	PasteShown bool   // the screen changed after the paste
	Attempts   int    // submit keys sent
	Verified   bool   // the screen showed the submission
	How        string // what showed it
	Screen     []string
	Elapsed    time.Duration
}

// SubmitPrompt pastes text into the program in a pane (bracketed, from a
// private buffer, so its newlines stay newlines), waits until the program
// has shown it and gone quiet, waits the profile's gap, sends the submit
// key and checks the screen for the submission, sending the key again,
// after the gap, while it does not show, up to submitAttempts keys. It
// never sends Escape. A shell at its prompt is refused: run_command runs
// commands there.
func (s *Service) SubmitPrompt(ctx context.Context, req SubmitRequest) (SubmitResult, error) {
	start := time.Now()
	if req.Text == "" {
		return SubmitResult{}, fmt.Errorf("nothing to submit to pane %s: text is empty", req.PaneID)
	}
	info, err := s.tc.PaneInfo(ctx, req.PaneID)
	if err != nil {
		return SubmitResult{}, err
	}
	switch {
	case info.Dead:
		return SubmitResult{}, fmt.Errorf("pane %s is dead (%s)", info.ID, info.Death())
	case info.InMode:
		return SubmitResult{}, fmt.Errorf("pane %s is in %s; call exit_copy_mode on it first", info.ID, info.Mode)
	}
	name, argv := s.front(info)
	if isShell(name) {
		return SubmitResult{}, fmt.Errorf("pane %s shows the shell %s at its prompt: use run_command to run a command there; submit_prompt is for a program such as a terminal agent", info.ID, name)
	}
	p := s.profiles.Select(name, argv)
	res := SubmitResult{Profile: p.Name}
	w, err := s.watchScreen(ctx, info)
	if err != nil {
		return res, err
	}
	defer w.release()
	before, err := w.screen(ctx)
	if err != nil {
		return res, err
	}
	if err := s.hub.Paste(ctx, info.ID, req.Text, true); err != nil {
		return res, err
	}
	pasted := time.Now()
	if res.PasteShown, err = w.await(ctx, 0, pasteShowWait); err != nil {
		return res, submitError(info.ID, err)
	}
	if _, err := w.await(ctx, p.Settle(), verifyWait); err != nil {
		return res, submitError(info.ID, err)
	}
	shown, err := w.screen(ctx)
	if err != nil {
		return res, err
	}
	cursor, err := s.tc.PaneInfo(ctx, info.ID)
	if err != nil {
		return res, err
	}
	input := inputRow(before, shown, cursor.CursorY)
	prompt := ""
	if info.CursorY >= 0 && info.CursorY < len(before) {
		prompt = before[info.CursorY]
	}
	after := shown
	for !res.Verified && res.Attempts < submitAttempts {
		// The gap counts from the program's last write, which came after
		// it read the paste (or the last key): the program sees at least
		// the gap.
		from := w.last
		if from.Before(pasted) {
			from = pasted
		}
		sleep(ctx, time.Until(from.Add(p.Gap())))
		if err := s.hub.Keys(ctx, info.ID, p.Key()); err != nil {
			return res, err
		}
		res.Attempts++
		if after, err = s.verify(ctx, w, p, shown, input, prompt, &res); err != nil {
			return res, submitError(info.ID, err)
		}
	}
	res.Screen, res.Elapsed = after, time.Since(start)
	return res, nil
}

// verify looks at the screen each time the program, having written after
// the submit key, pauses (or has painted for verifyPaint), until it shows
// the submission or verifyWait passes, and returns the screen last read.
// It returns as soon as the submission shows: a turn that follows goes on
// after the call.
func (s *Service) verify(ctx context.Context, w *screenWatch, p agents.Profile, shown []string, input, prompt string, res *SubmitResult) ([]string, error) {
	deadline := time.Now().Add(verifyWait)
	after := shown
	for {
		wrote, err := w.await(ctx, 0, time.Until(deadline))
		if err != nil || !wrote {
			return after, err
		}
		if _, err := w.await(ctx, p.Settle(), min(verifyPaint, time.Until(deadline))); err != nil {
			return after, err
		}
		if after, err = w.screen(ctx); err != nil {
			return after, err
		}
		atCursor := ""
		if info, err := s.tc.PaneInfo(ctx, w.paneID); err == nil && info.CursorY >= 0 && info.CursorY < len(after) {
			atCursor = after[info.CursorY]
		}
		if res.Verified, res.How = submitted(p, shown, after, input, prompt, atCursor); res.Verified {
			return after, nil
		}
	}
}

func submitError(paneID string, err error) error {
	if errors.Is(err, errPaneGone) {
		return fmt.Errorf("pane %s ended while tmcp submitted to it", paneID)
	}
	return err
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// inputRow is the row that shows the pasted text being edited: the row
// of the cursor once the paste showed, or else the lowest row the paste
// changed; "" when the paste showed nothing.
func inputRow(before, shown []string, cursorY int) string {
	if cursorY >= 0 && cursorY < len(shown) && strings.TrimSpace(shown[cursorY]) != "" &&
		(cursorY >= len(before) || shown[cursorY] != before[cursorY]) {
		return shown[cursorY]
	}
	for i := len(shown) - 1; i >= 0; i-- {
		if strings.TrimSpace(shown[i]) != "" && (i >= len(before) || shown[i] != before[i]) {
			return shown[i]
		}
	}
	return ""
}

// submitted judges from the screen before the submit key (shown) and
// after it whether the program took the submission, and says why: a
// busy marker came, a pending paste's placeholder went, the row being
// edited left the screen (the input was cleared), or, when nothing of the
// paste showed, the screen changed.
//
// prompt is the row the cursor was on before the paste, atCursor the row
// the cursor is on now: an input row back to the prompt it showed before
// the paste was cleared, though the transcript above may repeat its rows.
func submitted(p agents.Profile, shown, after []string, input, prompt, atCursor string) (bool, string) {
	for _, m := range p.Busy {
		if !onScreen(shown, m) && onScreen(after, m) {
			return true, "busy marker " + strconv.Quote(m) + " showed"
		}
	}
	for _, m := range p.Pending {
		if onScreen(shown, m) {
			if onScreen(after, m) {
				return false, ""
			}
			return true, "the pasted text's placeholder left the screen"
		}
	}
	prompt, atCursor = strings.TrimRight(prompt, " "), strings.TrimRight(atCursor, " ")
	if strings.TrimSpace(prompt) != "" && atCursor == prompt && strings.TrimRight(input, " ") != prompt {
		return true, "the input row is back to the prompt it showed before the paste"
	}
	if input != "" {
		if count(after, input) < count(shown, input) {
			return true, "the input row left the screen"
		}
		return false, ""
	}
	if !slices.Equal(shown, after) {
		return true, "the screen changed"
	}
	return false, ""
}

func onScreen(rows []string, marker string) bool {
	return slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, marker) })
}

func count(rows []string, row string) int {
	n := 0
	for _, r := range rows {
		if r == row {
			n++
		}
	}
	return n
}

// ScreenRequest is a wait on what a pane's screen shows.
type ScreenRequest struct {
	PaneID   string
	Patterns []string // RE2, matched on each row: one showing ends the wait
	Busy     []string // markers whose absence, with stillness, ends it; nil: the profile's
	Still    time.Duration
	Timeout  Timeout
	Progress func(elapsed time.Duration)
	Watching func(paneID string)
}

// ScreenResult says why a wait on a screen ended, and the screen then.
type ScreenResult struct {
	Outcome string
	Pattern string // the pattern or marker that showed
	Profile string
	Screen  []string
	Elapsed time.Duration
	Reason  string
}

// WaitForScreen waits until a pattern shows on a pane's screen, an
// approval marker of the program's profile shows, the program rings the
// bell, or no busy marker shows and the program has written nothing for
// the still time (with idle markers in the profile, one must show too),
// whichever comes first, within the timeout. It reads the screen, not the
// stream, so it works on the alternate screen; the screen as it is counts,
// not only what changes after the call.
func (s *Service) WaitForScreen(ctx context.Context, req ScreenRequest) (ScreenResult, error) {
	ctx, cancel := bounded(ctx, req.Timeout)
	defer cancel()
	start := begun(ctx, req.Timeout)
	wctx, cancelWait := waiting(ctx)
	defer cancelWait()
	var patterns []*regexp.Regexp
	for _, p := range req.Patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return ScreenResult{}, fmt.Errorf("pattern %q: %w", p, err)
		}
		patterns = append(patterns, re)
	}
	res := ScreenResult{}
	end := func(outcome, reason string) (ScreenResult, error) {
		res.Outcome, res.Reason, res.Elapsed = outcome, reason, time.Since(start)
		return res, nil
	}
	info, err := s.tc.PaneInfo(wctx, req.PaneID)
	if unanswered(wctx, err) {
		return end(OutcomeTimeout, noAnswerReason)
	}
	if err != nil {
		return res, err
	}
	if info.Dead {
		return res, fmt.Errorf("pane %s is dead (%s): its screen will not change", info.ID, info.Death())
	}
	p := s.profiles.Select(s.front(info))
	res.Profile = p.Name
	busy := req.Busy
	if busy == nil {
		busy = p.Busy
	}
	still := req.Still
	if still <= 0 {
		still = p.Still()
	}
	w, err := s.watchScreen(wctx, info)
	if unanswered(wctx, err) {
		return end(OutcomeTimeout, noAnswerReason)
	}
	if err != nil {
		return res, err
	}
	defer w.release()
	if req.Watching != nil {
		req.Watching(info.ID)
	}
	defer progress(req.Progress, start)()
	// judge reads the screen and says whether it ends the wait; quiet
	// says the program has been still for the still time.
	judge := func(quiet bool) (string, bool) {
		rows, err := w.screen(wctx)
		if err != nil {
			return "", false
		}
		res.Screen = rows
		for i, re := range patterns {
			if slices.ContainsFunc(rows, re.MatchString) {
				res.Pattern = req.Patterns[i]
				return OutcomeMatched, true
			}
		}
		for _, m := range p.Approval {
			if onScreen(rows, m) {
				res.Pattern = m
				return OutcomeApproval, true
			}
		}
		if !quiet || slices.ContainsFunc(busy, func(m string) bool { return onScreen(rows, m) }) {
			return "", false
		}
		if len(p.Idle) > 0 && !slices.ContainsFunc(p.Idle, func(m string) bool { return onScreen(rows, m) }) {
			return "", false
		}
		return OutcomeIdle, true
	}
	if outcome, done := judge(false); done {
		return end(outcome, "")
	}
	// dirty: the program wrote since the screen was last read; calm: the
	// screen was read once the program had been still for the still time,
	// and it has written nothing since.
	judged, dirty, calm := time.Now(), false, false
	for {
		limit := time.Until(stopAt(wctx))
		if !calm {
			limit = min(limit, still-time.Since(w.last))
		}
		if dirty {
			limit = min(limit, screenEvery-time.Since(judged))
		}
		wrote, err := w.await(wctx, 0, max(limit, 0))
		switch {
		case errors.Is(err, errPaneGone):
			_, reason := w.stream.Closed()
			return end(closedOutcome(w.stream), reason)
		case err != nil || !time.Now().Before(stopAt(wctx)):
			if cancelled(ctx) {
				return end(OutcomeCancelled, "")
			}
			s.finalScreen(ctx, w, &res)
			return end(OutcomeTimeout, "")
		case w.bells > 0:
			s.finalScreen(ctx, w, &res)
			return end(OutcomeBell, "")
		}
		if wrote {
			dirty, calm = true, false
		}
		quiet := !calm && time.Since(w.last) >= still
		if quiet || dirty && time.Since(judged) >= screenEvery {
			judged, dirty, calm = time.Now(), false, quiet
			if outcome, done := judge(quiet); done {
				return end(outcome, "")
			}
		}
	}
}

// finalScreen reads the screen for the reply of a wait that ended, with
// the grace the call's budget keeps for it.
func (s *Service) finalScreen(ctx context.Context, w *screenWatch, res *ScreenResult) {
	if rows, err := w.screen(ctx); err == nil {
		res.Screen = rows
	}
}
