package wait

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// TestManyWaitsOnOnePaneAskTmuxNoMoreThanOne counts every command tmcp
// sends tmux (over control mode or as a process) while 1, then 100, waits
// are pending on one pane: whether a pane still lives is asked once per
// stream, not once per wait.
func TestManyWaitsOnOnePaneAskTmuxNoMoreThanOne(t *testing.T) {
	f := newFixture(t)
	// With the stream live before they arrive, waits ask tmux nothing
	// once they hold it: the window below sees only what they cost while
	// pending.
	_, release, err := f.hub.Acquire(context.Background(), "%0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	const window = 3 * time.Second
	sent := func() int64 { return f.tc.CommandsSent() + f.tc.ProcessesStarted() }
	counts := map[int]int64{}
	for _, n := range []int{1, 100} {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := f.s.WaitForText(ctx, withDefaults(TextRequest{Patterns: []string{"never printed"}, Timeout: Timeout{Duration: time.Minute}}))
				if err != nil || r.Outcome != OutcomeCancelled {
					t.Errorf("a wait ended with %q (%s), err %v; want it cancelled", r.Outcome, r.Reason, err)
				}
			}()
		}
		if !tmuxtest.WaitFor(30*time.Second, func() bool { return f.hub.Holders("%0") == n+1 }) {
			cancel()
			wg.Wait()
			t.Fatalf("%d waits never all held the stream of %%0 (%d holders)", n, f.hub.Holders("%0"))
		}
		before := sent()
		time.Sleep(window) // the measurement window, not a wait for a condition
		counts[n] = sent() - before
		cancel()
		wg.Wait()
		t.Logf("%3d pending waits on one pane: %d tmux commands in %v", n, counts[n], window)
	}
	if counts[1] == 0 {
		t.Fatalf("nothing asked tmux whether %%0 lives in %v: the pane's death would go unseen", window)
	}
	// The poll's phase against the window may add or drop one ask.
	if counts[100] > counts[1]+2 {
		t.Errorf("100 waits on one pane sent tmux %d commands in %v, 1 wait %d: want about the same", counts[100], window, counts[1])
	}
}
