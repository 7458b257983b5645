//go:build race

package main

// raceEnabled reports whether the race detector is on: it slows
// everything several times, so the test widens its margins.
const raceEnabled = true
