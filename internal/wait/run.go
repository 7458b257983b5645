package wait

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

const (
	// jobTailLines and jobTailBytes bound what a job keeps of its output:
	// the last lines, with the counts of everything.
	jobTailLines = 10000
	jobTailBytes = 1 << 20
	// maxFinishedJobs and maxFinishedBytes bound the finished jobs kept for
	// get_job, by number and by the output they hold; the oldest go first.
	maxFinishedJobs  = 4096
	maxFinishedBytes = 64 << 20
	// markerPrefix starts the token in the invisible markers of a run.
	markerPrefix = "tmcp-"
)

// shells are the programs run_command can type into: POSIX-like shells.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"ash": true, "busybox": true, "yash": true, "posh": true, "loksh": true, "oksh": true}

// RunRequest is a command to run in a pane's shell.
type RunRequest struct {
	PaneID          string
	Command         string
	Timeout         Timeout
	Detach          bool // return the job id at once
	SuppressHistory bool // a leading space keeps the typed line out of history
	MaxLines        int  // bound the output returned; 0: all that is kept
	MaxBytes        int
	Progress        func(elapsed time.Duration)
}

// JobResult is what is known of a job.
type JobResult struct {
	JobID      string
	PaneID     string
	Command    string
	Finished   bool
	ExitStatus *int
	PaneDied   bool
	Reason     string
	TimedOut   bool // the call's wait ran out; the command goes on
	Lines      []string
	Truncation pane.Truncation
	TotalLines int
	TotalBytes int
	OutputLost bool          // tmux dropped some of the output
	Elapsed    time.Duration // since the job started; to its end once finished
}

// job is one command run in a pane. Its output is taken from the pane's
// byte stream between two invisible OSC 133 markers that carry a token
// only this job knows, so neither the echo of the typed line, nor the
// prompt, nor earlier screen content can be mistaken for it.
type job struct {
	id, paneID, command string
	started             time.Time

	mu         sync.Mutex
	finished   bool
	status     int
	died       bool
	reason     string
	lost       bool
	tail       *pane.TailBuffer
	finishedAt time.Time
	done       chan struct{}
}

// Run runs a command in a pane's shell and waits for it within its
// timeout; a command that outlasts the wait goes on as a job.
func (s *Service) Run(ctx context.Context, req RunRequest) (JobResult, error) {
	start := time.Now()
	if strings.IndexByte(req.Command, 0) >= 0 {
		return JobResult{}, errors.New("command contains a NUL byte")
	}
	if strings.TrimSpace(req.Command) == "" {
		return JobResult{}, errors.New("command is empty")
	}
	ctx, cancel := bounded(ctx, req.Timeout)
	defer cancel()
	wctx, cancelWait := waiting(ctx)
	defer cancelWait()
	if err := s.awaitShell(wctx, req.PaneID); err != nil {
		return JobResult{}, notTyped(wctx, err)
	}
	j := &job{id: newJobID(), paneID: req.PaneID, command: req.Command, started: start,
		tail: pane.NewTailBuffer(jobTailLines, jobTailBytes), done: make(chan struct{})}
	if holder := s.jobs.claim(j); holder != nil {
		return JobResult{}, fmt.Errorf("pane %s is busy with job %s (%s); call get_job with that jobId, or send C-c to it", req.PaneID, holder.id, brief(holder.command))
	}
	stream, release, err := s.hub.Acquire(wctx, req.PaneID, runLinger)
	if err != nil {
		s.jobs.abandon(j)
		return JobResult{}, notTyped(wctx, err)
	}
	f := newFeed()
	from, untap := stream.Tap(f.write)
	go s.follow(j, stream, f, from, func() { untap(); release() })

	if err := s.send(wctx, req, markerPrefix+j.id); err != nil {
		if !unanswered(wctx, err) || errors.Is(err, tmux.ErrNotSent) {
			j.end(false, 0, "the command could not be typed: "+err.Error())
			return JobResult{}, notTyped(wctx, err)
		}
		// tmux has the keys but did not answer: it types them if it
		// resumes, and the job follows the pane as for any command.
		r := j.result(true, req.MaxLines, req.MaxBytes)
		r.Reason = noAnswerReason + " while the command was typed: it runs if tmux takes the keys later; get_job follows it"
		return r, nil
	}
	if req.Detach {
		return j.result(false, req.MaxLines, req.MaxBytes), nil
	}
	return s.await(wctx, j, req.MaxLines, req.MaxBytes, req.Progress, start), nil
}

// notTyped says that a command was not typed because tmux did not answer
// in time, or returns err as it is.
func notTyped(ctx context.Context, err error) error {
	if unanswered(ctx, err) {
		return fmt.Errorf("%s, so the command was not typed: %w", noAnswerReason, tmux.ErrNoAnswer)
	}
	return err
}

// shellStartWait is how long run_command waits for a pane made to run a
// shell to show one in front: a new pane's process is briefly tmux's own
// fork, and a login shell runs its profile's commands before its prompt.
const shellStartWait = time.Second

// awaitShell returns once the pane has a shell in front, or says why it
// cannot take a command.
func (s *Service) awaitShell(ctx context.Context, paneID string) error {
	deadline := time.Now().Add(shellStartWait)
	for {
		info, err := s.tc.PaneInfo(ctx, paneID)
		if err != nil {
			return err
		}
		err = runnable(info)
		starting := err != nil && !info.Dead && !info.InMode && (info.StartCommand == "" || isShell(info.StartCommand))
		if !starting || time.Now().After(deadline) {
			return err
		}
		select {
		case <-time.After(25 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

// isShell reports whether a command (a name, a path, a login shell's
// "-bash", or a command line) runs a POSIX-like shell.
func isShell(command string) bool {
	word, _, _ := strings.Cut(strings.TrimSpace(command), " ")
	return shells[path.Base(strings.TrimPrefix(word, "-"))]
}

// runnable says why a pane cannot take a command, if it cannot.
func runnable(p tmux.Pane) error {
	switch {
	case p.Dead:
		return fmt.Errorf("pane %s is dead (%s); use another pane, or make one with split_window", p.ID, p.Death())
	case p.InMode:
		return fmt.Errorf("pane %s is in %s; call exit_copy_mode on it, then run the command", p.ID, p.Mode)
	case !isShell(p.Command):
		return fmt.Errorf("pane %s runs %q, not a shell at its prompt: run_command needs a POSIX shell (sh, bash, zsh…); use send_keys to drive %s, or wait for it to finish", p.ID, p.Command, p.Command)
	}
	return nil
}

// runLinger keeps a pane streamed for a while after a run, so the next run
// or wait on it does not set the stream up again.
const runLinger = 30 * time.Second

// maxInline bounds a command typed inline, in its encoded form; a longer
// one travels through a tmux buffer.
const maxInline = 160

// send types the one line that runs the command. The command itself never
// passes through the line editor as written: a short one is typed encoded
// (printable ASCII only, decoded by the shell's printf), a long one is put
// in a tmux buffer that the typed line reads back with the same tmux binary
// and socket tmcp uses. Either way it runs in a subshell, between the
// job's markers.
func (s *Service) send(ctx context.Context, req RunRequest, token string) error {
	var line string
	if enc := printfEncode(req.Command); len(enc) <= maxInline {
		line = "(" + strings.ReplaceAll(wrapper(`eval "$(printf %b '`+enc+`')"`, token), "\n", ";") + ")"
	} else {
		script := "tmcp_command=" + shellQuote(req.Command) + "\n" + wrapper(`eval "$tmcp_command"`, token) + "\n"
		if _, err := s.tc.Run(ctx, "set-buffer", "-b", token, "--", script); err != nil {
			return err
		}
		line = fmt.Sprintf(`(eval "$(%s -S %s save-buffer -b %s - \; delete-buffer -b %s)")`,
			shellQuote(s.tc.Binary()), shellQuote(s.tc.SocketPath()), token, token)
	}
	if req.SuppressHistory {
		line = " " + line
	}
	s.hub.Typed(req.PaneID, line)
	// A carriage return is the Enter key: one command types the line and runs it.
	return s.tc.SendKeys(ctx, req.PaneID, true, line+"\r")
}

// wrapper is the script that runs a command between the job's markers: it
// marks the start, runs the command in a subshell (so exit cannot end the
// pane's shell), and marks the end with the status. C-c reaches the
// command; the trap still marks the end, with 130.
func wrapper(run, token string) string {
	return fmt.Sprintf(`printf '\033]133;C;%[1]s\007'
trap 'printf "\033]133;D;130;%[1]s\007"; exit 130' INT
(%[2]s)
printf '\033]133;D;%%s;%[1]s\007' "$?"`, token, run)
}

// printfEncode writes s for printf's %b inside single quotes: printable
// ASCII as it is, every other byte (and the quote and the backslash) as an
// octal escape, so the typed text holds no key a line editor acts on.
func printfEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '\'' && c != '\\' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "\\0%03o", c)
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell as one word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// follow consumes the pane's output for a job until it ends.
func (s *Service) follow(j *job, stream *pane.Stream, f *feed, from int64, done func()) {
	defer done()
	defer s.jobs.release(j)
	r := &reader{j: j, token: markerPrefix + j.id, dec: pane.NewDecoder(from)}
	lostAtStart := stream.LostBytes()
	for {
		changed := stream.Changed()
		data := f.take()
		// Checked after the take, so a loss before any byte taken is seen
		// even when the output runs on to the job's end.
		if stream.LostBytes() > lostAtStart {
			j.mu.Lock()
			j.lost = true
			j.mu.Unlock()
		}
		if len(data) > 0 {
			if r.consume(data) {
				return
			}
			continue
		}
		if closed, reason := stream.Closed(); closed {
			j.end(true, 0, reason)
			return
		}
		select {
		case <-f.ready:
		case <-changed:
		case <-j.done:
			return
		}
	}
}

// reader finds a job's output between its markers. Before the start
// marker its decoder only looks for that marker; at the marker, decoding
// starts afresh, so the output's lines owe nothing to the row the echo and
// the prompt left the cursor on.
type reader struct {
	j       *job
	token   string
	dec     *pane.Decoder
	running bool
}

// consume decodes output and reports whether the job has finished.
func (r *reader) consume(data []byte) (finished bool) {
	if !r.running {
		base := r.dec.Offset()
		start := int64(-1)
		r.dec.Decode(data, func(ev pane.Event) {
			if start < 0 && r.marker(ev) == "C" {
				start = ev.Offset
			}
		})
		if start < 0 {
			return false
		}
		r.running, r.dec, data = true, pane.NewDecoder(start), data[start-base:]
	}
	r.dec.Decode(data, func(ev pane.Event) {
		if finished {
			return
		}
		switch ev.Kind {
		case pane.EventLine:
			r.j.addPiece(ev.Text, ev.Cut)
		case pane.EventOSC:
			fields := strings.Split(ev.Text, ";")
			if r.marker(ev) != "D" || len(fields) != 4 {
				return
			}
			status, _ := strconv.Atoi(fields[2])
			last := r.dec.Partial()
			if status == 130 {
				// The terminal's echo of the C-c that interrupted it.
				last = strings.TrimSuffix(last, "^C")
			}
			if last != "" {
				r.j.add(last)
			}
			r.j.end(false, status, "")
			finished = true
		}
	})
	return finished
}

// marker returns "C" or "D" for this job's start and end markers.
func (r *reader) marker(ev pane.Event) string {
	if ev.Kind != pane.EventOSC {
		return ""
	}
	fields := strings.Split(ev.Text, ";")
	if len(fields) < 3 || fields[0] != "133" || fields[len(fields)-1] != r.token {
		return ""
	}
	return fields[1]
}

func (j *job) add(line string) { j.addPiece(line, false) }

// addPiece records a line of output, or a piece of one that goes on (more).
func (j *job) addPiece(line string, more bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.tail.AddPiece(line, more)
}

// end records how the job ended, once.
func (j *job) end(died bool, status int, reason string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.finished {
		return
	}
	j.finished, j.died, j.status, j.reason, j.finishedAt = true, died, status, reason, time.Now()
	close(j.done)
}

// await waits for a job to finish until ctx's deadline, or the caller to
// leave, and reports it within maxLines and maxBytes.
func (s *Service) await(ctx context.Context, j *job, maxLines, maxBytes int, fn func(time.Duration), start time.Time) JobResult {
	t := time.NewTimer(time.Until(stopAt(ctx)))
	defer t.Stop()
	defer progress(fn, start)()
	select {
	case <-j.done:
		return j.result(false, maxLines, maxBytes)
	case <-t.C:
		return j.result(true, maxLines, maxBytes)
	case <-ctx.Done():
		return j.result(ctx.Err() == context.DeadlineExceeded, maxLines, maxBytes)
	}
}

// result reports the job, its output within maxLines and maxBytes (0:
// everything held), and the time it has run or ran.
func (j *job) result(timedOut bool, maxLines, maxBytes int) JobResult {
	j.mu.Lock()
	defer j.mu.Unlock()
	if maxLines <= 0 {
		maxLines = jobTailLines
	}
	if maxBytes <= 0 {
		maxBytes = jobTailBytes
	}
	r := JobResult{JobID: j.id, PaneID: j.paneID, Command: j.command, Finished: j.finished, PaneDied: j.died,
		Reason: j.reason, TimedOut: timedOut && !j.finished, OutputLost: j.lost,
		TotalLines: j.tail.TotalLines(), TotalBytes: j.tail.TotalBytes(), Elapsed: time.Since(j.started)}
	if j.finished {
		r.Elapsed = j.finishedAt.Sub(j.started)
		if !j.died && j.reason == "" {
			status := j.status
			r.ExitStatus = &status
		}
	}
	r.Lines, r.Truncation = j.tail.Bounded(maxLines, maxBytes)
	return r
}

func newJobID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// brief shortens a command for a message.
func brief(cmd string) string {
	cmd = strings.Join(strings.Fields(cmd), " ")
	if len(cmd) > 40 {
		return strconv.Quote(cmd[:37] + "...")
	}
	return strconv.Quote(cmd)
}
