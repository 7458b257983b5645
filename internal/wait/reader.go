package wait

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
)

// keyEchoes are the terminal's echoes of the keys that send a signal and
// discard the unread input: C-c, C-z and C-\.
var keyEchoes = []struct{ echo, key string }{{"^C", "C-c"}, {"^Z", "C-z"}, {"^\\", `C-\`}}

// reader finds a job's output between its marks. Until the start mark it
// only scans the raw bytes, for the marks and for an interrupt key's echo
// after the echo of the typed line's opening; from the byte after the
// start mark it decodes, once, so the output's lines owe nothing to the
// row the echo and the prompt left the cursor on.
type reader struct {
	j         *job
	token     string // the job's marks' last field: "tmcp-TAG:NONCE"
	bare      string // the token without the helper's nonce ("tmcp-TAG")
	startMark []byte
	// shellsMark parses an OSC as a mark of the pane's shell, believed
	// only with the shell's nonce (see pane.Stream.ShellMark).
	shellsMark func(payload string) (pane.ShellMark, bool)
	replaces   bool // the command replaces its shell: it never ends by itself
	alone      bool // the command was typed alone: the shell's own marks (any C, then D) bound it

	// Before the start mark.
	off      int64  // stream offset of the next byte
	held     []byte // the last bytes read, in which a mark or echo may begin
	echoedTo int64  // past the echo of the line's opening or token; -1: unseen
	key      string // the last interrupt key echoed after it
	keyAt    time.Time
	// When fish said something before the start mark, which may be that
	// it could not parse the line (unparsedIn).
	unparsedAt time.Time
	started    time.Time // when the start mark was read

	// Before the start mark, for a command typed alone: the bytes decoded
	// to find the shell's marks, whether text came before a prompt's mark
	// (so the mark is not the one of the prompt the line was typed at), and
	// whether the shell said it could not parse the line.
	pre      *pane.Decoder
	preText  bool
	unparsed bool

	dec         *pane.Decoder // from the start mark on
	interrupted bool          // an interrupt key reached the command after its start
	// beforeEnd, if set, runs before the reader ends the job at its end
	// mark: a reader of the job's tape, which may be ahead of the stream,
	// waits there for the stream to catch up (see again).
	beforeEnd func()

	// readsSeen counts the R marks this reader passed on; skipReads,
	// those it must not, as a reader before it did (again).
	readsSeen, skipReads int

	// From a line the echo of C-z ends: held back until the job ends,
	// for when it stops, the shell's job message that follows is no
	// output; let go past maxHeldLines, when the command ignored the key.
	heldLines []string
}

// endsInKeyEcho reports whether a line ends in the echo of C-z, or of any
// interrupt key for a command whose end is the shell's own mark (typed
// alone, or cut off behind ssh), which the shell writes after the line the
// echo ends.
func endsInKeyEcho(text string, shellsEnd bool) bool {
	return strings.HasSuffix(text, "^Z") || shellsEnd && (strings.HasSuffix(text, "^C") || strings.HasSuffix(text, `^\`))
}

// maxHeldLines bounds the lines held back after the echo of C-z.
const maxHeldLines = 8

// line takes a line of the command's output, or a piece of one that goes
// on (more).
func (r *reader) line(text string, more bool) {
	if len(r.heldLines) == 0 && (more || !endsInKeyEcho(text, r.alone || r.j.farShell != "")) {
		r.j.addPiece(text, more)
		return
	}
	r.heldLines = append(r.heldLines, text)
	if len(r.heldLines) > maxHeldLines {
		for _, l := range r.heldLines {
			r.j.add(l)
		}
		r.heldLines = nil
	}
}

func newReader(j *job, from int64, shellsMark func(string) (pane.ShellMark, bool)) *reader {
	token, _ := j.mark()
	r := &reader{j: j, token: token, bare: j.bareMark(), shellsMark: shellsMark, startMark: []byte("\x1b]133;C;" + token + "\a"),
		replaces: replacesShell(j.command), off: from, echoedTo: -1, alone: j.alone}
	if r.alone {
		// All the pane writes from here is the echo of the line, up to C.
		r.pre = pane.NewDecoder(from)
	}
	if j.adopted {
		// Its start mark went by before this tmcp: its output goes on.
		r.started, r.dec = time.Now(), pane.NewDecoder(from)
	}
	return r
}

// again returns a reader that reads the job anew from the first byte of
// its tape, which began before its first line was typed: the job's output
// read so far is let go, to be read again; what the reader knows of keys
// sent and of the marks it passed on carries over.
func (r *reader) again() *reader {
	j := r.j
	j.mu.Lock()
	j.tail = pane.NewTailBuffer(jobTailLines, jobTailBytes)
	j.mu.Unlock()
	n := newReader(j, 0, r.shellsMark)
	n.skipReads = r.readsSeen + r.skipReads
	n.key, n.keyAt, n.unparsedAt, n.interrupted = r.key, r.keyAt, r.unparsedAt, r.interrupted
	return n
}

// consume reads output and reports whether the job has finished.
func (r *reader) consume(data []byte, now time.Time) (finished bool) {
	if r.dec == nil {
		rest, finished := r.scan(data, now)
		if finished || r.dec == nil {
			return finished
		}
		data = rest
	}
	if bytes.Contains(data, []byte("^C")) || bytes.Contains(data, []byte(`^\`)) {
		r.interrupted = true // the echo of a key, or text like it: a look costs little
	}
	r.dec.Decode(data, func(ev pane.Event) {
		if finished {
			return
		}
		switch ev.Kind {
		case pane.EventLine:
			r.line(ev.Text, ev.Cut)
		case pane.EventOSC:
			if r.alone {
				finished = r.shellMark(ev.Text)
				return
			}
			kind, status, ok := r.mark(ev.Text)
			if ok && (kind == "D" || kind == "E") {
				r.endWith(kind, status, r.dec.Partial())
				finished = true
			} else if !ok && r.farShellEnded(ev.Text) {
				finished = true
			}
		}
	})
	return finished
}

// farShellEnded ends a job whose line went to a shell behind ssh (or
// docker, kubectl…) at that shell's own D mark, once an interrupt key or
// a loss may have cut off the job's end mark: nothing else tells there,
// ssh holding the pane's terminal throughout. It reports whether it did.
func (r *reader) farShellEnded(osc string) bool {
	if r.j.farShell == "" || !r.interrupted && !r.j.lostOutput() {
		return false
	}
	m, ok := r.shellsMark(osc)
	if !ok || m.Kind != 'D' {
		return false
	}
	if !m.HasStatus {
		r.j.end(false, nil, "the shell behind "+r.j.farShell+" marked the end of the line without its status")
		return true
	}
	r.endWith("E", m.Status, r.dec.Partial())
	return true
}

// scan looks at bytes read before the start mark. It returns what follows
// the start mark once it is found, or whether the job ended without one.
func (r *reader) scan(data []byte, now time.Time) (rest []byte, finished bool) {
	if r.alone {
		return r.scanAlone(data, now)
	}
	// A read that holds the whole start mark is cut just past it, so that
	// the output after it is neither copied nor scanned.
	if k := bytes.Index(data, r.startMark); k >= 0 {
		cut := k + len(r.startMark)
		if _, finished = r.scanPart(data[:cut], now); finished || r.dec == nil {
			return nil, finished
		}
		return data[cut:], false
	}
	return r.scanPart(data, now)
}

// scanPart is scan on bytes that the last read held and data.
func (r *reader) scanPart(data []byte, now time.Time) (rest []byte, finished bool) {
	buf := append(r.held, data...)
	base := r.off - int64(len(r.held)) // stream offset of buf[0]
	r.off += int64(len(data))
	// The typed lines show the bare token; the marks carry the nonce after it.
	tok, nonce := []byte(r.bare), []byte(strings.TrimPrefix(r.token, r.bare))
	for _, o := range lineOpenings {
		if k := bytes.Index(buf, o); k >= 0 && r.echoedTo < 0 {
			r.echoedTo = base + int64(k+len(o))
		}
	}
	for i := 0; ; {
		k := bytes.Index(buf[i:], tok)
		if k < 0 {
			break
		}
		k += i
		i = k + len(tok)
		if len(nonce) > 0 && bytes.HasPrefix(buf[i:], nonce) {
			i += len(nonce)
		} else if len(nonce) > 0 && i+len(nonce) > len(buf) && bytes.HasPrefix(nonce, buf[i:]) {
			break // the rest of the nonce is still to come
		}
		if i == len(buf) {
			break // its next byte tells a mark from the echo
		}
		if buf[i] != '\a' {
			if r.echoedTo < 0 && buf[i] != ':' {
				r.echoedTo = base + int64(i)
			}
			continue
		}
		start := bytes.LastIndex(buf[:k], []byte("\x1b]"))
		if start < 0 {
			continue
		}
		kind, status, ok := r.mark(string(buf[start+2 : i]))
		switch {
		case !ok:
		case kind == "C":
			r.started = now
			r.dec = pane.NewDecoder(base + int64(i+1))
			r.held = nil
			return buf[i+1:], false
		case kind == "E":
			r.endWith(kind, status, "")
			return nil, true
		case kind == "R" && i >= len(r.held) && r.skipReads > 0:
			r.skipReads-- // a reader before this one counted it
		case kind == "R" && i >= len(r.held):
			// A mark wholly in the bytes held over was counted last time.
			r.readsSeen++
			r.j.helperReads()
		}
	}
	// fish draws its echo in pieces between cursor moves, where it may
	// never be found whole: what it says after is looked at anyway.
	if fish := r.j.family == fishShell; r.echoedTo >= 0 || fish {
		var again *retry
		reason := ""
		switch echoed := buf[max(r.echoedTo-base, 0):]; {
		case !r.j.helperIsFresh() && helperMissingIn(echoed):
			again = &retry{}
			reason = "the pane's shell lacked tmcp's helper (a new shell since it was typed), so the command did not run"
		case r.j.handedOver || !r.unparsedAt.IsZero() || !unparsedLineIn(echoed, r.j.family):
		case fish:
			r.unparsedAt = now // taken once no start mark follows (due)
		default:
			again = &retry{handOver: true}
			reason = notParsed
		}
		if again != nil {
			r.j.mu.Lock()
			r.j.retry = again
			r.j.mu.Unlock()
			r.j.end(false, nil, reason)
			return nil, true
		}
	}
	if r.echoedTo >= 0 {
		// Only new bytes, and the held one a key's echo may begin with.
		r.keyEchoedIn(buf[max(r.echoedTo-base, int64(len(r.held)-1), 0):], now)
	}
	r.held = append(r.held[:0], buf[max(0, len(buf)-maxMarkLen):]...)
	return nil, false
}

// keyEchoedIn notes the last interrupt key echoed in b.
func (r *reader) keyEchoedIn(b []byte, now time.Time) {
	last := -1
	for _, k := range keyEchoes {
		if i := bytes.LastIndex(b, []byte(k.echo)); i > last {
			last, r.key, r.keyAt = i, k.key, now
		}
	}
}

// keySent notes an interrupt key tmcp sent after the line was typed: it
// tells what its echo would, where the terminal does not echo it.
func (r *reader) keySent(key string, now time.Time) {
	if r.dec == nil {
		r.key, r.keyAt = key, now
		return
	}
	r.interrupted = true
}

// lostConnection reports whether the job's stream broke with its
// connection to a remote host.
func (j *job) lostConnection() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.disconnected
}

// lostOutput reports whether tmux dropped some of the job's output.
func (j *job) lostOutput() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.lost
}

// keysSent tells a pane's job that tmcp sent it keys (tmux key names) in a
// send that began at sentAt, so that an interrupt key sent after its line
// was typed ends it as its echo would, even where the terminal echoes no
// ^C (stty -echoctl, zsh).
func (s *Service) keysSent(paneID string, keys []string, sentAt time.Time) {
	j := s.jobs.running(paneID)
	if j == nil {
		return
	}
	j.mu.Lock()
	after := !j.typingFrom.IsZero() && !sentAt.Before(j.typingFrom)
	j.mu.Unlock()
	for _, k := range keys {
		if key := interruptKey(k); key != "" && after {
			select {
			case j.keys <- key:
			default: // one waiting is enough
			}
		}
	}
}

// interruptKey returns the key a tmux key name stands for if it is one the
// terminal turns into a signal, discarding unread input: C-c, C-z, C-\.
func interruptKey(name string) string {
	switch strings.ToLower(name) {
	case "c-c", "^c":
		return "C-c"
	case "c-z", "^z":
		return "C-z"
	case `c-\`, `^\`:
		return `C-\`
	}
	return ""
}

// due returns when the reader must next look at the clock, or zero.
func (r *reader) due() time.Time {
	switch {
	case r.dec == nil && r.key != "":
		// Each line tmcp types after the key is read at once if the key
		// landed before it: the grace runs from the later of the two, and
		// not while the next line is being typed.
		last, busy := r.j.typing()
		if busy {
			return time.Time{}
		}
		if last.After(r.keyAt) {
			return last.Add(keyGrace)
		}
		return r.keyAt.Add(keyGrace)
	case r.dec == nil && !r.unparsedAt.IsZero():
		return r.unparsedAt.Add(unparsedGrace)
	case r.dec != nil && r.replaces:
		return r.started.Add(replaceGrace)
	}
	return time.Time{}
}

// expire ends the job if what due waited for has come to pass.
func (r *reader) expire(now time.Time) bool {
	at := r.due()
	if at.IsZero() || now.Before(at) {
		return false
	}
	if r.dec == nil && r.key == "" {
		// fish kept the line it could not parse in its editor.
		r.j.mu.Lock()
		r.j.retry = &retry{handOver: true, clearLine: true}
		r.j.mu.Unlock()
		r.j.end(false, nil, notParsed)
		return true
	}
	if r.dec == nil {
		r.j.end(false, nil, cutByKey(r.key))
		return true
	}
	// The unfinished line is the new shell's prompt, not output.
	r.j.end(false, nil, "the command replaced the shell with another, which waits at its prompt in this pane; its exit status will not be known")
	return true
}

// notParsed is why a job ended whose typed line its shell could not parse.
const notParsed = "the shell could not parse the command as typed, so it did not run"

// cutByKey is why a job ended whose typed line an interrupt key discarded
// before the shell ran it.
func cutByKey(key string) string {
	return fmt.Sprintf("interrupted: %s reached the shell before it ran the typed line, which was discarded; the command did not run", key)
}

// endWith ends the job at its end mark: D from the wrapper with the
// command's status, or E from the pane's shell when the wrapper could not
// write D. last is the unfinished line at the mark.
func (r *reader) endWith(kind string, status int, last string) {
	if r.beforeEnd != nil {
		r.beforeEnd()
	}
	var reason string
	known := true
	switch sig := status - 128; {
	case kind == "D":
	case status == 130:
		reason = "interrupted by C-c"
	case sig >= 17 && sig <= 22:
		// 128 plus a stop signal (TSTP, STOP, TTIN, TTOU) on Linux and the
		// BSDs alike; the numbers these do not share cannot end a process.
		reason, known = "stopped, by C-z or a stop signal: the shell holds it as a stopped job, fg resumes it, and its output from then on is not followed", false
	case sig > 0:
		reason = fmt.Sprintf("ended by signal %d", sig)
	}
	if !known && len(r.heldLines) > 0 {
		// Stopped: what followed the echo of C-z is the shell's.
		last, r.heldLines = r.heldLines[0], nil
	}
	for i, l := range r.heldLines {
		if i == 0 && status > 128 {
			// The line the echo of the key that ended it ends.
			if l = trimKeyEcho(l); l == "" {
				continue
			}
		}
		r.j.add(l)
	}
	// The terminal's echo of the key that interrupted or stopped it.
	last = trimKeyEcho(last)
	if last != "" {
		r.j.add(last)
	}
	if !known {
		r.j.end(false, nil, reason)
		return
	}
	r.j.end(false, &status, reason)
}

// trimKeyEcho takes the echo of an interrupt key off the end of a line.
func trimKeyEcho(line string) string {
	for _, k := range keyEchoes {
		if l, ok := strings.CutSuffix(line, k.echo); ok {
			return l
		}
	}
	return line
}

// mark parses an OSC payload as one of this job's marks: "C", the start;
// "D" and "E", the end, with a status; "R", the shell reads. Each carries
// the job's token with the helper's nonce, which only the helper knows,
// but for the R of the line that hands the helper over, typed on the
// screen with the bare token.
func (r *reader) mark(payload string) (kind string, status int, ok bool) {
	fields := strings.Split(payload, ";")
	if len(fields) < 3 || fields[0] != "133" {
		return "", 0, false
	}
	switch last := fields[len(fields)-1]; {
	case last == r.token:
	case last == r.bare && fields[1] == "R":
	default:
		return "", 0, false
	}
	switch kind = fields[1]; {
	case (kind == "C" || kind == "R") && len(fields) == 3:
		return kind, 0, true
	case (kind == "D" || kind == "E") && len(fields) == 4:
		status, err := strconv.Atoi(fields[2])
		return kind, status, err == nil
	}
	return "", 0, false
}

// replacesShell reports whether a command replaces the shell it runs in
// with an interactive one, as "exec bash -l" does: it never ends by itself.
func replacesShell(command string) bool {
	words := strings.Fields(command)
	if len(words) < 2 || words[0] != "exec" || !isShell(words[1]) {
		return false
	}
	for _, w := range words[2:] {
		if !strings.HasPrefix(w, "-") || strings.HasPrefix(w, "--") || strings.ContainsRune(w, 'c') {
			return false // a script, or a command for it to run
		}
	}
	return true
}
