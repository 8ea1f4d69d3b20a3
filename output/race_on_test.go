//go:build race

package output

// raceDetector: the tests run under the race detector, ten times slower;
// the long differential tests then take a sample of their cases.
const raceDetector = true
