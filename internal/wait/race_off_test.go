//go:build !race

package wait

const raceDetector = false
