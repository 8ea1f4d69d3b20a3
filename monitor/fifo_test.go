package monitor

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestReplayFIFO: a capture read from a FIFO is read once. Restarting it,
// or going back (which reads again from the start), would open the FIFO
// again and wait, holding the replay's lock, for a writer that has gone
// (the dashboard froze and q did not quit): both leave the replay as it
// is and say why. A quiet writer does not keep Run from ending with its
// context.
func TestReplayFIFO(t *testing.T) {
	data, err := os.ReadFile("../samples/multilink.pcap")
	if err != nil {
		t.Fatal(err)
	}
	path := testutil.FIFO(t)
	quiet := make(chan struct{})
	defer close(quiet)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.Write(data)
		<-quiet // open, quiet: the replay waits for more
	}()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := OpenWireContext(ctx, path, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Hold()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	frames := func() int { n, _, _, _ := w.Progress(); return n }
	waitFor(t, "the capture's frames", func() bool { return frames() == 4572 })

	w.Restart()
	w.Seek(-10 * time.Second)
	var note string
	n := -1
	asked := make(chan struct{})
	go func() { // the old freeze held the lock that these take
		defer close(asked)
		note, n = w.Note(), frames()
	}()
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the replay froze after restart and seek back")
	}
	if note != "read once: no restart" {
		t.Errorf("note %q, want why the replay did not restart", note)
	}
	if n != 4572 {
		t.Errorf("%d frames after restart and seek back, want the 4572 read", n)
	}
	m := New(Options{Wire: w, Now: fixedClock()})
	s := m.Refresh()
	var shown bool
	for _, src := range s.Sources {
		shown = shown || src.Name == SourceWireName && src.Error == "read once: no restart"
	}
	if !shown {
		t.Errorf("the snapshot's wire source does not say why: %+v", s.Sources)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not end with its context while the FIFO's writer was quiet")
	}
}
