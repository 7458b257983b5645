//go:build race

package main

// raceDetector is true in a build with the race detector, which slows
// reading a request off stdin by more than the 1 ms some tests time.
const raceDetector = true
