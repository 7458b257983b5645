package pane

import "time"

// firstOutput is what a pane nobody watched wrote first, the output that
// got it muted, and when it reached tmcp.
type firstOutput struct {
	at   time.Time
	data []byte
}

// maxFirstOutput bounds the first output kept of each unwatched pane.
const maxFirstOutput = 64 << 10

// firstOutputKept bounds how long a first output nobody took is kept: a
// wait takes it within moments of its call, and output from before the
// call is no use to it. Without a bound, panes that came and went would
// each leave theirs behind.
const firstOutputKept = time.Minute

// firstOutputSweep is how often at most the first outputs nobody took are
// swept for those past firstOutputKept: a pane is re-armed, and its first
// output noted again, up to four times a second, and a sweep looks at
// every pane's.
const firstOutputSweep = 10 * time.Second

// noteFirstOutput keeps an unwatched pane's first output since it was
// last re-armed, in place of the one before.
func (h *Hub) noteFirstOutput(paneID string, data []byte, at time.Time) {
	if len(data) > maxFirstOutput {
		data = data[:maxFirstOutput]
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.panes[paneID] == nil {
		h.first[paneID] = firstOutput{at: at, data: data}
	}
	if at.Sub(h.firstSwept) < firstOutputSweep {
		return
	}
	h.firstSwept = at
	for id, f := range h.first {
		if at.Sub(f.at) > firstOutputKept {
			delete(h.first, id)
		}
	}
}

// takeFirstOutput returns, once, what a pane nobody watched wrote first,
// for the stream that now begins for it (Stream.Seed). A pane in a session
// whose output tmcp carries (it streams another pane there) is muted at
// its first output, so nothing it wrote after is known.
func (h *Hub) takeFirstOutput(paneID string) (firstOutput, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, ok := h.first[paneID]
	delete(h.first, paneID)
	return f, ok
}
