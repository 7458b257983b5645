package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/tmcp/tmcp/internal/tmuxserver"
)

// childProcs describes this process's children: the tmux processes tmcp
// started (control clients, one-off commands) are all of them.
type childProcs struct {
	Total   int
	Tmux    int
	Zombies int
	List    []string // "pid comm state", for a report
}

// children reads this process's children from /proc, across all threads.
func children() (childProcs, error) {
	var c childProcs
	kids, err := tmuxserver.Children(os.Getpid())
	if err != nil {
		return c, err
	}
	for _, k := range kids {
		pid := strconv.Itoa(k)
		comm, state := procState(pid)
		c.Total++
		if strings.HasPrefix(comm, "tmux") {
			c.Tmux++
		}
		if state == "Z" {
			c.Zombies++
		}
		c.List = append(c.List, pid+" "+comm+" "+state)
	}
	sort.Strings(c.List)
	return c, nil
}

// procState returns a process's command name and state letter.
func procState(pid string) (comm, state string) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return "?", "?"
	}
	// pid (comm) S ...; comm may hold spaces and parentheses.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "?", "?"
	}
	comm = string(b[open+1 : end])
	if f := strings.Fields(string(b[end+1:])); len(f) > 0 {
		state = f[0]
	}
	return comm, state
}

// rssBytes returns this process's resident set size.
func rssBytes() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// openFiles returns how many file descriptors this process has open.
func openFiles() int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(fds) - 1 // less the one reading the directory
}

// goroutineStacks counts live goroutines by the function they are parked
// in and the one that started them, to say which kind grew.
func goroutineStacks() map[string]int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	counts := map[string]int{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		lines := strings.Split(strings.TrimSpace(g), "\n")
		if len(lines) < 2 {
			continue
		}
		top := funcName(lines[1])
		creator := ""
		for _, l := range lines {
			if c, ok := strings.CutPrefix(l, "created by "); ok {
				if j := strings.Index(c, " in goroutine"); j >= 0 {
					c = c[:j]
				}
				creator = c
			}
		}
		counts[top+" <- "+creator]++
	}
	return counts
}

// funcName strips the arguments from a stack line.
func funcName(line string) string {
	if i := strings.LastIndexByte(line, '('); i > 0 {
		return line[:i]
	}
	return line
}

// stackGrowth lists the goroutine kinds that grew from before to after.
func stackGrowth(before, after map[string]int) []string {
	var out []string
	for k, n := range after {
		if d := n - before[k]; d > 0 {
			out = append(out, fmt.Sprintf("+%d %s", d, k))
		}
	}
	sort.Strings(out)
	return out
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
