package testutil

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// FIFO makes a FIFO in a temporary directory (the test is skipped where
// the file system cannot hold one).
func FIFO(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

// FIFOWriter opens FIFO path for writing once a reader has it open, the
// event that a program given the FIFO is up (its signal handlers
// installed before it opened its input): with O_NONBLOCK the open fails
// until then instead of waiting. The writer is closed when the test ends.
// who names the reader in the failure.
func FIFOWriter(t testing.TB, path, who string) *os.File {
	t.Helper()
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			t.Cleanup(func() { w.Close() })
			return w
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("%s never opened the FIFO: %v", who, err)
		}
	}
}

// Drained waits until the reader of the FIFO whose writer's end is w has
// read everything written to it (FIONREAD on w says what is unread): the
// event that a program took what it was given.
func Drained(t testing.TB, w *os.File, who string) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		n, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ) // FIONREAD
		if err != nil {
			t.Fatalf("FIONREAD: %v", err)
		}
		if n == 0 {
			return
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("%s did not read the FIFO: %d bytes unread after 20 s", who, n)
		}
	}
}
