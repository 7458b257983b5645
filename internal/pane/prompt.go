package pane

import (
	"bytes"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// jobMarkPrefix starts the last field of the OSC 133 marks that tmcp's own
// run_command wraps a command in ("133;C;tmcp-TOKEN"): they are a job's,
// not the shell's, and a PromptTracker passes them by.
const jobMarkPrefix = "tmcp-"

// A ShellMark is a shell integration mark a pane's shell wrote: a semantic
// prompt mark (OSC 133), or its working directory (OSC 7).
type ShellMark struct {
	// Kind is 'A' (prompt start), 'B' (command line start), 'C' (the
	// command's output starts), 'D' (the command ended) or '7' (working
	// directory).
	Kind byte
	// Status is D's exit status, when HasStatus.
	Status    int
	HasStatus bool
	// Took is how long the command ran as its shell measured it, when
	// HasTook: "tmcp init"'s D says so ("133;D;0;tmcp_ms=1004").
	Took    time.Duration
	HasTook bool
	// Host and Dir are OSC 7's host name and path, percent-decoded.
	Host, Dir string
}

// tookParam is the parameter of a D mark that gives the command's run
// time in milliseconds.
const tookParam = "tmcp_ms="

// ParseShellMark reads the payload of an OSC (as in [Event].Text) as a
// shell integration mark. Any emitter's marks are read — a prompt
// framework's, a terminal's, "tmcp init"'s — and parameters they add
// ("133;A;cl=m", "133;D;0;aid=7") are passed over. It reports false for
// anything else, including tmcp's own run_command markers, whose last
// field is the job's token.
func ParseShellMark(osc string) (ShellMark, bool) {
	if rest, ok := strings.CutPrefix(osc, "7;"); ok {
		u, err := url.Parse(rest)
		if err != nil || (u.Scheme != "file" && u.Scheme != "kitty-shell-cwd") || u.Path == "" {
			return ShellMark{}, false
		}
		return ShellMark{Kind: '7', Host: u.Host, Dir: u.Path}, true
	}
	rest, ok := strings.CutPrefix(osc, "133;")
	if !ok || rest == "" {
		return ShellMark{}, false
	}
	fields := strings.Split(rest, ";")
	if len(fields) > 1 && strings.HasPrefix(fields[len(fields)-1], jobMarkPrefix) {
		return ShellMark{}, false
	}
	m := ShellMark{Kind: rest[0]}
	switch {
	case len(fields[0]) != 1:
		return ShellMark{}, false
	case m.Kind == 'A' || m.Kind == 'B' || m.Kind == 'C':
	case m.Kind == 'D':
		if len(fields) > 1 {
			if n, err := strconv.Atoi(fields[1]); err == nil {
				m.Status, m.HasStatus = n, true
			}
		}
		for _, f := range fields[1:] {
			if ms, ok := strings.CutPrefix(f, tookParam); ok {
				if n, err := strconv.ParseInt(ms, 10, 64); err == nil && n >= 0 {
					m.Took, m.HasTook = time.Duration(n)*time.Millisecond, true
				}
			}
		}
	default: // kitty's P (prompt kind), iTerm2's L and others say nothing we follow
		return ShellMark{}, false
	}
	return m, true
}

// PromptState is what a pane's shell has said of itself through its marks,
// as far as a stream has seen them.
type PromptState struct {
	// Marks reports that at least one semantic prompt mark was seen. With
	// none, nothing below is known: the shell may emit none at all.
	Marks bool
	// Running reports a command between its C and its end (D, or a new
	// prompt's A); otherwise the shell is at its prompt, if Marks.
	Running bool
	// Started is when the current or last command's C was seen; Ended when
	// the last command's end was.
	Started, Ended time.Time
	// Status is the last command's exit status, when HasStatus: a command
	// that ended with a prompt (A) and no D has none.
	Status    int
	HasStatus bool
	// Took is how long the last command ran as its shell measured it, when
	// HasTook (see [ShellMark].Took).
	Took    time.Duration
	HasTook bool
	// Drawn reports that the shell has drawn its prompt since the last
	// command: the last prompt mark since then is B (the prompt ended) or,
	// for a shell that was never seen to mark B, A.
	Drawn bool
	// Host and Cwd are the working directory from the last OSC 7.
	Host, Cwd string
	// OutputStart is the stream offset just past the last C (where the
	// command's output begins), and CommandEnd just past the mark that
	// ended the last command; -1 when there was none.
	OutputStart, CommandEnd int64
	// Offset is the stream offset the state is as of.
	Offset int64
}

// A PromptTracker follows the shell integration marks in a pane's output
// and keeps the [PromptState] they describe. Several emitters may mark the
// same command (a prompt framework and "tmcp init", say): a C while a
// command runs moves only where its output starts, and a second D for the
// same command is passed over.
//
// Write scans raw output for the marks; Mark applies one already decoded.
// Input may be split anywhere, even inside a mark: the part is held until
// the rest comes.
type PromptTracker struct {
	st       PromptState
	statused bool // the last command's status is known or was given up on
	marksB   bool // the shell marks where its prompt ends
	byPrompt bool // the last command ended with A, not D

	scan  scanState
	seq   []byte
	skip  bool // the OSC is overlong, or not one a tracker reads
	inEsc bool // an ESC was the last byte (in text or inside an OSC)
}

type scanState uint8

const (
	scanText scanState = iota
	scanOSC
)

// NewPromptTracker returns a tracker whose first input byte is at stream
// offset off.
func NewPromptTracker(off int64) *PromptTracker {
	return &PromptTracker{st: PromptState{OutputStart: -1, CommandEnd: -1, Offset: off}}
}

// State returns what the marks seen so far say.
func (t *PromptTracker) State() PromptState { return t.st }

// Write scans output for marks, which it applies with the time now.
// Everything but OSC sequences is skipped, quickly.
func (t *PromptTracker) Write(p []byte, now time.Time) {
	base := t.st.Offset
	for i := 0; i < len(p); i++ {
		b := p[i]
		if t.scan == scanText {
			if !t.inEsc {
				j := bytes.IndexByte(p[i:], esc)
				if j < 0 {
					break
				}
				i += j
				t.inEsc = true
				continue
			}
			t.inEsc = b == esc
			if b == ']' {
				t.scan, t.seq, t.skip = scanOSC, t.seq[:0], false
			}
			continue
		}
		// Inside an OSC: BEL or ESC \ ends it, as any ESC does (see Decoder).
		if t.inEsc {
			t.inEsc = false
			t.scan = scanText
			if b == '\\' {
				t.dispatch(base+int64(i)+1, now)
				continue
			}
			t.dispatch(base+int64(i), now)
			i-- // b follows an ESC in text
			t.inEsc = true
			continue
		}
		switch {
		case b == bel:
			t.scan = scanText
			t.dispatch(base+int64(i)+1, now)
		case b == esc:
			t.inEsc = true
		case b == can || b == sub:
			t.scan = scanText
		case b < 0x20:
		case len(t.seq) == MaxSequenceLen:
			t.skip = true
		default:
			t.seq = append(t.seq, b)
		}
	}
	t.st.Offset = base + int64(len(p))
}

func (t *PromptTracker) dispatch(end int64, now time.Time) {
	if t.skip || len(t.seq) < 2 || (t.seq[0] != '1' && t.seq[0] != '7') {
		return
	}
	if m, ok := ParseShellMark(string(t.seq)); ok {
		t.Mark(m, end, now)
	}
}

// Mark applies one mark that ended at stream offset end and was seen at
// now.
func (t *PromptTracker) Mark(m ShellMark, end int64, now time.Time) {
	st := &t.st
	st.Offset = max(st.Offset, end)
	if m.Kind == '7' {
		st.Host, st.Cwd = m.Host, m.Dir
		return
	}
	st.Marks = true
	switch m.Kind {
	case 'B':
		t.marksB = true
		st.Drawn = !st.Running
	case 'A':
		st.Drawn = !t.marksB
		if st.Running {
			st.Running, st.HasStatus, st.Ended, st.CommandEnd = false, false, now, end
			st.Took, st.HasTook = 0, false
			t.statused, t.byPrompt = false, true
		}
	case 'C':
		st.Drawn = false
		if !st.Running {
			st.Running, st.Started = true, now
			t.statused, t.byPrompt = false, false
		}
		st.OutputStart = end
	case 'D':
		switch {
		case st.Running:
			st.Running, st.Ended, st.CommandEnd, st.Drawn = false, now, end, false
		case t.statused:
			// A second emitter's D for the same command: only its run
			// time, if the first gave none.
			if m.HasTook && !st.HasTook {
				st.Took, st.HasTook = m.Took, true
			}
			return
		case !t.byPrompt:
			// A command that began before its C was seen.
			st.Ended, st.CommandEnd, st.Drawn = now, end, false
		}
		st.Status, st.HasStatus, t.statused = m.Status, m.HasStatus, true
		st.Took, st.HasTook = m.Took, m.HasTook
	}
}
