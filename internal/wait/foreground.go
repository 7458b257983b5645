package wait

import (
	"context"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// lostEndEvery is how often a job whose output tmux dropped asks whether
// its pane's shell is back in front: its end mark may have been dropped
// with the rest, and then nothing in the stream would ever end it.
const lostEndEvery = time.Second

// statusLooks is how many looks in a row, lostEndEvery apart, must find
// the shell in front before a job whose end mark tmux dropped gives up
// the status the shell's helper leaves: in the pane's option (a remote
// host's shell) the helper sets it from a tmux process of its own, in the
// background, which the load that made tmux drop output can keep from
// running for seconds. A local shell's end file is written at once.
const statusLooks = 5

// interruptLookEvery is how often a job whose command an interrupt key
// reached asks the same: the key reaches the shell too when it writes its
// end mark, and may cut it off.
const interruptLookEvery = 250 * time.Millisecond

// shellInFront reports whether a pane's shell holds its terminal's
// foreground, so that no command it started still runs. shellGroup is the
// shell's process group, as frontGroup found it when the job started; 0
// takes the pane's own process for the shell, which is wrong where that
// process only started the shell (a pane made to run "sh -c sh" under a
// shell that does not exec its last command). It reads /proc, which only
// a tmcp on the pane's machine can; ok is false when it cannot tell.
func (s *Service) shellInFront(ctx context.Context, paneID string, shellGroup int) (front, ok bool) {
	if s.tc.Remote() {
		return false, false
	}
	info, err := s.tc.PaneInfo(ctx, paneID)
	if err != nil || info.Dead || info.PID <= 0 {
		return false, false
	}
	if remoteShell[path.Base(info.Command)] {
		// ssh holds the terminal whether the far shell waits or runs.
		return false, false
	}
	pgrp, tpgid, err := processGroups(info.PID)
	if err != nil {
		return false, false
	}
	if shellGroup <= 0 {
		shellGroup = pgrp
	}
	return tpgid == shellGroup, true
}

// frontGroup returns the process group that holds the terminal of a pane
// whose process is pid, or 0 when tmcp cannot tell. Asked as a job
// starts, with the pane's shell at its prompt, it is the shell's group.
func (s *Service) frontGroup(pid int) int {
	if s.tc.Remote() || pid <= 0 {
		return 0
	}
	_, tpgid, err := processGroups(pid)
	if err != nil {
		return 0
	}
	return tpgid
}

// processGroups returns a process's group and its terminal's foreground
// group, from /proc/PID/stat.
func processGroups(pid int) (pgrp, tpgid int, err error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// The command name in parentheses may hold spaces: read after the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("reading /proc/%d/stat: no command name", pid)
	}
	// After the name: state ppid pgrp session tty_nr tpgid.
	f := strings.Fields(s[i+1:])
	if len(f) < 6 {
		return 0, 0, fmt.Errorf("reading /proc/%d/stat: %d fields after the name", pid, len(f))
	}
	if pgrp, err = strconv.Atoi(f[2]); err == nil {
		tpgid, err = strconv.Atoi(f[5])
	}
	return pgrp, tpgid, err
}
