//go:build !race

package output

// raceDetector: see race_on_test.go.
const raceDetector = false
