package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	// floodCommand writes a flood (its first argument, which takes the
	// bytes), then the two time stamps around the write to a file (the
	// last argument), then FLOOD-DONE on a line of its own.
	floodCommand = `s=$(date +%%s.%%N); %s; echo "$s $(date +%%s.%%N)" > %s; echo; echo FLOOD-DONE`
	// unbrokenFlood is N bytes of x with no newline; linesFlood N bytes of
	// "y" lines.
	unbrokenFlood = `head -c %d /dev/zero | tr '\0' x`
	linesFlood    = `yes | head -c %d`
	// floodLimitSeconds bounds each of the three floods; the tmcp that
	// waits on one runs with a wait ceiling that allows it.
	floodLimitSeconds = 300
	// floodStart is how long after sending wait_for_text the flood is typed.
	floodStart = 50 * time.Millisecond
	// floodMemoryTarget is the bound on tmcp's peak memory during a flood.
	floodMemoryTarget = 64
	// floodWrittenTarget bounds how much slower the flood is written with
	// tmcp waiting on the pane than with nobody watching.
	floodWrittenTarget = 1.5
	// stampPoll is how often the benchmark looks for a flood's time stamps
	// when nobody watches the pane.
	stampPoll = 20 * time.Millisecond
	// floodRuns is how many times the flood is written with no tmcp and
	// with tmcp carrying the pane's session, by turns: the two differ by
	// less than one run's noise on a shared machine, so each row takes
	// the median of its runs.
	floodRuns = 5
	// floodUnwatchedTarget bounds how much slower the flood is written
	// with tmcp carrying its session, not watching the pane (it pauses it
	// and re-arms it now and then), than with no tmcp.
	floodUnwatchedTarget = 1.1
)

// flood writes the same flood into three fresh panes, with nobody
// watching, with a new tmcp waiting on the pane with wait_for_text, and
// with a bare control client streaming it; it reports how long each took
// to write and the peak memory of tmcp and of the bare client.
func (b *bench) flood(ctx context.Context) error {
	limit := floodLimitSeconds * time.Second
	command := func(name string) (string, string) {
		stamp := filepath.Join(b.dir, name)
		flood := unbrokenFlood
		if b.cfg.floodLines {
			flood = linesFlood
		}
		return fmt.Sprintf(floodCommand, fmt.Sprintf(flood, b.cfg.floodBytes), stamp), stamp
	}

	var frees, unwatcheds, freeCPU, unwatchedCPU []time.Duration
	for i := range floodRuns {
		free, cpu, err := b.serverCPU(func() (time.Duration, error) { return b.floodFree(ctx, command, i) })
		if err != nil {
			return fmt.Errorf("nobody watching: %w", err)
		}
		freeCPU = append(freeCPU, cpu)
		unwatched, cpu, err := b.serverCPU(func() (time.Duration, error) { return b.floodUnwatched(ctx, command, i) })
		if err != nil {
			return fmt.Errorf("tmcp carrying the session: %w", err)
		}
		unwatchedCPU = append(unwatchedCPU, cpu)
		frees, unwatcheds = append(frees, free), append(unwatcheds, unwatched)
		b.notes.FloodFreeRuns = append(b.notes.FloodFreeRuns, round(free.Seconds(), 3))
		b.notes.FloodUnwatchedRuns = append(b.notes.FloodUnwatchedRuns, round(unwatched.Seconds(), 3))
	}
	freeWritten, unwatchedWritten := percentile(frees, 50), percentile(unwatcheds, 50)

	tmcpWritten, lag, peak, rest, err := b.floodTmcp(ctx, command)
	if err != nil {
		return fmt.Errorf("tmcp waiting: %w", err)
	}

	cmd, stamp := command("flood-control")
	var controlPeak float64
	err = b.withStreamFloor(ctx, "flood-control", func(c *controlFloor, cp benchPane) error {
		mark := newMarker("\nFLOOD-DONE\r")
		if err := c.sendKeys(cp.id, cmd); err != nil {
			return err
		}
		if err := c.awaitOutput(cp.id, limit, mark.feed); err != nil {
			return err
		}
		controlPeak, err = peakMiB(c.pid())
		return err
	})
	if err != nil {
		return fmt.Errorf("bare control client: %w", err)
	}
	controlStart, controlEnd, err := readStamps(stamp)
	if err != nil {
		return err
	}
	controlWritten := controlEnd.Sub(controlStart)

	memory, written, unwatched := floodLabels(b.cfg)
	b.put(valueRow(memory, unitMiB, 1, peak, &controlPeak).withTarget(fmt.Sprintf("< %d MiB", floodMemoryTarget), peak < floodMemoryTarget))
	ratio := tmcpWritten.Seconds() / freeWritten.Seconds()
	b.put(valueRow(written, unitS, 1, tmcpWritten.Seconds(), ptr(freeWritten.Seconds())).withTarget(fmt.Sprintf("≤ %.1f×", floodWrittenTarget), ratio <= floodWrittenTarget))
	ratio = unwatchedWritten.Seconds() / freeWritten.Seconds()
	b.put(valueRow(unwatched, unitS, floodRuns, unwatchedWritten.Seconds(), ptr(freeWritten.Seconds())).
		withTarget(fmt.Sprintf("≤ %.1f×", floodUnwatchedTarget), ratio <= floodUnwatchedTarget))
	server, serverFloor := percentile(unwatchedCPU, 50).Seconds(), percentile(freeCPU, 50).Seconds()
	b.put(valueRow(floodServerLabel(b.cfg), unitS, floodRuns, server, &serverFloor).
		withTarget(fmt.Sprintf("≤ %.1f×", floodUnwatchedTarget), server <= floodUnwatchedTarget*serverFloor))
	b.notes.FloodControlSeconds = round(controlWritten.Seconds(), 3)
	b.notes.FloodControlMiB = round(controlPeak, 1)
	b.notes.TmcpRestMiB = round(rest, 1)
	b.notes.FloodReplySeconds = round(lag.Seconds(), 3)
	return nil
}

// serverCPU runs flood and returns what it returns, and the CPU time the
// tmux server spent meanwhile: what tmux's work for its clients costs the
// flood, measured with less noise than the flood's time on a shared
// machine.
func (b *bench) serverCPU(flood func() (time.Duration, error)) (time.Duration, time.Duration, error) {
	pids := []int{b.srv.PID()}
	before, err := cpuTicks(pids)
	if err != nil {
		return 0, 0, err
	}
	d, err := flood()
	if err != nil {
		return 0, 0, err
	}
	after, err := cpuTicks(pids)
	if err != nil {
		return 0, 0, err
	}
	return d, time.Duration(after-before) * time.Second / clockTicks, nil
}

// floodFree writes the flood into a fresh pane of a session no tmcp
// carries, and returns how long it took.
func (b *bench) floodFree(ctx context.Context, command func(string) (string, string), i int) (time.Duration, error) {
	name := fmt.Sprintf("flood-free-%d", i)
	free, err := b.srv.newSession(ctx, name)
	if err != nil {
		return 0, err
	}
	defer b.removeSessions([]string{name})
	cmd, stamp := command(name)
	return typeAndTime(ctx, b.srv, free.id, cmd, stamp)
}

// floodUnwatched writes the flood into a fresh pane of a session whose
// output the benchmark's tmcp carries, for it waited on the pane's
// sibling (whose stream goes on after the wait), and returns how long it
// took. Nobody waits on the flooding pane: tmcp pauses it at its first
// output and re-arms it now and then. The flood is typed with bare
// send-keys: send_keys would stream the pane.
func (b *bench) floodUnwatched(ctx context.Context, command func(string) (string, string), i int) (time.Duration, error) {
	name := fmt.Sprintf("flood-unwatched-%d", i)
	p, err := b.srv.newSession(ctx, name)
	if err != nil {
		return 0, err
	}
	defer b.removeSessions([]string{name})
	out, err := b.srv.Run(ctx, "split-window", "-d", "-P", "-F", "#{pane_id}", "-t", p.id, "sh")
	if err != nil {
		return 0, err
	}
	sibling := strings.TrimSpace(string(out))
	r, err := b.tmcp.call(ctx, "wait_for_text", map[string]any{"paneId": sibling, "patterns": []string{"never printed"}, "timeoutSeconds": 0.1})
	if err != nil {
		return 0, err
	}
	var w struct{ Outcome string }
	if err := decode(r, &w); err != nil || w.Outcome != "timeout" {
		return 0, fmt.Errorf("wait_for_text on the sibling pane: outcome %q (%v), want timeout", w.Outcome, err)
	}
	cmd, stamp := command(name)
	return typeAndTime(ctx, b.srv, p.id, cmd, stamp)
}

// typeAndTime types a flood's command into a pane with bare send-keys and
// returns how long the flood took to write, by its time stamps.
func typeAndTime(ctx context.Context, srv *tmuxServer, pane, cmd, stamp string) (time.Duration, error) {
	if _, err := srv.Run(ctx, "send-keys", "-t", pane, "-l", cmd); err != nil {
		return 0, err
	}
	if _, err := srv.Run(ctx, "send-keys", "-t", pane, "Enter"); err != nil {
		return 0, err
	}
	return awaitStamps(ctx, stamp, floodLimitSeconds*time.Second)
}

// floodTmcp starts a tmcp of its own, so that its peak memory is the
// flood's, and has it wait for FLOOD-DONE while the flood, typed with
// send_keys, runs. It returns how long the flood took to write, how long
// after that the wait answered, and tmcp's peak memory after the wait and
// before it.
func (b *bench) floodTmcp(ctx context.Context, command func(string) (string, string)) (written, lag time.Duration, peak, rest float64, err error) {
	p, err := startTmcp(ctx, newClient(), b.bin, b.srv, "TMCP_WAIT_MAX_SECONDS="+strconv.Itoa(floodLimitSeconds))
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer func() {
		if cerr := p.close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	pane, err := b.srv.newSession(ctx, "flood-tmcp")
	if err != nil {
		return 0, 0, 0, 0, err
	}
	if rest, err = peakMiB(p.pid()); err != nil {
		return 0, 0, 0, 0, err
	}
	cmd, stamp := command("flood-tmcp")
	at, err := awaitTyped(ctx, p, pane.id, "^FLOOD-DONE$", cmd, floodStart, floodLimitSeconds)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	// VmHWM: the peak so far, the flood's included.
	if peak, err = peakMiB(p.pid()); err != nil {
		return 0, 0, 0, 0, err
	}
	start, end, err := readStamps(stamp)
	return end.Sub(start), at.Sub(end), peak, rest, err
}

// floodKind names the flood in the rows' labels.
func floodKind(cfg config) string {
	if cfg.floodLines {
		return "y lines"
	}
	return "x"
}

// awaitStamps waits up to limit for a flood's time stamps and returns how
// long the flood took to write.
func awaitStamps(ctx context.Context, path string, limit time.Duration) (time.Duration, error) {
	deadline := time.Now().Add(limit)
	for {
		start, end, err := readStamps(path)
		if err == nil || time.Now().After(deadline) {
			return end.Sub(start), err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(stampPoll):
		}
	}
}

// readStamps reads the line "START END" a flood writes.
func readStamps(path string) (start, end time.Time, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return start, end, fmt.Errorf("reading the flood's time stamps: %w", err)
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 || !strings.HasSuffix(string(b), "\n") {
		return start, end, fmt.Errorf("flood time stamps %q: want two", b)
	}
	if start, err = parseStamp(fields[0]); err != nil {
		return start, end, err
	}
	end, err = parseStamp(fields[1])
	return start, end, err
}

// peakMiB reads a process's peak resident memory (VmHWM) in MiB.
func peakMiB(pid int) (float64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}
