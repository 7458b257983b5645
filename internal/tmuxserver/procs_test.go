package tmuxserver

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

func TestChildrenListsAChildOnceAndNotAfterItIsReaped(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	kids, err := Children(os.Getpid())
	if err != nil || !slices.Contains(kids, pid) || !slices.IsSorted(kids) || len(slices.Compact(slices.Clone(kids))) != len(kids) {
		t.Errorf("Children(self) = %v, %v; want sorted, without repeats, holding the child %d", kids, err, pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if kids, _ := Children(os.Getpid()); slices.Contains(kids, pid) {
		t.Errorf("Children(self) = %v after the child %d was reaped", kids, pid)
	}
	if _, err := Children(1 << 30); err == nil {
		t.Errorf("Children of a process that does not exist: no error")
	}
}
