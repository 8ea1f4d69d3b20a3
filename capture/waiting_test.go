package capture

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

var errStop = errors.New("stopped by the test")

func fifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

// deadline bounds a wait that must end: the test fails rather than hang.
func deadline(t *testing.T, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still waiting after 20 s", what)
	}
}

// TestOpenContextNoWriter: open(2) of a FIFO no one writes waits in the
// kernel; the context ends the wait with its cause.
func TestOpenContextNoWriter(t *testing.T) {
	path := fifo(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		_, err = OpenContext(ctx, path)
	}()
	cancel(errStop)
	deadline(t, "open", done)
	if !errors.Is(err, errStop) {
		t.Errorf("open: %v, want the context's cause", err)
	}
}

// TestWaitingInput: a FIFO whose writer wrote part of a capture and then
// holds it open: the frames written are read, OnWait is called before
// the read that waits for more, and the context ends that read.
func TestWaitingInput(t *testing.T) {
	data, err := os.ReadFile("../testdata/reference/pingpong.pcap")
	if err != nil {
		t.Fatal(err)
	}
	// The file header and the first frames, whole: the records of
	// classic pcap are 16 bytes and then the frame.
	end, frames := 24, 0
	for frames < 20 {
		end += 16 + int(le32(data[end+8:]))
		frames++
	}
	path := fifo(t)
	writer := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			writer <- nil
			return
		}
		w.Write(data[:end])
		writer <- w // held open: the reader waits for more
	}()
	ctx, cancel := context.WithCancelCause(context.Background())
	r, err := OpenContext(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := <-writer
	if w == nil {
		t.Fatal("the writer could not open the FIFO")
	}
	defer w.Close()
	if !r.Waits() {
		t.Fatal("a FIFO read as a file that does not wait")
	}
	waited := make(chan int, 1)
	read := 0
	r.OnWait(func() { // the latest count only
		select {
		case <-waited:
		default:
		}
		waited <- read
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if _, err = r.Next(); err != nil {
				return
			}
			read++
		}
	}()
	select {
	case n := <-waited:
		// Waits before the first frames as well (the header may come
		// before them); the one that matters comes after all of them.
		for n < frames {
			select {
			case n = <-waited:
			case <-time.After(20 * time.Second):
				t.Fatalf("OnWait not called after the %d frames written (last at %d)", frames, n)
			}
		}
	case <-time.After(20 * time.Second):
		t.Fatal("OnWait never called")
	}
	cancel(errStop)
	deadline(t, "the read waiting on the writer", done)
	if read != frames || !errors.Is(err, errStop) {
		t.Errorf("read %d frames, then %v; want %d, then the context's cause", read, err, frames)
	}
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
