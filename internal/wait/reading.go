package wait

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// A shell waits at its line editor when it is in front of its terminal
// and blocked in a system call that waits for input: read(2) on the
// terminal (dash, mksh, zsh's line editor), or select/poll (bash's
// readline, fish), as /proc/PID/syscall shows it (measured on Linux 6.18
// with bash 5.2, zsh 5.9, dash 0.5.12, mksh 59c and fish 3.6). It has then
// drawn its prompt: a shell draws it before it reads. A shell that runs
// anything (a command, its prompt's own command substitutions, which read
// a pipe, or waits for a child) is in another call, or running. Where the
// system call cannot be read (another architecture, or a process tmcp may
// not trace), the kernel's wait channel says the same less exactly.

// inputCalls are the system calls, by number, that wait for input, on the
// architectures tmcp knows: read, and the select and poll families.
var inputCalls = map[string]struct {
	read int64
	wait map[int64]bool
}{
	"amd64": {0, map[int64]bool{7: true, 23: true, 270: true, 271: true}}, // poll, select, pselect6, ppoll
	"arm64": {63, map[int64]bool{72: true, 73: true}},                     // pselect6, ppoll
}

// inputWaits are the kernel functions a process waiting for terminal
// input sleeps in, as /proc/PID/wchan names them: n_tty_read's wait
// (wait_woken since Linux 4.x), and select's and poll's.
var inputWaits = []string{"n_tty_read", "wait_woken", "do_select", "do_sys_poll", "poll_schedule_timeout"}

// readingInput reports whether process pid is blocked waiting for input
// on its terminal, or for any of its files through select or poll; known
// is false when /proc cannot say.
func readingInput(pid int) (reading, known bool) {
	if pid <= 0 {
		return false, false
	}
	proc := "/proc/" + strconv.Itoa(pid)
	if _, err := os.Stat(proc); os.IsNotExist(err) {
		// Gone: the group in front lost its leader (a job that just
		// ended, before its shell took the terminal back).
		return false, true
	}
	if call, ok := inputCalls[runtime.GOARCH]; ok {
		if b, err := os.ReadFile(proc + "/syscall"); err == nil {
			f := strings.Fields(string(b))
			if len(f) == 0 {
				return false, false
			}
			nr, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return false, true // "running", or -1 for a process not in a call
			}
			if nr == call.read && len(f) > 1 {
				fd, err := strconv.ParseInt(strings.TrimPrefix(f[1], "0x"), 16, 64)
				if err != nil {
					return false, true
				}
				target, err := os.Readlink(proc + "/fd/" + strconv.FormatInt(fd, 10))
				return err == nil && isTerminal(target), err == nil
			}
			return call.wait[nr], true
		}
	}
	b, err := os.ReadFile(proc + "/wchan")
	if err != nil {
		return false, false
	}
	wchan := strings.TrimSpace(string(b))
	if wchan == "" || wchan == "0" {
		return false, false // running, or a kernel that hides it
	}
	for _, w := range inputWaits {
		if strings.HasPrefix(wchan, w) {
			return true, true
		}
	}
	return false, true
}

// isTerminal reports whether a file a process has open is a terminal.
func isTerminal(path string) bool {
	return strings.HasPrefix(path, "/dev/pts/") || strings.HasPrefix(path, "/dev/tty")
}

// shellReading reports whether the program in front of a pane's terminal
// (whose process is pid) waits for input, which for a shell means that it
// waits at its line editor, its prompt drawn (see readingInput). known is
// false where tmcp cannot look: a remote tmux, or no /proc.
func (s *Service) shellReading(pid int) (reading, known bool) {
	if s.tc.Remote() || pid <= 0 {
		return false, false
	}
	_, front, err := processGroups(pid)
	if err != nil || front <= 0 {
		return false, false
	}
	// A shell that runs commands in groups of their own leads its own
	// group: the group in front is named by its leader's id.
	return readingInput(front)
}
