package top

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/monitor"
)

// wireSnapshot replays a capture whole through a Monitor.
func wireSnapshot(t *testing.T, path string) monitor.Snapshot {
	t.Helper()
	return wireMonitor(t, path).Refresh()
}

// wireMonitor is a Monitor of a capture replayed whole, not refreshed yet.
func wireMonitor(t *testing.T, path string) *monitor.Monitor {
	t.Helper()
	w, err := monitor.OpenWire(path, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	m := monitor.New(monitor.Options{Wire: w})
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWireAbsentValues: what the wire does not carry reads "-", never a
// made-up zero: a fallback's token and RMBE sizes (no CLC Accept), the
// buffers of a group and the handshake errors (no kernel), the limits and link UIDs of a group the
// capture joined mid-stream; the group reads by one name everywhere; and
// a link of a group that ended in order is not "lost".
func TestWireAbsentValues(t *testing.T) {
	fb := wireSnapshot(t, "../../samples/decline-nordma.pcap")
	// The kernel's count of handshake errors, its rates: no kernel, none.
	if o := fb.Overview; o.HandshakeErrors != nil || o.HandshakeErrorRate != nil || o.FallbackRate != nil || o.SuccessRate != nil || o.RxBytesRate != nil || o.TxBytesRate != nil {
		t.Errorf("kernel counts of a capture: %+v, want none", o)
	}
	for _, r := range overviewRows(&fb) {
		if r.Key == "hserr" && r.Cells[1] != "-" {
			t.Errorf("overview's handshake errors of a capture: %q, want -", r.Cells[1])
		}
	}
	d := connDetail(fb.Conns[0], &fb)
	if !strings.Contains(d, "token -") || !strings.Contains(d, "RMBE -  peer RMBE -") {
		t.Errorf("fallback detail:\n%s", d)
	}

	frames, lt := testutil.ReadFrames(t, "../../samples/multilink.pcap")
	path := testutil.WriteFrames(t, "mid.pcap", lt, frames[39:])
	mid := wireSnapshot(t, path)
	var text bytes.Buffer
	if err := WriteText(&text, mid); err != nil {
		t.Fatal(err)
	}
	// The temporary directory's name may hold "0/0" itself.
	out := strings.ReplaceAll(text.String(), path, "CAPTURE")
	for _, bad := range []string{"0/0", "00000000", "link 0", "uid 0 "} {
		if strings.Contains(out, bad) {
			t.Errorf("--once text has %q:\n%s", bad, out)
		}
	}
	g := mid.LinkGroups[0]
	row := lgrRows(&mid)[0].row
	if row.Cells[0] != g.Name() || g.Name() != "wire-lgr:1" {
		t.Errorf("link group cell %q, name %q: want its key, as in events and labels", row.Cells[0], g.Name())
	}
	if det := lgrDetail(g, &mid); strings.Count(det, "lost since") != 1 || !strings.Contains(det, "vlan -") {
		t.Errorf("want exactly the failed-over link lost, no VLAN made up:\n%s", det)
	}

	// A window with no handshake: which end is the client is not said.
	win := wireSnapshot(t, testutil.WriteFrames(t, "window.pcap", lt, frames[1499:3000]))
	if d := connDetail(win.Conns[0], &win); strings.Contains(d, "from the client") || !strings.Contains(d, "role -") {
		t.Errorf("detail of a connection whose roles the window does not show:\n%s", d)
	}
	if devs := row.Cells[6]; devs != "qp0x11/0x13 qp0x11/0x11(lost)" {
		t.Errorf("devices cell %q: a link named by its QPs is not named twice", devs)
	}

	// A link deleted by a DELETE_LINK response alone (silent-link.pcap
	// without the server's request, frame 219): the reason is not in the
	// capture, and the detail says so, as the event does.
	sl, slt := testutil.ReadFrames(t, "../../samples/silent-link.pcap")
	noReq := wireSnapshot(t, testutil.WriteFrames(t, "noreq.pcap", slt, append(slices.Clone(sl[:218]), sl[219:]...)))
	if det := lgrDetail(noReq.LinkGroups[0], &noReq); !regexp.MustCompile(`lost since [0-9:.]+: ` + regexp.QuoteMeta(monitor.ReasonNotCaptured)).MatchString(det) {
		t.Errorf("a link deleted by a response alone, want %q after its loss:\n%s", monitor.ReasonNotCaptured, det)
	}
	whole := wireSnapshot(t, "../../samples/silent-link.pcap")
	if det := lgrDetail(whole.LinkGroups[0], &whole); !strings.Contains(det, "lost path") || strings.Contains(det, "not captured") {
		t.Errorf("the whole capture, want the request's reason:\n%s", det)
	}

	pp := wireSnapshot(t, "../../samples/pingpong.pcap")
	if det := lgrDetail(pp.LinkGroups[0], &pp); strings.Contains(det, "lost") {
		t.Errorf("an orderly end reads as a loss:\n%s", det)
	}
	if cells := lgrRows(&pp)[0].row.Cells; strings.Contains(strings.Join(cells, " "), "lost") {
		t.Errorf("an orderly end reads as a loss: %v", cells)
	}
}

// TestSilentLinkQP: silent-link.pcap frames 30-210 (before the DELETE_LINK
// that names the link, adoptDeleted in track) show the silent
// link's server QP only: its name and what the wire saw of it write the
// other "-", never 0x0. Nothing on the wire says that link works (its
// TEST_LINK is never acknowledged): its state is "-", not ACTIVE, counted
// apart in the overview ("not known"), and the exporter has no state or
// up series for it.
func TestSilentLinkQP(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../../samples/silent-link.pcap")
	s := wireSnapshot(t, testutil.WriteFrames(t, "window.pcap", lt, frames[29:210]))
	var text bytes.Buffer
	if err := WriteText(&text, s); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	if strings.Contains(out, "0x0<") || strings.Contains(out, "qp0x0") || !strings.Contains(out, "qp -<->0x11") {
		t.Errorf("--once text:\n%s", out)
	}
	if !strings.Contains(out, "links 2 (active 1, lost 0, not known 1)") {
		t.Errorf("--once overview does not count the silent link apart:\n%s", out)
	}
	var silent *monitor.LinkRow
	for _, g := range s.LinkGroups {
		for i := range g.Links {
			if g.Links[i].Name() == "qp-/0x11" {
				silent = &g.Links[i]
			}
		}
	}
	if silent == nil || silent.State != monitor.LinkNotKnown || silent.Active {
		t.Fatalf("the silent link: %+v, want state - and not active", silent)
	}
	if o := s.Overview; o.Links != 2 || o.LinksActive != 1 || o.LinksUnknown != 1 {
		t.Errorf("overview links %d active %d not known %d, want 2 1 1", o.Links, o.LinksActive, o.LinksUnknown)
	}
	if note := overviewRows(&s); !strings.Contains(fmt.Sprint(note), "1 not known") {
		t.Errorf("overview screen: %v", note)
	}
	// The table cuts a note at 80 columns; the selected row's detail
	// says it whole.
	for key, want := range map[string]string{
		"lgrs":         "link groups: 2 links, 1 active, 1 not known (no traffic seen to work)\n",
		"noredundancy": "without redundancy: one link: a port or RNIC failure ends them; 2 more with one link seen, whose other links the capture may not show (it joined after their setup, or has none of their RoCE traffic)\n",
	} {
		var row overviewRow
		for _, e := range overviewEntries(&s) {
			if e.v.key == key {
				row = e.v
			}
		}
		if d := overviewDetail(row, &s); !strings.HasPrefix(d, want) {
			t.Errorf("overview detail of %s:\n%s\nwant it to start %q", key, d, want)
		}
	}
}

// TestFirstRefreshRates: a rate is a change since the refresh before;
// the first refresh (smctop --once) has none, so its rates read "-" in
// the text, the connections list and a connection's detail, never 0; nor
// has a refresh after the replay ended (monitor's TestWireRatesUseCaptureTime
// has the measured ones).
func TestFirstRefreshRates(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../../samples/pingpong.pcap")
	m := wireMonitor(t, testutil.WriteFrames(t, "window.pcap", lt, frames[1499:3000]))
	first := m.Refresh()
	var text bytes.Buffer
	if err := WriteText(&text, first); err != nil {
		t.Fatal(err)
	}
	var row []string // the connection's line: KEY MODE ... RX TX RX/s TX/s REASON
	for l := range strings.Lines(text.String()) {
		if strings.HasPrefix(l, "wire:1 ") {
			row = strings.Fields(l)
		}
	}
	if len(row) != 14 || row[11] != "-" || row[12] != "-" {
		t.Errorf("--once text: want RX/s and TX/s \"-\" in the connection's line %q:\n%s", row, text.String())
	}
	cells := connRows(&first)[0].row.Cells
	if rx, tx := cells[11], cells[12]; rx != "-" || tx != "-" {
		t.Errorf("first refresh: rates %q %q, want -", rx, tx)
	}
	if d := connDetail(first.Conns[0], &first); strings.Count(d, " B (-)") != 2 {
		t.Errorf("first refresh detail:\n%s", d)
	}
	// The replay ended before the first refresh: no capture time passed
	// since, nothing to measure a rate over.
	second := m.Refresh()
	if cells := connRows(&second)[0].row.Cells; cells[11] != "-" || cells[12] != "-" {
		t.Errorf("second refresh of an ended replay: rates %q %q, want -", cells[11], cells[12])
	}
}
