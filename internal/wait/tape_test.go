package wait

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tmcp/tmcp/internal/tmux"
	"github.com/tmcp/tmcp/internal/tmuxtest"
)

// pauseOutputClients pauses a pane's output for tmcp's output clients
// every few milliseconds until stop is closed, as tmux does for a client
// too far behind: what the pane writes until tmcp continues it is lost to
// its stream. It returns how many pauses it made.
func pauseOutputClients(t *testing.T, srv *tmuxtest.Server, paneID string, stop <-chan struct{}) <-chan int {
	t.Helper()
	made := make(chan int, 1)
	go func() {
		n := 0
		defer func() { made <- n }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			out, err := srv.Tmux("list-clients", "-F", "#{client_name} #{client_flags}")
			if err != nil {
				continue
			}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				name, flags, _ := strings.Cut(l, " ")
				if strings.Contains(flags, tmux.OutputClientFlag) {
					if _, err := srv.Tmux("refresh-client", "-t", name, "-A", paneID+":pause"); err == nil {
						n++
					}
				}
			}
		}
	}()
	return made
}

// A run whose stream tmux pauses again and again as it prints, and whose
// pane may die as it ends, keeps every line and its status from its tape;
// with no tape (TMCP_TAPES=off) the same run reports its output lost,
// which shows the pauses cost the stream output.
func TestARunWhoseStreamTmuxPausesKeepsEveryLineFromItsTape(t *testing.T) {
	const lines = 20000
	// Printed in 100 pieces with a breath between, so the pauses fall
	// within it; "kill -9 $$" ends the pane's shell with it, before any end mark.
	const printing = "i=0; while [ $i -lt 100 ]; do seq $((i*200+1)) $((i*200+200)); i=$((i+1)); sleep 0.005; done"
	for _, tc := range []struct {
		name  string
		tapes bool
		dies  bool
		runs  int // runs in a row in the pane: the later ones on the first's tape
	}{
		{"tape, two runs in a row", true, false, 2},
		{"no tape", false, false, 1},
		{"tape, the pane dying at the end", true, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.s.noTapes = !tc.tapes
			paneID := strings.TrimSpace(f.srv.Must("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", "%0", "sh"))
			f.waitForPrompt(paneID)
			var first *tape
			for n := range tc.runs {
				r := pausedRun(t, f, paneID, printing, tc.dies)
				now := paneTape(f.s, paneID)
				if n == 0 {
					first = now
				} else if now != first || now == nil {
					t.Errorf("run %d had another tape than the first run in its pane", n+1)
				}
				got, total := r.Lines, r.TotalLines
				if tc.dies && last(got) == "Killed" { // the shell's word on its command's end
					got, total = got[:len(got)-1], total-1
				}
				whole := total == lines && len(got) > 0
				for i, l := range got {
					whole = whole && l == strconv.Itoa(lines-len(got)+1+i)
				}
				switch {
				case !tc.tapes:
					if !r.OutputLost {
						t.Fatalf("with no tape, the paused run did not lose output (%d lines, lost %v): the pauses did not reach its stream", r.TotalLines, r.OutputLost)
					}
					if !strings.Contains(r.Reason, tapesEnv+"=off") {
						t.Errorf("the run that lost output with no tape does not say why it had none: %q", r.Reason)
					}
				case tc.dies:
					if !r.PaneDied || !whole || r.OutputLost {
						t.Fatalf("the run whose pane died: paneDied %v, %d lines ending %q, lost %v (%s); want every one of %d lines", r.PaneDied, r.TotalLines, last(r.Lines), r.OutputLost, r.Reason, lines)
					}
				default:
					if status(r) != "0" || !whole || r.OutputLost {
						t.Fatalf("run %d: status %s, %d lines ending %q, lost %v (%s); want status 0 and every one of %d lines", n+1, status(r), r.TotalLines, last(r.Lines), r.OutputLost, r.Reason, lines)
					}
				}
			}
		})
	}
}

// pausedRun runs command in a pane, once it waits for its go file, and
// pauses the pane's output for tmcp's output clients as the command goes
// on from there (see pauseOutputClients).
func pausedRun(t *testing.T, f *fixture, paneID, printing string, dies bool) JobResult {
	t.Helper()
	goFile := filepath.Join(t.TempDir(), "go")
	command := fmt.Sprintf("while [ ! -e %s ]; do sleep 0.01; done; %s", goFile, printing)
	if dies {
		command += "; kill -9 $$"
	}
	type answer struct {
		r   JobResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := f.s.Run(context.Background(), RunRequest{PaneID: paneID, Command: command, Timeout: Timeout{Duration: 60 * time.Second}})
		done <- answer{r, err}
	}()
	if !tmuxtest.WaitFor(10*time.Second, func() bool { return f.runs(paneID, "sleep") }) {
		t.Fatal("the run never began waiting for its go file")
	}
	stop := make(chan struct{})
	pauses := pauseOutputClients(t, f.srv, paneID, stop)
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a := <-done
	close(stop)
	t.Logf("%d pauses", <-pauses)
	if a.err != nil {
		t.Fatal(a.err)
	}
	return a.r
}

func last(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// A pane that has a pipe of its own (a person's pipe-pane) gets no tape:
// tmcp never replaces the pipe, which keeps every line of the run.
func TestARunLeavesAPanesOwnPipeAlone(t *testing.T) {
	f := newFixture(t)
	f.s.noTapes = false
	log := filepath.Join(t.TempDir(), "log")
	f.srv.Must("pipe-pane", "-t", "%0", "cat > "+log)
	r := f.run("seq 1 300 | sed s/^/line-/", 30*time.Second)
	if status(r) != "0" || r.TotalLines != 300 {
		t.Fatalf("the run: status %s, %d lines; want 0 and 300", status(r), r.TotalLines)
	}
	if tp := paneTape(f.s, "%0"); tp != nil {
		t.Errorf("the pane with its own pipe was given a tape")
	}
	if piped := strings.TrimSpace(f.srv.Must("display-message", "-p", "-t", "%0", "#{pane_pipe}")); piped != "1" {
		t.Errorf("the pane's own pipe is gone after the run: pane_pipe %q", piped)
	}
	var logged []byte
	if !tmuxtest.WaitFor(5*time.Second, func() bool {
		logged, _ = os.ReadFile(log)
		return strings.Contains(string(logged), "line-300")
	}) {
		t.Errorf("the pane's own pipe did not get the run's output: %q", last(strings.Split(string(logged), "\n")))
	}
}

// The pipe's command appends what it is given to its file, and makes the
// end file once its input ends, whatever the directory's name holds.
func TestTapeCommandAppendsItsInputAndSaysWhenItEnded(t *testing.T) {
	for _, name := range []string{"1", "it's a tape", `$(false) "x" \ #%`} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			alive, err := holdAlive(filepath.Join(dir, tapeAlive))
			if err != nil {
				t.Fatal(err)
			}
			defer alive.Close()
			path := filepath.Join(dir, "1")
			if err := os.WriteFile(path, []byte("kept "), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "-c", tapeCommand(path, alive.Name()))
			cmd.Stdin = strings.NewReader("piped\n")
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the pipe's command: %v %s", err, out)
			}
			// Its watch of alive, which still has a writer, ends with it.
			if took := time.Since(start); took > time.Second {
				t.Errorf("the pipe's command took %v to end once its input did", took)
			}
			if got, err := os.ReadFile(path); err != nil || string(got) != "kept piped\n" {
				t.Errorf("the file holds %q (%v), want %q", got, err, "kept piped\n")
			}
			if _, err := os.Stat(tapeEndPath(path)); err != nil {
				t.Errorf("no end file once the input ended: %v", err)
			}
		})
	}
}

// startTapeCommand starts the pipe's command of a tape at path watching
// the FIFO alive, its input held open as tmux holds a pipe, and returns
// that input and the command's end.
func startTapeCommand(t *testing.T, path, alive string) (io.WriteCloser, <-chan error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", tapeCommand(path, alive))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	return in, ended
}

// The pipe's command stops copying once the tmcp that holds its FIFO
// open is gone, though tmux still holds the pipe open: what it copied
// stays, and the end file says it ended.
func TestTapeCommandStopsOnceItsTmcpIsGone(t *testing.T) {
	dir := t.TempDir()
	alive, err := holdAlive(filepath.Join(dir, tapeAlive))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "1")
	in, ended := startTapeCommand(t, path, alive.Name())
	if _, err := in.Write([]byte("before\n")); err != nil {
		t.Fatal(err)
	}
	if !tmuxtest.WaitFor(5*time.Second, func() bool {
		b, _ := os.ReadFile(path)
		return string(b) == "before\n"
	}) {
		t.Fatal("the pipe's command never copied its input")
	}
	select {
	case err := <-ended:
		t.Fatalf("the pipe's command ended (%v) while its tmcp and its input were there", err)
	case <-time.After(300 * time.Millisecond):
	}
	alive.Close() // its only writer: as tmcp's death closes it
	select {
	case <-ended:
	case <-time.After(3 * time.Second):
		t.Fatal("the pipe's command still copies 3 s after its tmcp went")
	}
	if _, err := os.Stat(tapeEndPath(path)); err != nil {
		t.Errorf("no end file once the pipe's command stopped: %v", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "before\n" {
		t.Errorf("the file holds %q (%v), want what came before", b, err)
	}
}

// The tapes' directories of a tmcp that is gone are removed by the next,
// and a pipe's command that began after that tmcp died, whose watch waits
// for a writer of the FIFO, ends; a live tmcp's are kept.
func TestADeadTmcpsTapesAreRemovedAndALiveOnesKept(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(tmp, tapePrefix+strconv.Itoa(gone.Process.Pid)+"-1")
	live := filepath.Join(tmp, tapePrefix+strconv.Itoa(os.Getpid())+"-2")
	for _, dir := range []string{dead, live} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "1"), []byte("bytes"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dead, tapeAlive), 0o600); err != nil {
		t.Fatal(err)
	}
	_, ended := startTapeCommand(t, filepath.Join(dead, "1"), filepath.Join(dead, tapeAlive))
	time.Sleep(100 * time.Millisecond) // its watch now waits to open the FIFO
	removeDeadTapeDirs()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the directory of a tmcp that is gone is still there (%v)", err)
	}
	select {
	case <-ended:
	case <-time.After(3 * time.Second):
		t.Error("a pipe's command of the tmcp that is gone still copies 3 s after the next removed its tapes")
	}
	if _, err := os.Stat(filepath.Join(live, "1")); err != nil {
		t.Errorf("the directory of a live tmcp was touched: %v", err)
	}
}

// paneTape returns the tape tmcp has open on a pane, or nil.
func paneTape(s *Service, paneID string) *tape {
	s.tapesMu.Lock()
	defer s.tapesMu.Unlock()
	return s.tapes[paneID]
}

// releasedTape returns the tape a finished run left on a pane, once the
// run's reader let it go (it does so after the run returned), with its
// linger stopped so that the tape stays open however slow the test is.
func releasedTape(t *testing.T, s *Service, paneID string) *tape {
	t.Helper()
	tp := paneTape(s, paneID)
	if tp == nil {
		t.Fatal("the run left no tape open on its pane")
	}
	if !tmuxtest.WaitFor(5*time.Second, func() bool {
		tp.mu.Lock()
		defer tp.mu.Unlock()
		if tp.held || tp.linger == nil {
			return false
		}
		tp.linger.Stop()
		return true
	}) {
		t.Fatal("the run's tape was never let go")
	}
	return tp
}

// printInPane has the pane's shell print `seq 1 n` and waits until it did.
func printInPane(t *testing.T, f *fixture, n int) {
	t.Helper()
	last := strconv.Itoa(n)
	f.srv.Must("send-keys", "-t", "%0", "seq 1 "+last+"; echo printed-$((1+1))", "Enter")
	if !tmuxtest.WaitFor(30*time.Second, func() bool {
		return strings.Contains(f.srv.Must("capture-pane", "-p", "-t", "%0"), "printed-2")
	}) {
		t.Fatalf("the pane never printed seq 1 %s", last)
	}
}

// seqBytes is how many bytes `seq 1 n` writes.
func seqBytes(n int) int64 {
	var total int64
	for i := 1; i <= n; i++ {
		total += int64(len(strconv.Itoa(i))) + 1
	}
	return total
}

// A tape no job holds keeps at most tapeIdle bytes of what its pane
// writes: the watch cuts the rest, and counts what passed.
func TestATapeCutsWhatNoJobWillRead(t *testing.T) {
	f := newFixture(t)
	f.s.noTapes = false
	if r := f.run("true", 10*time.Second); status(r) != "0" {
		t.Fatalf("the run: %+v", r)
	}
	tp := releasedTape(t, f.s, "%0")
	const n = 400000 // 2.7 MB, well past tapeIdle
	printInPane(t, f, n)
	var size int64
	if !tmuxtest.WaitFor(2*time.Second, func() bool {
		fi, err := os.Stat(tp.path)
		if err != nil {
			t.Fatalf("the tape's file: %v", err)
		}
		size = fi.Size()
		return size <= tapeIdle
	}) {
		t.Errorf("the idle tape holds %d bytes of the %d the pane printed; want at most %d", size, seqBytes(n), tapeIdle)
	}
}

// punchesHoles reports whether the file system of dir gives a file's
// range back to the disk on request.
func punchesHoles(t *testing.T, dir string) bool {
	t.Helper()
	f, err := os.CreateTemp(dir, "punch")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.Write(make([]byte, 1<<16)); err != nil {
		t.Fatal(err)
	}
	return syscall.Fallocate(int(f.Fd()), fallocPunchHole|fallocKeepSize, 0, 1<<16) == nil
}

// What a job read of its tape is given back to the disk: a replay of some
// 12 MB leaves less than one chunk of the file on it.
func TestATapeGivesBackToTheDiskWhatItsJobRead(t *testing.T) {
	if !punchesHoles(t, os.TempDir()) {
		t.Skipf("the file system of %s cannot punch holes in a file", os.TempDir())
	}
	f := newFixture(t)
	f.s.noTapes = false
	if r := f.run("true", 10*time.Second); status(r) != "0" {
		t.Fatalf("the run: %+v", r)
	}
	tp := releasedTape(t, f.s, "%0")
	if !tp.hold() {
		t.Fatalf("the pane's tape could not be held: %s", tp.whyNot())
	}
	defer f.s.releaseTape(tp)
	const n = 1500000 // 10.9 MB from seq, more with the terminal's returns
	printInPane(t, f, n)
	kept, ok := tp.replay(false)
	if !ok {
		t.Fatalf("the held tape could not be replayed: %s", tp.whyNot())
	}
	read := int64(len(kept))
	for b := tp.take(); len(b) > 0; b = tp.take() {
		read += int64(len(b))
	}
	var st syscall.Stat_t
	if err := syscall.Stat(tp.path, &st); err != nil {
		t.Fatal(err)
	}
	if read < seqBytes(n) || st.Size != read {
		t.Fatalf("read %d bytes of a file of %d; want all of it, at least the %d seq printed", read, st.Size, seqBytes(n))
	}
	if onDisk := st.Blocks * 512; onDisk >= tapeChunk {
		t.Errorf("the file of %d bytes, all read, still takes %d bytes of disk; want under %d", st.Size, onDisk, tapeChunk)
	}
}
