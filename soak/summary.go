package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

// summary is what a soak found.
type summary struct {
	cfg         config
	st          *stats
	kills       *killReport
	tmuxVersion string
	elapsed     time.Duration
	interrupted bool
	early       bool // the calls ended before their time: a crash, a failed set-up
	stop        stopReport
	restarts    []restart
	// warmEnd is when, since the calls began, tmcp is taken as warmed up
	// (the first quarter of the duration); tailFrom and callsEnd bound the
	// end that is judged against it (see soak.tailFrom): after callsEnd
	// only the calls in flight were left to finish.
	warmEnd, tailFrom, callsEnd time.Duration
	samples                     []sample
	// panesMade and warmUp are how long making the panes took, and then
	// filling their streams and running each once.
	panesMade, warmUp time.Duration
	settleTook        time.Duration
	// liveFirst and liveLast are the live heap after the first quarter
	// and at the end, each after a collection.
	liveFirst, liveLast int64

	goroutinesStart, goroutinesBefore, goroutinesAfter, goroutinesClosed int
	stacksBefore, stacksAfter, stacksClosed                              map[string]int
	procsBefore, procsAfter, procsClosed                                 childProcs
}

// memory is how one measure of memory went over the soak.
type memory struct {
	name              string
	first, peak, last int64 // after the first quarter; highest; highest at the end (from tailFrom)
	limit             int64 // negative: not judged
	rule              string
}

func (m memory) ok() bool { return m.limit < 0 || m.last <= m.limit }

// memoryOf reads one measure from the samples: the value once the first
// quarter is over, against the highest at the end (from tailFrom).
func (s *summary) memoryOf(name string, value func(sample) int64) memory {
	m := memory{name: name}
	if len(s.samples) == 0 {
		return m
	}
	m.first = value(s.samples[0])
	for _, x := range s.samples {
		v := value(x)
		m.peak = max(m.peak, v)
		if x.at <= s.warmEnd {
			m.first = v
		}
		if x.at >= s.tailFrom && x.at <= s.callsEnd {
			m.last = max(m.last, v)
		}
	}
	return m
}

// memories are the measures of memory that must stay flat: the RSS, as
// sampled, and the live heap, measured after a collection after the
// first quarter and at the end.
func (s *summary) memories() []memory {
	rss := s.memoryOf("RSS", func(x sample) int64 { return x.rss })
	rss.limit = int64(float64(rss.first)*s.cfg.RSSFactor) + s.cfg.RSSSlack
	rss.rule = fmt.Sprintf("%.2g× after the first quarter + %s", s.cfg.RSSFactor, mib(s.cfg.RSSSlack))
	if s.cfg.RSSFactor <= 0 {
		rss.limit = -1
	}
	inuse := s.memoryOf("Go heap in use", func(x sample) int64 { return x.heap })
	live := memory{name: "live heap", first: s.liveFirst, last: s.liveLast,
		limit: int64(float64(s.liveFirst)*s.cfg.LiveFactor) + s.cfg.LiveSlack,
		rule:  fmt.Sprintf("%.3g× after the first quarter + %s", s.cfg.LiveFactor, mib(s.cfg.LiveSlack))}
	live.peak = max(live.first, live.last)
	if s.liveFirst == 0 {
		live.limit = -1 // the soak ended before its first quarter did
	}
	inuse.limit = -1 // reported, not judged: it holds garbage not yet collected
	return []memory{rss, live, inuse}
}

// level is how a count that must stay flat went over the soak: its level
// once tmcp warmed up against its level at the end.
type level struct {
	name      string
	warm, end int // medians over the two windows (see levelOf)
	peak      int // the highest sample
	limit     int // negative: not judged
	rule      string
}

func (l level) ok() bool { return l.limit < 0 || l.end <= l.limit }

// levelOf reads a count from the samples. Its warm level is the median
// over the second half of the warm-up (up to warmEnd), when tmcp has
// warmed up and nothing is disrupted yet; its end level the median from
// tailFrom to callsEnd, when every disruption is over and the calls go on. Medians, so that a burst of
// calls in flight does not count as growth. The end may be at most factor
// times the warm level plus slack; a factor of 0, or a window without
// samples, is not judged.
func levelOf(name string, samples []sample, warmEnd, tailFrom, callsEnd time.Duration, value func(sample) int, factor float64, slack int) level {
	l := level{name: name, limit: -1}
	var warm, end []int
	for _, x := range samples {
		v := value(x)
		l.peak = max(l.peak, v)
		switch {
		case x.at >= warmEnd/2 && x.at <= warmEnd:
			warm = append(warm, v)
		case x.at >= tailFrom && x.at <= callsEnd:
			end = append(end, v)
		}
	}
	if len(warm) == 0 || len(end) == 0 {
		return l
	}
	l.warm, l.end = median(warm), median(end)
	if factor > 0 {
		l.limit = int(float64(l.warm)*factor) + slack
		l.rule = fmt.Sprintf("%.3g× once warmed up + %d", factor, slack)
	}
	return l
}

// median returns the middle value of vs (the upper one of an even count).
func median(vs []int) int {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// levels are the counts that must stay flat: goroutines and open files.
func (s *summary) levels() []level {
	return []level{
		levelOf("goroutines", s.samples, s.warmEnd, s.tailFrom, s.callsEnd, func(x sample) int { return x.goroutines }, s.cfg.GoroutineFactor, s.cfg.GoroutineSlack),
		levelOf("open files", s.samples, s.warmEnd, s.tailFrom, s.callsEnd, func(x sample) int { return x.files }, s.cfg.FilesFactor, s.cfg.FilesSlack),
	}
}

// reasons lists why the soak failed; none means it passed.
func (s *summary) reasons() []string {
	var out []string
	if s.interrupted {
		out = append(out, "interrupted before its time was up")
	}
	s.st.mu.Lock()
	for _, cat := range sortedKeys(s.st.failCats) {
		out = append(out, fmt.Sprintf("%d failure(s) of kind %q", s.st.failCats[cat], cat))
	}
	s.st.mu.Unlock()
	if s.interrupted {
		return out
	}
	if s.early {
		if s.procsClosed.Total > 0 {
			out = append(out, fmt.Sprintf("child processes left after closing tmcp: %s", strings.Join(s.procsClosed.List, ", ")))
		}
		return append(out, "the soak ended before its time")
	}
	if s.goroutinesAfter > s.goroutinesBefore {
		out = append(out, fmt.Sprintf("goroutines leaked while serving: %d before, %d after settling %.1fs", s.goroutinesBefore, s.goroutinesAfter, s.settleTook.Seconds()))
	}
	if s.procsAfter.Tmux > s.procsBefore.Tmux || s.procsAfter.Zombies > 0 {
		out = append(out, fmt.Sprintf("tmux processes leaked while serving: %d before, %d after (%d zombies)", s.procsBefore.Tmux, s.procsAfter.Tmux, s.procsAfter.Zombies))
	}
	if s.goroutinesClosed > s.goroutinesStart {
		out = append(out, fmt.Sprintf("goroutines left after closing tmcp: %d before it started, %d after", s.goroutinesStart, s.goroutinesClosed))
	}
	if s.procsClosed.Total > 0 {
		out = append(out, fmt.Sprintf("child processes left after closing tmcp: %s", strings.Join(s.procsClosed.List, ", ")))
	}
	for _, m := range s.memories() {
		if !m.ok() {
			out = append(out, fmt.Sprintf("%s grew: %s at the end, over the limit %s (%s; %s after the first quarter)",
				m.name, mib(m.last), mib(m.limit), m.rule, mib(m.first)))
		}
	}
	for _, l := range s.levels() {
		if !l.ok() {
			out = append(out, fmt.Sprintf("%s grew: %d at the end, over the limit %d (%s; %d once warmed up)", l.name, l.end, l.limit, l.rule, l.warm))
		}
	}
	done := map[string]int{}
	for _, r := range s.restarts {
		if r.failed == "" {
			done[r.kind]++
		}
		if r.kind == tmuxRestart && r.slowest > commandDeadline+s.cfg.Slack {
			out = append(out, fmt.Sprintf("a call in flight when tmux was killed ended %.2fs later (bound %.1fs)", r.slowest.Seconds(), (commandDeadline+s.cfg.Slack).Seconds()))
		}
	}
	if !s.stop.done && s.cfg.StopFor > 0 {
		out = append(out, "the tmux server was never stopped")
	}
	if done[tmuxRestart] < s.cfg.TmuxRestarts {
		out = append(out, fmt.Sprintf("tmux was restarted %d times, not %d", done[tmuxRestart], s.cfg.TmuxRestarts))
	}
	if done[tmcpRestart] < s.cfg.TmcpRestarts {
		out = append(out, fmt.Sprintf("tmcp was restarted %d times, not %d", done[tmcpRestart], s.cfg.TmcpRestarts))
	}
	if s.kills.kills == 0 && s.cfg.KillEvery > 0 {
		out = append(out, "no pane was killed")
	}
	return out
}

func (s *summary) passed() bool { return len(s.reasons()) == 0 }

// print writes the summary.
func (s *summary) print(w io.Writer) {
	reasons := s.reasons()
	verdict := "PASS"
	if len(reasons) > 0 {
		verdict = "FAIL"
	}
	st := s.st
	st.mu.Lock()
	total := 0
	for _, n := range st.calls {
		total += n
	}
	fmt.Fprintf(w, "tmcp soak: %s\n", verdict)
	flood := "no flooding pane"
	switch {
	case s.cfg.Flood && s.cfg.Neighbour:
		flood = "1 flooding pane and its quiet neighbour"
	case s.cfg.Flood:
		flood = "1 flooding pane"
	}
	fmt.Fprintf(w, "  duration    %.1fs of calls (t+0), %d panes + %s, seed %d, tmux %s, GOMAXPROCS %d\n",
		s.elapsed.Seconds(), s.cfg.Panes, flood, s.cfg.Seed, s.tmuxVersion, runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "              warmed up by t+%.1fs; the end judged from t+%.1fs to t+%.1fs (the calls go on a quarter of -duration past the last disruption)\n",
		s.warmEnd.Seconds(), s.tailFrom.Seconds(), s.callsEnd.Seconds())
	fmt.Fprintf(w, "  set-up      panes made in %.1fs, their streams filled and each run once in %.1fs more\n", s.panesMade.Seconds(), s.warmUp.Seconds())
	if s.cfg.SerialStart {
		fmt.Fprintf(w, "              streams started one pane at a time (-serial-start)\n")
	}
	fmt.Fprintf(w, "  calls       %d (%.0f/s); bounds: waits timeoutSeconds+%.0fs, others %.0fs\n",
		total, float64(total)/max(s.elapsed.Seconds(), 0.001), (commandDeadline + s.cfg.Slack).Seconds(), (commandDeadline + s.cfg.Slack).Seconds())
	fmt.Fprintf(w, "    %-16s %7s %9s  %s\n", "tool", "calls", "max", "outcomes")
	for _, tool := range sortedKeys(st.calls) {
		var outs []string
		for _, o := range sortedKeys(st.outcomes[tool]) {
			outs = append(outs, fmt.Sprintf("%s %d", o, st.outcomes[tool][o]))
		}
		fmt.Fprintf(w, "    %-16s %7d %8.2fs  %s\n", tool, st.calls[tool], st.maxLat[tool].Seconds(), strings.Join(outs, ", "))
	}
	var kinds []string
	for _, k := range sortedKeys(st.errKinds) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, st.errKinds[k]))
	}
	fmt.Fprintf(w, "  errors      %s\n", orNothing(strings.Join(kinds, ", ")))
	k := s.kills
	k.mu.Lock()
	var kouts []string
	for _, o := range sortedKeys(k.outcomes) {
		kouts = append(kouts, fmt.Sprintf("%s %d", o, k.outcomes[o]))
	}
	if s.cfg.KillEvery > 0 {
		fmt.Fprintf(w, "  kills       %d panes killed under a call in flight (every %v); the calls: %s; slowest to end after its kill: %.2fs (bound %.1fs)\n",
			k.kills, s.cfg.KillEvery, orNothing(strings.Join(kouts, ", ")), k.maxAfter.Seconds(), (commandDeadline + s.cfg.Slack).Seconds())
	} else {
		fmt.Fprintf(w, "  kills       none\n")
	}
	k.mu.Unlock()
	if s.stop.done {
		fmt.Fprintf(w, "  stop        tmux server (pid %d) stopped at t+%.1fs for %.2fs\n", s.stop.pid, s.stop.at.Seconds(), s.stop.length.Seconds())
		for _, d := range s.stop.during {
			fmt.Fprintf(w, "              %s\n", d)
		}
		fmt.Fprintf(w, "              %s\n", s.stop.afterwards)
	} else {
		fmt.Fprintf(w, "  stop        none\n")
	}
	if len(s.restarts) == 0 {
		fmt.Fprintf(w, "  restarts    none\n")
	}
	for i, r := range s.restarts {
		head := "  restarts    "
		if i > 0 {
			head = "              "
		}
		fmt.Fprintf(w, "%s%s at t+%.1fs: %s\n", head, r.kind, r.from.Sub(epoch()).Seconds(), r.describe())
		for _, l := range r.details() {
			fmt.Fprintf(w, "                %s\n", l)
		}
	}
	var notes []string
	for _, n := range sortedKeys(st.notes) {
		notes = append(notes, fmt.Sprintf("%s: %d", n, st.notes[n]))
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "  notes       %s\n", strings.Join(notes, "\n              "))
	}
	if !s.interrupted && !s.early {
		fmt.Fprintf(w, "  goroutines  %d at start, %d before the calls, %d after them (settled in %.1fs), %d after closing tmcp\n",
			s.goroutinesStart, s.goroutinesBefore, s.goroutinesAfter, s.settleTook.Seconds(), s.goroutinesClosed)
		if s.goroutinesAfter > s.goroutinesBefore {
			fmt.Fprintf(w, "              grew: %s\n", strings.Join(stackGrowth(s.stacksBefore, s.stacksAfter), "\n                    "))
		}
		if s.goroutinesClosed > s.goroutinesStart {
			fmt.Fprintf(w, "              left after closing: %s\n", strings.Join(stackGrowth(nil, s.stacksClosed), "\n                    "))
		}
		fmt.Fprintf(w, "  processes   tmux children %d before the calls, %d after them, %d after closing tmcp (all children: %d, %d, %d)\n",
			s.procsBefore.Tmux, s.procsAfter.Tmux, s.procsClosed.Tmux, s.procsBefore.Total, s.procsAfter.Total, s.procsClosed.Total)
		for _, m := range s.memories() {
			limit := "not judged"
			if m.limit >= 0 {
				limit = "limit " + mib(m.limit)
			}
			last := "highest at the end"
			if m.name == "live heap" {
				last = "at the end"
			}
			fmt.Fprintf(w, "  memory      %-14s after the first quarter %s, peak %s, %s %s (%s)\n",
				m.name, mib(m.first), mib(m.peak), last, mib(m.last), limit)
		}
		for _, l := range s.levels() {
			limit := "not judged"
			if l.limit >= 0 {
				limit = fmt.Sprintf("limit %d: %s", l.limit, l.rule)
			}
			fmt.Fprintf(w, "  flat        %-14s once warmed up %d, peak %d, at the end %d (medians; %s)\n", l.name, l.warm, l.peak, l.end, limit)
		}
	}
	st.writeFailures(w)
	st.mu.Unlock()
	if len(reasons) > 0 {
		fmt.Fprintf(w, "FAIL: %s\n", strings.Join(reasons, "; "))
	} else {
		fmt.Fprintln(w, "PASS")
	}
}

func orNothing(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// writeFailures writes the count of failures and the ones kept (the
// verdict counts them by category); s.mu is held.
func (s *stats) writeFailures(w io.Writer) {
	if len(s.failures) == 0 {
		return
	}
	n := 0
	for _, c := range s.failCats {
		n += c
	}
	fmt.Fprintf(w, "  failures    %d", n)
	if n > len(s.failures) {
		fmt.Fprintf(w, " (first %d shown)", len(s.failures))
	}
	fmt.Fprintln(w)
	for _, f := range s.failures {
		fmt.Fprintf(w, "    %s\n", f)
	}
}
