// Command standin stands in for a terminal agent in the end-to-end tests
// of submit_prompt and wait_for_screen. It reproduces how the agents
// take keys (DESIGN.md §8), chosen by the name it runs under:
//
//   - claude: keys arriving within 100 ms of a bracketed paste are part
//     of it (an Enter then is a newline in the paste, left unsent); a
//     paste of several lines shows as "[Pasted text #N +M lines]"; while
//     a turn runs, "esc to interrupt" shows, and the prompt sign never
//     goes away.
//   - codex: three or more characters arriving under 8 ms apart are a
//     paste, and an Enter within 120 ms after one is a newline.
//   - bellapp: a full-screen program on the alternate screen that rings
//     the bell when a turn is done, and sets its title (an OSC ended by
//     BEL, which is no bell) while it works.
//
// It appends one JSON line to the file -record names for each prompt
// submitted ({"submitted": TEXT}), each turn done ({"done": N, "at":
// UNIX_NANO}) and each Escape key ({"escape": true}).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

var (
	record = flag.String("record", "", "file to append events to")
	spin   = flag.Duration("spin", 30*time.Millisecond, "how long a turn shows its spinner, before and after its still stretch")
	still  = flag.Duration("still", 0, "how long a turn stays busy without writing anything, between its spinner stretches")
)

// A turn is busy in three stretches: spinning, still, spinning again.
type turn struct {
	n       int
	started time.Time
	prompt  string
}

type agent struct {
	kind  string // claude, codex or bellapp
	rows  int
	out   *os.File
	rec   *os.File
	input []segment
	// transcript holds what was submitted and answered.
	transcript []string
	submitted  int
	busy       *turn
	frame      int

	// Paste state.
	inPaste  bool
	paste    strings.Builder
	pastes   int
	pasteEnd time.Time // claude: when the last paste (and the keys joined to it) came
	// Burst state (codex): when the last character came, how many came
	// in a run under burstGap apart, and when the last burst ended.
	lastChar  time.Time
	run       int
	burstLast time.Time
}

// segment is a stretch of the input: typed, or one paste.
type segment struct {
	text   string
	pasted bool
	n      int // the paste's number
}

const (
	joinWindow = 100 * time.Millisecond // claude
	burstGap   = 8 * time.Millisecond   // codex
	burstRun   = 3
	enterAfter = 120 * time.Millisecond
	tick       = 40 * time.Millisecond
)

type chunk struct {
	data []byte
	at   time.Time
}

func main() {
	flag.Parse()
	a := &agent{kind: filepath.Base(os.Args[0]), rows: rows(), out: os.Stdout}
	if *record != "" {
		f, err := os.OpenFile(*record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		a.rec = f
	}
	restore := rawMode()
	defer restore()
	if a.kind == "bellapp" {
		a.write("\x1b[?1049h")
		defer a.write("\x1b[?1049l")
	}
	a.write("\x1b[?2004h")
	defer a.write("\x1b[?2004l")
	chunks := make(chan chunk, 64)
	go func() {
		for {
			buf := make([]byte, 4096)
			n, err := os.Stdin.Read(buf)
			if n > 0 {
				chunks <- chunk{buf[:n], time.Now()}
			}
			if err != nil {
				close(chunks)
				return
			}
		}
	}()
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	a.draw()
	for {
		select {
		case c, ok := <-chunks:
			if !ok {
				return
			}
			a.keys(c)
		case <-ticker.C:
			a.work()
		}
	}
}

// keys takes what one read returned, all of it arriving at c.at.
func (a *agent) keys(c chunk) {
	b := c.data
	for i := 0; i < len(b); i++ {
		if b[i] == 0x1b {
			rest := string(b[i:])
			switch {
			case strings.HasPrefix(rest, "\x1b[200~"):
				a.inPaste = true
				a.paste.Reset()
				i += len("\x1b[200~") - 1
				continue
			case strings.HasPrefix(rest, "\x1b[201~"):
				a.inPaste = false
				a.pasted(a.paste.String(), c.at)
				i += len("\x1b[201~") - 1
				continue
			case len(rest) == 1:
				a.event(map[string]any{"escape": true})
				continue
			}
		}
		if a.inPaste {
			a.paste.WriteByte(b[i])
			a.char(c.at)
			continue
		}
		a.key(b[i], c.at)
	}
	a.draw()
}

// char notes a character's arrival for the codex burst rule.
func (a *agent) char(at time.Time) {
	if at.Sub(a.lastChar) < burstGap {
		a.run++
	} else {
		a.run = 1
	}
	a.lastChar = at
	if a.run >= burstRun {
		a.burstLast = at
	}
}

// pasted takes a bracketed paste; tmux writes its newlines as \r.
func (a *agent) pasted(text string, at time.Time) {
	text = strings.ReplaceAll(text, "\r", "\n")
	if a.kind != "claude" {
		a.typed(text)
		return
	}
	a.pastes++
	a.input = append(a.input, segment{text: text, pasted: true, n: a.pastes})
	a.pasteEnd = at
}

func (a *agent) key(k byte, at time.Time) {
	if a.kind == "claude" && len(a.input) > 0 && a.input[len(a.input)-1].pasted && at.Sub(a.pasteEnd) < joinWindow {
		// Part of the paste: an Enter is a newline in it.
		last := &a.input[len(a.input)-1]
		if k == '\r' {
			k = '\n'
		}
		last.text += string(k)
		a.pasteEnd = at
		return
	}
	switch {
	case k == '\r' && a.kind == "codex" && at.Sub(a.burstLast) < enterAfter:
		a.typed("\n")
		a.burstLast = at
	case k == '\r':
		a.submit()
	case k == 0x7f:
		a.backspace()
	case k >= 0x20:
		a.char(at)
		a.typed(string(k))
	}
}

func (a *agent) typed(s string) {
	if n := len(a.input); n > 0 && !a.input[n-1].pasted {
		a.input[n-1].text += s
		return
	}
	a.input = append(a.input, segment{text: s})
}

func (a *agent) backspace() {
	if n := len(a.input); n > 0 {
		last := &a.input[n-1]
		if last.pasted || len(last.text) <= 1 {
			a.input = a.input[:n-1]
			return
		}
		last.text = last.text[:len(last.text)-1]
	}
}

func (a *agent) text() string {
	var b strings.Builder
	for _, s := range a.input {
		b.WriteString(s.text)
	}
	return b.String()
}

func (a *agent) submit() {
	text := a.text()
	if text == "" {
		return
	}
	a.input = nil
	a.submitted++
	a.event(map[string]any{"submitted": text})
	for _, l := range strings.Split(text, "\n") {
		a.transcript = append(a.transcript, "» "+l)
	}
	a.busy = &turn{n: a.submitted, started: time.Now(), prompt: text}
}

// work moves the turn on: the spinner, the still stretch, the answer.
func (a *agent) work() {
	t := a.busy
	if t == nil {
		return
	}
	since := time.Since(t.started)
	switch {
	case since < *spin:
	case since < *spin+*still:
		return // busy, and writing nothing
	case since < 2**spin+*still:
	default:
		a.busy = nil
		first, _, _ := strings.Cut(t.prompt, "\n")
		a.transcript = append(a.transcript, fmt.Sprintf("answer %d: %s", t.n, first))
		// Recorded first: a test that sees the answer may look for it.
		a.event(map[string]any{"done": t.n, "at": time.Now().UnixNano()})
		a.draw()
		if a.kind == "bellapp" {
			a.write("\x07")
		}
		return
	}
	a.frame++
	if a.kind == "bellapp" {
		a.write(fmt.Sprintf("\x1b]0;working %d\x07", a.frame))
	}
	a.draw()
}

// draw paints the whole screen: the transcript, the busy line, the input.
func (a *agent) draw() {
	var input []string
	prompt := map[string]string{"claude": "│ > ", "codex": "› ", "bellapp": "task> "}[a.kind]
	line := prompt
	for _, s := range a.input {
		parts := strings.Split(s.text, "\n")
		if s.pasted && len(parts) > 1 {
			line += fmt.Sprintf("[Pasted text #%d +%d lines]", s.n, len(parts)-1)
			continue
		}
		for i, p := range parts {
			if i > 0 {
				input = append(input, line)
				line = strings.Repeat(" ", len([]rune(prompt)))
			}
			line += p
		}
	}
	input = append(input, line)
	busy := ""
	if a.busy != nil {
		secs := int(time.Since(a.busy.started).Seconds())
		spinner := `|/-\`[a.frame%4]
		busy = map[string]string{
			"claude":  fmt.Sprintf("%c Working… (%ds · esc to interrupt)", spinner, secs),
			"codex":   fmt.Sprintf("%c Working (%ds • esc to interrupt)", spinner, secs),
			"bellapp": fmt.Sprintf("%c working", spinner),
		}[a.kind]
	}
	footer := []string{"", busy}
	footer = append(footer, input...)
	footer = append(footer, "  ? for shortcuts")
	room := max(a.rows-len(footer), 0)
	shown := a.transcript[max(0, len(a.transcript)-room):]
	var b strings.Builder
	b.WriteString("\x1b[H\x1b[2J")
	all := append(append([]string{}, shown...), footer...)
	for i, r := range all {
		if i > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString(r)
	}
	// The cursor sits after the input, as an editor leaves it.
	row := len(shown) + 2 + len(input)
	fmt.Fprintf(&b, "\x1b[%d;%dH", row, len([]rune(input[len(input)-1]))+1)
	a.write(b.String())
}

func (a *agent) write(s string) { _, _ = a.out.WriteString(s) }

func (a *agent) event(e map[string]any) {
	if a.rec == nil {
		return
	}
	line, _ := json.Marshal(e)
	_, _ = a.rec.Write(append(line, '\n'))
}

// rawMode puts the terminal in raw mode and returns what restores it.
func rawMode() func() {
	var old syscall.Termios
	if ioctl(0, syscall.TCGETS, &old) != nil {
		return func() {}
	}
	raw := old
	raw.Iflag &^= syscall.ICRNL | syscall.INLCR | syscall.IGNCR | syscall.IXON | syscall.ISTRIP
	raw.Lflag &^= syscall.ECHO | syscall.ICANON | syscall.ISIG | syscall.IEXTEN
	raw.Oflag &^= syscall.OPOST
	raw.Cc[syscall.VMIN], raw.Cc[syscall.VTIME] = 1, 0
	_ = ioctl(0, syscall.TCSETS, &raw)
	return func() { _ = ioctl(0, syscall.TCSETS, &old) }
}

func ioctl(fd, req uintptr, t *syscall.Termios) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(unsafe.Pointer(t))); e != 0 {
		return e
	}
	return nil
}

// rows is the terminal's height, 24 when it cannot tell.
func rows() int {
	var ws struct{ Row, Col, X, Y uint16 }
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, 1, syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws))); e != 0 || ws.Row == 0 {
		return 24
	}
	return int(ws.Row)
}
