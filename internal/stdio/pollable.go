package stdio

import (
	"os"
	"syscall"
)

// Pollable returns f opened again for reading and writing through Go's
// poller when it is a pipe or a socket, and f itself otherwise (a terminal,
// a file, or when f cannot be switched). restore puts the descriptor back
// in blocking mode, for whoever shares it once tmcp is done (a script
// that reads on from the same pipe); it does nothing when f was kept.
//
// A goroutine blocked in a plain read(2) of stdin keeps its thread in a
// system call until the client writes again. On Go 1.26 a stop-the-world
// (a garbage collection's) that begins as that goroutine enters the read
// can miss it, and waits for the read to return: tmcp then stops answering
// until the client sends another line, which a client awaiting a reply
// never does. Seen as a wait_for_text unanswered for 20 s, about once in
// 30 runs of 10,000 calls, with every goroutine parked behind "stopping
// the world". Through the poller no goroutine sits in such a read.
func Pollable(f *os.File) (pollable *os.File, restore func()) {
	info, err := f.Stat()
	if err != nil || info.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f, func() {}
	}
	// Fd puts f's descriptor in blocking mode; the switch comes after.
	fd := f.Fd()
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		return f, func() {}
	}
	return os.NewFile(fd, f.Name()), func() { _ = syscall.SetNonblock(int(fd), false) }
}
