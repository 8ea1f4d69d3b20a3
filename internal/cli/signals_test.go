package cli

import (
	"context"
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

// TestExitStatus: SIGTERM and SIGHUP end a screen with 128+signal,
// SIGINT and an ordinary end with the screen's own status.
func TestExitStatus(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}, {syscall.SIGINT, 3}} {
		// Caught here too, so that a SIGHUP ignored by another test (which
		// signal.Reset does not undo) is taken by NotifyContext, not lost.
		keep := make(chan os.Signal, 1)
		signal.Notify(keep, tt.sig)
		ctx, stop := NotifyContext(context.Background())
		if err := syscall.Kill(syscall.Getpid(), tt.sig); err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		stop()
		signal.Stop(keep)
		if got := ExitStatus(ctx, 3); got != tt.want {
			t.Errorf("%v: exit status %d, want %d", tt.sig, got, tt.want)
		}
	}
	ctx, stop := NotifyContext(context.Background())
	stop()
	if got := ExitStatus(ctx, 3); got != 3 {
		t.Errorf("no signal: exit status %d, want 3", got)
	}
}
