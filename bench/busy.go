package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// Sessions × panes that each print a line every 10 ms while one
	// wait_for_text per pane waits for a line of its own: 10×10, and in
	// a -short run, which CI makes beside other tests, 2×5.
	defaultBusySessions = 10
	defaultBusyPanes    = 10
	shortBusySessions   = 2
	shortBusyPanes      = 5
	// busyCommand prints a line every 10 ms in one process, so that the
	// machine's load is the panes' output, not the starting of sleeps.
	busyCommand = `perl -e '$|=1; while (1) { print "tick\n"; select(undef, undef, undef, 0.01) }'`
	// busyLead is how long the lines are written after tmcp has read
	// every wait. Reaction is timed from each write, so the lead is not
	// in it.
	busyLead = 100 * time.Millisecond
	// busyColdLead is how long after tmcp has read the waits on panes it
	// does not stream yet their lines are written.
	busyColdLead = 500 * time.Millisecond
	// busyWaitSeconds bounds each wait of a round.
	busyWaitSeconds = 10
	// busyRoundShare of -n's iterations make a timed round (a sample per
	// pane), at least two.
	busyRoundShare = 20
	// busyBurn is how long the floor's second set of rounds keeps every
	// core busy from its first write: about what 100 replies cost tmcp
	// and a client.
	busyBurn = 60 * time.Millisecond
	// Targets: reaction median and p99, in ms.
	busyMedianTarget = 2
	busyP99Target    = 20
	// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times.
	clockTicks = 100
)

// busyLabel is the label of the busy panes' reaction row.
func busyLabel(cfg config) string {
	n := cfg.busySessions * cfg.busyPanes
	return fmt.Sprintf("%d waits at once on %d×%d panes ticking every 10 ms, write → reply (floor: write → %%output, %d control clients)",
		n, cfg.busySessions, cfg.busyPanes, cfg.busySessions)
}

// busyPane is one of the busy panes and the index of its session.
type busyPane struct {
	benchPane
	session int
}

// busyReaction measures wait_for_text calls made all at once, one on each
// of the busy panes (sessions × panes that print a line every 10 ms):
// from the write of each wait's line to its reply, beside how soon bare
// control clients, one per session, read those lines; and what that costs
// tmcp in CPU and memory, beside what it costs the bare clients.
func (b *bench) busyReaction(ctx context.Context) error {
	panes, made, err := b.addBusyPanes(ctx)
	defer func() {
		if len(made) > 0 {
			b.removeSessions(made)
		}
	}()
	if err != nil {
		return err
	}
	rounds := max(2, b.cfg.n/busyRoundShare)
	floor, floorCPU, err := b.busyFloor(ctx, made, panes, rounds)
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	rest, err := peakMiB(b.tmcp.pid())
	if err != nil {
		return err
	}
	missed, err := b.busyCold(ctx, panes)
	if err != nil {
		return fmt.Errorf("waits on panes not yet streamed: %w", err)
	}
	b.notes.BusyColdMissed, b.notes.BusyColdWaits = missed, len(panes)
	var reactions []time.Duration
	cpu, err := cpuShare(ctx, []int{b.tmcp.pid()}, func() error {
		for round := range rounds {
			got, err := b.busyRound(ctx, panes, round)
			if err != nil {
				return fmt.Errorf("round %d: %w", round+1, err)
			}
			reactions = append(reactions, got...)
		}
		return nil
	})
	if err != nil {
		return err
	}
	peak, err := peakMiB(b.tmcp.pid())
	if err != nil {
		return err
	}
	fs := summarise(floor)
	tm := summarise(reactions)
	p99 := percentile(reactions, 99)
	b.notes.BusyP99Ms = round(ms(p99), 3)
	b.notes.BusyFloorP99Ms = round(ms(percentile(floor, 99)), 3)
	r := durationRow(busyLabel(b.cfg), unitMs, tm, &fs)
	b.put(r.withTarget(fmt.Sprintf("median ≤ %d ms, p99 ≤ %d ms", busyMedianTarget, busyP99Target),
		ms(tm.median) <= busyMedianTarget && ms(p99) <= busyP99Target))
	b.put(valueRow(rowBusyCPU, unitCPU, rounds, cpu, &floorCPU))
	b.put(valueRow(rowBusyMemory, unitMiB, 1, peak, &rest))
	return nil
}

// addBusyPanes makes the busy sessions, one tmux process each, and
// returns their panes and the sessions' names.
func (b *bench) addBusyPanes(ctx context.Context) ([]busyPane, []string, error) {
	var panes []busyPane
	var made []string
	for i := range b.cfg.busySessions {
		name := "busy-" + strconv.Itoa(i)
		args := []string{"new-session", "-d", "-s", name, "-x", strconv.Itoa(paneWidth), "-y", strconv.Itoa(paneHeight), busyCommand}
		for range b.cfg.busyPanes - 1 {
			args = append(args, ";", "new-window", "-d", "-t", name+":", busyCommand)
		}
		args = append(args, ";", "list-panes", "-s", "-t", "="+name, "-F", "#{pane_id} #{pane_tty}")
		sctx, cancel := context.WithTimeout(ctx, manyTimeout)
		out, err := runProcess(sctx, b.srv, args...)
		cancel()
		if err != nil {
			return panes, made, fmt.Errorf("making session %s: %.200w", name, err)
		}
		made = append(made, name)
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			id, tty, ok := strings.Cut(line, " ")
			if !ok {
				return panes, made, fmt.Errorf("list-panes in %s: %q", name, line)
			}
			panes = append(panes, busyPane{benchPane: benchPane{id: id, tty: tty}, session: i})
		}
	}
	if want := b.cfg.busySessions * b.cfg.busyPanes; len(panes) != want {
		return panes, made, fmt.Errorf("made %d busy panes, want %d", len(panes), want)
	}
	// Every pane ticks before anything is timed.
	for _, p := range panes {
		if err := b.srv.awaitScreen(ctx, p.id, "tick"); err != nil {
			return panes, made, err
		}
	}
	return panes, made, nil
}

// busyCold waits once on every pane, all at once, while tmcp streams
// none of them yet, each for a line written busyColdLead after tmcp has
// read every call, and returns how many of the waits missed their line.
// tmcp carries one session at a time, so the later sessions' waits begin
// late, and the ticks push their lines off the screen before they do:
// the count says whether such a wait still finds its line. Afterwards
// tmcp streams each pane (a stream outlives its wait by minutes), as it
// does the panes an agent keeps waiting on, and the timed rounds time
// waits on streamed panes.
func (b *bench) busyCold(ctx context.Context, panes []busyPane) (missed int, err error) {
	start := time.Now()
	waits := make([]func() answer, len(panes))
	texts := make([]string, len(panes))
	for i, p := range panes {
		texts[i] = fmt.Sprintf("COLD-%d", i)
		waits[i], _ = b.tmcp.callAsync(ctx, "wait_for_text", map[string]any{"paneId": p.id,
			"patterns": []string{texts[i]}, "timeoutSeconds": busyWaitSeconds})
	}
	var errs []error
	if err := b.tmcp.session.Ping(ctx, nil); err != nil {
		errs = append(errs, fmt.Errorf("ping after the waits: %w", err))
	} else {
		b.notes.BusyColdReadMs = ms(time.Since(start))
		time.Sleep(busyColdLead) // the point: the lines come this long after the calls
		errs = append(errs, writeBusyLines(panes, func(i int) string { return texts[i] }, func(int, time.Time) {}))
	}
	for i, wait := range waits {
		a := wait()
		var w struct{ Outcome, Matched string }
		switch err := errors.Join(a.err, decode(a.r, &w)); {
		case err != nil:
			errs = append(errs, err)
		case w.Outcome == "timeout":
			missed++
		case w.Outcome != "matched" || !strings.Contains(w.Matched, texts[i]):
			errs = append(errs, fmt.Errorf("wait_for_text %s in %s: outcome %s, matched %q", texts[i], panes[i].id, w.Outcome, w.Matched))
		}
	}
	return missed, errors.Join(errs...)
}

// busyRound sends one wait_for_text per pane, all at once, writes each
// wait's line to its pane's terminal once they have begun, and returns,
// for each, the time from the write to the reply.
func (b *bench) busyRound(ctx context.Context, panes []busyPane, round int) ([]time.Duration, error) {
	type pending struct {
		wait  func() answer
		text  string
		wrote time.Time
	}
	calls := make([]pending, len(panes))
	for i, p := range panes {
		text := fmt.Sprintf("BUSY-%d-%d", round, i)
		wait, _ := b.tmcp.callAsync(ctx, "wait_for_text", map[string]any{"paneId": p.id,
			"patterns": []string{text}, "timeoutSeconds": busyWaitSeconds})
		calls[i] = pending{wait: wait, text: text}
	}
	// Every pane is streamed (busyWarm): a wait begins where the stream
	// stands as tmcp reads it, and the ping's answer says all are read.
	if err := b.tmcp.session.Ping(ctx, nil); err != nil {
		for _, c := range calls {
			c.wait()
		}
		return nil, fmt.Errorf("ping after the waits: %w", err)
	}
	time.Sleep(busyLead) // the point: every wait has begun before its line
	if err := writeBusyLines(panes, func(i int) string { return calls[i].text }, func(i int, at time.Time) { calls[i].wrote = at }); err != nil {
		for _, c := range calls {
			c.wait()
		}
		return nil, err
	}
	var errs []error
	got := make([]time.Duration, 0, len(calls))
	for i, c := range calls {
		a := c.wait()
		if a.err != nil {
			errs = append(errs, a.err)
			continue
		}
		var w struct{ Outcome, Matched string }
		if err := decode(a.r, &w); err != nil {
			errs = append(errs, err)
			continue
		}
		if w.Outcome != "matched" || !strings.Contains(w.Matched, c.text) {
			errs = append(errs, fmt.Errorf("wait_for_text %q in %s: outcome %s, matched %q", c.text, panes[i].id, w.Outcome, w.Matched))
			continue
		}
		got = append(got, a.at.Sub(c.wrote))
	}
	return got, errors.Join(errs...)
}

// writeBusyLines writes the line text(i) to each pane's terminal, one
// after the other, calling wrote with the time just before each write.
func writeBusyLines(panes []busyPane, text func(int) string, wrote func(int, time.Time)) error {
	for i, p := range panes {
		tty, err := openTTY(p.benchPane)
		if err != nil {
			return err
		}
		wrote(i, time.Now())
		_, err = tty.WriteString(text(i) + "\r\n")
		tty.Close()
		if err != nil {
			return fmt.Errorf("writing to pane %s: %w", p.id, err)
		}
	}
	return nil
}

// busyFloor attaches one bare control client per busy session and times
// rounds of the same writes: from each write to the moment the client of
// its session reads the line. It returns those times and the clients'
// CPU over the rounds.
func (b *bench) busyFloor(ctx context.Context, sessions []string, panes []busyPane, rounds int) ([]time.Duration, float64, error) {
	clients := make([]*controlFloor, len(sessions))
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.close()
			}
		}
	}()
	pids := make([]int, len(sessions))
	for i, name := range sessions {
		c, err := startControlFloor(ctx, b.srv, name, streamFloorFlags)
		if err != nil {
			return nil, 0, err
		}
		clients[i], pids[i] = c, c.pid()
	}
	var floor []time.Duration
	var busy float64
	cpu, err := cpuShare(ctx, pids, func() error {
		var err error
		busy, err = machineBusy(func() error {
			for round := range rounds {
				got, err := busyFloorRound(clients, panes, round, 0)
				if err != nil {
					return fmt.Errorf("round %d: %w", round+1, err)
				}
				floor = append(floor, got...)
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	b.notes.BusyMachinePercent = round(busy, 1)
	// The same rounds with this process busy on every core as the lines
	// are written, as a wave of replies keeps a client and tmcp busy: what
	// the floor is worth on a machine the panes already load.
	var burnt []time.Duration
	for round := range rounds {
		got, err := busyFloorRound(clients, panes, rounds+round, busyBurn)
		if err != nil {
			return nil, 0, fmt.Errorf("round %d with the cores busy: %w", round+1, err)
		}
		burnt = append(burnt, got...)
	}
	b.notes.BusyBurntFloorMedianMs = round(ms(percentile(burnt, 50)), 3)
	b.notes.BusyBurntFloorP99Ms = round(ms(percentile(burnt, 99)), 3)
	return floor, cpu, nil
}

// busyFloorRound writes one line to each pane while each session's
// client reads its stream on a goroutine of its own, and returns the time
// from each write to its client reading the line. With burn > 0, one
// goroutine per core spins for that long from the first write.
func busyFloorRound(clients []*controlFloor, panes []busyPane, round int, burn time.Duration) ([]time.Duration, error) {
	texts := make([]string, len(panes))
	wrote := make([]time.Time, len(panes))
	seen := make([]time.Time, len(panes))
	for i := range panes {
		texts[i] = fmt.Sprintf("FLOOR-%d-%d", round, i)
	}
	errs := make([]error, len(clients))
	var readers sync.WaitGroup
	for s, c := range clients {
		readers.Go(func() {
			markers := map[string]*marker{}
			index := map[string]int{}
			for i, p := range panes {
				if p.session == s {
					markers[p.id], index[p.id] = newMarker(texts[i]+"\r"), i
				}
			}
			limit := time.AfterFunc(floorOutputLimit, func() {
				c.killed.Store(true)
				_ = c.cmd.Process.Kill()
			})
			defer limit.Stop()
			for len(markers) > 0 {
				ev, err := c.read()
				if err != nil {
					errs[s] = err
					return
				}
				if ev != eventOutput {
					continue
				}
				if m := markers[string(c.outputPane)]; m != nil && m.feed(c.data) {
					i := index[string(c.outputPane)]
					seen[i] = time.Now()
					delete(markers, string(c.outputPane))
				}
			}
		})
	}
	if burn > 0 {
		spin(burn)
	}
	err := writeBusyLines(panes, func(i int) string { return texts[i] }, func(i int, at time.Time) { wrote[i] = at })
	readers.Wait()
	if err = errors.Join(append(errs, err)...); err != nil {
		return nil, err
	}
	got := make([]time.Duration, len(panes))
	for i := range panes {
		got[i] = seen[i].Sub(wrote[i])
	}
	return got, nil
}

// spin keeps every core busy for d, on goroutines that return at once.
func spin(d time.Duration) {
	end := time.Now().Add(d)
	for range runtime.NumCPU() {
		go func() {
			for time.Now().Before(end) {
			}
		}()
	}
}

// machineBusy runs f and returns how busy the machine's cores were
// meanwhile, in percent of all of them, from /proc/stat.
func machineBusy(f func() error) (float64, error) {
	busy0, total0, err := cpuTotals()
	if err != nil {
		return 0, err
	}
	if err := f(); err != nil {
		return 0, err
	}
	busy1, total1, err := cpuTotals()
	if err != nil {
		return 0, err
	}
	if total1 <= total0 {
		return 0, nil
	}
	return float64(busy1-busy0) / float64(total1-total0) * 100, nil
}

// cpuTotals returns the machine's busy and total clock ticks so far: the
// first line of /proc/stat, idle and iowait counted as not busy.
func cpuTotals() (busy, total int, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: %q", line)
	}
	for i, f := range fields[1:] {
		n, err := strconv.Atoi(f)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, nil
}

// cpuShare runs f and returns the CPU the processes pids used meanwhile,
// in percent of one core.
func cpuShare(ctx context.Context, pids []int, f func() error) (float64, error) {
	before, err := cpuTicks(pids)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := f(); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	after, err := cpuTicks(pids)
	if err != nil {
		return 0, err
	}
	return float64(after-before) / clockTicks / time.Since(start).Seconds() * 100, nil
}

// cpuTicks sums the user and system time of processes, in clock ticks.
func cpuTicks(pids []int) (int, error) {
	total := 0
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0, err
		}
		// The command name, in parentheses, may hold spaces: fields count
		// from after its closing parenthesis.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 13 {
			return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
		}
		for _, f := range fields[11:13] { // utime, stime
			n, err := strconv.Atoi(f)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
			}
			total += n
		}
	}
	return total, nil
}
