package rows_test

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
)

// snapshotOf is the tracker's snapshot of a whole capture.
func snapshotOf(t *testing.T, path string) track.Snapshot {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return snapshotRead(t, r)
}

// snapshotRead is the tracker's snapshot of every frame r reads.
func snapshotRead(t *testing.T, r *capture.Reader) track.Snapshot {
	t.Helper()
	return snapshotWith(t, r, track.Options{})
}

// snapshotWith is snapshotRead by a tracker of options opts.
func snapshotWith(t *testing.T, r *capture.Reader, opts track.Options) track.Snapshot {
	t.Helper()
	return trackRead(t, r, opts).Snapshot()
}

// trackRead is a tracker of options opts fed every frame r reads.
func trackRead(t *testing.T, r *capture.Reader, opts track.Options) *track.Tracker {
	t.Helper()
	tr := track.New(opts)
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return tr
		}
		if err != nil {
			t.Fatal(err)
		}
		tr.Feed(f)
	}
}

// TestWritesNotShown: ANCK's dump device copies a host's CDCs, not the
// RDMA WRITEs of its link: a capture of it alone shows the WRITE counts
// as unknown ("-"), not as none; a capture of the link shows them.
func TestWritesNotShown(t *testing.T) {
	for _, c := range []struct {
		path  string
		shown bool
	}{{"../../testdata/anck/dump-device.pcap", false}, {"../../testdata/reference/pingpong.pcap", true}} {
		s := snapshotOf(t, c.path)
		cs := rows.ConnRows(&s)
		if len(cs) == 0 {
			t.Fatalf("%s: no connection", c.path)
		}
		for _, f := range []*rows.Flow{&cs[0].Client2Srv, &cs[0].Srv2Client} {
			if got := rows.WriteCount(f, f.WriteBytes) != "-"; got != c.shown || f.WritesNotShown == c.shown {
				t.Errorf("%s: WRITE bytes %q (writes not shown %v)", c.path, rows.WriteCount(f, f.WriteBytes), f.WritesNotShown)
			}
		}
	}
}

// TestHistoryOneLinkTwoEvents: in a capture of the server's direction
// alone, the first CONFIRM_LINK request is also what announces the link
// (its Accept named the queue pair it comes from): the group's history
// lists both at that frame, not the first one only.
func TestHistoryOneLinkTwoEvents(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../../testdata/reference/pingpong.pcap")
	one := mutate.Mutation{Kind: mutate.OneWay, N: 1}
	r, err := capture.NewReader("oneway", mutate.NewSource(one.Apply(frames)), lt)
	if err != nil {
		t.Fatal(err)
	}
	s := snapshotRead(t, r)
	if len(s.LinkGroups) != 1 {
		t.Fatalf("%d link groups, want 1", len(s.LinkGroups))
	}
	// The Accept the capture holds told the group's version too.
	if got := rows.VersionName(s.LinkGroups[0].Version); got != "v2" {
		t.Errorf("group version %s, want v2 (the Accept's)", got)
	}
	evs := rows.History(&s, &s.LinkGroups[0])
	var announced, confirm int
	for _, e := range evs {
		switch {
		case strings.HasPrefix(e.What, "announced by CLC"):
			announced = e.Frame
		case strings.HasPrefix(e.What, "CONFIRM_LINK"):
			if confirm == 0 {
				confirm = e.Frame
			}
		}
	}
	if announced == 0 || confirm != announced {
		for _, e := range evs {
			t.Logf("frame %d: %s", e.Frame, e.What)
		}
		t.Errorf("announced at frame %d, first CONFIRM_LINK at frame %d: want both, at one frame", announced, confirm)
	}
}

// TestAbsentNames: a version or a number the capture did not carry is
// "-" on every surface, never 0.
func TestAbsentNames(t *testing.T) {
	if got := rows.VersionName(0); got != "-" {
		t.Errorf("VersionName(0) = %q", got)
	}
	if got := rows.VersionName(2); got != "v2" {
		t.Errorf("VersionName(2) = %q", got)
	}
	if got, got8 := rows.Known(0), rows.Known(uint8(0)); got != "-" || got8 != "-" {
		t.Errorf("Known(0) = %q, %q", got, got8)
	}
	if got := rows.Known(uint8(255)); got != "255" {
		t.Errorf("Known(255) = %q", got)
	}
}

// TestSilentLinkWindow: silent-link.pcap frames 30-210 (before the
// DELETE_LINK that names it, adoptDeleted in track) join the idle
// link the client's eth1 made silent: the server's TEST_LINK requests
// name the client's QP, nothing names the server's; its QPN is absent
// ("-"), not 0x000000. The group the capture makes of it shows no
// connection and no acknowledged request: its state is not known, not
// "active"; the other group, carrying connections, is known.
func TestSilentLinkWindow(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../../samples/silent-link.pcap")
	s := snapshotOf(t, testutil.WriteFrames(t, "window.pcap", lt, frames[29:210]))
	silent := 0
	for _, l := range rows.LinkRows(&s) {
		for _, e := range []rows.End{l.Client, l.Server} {
			if e.QPN == "0x000000" {
				t.Errorf("link %d: end %s QPN %q, want none", l.ID, e.Addr, e.QPN)
			}
			if e.Addr != "" && e.QPN == "" {
				silent++
			}
		}
	}
	if silent == 0 {
		t.Error("no end known by its address alone: the window no longer shows the silent link")
	}
	// Named by its QPs, the one not known "-": never "qp0x0/...".
	if got := track.LinkName(0, 0, 0x11); got != "qp-/0x11" {
		t.Errorf("a link of QPs - and 0x11 is named %q", got)
	}
	states := map[string]int{}
	for _, g := range rows.LGRRows(&s) {
		states[g.State]++
	}
	if states["unknown"] != 1 || states["active"] != 1 || len(states) != 2 {
		t.Errorf("group states %v, want the silent link's unknown and the group carrying connections active", states)
	}
	// The silent link is the one link whose state nothing says; the
	// one that carried the connections, joined too, is known.
	var silentLinks []string
	for _, l := range rows.LinkRows(&s) {
		if l.Facts.Silent {
			silentLinks = append(silentLinks, track.LinkName(l.LinkID, l.Facts.ClientQPN, l.Facts.ServerQPN))
		}
	}
	if len(silentLinks) != 1 || silentLinks[0] != "qp-/0x11" {
		t.Errorf("silent links %v, want qp-/0x11 alone", silentLinks)
	}
}

// TestEndedOneHostDump: a capture of one eRDMA host's ANCK dump device
// shows its own CDCs only: its close CDC (peer-conn-closed) is all the
// capture can show of the end, as a FIN is in a capture of one direction;
// the whole capture ends it by both close CDCs.
func TestEndedOneHostDump(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../../testdata/anck/dump-device.pcap")
	for side := 0; side <= 2; side++ {
		vf := frames
		if side > 0 {
			vf = mutate.Mutation{Kind: mutate.OneWay, N: side}.Apply(frames)
		}
		r, err := capture.NewReader("dump", mutate.NewSource(vf), lt)
		if err != nil {
			t.Fatal(err)
		}
		s := snapshotRead(t, r)
		if len(s.Conns) != 1 {
			t.Fatalf("side %d: %d connections", side, len(s.Conns))
		}
		c := &s.Conns[0]
		if !rows.Ended(c, false) {
			t.Errorf("side %d: not ended (flows closed %v/%v, not shown %v/%v)", side,
				c.Flow[0].Closed, c.Flow[1].Closed, c.Flow[0].NotShown, c.Flow[1].NotShown)
		}
	}
}

// TestDurationsWithoutSYN: a capture that lacks a connection's SYN (it
// began at the Proposal) times the handshake from the Proposal, which
// the SYN came before: each step a lower bound (AtLeast), the Proposal's
// own not known (-1), never 0. A SYN whose options the snap length cut
// is the connection's all the same.
func TestDurationsWithoutSYN(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../../testdata/reference/pingpong.pcap")
	whole := snapshotOf(t, "../../testdata/reference/pingpong.pcap")
	full := rows.ConnRows(&whole)[0].Handshake
	if full.AtLeast || full.Proposal <= 0 {
		t.Fatalf("whole capture: %+v", full)
	}
	// From the Proposal on (pingpong.pcap's frame 8; the SYNs before).
	r, err := capture.NewReader("late.pcap", mutate.NewSource(frames[7:]), lt)
	if err != nil {
		t.Fatal(err)
	}
	s := snapshotRead(t, r)
	h := rows.ConnRows(&s)[0].Handshake
	if !h.AtLeast || h.Proposal != -1 {
		t.Errorf("no SYN: %+v, want at least and no Proposal time", h)
	}
	if want := full.Confirm - full.Proposal; h.Confirm < want-0.001 || h.Confirm > want+0.001 {
		t.Errorf("no SYN: Confirm %.3f ms, want %.3f (from the Proposal)", h.Confirm, want)
	}
	// The SYN in the capture, its SMC option cut by the snap length
	// (editcap -C -4): the handshake is timed from it, as whole.
	cut := slices.Clone(frames)
	i := slices.IndexFunc(cut, func(f testutil.Packet) bool {
		d := f.Data
		return len(d) >= 54 && d[14+9] == 6 && d[14+20+13] == 0x02 // IPv4, TCP, SYN alone
	})
	if i < 0 {
		t.Fatal("no SYN")
	}
	syn := &cut[i]
	syn.CI.Length = len(syn.Data)
	syn.Data = syn.Data[:len(syn.Data)-4]
	syn.CI.CaptureLength = len(syn.Data)
	r, err = capture.NewReader("cut.pcap", mutate.NewSource(cut), lt)
	if err != nil {
		t.Fatal(err)
	}
	s = snapshotRead(t, r)
	if h := rows.ConnRows(&s)[0].Handshake; h != full {
		t.Errorf("SYN's options cut: %+v, want the whole capture's %+v", h, full)
	}
}

// TestUnnamedDeclineCode: a Decline code no kernel names (a damaged copy's
// 0x03032500 in no-ueid.pcap's place) has no name, not its hex again: the
// smc,decline row's name is absent and neither the reason nor the
// connection's detail repeats the code.
func TestUnnamedDeclineCode(t *testing.T) {
	s := snapshotOf(t, testutil.Root(t)+"/samples/no-ueid.pcap")
	if len(s.Conns) != 1 || s.Conns[0].Fallback.Cause != track.CauseDecline {
		t.Fatalf("%d connections, want one declined", len(s.Conns))
	}
	s.Conns[0].Fallback.Code = 0x03032500
	v := rows.Declines(&s)
	if len(v.Fallbacks) != 1 || len(v.ByReason) != 1 {
		t.Fatalf("%d fallbacks, %d reasons", len(v.Fallbacks), len(v.ByReason))
	}
	if r := v.Fallbacks[0]; r.Code != "0x03032500" || r.Name != "" || v.ByReason[0].Reason != "0x03032500 (client)" {
		t.Errorf("code %q name %q reason %q; want 0x03032500, none, 0x03032500 (client)", r.Code, r.Name, v.ByReason[0].Reason)
	}
	if d := track.ConnDetail(&s.Conns[0]); strings.Count(d, "0x03032500") != 1 {
		t.Errorf("detail %q names the code twice", d)
	}
}

// cutSnapshot is the tracker's snapshot of the capture at path as a snap
// length of snap bytes keeps it (tcpdump -s).
func cutSnapshot(t *testing.T, path string, snap int) track.Snapshot {
	t.Helper()
	frames, lt := testutil.ReadFrames(t, path)
	for i := range frames {
		if len(frames[i].Data) > snap {
			frames[i].Data = frames[i].Data[:snap:snap]
			frames[i].CI.CaptureLength = snap
		}
	}
	return snapshotOf(t, testutil.WriteFrames(t, "cut.pcap", lt, frames))
}

// TestCutCLCHeaders: what the header of a CLC message the snap length
// cut says reaches the rows: pingpong.pcap cut to 96 bytes keeps the
// Accept's first-contact flag (first_contact true, not absent);
// decline-nordma.pcap cut to 80 bytes keeps the Decline's header, not
// its code: the fallback row's code and name are absent ("-"), counted
// under "code not captured".
func TestCutCLCHeaders(t *testing.T) {
	s := cutSnapshot(t, testutil.Root(t)+"/samples/pingpong.pcap", 96)
	r := rows.ConnRows(&s)
	if len(r) != 1 || r[0].FirstContact == nil || !*r[0].FirstContact {
		t.Errorf("rows %+v: want one, first contact", r)
	}
	s = cutSnapshot(t, testutil.Root(t)+"/samples/decline-nordma.pcap", 80)
	v := rows.Declines(&s)
	if len(v.Fallbacks) != 1 || len(v.ByReason) != 1 {
		t.Fatalf("%d fallbacks, %d reasons", len(v.Fallbacks), len(v.ByReason))
	}
	if f := v.Fallbacks[0]; f.Code != "" || f.Name != "" || f.By != "server" || v.ByReason[0].Reason != "code not captured (server)" {
		t.Errorf("fallback %+v, reason %q", f, v.ByReason[0].Reason)
	}
}
