package main

import (
	"context"
	"fmt"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// runTimeout is the wait of an ordinary run_command: far more than
	// its commands need, so a timeout means something is wrong.
	runTimeout = 30
	// fillTimeout is the wait of the run that fills a pane's stream, the
	// ceiling on waits (wait.DefaultCeiling): its 1.3 MB pass through tmux
	// as fast as tmux takes them, which with a hundred panes beside it was
	// over 30 s here.
	fillTimeout = 45
	// readyTimeout bounds the wait for a detached command's line.
	readyTimeout = 15
	// victimTimeout is the wait of a call on a pane about to be killed:
	// the call must end when the pane dies, long before that.
	victimTimeout = 60
	// seqLines is how many lines the long-output command prints.
	seqLines = 2000
	// captureMaxLines and captureMaxBytes are capture_since's ceilings, so
	// a capture is never truncated.
	captureMaxLines = 10000
	captureMaxBytes = 1 << 20
	// collectTries bounds the get_job calls that wait for a slow job.
	collectTries = 4
	// capturePending is how many lines may wait for capture_since before
	// it is called, well below captureMaxLines.
	capturePending = 5000
	// fillLines of seq output are over a megabyte: more than a stream's ring.
	fillLines = 200000
	fillBytes = 1288895 // bytes of `seq 1 200000`, newlines included
	// errorPause spaces the calls of a worker whose call failed.
	errorPause = 100 * time.Millisecond
	// adoptedLimit bounds how long after a tmcp restart a pane may stay
	// busy with a job of the tmcp before: the new one follows it to its
	// end, which the longest command (a fill) reaches within fillTimeout.
	adoptedLimit = (fillTimeout + 15) * time.Second
)

// echoLine finds the job id in the shell's echo of the line run_command
// types: its markers, or the tmux buffer it reads the command from, carry
// the job's token.
var echoLine = regexp.MustCompile(`\(__tmcp ([0-9a-f]{5})&&\(`)

// segment is what one command put on a pane: the echo of the line that
// ran it, then its output.
type segment struct {
	job   string
	lines []string
}

// worker drives one pane in a loop, checking every answer, and keeps what
// the pane printed since its capture cursor to check capture_since.
type worker struct {
	s        *soak
	idx      int
	rng      *rand.Rand
	pane     string
	cursor   string
	segs     []segment
	synced   bool // cursor and segs describe the pane exactly
	needFill bool // a new pane: its stream is to be filled first
	// needIdle: tmcp restarted, and a command started before may still
	// run in the pane; nothing is checked before it has ended.
	needIdle bool
	idleFrom time.Time // when needIdle was set
	n        int
	victim   chan *victim
}

// victim is the killer's request that a worker put a long call in flight
// on its pane, so the pane can be killed under it.
type victim struct {
	kind        int               // which call: run_command, wait_for_text, get_job
	pane        chan string       // the worker's pane, sent as its call starts
	killed      chan [2]time.Time // when kill_pane was sent and answered; zero if it failed
	replacement chan string       // the pane to go on with; empty: none could be made

	mu        sync.Mutex
	taken     bool
	withdrawn bool
}

// take claims the request for the worker, unless the killer withdrew it.
func (v *victim) take() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.withdrawn {
		return false
	}
	v.taken = true
	return true
}

// withdraw takes the request back, unless a worker already claimed it.
func (v *victim) withdraw() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.taken {
		return false
	}
	v.withdrawn = true
	return true
}

var victimKinds = []string{"run_command", "wait_for_text", "get_job"}

func (w *worker) loop(ctx context.Context) {
	defer w.s.wg.Done()
	defer w.s.recoverPanic(fmt.Sprintf("worker %d", w.idx))
	for w.s.running(ctx) {
		if !w.s.gate.enter(ctx, w.s.stopping) {
			return
		}
		goOn := w.turn(ctx)
		w.s.gate.leave()
		if !goOn {
			return
		}
	}
}

// turn does one step, or is the killer's victim if it asked. It reports
// false if the worker has no pane to go on with.
func (w *worker) turn(ctx context.Context) bool {
	select {
	case v := <-w.victim:
		if v.take() {
			return w.beVictim(ctx, v)
		}
		return true
	default:
	}
	w.step(ctx)
	return true
}

// step does one operation, chosen at random, or resynchronises first.
func (w *worker) step(ctx context.Context) {
	switch {
	case w.needIdle:
		w.awaitIdle(ctx)
		return
	case !w.synced:
		// First, so that a new pane's stream lingers and keeps the fill.
		w.resync(ctx)
		return
	case w.needFill && w.fill(ctx, false):
		return
	}
	w.n++
	if w.pendingLines() > capturePending {
		w.since(ctx)
		return
	}
	switch k := w.rng.Intn(10); {
	case k < 4:
		w.echo(ctx)
	case k < 5:
		w.seq(ctx)
	case k < 7:
		w.waitReady(ctx, w.rng.Intn(4) > 0)
	default:
		w.since(ctx)
	}
}

// ready reports whether the worker's pane is idle, filled and its cursor
// known.
func (w *worker) ready() bool { return !w.needIdle && w.synced && !w.needFill }

// pendingLines counts the lines capture_since must return next time.
func (w *worker) pendingLines() int {
	n := 0
	for _, s := range w.segs {
		n += 1 + len(s.lines)
	}
	return n
}

// fill fills the pane's stream to its ring's capacity with one long
// output, checked, so that the memory tmcp holds for the pane is at its
// designed bound from the start and a leak is not hidden by rings filling.
//
// Only fillSlots panes fill at once. With wait false, fill returns false
// at once if none is free, and the worker does other steps meanwhile; it
// reports true once it has tried.
func (w *worker) fill(ctx context.Context, wait bool) bool {
	select {
	case w.s.fills <- struct{}{}:
	default:
		if !wait {
			return false
		}
		select {
		case w.s.fills <- struct{}{}:
		case <-ctx.Done():
			return true
		}
	}
	defer func() { <-w.s.fills }()
	r, ok := w.run(ctx, fmt.Sprintf("seq 1 %d", fillLines), fillTimeout, 0)
	w.synced = false // the cursor is taken again after the long output
	if !ok {
		return true
	}
	w.needFill = false
	want := make([]string, 500) // run_command keeps the last 500 lines by default
	for i := range want {
		want[i] = strconv.Itoa(fillLines - 500 + 1 + i)
	}
	if got, _ := r.num("totalBytes"); got != fillBytes && !r.flag("outputLost") {
		w.wrong(r, "totalBytes %d, want %d", got, fillBytes)
	}
	w.checkRun(r, want, make([]string, fillLines), 0, fillLines-500)
	w.segs = nil
	return true
}

// awaitIdle waits for the pane's shell to be back at its prompt: it runs
// a command that prints nothing until the pane takes it. The output of a
// command from before tmcp restarted is then all in, and a cursor taken
// afterwards sees none of it.
func (w *worker) awaitIdle(ctx context.Context) {
	r := w.s.c.call(ctx, "run_command", w.pane, map[string]any{"paneId": w.pane, "command": "true", "timeoutSeconds": runTimeout}, w.s.c.waitBound(runTimeout))
	switch st, _ := r.num("exitStatus"); {
	case r.Kind == errNotAtPrompt:
		w.s.st.note("a pane still ran a command from before the tmcp restart")
		w.s.sleep(ctx, 10*errorPause)
	case r.Kind == errPaneBusy && time.Since(w.idleFrom) < adoptedLimit:
		// The new tmcp follows the old one's job in the pane to its end.
		w.s.st.note("a pane was still busy with a job of the tmcp before the restart")
		w.s.sleep(ctx, 10*errorPause)
	case !r.ok():
		w.failed(r)
	case !r.flag("finished") || st != 0:
		w.wrong(r, "finished=%v exitStatus=%v for true", r.flag("finished"), r.Fields["exitStatus"])
	default:
		w.needIdle, w.synced = false, false
	}
}

// resync takes a fresh capture cursor once no disturbance is under way.
func (w *worker) resync(ctx context.Context) {
	if d := w.s.stop.settledIn(); d > 0 {
		w.s.sleep(ctx, d)
		return
	}
	r := w.s.c.call(ctx, "capture_since", w.pane, map[string]any{"paneId": w.pane}, w.s.c.nonWait())
	if !r.ok() {
		w.failed(r)
		w.s.sleep(ctx, 200*time.Millisecond)
		return
	}
	if r.str("cursor") == "" {
		w.wrong(r, "no cursor in a first capture_since")
		return
	}
	w.cursor, w.segs, w.synced = r.str("cursor"), nil, true
}

// failed judges a call that ended in an error: only a stop of tmux
// excuses one, and only when it says tmux did not answer.
func (w *worker) failed(r reply) {
	w.synced = false
	w.s.judgeError(r)
	w.s.sleep(context.Background(), errorPause)
}

// wrong records a wrong answer, unless a restart of tmux made it.
func (w *worker) wrong(r reply, format string, args ...any) {
	w.synced = false
	if w.s.excusedAnswer(r) {
		return
	}
	w.s.st.fail("wrong", "%s: %s; reply %s", r.describe(), fmt.Sprintf(format, args...), r.fieldsBrief())
}

// lost judges a finished run that says tmux dropped some of its output:
// "lost", reported, unless what it does claim is untrue (a status other
// than the command's, last lines other than its last lines, or no reason
// given), which is "wrong". Both fail the soak; they are counted apart.
func (w *worker) lost(r reply, want []string, status int) {
	var bad []string
	if st, ok := r.num("exitStatus"); ok && st != status {
		bad = append(bad, fmt.Sprintf("exitStatus %d, want %d", st, status))
	}
	if got := r.lines(); len(got) > 0 && diffLines(got, want[max(len(want)-len(got), 0):]) != "" {
		bad = append(bad, "lines: "+diffLines(got, want[max(len(want)-len(got), 0):]))
	}
	if r.str("reason") == "" {
		bad = append(bad, "no reason")
	}
	w.synced = false
	switch {
	case len(bad) > 0:
		w.wrong(r, "output lost, and %s", strings.Join(bad, "; "))
	case !w.s.excusedAnswer(r):
		w.s.st.fail("lost", "%s: output lost, reported: %s", r.describe(), r.str("reason"))
	}
}

// echo runs a command whose one line and exit status are known.
func (w *worker) echo(ctx context.Context) {
	status := w.rng.Intn(8)
	tok := fmt.Sprintf("tok-%d-%d-ok", w.idx, w.n)
	r, ok := w.run(ctx, fmt.Sprintf("echo %s; exit %d", tok, status), runTimeout, 0)
	if ok {
		w.checkRun(r, []string{tok}, []string{tok}, status, 0)
	}
}

// seq runs a command with a long output, read whole or as its last lines.
func (w *worker) seq(ctx context.Context) {
	full := make([]string, seqLines)
	for i := range full {
		full[i] = strconv.Itoa(i + 1)
	}
	maxLines, want := seqLines, full
	if w.rng.Intn(2) == 0 {
		maxLines, want = 0, full[seqLines-500:] // run_command keeps the last 500 by default
	}
	r, ok := w.run(ctx, fmt.Sprintf("seq 1 %d", seqLines), runTimeout, maxLines)
	if ok {
		w.checkRun(r, want, full, 0, seqLines-len(want))
	}
}

// run runs a command and returns its finished reply, collecting with
// get_job a run that outlasted its wait of timeout seconds. ok is false
// when the call failed (it is judged already).
func (w *worker) run(ctx context.Context, command string, timeout, maxLines int) (reply, bool) {
	args := map[string]any{"paneId": w.pane, "command": command, "timeoutSeconds": timeout}
	if maxLines > 0 {
		args["maxLines"] = maxLines
	}
	r := w.s.c.call(ctx, "run_command", w.pane, args, w.s.c.waitBound(float64(timeout)))
	if !r.ok() {
		w.failed(r)
		return r, false
	}
	if !r.flag("timedOut") {
		return r, true
	}
	switch {
	case w.s.stop.overlaps(r.Start, r.End):
		w.s.st.note("run_command timed out across the stop of tmux")
	case w.s.excusedAnswer(r):
		w.synced = false
		return r, false
	default:
		w.s.st.fail("slow", "%s: %q still running after %ds", r.describe(), command, timeout)
	}
	return w.collect(ctx, r.str("jobId"), command, maxLines)
}

// collect waits for a job with get_job until it finishes: the pane is
// not free for another command before. ok is false when it failed or
// never finished.
func (w *worker) collect(ctx context.Context, job, command string, maxLines int) (reply, bool) {
	args := map[string]any{"jobId": job, "timeoutSeconds": runTimeout}
	if maxLines > 0 {
		args["maxLines"] = maxLines
	}
	var g reply
	for try := 0; try < collectTries && w.s.running(ctx); try++ {
		g = w.s.c.call(ctx, "get_job", w.pane, args, w.s.c.waitBound(runTimeout))
		if !g.ok() {
			w.failed(g)
			return g, false
		}
		if g.flag("finished") {
			return g, true
		}
	}
	if g.Tool == "" {
		return g, false // the soak ended before a get_job was made
	}
	w.wrong(g, "job %s of %q still not finished", job, command)
	return g, false
}

// checkRun checks a finished run's answer: its status, its lines (the
// last ones, dropped lines counted) and its total. On success the output
// joins what capture_since must return.
func (w *worker) checkRun(r reply, want, full []string, status, dropped int) bool {
	if r.flag("outputLost") && r.flag("finished") && !r.flag("paneDied") {
		w.lost(r, want, status)
		return false
	}
	var bad []string
	if !r.flag("finished") || r.flag("running") {
		bad = append(bad, "not finished")
	}
	if r.flag("paneDied") || r.flag("outputLost") || r.flag("timedOut") {
		bad = append(bad, fmt.Sprintf("paneDied=%v outputLost=%v timedOut=%v reason=%q", r.flag("paneDied"), r.flag("outputLost"), r.flag("timedOut"), r.str("reason")))
	}
	if got, ok := r.num("exitStatus"); !ok || got != status {
		bad = append(bad, fmt.Sprintf("exitStatus %v, want %d", r.Fields["exitStatus"], status))
	}
	if got, _ := r.num("totalLines"); got != len(full) {
		bad = append(bad, fmt.Sprintf("totalLines %d, want %d", got, len(full)))
	}
	if d := diffLines(r.lines(), want); d != "" {
		bad = append(bad, "lines: "+d)
	}
	if got, _ := r.num("droppedLines"); r.flag("truncated") != (dropped > 0) || got != dropped {
		bad = append(bad, fmt.Sprintf("truncated=%v droppedLines=%d, want %d dropped", r.flag("truncated"), got, dropped))
	}
	if r.str("jobId") == "" {
		bad = append(bad, "no jobId")
	}
	if len(bad) > 0 {
		w.wrong(r, "%s", strings.Join(bad, "; "))
		return false
	}
	w.segs = append(w.segs, segment{job: r.str("jobId"), lines: full})
	return true
}

// waitReady starts a command that prints a line after a short sleep and
// waits for that line: after a cursor taken before the command started,
// or from the call's start (the line then comes a second later).
func (w *worker) waitReady(ctx context.Context, withCursor bool) {
	var cursor string
	sleep := "1"
	if withCursor {
		if !w.since(ctx) {
			return
		}
		// Long enough that the detached run returns before it ends, even
		// under the race detector just after tmux was stopped.
		cursor, sleep = w.cursor, "1"
	}
	word := fmt.Sprintf("ready-%d-%d-ok", w.idx, w.n)
	d := w.s.c.call(ctx, "run_command", w.pane, map[string]any{"paneId": w.pane, "command": "sleep " + sleep + "; echo " + word, "detach": true}, w.s.c.nonWait())
	if !d.ok() {
		w.failed(d)
		return
	}
	job := d.str("jobId")
	if job != "" && d.flag("finished") && !d.flag("running") {
		// The run returns once its shell took the line; when that is only
		// seen late (tmux stopped, or far behind), the command may have
		// ended by then, and the reply must say so truly.
		if st, ok := d.num("exitStatus"); !ok || st != 0 || diffLines(d.lines(), []string{word}) != "" {
			w.wrong(d, "a detached run that had ended by its return gave status %v and lines %q, want 0 and %q", d.Fields["exitStatus"], d.lines(), word)
			return
		}
		w.s.st.note("a detached run whose command had ended by its return (tmux late to show it started)")
		w.synced = false // its lines are past the cursor: take a new one
		return
	}
	if job == "" || !d.flag("running") || d.flag("finished") {
		w.wrong(d, "a detached run gave jobId=%q running=%v finished=%v", job, d.flag("running"), d.flag("finished"))
		return
	}
	w.s.noteJob(job, word)
	args := map[string]any{"paneId": w.pane, "patterns": []string{word}, "timeoutSeconds": readyTimeout}
	if cursor != "" {
		args["cursor"] = cursor
	}
	r := w.s.c.call(ctx, "wait_for_text", w.pane, args, w.s.c.waitBound(readyTimeout))
	switch {
	case !r.ok():
		w.failed(r)
	case r.str("outcome") == "matched":
		// The shell's prompt may be glued to the front of the line, as on
		// the screen, when the line that ran the command was typed before
		// the prompt was printed.
		if stripPrompts(r.str("matched")) != word || r.str("pattern") != word {
			w.wrong(r, "matched %q by %q, want %q", r.str("matched"), r.str("pattern"), word)
		}
	case r.str("outcome") == "timeout" && cursor == "" && r.flag("alreadyOnScreen"):
		// The line came before the wait began: correctly not counted.
		w.s.st.note("wait_for_text began after its line (alreadyOnScreen)")
	case r.str("outcome") == "timeout" && w.s.stop.overlaps(r.Start, r.End):
		w.synced = false
		w.s.st.note("wait_for_text timed out across the stop of tmux")
	default:
		w.wrong(r, "outcome %q (reason %q), want matched %q (cursor given: %v)", r.str("outcome"), r.str("reason"), word, cursor != "")
	}
	g := w.s.c.call(ctx, "get_job", w.pane, map[string]any{"jobId": job, "timeoutSeconds": readyTimeout}, w.s.c.waitBound(readyTimeout))
	if !g.ok() {
		w.failed(g)
		return
	}
	if !g.flag("finished") && w.s.stop.overlaps(g.Start, g.End) {
		w.synced = false
		return
	}
	w.checkRun(g, []string{word}, []string{word}, 0, 0)
}

// since reads what the pane wrote since the cursor and checks it is
// exactly what the commands run since then printed, each after the echo
// of the line that ran it.
func (w *worker) since(ctx context.Context) bool {
	r := w.s.c.call(ctx, "capture_since", w.pane, map[string]any{"paneId": w.pane, "cursor": w.cursor,
		"maxLines": captureMaxLines, "maxBytes": captureMaxBytes}, w.s.c.nonWait())
	if !r.ok() {
		w.failed(r)
		return false
	}
	missed, _ := r.num("missedBytes")
	screen, _ := r.num("screenLines")
	switch {
	case r.flag("reset"):
		if w.s.stop.overlaps(r.Start, r.End) {
			w.s.st.note("capture_since reset across the stop of tmux")
		} else {
			w.wrong(r, "cursor reset: %s", r.str("reason"))
		}
		w.cursor, w.segs = r.str("cursor"), nil
		return false
	case missed > 0 || r.flag("truncated") || screen > 0 || r.flag("alternateScreen"):
		w.wrong(r, "missedBytes=%d truncated=%v screenLines=%d alternateScreen=%v on a plain pane", missed, r.flag("truncated"), screen, r.flag("alternateScreen"))
		return false
	case r.str("cursor") == "":
		w.wrong(r, "no cursor")
		return false
	}
	if d := matchSegments(r.lines(), w.segs); d != "" {
		w.wrong(r, "lines since the cursor: %s", d)
		return false
	}
	w.cursor, w.segs = r.str("cursor"), nil
	return true
}

// matchSegments checks captured lines against the commands run since the
// cursor. A prompt may be glued to the front of a line, or the end of an
// echo, depending on when the shell printed it; it is not output.
func matchSegments(lines []string, segs []segment) string {
	var want, got []string
	for _, s := range segs {
		want = append(want, "<echo of job "+s.job[:5]+">")
		want = append(want, s.lines...)
	}
	for _, l := range lines {
		l = stripPrompts(l)
		if strings.Contains(l, "__tmcp_l") {
			continue // the line that hands a shell its helper, on its first run
		}
		if m := echoLine.FindStringSubmatch(l); m != nil {
			l = "<echo of job " + m[1] + ">"
		}
		got = append(got, l)
	}
	return diffLines(got, want)
}

// stripPrompts removes the shell prompts from the front of a line.
func stripPrompts(l string) string {
	for strings.HasPrefix(l, prompt) {
		l = l[len(prompt):]
	}
	return l
}

// diffLines says how got differs from want, briefly; empty if equal.
func diffLines(got, want []string) string {
	n := min(len(got), len(want))
	i := 0
	for i < n && got[i] == want[i] {
		i++
	}
	if i == n && len(got) == len(want) {
		return ""
	}
	at := func(ls []string) string {
		if i >= len(ls) {
			return "(end)"
		}
		return strconv.Quote(ls[i])
	}
	return fmt.Sprintf("%d lines, want %d; first difference at line %d: got %s, want %s (got %s)",
		len(got), len(want), i+1, at(got), at(want), brief(got))
}

// brief shows a few lines of a text for a message.
func brief(ls []string) string {
	const show = 6
	var q []string
	for i, l := range ls {
		if i == show {
			q = append(q, fmt.Sprintf("… %d more", len(ls)-show))
			break
		}
		if len(l) > 80 {
			l = l[:77] + "..."
		}
		q = append(q, strconv.Quote(l))
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// beVictim puts a long call in flight on the worker's pane, which the
// killer kills under it, and checks the call ends promptly and says the
// pane died. It reports false if the worker has no pane to go on with.
func (w *worker) beVictim(ctx context.Context, v *victim) bool {
	w.synced = false
	v.pane <- w.pane
	word := fmt.Sprintf("never-%d-%d", w.idx, w.n)
	c := w.s.c
	var r reply
	switch v.kind {
	case 0:
		r = c.call(ctx, "run_command", w.pane, map[string]any{"paneId": w.pane, "command": "sleep 30; echo " + word, "timeoutSeconds": victimTimeout}, c.waitBound(victimTimeout))
	case 1:
		r = c.call(ctx, "wait_for_text", w.pane, map[string]any{"paneId": w.pane, "patterns": []string{word}, "timeoutSeconds": victimTimeout}, c.waitBound(victimTimeout))
	default:
		r = c.call(ctx, "run_command", w.pane, map[string]any{"paneId": w.pane, "command": "sleep 30", "detach": true}, c.nonWait())
		if r.ok() {
			r = c.call(ctx, "get_job", w.pane, map[string]any{"jobId": r.str("jobId"), "timeoutSeconds": victimTimeout}, c.waitBound(victimTimeout))
		}
	}
	var killed [2]time.Time
	select {
	case killed = <-v.killed:
	case <-time.After(victimTimeout * time.Second):
		w.s.st.fail("kill", "worker %d: the killer never said whether pane %s was killed", w.idx, w.pane)
	}
	if !killed[0].IsZero() {
		w.s.judgeVictim(r, killed)
	}
	select {
	case p := <-v.replacement:
		w.pane, w.needFill = p, true
	case <-time.After(victimTimeout * time.Second):
		w.s.st.fail("kill", "worker %d: no replacement for pane %s", w.idx, w.pane)
		return false
	}
	return w.pane != ""
}
