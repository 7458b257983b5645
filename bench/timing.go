package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// summary is what a measurement reports of its timed iterations.
type summary struct {
	n       int
	median  time.Duration
	p90     time.Duration
	samples []time.Duration // every iteration's, sorted: the charts draw them
}

// sample runs once warmups times, then n times, and summarises the
// durations the last n reported. Each iteration reports its own duration,
// so it can keep set-up and teardown out of what is timed.
func sample(ctx context.Context, warmups, n int, once func(context.Context) (time.Duration, error)) (summary, error) {
	ds := make([]time.Duration, 0, n)
	for i := range warmups + n {
		if err := ctx.Err(); err != nil {
			return summary{}, err
		}
		d, err := once(ctx)
		if err != nil {
			return summary{}, fmt.Errorf("iteration %d: %w", i+1, err)
		}
		if i >= warmups {
			ds = append(ds, d)
		}
	}
	return summarise(ds), nil
}

// timed turns an action into an iteration whose duration is the action's.
func timed(action func(context.Context) error) func(context.Context) (time.Duration, error) {
	return func(ctx context.Context) (time.Duration, error) {
		start := time.Now()
		err := action(ctx)
		return time.Since(start), err
	}
}

// summarise computes the median (the mean of the middle two for an even
// count) and the nearest-rank 90th percentile.
func summarise(ds []time.Duration) summary {
	if len(ds) == 0 {
		return summary{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	median := s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	p90 := s[(9*n+9)/10-1] // rank ⌈0.9·n⌉, 1-based
	return summary{n: n, median: median, p90: p90, samples: s}
}

// ms expresses a duration in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
