package top

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/monitor"
)

// snapshot replays the lab's multilink recording (before eth1 went down)
// and the rdmastats sysfs fixture through a Monitor.
func snapshot(t *testing.T) monitor.Snapshot {
	t.Helper()
	k, err := monitor.ReplayKernel("../../smcnl/testdata/multilink-client-before")
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	m := monitor.New(monitor.Options{Kernel: k, SysfsRoot: "../../rdmastats/testdata/sys",
		Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	t.Cleanup(func() { m.Close() })
	m.Refresh()
	return m.Refresh()
}

// screenText returns the simulation screen's text, one string per row.
func screenText(sim tcell.SimulationScreen) string {
	cells, w, h := sim.GetContents()
	var b strings.Builder
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := cells[y*w+x]
			if len(c.Runes) > 0 {
				b.WriteRune(c.Runes[0])
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// harness runs the dashboard on a simulation screen; keys go in with
// press, which waits until the key's draw has happened.
type harness struct {
	t    *testing.T
	top  *Top
	sim  tcell.SimulationScreen
	drew chan struct{}
}

func newHarness(t *testing.T, w, h int) *harness {
	sim := tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	sim.SetSize(w, h)
	hs := &harness{t: t, top: New(), sim: sim, drew: make(chan struct{}, 64)}
	hs.top.App.SetScreen(sim)
	hs.top.App.SetAfterDrawFunc(func(tcell.Screen) {
		select {
		case hs.drew <- struct{}{}:
		default:
		}
	})
	s := snapshot(t)
	hs.top.Update(s)
	done := make(chan error, 1)
	go func() { done <- hs.top.App.Run() }()
	t.Cleanup(func() {
		hs.top.App.Stop()
		<-done
	})
	hs.wait()
	// tview initialises the screen in Run, which resets its size.
	sim.SetSize(w, h)
	hs.top.App.QueueUpdateDraw(func() {})
	hs.wait()
	return hs
}

func (h *harness) wait() {
	h.t.Helper()
	select {
	case <-h.drew:
	case <-time.After(5 * time.Second):
		h.t.Fatal("no draw within 5s")
	}
}

// sync queues a no-op update and waits for its draw, so every key
// injected before it has been handled.
func (h *harness) sync() string {
	h.t.Helper()
	for len(h.drew) > 0 {
		<-h.drew
	}
	h.top.App.QueueUpdateDraw(func() {})
	h.wait()
	return screenText(h.sim)
}

// key injects one key and waits for the draw that follows its handling
// (tview draws after every key event).
func (h *harness) key(k tcell.Key, r rune) {
	h.t.Helper()
	for len(h.drew) > 0 {
		<-h.drew
	}
	h.sim.InjectKey(k, r, tcell.ModNone)
	h.wait()
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.key(tcell.KeyRune, r)
	}
}

func TestScreens(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 50}} {
		h := newHarness(t, size[0], size[1])
		scr := h.sync()
		for _, want := range []string{"overview", "connections", "SMC-R", "link groups"} {
			if !strings.Contains(scr, want) {
				t.Errorf("%dx%d overview lacks %q:\n%s", size[0], size[1], want, scr)
			}
		}
		h.key(tcell.KeyTab, 0)
		scr = h.sync()
		if !strings.Contains(scr, "inode:455") || !strings.Contains(scr, "0x100") {
			t.Errorf("%dx%d connections screen lacks the joined socket:\n%s", size[0], size[1], scr)
		}
	}
}

func TestDrillDownAndBack(t *testing.T) {
	h := newHarness(t, 160, 50)
	h.key(tcell.KeyRune, '2')
	h.key(tcell.KeyEnter, 0) // first connection -> its link group
	scr := h.sync()
	if h.top.App.Current().Name() != "linkgroups" || !strings.Contains(scr, "rxe0/1") || !strings.Contains(scr, "rxe1/1") {
		t.Fatalf("enter on a connection should show its link group with both links:\n%s", scr)
	}
	h.key(tcell.KeyEnter, 0) // link group -> device
	scr = h.sync()
	if h.top.App.Current().Name() != "devices" || !strings.Contains(scr, "LABNET") {
		t.Fatalf("enter on a link group should show its device:\n%s", scr)
	}
	h.key(tcell.KeyEscape, 0) // clears the filter
	h.key(tcell.KeyEscape, 0) // back to link groups
	h.key(tcell.KeyEscape, 0)
	h.key(tcell.KeyEscape, 0) // back to connections
	h.sync()
	if got := h.top.App.Current().Name(); got != "connections" {
		t.Errorf("esc went back to %s, want connections", got)
	}
}

func TestFilterSortPauseHelp(t *testing.T) {
	h := newHarness(t, 120, 40)
	h.key(tcell.KeyRune, '2')
	h.key(tcell.KeyRune, '/')
	h.typeText("466")
	h.key(tcell.KeyEnter, 0)
	scr := h.sync()
	if strings.Contains(scr, "inode:455") || !strings.Contains(scr, "inode:466") || !strings.Contains(scr, `filter "466": 1 rows`) {
		t.Errorf("filter 466:\n%s", scr)
	}
	h.key(tcell.KeyRune, 's')
	scr = h.sync()
	if !strings.Contains(scr, "KEY↑") || !strings.Contains(scr, "sort KEY") {
		t.Errorf("s should sort by the first column:\n%s", scr)
	}
	h.key(tcell.KeyRune, 'p')
	if scr = h.sync(); !strings.Contains(scr, "PAUSED") || !h.top.App.Paused() {
		t.Errorf("p should pause:\n%s", scr)
	}
	h.key(tcell.KeyRune, '?')
	scr = h.sync()
	for _, k := range h.top.App.Keys() {
		if !strings.Contains(scr, k.Desc[:min(len(k.Desc), 20)]) {
			t.Errorf("help lacks key %q (%s):\n%s", k.Key, k.Desc, scr)
		}
	}
	h.key(tcell.KeyEscape, 0)
	h.key(tcell.KeyRune, ':')
	h.typeText("ev")
	h.key(tcell.KeyTab, 0) // completes to events
	h.key(tcell.KeyEnter, 0)
	h.sync()
	if got := h.top.App.Current().Name(); got != "events" {
		t.Errorf(":events went to %s", got)
	}
}

func TestRunReplay(t *testing.T) {
	w, err := monitor.OpenWire("../../samples/multilink.pcap", "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	m := monitor.New(monitor.Options{Wire: w})
	sim := tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	sim.SetSize(120, 40)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, m, Options{Interval: 10 * time.Millisecond, Screen: sim}) }()
	deadline := time.After(10 * time.Second)
	for {
		sim.InjectKey(tcell.KeyRune, '3', tcell.ModNone)
		time.Sleep(20 * time.Millisecond) // polling the screen, not asserting time
		if scr := screenText(sim); strings.Contains(scr, "deleted") && strings.Contains(scr, "1:qp0x11") {
			break
		}
		select {
		case <-deadline:
			cancel()
			t.Fatalf("replayed link group never shown:\n%s", screenText(sim))
		default:
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
