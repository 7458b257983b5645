package wait

import (
	"context"
	"path"
	"strings"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

// A command typed alone. Where the pane's shell marks its prompts and
// commands itself (OSC 133, as tmcp init makes it), and tmcp has seen it
// draw its prompt, run_command types the command as written and Enter,
// nothing more (typedAlone says which commands may go so): the shell's C
// starts the job, its D ends it with the status, and what lies between is
// the output. The job's marks carry no token, so a job typed alone is
// told from the pane's other commands only by coming first after the
// typing, at a prompt tmcp saw drawn.

// markSettle is how long a run waits for a pane's shell to mark that it
// has drawn its prompt: a run ends at its own end mark, which the shell's
// D and its next prompt follow only once the whole line has run. Typed
// before the prompt, the line would be echoed by the terminal, and then
// again by the line editor.
const markSettle = 200 * time.Millisecond

// markingShellInFront reports whether the shell that holds a pane's
// terminal is the one its tmux.ShellMarksOption names (tmcp init's snippet
// sets it, as its shell starts, to the shell's process id, name and
// nonce: the shell in front by that id and name marks its prompts before
// tmcp has seen one), tmcp's stream of the pane has seen no mark of it
// yet, and the shell waits at its prompt: by /proc, where tmcp can look
// (see shellReading), else once the pane stays quiet for markSettle (no
// prompt being drawn, which would show its marks, and atMarkedPrompt
// decides). The name tells a shell that replaced it with exec (same id)
// apart, but for the same shell run without the snippet.
//
// A shell tmcp started with the integration loaded (pane.Hub.ExpectShell)
// may not have set the option yet, nor drawn its prompt: a run that comes
// at once waits up to shellStartWait for its marks, or for the option and
// its line editor.
func (s *Service) markingShellInFront(ctx context.Context, p tmux.Pane, stream *pane.Stream) bool {
	if s.tc.Remote() || stream.Prompt().Marks {
		return false
	}
	// A shell handed tmcp's helper was found not to mark once already.
	if sh, ok := s.hub.ExpectedShell(p.ID); ok && sh.PID == p.PID && sh.Name == path.Base(p.Command) && !s.helpers.has(p.ID, p) {
		return s.startedShellReady(ctx, p, stream)
	}
	pid, ok := s.shellMarks(ctx, p, stream)
	if !ok {
		return false
	}
	if _, front, err := processGroups(p.PID); err != nil || front != pid {
		return false
	}
	end := stream.End()
	deadline := time.NewTimer(markSettle)
	defer deadline.Stop()
	for {
		changed := stream.Changed()
		if ps := stream.Prompt(); ps.Marks {
			// Its marks came meanwhile: atMarkedPrompt's question.
			return s.atMarkedPrompt(ctx, stream, p.PID)
		}
		reading, known := readingInput(pid)
		if reading {
			return true
		}
		wait := readingPoll
		if !known {
			wait = markSettle // no /proc to ask: a quiet pane
		}
		select {
		case <-changed:
		case <-time.After(wait):
		case <-deadline.C:
			// Not yet at its line editor; where /proc cannot say, quiet.
			return !known && stream.End() == end
		case <-ctx.Done():
			return false
		}
	}
}

// shellMarks reads a pane's tmux.ShellMarksOption and, when it names the
// shell the pane runs, gives the stream its nonce and returns its process.
func (s *Service) shellMarks(ctx context.Context, p tmux.Pane, stream *pane.Stream) (pid int, ok bool) {
	out, err := s.tc.Expand(ctx, p.ID, "#{"+tmux.ShellMarksOption+"}")
	if err != nil || len(out) == 0 {
		return 0, false
	}
	pid, name, nonce, ok := pane.ParseShellMarks(out[0])
	if !ok || name != path.Base(p.Command) {
		return 0, false
	}
	stream.SetShellNonce(nonce)
	return pid, true
}

// startedShellReady waits for a shell tmcp started with the integration
// loaded to wait at its prompt: its marks say so (its stream knows its
// nonce from the start) and, where /proc can tell, it waits at its line
// editor; or its option is set (the integration ran) and it waits there. A login shell's profile may take seconds:
// while the shell has yet to read, the wait goes on, up to
// startedShellWait; a shell that reads with neither option nor marks for
// markSettle did not load the integration (the person's files kept it
// out), and it reports false.
func (s *Service) startedShellReady(ctx context.Context, p tmux.Pane, stream *pane.Stream) bool {
	deadline := time.NewTimer(startedShellWait)
	defer deadline.Stop()
	var readingSince time.Time
	for {
		changed := stream.Changed()
		reading, known := s.shellReading(p.PID)
		if ps := stream.Prompt(); ps.Marks {
			// A stream that has yet to see B takes A for the prompt drawn,
			// which the shell writes before its line editor takes the
			// terminal: keys typed then were echoed once by the terminal
			// and again by the editor. Where /proc can say, the editor.
			if ps.Drawn && !ps.Running && (reading || !known) {
				return true
			}
		} else if reading || !known {
			if pid, ok := s.shellMarks(ctx, p, stream); ok && pid == p.PID {
				if known {
					return true
				}
				// No /proc to ask: a quiet pane, as for any marking shell.
				return s.quietFor(ctx, stream, markSettle)
			}
			if readingSince.IsZero() {
				readingSince = time.Now()
			} else if time.Since(readingSince) > markSettle {
				return false
			}
		} else {
			readingSince = time.Time{}
		}
		select {
		case <-changed:
		case <-time.After(25 * time.Millisecond):
		case <-deadline.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// startedShellWait bounds how long a run waits for a shell tmcp started
// with the integration loaded to come to its first prompt.
const startedShellWait = 10 * time.Second

// quietFor reports whether a pane's stream stays quiet for d.
func (s *Service) quietFor(ctx context.Context, stream *pane.Stream, d time.Duration) bool {
	end := stream.End()
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return false
	}
	return stream.End() == end
}

// atMarkedPrompt reports whether a pane's shell (the pane's process is
// pid), by the marks its stream has seen, waits at its prompt, drawn; a
// shell that has yet to draw it is given markSettle. A stream that has
// not seen the shell mark B takes its A for the prompt drawn, which the
// shell writes before its line editor takes the terminal: where /proc
// can tell, the line editor is waited for too, within the same
// markSettle, and the marks decide once it is over.
func (s *Service) atMarkedPrompt(ctx context.Context, stream *pane.Stream, pid int) bool {
	deadline := time.NewTimer(markSettle)
	defer deadline.Stop()
	for {
		changed := stream.Changed()
		wait := markSettle
		switch ps := stream.Prompt(); {
		case !ps.Marks:
			return false
		case ps.Drawn:
			reading, known := s.shellReading(pid)
			if reading || !known {
				return true
			}
			wait = readingPoll
		}
		select {
		case <-changed:
		case <-time.After(wait):
		case <-deadline.C:
			ps := stream.Prompt()
			return ps.Marks && ps.Drawn
		case <-ctx.Done():
			return false
		}
	}
}

// scanAlone is scan for a command typed alone: the shell's C starts it;
// a new prompt before it (A, after the echo of some text) says the shell
// read the line and ran nothing.
func (r *reader) scanAlone(data []byte, now time.Time) (rest []byte, finished bool) {
	base := r.pre.Offset()
	start, prompted := int64(-1), false
	r.pre.Decode(data, func(ev pane.Event) {
		if start >= 0 || prompted {
			return
		}
		switch ev.Kind {
		case pane.EventLine:
			r.preText = true
			r.unparsed = r.unparsed || unparsedIn(ev.Text, r.j.family)
		case pane.EventOSC:
			m, ok := r.shellsMark(ev.Text)
			switch {
			case !ok:
			case m.Kind == 'C':
				start = r.pre.Offset()
			case m.Kind == 'A' && (r.preText || r.pre.Partial() != ""):
				prompted = true
			}
		}
	})
	if r.unparsed && r.j.family == fishShell && r.unparsedAt.IsZero() && start < 0 {
		// fish draws no new prompt after a line it could not parse: it
		// keeps the line in its editor (due, expire).
		r.unparsedAt = now
	}
	echo := data
	if start >= 0 {
		echo = data[:start-base]
	}
	// With the last byte before: a key's echo may be split between reads.
	r.keyEchoedIn(append(r.held, echo...), now)
	r.held = append(r.held[:0], echo[max(0, len(echo)-1):]...)
	if start >= 0 {
		r.started, r.dec, r.pre, r.held = now, pane.NewDecoder(start), nil, nil
		return data[start-base:], false
	}
	if !prompted {
		return nil, false
	}
	switch {
	case r.unparsed:
		r.j.mu.Lock()
		r.j.retry = &retry{handOver: true, clearLine: r.j.family == fishShell}
		r.j.mu.Unlock()
		r.j.end(false, nil, notParsed)
	case r.key != "":
		r.j.end(false, nil, cutByKey(r.key))
	default:
		r.j.end(false, nil, "the shell drew its prompt again without running the typed line: the command did not run")
	}
	return nil, true
}

// shellMark reads an OSC of a command typed alone, once it started, and
// ends the job at the shell's end mark (D) or, where the shell gave none,
// at its next prompt (A).
func (r *reader) shellMark(payload string) (finished bool) {
	m, ok := r.shellsMark(payload)
	if !ok || m.Kind != 'D' && m.Kind != 'A' {
		return false
	}
	// The unfinished last line, less the blanks a shell writes before its
	// end mark to see whether the output ended its line (zsh's PROMPT_SP).
	last := strings.TrimRight(r.dec.Partial(), " ")
	switch {
	case m.Kind == 'A' || !m.HasStatus:
		r.flushHeld()
		if last != "" {
			r.j.add(last)
		}
		r.j.end(false, nil, "the shell marked the command's end without its exit status")
	case r.interrupted || len(r.heldLines) > 0:
		// An interrupt key reached it: its status says what the key did.
		r.endWith("E", m.Status, last)
	default:
		r.endWith("D", m.Status, last)
	}
	return true
}

// flushHeld lets go the lines held back after the echo of C-z: the job
// ended otherwise than stopped.
func (r *reader) flushHeld() {
	for _, l := range r.heldLines {
		r.j.add(l)
	}
	r.heldLines = nil
}

// noteShellEnd waits, in a pane whose shell marks its commands, for the
// shell's own end of the line that ran the job (a wrapped run ends at its
// own end mark, before the shell's D), and notes that end as reported: a
// wait_for_command called once the job's end is told does not then report
// tmcp's line as a command of the pane's. It closes j.settled.
func (s *Service) noteShellEnd(j *job, stream *pane.Stream) {
	defer close(j.settled)
	if !stream.Prompt().Marks {
		return
	}
	deadline := time.NewTimer(markSettle)
	defer deadline.Stop()
	for {
		changed := stream.Changed()
		if closed, _ := stream.Closed(); closed {
			return
		}
		if ps := stream.Prompt(); !ps.Running {
			if ps.CommandEnd >= 0 {
				s.ends.note(j.paneID, stream.Generation(), ps.CommandEnd)
			}
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			return
		}
	}
}

// awaitSettled returns once noteShellEnd is done with a finished job, or
// after markSettle.
func (j *job) awaitSettled() {
	select {
	case <-j.settled:
	case <-time.After(markSettle):
	}
}

// unfollowed marks a job that no follow runs for (one of an earlier tmcp
// found ended): there is no shell end of it to wait for.
func (j *job) unfollowed() *job {
	close(j.settled)
	return j
}
