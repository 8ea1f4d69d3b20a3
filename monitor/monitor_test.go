package monitor

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/smcnl"
)

// fixedClock steps one second per call, so rates are exact.
func fixedClock() func() time.Time {
	t := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func TestKernelJoin(t *testing.T) {
	k, err := ReplayKernel("../smcnl/testdata/multilink-client-before")
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Kernel: k, SysfsRoot: "../rdmastats/testdata/sys", Now: fixedClock()})
	defer m.Close()
	s := m.Refresh()
	if s.Overview.SMCR != 2 || s.Overview.LinkGroups != 1 || s.Overview.Links != 2 || s.Overview.NoRedundancy != 0 {
		t.Fatalf("overview %+v: want 2 SMC-R conns on one link group with two links", s.Overview)
	}
	g := s.LinkGroups[0]
	if !g.Redundant || g.MaxLinks != 2 || g.MaxConns != 255 || g.Role != "client" {
		t.Errorf("link group %+v", g)
	}
	links := map[uint8]string{}
	for _, l := range g.Links {
		links[l.ID] = l.IBDev
	}
	for _, c := range s.Conns {
		if c.Link().LGRID != g.ID {
			t.Errorf("%s: link group %#x, want %#x (joined through its link %d on %s)", c.Key, c.Link().LGRID, g.ID, c.Link().LinkID, c.Link().IBDev)
		}
		if links[c.Link().LinkID] != c.Link().IBDev {
			t.Errorf("%s: link %d on %s, the group has it on %s", c.Key, c.Link().LinkID, c.Link().IBDev, links[c.Link().LinkID])
		}
		if !strings.HasPrefix(c.Key, "inode:") {
			t.Errorf("%s: kernel rows are keyed by inode", c.Key)
		}
	}
	var rxe bool
	for _, d := range s.Devices {
		if d.Name == "rxe0" {
			rxe = d.SMC && len(d.Ports) > 0 && d.Ports[0].PNETID == "LABNET"
		}
	}
	if !rxe {
		t.Errorf("rxe0 not marked as SMC's device with PNET ID LABNET: %+v", s.Devices)
	}
}

// TestSharedLink: the kernel's rows of one link share its ConnLink, but
// a socket on the link that is not (yet) in mode SMC-R is not joined to
// the link's group, as it would not be with a copy of its own.
func TestSharedLink(t *testing.T) {
	l := &smcnl.LGRInfo{LinkID: 1, IBDev: "rxe0", IBPort: 1, GID: "g", PeerGID: "p"}
	socks := []smcnl.Socket{
		{Inode: 1, State: smcnl.StateActive, Mode: smcnl.ModeSMCR, LGR: l},
		{Inode: 2, State: smcnl.StateInit, Mode: smcnl.ModeSMCR, LGR: l},
		{Inode: 3, State: smcnl.StateActive, Mode: smcnl.ModeSMCR, LGR: l},
	}
	g := LinkGroupRow{Key: "lgr:00000100", Source: SourceKernel, ID: 0x100, Kind: ModeSMCR, Role: RoleClient,
		Links: []LinkRow{{ID: 1, IBDev: "rxe0", IBPort: 1, GID: "g", PeerGID: "p"}}}
	rows, _, _ := kernelConns(socks, newLinkIndex([]LinkGroupRow{g}), nil)
	if rows[0].ConnLink != rows[2].ConnLink || rows[0].LGRKey != g.Key {
		t.Errorf("the link's SMC-R rows: %+v and %+v, want one ConnLink joined to %s", *rows[0].ConnLink, *rows[2].ConnLink, g.Key)
	}
	if p := rows[1]; p.Mode != ModePending || p.LGRKey != "" || p.IBDev != "rxe0" {
		t.Errorf("the pending row %s %+v, want its link unjoined", p.Mode, *p.ConnLink)
	}
}

// TestListedByLink: kernelConns's count of the rows on each link group,
// made by link, is the count by each row's mode and group (SMC-R and
// SMC-D, a pending socket's unjoined link, and a socket with both a DMB
// and a link, which names the DMB's group).
func TestListedByLink(t *testing.T) {
	l := &smcnl.LGRInfo{LinkID: 1, IBDev: "rxe0", IBPort: 1, GID: "g", PeerGID: "p"}
	dmb := &smcnl.DMBInfo{LinkID: 0x100, MyGID: 1, PeerGID: 2}
	socks := []smcnl.Socket{
		{Inode: 1, State: smcnl.StateActive, Mode: smcnl.ModeSMCR, LGR: l},
		{Inode: 2, State: smcnl.StateInit, Mode: smcnl.ModeSMCR, LGR: l},
		{Inode: 3, State: smcnl.StateActive, Mode: smcnl.ModeSMCR, LGR: l},
		{Inode: 4, State: smcnl.StateActive, Mode: smcnl.ModeSMCD, DMB: dmb},
		{Inode: 5, State: smcnl.StateActive, Mode: smcnl.ModeSMCD, DMB: dmb},
		{Inode: 6, State: smcnl.StateActive, Mode: smcnl.ModeSMCD, DMB: dmb, LGR: l},
		{Inode: 7, State: smcnl.StateActive, Mode: smcnl.ModeFallback},
	}
	g := LinkGroupRow{Key: "lgr:00000100", Source: SourceKernel, ID: 0x100, Kind: ModeSMCR, Role: RoleClient,
		Links: []LinkRow{{ID: 1, IBDev: "rxe0", IBPort: 1, GID: "g", PeerGID: "p"}}}
	rows, _, listed := kernelConns(socks, newLinkIndex([]LinkGroupRow{g}), nil)
	byRow := map[lgrAt]int{}
	for _, c := range rows {
		if l := c.Link(); l.LGRKey != "" {
			byRow[groupAt(c.Mode, l.LGRID)]++
		}
	}
	want := map[lgrAt]int{groupAt(ModeSMCR, 0x100): 2, groupAt(ModeSMCD, 0x100): 3}
	if fmt.Sprint(listed) != fmt.Sprint(want) || fmt.Sprint(byRow) != fmt.Sprint(want) {
		t.Errorf("rows on each group: %v by link, %v by row, want %v", listed, byRow, want)
	}
}

func TestFailoverEvents(t *testing.T) {
	before, after := recorded(t, "multilink-client-before"), recorded(t, "multilink-client-after")
	clock := fixedClock()
	prev := New(Options{Kernel: before, Now: clock}).Refresh()
	m := New(Options{Kernel: after, Now: clock})
	m.prev = &prev
	s := m.Refresh()
	var kinds []string
	for _, e := range s.Events {
		kinds = append(kinds, string(e.Kind))
	}
	got := strings.Join(kinds, ",")
	if !strings.Contains(got, string(EventLinkDown)) || !strings.Contains(got, string(EventFailover)) {
		t.Errorf("events %q after eth1 went down: want link-down and failover", got)
	}
	if s.Overview.NoRedundancy != 1 {
		t.Errorf("after failover %d link groups without redundancy, want 1", s.Overview.NoRedundancy)
	}
}

func TestWireReplay(t *testing.T) {
	w, err := OpenWire("../samples/multilink.pcap", "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Wire: w, Now: fixedClock()})
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := m.Refresh()
	if s.Overview.Ended != 3 || s.Overview.SuccessTotal != 3 || len(s.LinkGroups) != 1 {
		t.Fatalf("overview %+v, %d link groups: want 3 SMC-R connections, ended, on one group", s.Overview, len(s.LinkGroups))
	}
	g := s.LinkGroups[0]
	if len(g.Links) < 2 || g.Links[0].QPN == 0 || g.Links[0].CDCs == 0 {
		t.Errorf("links %+v: want both links with their QPs and CDCs", g.Links)
	}
	var failover, down bool
	for _, e := range s.Events {
		failover = failover || e.Kind == EventFailover
		down = down || e.Kind == EventLinkDown
	}
	if !failover || !down {
		t.Errorf("wire events lack failover (%v) or link-down (%v)", failover, down)
	}
	if s.Conns[0].Link().LGRID != g.ID || s.Conns[0].Source != "wire" {
		t.Errorf("conn %+v not joined to link group %d", s.Conns[0], g.ID)
	}
}

func TestParseTraceLine(t *testing.T) {
	ev, ok := ParseTraceLine(`  smcping-312 [000] ..... 101.5: smc_switch_to_fallback: sk=000000003a1b clcsk=00000000ff net=4 fallback_rsn=0x3030000`, time.Unix(0, 0))
	if !ok || ev.Kind != EventFallback || !strings.Contains(ev.Text, "NOSMCDEV") {
		t.Errorf("fallback line: %+v %v", ev, ok)
	}
	ev, ok = ParseTraceLine(`kworker/0:1-12 [000] ..... 7.1: smcr_link_down: lnk=00000000aa lgr=00000000bb net=4 state=2 dev=rxe1 location=smcr_port_err+0x1c`, time.Unix(0, 0))
	if !ok || ev.Kind != EventLinkDown || !strings.Contains(ev.Text, "rxe1") {
		t.Errorf("link-down line: %+v %v", ev, ok)
	}
	if _, ok := ParseTraceLine("some other event: x=1", time.Unix(0, 0)); ok {
		t.Error("a non-SMC line was taken")
	}
}

// TestWithoutSMCOrRDMA: a host without SMC in the kernel still shows its
// RNICs and says why there are no sockets; a host without RDMA devices
// still shows its sockets and says there are no RNICs.
func TestWithoutSMCOrRDMA(t *testing.T) {
	s := New(Options{KernelErr: errors.New("SMC netlink: not supported (no smc module)"), SysfsRoot: "../rdmastats/testdata/sys", Now: fixedClock()}).Refresh()
	if len(s.Devices) == 0 || !hasSource(s, "rdma_sysfs", true) || !hasSource(s, "sock_diag", false) {
		t.Errorf("no SMC: devices %d, sources %+v", len(s.Devices), s.Sources)
	}
	for _, src := range s.Sources {
		if src.Name == "sock_diag" && !strings.Contains(src.Detail, "no smc module") {
			t.Errorf("sock_diag source does not say why: %+v", src)
		}
	}
	k, err := ReplayKernel("../smcnl/testdata/pingpong-client-active")
	if err != nil {
		t.Fatal(err)
	}
	s = New(Options{Kernel: k, SysfsRoot: t.TempDir(), Now: fixedClock()}).Refresh()
	if s.Overview.SMCR != 1 || !hasSource(s, "rdma_sysfs", false) {
		t.Errorf("no RDMA: overview %+v, sources %+v", s.Overview, s.Sources)
	}
}

func hasSource(s Snapshot, name SourceName, available bool) bool {
	for _, src := range s.Sources {
		if src.Name == name {
			return src.Available == available
		}
	}
	return false
}

// TestHalfKernel: a kernel whose SMC_GEN_NETLINK family is missing (or
// whose smc_diag is) answers with the reason, and a refresh still works
// (smctop once dereferenced the missing half on such a host).
func TestHalfKernel(t *testing.T) {
	k := &netlinkKernel{genlErr: errors.New("SMC netlink: not supported"), diagErr: errors.New("sock_diag: not supported")}
	s := New(Options{Kernel: k, Now: fixedClock()}).Refresh()
	if hasSource(s, "sock_diag", true) || hasSource(s, "smc_netlink", true) {
		t.Errorf("sources %+v", s.Sources)
	}
	if _, err := k.HSLimitation(); err == nil {
		t.Error("HSLimitation without netlink gave no error")
	}
}

// TestWireRatesUseCaptureTime: a wire row's rate divides by the capture
// time between two snapshots, not the wall time (a replay at --speed 10
// takes a tenth of it).
func TestWireRatesUseCaptureTime(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	m := New(Options{})
	m.prev = &Snapshot{Time: t0, WireTime: t0, Conns: []ConnRow{{Key: "wire:1", Source: "wire", RxBytes: 1000}}}
	s := &Snapshot{Time: t0.Add(100 * time.Millisecond), Interval: 100 * time.Millisecond, WireTime: t0.Add(2 * time.Second),
		Conns: []ConnRow{{Key: "wire:1", Source: "wire", RxBytes: 5000}}}
	m.carry(s)
	if got := s.Conns[0].RxRate; got != 2000 || s.Conns[0].RateUnknown {
		t.Errorf("rate %v B/s (unknown %v), want 4000 bytes over 2 s of capture = 2000", got, s.Conns[0].RateUnknown)
	}
	// Not measured, not 0: a row the refresh before did not list, a
	// refresh before the capture's first frame, the first refresh. A
	// capture whose time stood still since (its replay paused or ended)
	// keeps the rate of the refresh before (1234 B/s, or not known).
	stood := &Snapshot{Time: t0, WireTime: t0, Conns: []ConnRow{{Key: "wire:1", Source: "wire", RxBytes: 1000, RxRate: 1234}}}
	stoodUnknown := &Snapshot{Time: t0, WireTime: t0, Conns: []ConnRow{{Key: "wire:1", Source: "wire", RxBytes: 1000, RateUnknown: true}}}
	live := &Wire{live: true}
	for name, c := range map[string]struct {
		prev    *Snapshot
		wire    time.Time
		key     string
		unknown bool
		rate    float64
		wire0   *Wire
	}{
		// A live capture whose time stood (no frame since): over the
		// refresh's interval, 4000 B in 100 ms.
		"live, no frame":          {stood, t0, "wire:1", false, 40000, live},
		"new row":                 {m.prev, t0.Add(2 * time.Second), "wire:2", true, 0, nil},
		"replay stood":            {stood, t0, "wire:1", false, 1234, nil},
		"replay stood, not known": {stoodUnknown, t0, "wire:1", true, 0, nil},
		"before its frames":       {&Snapshot{Time: t0, Conns: m.prev.Conns}, t0.Add(2 * time.Second), "wire:1", true, 0, nil},
		"first refresh":           {nil, t0.Add(2 * time.Second), "wire:1", true, 0, nil},
		"measured":                {m.prev, t0.Add(2 * time.Second), "wire:1", false, 2000, nil},
	} {
		m := New(Options{Wire: c.wire0})
		m.prev = c.prev
		s := &Snapshot{Time: t0.Add(100 * time.Millisecond), Interval: 100 * time.Millisecond, WireTime: c.wire,
			Conns: []ConnRow{{Key: c.key, Source: "wire", RxBytes: 5000}}}
		if c.prev == nil {
			s.Interval = 0
		}
		m.carry(s)
		if got := s.Conns[0]; got.RateUnknown != c.unknown || got.RxRate != c.rate {
			t.Errorf("%s: rate %v unknown %v, want %v %v", name, got.RxRate, got.RateUnknown, c.rate, c.unknown)
		}
	}
}

// TestWireLinksActive: in the first 900 frames of multilink.pcap both
// links are up (CONFIRM_LINK done, no DELETE_LINK yet): the wire rows
// count them active and the group redundant, as the kernel rows would.
func TestWireLinksActive(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../samples/multilink.pcap")
	cut := testutil.WriteFrames(t, "first900.pcap", lt, frames[:900])
	w, err := OpenWire(cut, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := New(Options{Wire: w, Now: fixedClock()}).Refresh()
	if s.Overview.LinksActive != 2 || s.Overview.NoRedundancy != 0 || len(s.LinkGroups) != 1 || !s.LinkGroups[0].Redundant {
		t.Errorf("overview %+v, link groups %+v", s.Overview, s.LinkGroups)
	}
}

// TestLostLinkStaysDown: the kernel stops listing link 2 when it is lost
// in a failover; the group keeps it, DELETED and inactive, while the group
// is without redundancy (so smc_link_up{link="2"} reads 0 and SMCLinkDown
// fires), and drops it once two links are active again.
func TestLostLinkStaysDown(t *testing.T) {
	before, after := recorded(t, "multilink-client-before"), recorded(t, "multilink-client-after")
	k := &switchKernel{Kernel: before}
	m := New(Options{Kernel: k, Now: fixedClock()})
	m.Refresh()
	k.Kernel = after
	links := func(s Snapshot) string {
		var out []string
		for _, l := range s.LinkGroups[0].Links {
			out = append(out, fmt.Sprintf("%d:%s:%v", l.ID, l.State, l.Active))
		}
		return strings.Join(out, " ")
	}
	for i := range 3 { // remembered across refreshes, not only the first after the loss
		s := m.Refresh()
		if got := links(s); got != "1:ACTIVE:true 2:DELETED:false" {
			t.Fatalf("refresh %d after the failover: links %s", i, got)
		}
		if s.Overview.LinksLost != 1 || s.Overview.Links != 1 || s.Overview.NoRedundancy != 1 {
			t.Errorf("overview %+v", s.Overview)
		}
		if l := s.LinkGroups[0].Links[1]; l.IBDev != "rxe1" || l.Since.IsZero() {
			t.Errorf("lost link %+v: keeps its device, says since when", l)
		}
	}
	k.Kernel = before
	if got := links(m.Refresh()); got != "1:ACTIVE:true 2:ACTIVE:true" {
		t.Errorf("redundant again: links %s", got)
	}
	k.Kernel = after
	m.Refresh()
	k.Kernel = before
	m.Refresh()
	k.Kernel = after
	s := m.Refresh()
	if got := links(s); got != "1:ACTIVE:true 2:DELETED:false" {
		t.Errorf("lost again: links %s", got)
	}
}

// recorded replays one of smcnl/testdata's recordings.
func recorded(t *testing.T, name string) Kernel {
	t.Helper()
	k, err := ReplayKernel("../smcnl/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// switchKernel is a Kernel whose recording a test replaces between refreshes.
type switchKernel struct{ Kernel }

// replacedLink is the failed-over host whose group already has a new link
// 3 on rxe0 beside link 1: two active links again.
type replacedLink struct{ Kernel }

func (k replacedLink) LinkGroupsR() ([]smcnl.LinkGroupR, error) {
	gs, err := k.Kernel.LinkGroupsR()
	for i := range gs {
		l := gs[i].Links[0]
		l.ID = 3
		gs[i].Links = append(gs[i].Links, l)
	}
	return gs, err
}

// TestLinkReplacedEvents: a link lost while the group is redundant again
// (a new link came in the same interval) is not kept as lost, and its going
// is still a link-down and a failover.
func TestLinkReplacedEvents(t *testing.T) {
	k := &switchKernel{Kernel: recorded(t, "multilink-client-before")}
	m := New(Options{Kernel: k, Now: fixedClock()})
	m.Refresh()
	k.Kernel = replacedLink{recorded(t, "multilink-client-after")}
	s := m.Refresh()
	var kinds []string
	for _, e := range s.Events {
		kinds = append(kinds, string(e.Kind))
	}
	if got := strings.Join(kinds, ","); !strings.Contains(got, "link-down") || !strings.Contains(got, "failover") {
		t.Errorf("events %s: want link-down and failover", got)
	}
	for _, l := range s.LinkGroups[0].Links {
		if l.State == LinkDeleted {
			t.Errorf("link %d kept as lost in a redundant group", l.ID)
		}
	}
}

// TestRemote: a monitor over another host's exporter shows that host's
// snapshot, and says why when it does not answer.
func TestRemote(t *testing.T) {
	want := New(Options{Kernel: recorded(t, "multilink-client-before"), Now: fixedClock()}).Refresh()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/snapshot.json" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(want)
	}))
	s := New(Options{Remote: srv.URL, Now: fixedClock()}).Refresh()
	if s.Overview.SMCR != 2 || len(s.LinkGroups) != 1 || !strings.HasPrefix(s.Origin, "remote "+srv.URL) {
		t.Errorf("remote snapshot: origin %q overview %+v", s.Origin, s.Overview)
	}
	srv.Close()
	s = New(Options{Remote: srv.URL, Now: fixedClock()}).Refresh()
	if len(s.Sources) != 1 || s.Sources[0].Available || s.Sources[0].Name != "remote" || s.Conns == nil {
		t.Errorf("unreachable remote: %+v", s.Sources)
	}
}

// TestWireReadPastDamage: a replay of a file damaged in a record header,
// read past its damage to the end, is a source read (its rows are the
// file's) whose detail and error name the damage.
func TestWireReadPastDamage(t *testing.T) {
	data, err := os.ReadFile("../samples/pingpong.pcap")
	if err != nil {
		t.Fatal(err)
	}
	offs := testutil.RecordOffsets(data)
	binary.LittleEndian.PutUint32(data[offs[len(offs)/2]+8:], 0x7fffff00) // beyond the snap length
	path := filepath.Join(t.TempDir(), "damaged.pcap")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWire(path, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err != nil && !errors.Is(err, capture.ErrCorruptRecord) {
		t.Fatal(err)
	}
	s := New(Options{Wire: w, Now: fixedClock()}).Refresh()
	var src Source
	for _, x := range s.Sources {
		if x.Name == SourceWireName {
			src = x
		}
	}
	if !src.Available || !src.Ended || src.Frames != len(offs)-1 || !strings.Contains(src.Error, "corrupt record") {
		t.Errorf("wire source %+v; want read to its end, %d frames, with the damage", src, len(offs)-1)
	}
	if len(s.Conns) != 1 || s.Conns[0].Mode != ModeSMCR {
		t.Errorf("rows %+v; want the capture's SMC-R connection", s.Conns)
	}
}
