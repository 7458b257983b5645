package stdio

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestPollableSwitchesPipesAndSocketsOnly(t *testing.T) {
	pipe := func(t *testing.T) *os.File {
		var fds [2]int
		if err := syscall.Pipe(fds[:]); err != nil {
			t.Fatal(err)
		}
		w := os.NewFile(uintptr(fds[1]), "pipe-w")
		t.Cleanup(func() { w.Close() })
		return os.NewFile(uintptr(fds[0]), "pipe-r") // blocking, as a parent hands it over
	}
	socket := func(t *testing.T) *os.File {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		other := os.NewFile(uintptr(fds[1]), "socket-b")
		t.Cleanup(func() { other.Close() })
		return os.NewFile(uintptr(fds[0]), "socket-a")
	}
	file := func(t *testing.T) *os.File {
		f, err := os.Create(filepath.Join(t.TempDir(), "plain"))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name     string
		open     func(*testing.T) *os.File
		pollable bool
	}{
		{"pipe", pipe, true},
		{"socket", socket, true},
		{"regular file", file, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.open(t)
			if err := f.SetReadDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
				t.Fatalf("before: SetReadDeadline = %v, want os.ErrNoDeadline (a file not read through the poller)", err)
			}
			got, restore := Pollable(f)
			defer got.Close()
			err := got.SetReadDeadline(time.Now().Add(time.Millisecond))
			if tc.pollable && err != nil {
				t.Errorf("after: SetReadDeadline = %v, want it read through the poller", err)
			}
			if !tc.pollable && (got != f || !errors.Is(err, os.ErrNoDeadline)) {
				t.Errorf("after: got a new file (%v) or a deadline (%v), want the file left as it was", got != f, err)
			}
			if tc.pollable {
				// A read through the poller ends at its deadline instead
				// of holding a thread in read(2).
				if _, err := got.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Errorf("read with nothing written: %v, want the deadline", err)
				}
			}
			restore()
			if nonblocking(t, got) {
				t.Errorf("after restore: the descriptor is still non-blocking, as nobody sharing it expects")
			}
		})
	}
}

// nonblocking reports whether f's descriptor has O_NONBLOCK set.
func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	conn, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr error
	if err := conn.Control(func(fd uintptr) {
		flags, ferr = fcntlFlags(fd)
	}); err != nil || ferr != nil {
		t.Fatal(err, ferr)
	}
	return flags&syscall.O_NONBLOCK != 0
}

func fcntlFlags(fd uintptr) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}
