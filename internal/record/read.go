package record

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// Header is the header line of an asciicast v2 file.
type Header = header

// Event is one event line of an asciicast v2 file.
type Event struct {
	Time   float64 // seconds from the header's timestamp
	Code   string  // "o" output, "r" resize, "m" marker
	Data   string
	Offset int64 // of its line in the file
}

// Read reads an asciicast v2 file and checks its form: a header of version
// 2 with a size and a time first, then events of [time, code, data] whose
// times never go back, every line JSON and ended by a newline.
func Read(r io.Reader) (Header, []Event, error) {
	br := bufio.NewReader(r)
	var h Header
	var events []Event
	var off int64
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			if n == 1 {
				return h, nil, fmt.Errorf("no header line")
			}
			return h, events, nil
		}
		if err != nil {
			return h, events, fmt.Errorf("line %d %.80q: not ended by a newline (%v)", n, line, err)
		}
		if n == 1 {
			if json.Unmarshal(line, &h) != nil || h.Version != 2 || h.Width <= 0 || h.Height <= 0 || h.Timestamp <= 0 {
				return h, nil, fmt.Errorf("line 1 %.80q is not an asciicast v2 header", line)
			}
		} else {
			var raw []any
			if err := json.Unmarshal(line, &raw); err != nil || len(raw) != 3 {
				return h, events, fmt.Errorf("line %d %.80q is not an event: %v", n, line, err)
			}
			e := Event{Offset: off}
			var ok [3]bool
			e.Time, ok[0] = raw[0].(float64)
			e.Code, ok[1] = raw[1].(string)
			e.Data, ok[2] = raw[2].(string)
			if ok != [3]bool{true, true, true} {
				return h, events, fmt.Errorf("line %d %.80q is not [time, code, data]", n, line)
			}
			if k := len(events); k > 0 && e.Time < events[k-1].Time {
				return h, events, fmt.Errorf("line %d goes back in time, from %v to %v", n, events[k-1].Time, e.Time)
			}
			events = append(events, e)
		}
		off += int64(len(line))
	}
}
