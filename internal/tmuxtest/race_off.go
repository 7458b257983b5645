//go:build !race

package tmuxtest

// RaceEnabled reports whether the race detector is on. It slows everything
// several times, so tests that time things widen their margins.
const RaceEnabled = false
