package wait

import "sync"

// feed hands what a stream tap delivers to one consumer goroutine. The tap
// side never blocks: it appends and signals.
type feed struct {
	mu    sync.Mutex
	buf   []byte
	ready chan struct{} // holds one token while there is unread data
}

func newFeed() *feed { return &feed{ready: make(chan struct{}, 1)} }

// write is the tap function.
func (f *feed) write(p []byte) {
	f.mu.Lock()
	f.buf = append(f.buf, p...)
	f.mu.Unlock()
	select {
	case f.ready <- struct{}{}:
	default:
	}
}

// take returns everything delivered since the last take.
func (f *feed) take() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.buf
	f.buf = nil
	return b
}
