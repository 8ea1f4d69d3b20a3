//go:build unix

package monitor_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, user and system, on
// every thread: the garbage collector's workers included.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
