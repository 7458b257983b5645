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

// noteFirstOutput keeps an unwatched pane's first output.
func (h *Hub) noteFirstOutput(paneID string, data []byte, at time.Time) {
	if len(data) > maxFirstOutput {
		data = data[:maxFirstOutput]
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.panes[paneID] == nil {
		h.first[paneID] = firstOutput{at: at, data: data}
	}
}

// FirstOutputSince returns, once, what a pane nobody watched wrote first,
// if that reached tmcp at or after since. A pane in a session whose output
// tmcp carries (it streams another pane there) is muted at its first
// output, so nothing it wrote after is known: a wait that begins on it
// takes this, then the stream.
func (h *Hub) FirstOutputSince(paneID string, since time.Time) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, ok := h.first[paneID]
	delete(h.first, paneID)
	if !ok || f.at.Before(since) {
		return nil
	}
	return f.data
}
