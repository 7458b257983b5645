//go:build race

package wait

// raceDetector is true in a build with the race detector, whose slowdown
// spoils tests that time events to the millisecond.
const raceDetector = true
