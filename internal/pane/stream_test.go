package pane

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// waitLimit bounds how long a test waits for a wake-up that must come.
const waitLimit = 10 * time.Second

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestStreamChangeWakesWaitersTakenBeforeIt(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Stream)
	}{
		{"write", func(s *Stream) { s.Write([]byte("x")) }},
		{"lost", func(s *Stream) { s.Lost(3) }},
		{"close", func(s *Stream) { s.Close("pane died") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStream("%1", 1, 0)
			first, second := s.Changed(), s.Changed()
			if isClosed(first) {
				t.Fatal("Changed is closed before any change")
			}
			tt.change(s)
			if !isClosed(first) || !isClosed(second) {
				t.Errorf("after %s: channels closed = %v, %v; want both closed", tt.name, isClosed(first), isClosed(second))
			}
		})
	}
}

func TestStreamDoneClosesOnlyWhenTheStreamEnds(t *testing.T) {
	s := NewStream("%1", 1, 0)
	s.Write([]byte("x"))
	s.Lost(1)
	if isClosed(s.Done()) {
		t.Fatal("Done closed by a write or a loss; want it open until Close")
	}
	s.Disconnect("connection lost")
	if !isClosed(s.Done()) {
		t.Error("Done still open after Disconnect")
	}
}

func TestStreamNonChangesDoNotWake(t *testing.T) {
	s := NewStream("%1", 1, 0)
	ch := s.Changed()
	s.Write(nil)
	s.Lost(0)
	s.Lost(-5)
	if isClosed(ch) {
		t.Error("an empty write or a non-positive loss woke the waiters")
	}
}

func TestStreamWakesEachGenerationOfWaitersOnce(t *testing.T) {
	s := NewStream("%1", 1, 0)
	first := s.Changed()
	s.Write([]byte("a"))
	second := s.Changed()
	if second == first || isClosed(second) {
		t.Fatal("Changed after a write returned the spent channel")
	}
	s.Write([]byte("b"))
	if !isClosed(second) {
		t.Error("the second write did not wake the second waiter")
	}
}

func TestStreamCloseEndsTheStream(t *testing.T) {
	s := NewStream("%1", 1, 0)
	s.Write([]byte("before"))
	s.Close("pane died")
	s.Close("detached")
	s.Write([]byte("after"))
	s.Lost(4)

	if closed, reason := s.Closed(); !closed || reason != "pane died" {
		t.Errorf("Closed() = %v, %q; want true, %q", closed, reason, "pane died")
	}
	if !isClosed(s.Changed()) {
		t.Error("Changed after Close is not closed: a waiter would block forever")
	}
	if !isClosed(s.Done()) {
		t.Error("Done after Close is not closed")
	}
	if data, _, _ := s.ReadFrom(0, 0); string(data) != "before" {
		t.Errorf("ReadFrom(0) after Close = %q; want %q", data, "before")
	}
	if s.LostBytes() != 0 {
		t.Errorf("LostBytes after Close = %d; want 0", s.LostBytes())
	}
}

func TestStreamAccessors(t *testing.T) {
	s := NewStream("%7", 42, 4)
	s.Write([]byte("abcdef"))
	s.Lost(10)
	s.Lost(5)
	if s.PaneID() != "%7" || s.Generation() != 42 {
		t.Errorf("PaneID, Generation = %q, %d; want %%7, 42", s.PaneID(), s.Generation())
	}
	if s.Start() != 2 || s.End() != 6 {
		t.Errorf("Start, End = %d, %d; want 2, 6", s.Start(), s.End())
	}
	if s.LostBytes() != 15 {
		t.Errorf("LostBytes = %d; want 15", s.LostBytes())
	}
	if closed, _ := s.Closed(); closed {
		t.Error("a new stream reports Closed")
	}
	if c := s.Cursor(); c != (Cursor{PaneID: "%7", Generation: 42, Offset: 6}) {
		t.Errorf("Cursor() = %+v; want pane %%7, generation 42, offset 6", c)
	}
	if data, next, missed := s.ReadFrom(0, 3); string(data) != "cde" || next != 5 || missed != 2 {
		t.Errorf("ReadFrom(0, 3) = %q, %d, %d; want %q, 5, 2", data, next, missed, "cde")
	}
}

func TestStreamWriteWithoutWaitersDoesNotAllocate(t *testing.T) {
	s := NewStream("%1", 1, 64)
	p := bytes.Repeat([]byte("x"), 64)
	s.Write(p) // fill the ring
	if n := testing.AllocsPerRun(100, func() { s.Write(p[:10]) }); n != 0 {
		t.Errorf("Write to a full ring with nobody waiting allocated %v times; want 0", n)
	}
}

// TestStreamConcurrentReadersSeeEveryByte has several writers and readers
// at once; each reader follows the stream with Changed and must read every
// byte, so a lost wake-up shows as a reader stuck until the time limit.
func TestStreamConcurrentReadersSeeEveryByte(t *testing.T) {
	const (
		writers  = 4
		writes   = 2000
		readers  = 8
		chunkLen = 3
	)
	total := int64(writers * writes * chunkLen)
	s := NewStream("%1", 1, int(total)) // large enough that nothing is dropped

	var wg sync.WaitGroup
	counts := make([][writers]int, readers)
	errs := make(chan string, readers)
	for r := range readers {
		wg.Go(func() {
			var off int64
			deadline := time.After(waitLimit)
			for off < total {
				changed := s.Changed()
				data, next, missed := s.ReadFrom(off, 100)
				if missed != 0 {
					errs <- "a reader missed bytes in a ring that holds them all"
					return
				}
				for _, b := range data {
					counts[r][b-'a']++
				}
				off = next
				if len(data) > 0 {
					continue
				}
				select {
				case <-changed:
				case <-deadline:
					errs <- "a reader was not woken: it stopped at an offset short of the end"
					return
				}
			}
		})
	}
	for w := range writers {
		wg.Go(func() {
			chunk := bytes.Repeat([]byte{byte('a' + w)}, chunkLen)
			for range writes {
				s.Write(chunk)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	for r := range readers {
		for w := range writers {
			if counts[r][w] != writes*chunkLen {
				t.Errorf("reader %d saw %d bytes of writer %d; want %d", r, counts[r][w], w, writes*chunkLen)
			}
		}
	}
}

// TestStreamCloseWakesEveryBlockedWaiter checks that waiters blocked on an
// idle stream all return when it ends.
func TestStreamCloseWakesEveryBlockedWaiter(t *testing.T) {
	s := NewStream("%1", 1, 0)
	var wg sync.WaitGroup
	woken := make(chan struct{}, 16)
	for range cap(woken) {
		wg.Go(func() {
			for {
				changed := s.Changed()
				if closed, _ := s.Closed(); closed {
					woken <- struct{}{}
					return
				}
				select {
				case <-changed:
				case <-time.After(waitLimit):
					return
				}
			}
		})
	}
	s.Close("pane died")
	wg.Wait()
	if len(woken) != cap(woken) {
		t.Errorf("%d of %d waiters saw the stream end", len(woken), cap(woken))
	}
}

func TestStreamEndAtTellsWhereTheStreamEndedThen(t *testing.T) {
	s := NewStream("%1", 1, 0)
	before := time.Now()
	// The sleeps are the point: each write in a time bucket of its own.
	s.Write([]byte("first"))
	time.Sleep(2 * writeBucket)
	between := time.Now()
	s.Write([]byte("second"))
	time.Sleep(2 * writeBucket)
	s.Write([]byte("x")) // in a bucket of its own
	s.Write([]byte("y")) // almost surely in the same bucket as x
	after := time.Now()

	for _, tc := range []struct {
		name string
		at   time.Time
		want int64
	}{
		{"before any write", before, 0},
		{"between two writes", between, int64(len("first"))},
		{"after the last write", after, int64(len("firstsecondxy"))},
		{"long before", before.Add(-time.Hour), 0},
	} {
		if got := s.EndAt(tc.at); got != tc.want {
			t.Errorf("%s: EndAt = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestStreamTimesAWriteFromWhenTmuxHadIt: bytes tmux held before it sent
// them are timed from when it had them, and never before bytes that came
// earlier.
func TestStreamTimesAWriteFromWhenTmuxHadIt(t *testing.T) {
	s := NewStream("%1", 1, 0)
	s.Write([]byte("first"))
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	time.Sleep(50 * time.Millisecond)
	s.WriteAged([]byte("second"), 30*time.Millisecond) // tmux had it 20 ms after mid
	if got, want := s.EndAt(mid), int64(len("first")); got != want {
		t.Errorf("EndAt before tmux had the second write = %d, want %d", got, want)
	}
	mid2 := time.Now()
	time.Sleep(50 * time.Millisecond)
	// tmux had it 50 ms before mid2: before it, but not before the second.
	s.WriteAged([]byte("third"), 100*time.Millisecond)
	if got, want := s.EndAt(mid2), int64(len("firstsecondthird")); got != want {
		t.Errorf("EndAt after tmux had the third write, before it was read = %d, want %d", got, want)
	}
	if got, want := s.EndAt(mid), int64(len("first")); got != want {
		t.Errorf("EndAt before the second write, after the third was timed = %d, want %d: never before a write that came earlier", got, want)
	}
}

func TestStreamEndAtForgetsOldWrites(t *testing.T) {
	s := NewStream("%1", 1, 0)
	start := time.Now()
	for range recentWrites + 4 {
		s.Write([]byte("ab"))
		time.Sleep(writeBucket + writeBucket/2) // the point: one write per bucket
	}
	// The first four writes are forgotten: the answer for a time before
	// them is the oldest offset remembered, never one past a write after t.
	if got := s.EndAt(start); got != 8 {
		t.Errorf("EndAt before every write, after four were forgotten = %d, want 8", got)
	}
}

func TestLostAfterSaysWhetherALossCameAfterAnOffset(t *testing.T) {
	s := NewStream("%1", 1, 16)
	if s.LostAfter(0) {
		t.Fatalf("a stream without loss reports a loss after 0")
	}
	s.Write([]byte("before"))
	s.Lost(1)
	s.Write([]byte("after"))
	for _, tt := range []struct {
		off  int64
		want bool
	}{{0, true}, {6, true}, {7, false}, {11, false}} {
		if got := s.LostAfter(tt.off); got != tt.want {
			t.Errorf("loss at offset 6: LostAfter(%d) = %v, want %v", tt.off, got, tt.want)
		}
	}
}

func TestBeforeIsWhatTheStreamHoldsJustBeforeAnOffset(t *testing.T) {
	long := bytes.Repeat([]byte("x"), MaxSequenceLen+100)
	tests := []struct {
		name   string
		ring   int
		writes []string
		off    int64
		want   string
	}{
		{"the start", 0, []string{"abc"}, 0, ""},
		{"inside", 0, []string{"ab\x1b]133;", "C;tok\a"}, 8, "ab\x1b]133;"},
		{"at the end", 0, []string{"abc", "def"}, 6, "abcdef"},
		{"a sequence's length at most", 0, []string{string(long) + "\x1b]7"}, int64(len(long) + 3), string(long[103:]) + "\x1b]7"},
		{"the ring lost some of it", 8, []string{"0123456789ab"}, 10, "456789"},
		{"the ring lost all of it", 8, []string{"0123456789ab"}, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStream("%1", 1, tt.ring)
			for _, w := range tt.writes {
				s.Write([]byte(w))
			}
			if got := s.Before(tt.off); string(got) != tt.want {
				t.Errorf("Before(%d) = %q, want %q", tt.off, got, tt.want)
			}
		})
	}
}

func TestAStreamBeginsWithItsSeedAndReadsNoMarksInIt(t *testing.T) {
	s := NewStream("%1", 1, 1<<10)
	s.SetShellNonce(testNonce)
	at := time.Now().Add(-time.Second)
	seed := "FIRST\r\n" + sm("133;C") + "SECOND\r\n"
	s.Seed([]byte(seed), at)
	if end, when := s.Seeded(); end != int64(len(seed)) || !when.Equal(at) {
		t.Fatalf("Seeded() = %d, %v; want %d, %v", end, when, len(seed), at)
	}
	if data, _, _ := s.ReadFrom(0, len(seed)); string(data) != seed {
		t.Errorf("the stream begins with %q, want the seed %q", data, seed)
	}
	if ps := s.Prompt(); ps.Marks || ps.Running {
		t.Errorf("prompt state %+v after a seed holding C: its marks may be stale, want none read", ps)
	}
	if off := s.EndAt(at.Add(-time.Millisecond)); off != 0 {
		t.Errorf("EndAt just before the seed's time = %d, want 0", off)
	}
	s.Write([]byte(sm("133;A") + "live\r\n"))
	if ps := s.Prompt(); !ps.Marks {
		t.Errorf("prompt state %+v: the marks written after the seed are read", ps)
	}
	s.Seed([]byte("again"), time.Now())
	if end, _ := s.Seeded(); end != int64(len(seed)) {
		t.Errorf("a second seed moved the seed's end to %d", end)
	}
}
