package record

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/pane"
)

// floodChunk is what one %output of `seq` carries, about: numbered lines.
func floodChunk() []byte {
	var b strings.Builder
	for i := 1000000; b.Len() < 640; i++ {
		fmt.Fprintf(&b, "%d\r\n", i)
	}
	return []byte(b.String())
}

// BenchmarkStreamWrite is the cost to the stream's writer (tmcp's reader
// of tmux) of one %output, recorded or not.
func BenchmarkStreamWrite(b *testing.B) {
	chunk := floodChunk()
	for _, recorded := range []bool{false, true} {
		b.Run(fmt.Sprintf("recorded=%v", recorded), func(b *testing.B) {
			s := pane.NewStream("%1", 1, 0)
			if recorded {
				r := New(Options{Dir: b.TempDir()})
				if _, err := r.Start(s, testPane("%1"), nil); err != nil {
					b.Fatal(err)
				}
				defer r.Close()
			}
			b.SetBytes(int64(len(chunk)))
			for b.Loop() {
				s.Write(chunk)
			}
		})
	}
}
