package cli

import (
	"os"
	"os/signal"
	"slices"
	"syscall"
	"testing"
)

// TestEndSignalsKeepIgnoredHUP checks that SIGHUP, when ignored (nohup),
// stays out of the signals that end a command.
func TestEndSignalsKeepIgnoredHUP(t *testing.T) {
	if !slices.Contains(EndSignals(), os.Signal(syscall.SIGHUP)) {
		t.Errorf("EndSignals() = %v, want SIGHUP while it is not ignored", EndSignals())
	}
	signal.Ignore(syscall.SIGHUP)
	defer signal.Reset(syscall.SIGHUP)
	if slices.Contains(EndSignals(), os.Signal(syscall.SIGHUP)) {
		t.Errorf("EndSignals() = %v with SIGHUP ignored, want it left out", EndSignals())
	}
}
