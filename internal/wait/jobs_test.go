package wait

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/pane"
)

// TestAJobsResultKeepsItsLinesWhileTheJobWritesOn reports a running job
// whose kept output is full, then lets it write on: the lines already
// reported must not change under the reader. (Run with -race, reading
// them while lines are added is caught as well.)
func TestAJobsResultKeepsItsLinesWhileTheJobWritesOn(t *testing.T) {
	j := &job{id: "j", paneID: "%0", started: time.Now(), tail: pane.NewTailBuffer(jobTailLines, jobTailBytes), done: make(chan struct{})}
	for i := range jobTailLines {
		j.add(strconv.Itoa(i))
	}
	r := j.result(true, 0, 0)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range jobTailLines {
			j.add("more " + strconv.Itoa(i))
		}
	}()
	blank := 0
	for _, l := range r.Lines {
		if l == "" {
			blank++
		}
	}
	wg.Wait()
	for i, l := range r.Lines {
		if l != strconv.Itoa(i) {
			t.Fatalf("line %d of the reported output became %q after the job wrote on, want %q", i, l, strconv.Itoa(i))
		}
	}
	if blank > 0 {
		t.Fatalf("%d reported lines were blank while the job wrote on", blank)
	}
}

// TestAPaneIsFreeOnceItsJobIsHeardToEnd: a caller told that a job ended
// runs its next command at once, so the pane must be free by then, not
// a moment later when the job's reader winds down.
func TestAPaneIsFreeOnceItsJobIsHeardToEnd(t *testing.T) {
	table := newJobTable()
	for i := range 200 {
		j := &job{id: strconv.Itoa(i), paneID: "%0", started: time.Now(), tail: pane.NewTailBuffer(jobTailLines, jobTailBytes),
			done: make(chan struct{}), onEnd: table.release}
		if holder := table.claim(j); holder != nil {
			t.Fatalf("job %d: pane still held by job %s, which was heard to end", i, holder.id)
		}
		status := 0
		go j.end(false, &status, "")
		<-j.done
	}
	if got := table.get("199"); got == nil || !got.result(false, 0, 0).Finished {
		t.Fatal("the last job is not kept as finished for get_job")
	}
}
