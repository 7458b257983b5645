package pane

// DefaultRingSize is the capacity of a ring when none is given: enough for
// several screens of a chatty build, small enough to keep one per pane.
const DefaultRingSize = 1 << 20

// A Ring holds the last bytes written to it, addressed by absolute offsets:
// the first byte ever written is at offset 0 and offsets never repeat, so
// a reader can tell exactly how much it missed once old bytes are dropped.
//
// Memory is taken as bytes arrive, up to the capacity, so an idle ring
// costs nothing. A Ring is not safe for concurrent use; [Stream] locks it.
type Ring struct {
	buf  []byte // byte at offset o is buf[o%size]
	size int
	end  int64
}

// NewRing returns an empty ring holding at most capacity bytes, or
// [DefaultRingSize] if capacity is not positive.
func NewRing(capacity int) *Ring {
	if capacity <= 0 {
		capacity = DefaultRingSize
	}
	return &Ring{size: capacity}
}

// Write appends p, dropping the oldest bytes beyond the capacity.
func (r *Ring) Write(p []byte) {
	off := r.end
	r.end += int64(len(p))
	if r.end <= int64(r.size) {
		// Still filling: offsets equal indexes, so this is an append.
		if need := int(r.end); need > cap(r.buf) {
			grown := make([]byte, len(r.buf), min(max(need, 2*cap(r.buf)), r.size))
			copy(grown, r.buf)
			r.buf = grown
		}
		r.buf = append(r.buf, p...)
		return
	}
	if len(p) > r.size {
		off += int64(len(p) - r.size)
		p = p[len(p)-r.size:]
	}
	if len(r.buf) < r.size {
		r.buf = append(r.buf, make([]byte, r.size-len(r.buf))...)
	}
	i := int(off % int64(r.size))
	n := copy(r.buf[i:], p)
	copy(r.buf, p[n:])
}

// Start returns the offset of the oldest byte still held.
func (r *Ring) Start() int64 { return max(0, r.end-int64(r.size)) }

// End returns the number of bytes ever written, which is the offset the
// next byte will have.
func (r *Ring) End() int64 { return r.end }

// ReadFrom returns a copy of at most limit bytes starting at offset off (all
// held bytes from off if limit is not positive), and the offset that follows
// them. If off is older than [Ring.Start], reading begins at Start and
// missed counts the bytes between off and Start that were dropped. A
// negative off reads from 0; an off past [Ring.End] reads nothing and
// returns End.
func (r *Ring) ReadFrom(off int64, limit int) (data []byte, next int64, missed int64) {
	off = min(off, r.end)
	if off < 0 {
		off = 0
	}
	if start := r.Start(); off < start {
		missed = start - off
		off = start
	}
	n := r.end - off
	if limit > 0 && n > int64(limit) {
		n = int64(limit)
	}
	if n == 0 {
		return nil, off, missed
	}
	data = make([]byte, n)
	i := int(off % int64(r.size))
	c := copy(data, r.buf[i:])
	copy(data[c:], r.buf)
	return data, off + n, missed
}
