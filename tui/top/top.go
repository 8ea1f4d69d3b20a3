// Package top is smctop's dashboard: one screen per file (overview,
// connections, link groups, devices, events), each a list of keyed rows
// made from a monitor.Snapshot (screen.go), and the same snapshot as text
// (text.go, --once -o text).
package top

import (
	"context"
	"fmt"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui"
)

// screen is a tui.Screen fed with snapshots.
type screen interface {
	tui.Screen
	update(s *monitor.Snapshot)
}

// Top is the dashboard: the shell and its screens.
type Top struct {
	App     *tui.App
	screens []screen
	// pending is the newest refresh made while paused, shown on resume;
	// only the UI goroutine uses it.
	pending *refreshed
}

// refreshed is one refresh of the monitor.
type refreshed struct {
	snap monitor.Snapshot
}

// show puts a refresh on the screens (UI goroutine); paused, it is kept
// for the resume instead.
func (t *Top) show(r refreshed) {
	if t.App.Paused() {
		t.pending = &r
		return
	}
	t.pending = nil
	t.Update(r.snap)
}

// New builds the dashboard's screens in the shell.
func New() *Top {
	t := &Top{screens: []screen{newOverview(), newConns(), newLGRs(), newDevices(), newEvents(), newProcs(), newStats(), newSystem()}}
	ts := make([]tui.Screen, len(t.screens))
	for i, s := range t.screens {
		ts[i] = s
	}
	t.App = tui.NewApp("smctop", ts...)
	return t
}

// Update shows a snapshot; call it on the UI goroutine (tests) or through
// App.QueueUpdateDraw (Run).
func (t *Top) Update(s monitor.Snapshot) {
	for _, sc := range t.screens {
		sc.update(&s)
	}
	t.App.SetStatus(t.status(&s))
	t.App.Refresh()
}

// status is the left part of the status line. Origins, source details
// and errors carry file and interface names, which may contain what tview
// reads as colour tags ("x[red]y.pcap"), so all of them are escaped.
func (t *Top) status(s *monitor.Snapshot) string {
	st := fmt.Sprintf("%s  %s", tview.Escape(s.Origin), s.Time.Format("15:04:05"))
	for _, src := range s.Sources {
		if src.Name == monitor.SourceWireName {
			clock := src.Clock
			if clock.IsZero() {
				clock = s.WireTime
			}
			if src.Paused || !clock.IsZero() && (src.Speed > 0 || !src.Ended) {
				// The replay clock: where in the capture the screens are;
				// a replay restarted while paused stands before its first
				// frame.
				at := "start"
				if !clock.IsZero() {
					at = clock.UTC().Format("15:04:05.000")
				}
				st += "  [aqua]" + at
				if src.Speed > 0 {
					st += fmt.Sprintf(" ×%g", src.Speed)
				}
				if src.Paused {
					st += " paused"
				}
				st += "[-]"
			}
			// The origin has just named the capture: on 80 columns the
			// path twice pushes the rest off the line.
			st += fmt.Sprintf("  %d frames", src.Frames)
			if src.Ended {
				st += ", ended"
			}
			if src.Error != "" {
				st += "  [yellow]" + tview.Escape(src.Error) + "[-]"
			}
		}
		if !src.Available && s.Kernel == nil && src.Name == monitor.SourceSockDiag && s.Origin != "kernel" {
			continue // a replay: not reading the kernel is the point
		}
		if !src.Available && (src.Name == monitor.SourceSockDiag || src.Name == monitor.SourceRDMASysfs) {
			st += fmt.Sprintf("  [yellow]%s: %s[-]", src.Name, tview.Escape(src.Detail))
		}
	}
	if errs := s.CounterErrors(); len(errs) > 0 {
		n := len(errs)
		st += "  [yellow]" + tview.Escape(errs[0])
		if n > 1 {
			st += fmt.Sprintf(" (+%d more)", n-1)
		}
		st += "[-]"
	}
	return st
}

// Options are the dashboard's run settings.
type Options struct {
	Interval time.Duration
	// OnSnapshot, when set, gets every snapshot and how long it took (the
	// exporter serves the dashboard's snapshots instead of refreshing again).
	OnSnapshot func(monitor.Snapshot, time.Duration)
	// BackOut, when set, names the view this dashboard was opened from
	// (the fleet): esc with nothing to undo returns there.
	BackOut string
}

// replayKeys are the keys of a file replay: pause, step, seek, restart.
// moved asks for a refresh, so the screens show where the replay went.
func replayKeys(w *monitor.Wire, moved func()) []tui.Binding {
	do := func(f func()) func(*tcell.EventKey) { return func(*tcell.EventKey) { f(); moved() } }
	return []tui.Binding{
		{Key: "space", Desc: "replay: pause / resume reading the capture (p pauses the screens only)", Match: tui.Rune(' '), Do: do(func() {
			paused, _, _, _ := w.Replay()
			w.SetPaused(!paused)
		})},
		{Key: ".", Desc: "replay: step one second of capture time, then pause", Match: tui.Rune('.'), Do: do(func() { w.Step(time.Second) })},
		{Key: "] [", Desc: "replay: 10 s of capture time forward / back (back reads again from the start)", Match: func(ev *tcell.EventKey) bool {
			return ev.Key() == tcell.KeyRune && (ev.Rune() == ']' || ev.Rune() == '[')
		}, Do: func(ev *tcell.EventKey) {
			d := 10 * time.Second
			if ev.Rune() == '[' {
				d = -d
			}
			w.Seek(d)
			moved()
		}},
		{Key: "R", Desc: "replay: restart from the first frame (a file: a FIFO or stdin is read once)", Match: tui.Rune('R'), Do: do(w.Restart)},
	}
}

// Run shows the dashboard until the user quits or ctx ends, refreshing m
// every interval (a capture replay runs meanwhile in its own goroutine).
func Run(ctx context.Context, m *monitor.Monitor, o Options) error {
	t := New()
	if err := t.App.UseTerminal(); err != nil {
		return err
	}
	return t.Run(ctx, m, o)
}

// Run shows the dashboard until the user quits or ctx ends (see Run).
func (t *Top) Run(ctx context.Context, m *monitor.Monitor, o Options) error {
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.BackOut != "" {
		t.App.SetBackOut(o.BackOut)
	}
	now := make(chan struct{}, 1) // refresh at once: a replay key moved the capture
	if w := m.Wire(); w != nil {
		if !w.Live() {
			w.Hold()
			t.App.AddKeys(replayKeys(w, func() {
				select {
				case now <- struct{}{}:
				default:
				}
			})...)
		}
		go func() { _ = w.Run(ctx) }()
	}
	refresh := func() refreshed {
		start := time.Now()
		s := m.Refresh()
		if o.OnSnapshot != nil {
			o.OnSnapshot(s, time.Since(start))
		}
		return refreshed{s}
	}
	t.App.SetPauseFunc(func(paused bool) {
		if !paused && t.pending != nil {
			t.show(*t.pending)
		}
	})
	t.show(refresh())
	go func() {
		tick := time.NewTicker(o.Interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				// Queued, not called: before Run has set up its screen
				// Stop finds none and the dashboard would run on, and
				// after Run failed (no terminal) it would finalise a
				// screen that never started. A queued Stop runs in the
				// event loop or, when there is none, never.
				t.App.QueueUpdate(t.App.Stop)
				return
			case <-tick.C:
			case <-now:
			}
			// Refreshing goes on while the screens are paused: the
			// exporter (OnSnapshot) serves these snapshots, and events
			// and rates need every interval.
			r := refresh()
			t.App.QueueUpdateDraw(func() { t.show(r) })
		}
	}()
	return t.App.Run()
}
