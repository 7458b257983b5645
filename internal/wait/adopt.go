package wait

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tmcp/tmcp/internal/jobstate"
	"github.com/tmcp/tmcp/internal/pane"
	"github.com/tmcp/tmcp/internal/tmux"
)

// Jobs outlive the tmcp that ran them. Each job's record goes to a file
// (jobstate) as it starts and as it ends. A later tmcp asked about a job
// it does not hold takes the record and asks tmux what became of the job:
// the status the shell's helper leaves as the job ends (see endFile), and
// the output from the pane's history, between
// the row of the typed line (which carries the job's token) and the
// shell's next prompt, told by the text before the typed line on its
// row. A job still running is followed again, as any.

// endOption is the pane option the helper of a shell tmcp cannot reach
// by file (a remote host's, or with no state directory) leaves the last
// job's token and status in, from a tmux process started in the
// background.
const endOption = "@tmcp_end"

// Ends: the helper of a shell on tmcp's own machine leaves the last
// job's token and status in a file of the pane's in jobstate.EndsDir, with
// the shell's own printf: no process is started, where a tmux client in
// the background costs each run about 11 ms of the machine (BENCHMARKS.md)
// and, hundreds at once under load, slows tmux itself.

// endFile is the file the helper of the shell in paneID leaves its jobs'
// ends in; "" when there is none (no jobs kept, or a remote host's).
func (s *Service) endFile(paneID string) string {
	if s.keep == nil || s.keep.endsDir == "" {
		return ""
	}
	return filepath.Join(s.keep.endsDir, strings.TrimPrefix(paneID, "%"))
}

// aloneEndedUnseen is why a command typed alone that ended while no tmcp
// followed it has no status: the shell's end mark is its one trace.
const aloneEndedUnseen = "it ended while no tmcp followed it: a command typed alone (its shell marks its prompts) leaves no trace of its exit status but the end mark tmcp did not see"

// endSettle is how long a job found ended without its status in the
// pane's option is given for the helper's background write to land.
const endSettle = 300 * time.Millisecond

// promptTries is how many times, within endSettle, a job's output is read
// again from the history while its shell has yet to draw the prompt that
// tells where the output begins.
const promptTries = 3

// keeper writes the jobs' records, when the Service keeps them.
type keeper struct {
	store   *jobstate.Store
	endsDir string         // see jobstate.EndsDir; "" when the shells are on another machine
	mu      sync.Mutex     // orders a write's start against the Service's close
	closing bool           // jobs that end now end only for this tmcp
	writing sync.WaitGroup // records being written in the background
}

// KeepJobs makes the Service write its jobs to store, and take from it
// the jobs of earlier tmcp processes. Call it before the first run.
func (s *Service) KeepJobs(store *jobstate.Store) {
	s.keep = &keeper{store: store}
	// A path a shell could not take inside single quotes as it is gets
	// no file: the option serves.
	dir := jobstate.EndsDir(store.Path())
	if s.tc.Remote() || strings.ContainsFunc(dir, func(r rune) bool { return r == '\'' || r == '\\' || r < ' ' || r == 0x7f }) {
		return
	}
	if err := os.MkdirAll(dir, 0o700); err == nil {
		s.keep.endsDir = dir
	}
}

// record is what the file keeps of a job.
func (j *job) record() jobstate.Record {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := jobstate.Record{ID: j.id, Pane: j.paneID, PanePID: j.panePID, ShellGroup: j.shellGroup, Command: j.command, Started: j.started, Alone: j.alone, Nonce: j.nonce, NeverRan: j.neverRan}
	if j.finished {
		r.Ended, r.Status, r.Reason, r.PaneDied = j.finishedAt, j.status, j.reason, j.died
	}
	return r
}

// kept writes a job's record as it starts: a later tmcp then knows it
// even if this one is killed at once.
func (s *Service) kept(j *job) {
	if s.keep != nil {
		_ = s.keep.store.Put(j.record())
	}
}

// keptEnd writes a job's record once it ended, in the background, unless
// the job only ended for tmcp because tmcp shuts down.
func (s *Service) keptEnd(j *job) {
	if s.keep == nil {
		return
	}
	r := j.record()
	s.keep.mu.Lock()
	defer s.keep.mu.Unlock()
	if s.keep.closing {
		j.markRecorded() // nothing more is written
		return
	}
	s.keep.writing.Go(func() {
		_ = s.keep.store.Put(r)
		j.markRecorded()
	})
}

// markRecorded notes that the job's end is on file, or never will be.
func (j *job) markRecorded() { j.recordOnce.Do(func() { close(j.recorded) }) }

// recordWait bounds how long a call that reports a job's end waits for
// the end to be written.
const recordWait = time.Second

// awaitRecorded returns once a finished job's end is written for later
// tmcp processes, or after recordWait: a caller told of the end, who then
// restarts tmcp at once, finds the job ended.
func (s *Service) awaitRecorded(j *job, r JobResult) {
	if !r.Finished {
		return
	}
	j.awaitSettled()
	if s.keep == nil {
		return
	}
	select {
	case <-j.recorded:
	case <-time.After(recordWait):
	}
}

// close stops the writing of ends and waits for those under way.
func (k *keeper) close() {
	k.mu.Lock()
	k.closing = true
	k.mu.Unlock()
	k.writing.Wait()
}

// ended frees a job's pane and writes its end.
func (s *Service) ended(j *job) {
	s.jobs.release(j)
	s.keptEnd(j)
}

// settleEarlier finds out what became of the jobs that earlier tmcp
// processes left running in a pane, before a new run there overwrites
// the status the last one left.
func (s *Service) settleEarlier(ctx context.Context, paneID string) {
	if s.keep == nil {
		return
	}
	for _, rec := range s.keep.store.Unended(paneID) {
		if s.jobs.get(rec.ID) == nil {
			_, _ = s.adopt(ctx, rec)
		}
	}
}

// adopted returns the job of an earlier tmcp with id, as tmux shows it
// now, or nil if no record has it.
func (s *Service) adopted(ctx context.Context, id string) (*job, error) {
	if s.keep == nil {
		return nil, nil
	}
	rec, ok := s.keep.store.Get(id)
	if !ok {
		return nil, nil
	}
	if rec.Ended.IsZero() {
		// A tmcp killed as it typed the job's lines: what it left is
		// mended first, and the job's record with it.
		s.mendTyping(ctx, rec.Pane)
		rec, _ = s.keep.store.Get(id)
	}
	return s.adopt(ctx, rec)
}

// adopt makes a job of a record and finds out what became of it. A job
// that ended is kept among the finished ones; one that runs is followed.
func (s *Service) adopt(ctx context.Context, rec jobstate.Record) (*job, error) {
	j := newJob(rec.ID, rec.Pane, rec.Command, rec.Started)
	// An earlier tmcp typed its lines: whatever was not typed never will be.
	j.panePID, j.shellGroup, j.adopted, j.typedAll, j.alone, j.nonce = rec.PanePID, rec.ShellGroup, true, true, rec.Alone, rec.Nonce
	j.typingFrom = rec.Started // a key tmcp sends now reaches the command
	j.stopTyping()
	if !rec.Ended.IsZero() {
		// Its tmcp saw it end, and wrote so: only the output is to be
		// found, if it ran.
		j.neverRan, j.refilled = rec.NeverRan, rec.NeverRan
		j.endAt(rec.Ended, rec.PaneDied, rec.Status, rec.Reason)
		j.markRecorded()
		s.refill(ctx, j)
		return s.jobs.keep(j.unfollowed()), nil
	}
	gone := func(why string) (*job, error) {
		j.lost = true
		j.end(true, nil, why+"; its status and output are not known")
		s.keptEnd(j)
		return s.jobs.keep(j.unfollowed()), nil
	}
	pid, status, ok, err := s.paneEnd(ctx, j)
	switch {
	case tmux.Refused(err):
		return gone("the pane is gone: closed, or its tmux server was restarted, while no tmcp followed the job")
	case err != nil:
		return nil, fmt.Errorf("looking up job %s of an earlier tmcp in pane %s: %w", rec.ID, rec.Pane, err)
	}
	if rec.PanePID != 0 && pid != rec.PanePID {
		return gone(fmt.Sprintf("pane %s runs another process (pid %d, not %d): it was respawned, or its tmux server restarted, while no tmcp followed the job", rec.Pane, pid, rec.PanePID))
	}
	if !ok {
		if front, known := s.shellInFront(ctx, rec.Pane, rec.ShellGroup); known && front {
			// Ended: the helper's write of the status may still be on its way.
			select {
			case <-time.After(endSettle):
			case <-ctx.Done():
			}
			status, ok = s.recordedEnd(ctx, j)
			if !ok {
				reason := "it ended while no tmcp followed it, and its shell could not leave its status (no tmux reachable from it)"
				if j.alone {
					reason = aloneEndedUnseen
				}
				j.end(false, nil, reason)
				s.refill(ctx, j)
				s.keptEnd(j)
				return s.jobs.keep(j.unfollowed()), nil
			}
		}
	}
	if ok {
		j.end(false, &status, "")
		s.refill(ctx, j)
		s.keptEnd(j)
		return s.jobs.keep(j.unfollowed()), nil
	}
	return s.followAgain(ctx, j)
}

// followAgain follows a job of an earlier tmcp that still runs: its
// output so far from the pane's history, the rest from the pane's stream.
func (s *Service) followAgain(ctx context.Context, j *job) (*job, error) {
	if holder := s.jobs.claim(j); holder != nil {
		return holder, nil
	}
	stream, release, err := s.hub.Acquire(ctx, j.paneID, runLinger)
	if err != nil {
		s.jobs.abandon(j)
		return nil, err
	}
	exact := stream.Exact()
	f := newFeed()
	from, untap := stream.Tap(f.write)
	s.refill(ctx, j)
	j.onEnd = s.ended
	go s.follow(j, stream, f, from, func() { untap(); exact(); release() })
	return j, nil
}

// recordedEnd returns the status the job's shell left in the pane's end
// file or endOption, if either names the job.
func (s *Service) recordedEnd(ctx context.Context, j *job) (status int, ok bool) {
	_, status, ok, _ = s.paneEnd(ctx, j)
	return status, ok
}

// paneEnd reads the process of a job's pane and the end its shell left:
// in the pane's endOption (a shell helped by a tmcp that kept no file), or
// else in its end file; ok says the end names the job, with its status.
func (s *Service) paneEnd(ctx context.Context, j *job) (pid, status int, ok bool, err error) {
	_, tag := j.mark()
	out, err := s.tc.Expand(ctx, j.paneID, "#{pane_pid} #{"+endOption+"}")
	if err != nil || len(out) == 0 {
		return 0, 0, false, err
	}
	pidText, option, _ := strings.Cut(out[0], " ")
	pid, _ = strconv.Atoi(pidText)
	status, ok = parseEnd(option, tag)
	if file := s.endFile(j.paneID); file != "" && !ok {
		if b, err := os.ReadFile(file); err == nil {
			status, ok = parseEnd(string(b), tag)
		}
	}
	return pid, status, ok, nil
}

// parseEnd reads "TAG STATUS", the end a shell left in its pane's file or
// option; ok says it names job tag.
func parseEnd(end, tag string) (status int, ok bool) {
	f := strings.Fields(end)
	if len(f) != 2 || f[0] != tag {
		return 0, false
	}
	status, err := strconv.Atoi(f[1])
	return status, err == nil
}

// refill takes an adopted job's output from the pane's history, where
// the row of its typed line still is; otherwise, or if the pane is gone,
// the output is marked lost. Once the job has ended, its output is taken
// for good.
func (s *Service) refill(ctx context.Context, j *job) {
	j.mu.Lock()
	skip, running := !j.adopted || j.refilled, !j.finished
	j.mu.Unlock()
	if skip {
		return
	}
	var rows, lines []string
	var err error
	found, settled := false, true
	for try := 0; ; try++ {
		rows, err = s.tc.CapturePane(ctx, j.paneID, tmux.CaptureOptions{History: true})
		lines, found, settled = j.outputIn(pane.TrimBlank(rows), running)
		if err != nil || settled || try == promptTries {
			break
		}
		// Ended just now, typed ahead: the prompt glued to its output is
		// told from it once the shell draws its next one.
		select {
		case <-time.After(endSettle / promptTries):
		case <-ctx.Done():
		}
	}
	gone := tmux.Refused(err) // the pane, and its history, are gone
	j.mu.Lock()
	defer j.mu.Unlock()
	j.refilled = !running && err == nil && settled || gone
	if err != nil || !found {
		j.lost = j.lost || err == nil || gone
		return
	}
	j.tail = pane.NewTailBuffer(jobTailLines, jobTailBytes)
	for _, l := range lines {
		j.tail.AddPiece(l, false)
	}
}

// outputIn finds the job's output in a pane's rows, by the line that ran
// it: outputInHistory, or aloneOutputInHistory for a command typed alone
// (always settled).
func (j *job) outputIn(rows []string, running bool) (lines []string, found, settled bool) {
	if j.alone {
		lines, found = aloneOutputInHistory(rows, j.command, running)
		return lines, found, true
	}
	_, tag := j.mark()
	return outputInHistory(rows, tag, running)
}

// historyNote says where an adopted job's output came from; j.mu is held.
func (j *job) historyNote() string {
	switch {
	case !j.adopted || j.neverRan:
		return ""
	case j.lost:
		return "tmcp restarted since it ran, and the pane's history no longer holds the line that ran it: its output is lost"
	}
	return "tmcp restarted since it ran: its output is as the pane's history holds it"
}

// typedRun finds the line tmcp types to run a command, any job's, in a
// row: its opening, and the text before it, which is the shell's prompt
// unless the line was typed ahead of the prompt. zsh's opens with
// nocorrect; fish's shows the space typed after it.
var typedRun = regexp.MustCompile(`^(.*?) ?(?:\((?:nocorrect )?__tmcp [0-9a-f]{5}&&|(?:nocorrect )?__tmcp_r [0-9a-f]{5}|__tmcp [0-9a-f]{5} *$)`)

// outputInHistory finds a job's output in a pane's rows: the rows after
// the last one that holds the typed line of job tag (and, in fish, the
// command's own row after it), up to the shell's next prompt: a row that
// is only the prompt, the last row, or a row holding tmcp's next run. The
// prompt is the text before the typed line on its row or, where the line
// was typed ahead of the prompt (dash draws it after a line typed early),
// the text before tmcp's typed lines on other rows, or else the last row.
// A prompt glued to the first row is taken off. A job that still runs, a
// prompt not drawn yet, or one not known has all the rows to the last or
// to tmcp's next run. found is false when no row holds the typed line;
// settled is false when the job ended typed ahead of a prompt not known,
// whose next one the shell has yet to draw: the first row may begin with
// the prompt.
func outputInHistory(rows []string, tag string, running bool) (lines []string, found, settled bool) {
	at, col := -1, -1
	for i := len(rows) - 1; i >= 0 && at < 0; i-- {
		for _, opening := range []string{"(__tmcp " + tag + "&&", "(nocorrect __tmcp " + tag + "&&", "nocorrect __tmcp_r " + tag, "__tmcp_r " + tag, "__tmcp " + tag} {
			if k := strings.Index(rows[i], opening); k >= 0 && (col < 0 || k < col) {
				at, col = i, k // the first on the row: the line's opening
			}
		}
	}
	if at < 0 {
		return nil, false, true
	}
	prompt := rows[at][:col]
	// A leading space kept the typed line out of history: not the prompt's.
	if strings.HasSuffix(prompt, "  ") {
		prompt = prompt[:len(prompt)-1]
	}
	// Typed ahead of its prompt, the line has the prompt drawn after it,
	// at the front of the next row.
	typedAhead := strings.TrimSpace(prompt) == ""
	if typedAhead {
		if prompt = promptOfRuns(rows); prompt == "" {
			prompt = promptGluedAfterRuns(rows)
		}
	}
	// An ended job's shell is back at its prompt, on the last row; unless
	// that row is the output's first, its prompt glued on, the next one
	// not drawn yet.
	if last := rows[len(rows)-1]; prompt == "" && !running && at < len(rows)-1 && !(typedAhead && at == len(rows)-2) &&
		strings.TrimSpace(last) != "" && !typedRun.MatchString(last) {
		prompt = last
	}
	start := at + 1
	if rest := strings.TrimSpace(rows[at][col:]); !strings.Contains(rest, "&&") {
		start++ // fish: the name of the job on its row, the command on the next
	}
	end := len(rows)
	for i := start; i < end; i++ {
		if typedRun.MatchString(rows[i]) {
			end = i // tmcp's next run, typed after its prompt or ahead of it
		}
	}
	for i := start; i < end && !running && prompt != ""; i++ {
		if !strings.HasPrefix(rows[i], prompt) {
			continue
		}
		rest := rows[i][len(prompt):]
		if typedAhead && i == start && strings.TrimSpace(rest) != "" {
			continue // the prompt drawn after the line, glued to the output
		}
		if i == len(rows)-1 || strings.TrimSpace(rest) == "" {
			end = i // the prompt the shell came back to
		}
	}
	settled = running || !typedAhead || prompt != ""
	if start >= end {
		return []string{}, true, settled
	}
	lines = append([]string(nil), rows[start:end]...)
	if prompt != "" && (!running || typedAhead) {
		// A prompt drawn after a line typed ahead of it is glued to the
		// front of the output's first row, as on the screen.
		lines[0] = strings.TrimPrefix(lines[0], prompt)
	}
	return lines, true, settled
}

// aloneOutputInHistory is outputInHistory for a command typed alone,
// which was typed at a prompt drawn: the rows after the last one that ends
// with the command after some text, the prompt, up to the shell's next
// prompt (a row that is the prompt alone, or the last row that begins
// with it), or to the last row while the job runs.
func aloneOutputInHistory(rows []string, command string, running bool) (lines []string, found bool) {
	at := -1
	var prompt string
	for i := len(rows) - 1; i >= 0 && at < 0; i-- {
		if p, ok := strings.CutSuffix(strings.TrimRight(rows[i], " "), command); ok && strings.TrimSpace(p) != "" {
			at, prompt = i, p
		}
	}
	if at < 0 {
		return nil, false
	}
	prompt = strings.TrimRight(prompt, " ")
	end := len(rows)
	for i := at + 1; i < end && !running; i++ {
		if row := strings.TrimRight(rows[i], " "); strings.HasPrefix(row, prompt) && (i == len(rows)-1 || row == prompt) {
			end = i
		}
	}
	return append([]string{}, rows[at+1:end]...), true
}

// promptOfRuns returns the text most often found before tmcp's typed lines
// in a pane's rows, taken for the shell's prompt, or "" if there is none.
func promptOfRuns(rows []string) string {
	seen := map[string]int{}
	best := ""
	for _, row := range rows {
		m := typedRun.FindStringSubmatch(row)
		if m == nil || strings.TrimSpace(m[1]) == "" {
			continue
		}
		p := strings.TrimRight(m[1], " ") + " "
		if seen[p]++; seen[p] > seen[best] {
			best = p
		}
	}
	return best
}

// promptGluedAfterRuns returns the prompt a shell drew after lines tmcp
// typed ahead of it, found at the front of the rows that follow two or
// more such lines: what those rows begin with in common, up to its last
// space (the rest is output that happens to begin alike). "" if there is
// no such prompt.
func promptGluedAfterRuns(rows []string) string {
	common, n := "", 0
	for i := 0; i+1 < len(rows); i++ {
		m := typedRun.FindStringSubmatch(rows[i])
		if m == nil || strings.TrimSpace(m[1]) != "" || typedRun.MatchString(rows[i+1]) {
			continue
		}
		if n++; n == 1 {
			common = rows[i+1]
			continue
		}
		k := 0
		for k < len(common) && k < len(rows[i+1]) && common[k] == rows[i+1][k] {
			k++
		}
		common = common[:k]
	}
	if n < 2 {
		return ""
	}
	return common[:strings.LastIndexByte(common, ' ')+1]
}

// joinReasons joins the reasons that are not empty.
func joinReasons(reasons ...string) string {
	var kept []string
	for _, r := range reasons {
		if r != "" {
			kept = append(kept, r)
		}
	}
	return strings.Join(kept, "; ")
}
