package wait

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
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
	"ash": true, "busybox": true, "yash": true, "posh": true, "loksh": true, "oksh": true, "fish": true}

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

	mu           sync.Mutex
	finished     bool
	status       *int
	died         bool
	reason       string
	lost         bool
	disconnected bool // the stream broke with its connection to a remote host
	tail         *pane.TailBuffer
	beforeLoss   *pane.TailBuffer // the whole lines read before tmux first dropped output
	finishedAt   time.Time
	done         chan struct{}
	reads        chan struct{} // a token at each R mark: the shell reads what tmcp hands over
	retry        *retry        // nothing ran, and this is how to try again
	handedOver   bool          // the command is handed over, not typed as written
	alone        bool          // typed with nothing around it: the shell's own marks tell its start and end
	freshHelper  bool          // the run hands the shell its helper: it cannot lack it
	onEnd        func(*job)    // frees the pane; nil in tests of the reader
	panePID      int           // the pane's process when the job started
	shellGroup   int           // the process group of the pane's shell (see frontGroup); 0: not known
	family       shellFamily   // the pane's shell, as its name tells
	farShell     string        // the pane's foreground program (ssh…) when it reaches a shell elsewhere
	adopted      bool          // started by an earlier tmcp (adopt.go)
	nonce        string        // the secret of the shell's helper, which the job's marks carry after its token
	refilled     bool          // an adopted job's output was taken from history once it ended
	typingFrom   time.Time     // when tmcp began to type the run's lines: a key sent from then may cut them
	lastTyped    time.Time     // when the last line typed so far had been sent
	readWait     bool          // the typing waits for the shell to read what was typed
	typedAll     bool          // the last of the run's lines was typed: the shell runs it once in front
	stepped      chan struct{} // a token each time the typing moves on
	keys         chan string   // interrupt keys tmcp sent once the typing began
	recorded     chan struct{} // closed once the job's end is written for later tmcp processes
	settled      chan struct{} // closed once the shell's own end of the job's line is noted (noteShellEnd)
	recordOnce   sync.Once
	begun        chan struct{} // closed once the job's start mark is read
	beginOnce    sync.Once
	typingDone   chan struct{} // closed once tmcp stopped typing the run's lines, all typed or not
	typingOnce   sync.Once
	typingStep   string // the step typingOption names (see exits.go)
	reading      bool   // the lines typed so far leave the shell in a read of the helper's
	neverRan     bool   // ended before its line was typed whole
	tape         *tape  // the pane's output piped for the job, or nil (tape.go)
	untaped      string // why the job has no tape, or why it could not read it
}

// Run runs a command in a pane's shell and waits for it within its
// timeout; a command that outlasts the wait goes on as a job.
func (s *Service) Run(ctx context.Context, req RunRequest) (JobResult, error) {
	if strings.IndexByte(req.Command, 0) >= 0 {
		return JobResult{}, errors.New("command contains a NUL byte")
	}
	if strings.TrimSpace(req.Command) == "" {
		return JobResult{}, errors.New("command is empty")
	}
	if s.shuttingDown() {
		return JobResult{}, errors.New("tmcp is shutting down: no command is typed any more")
	}
	ctx, cancel := bounded(ctx, req.Timeout)
	defer cancel()
	start := begun(ctx, req.Timeout)
	wctx, cancelWait := waiting(ctx)
	defer cancelWait()
	r, err := s.run(wctx, req, start, false)
	if err == nil && r.retry != nil && !req.Detach {
		// Nothing ran: a new shell came to the pane since its helper was
		// typed (it is typed again), or the shell could not parse the line
		// (the command is handed over, and its own error reported).
		if r.retry.clearLine {
			// The line goes on the one left in the editor otherwise.
			if err := s.hub.Keys(wctx, req.PaneID, "C-e", "C-u"); err != nil {
				return r.JobResult, fmt.Errorf("clear the line the shell could not parse: %w", err)
			}
		}
		r, err = s.run(wctx, req, start, r.retry.handOver)
	}
	return r.JobResult, err
}

// runResult is a job's result, and how to run the command again when
// nothing of it ran.
type runResult struct {
	JobResult
	retry *retry
}

// retry says that a job ended before its command ran, and how the next
// attempt must type it.
type retry struct {
	handOver  bool // hand the command over rather than type it as written
	clearLine bool // the shell kept the line it could not parse in its editor (fish)
}

func (s *Service) run(ctx context.Context, req RunRequest, start time.Time, handOver bool) (runResult, error) {
	s.mendTyping(ctx, req.PaneID)
	info, err := s.awaitShell(ctx, req.PaneID)
	if err != nil && info.ID != "" {
		return runResult{}, err // tmux answered: the pane cannot take it
	}
	if err != nil {
		return runResult{}, notTyped(ctx, err)
	}
	if err := s.checkNothingTyped(ctx, info); err != nil {
		return runResult{}, notTyped(ctx, err)
	}
	s.settleEarlier(ctx, req.PaneID)
	j := newJob(newJobID(), req.PaneID, req.Command, start)
	family := familyOf(info.Command)
	j.panePID, j.shellGroup, j.onEnd, j.family = info.PID, s.frontGroup(info.PID), s.ended, family
	j.nonce = s.helpers.nonce(req.PaneID, info)
	if program := path.Base(info.Command); remoteShell[program] {
		j.farShell = program
	}
	if holder := s.jobs.claim(j); holder != nil {
		return runResult{}, fmt.Errorf("pane %s is busy with job %s (%s); call get_job with that jobId, or send C-c to it", req.PaneID, holder.id, brief(holder.command))
	}
	// From here an interrupt key may cut what is typed: one sent as the
	// first line goes may land after it, and one sent before the typing
	// begins may reach a loaded shell only as the line does, which it
	// then drops.
	j.typingBegins()
	linger := runLinger
	if st := s.hub.Stream(req.PaneID); st != nil && st.Prompt().Marks {
		linger = markedLinger
	}
	stream, release, err := s.hub.Acquire(ctx, req.PaneID, linger)
	if err != nil {
		s.jobs.abandon(j)
		return runResult{}, notTyped(ctx, err)
	}
	alone := !handOver && !req.SuppressHistory && typedAlone(req.Command, family) &&
		(s.atMarkedPrompt(ctx, stream, info.PID) || s.markingShellInFront(ctx, info, stream))
	t := typing{lines: []string{req.Command}}
	if !alone {
		_, tag := j.mark()
		t = typedFor(family, tag, req.Command, req.SuppressHistory, handOver)
	}
	j.mu.Lock() // the job is claimed: a get_job may read it
	j.alone, j.handedOver = alone, len(t.handover) > 0
	j.mu.Unlock()
	s.kept(j)
	exact := stream.Exact() // the job's marks are in its bytes
	j.tape, j.untaped = s.holdTape(ctx, j, info.Piped)
	f := newFeed()
	from, untap := stream.Tap(f.write)
	go s.follow(j, stream, f, from, func() { untap(); exact(); release() })

	if s.typingNow(j) {
		j.endNeverRan(neverRan)
		return runResult{}, errors.New("tmcp is shutting down: no command is typed any more")
	}
	if err := s.send(ctx, req.PaneID, j, info, t, stream); err != nil {
		s.typingOver(j) // nothing is left to type
		if errors.Is(err, errAborted) {
			j.endNeverRan(neverRan)
			return runResult{}, err
		}
		if !unanswered(ctx, err) || errors.Is(err, tmux.ErrNotSent) {
			s.endUntyped(ctx, j, err)
			return runResult{}, notTyped(ctx, err)
		}
		// tmux has the keys but did not answer: it types them if it
		// resumes, and the job follows the pane as for any command.
		r := j.result(true, req.MaxLines, req.MaxBytes)
		r.Reason = noAnswerReason + " while the command was typed: it runs if tmux takes the keys later; get_job follows it"
		return runResult{JobResult: r}, nil
	}
	if req.Detach {
		return runResult{JobResult: s.awaitStart(ctx, j, req.MaxLines, req.MaxBytes)}, nil
	}
	r := s.await(ctx, j, req.MaxLines, req.MaxBytes, req.Progress, start)
	s.awaitRecorded(j, r)
	j.mu.Lock()
	again := j.retry
	j.mu.Unlock()
	if again != nil && !again.handOver {
		s.helpers.forget(req.PaneID)
	}
	return runResult{JobResult: r, retry: again}, nil
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

// awaitShell returns the pane once it has a shell in front, or says why
// it cannot take a command.
func (s *Service) awaitShell(ctx context.Context, paneID string) (tmux.Pane, error) {
	deadline := time.Now().Add(shellStartWait)
	var refused tmux.Pane // the pane as last seen, when it could not take the command
	var refusal error
	for {
		info, err := s.tc.PaneInfo(ctx, paneID)
		if err != nil && refusal != nil && ctx.Err() != nil {
			return refused, refusal // the call's time ran out while it waited for a shell
		}
		if err != nil {
			return info, err
		}
		err = s.runnable(info)
		// A pane made to run a shell, or whose shell took a run before (a
		// program it ran last, printf in mksh, may still be in front).
		shellPane := info.StartCommand == "" || isShell(info.StartCommand) || s.helpers.hadShell(paneID, info.PID)
		starting := err != nil && !info.Dead && !info.InMode && shellPane
		if !starting || time.Now().After(deadline) {
			return info, err
		}
		refused, refusal = info, err
		select {
		case <-time.After(25 * time.Millisecond):
		case <-ctx.Done():
			return info, err
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
func (s *Service) runnable(p tmux.Pane) error {
	switch {
	case p.Dead:
		return fmt.Errorf("pane %s is dead (%s); use another pane, or make one with split_window", p.ID, p.Death())
	case p.InMode:
		return fmt.Errorf("pane %s is in %s; call exit_copy_mode on it, then run the command", p.ID, p.Mode)
	case remoteShell[path.Base(p.Command)]:
		// Until tmcp has handed that shell its helper, and its nonce, a
		// prompt's mark with a nonce not known is all there is to go by:
		// what a run types there goes to whatever reads, and ends only at
		// the helper's marks, which nothing else can write.
		if st := s.hub.Stream(p.ID); st != nil {
			if ps := st.Prompt(); ps.Marks && !ps.Running || ps.OtherPrompt {
				return nil
			}
		}
		return fmt.Errorf("pane %s runs %s: run_command types into a shell reached through it only when that shell marks its prompts (load `tmcp init` there) and tmcp has seen it at its prompt (call capture_since or wait_for_command on %s first); otherwise use send_keys", p.ID, p.Command, p.ID)
	case !isShell(p.Command):
		return fmt.Errorf("pane %s runs %q, not a shell at its prompt: run_command needs a shell it knows (sh, bash, zsh, dash, mksh, fish…); use send_keys to drive %s, or wait for it to finish", p.ID, p.Command, p.Command)
	}
	return nil
}

// remoteShell are the programs that connect a pane to a shell elsewhere:
// run_command types into that shell when its prompt marks show it waits.
var remoteShell = map[string]bool{"ssh": true, "mosh-client": true, "docker": true, "podman": true, "kubectl": true}

// runLinger keeps a pane streamed for a while after a run, so the next run
// or wait on it does not set the stream up again.
const runLinger = 30 * time.Second

// markedLinger is runLinger for a pane whose shell marks its prompts:
// while its stream lasts, tmcp knows the shell waits at its prompt, and a
// run types the command alone.
const markedLinger = 10 * time.Minute

// markLen is how many characters of a job's id its marks carry: enough
// that no other job's mark in the same pane is taken for its own.
const markLen = 5

// mark returns the token in a job's marks, and (tag) the part of it typed.
// The helper writes the token with its nonce, which no typed line shows;
// only the R mark of the line that hands the helper over carries the tag
// alone (bareMark).
func (j *job) mark() (token, tag string) {
	tag = j.id[:markLen]
	if j.nonce == "" {
		return markerPrefix + tag, tag
	}
	return markerPrefix + tag + ":" + j.nonce, tag
}

// bareMark is the token of a job's marks without the helper's nonce.
func (j *job) bareMark() string { return markerPrefix + j.id[:markLen] }

// handOverWait bounds how long tmcp waits for the pane's shell to say
// that it reads what tmcp hands over (the R mark), once its line is typed:
// a shell still starting reads nothing. It may outlast the call, which
// then returns the job running.
const handOverWait = 30 * time.Second

// step is a line to type, whether to wait first for the shell to read
// it with echo off, and then for its prompt, and whether it is typed at
// the shell's prompt, into its line editor, rather than read by the
// helper.
type step struct {
	line        string
	afterRead   bool
	afterPrompt bool
	atPrompt    bool   // typed at the shell's prompt: pasted where its line editor would rewrite it (typeLine)
	name        string // what typingOption names the step (exits.go)
	reads       bool   // once typed, the shell waits in a read of the helper's
}

// send types what runs the command (see shellside.go): the shell's helper
// first if this shell has not had it, handed over under a short line;
// then the run's lines; then, for a command handed over, its encoded lines
// once the helper reads them. The first line is typed before send returns;
// what must wait for the shell to read goes on with the job.
func (s *Service) send(ctx context.Context, paneID string, j *job, info tmux.Pane, t typing, stream *pane.Stream) error {
	_, tag := j.mark()
	var bootstrap, helper string
	fresh := !j.alone && !s.helpers.has(paneID, info)
	if fresh {
		family := familyOf(info.Command)
		bootstrap = bootstrapLine(family, tag)
		// The modifier goes after the space that keeps the line out of
		// history.
		bootstrap = " " + noCorrect(family) + strings.TrimPrefix(bootstrap, " ")
		// The helper ends with another R mark: the run's lines wait for it,
		// so that they come after its echo is erased.
		helper = helperLine(family, s.endFile(paneID), j.nonce)
		if j.farShell != "" {
			helper += farNonce(family, j.nonce)
			stream.SetShellNonce(j.nonce)
		}
		helper += eraseEcho(family, info.CursorX, len(bootstrap), info.Width) + readMark(family, tag+":"+j.nonce)
		s.helpers.add(paneID, info, j.nonce)
		j.mu.Lock()
		j.freshHelper = true
		j.mu.Unlock()
	}
	steps := stepsOf(bootstrap, helper, t)
	first := len(steps)
	for i, st := range steps {
		if st.afterRead {
			first = i
			break
		}
	}
	if !fresh {
		s.awaitPrompt(ctx, info, stream)
	}
	if err := s.leaveRecall(ctx, paneID, t.recall); err != nil {
		return err
	}
	for i, st := range steps[:first] {
		tctx := ctx
		if i > 0 {
			// Begun, the typing goes on to its end even if the call ends.
			tctx = context.WithoutCancel(ctx)
		}
		if err := s.typeStep(tctx, j, st); err != nil {
			s.helpers.forget(paneID)
			if !errors.Is(err, errAborted) {
				_ = s.clearTyping(context.WithoutCancel(ctx), paneID)
			}
			s.typingOver(j)
			return err
		}
	}
	j.typedLine(first == len(steps))
	if first < len(steps) {
		go s.typeOn(context.WithoutCancel(ctx), j, paneID, steps[first:], stream)
		return nil
	}
	s.typedAll(ctx, j)
	return nil
}

// typeLine types a step's line and Enter. A line typed at the prompt of
// fish, zsh or bash is pasted, so that no abbreviation, macro or key
// binding of the person's rewrites it: as the keys of a bracketed paste in
// fish (see fishPasted) and zsh, whose line editors bind them (zsh since
// 5.1) whether or not they asked the terminal for bracketed paste, which
// zsh does only after drawing its prompt; through tmux in bash, which asks
// before its prompt, and whose readline binds them only since bash 4.4.
func (s *Service) typeLine(ctx context.Context, paneID string, f shellFamily, st step) error {
	switch {
	case st.atPrompt && f == fishShell:
		lead, text := fishPasted(st.line)
		return s.hub.TypePasted(ctx, paneID, lead, text)
	case st.atPrompt && f == zshShell:
		return s.hub.TypePasted(ctx, paneID, "", st.line)
	case st.atPrompt && f == bashShell:
		return s.hub.PasteLine(ctx, paneID, st.line)
	}
	return s.hub.Type(ctx, paneID, st.line, true)
}

// stepsOf returns the steps that type a run: the bootstrap and helper
// lines first when they are not "" (a shell that lacks the helper), then
// what t holds, each named for typingOption.
func stepsOf(bootstrap, helper string, t typing) []step {
	var steps []step
	fresh := bootstrap != ""
	if fresh {
		steps = append(steps, step{line: bootstrap, name: stepBootstrap, reads: true, atPrompt: true}, step{line: helper, afterRead: true, name: stepHelper})
	}
	for i, l := range t.lines {
		name := stepRun
		switch {
		case len(t.handover) > 0:
			name = stepReader
		case i < len(t.lines)-1:
			name = stepTag
		}
		steps = append(steps, step{line: l, afterRead: fresh && i == 0, afterPrompt: fresh && i == 0, name: name, reads: name == stepReader, atPrompt: true})
	}
	for i, l := range t.handover {
		// A POSIX reader runs the command once it reads the last line;
		// fish's is run by the line after.
		name, last := stepHandover, i == len(t.handover)-1
		if last && len(t.after) == 0 {
			name = stepRun
		}
		steps = append(steps, step{line: l, afterRead: i == 0, name: name, reads: !last})
	}
	for _, l := range t.after {
		steps = append(steps, step{line: l, name: stepRun, atPrompt: true})
	}
	return steps
}

// typeStep types one line of a run, once the pane's typingOption names
// its step; it stops before the line when tmcp shuts down.
func (s *Service) typeStep(ctx context.Context, j *job, st step) error {
	if err := s.markTyping(ctx, j, st.name); err != nil {
		// The line's keys were not sent.
		return errors.Join(fmt.Errorf("noting the step in %s: %w", typingOption, err), tmux.ErrNotSent)
	}
	if err := s.hold(ctx, st.name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return errors.Join(err, tmux.ErrNotSent) // nothing of the line is typed
	}
	// Once its keys are handed to tmux, tmux types them whether or not
	// anyone waits for its answer: the call ending now (its client closed
	// stdin) must not make tmcp take a typed line for one that never went.
	// The call's deadline still bounds the wait.
	lctx := context.WithoutCancel(ctx)
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		lctx, cancel = context.WithDeadline(lctx, d)
		defer cancel()
	}
	if err := s.typeLine(lctx, j.paneID, j.family, st); err != nil {
		return err
	}
	j.mu.Lock()
	j.reading = st.reads
	j.mu.Unlock()
	return nil
}

// typedAll clears the pane's typingOption once the run's last line is
// typed, and says the typing is over.
func (s *Service) typedAll(ctx context.Context, j *job) {
	_ = s.hold(ctx, stepDone)
	// Left set, the next tmcp would find the line typed: cleared even when
	// the call ended meanwhile.
	_ = s.clearTyping(context.WithoutCancel(ctx), j.paneID)
	s.typingOver(j)
}

// stopTyping notes that tmcp types no more of the run's lines.
func (j *job) stopTyping() { j.typingOnce.Do(func() { close(j.typingDone) }) }

// startWait bounds how long a detached run waits for its command to
// start: a shell busy with another program takes the line only once that
// program ends.
const startWait = 5 * time.Second

// awaitStart returns a detached job once its command started (its start
// mark was read) or it ended without, or after startWait or when ctx
// ends first, saying so.
func (s *Service) awaitStart(ctx context.Context, j *job, maxLines, maxBytes int) JobResult {
	t := time.NewTimer(startWait)
	defer t.Stop()
	select {
	case <-j.begun:
	case <-j.done:
		s.awaitRecorded(j, JobResult{Finished: true})
	case <-t.C:
	case <-ctx.Done():
	}
	r := j.result(false, maxLines, maxBytes)
	select {
	case <-j.begun:
	default:
		if !r.Finished {
			r.TimedOut = true
			r.Reason = "the shell has not started the command yet (another program may hold the pane): it runs once the shell takes its line; get_job follows it"
		}
	}
	return r
}

// catchUpWait bounds the read of what tmux holds for a stream: it holds
// no output longer than its pause-after before dropping it.
const catchUpWait = (tmux.PauseAfterSeconds + 2) * time.Second

// catchUp reads, in the background, all the output tmux has queued for a
// pane's stream, and closes the channel it returns once it has, or once
// tmux could not say so within catchUpWait. A job whose shell recorded its
// status may still have output on its way, its end mark among it: behind
// a stream that lags after tmux dropped some, or simply behind the end
// file, which the shell writes on this machine as it writes the mark.
// Ended without it, the job would report its last lines short, and those
// lines would come after it as new output.
func (s *Service) catchUp(paneID string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), catchUpWait)
		defer cancel()
		_ = s.tc.CaughtUp(ctx, paneID) // failing, the job ends on the status as before
	}()
	return done
}

// leaveRecall leaves what a shell reads back for its history (mksh's; see
// mkshHistory) where its helper looks: the pane's typedFile on tmcp's
// machine, else its typedOption. A file that cannot be written costs the
// history its entry, not the run.
func (s *Service) leaveRecall(ctx context.Context, paneID, recall string) error {
	if recall == "" {
		return nil
	}
	if file := typedFile(s.endFile(paneID)); file != "" {
		_ = os.WriteFile(file, []byte(recall+"\n"), 0o600)
		return nil
	}
	if err := s.tc.SetOption(ctx, tmux.PaneScope, paneID, typedOption, recall, false); err != nil {
		// Nothing is typed yet: the keys never reached tmux.
		return fmt.Errorf("leaving the command for the shell's history in %s: %w", typedOption, errors.Join(err, tmux.ErrNotSent))
	}
	return nil
}

// typeOn types the steps that wait for the shell to read, as the job goes
// on, and ends the job if the shell never reads or the keys do not go.
// call is the context of the call that ran the job, without its deadline:
// the job outlives it.
func (s *Service) typeOn(call context.Context, j *job, paneID string, steps []step, stream *pane.Stream) {
	ctx, cancel := context.WithTimeout(call, handOverWait)
	defer cancel()
	all := false
	defer func() {
		if !all && !s.aborted() {
			// The job ended short of its lines (it says why): nothing
			// of it is left for a later tmcp to mend.
			_ = s.clearTyping(context.WithoutCancel(ctx), paneID)
		}
		s.typingOver(j)
	}()
	for i, st := range steps {
		if st.afterRead {
			j.awaitsRead(true)
			select {
			case <-j.reads:
				j.awaitsRead(false)
			case <-j.done:
				return // interrupted, or the helper was missing: the job says
			case <-s.abort:
				return // tmcp shuts down: it ends the job (abortTyping)
			case <-ctx.Done():
				s.helpers.forget(paneID)
				j.end(false, nil, "the shell never read what tmcp handed to it, so the command did not run")
				return
			}
		}
		if st.afterPrompt {
			s.awaitDrawnPrompt(ctx, paneID, stream)
		}
		select {
		case <-j.done:
			return // a key cut the reading: what follows must not run
		default:
		}
		if err := s.typeStep(ctx, j, st); errors.Is(err, errAborted) {
			return
		} else if err != nil {
			s.helpers.forget(paneID)
			s.endUntyped(ctx, j, err)
			return
		}
		j.typedLine(i == len(steps)-1)
	}
	all = true
	s.typedAll(ctx, j)
}

// endUntyped ends a job whose line could not be typed: as the death of
// its pane when tmux refused the keys and the pane is gone (killed as tmcp
// typed, before its stream said so), else with the error. tmux is asked
// only when it refused: one that did not answer would not now either, and
// a call that ended (tmcp's client left) says nothing of the pane.
func (s *Service) endUntyped(ctx context.Context, j *job, err error) {
	if tmux.Refused(err) {
		info, ierr := s.tc.PaneInfo(ctx, j.paneID)
		if tmux.Refused(ierr) || ierr == nil && info.Dead {
			j.end(true, nil, "the pane was closed while the command was typed")
			return
		}
	}
	j.endNeverRan("the command could not be typed, so it never ran: " + err.Error())
}

// typingBegins notes that tmcp begins to type the run's lines.
func (j *job) typingBegins() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.typingFrom = time.Now()
}

// typedLine notes that a line of the run was typed, and whether it was
// the last.
func (j *job) typedLine(all bool) {
	j.mu.Lock()
	j.lastTyped, j.typedAll, j.readWait = time.Now(), all, false
	j.mu.Unlock()
	j.step()
}

// awaitsRead notes whether the typing waits for the shell to read what
// was typed (its R mark) before it goes on.
func (j *job) awaitsRead(waits bool) {
	j.mu.Lock()
	j.readWait = waits
	j.mu.Unlock()
	j.step()
}

// step tells the job's reader that the typing moved on.
func (j *job) step() {
	select {
	case j.stepped <- struct{}{}:
	default: // one waiting is enough
	}
}

// typing reports when the last line so far was typed, and whether tmcp is
// typing the next one now: neither waiting for the shell nor done.
func (j *job) typing() (last time.Time, busy bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.lastTyped, !j.typingFrom.IsZero() && !j.typedAll && !j.readWait
}

// waitsForTyping reports whether lines of the run are still to be typed:
// the shell in front then waits for them, and says nothing of the end.
func (j *job) waitsForTyping() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return !j.typedAll
}

// lineOpenings are how the lines of a run begin: a line editor may echo
// them and no more before an interrupt key cuts the line.
var lineOpenings = [][]byte{[]byte("(__tmcp "), []byte("__tmcp_r "), []byte(" __tmcp ")}

// printfEncode writes s for printf's %b inside single quotes: printable
// ASCII as it is, every other byte (and the quote and the backslash) as an
// octal escape, so the typed text holds no key a line editor acts on.
func printfEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		// A caret is encoded too: the typed line never shows "^C", so the
		// echo of an interrupt key after it cannot be mistaken.
		if c >= 0x20 && c < 0x7f && c != '\'' && c != '\\' && c != '^' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "\\0%03o", c)
	}
	return b.String()
}

// follow consumes the pane's output for a job until it ends.
func (s *Service) follow(j *job, stream *pane.Stream, f *feed, from int64, done func()) {
	defer func() {
		s.noteShellEnd(j, stream)
		done()
		s.releaseTape(j.tape)
	}()
	r := newReader(j, from, stream.ShellMark)
	for _, d := range []*pane.Decoder{r.pre, r.dec} {
		if d != nil {
			d.ResumeAfter(stream.Before(d.Offset()))
		}
	}
	lostAtStart := stream.LostBytes()
	due := time.NewTimer(0) // armed only while the reader has a time due
	due.Stop()
	var lostEnd <-chan time.Time // ticks once output was lost, or a key interrupted the command
	inFront := 0                 // looks in a row that found the shell in front
	lookEvery := lostEndEvery
	// After a loss, the output tmux still holds for the stream is read
	// before the job ends on the status its shell recorded (see catchUp).
	var catchingUp <-chan struct{}
	caughtUp := false
	// Once the stream lost output, or the pane died, the job is read
	// again from its tape, if it has one that holds it all.
	onTape := false
	var replayed []byte           // what the tape held when the job turned to it
	var tapeReady chan struct{}   // the tape read more
	var tapeGone <-chan time.Time // the tape's pipe closed while the pane still streams
	toTape := func(paneDied bool) bool {
		kept, ok := j.tape.replay(paneDied)
		if !ok {
			return false
		}
		onTape, replayed, tapeReady = true, kept, j.tape.ready
		r = r.again()
		// The tape may run ahead of the stream, which lags: the job ends
		// once the stream has what tmux still holds for it, so that its
		// last lines do not come after its end as new output to a cursor
		// taken then (as for an end the shell recorded, see catchUp).
		r.beforeEnd = func() { <-s.catchUp(j.paneID) }
		return true
	}
	for {
		changed := stream.Changed()
		data := f.take()
		if onTape {
			data = append(replayed, j.tape.take()...)
			replayed = nil
		}
		// Checked after the take, so a loss before any byte taken is seen
		// even when the output runs on to the job's end.
		if !onTape && stream.LostBytes() > lostAtStart && lostEnd == nil {
			if toTape(false) {
				continue
			}
			if why := j.tape.whyNotNil(); why != "" {
				j.mu.Lock()
				j.untaped = why
				j.mu.Unlock()
			}
		}
		if stream.LostBytes() > lostAtStart && lostEnd == nil && !onTape {
			j.mu.Lock()
			j.lost, j.beforeLoss = true, j.tail.Whole()
			j.mu.Unlock()
			t := time.NewTicker(lostEndEvery)
			defer t.Stop()
			lostEnd = t.C
		}
		if (r.interrupted || j.adopted) && lostEnd == nil {
			// The key may have cut the shell's end mark off as well: it
			// writes it in front, where the key reaches it too. A job of
			// an earlier tmcp may have ended before this one followed it.
			lookEvery = interruptLookEvery
			t := time.NewTicker(lookEvery)
			defer t.Stop()
			lostEnd = t.C
		}
		if len(data) > 0 {
			// A pane that keeps writing must not hold off what is due.
			if now := time.Now(); r.consume(data, now) || r.expire(now) {
				return
			}
			if !r.started.IsZero() {
				j.beginOnce.Do(func() { close(j.begun) })
			}
			continue
		}
		if closed, reason := stream.Closed(); closed && !stream.Disconnected() {
			// tmux frees what it still held for the stream as it frees
			// the pane: the tape has it, once tmux closed the pipe.
			if onTape || toTape(true) {
				data := append(replayed, j.tape.take()...)
				replayed = nil
				if drainTape(j.tape, r, data) {
					return
				}
			}
			j.end(true, nil, reason)
			return
		} else if closed && lostEnd == nil {
			// The connection to a remote host broke: the command may run
			// on. Its output from here is lost; the job ends once the
			// shell is seen in front again, over a new connection.
			j.mu.Lock()
			if !j.lost {
				j.beforeLoss = j.tail.Whole()
			}
			j.lost, j.disconnected = true, true
			j.mu.Unlock()
			t := time.NewTicker(lostEndEvery)
			defer t.Stop()
			lostEnd = t.C
		}
		ready, changed := f.ready, changed
		if closed, _ := stream.Closed(); closed {
			// Both stay ready once closed: only the looks may wake the loop.
			ready, changed = nil, nil
		}
		var wake <-chan time.Time
		if at := r.due(); !at.IsZero() {
			due.Reset(time.Until(at))
			wake = due.C
		}
		if onTape {
			// The tape says when more came; the stream, when the pane died.
			ready = tapeReady
			if j.tape.ended() && tapeGone == nil {
				tapeGone = time.After(tapeDrain)
			}
		}
		select {
		case <-tapeGone:
			// The pipe closed and the pane lives on: another pipe replaced
			// the tape. The job goes on with its stream, as one that lost
			// output.
			onTape, tapeGone = false, nil
			j.mu.Lock()
			j.lost, j.beforeLoss = true, j.tail.Whole()
			j.mu.Unlock()
			t := time.NewTicker(lostEndEvery)
			defer t.Stop()
			lostEnd = t.C
		case <-ready:
		case <-changed:
		case <-j.done:
			return
		case <-catchingUp:
			caughtUp, catchingUp = true, nil
		case key := <-j.keys:
			r.keySent(key, time.Now())
		case <-j.stepped: // the grace of a key runs from the last typed line
		case <-wake:
			if r.expire(time.Now()) {
				return
			}
		case <-lostEnd:
			ctx, cancel := context.WithTimeout(context.Background(), lookEvery)
			front, known := s.shellInFront(ctx, j.paneID, j.shellGroup)
			cancel()
			// Twice in a row: an end mark written just before the first
			// look has had time to arrive. While tmcp still hands the
			// shell the run's lines, it is in front reading them, unless
			// an interrupt key cut the reading.
			if inFront++; !known || !front || j.waitsForTyping() && !r.interrupted {
				inFront = 0
			}
			// A job of an earlier tmcp asks its pane's option at every
			// look: it may have ended before this tmcp followed it. So
			// does one whose foreground cannot be seen (a remote host):
			// nothing else tells.
			if inFront >= 2 || j.adopted || !known {
				ctx, cancel := context.WithTimeout(context.Background(), lookEvery)
				status, recorded := s.recordedEnd(ctx, j)
				cancel()
				if recorded && !j.lostConnection() && !caughtUp {
					// The end mark may not be lost but late, behind output
					// tmux still holds for the stream: one that lags, or
					// that a shell writing its end file on this machine
					// outran.
					if catchingUp == nil {
						catchingUp = s.catchUp(j.paneID)
					}
					continue
				}
				if recorded {
					// The shell left the status in the pane's file or option: the end
					// mark went by unseen (dropped, or before this tmcp).
					reason := ""
					switch {
					case j.lostConnection():
						reason = "the connection to the host was lost during the command: its status is the one its shell left in the pane's " + endOption
						reason = joinReasons(reason, cmp.Or(s.mend(j, lookEvery), "its output after the drop is not known"))
					case j.lostOutput():
						reason = joinReasons("tmux dropped output, the end mark with it: its status is the one its shell recorded as the command ended", s.mend(j, lookEvery))
					}
					j.end(false, &status, reason)
					return
				}
			}
			// Output dropped by a tmux too busy to deliver it is a sign the
			// helper's own write of the status may be slow too.
			patient := j.lostOutput() && !j.lostConnection() && !r.interrupted && !j.adopted
			if inFront >= 2 && (!patient || inFront >= statusLooks) {
				var reason string
				switch {
				case j.lostConnection():
					reason = "the connection to the host was lost during the command: it has ended since, but its exit status is not known"
					reason = joinReasons(reason, cmp.Or(s.mend(j, lookEvery), "its output after the drop is not known"))
				case j.adopted && j.alone:
					reason = aloneEndedUnseen
				case !j.lostOutput():
					reason = "interrupted: the key cut off the shell's end mark as well, so the exit status is not known"
				default:
					reason = joinReasons("tmux dropped output, the end mark with it: the command has ended, but its exit status was lost", s.mend(j, lookEvery))
				}
				j.end(false, nil, reason)
				return
			}
		}
		due.Stop()
	}
}

const (
	// keyGrace is how long a job whose typed line an interrupt key may
	// have cut waits for its start mark before it is reported not run:
	// the mark follows at once when the shell had read the line, so this
	// only covers a machine slow to schedule the wrapper.
	keyGrace = 500 * time.Millisecond
	// replaceGrace is how long a command that replaces its shell with
	// another (exec sh) is given to fail, and so report a status, before
	// it is reported as a shell waiting at its prompt.
	replaceGrace = 500 * time.Millisecond
	// unparsedGrace is how long a run in fish waits for its start mark
	// after fish said something before it, before it takes that for fish
	// saying it could not parse the line: fish runs a line it parsed at
	// once, and writes the mark first.
	unparsedGrace = 300 * time.Millisecond
	// maxMarkLen bounds a mark's bytes as the wrapper writes them, for
	// finding one split between two reads.
	maxMarkLen = 64
)

func (j *job) add(line string) { j.addPiece(line, false) }

// helperIsFresh reports whether the run hands the shell its helper, so
// that the shell's word that it lacks one is about an earlier run's line.
func (j *job) helperIsFresh() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.freshHelper
}

// helperReads notes that the shell reads what tmcp hands over.
func (j *job) helperReads() {
	select {
	case j.reads <- struct{}{}:
	default: // more marks than hand-overs: not this job's doing
	}
}

// addPiece records a line of output, or a piece of one that goes on (more).
func (j *job) addPiece(line string, more bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.tail.AddPiece(line, more)
}

// newJob returns a job of a command in a pane, not yet ended.
func newJob(id, paneID, command string, started time.Time) *job {
	return &job{id: id, paneID: paneID, command: command, started: started,
		tail: pane.NewTailBuffer(jobTailLines, jobTailBytes), done: make(chan struct{}), keys: make(chan string, 1),
		reads: make(chan struct{}, 2), stepped: make(chan struct{}, 1), recorded: make(chan struct{}), settled: make(chan struct{}),
		begun: make(chan struct{}), typingDone: make(chan struct{})}
}

// end records how the job ended, once: with the command's status, if it
// is known, and a reason, if there is one to give.
func (j *job) end(died bool, status *int, reason string) {
	j.endAt(time.Now(), died, status, reason)
}

// endNeverRan ends a job whose command never ran, with the reason.
func (j *job) endNeverRan(reason string) {
	j.mu.Lock()
	j.neverRan = !j.finished
	j.mu.Unlock()
	j.end(false, nil, reason)
}

// endAt is end, at a time already past.
func (j *job) endAt(at time.Time, died bool, status *int, reason string) {
	j.mu.Lock()
	if j.finished {
		j.mu.Unlock()
		return
	}
	if j.lost {
		// Why nothing stood in for what tmux dropped.
		reason = joinReasons(reason, j.untaped)
	}
	j.finished, j.died, j.status, j.reason, j.finishedAt = true, died, status, reason, at
	j.mu.Unlock()
	// The pane is free before anyone hears of the end, so a caller that
	// runs its next command at once finds it free.
	if j.onEnd != nil {
		j.onEnd(j)
	}
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
		Reason: joinReasons(j.reason, j.historyNote()), TimedOut: timedOut && !j.finished, OutputLost: j.lost,
		TotalLines: j.tail.TotalLines(), TotalBytes: j.tail.TotalBytes(), Elapsed: time.Since(j.started)}
	if j.finished {
		r.Elapsed = j.finishedAt.Sub(j.started)
		if j.status != nil {
			status := *j.status
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
