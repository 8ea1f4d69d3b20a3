package top

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/fleet"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/metrics"
	"github.com/smcscope/smcscope/monitor"
)

// snapshot replays the lab's multilink recording (before eth1 went down)
// and the rdmastats sysfs fixture through a Monitor.
func snapshot(t *testing.T) monitor.Snapshot {
	t.Helper()
	return replaySnapshot(t, "multilink-client-before", "../../rdmastats/testdata/sys")
}

// replaySnapshot is the second refresh (rates, ages) of a Monitor over a
// recording of smcnl/testdata and a sysfs tree, on a clock one second a
// refresh from 12:00:00.
func replaySnapshot(t *testing.T, rec, sysfs string) monitor.Snapshot {
	t.Helper()
	k, err := monitor.ReplayKernel("../../smcnl/testdata/" + rec)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	m := monitor.New(monitor.Options{Kernel: k, SysfsRoot: sysfs,
		Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	t.Cleanup(func() { m.Close() })
	m.Refresh()
	return m.Refresh()
}

// harness runs the dashboard on a simulation screen over a snapshot of
// the lab's multilink recording.
type harness struct {
	*testutil.Screen
	top *Top
}

func newHarness(t *testing.T, w, h int) *harness {
	top := New()
	s := testutil.NewScreen(t, top.App.Application)
	top.Update(snapshot(t))
	s.Start(w, h, top.App.Run)
	return &harness{s, top}
}

func TestScreens(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 50}} {
		h := newHarness(t, size[0], size[1])
		scr := h.Sync()
		for _, want := range []string{"overview", "connections", "SMC-R", "link groups"} {
			if !strings.Contains(scr, want) {
				t.Errorf("%dx%d overview lacks %q:\n%s", size[0], size[1], want, scr)
			}
		}
		h.Key(tcell.KeyTab, 0)
		scr = h.Sync()
		if !strings.Contains(scr, "inode:455") || !strings.Contains(scr, "0x100") {
			t.Errorf("%dx%d connections screen lacks the joined socket:\n%s", size[0], size[1], scr)
		}
	}
}

func TestDrillDownAndBack(t *testing.T) {
	h := newHarness(t, 160, 50)
	h.Key(tcell.KeyRune, '2')
	h.Key(tcell.KeyEnter, 0) // first connection -> its link group
	scr := h.Sync()
	if h.top.App.Current().Name() != "linkgroups" || !strings.Contains(scr, "rxe0/1") || !strings.Contains(scr, "rxe1/1") {
		t.Fatalf("enter on a connection should show its link group with both links:\n%s", scr)
	}
	h.Key(tcell.KeyEnter, 0) // link group -> device
	scr = h.Sync()
	if h.top.App.Current().Name() != "devices" || !strings.Contains(scr, "LABNET") {
		t.Fatalf("enter on a link group should show its device:\n%s", scr)
	}
	h.Key(tcell.KeyEscape, 0) // one esc per level: back to the link group
	h.Sync()
	if got := h.top.App.Current().Name(); got != "linkgroups" {
		t.Fatalf("esc went back to %s, want linkgroups", got)
	}
	h.Key(tcell.KeyEscape, 0) // and to the connection
	h.Sync()
	if got := h.top.App.Current().Name(); got != "connections" {
		t.Errorf("esc went back to %s, want connections", got)
	}
	if got := h.top.App.Current().Table().SelectedKey(); got != "inode:455" {
		t.Errorf("back on %q, want the connection enter was pressed on", got)
	}
}

func TestFilterSortPauseHelp(t *testing.T) {
	h := newHarness(t, 120, 40)
	h.Key(tcell.KeyRune, '2')
	h.Key(tcell.KeyRune, '/')
	h.Type("466")
	h.Key(tcell.KeyEnter, 0)
	scr := h.Sync()
	if strings.Contains(scr, "inode:455") || !strings.Contains(scr, "inode:466") || !strings.Contains(scr, `filter "466": 1 rows`) {
		t.Errorf("filter 466:\n%s", scr)
	}
	h.Key(tcell.KeyRune, 's')
	scr = h.Sync()
	if !strings.Contains(scr, "KEY↑") || !strings.Contains(scr, "sort KEY") {
		t.Errorf("s should sort by the first column:\n%s", scr)
	}
	h.Key(tcell.KeyRune, 'p')
	if scr = h.Sync(); !strings.Contains(scr, "PAUSED") || !h.top.App.Paused() {
		t.Errorf("p should pause:\n%s", scr)
	}
	h.Key(tcell.KeyRune, '?')
	scr = h.Sync()
	for _, k := range h.top.App.Keys() {
		if !strings.Contains(scr, k.Desc[:min(len(k.Desc), 20)]) {
			t.Errorf("help lacks key %q (%s):\n%s", k.Key, k.Desc, scr)
		}
	}
	h.Key(tcell.KeyEscape, 0)
	h.Key(tcell.KeyRune, ':')
	h.Type("ev")
	h.Key(tcell.KeyTab, 0) // completes to events
	h.Key(tcell.KeyEnter, 0)
	h.Sync()
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
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // after the screen's cleanup has stopped the app (cleanups run last-in first)
	tp := New()
	s := testutil.NewScreen(t, tp.App.Application)
	s.Start(120, 40, func() error { return tp.Run(ctx, m, Options{Interval: 10 * time.Millisecond}) })
	s.Key(tcell.KeyRune, '3')
	s.Until("1:qp0x11")
	// The replay reads as fast as it can; the group is deleted once it
	// has read the capture's last DELETE_LINK.
	s.Until("frames, ended")
	s.Until("deleted")
}

// brokenSysfs copies the sysfs fixture with one counter the driver printed
// as "N/A".
func brokenSysfs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("../../rdmastats/testdata/sys")); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(root, "class/infiniband/rxe0/ports/1/hw_counters/rdma_sends")
	if err := os.WriteFile(bad, []byte("N/A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestBrokenCounterStatus checks that the devices stay listed beside one
// unparsable counter and that the status line names that counter.
func TestBrokenCounterStatus(t *testing.T) {
	m := monitor.New(monitor.Options{SysfsRoot: brokenSysfs(t)})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tp := New()
	s := testutil.NewScreen(t, tp.App.Application)
	s.Start(120, 40, func() error { return tp.Run(ctx, m, Options{Interval: time.Hour}) })
	s.Key(tcell.KeyRune, '4')
	scr := s.Until(`rxe0/1 hw_counters/rdma_sends: unparsable "N/A"`)
	if !strings.Contains(scr, "mlx5_0") || !strings.Contains(scr, "rxe0 ") {
		t.Errorf("devices screen lacks the RNICs beside one broken counter:\n%s", scr)
	}
}

// TestRunWithoutTerminal runs the dashboard where tview cannot open a
// terminal (a child of this test in a new session, so without a
// controlling terminal): Run must return the error, not panic while
// stopping a screen that never started.
func TestRunWithoutTerminal(t *testing.T) {
	if os.Getenv("SMCTOP_TEST_NO_TTY") == "1" {
		m := monitor.New(monitor.Options{SysfsRoot: "../../rdmastats/testdata/sys"})
		err := New().Run(context.Background(), m, Options{Interval: time.Hour})
		fmt.Printf("Run returned: %v\n", err)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunWithoutTerminal$")
	cmd.Env = append(os.Environ(), "SMCTOP_TEST_NO_TTY=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "panic") || !strings.Contains(string(out), "Run returned: open /dev/tty") {
		t.Errorf("Run without a terminal: %v\n%s", err, out)
	}
}

// TestUserTextEscaped types a filter and a view name that look like tview
// colour tags: the status line must show them as typed.
func TestUserTextEscaped(t *testing.T) {
	h := newHarness(t, 120, 40)
	h.Key(tcell.KeyRune, '2')
	h.Key(tcell.KeyRune, '/')
	h.Type("[red]x")
	h.Key(tcell.KeyEnter, 0)
	if scr := h.Sync(); !strings.Contains(scr, `filter "[red]x": 0 rows`) {
		t.Errorf("filter [red]x not shown as typed:\n%s", scr)
	}
	h.Key(tcell.KeyEscape, 0)
	h.Key(tcell.KeyRune, ':')
	h.Type("[blue]y")
	h.Key(tcell.KeyEnter, 0)
	if scr := h.Sync(); !strings.Contains(scr, `no view "[blue]y"`) {
		t.Errorf(":[blue]y not shown as typed:\n%s", scr)
	}
}

// statusLine returns the last line of a screen.
func statusLine(scr string) string {
	lines := strings.Split(strings.TrimRight(scr, "\n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// TestPauseKeepsExporting pauses the dashboard with an exporter beside it
// (metrics.Latest fed by OnSnapshot, as smctop --listen does): the screens
// must stay on the snapshot from before the pause while the exporter's
// snapshots go on, and resuming must show a newer one.
func TestPauseKeepsExporting(t *testing.T) {
	// Each refresh is one second later on this clock, so every snapshot
	// shows its own time in the status line. Only the refresh goroutine
	// calls it.
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	m := monitor.New(monitor.Options{SysfsRoot: "../../rdmastats/testdata/sys",
		Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	latest := &metrics.Latest{}
	exported := func() time.Time { s, _ := latest.Snapshot(); return s.Time }
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tp := New()
	s := testutil.NewScreen(t, tp.App.Application)
	s.Start(120, 40, func() error {
		return tp.Run(ctx, m, Options{Interval: 5 * time.Millisecond, OnSnapshot: latest.Set})
	})
	s.Key(tcell.KeyRune, 'p')
	// The key is handled on the app's event loop: wait for the drawn pause.
	frozen := statusLine(s.Sync())
	for deadline := time.Now().Add(10 * time.Second); !strings.HasPrefix(frozen, "PAUSED"); frozen = statusLine(s.Sync()) {
		if time.Now().After(deadline) {
			t.Fatalf("p did not pause: %q", frozen)
		}
		time.Sleep(5 * time.Millisecond) // polling the screen
	}
	paused := exported()
	deadline := time.Now().Add(10 * time.Second)
	for exported().Sub(paused) < 5*time.Second {
		if time.Now().After(deadline) {
			t.Fatalf("paused: the exporter's snapshot stays at %v, want refreshes to go on", exported())
		}
		time.Sleep(5 * time.Millisecond) // polling the exporter
	}
	if got := statusLine(s.Sync()); got != frozen {
		t.Errorf("paused screens changed: %q, then %q", frozen, got)
	}
	s.Key(tcell.KeyRune, 'p')
	// The resumed screens show the next snapshot once the key is handled and a
	// snapshot drawn: the test waits for that, with a deadline (1 run in 12 under
	// -race looked before).
	got := statusLine(s.Sync())
	for deadline := time.Now().Add(10 * time.Second); got == frozen || strings.HasPrefix(got, "PAUSED"); got = statusLine(s.Sync()) {
		if time.Now().After(deadline) {
			t.Fatalf("resumed, the status line is still %q", got)
		}
		time.Sleep(5 * time.Millisecond) // polling the screen
	}
}

// withRXE1 is the sysfs fixture with a second Soft-RoCE device, rxe1 on
// eth1, as the lab's multilink client has.
func withRXE1(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("../../rdmastats/testdata/sys")); err != nil {
		t.Fatal(err)
	}
	ib := filepath.Join(root, "class/infiniband")
	if err := os.CopyFS(filepath.Join(ib, "rxe1"), os.DirFS(filepath.Join(ib, "rxe0"))); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestDrillExact: enter on the connection on link 2 (rxe1) opens exactly
// its link group, and enter there the ports of both its links: rxe1 is
// among them, and nothing else is listed because its text matched.
func TestDrillExact(t *testing.T) {
	k, err := monitor.ReplayKernel("../../smcnl/testdata/multilink-client-before")
	if err != nil {
		t.Fatal(err)
	}
	m := monitor.New(monitor.Options{Kernel: k, SysfsRoot: withRXE1(t)})
	t.Cleanup(func() { m.Close() })
	top := New()
	s := testutil.NewScreen(t, top.App.Application)
	top.Update(m.Refresh())
	s.Start(160, 50, top.App.Run)
	s.Key(tcell.KeyRune, '2')
	s.Sync()
	tb := top.App.Current().Table()
	var onRXE1 string
	for _, r := range tb.Shown() {
		if r.Cells[8] == "rxe1/1" {
			onRXE1 = r.Key
		}
	}
	if onRXE1 == "" {
		t.Fatalf("no connection on rxe1: %+v", tb.Shown())
	}
	tb.SelectKey(onRXE1)
	s.Key(tcell.KeyEnter, 0)
	s.Sync()
	lt := top.App.Current().Table()
	if len(lt.Shown()) != 1 || lt.Shown()[0].Key != "lgr:00000100" {
		t.Fatalf("link groups shown %+v, want lgr:00000100 alone", lt.Shown())
	}
	s.Key(tcell.KeyEnter, 0)
	scr := s.Sync()
	var ports []string
	for _, r := range top.App.Current().Table().Shown() {
		ports = append(ports, r.Key)
	}
	if strings.Join(ports, " ") != "rxe0/1 rxe1/1" || !strings.Contains(scr, "ports of link group 0x100: 2 rows") {
		t.Errorf("devices shown %v, want the group's rxe0/1 and rxe1/1 (not mlx5_0):\n%s", ports, scr)
	}
}

// TestHelpColumnsAndShortNames: ? explains the current view's columns and
// units; : takes short names and unique beginnings.
func TestHelpColumnsAndShortNames(t *testing.T) {
	h := newHarness(t, 120, 50)
	for _, c := range []struct{ typed, view string }{{"c", "connections"}, {"lgr", "linkgroups"}, {"dev", "devices"}, {"ev", "events"}, {"conns", "connections"}, {"ov", "overview"}} {
		h.Key(tcell.KeyRune, ':')
		h.Type(c.typed)
		h.Key(tcell.KeyEnter, 0)
		h.Sync()
		if got := h.top.App.Current().Name(); got != c.view {
			t.Errorf(":%s went to %s, want %s", c.typed, got, c.view)
		}
	}
	h.Key(tcell.KeyRune, '2')
	h.Key(tcell.KeyRune, '?')
	scr := h.Sync()
	for _, want := range []string{"columns of connections", "RX/s", "per second", "producer cursor"} {
		if !strings.Contains(scr, want) {
			t.Errorf("help lacks %q:\n%s", want, scr)
		}
	}
}

// TestSortByRate: > picks the sort column; the byte columns sort by value.
func TestSortByRate(t *testing.T) {
	h := newHarness(t, 200, 50)
	h.Key(tcell.KeyRune, '2')
	for range 10 { // KEY ... RX
		h.Key(tcell.KeyRune, '>')
	}
	scr := h.Sync()
	if c, _ := h.top.App.Current().Table().SortColumn(); c != "RX" || !strings.Contains(scr, "sort RX↑") {
		t.Fatalf("sort column %s:\n%s", c, scr)
	}
	rows := h.top.App.Current().Table().Shown()
	for i := 1; i < len(rows); i++ {
		if rows[i-1].Sort[9].(uint64) > rows[i].Sort[9].(uint64) {
			t.Errorf("rows not in RX order: %v then %v", rows[i-1].Cells[9], rows[i].Cells[9])
		}
	}
}

// TestDetailKeepsScroll: a refresh redraws the selected row's detail where
// it was scrolled to (a link group's history, an RNIC's counters are
// longer than the pane).
func TestDetailKeepsScroll(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.Key(tcell.KeyRune, '4') // devices: mlx5_0's counters are many
	h.Sync()
	h.Key(tcell.KeyPgDn, 0)
	before := h.Sync()
	h.top.Update(snapshot(t))
	after := h.Sync()
	if before != after {
		t.Errorf("the refresh moved the detail pane:\n%s\n---\n%s", before, after)
	}
	if !strings.Contains(after, "np_cnp_sent") && !strings.Contains(after, "rx_") && strings.Contains(after, "GIDs") {
		t.Errorf("PgDn did not scroll the detail:\n%s", after)
	}
}

// TestReplayKeys: in a replay the status line shows the replay clock;
// space pauses the capture, . steps a second, R starts it again, and the
// keys are in ?.
func TestReplayKeys(t *testing.T) {
	w, err := monitor.OpenWire("../../samples/multilink.pcap", "", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	m := monitor.New(monitor.Options{Wire: w})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tp := New()
	s := testutil.NewScreen(t, tp.App.Application)
	s.Start(120, 40, func() error { return tp.Run(ctx, m, Options{Interval: 20 * time.Millisecond}) })
	s.Until("×1 ")
	s.Key(tcell.KeyRune, ' ')
	scr := s.Until("paused")
	if !strings.Contains(scr, "08:34:") {
		t.Errorf("no replay clock in the status line:\n%s", scr)
	}
	_, at, _, _ := w.Progress()
	s.Key(tcell.KeyRune, '.')
	want := at.Add(time.Second).UTC().Format("15:04:05")
	s.Until(want)
	if p, _, _, _ := w.Replay(); !p {
		t.Error("a step did not leave the replay paused")
	}
	s.Key(tcell.KeyRune, 'R')
	s.Key(tcell.KeyRune, ' ')
	s.Until("×1 ")
	// R asks the replay's reader to start over; it does so when it next
	// looks at its controls, which a loaded machine may delay.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, _, gen, _ := w.Replay()
		if gen == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("R: %d restarts after 10 s", gen)
		}
	}
	s.Key(tcell.KeyRune, '?')
	scr = s.Until("replay: step one second")
	for _, k := range []string{"space", "] [", "restart"} {
		if !strings.Contains(scr, k) {
			t.Errorf("help lacks %q", k)
		}
	}
}

// TestConnHistory: a wire connection's detail tells its life in time
// order: its handshake, the links of its group coming up, the link it was
// on lost, its failover.
func TestConnHistory(t *testing.T) {
	s := wireSnapshot(t, "../../samples/multilink.pcap")
	var c monitor.ConnRow
	for _, r := range s.Conns {
		if r.Key == "wire:2" {
			c = r
		}
	}
	d := connDetail(c, &s)
	_, hist, ok := strings.Cut(d, "history:\n")
	if !ok {
		t.Fatalf("no history:\n%s", d)
	}
	var last string
	for _, l := range strings.Split(strings.TrimSpace(hist), "\n") {
		ts := strings.Fields(l)[0]
		if ts < last {
			t.Errorf("history out of order at %q:\n%s", l, hist)
		}
		last = ts
	}
	for _, want := range []string{"TCP SYN", "CLC Confirm", "link 2 up", "link 2 deleted: 0x00010000 lost-path", "wire:2 failed over to link 1", "closed"} {
		if !strings.Contains(hist, want) {
			t.Errorf("history lacks %q:\n%s", want, hist)
		}
	}
}

// TestProcessesScreen: the processes view lists what the send/receive
// tracepoints saw per process, and says why it is empty without them;
// on a first refresh its rates are not measured yet.
func TestProcessesScreen(t *testing.T) {
	h := newHarness(t, 160, 40)
	h.Key(tcell.KeyRune, '6')
	if scr := h.Sync(); !strings.Contains(scr, "no SMC traffic traced yet") {
		t.Errorf("empty processes view:\n%s", scr)
	}
	s := snapshot(t)
	s.Processes = []monitor.ProcessRow{{PID: 312, Comm: "smcping", Sockets: 1, Conns: 1, TxBytes: 6400, RxBytes: 6400, TxRate: 3200, RxRate: 3200, TxCallRate: 50, RxCallRate: 50}}
	h.top.Update(s)
	scr := h.Sync()
	for _, want := range []string{"smcping", "6.2KiB", "3.1KiB/s", "50/50"} {
		if !strings.Contains(scr, want) {
			t.Errorf("processes view lacks %q:\n%s", want, scr)
		}
	}
	// A first refresh measured no rate: "-", not the zeros it holds.
	s.Interval = 0
	h.top.Update(s)
	if scr := h.Sync(); strings.Contains(scr, "3.1KiB/s") || strings.Contains(scr, "50/50") || !strings.Contains(scr, "not measured yet") {
		t.Errorf("processes view of a first refresh:\n%s", scr)
	}
}

// TestFleetScreens: the fleet dashboard lists the hosts, the worst first,
// the link group with both halves side by side, and who declined whom;
// enter on a host opens its link groups.
func TestFleetScreens(t *testing.T) {
	f := NewFleet()
	s := testutil.NewScreen(t, f.App.Application)
	half := func(inst, role string, up ...bool) *fleet.Half {
		h := &fleet.Half{Instance: inst, LGR: "0x100", Role: role}
		for i, u := range up {
			h.Links = append(h.Links, fleet.Link{ID: fmt.Sprint(i + 1), Up: u, Device: "rxe0"})
		}
		return h
	}
	g := fleet.Group{Key: "a+b", Client: half("a:9714", "client", true, true), Server: half("b:9714", "server", true), Asymmetric: true}
	f.Update(fleet.Snapshot{Source: "http://prom:9090", Hosts: []fleet.Host{{Instance: "b:9714", Up: false}, {Instance: "a:9714", Up: true, SMCR: 2}},
		LinkGroups: []fleet.Group{g}, Declines: []fleet.Decline{{Decliner: "b:9714", Declined: "c:9714", Reason: "NOSMCRDEV", DeclinedReason: "PEERDECL", DeclinedConns: 1}}})
	s.Start(160, 40, f.App.Run)
	scr := s.Sync()
	if !strings.Contains(scr, "DOWN") || strings.Index(scr, "b:9714") > strings.Index(scr, "a:9714") {
		t.Errorf("hosts:\n%s", scr)
	}
	s.Key(tcell.KeyRune, '2')
	if scr = s.Sync(); !strings.Contains(scr, "asymmetric: 2 active links / 1") || !strings.Contains(scr, "b:9714 0x100") {
		t.Errorf("link groups:\n%s", scr)
	}
	s.Key(tcell.KeyRune, '3')
	if scr = s.Sync(); !strings.Contains(scr, "NOSMCRDEV") || !strings.Contains(scr, "PEERDECL") {
		t.Errorf("declines:\n%s", scr)
	}
}

// TestFleetOpensHost: enter on a host whose exporter answers leaves the
// fleet view for that host's own dashboard.
func TestFleetOpensHost(t *testing.T) {
	f := NewFleet()
	var asked string
	f.reachable = func(inst string) bool { asked = inst; return true }
	s := testutil.NewScreen(t, f.App.Application)
	f.Update(fleet.Snapshot{Hosts: []fleet.Host{{Instance: "a:9714", Up: true}}})
	done := make(chan error, 1)
	s.Start(120, 30, func() error { err := f.App.Run(); done <- err; return err })
	s.Sync()
	s.Sim.InjectKey(tcell.KeyEnter, 0, tcell.ModNone) // no draw follows: the app stops
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("enter on a reachable host did not leave the fleet view")
	}
	if f.open != "a:9714" || asked != "a:9714" {
		t.Errorf("open %q, asked %q", f.open, asked)
	}
}

// TestFleetKeys: the fleet's help names its own views and what enter does
// there (not the host dashboard's :dev); enter on a link group or a
// decline shows its two hosts and esc comes back; a refresh that fails
// keeps the hosts, marked stale, with the short cause; counts agree with
// the rows ("1 host").
func TestFleetKeys(t *testing.T) {
	f := NewFleet()
	s := testutil.NewScreen(t, f.App.Application)
	g := fleet.Group{Key: "a:9714/0x100+b:9714/0x100",
		Client: &fleet.Half{Instance: "a:9714", LGR: "0x100", Role: "client", Links: []fleet.Link{{ID: "1", Up: true, Device: "mlx5_0", Port: "1"}}},
		Server: &fleet.Half{Instance: "b:9714", LGR: "0x100", Role: "server", Links: []fleet.Link{{ID: "1", Up: true, Device: "rxe0", Port: "1"}}},
		Pairs:  []fleet.Pair{{Client: "1", Server: "1"}}}
	tx := 2048.0
	g.Client.Links[0].RNIC = &fleet.PortRates{TxBytes: &tx}
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	f.Update(fleet.Snapshot{Time: t0, Source: "http://prom:9090", Hosts: []fleet.Host{{Instance: "a:9714", Up: true}, {Instance: "b:9714", Up: true}, {Instance: "c:9714", Up: true}},
		LinkGroups: []fleet.Group{g}})
	s.Start(200, 50, f.App.Run)
	scr := s.Sync()
	if !strings.Contains(scr, "3 hosts") {
		t.Errorf("status:\n%s", scr)
	}
	// No rate read for a host (its exporter cannot read the kernel's
	// statistics): FB/s and HS-ERR/s are unknown, not 0.
	rows := 0
	for _, l := range strings.Split(scr, "\n") {
		if f := strings.Fields(strings.Trim(l, "║ ")); len(f) == 11 && f[0] == "a:9714" {
			rows++
			if f[6] != "-" || f[7] != "-" {
				t.Errorf("rates of a host without them: %q", l)
			}
		}
	}
	if rows != 1 {
		t.Errorf("%d rows of a:9714:\n%s", rows, scr)
	}
	s.Key(tcell.KeyRune, '?')
	scr = s.Sync()
	if strings.Contains(scr, ":dev") || !strings.Contains(scr, ":h :lgr :dec") || !strings.Contains(scr, "on a link group or a decline, its two hosts") {
		t.Errorf("fleet help:\n%s", scr)
	}
	s.Key(tcell.KeyEscape, 0)
	s.Key(tcell.KeyRune, '2')
	scr = s.Sync()
	for _, want := range []string{"link client 1 ACTIVE ⇄ server 1 ACTIVE", "client mlx5_0/1", "tx 2.0KiB/s - pkt  rx - - pkt", "server rxe0/1", "RNIC counters -"} {
		if !strings.Contains(scr, want) {
			t.Errorf("link group detail lacks %q:\n%s", want, scr)
		}
	}
	s.Key(tcell.KeyEnter, 0)
	scr = s.Sync()
	if !strings.Contains(scr, "hosts of link group") || !strings.Contains(scr, "a:9714") || strings.Contains(scr, "c:9714") {
		t.Errorf("enter on a link group:\n%s", scr)
	}
	s.Key(tcell.KeyEscape, 0)
	if scr = s.Sync(); !strings.Contains(scr, "CLIENT LINKS") {
		t.Errorf("esc after enter on a link group:\n%s", scr)
	}
	f.Update(fleet.Snapshot{Time: t0.Add(time.Minute), Source: "http://prom:9090", Error: "Prometheus http://prom:9090: connection refused", Hosts: []fleet.Host{}})
	s.Key(tcell.KeyRune, '1')
	scr = s.Sync()
	if !strings.Contains(scr, "stale, as of 10:00:00: Prometheus http://prom:9090: connection refused") || !strings.Contains(scr, "c:9714") {
		t.Errorf("a failed refresh:\n%s", scr)
	}
	f.Update(fleet.Snapshot{Time: t0.Add(2 * time.Minute), Source: "http://prom:9090", Hosts: []fleet.Host{{Instance: "a:9714", Up: true}},
		Conflicts: []fleet.Conflict{{Address: "10.0.0.1", Instances: []string{"a:9714", "b:9714"}}}})
	scr = s.Sync()
	if !strings.Contains(scr, "1 host ") || strings.Contains(scr, "stale") || !strings.Contains(scr, "10.0.0.1 claimed by a:9714, b:9714") {
		t.Errorf("after recovery:\n%s", scr)
	}
}

// TestBackOutEsc: a host's dashboard opened from the fleet goes back there
// on esc once nothing is left to undo, and says so on its status line.
func TestBackOutEsc(t *testing.T) {
	top := New()
	s := testutil.NewScreen(t, top.App.Application)
	top.Update(snapshot(t))
	top.App.SetBackOut("the fleet")
	done := make(chan error, 1)
	s.Start(120, 30, func() error { err := top.App.Run(); done <- err; return err })
	if scr := s.Sync(); !strings.Contains(scr, "esc: back to the fleet") {
		t.Errorf("status:\n%s", scr)
	}
	s.Key(tcell.KeyRune, '/')
	s.Key(tcell.KeyRune, 'x')
	s.Key(tcell.KeyEnter, 0)
	s.Key(tcell.KeyEscape, 0) // clears the filter: the dashboard stays
	s.Sync()
	select {
	case <-done:
		t.Fatal("esc that cleared a filter left the dashboard")
	default:
	}
	s.Sim.InjectKey(tcell.KeyEscape, 0, tcell.ModNone) // no draw follows: the app stops
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("esc did not leave the host's dashboard")
	}
}
