package sshserver

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
)

// The down host's port must refuse connections for the server's whole
// life, and no one else may be handed it meanwhile: a port found free
// and let go was once given to another test's sshd, which then answered
// for the down host.
func TestTheRefusingPortRefusesAndCannotBeTaken(t *testing.T) {
	s := &Server{downFD: -1}
	port, err := s.holdRefusingPort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for i := 0; i < 3; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			t.Fatalf("dialling the refusing port %d succeeded", port)
		} else if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dialling the refusing port %d: %v, want connection refused", port, err)
		}
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("another listener took the refusing port %d", port)
	}
	s.Close()
	if s.downFD != -1 {
		t.Errorf("Close left the refusing port's socket open")
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the refusing port %d is still held after Close: %v", port, err)
	}
	l.Close()
}
