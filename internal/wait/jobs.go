package wait

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Job reports a job, its output within maxLines and maxBytes (0: all
// that is kept), first waiting up to timeout for it to finish.
func (s *Service) Job(ctx context.Context, id string, timeout Timeout, maxLines, maxBytes int, fn func(time.Duration)) (JobResult, error) {
	if timeout.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = bounded(ctx, timeout)
		defer cancel()
	}
	j := s.jobs.get(id)
	if j == nil {
		var err error
		if j, err = s.adopted(ctx, id); err != nil {
			return JobResult{}, err
		}
	}
	if j == nil {
		return JobResult{}, fmt.Errorf("no job %q: job ids come from run_command, and only the last %d finished jobs (%d MiB of output) are kept", id, maxFinishedJobs, maxFinishedBytes>>20)
	}
	if timeout.Duration <= 0 {
		s.refill(ctx, j)
		return j.result(false, maxLines, maxBytes), nil
	}
	wctx, cancelWait := waiting(ctx)
	defer cancelWait()
	r := s.await(wctx, j, maxLines, maxBytes, fn, begun(ctx, timeout))
	s.awaitRecorded(j, r)
	if r.Finished && j.isAdopted() {
		s.refill(ctx, j)
		r = j.result(false, maxLines, maxBytes)
	}
	return r, nil
}

// isAdopted reports whether an earlier tmcp started the job.
func (j *job) isAdopted() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.adopted
}

// jobTable holds the running job of each pane and the recent jobs.
type jobTable struct {
	mu       sync.Mutex
	byPane   map[string]*job
	byID     map[string]*job
	finished []*job // finished jobs, oldest first
	kept     int    // bytes of output the finished jobs hold
	// ended holds when each pane's last job ended, for a run that
	// follows at once (see Service.awaitPrompt).
	ended map[string]time.Time
}

func newJobTable() *jobTable {
	return &jobTable{byPane: map[string]*job{}, byID: map[string]*job{}, ended: map[string]time.Time{}}
}

// claim makes j the pane's job, or returns the job already holding it.
func (t *jobTable) claim(j *job) *job {
	t.mu.Lock()
	defer t.mu.Unlock()
	if holder := t.byPane[j.paneID]; holder != nil {
		return holder
	}
	t.byPane[j.paneID] = j
	t.byID[j.id] = j
	return nil
}

// abandon forgets a job that never started.
func (t *jobTable) abandon(j *job) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byPane, j.paneID)
	delete(t.byID, j.id)
}

// release frees a finished job's pane and keeps the job for get_job.
func (t *jobTable) release(j *job) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byPane[j.paneID] == j {
		delete(t.byPane, j.paneID)
	}
	now := time.Now()
	if len(t.ended) >= maxFinishedJobs {
		for pane, at := range t.ended {
			if now.Sub(at) > justEnded {
				delete(t.ended, pane)
			}
		}
	}
	t.ended[j.paneID] = now
	j.mu.Lock()
	j.tail.Seal()
	j.mu.Unlock()
	t.finished = append(t.finished, j)
	t.kept += j.keptBytes()
	for len(t.finished) > maxFinishedJobs || t.kept > maxFinishedBytes && len(t.finished) > 1 {
		old := t.finished[0]
		delete(t.byID, old.id)
		t.kept -= old.keptBytes()
		t.finished = t.finished[1:]
	}
}

// keep adds a job of an earlier tmcp that has ended to the finished ones,
// or returns the one already there with its id.
func (t *jobTable) keep(j *job) *job {
	t.mu.Lock()
	if held := t.byID[j.id]; held != nil {
		t.mu.Unlock()
		return held
	}
	t.byID[j.id] = j
	t.mu.Unlock()
	t.release(j)
	return j
}

// keptBytes is what a job's output costs to keep.
func (j *job) keptBytes() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.tail.KeptBytes()
}

// justEnded is how recently a pane's last job ended for its shell to be
// taken as still on its way back to its prompt.
const justEnded = time.Second

// endedJustNow reports whether a job in the pane ended within justEnded.
func (t *jobTable) endedJustNow(paneID string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.ended[paneID]
	return ok && time.Since(at) < justEnded
}

// running returns the job holding a pane, if any.
func (t *jobTable) running(paneID string) *job {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byPane[paneID]
}

func (t *jobTable) get(id string) *job {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

// closeAll marks every running job ended: tmcp stops following them.
func (t *jobTable) closeAll() {
	t.mu.Lock()
	jobs := make([]*job, 0, len(t.byPane))
	for _, j := range t.byPane {
		jobs = append(jobs, j)
	}
	t.mu.Unlock()
	for _, j := range jobs {
		j.end(false, nil, "tmcp shut down while the command ran; its status is unknown")
	}
}
