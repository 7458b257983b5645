package pane

import (
	"bytes"
	"net/url"
	"slices"
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
	// Host and Dir are the working directory's host name and path,
	// percent-decoded: OSC 7's, or, on an A mark, "tmcp init"'s
	// tmcp_cwd parameter (a file:// URL, as in OSC 7).
	Host, Dir string
	// Nonce is the value of the mark's tmcp_n parameter: the secret a
	// shell started by or for tmcp writes into each of its marks, so that
	// a program that merely prints marks cannot pass for the shell. OSC 7
	// has none.
	Nonce string
}

// Authentic reports whether the mark carries nonce, a shell's secret
// known to tmcp. A mark with no nonce, or where none is known, is not.
func (m ShellMark) Authentic(nonce string) bool {
	return nonce != "" && m.Nonce == nonce
}

// Parameters "tmcp init" adds to its marks: the command's run time in
// milliseconds (D), the working directory (A), and the shell's nonce
// (every mark).
const (
	tookParam  = "tmcp_ms="
	cwdParam   = "tmcp_cwd="
	nonceParam = "tmcp_n="
)

// ParseShellMark reads the payload of an OSC (as in [Event].Text) as a
// shell integration mark. Any emitter's marks are read — a prompt
// framework's, a terminal's, "tmcp init"'s — and parameters they add
// ("133;A;cl=m", "133;D;0;aid=7") are passed over. It reports false for
// anything else, including tmcp's own run_command markers, whose last
// field is the job's token. Whether the shell wrote the mark is for
// [ShellMark.Authentic] to say.
func ParseShellMark(osc string) (ShellMark, bool) {
	if rest, ok := strings.CutPrefix(osc, "7;"); ok {
		host, dir, ok := parseCwd(rest)
		if !ok {
			return ShellMark{}, false
		}
		return ShellMark{Kind: '7', Host: host, Dir: dir}, true
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
	for _, f := range fields[1:] {
		if n, ok := strings.CutPrefix(f, nonceParam); ok {
			m.Nonce = n
		}
	}
	switch {
	case len(fields[0]) != 1:
		return ShellMark{}, false
	case m.Kind == 'A':
		for _, f := range fields[1:] {
			if u, ok := strings.CutPrefix(f, cwdParam); ok {
				m.Host, m.Dir, _ = parseCwd(u)
			}
		}
	case m.Kind == 'B' || m.Kind == 'C':
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

// ParseShellMarks reads the pane option a shell that loaded tmcp's
// integration sets as it starts (tmux.ShellMarksOption): "PID NAME
// NONCE", its process id, its name and the nonce its marks carry.
func ParseShellMarks(option string) (pid int, name, nonce string, ok bool) {
	f := strings.Fields(option)
	if len(f) != 3 {
		return 0, "", "", false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return 0, "", "", false
	}
	return pid, f[1], f[2], true
}

// parseCwd reads a working directory given as a URL, as OSC 7 gives it.
func parseCwd(raw string) (host, dir string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "file" && u.Scheme != "kitty-shell-cwd") || u.Path == "" {
		return "", "", false
	}
	return u.Host, u.Path, true
}

// PromptState is what a pane's shell has said of itself through its marks,
// as far as a stream has seen them.
type PromptState struct {
	// Marks reports that at least one semantic prompt mark of the shell's
	// (one that carries its nonce) was seen. With none, nothing below is
	// known: the shell may emit none at all.
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
	// Host and Cwd are the working directory the shell gave with its last
	// prompt (never a program's OSC 7).
	Host, Cwd string
	// OutputStart is the stream offset just past the last C (where the
	// command's output begins), and CommandEnd just past the mark that
	// ended the last command; -1 when there was none.
	OutputStart, CommandEnd int64
	// Offset is the stream offset the state is as of.
	Offset int64
	// OtherPrompt reports that the last mark seen was a prompt's (A or B)
	// with a nonce not believed: a hint, never a fact, that a shell whose
	// nonce tmcp cannot learn (one reached through ssh) waits at its
	// prompt. Nothing above takes it into account.
	OtherPrompt bool
}

// A PromptTracker follows the shell integration marks in a pane's output
// and keeps the [PromptState] they describe. It believes only the marks
// that carry the nonce of the pane's shell ([PromptTracker.SetNonce]):
// any program can print marks, and one that did would otherwise end a
// command early with a status of its choosing, or pass for a prompt. A
// mark with another nonce is held, the last few of them, in case that
// nonce turns out to be the shell's: a shell may mark its first prompt
// before tmcp learns its nonce. The same shell may mark a command twice
// (loaded twice, or beside its terminal's own integration): a C while a
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

	nonces  []string   // the shells' known, newest last
	held    []heldMark // marks with a nonce not (yet) known, oldest first
	heldNew bool       // a mark was held since HeldUnknown was last asked

	scan  scanState
	seq   []byte
	skip  bool // the OSC is overlong, or not one a tracker reads
	inEsc bool // an ESC was the last byte (in text or inside an OSC)
}

// heldMark is a mark whose nonce was not known when it came.
type heldMark struct {
	m   ShellMark
	end int64
	at  time.Time
}

// maxHeldMarks bounds the marks a tracker holds for a nonce it may learn:
// a shell's first prompt writes three or four.
const maxHeldMarks = 8

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
	m, ok := ParseShellMark(string(t.seq))
	switch {
	case !ok || m.Nonce == "":
		// OSC 7 and other emitters' marks: any program can write them.
	case t.Believes(m):
		t.Mark(m, end, now)
	default:
		t.st.OtherPrompt = m.Kind == 'A' || m.Kind == 'B'
		if len(t.held) == maxHeldMarks {
			t.held = append(t.held[:0], t.held[1:]...)
		}
		t.held = append(t.held, heldMark{m, end, now})
		t.heldNew = true
	}
}

// SetNonce makes the tracker believe the marks that carry nonce, the
// secret of the pane's shell, from now on and among those it holds. The
// nonces given before stay believed, the last few: a shell run from the
// pane's shell has a nonce of its own, and its parent marks its prompts
// again once it exits.
func (t *PromptTracker) SetNonce(nonce string) {
	if nonce == "" || slices.Contains(t.nonces, nonce) {
		return
	}
	if len(t.nonces) == maxNonces {
		t.nonces = t.nonces[1:]
	}
	t.nonces = append(t.nonces, nonce)
	held := t.held
	t.held = nil
	for _, h := range held {
		if h.m.Authentic(nonce) {
			t.Mark(h.m, h.end, h.at)
		} else {
			t.held = append(t.held, h)
		}
	}
}

// maxNonces bounds the nonces a tracker believes: the shells nested in one
// pane at a time.
const maxNonces = 4

// Nonces returns the nonces given to SetNonce that the tracker still
// believes.
func (t *PromptTracker) Nonces() []string { return slices.Clone(t.nonces) }

// Believes reports whether m carries a nonce the tracker believes.
func (t *PromptTracker) Believes(m ShellMark) bool {
	return m.Nonce != "" && slices.Contains(t.nonces, m.Nonce)
}

// Holding reports whether the tracker holds marks whose nonce it does not
// know.
func (t *PromptTracker) Holding() bool { return len(t.held) > 0 }

// HeldUnknown reports whether a mark with a nonce the tracker does not
// know has come since it was last asked: the shell's nonce may have
// changed (a new shell), and is worth looking up.
func (t *PromptTracker) HeldUnknown() bool {
	n := t.heldNew
	t.heldNew = false
	return n
}

// Mark applies one mark that ended at stream offset end and was seen at
// now, as the shell's own: the caller has made sure it is.
func (t *PromptTracker) Mark(m ShellMark, end int64, now time.Time) {
	st := &t.st
	st.Offset = max(st.Offset, end)
	st.OtherPrompt = false
	if m.Dir != "" {
		st.Host, st.Cwd = m.Host, m.Dir
	}
	if m.Kind == '7' {
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
