package tmuxserver

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Children returns the ids of a process's children, sorted, from every
// thread's /proc/PID/task/TID/children list (a child belongs to the thread
// that started it). A thread that ends while they are read is skipped.
func Children(pid int) ([]int, error) {
	leader := strconv.Itoa(pid) // the main thread's task id
	dir := filepath.Join("/proc", leader, "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var kids []int
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "children"))
		if os.IsNotExist(err) && t.Name() == leader {
			return nil, fmt.Errorf("%w (kernel without CONFIG_PROC_CHILDREN?)", err)
		}
		if err != nil {
			continue // the thread ended meanwhile
		}
		for _, f := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(f); err == nil {
				kids = append(kids, k)
			}
		}
	}
	slices.Sort(kids)
	return slices.Compact(kids), nil
}
