package cli

import (
	"os"
	"os/signal"
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
