package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// EndSignals are the signals that end a command the way its own quit does:
// a screen stops and restores the terminal (alternate screen, raw mode,
// mouse reporting), printed output is completed (a JSON array closed, a
// report written), a tracefs instance removed. SIGHUP (the terminal went
// away) is left alone when it is ignored (nohup CMD), as the caller asked.
func EndSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// SignalError is the cause of a context NotifyContext ended: the signal
// that arrived.
type SignalError struct{ Signal syscall.Signal }

func (e *SignalError) Error() string { return e.Signal.String() + " received" }

// Name is the signal's name as kill(1) takes it: "SIGTERM".
func (e *SignalError) Name() string {
	switch e.Signal {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return e.Signal.String()
}

// NotifyContext is signal.NotifyContext over EndSignals, whose context
// keeps the signal that ended it as its cause (context.Cause), so that
// ExitStatus can tell how the command ended.
func NotifyContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, EndSignals()...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			if sig, ok := s.(syscall.Signal); ok {
				cancel(&SignalError{Signal: sig})
			} else {
				cancel(nil)
			}
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel(context.Canceled)
		})
	}
}

// ExitStatus is the exit status of a screen (smctop's dashboard,
// smcdump -I) that ended with ctx from NotifyContext, code when it ended
// by itself. SIGTERM and SIGHUP give 128 + the signal, as a shell reports
// a command they killed (143, 129): the screen was stopped, by a service
// manager or a lost terminal, not quit, and a script or supervisor must be
// able to tell; the terminal is restored first, which the default action
// would not do. SIGINT keeps code: in the screen's raw mode ^C is a key
// that quits like q, so a SIGINT comes from someone who chose to end it.
func ExitStatus(ctx context.Context, code int) int {
	var se *SignalError
	if errors.As(context.Cause(ctx), &se) && se.Signal != syscall.SIGINT {
		return 128 + int(se.Signal)
	}
	return code
}
