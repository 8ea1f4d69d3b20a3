package monitor

import (
	"context"
	"testing"
	"time"
)

// waitFor polls cond until it holds, failing after a deadline: the replay
// runs in its own goroutine.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestReplayControls: a held replay starts paused, steps one second of
// capture time, seeks forward and back (back reads again from the start),
// restarts, and waits at the end instead of returning; the monitor logs
// each event once across restarts.
func TestReplayControls(t *testing.T) {
	w, err := OpenWire("../samples/multilink.pcap", "", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	w.Hold()
	w.SetPaused(true)
	m := New(Options{Wire: w, Now: fixedClock()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	frames := func() int { n, _, _, _ := w.Progress(); return n }
	clock := func() time.Time { _, _, _, at := w.Replay(); return at }

	w.Step(time.Second)
	waitFor(t, "the first step", func() bool { p, _, _, _ := w.Replay(); return p && frames() > 0 })
	first := clock()
	n := frames()
	w.Step(time.Second)
	waitFor(t, "the second step", func() bool { p, _, _, _ := w.Replay(); return p && clock().After(first) })
	if d := clock().Sub(first); d != time.Second {
		t.Errorf("a step of 1 s moved the capture %v", d)
	}
	if frames() <= n {
		t.Errorf("the step read no frame")
	}
	at := clock()
	w.Seek(5 * time.Second)
	waitFor(t, "the seek forward", func() bool { p, _, _, _ := w.Replay(); return p && clock().Sub(at) > 3*time.Second })
	if d := clock().Sub(at); d != 5*time.Second {
		t.Errorf("a seek of 5 s moved the capture %v", d)
	}
	// The capture has a second without frames (the clients stopped before
	// the failover): steps go through it one second at a time.
	for range 3 {
		at := clock()
		w.Step(time.Second)
		waitFor(t, "a step", func() bool { p, _, _, _ := w.Replay(); return p && clock().After(at) })
	}
	s := m.Refresh()
	evs := len(s.Events)
	at = clock()
	w.Seek(-3 * time.Second)
	waitFor(t, "the seek back", func() bool {
		p, _, gen, _ := w.Replay()
		return p && gen == 1 && !clock().IsZero() && clock().Before(at)
	})
	if d := at.Sub(clock()); d != 3*time.Second {
		t.Errorf("a seek of -3 s moved the capture back %v", d)
	}
	w.Restart()
	w.SetPaused(false)
	w.Seek(time.Hour) // to the end at once
	waitFor(t, "the end", func() bool { _, _, ended, _ := w.Progress(); return ended })
	s = m.Refresh()
	seen := map[Event]bool{}
	for _, e := range s.Events {
		if seen[e] {
			t.Errorf("event logged twice after restarts: %+v", e)
		}
		seen[e] = true
	}
	if len(s.Events) < evs {
		t.Errorf("%d events at the end, %d halfway", len(s.Events), evs)
	}
	if _, _, gen, _ := w.Replay(); gen != 2 {
		t.Errorf("%d restarts, want 2 (seek back, restart)", gen)
	}
	select {
	case err := <-done:
		t.Fatalf("a held replay returned at the end: %v", err)
	default:
	}
}
