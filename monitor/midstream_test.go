package monitor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
)

// TestWireMidStream: multilink.pcap from frame 40 on (editcap -r
// multilink.pcap out 40-7204: the capture began after the link group was
// set up) still shows the group's two links, the one lost and the one
// that ended with the group; a link the capture never saw numbered is
// "-" or named by its QPs, never "link 0"; the group is named the same
// in its row, its events and its findings.
func TestWireMidStream(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../samples/multilink.pcap")
	s := replay(t, testutil.WriteFrames(t, "mid.pcap", lt, frames[39:]))
	if len(s.LinkGroups) != 1 {
		t.Fatalf("%d link groups", len(s.LinkGroups))
	}
	g := s.LinkGroups[0]
	var states []string
	for _, l := range g.Links {
		states = append(states, l.Name()+":"+string(l.State))
	}
	if strings.Join(states, " ") != "qp0x11/0x13:INACTIVE qp0x11/0x11:DELETED" {
		t.Errorf("links %v, want the link that ended with the group and the one lost by failover", states)
	}
	if g.Name() != g.Key || g.ID != 0 {
		t.Errorf("group %q key %q: the capture does not show its ID, its name is its key", g.Name(), g.Key)
	}
	for _, e := range s.Events {
		if strings.Contains(e.Text, "link 0 ") || strings.Contains(e.Text, "link group -") || strings.Contains(e.Text, "now on link 1") {
			t.Errorf("event names a link or group by a number nobody gave it: %s", e.Text)
		}
		if e.LGR != "" && e.LGR != g.Key {
			t.Errorf("event of group %s, the row's key is %s", e.LGR, g.Key)
		}
		if e.LGR != "" && !strings.Contains(e.Text, g.Name()) && e.Kind != EventExpert {
			t.Errorf("event of the group does not name it %s: %s", g.Name(), e.Text)
		}
	}
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"id":"-"`) || strings.Contains(string(b), `"id":0`) || strings.Contains(string(b), `"uid":0`) {
		t.Errorf("JSON writes an unknown value as a value: %s", b)
	}
}

// TestWireOrderlyEnd: pingpong's group ends with an orderly DELETE_LINK
// of every link: its link ended with it and was not lost (no link is
// counted lost, the screen says no "lost").
func TestWireOrderlyEnd(t *testing.T) {
	s := replay(t, "../samples/pingpong.pcap")
	if len(s.LinkGroups) != 1 || len(s.LinkGroups[0].Links) != 1 {
		t.Fatalf("groups %+v", s.LinkGroups)
	}
	l := s.LinkGroups[0].Links[0]
	if l.State != LinkInactive || l.ID != 1 || l.Since.IsZero() || l.DeleteReason.Name != "operator-initiated" {
		t.Errorf("link %+v: want link 1 INACTIVE since the group's end, with its reason", l)
	}
	if s.Overview.LinksLost != 0 {
		t.Errorf("overview counts %d lost links", s.Overview.LinksLost)
	}
}

// TestLinkUIDText: a link user ID reads the same in JSON as on screen
// and in the wire's texts ("00000101"), and an unknown one is absent.
func TestLinkUIDText(t *testing.T) {
	b, err := json.Marshal(LinkRow{ID: 1, UID: 0x101})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"uid":"00000101"`) || strings.Contains(string(b), "peer_uid") {
		t.Errorf("JSON %s", b)
	}
	var back LinkRow
	if err := json.Unmarshal(b, &back); err != nil || back.UID != 0x101 {
		t.Errorf("read back %+v (%v)", back, err)
	}
	if LinkUID(0).String() != "-" || LinkUID(0x102).String() != "00000102" {
		t.Errorf("%s %s", LinkUID(0), LinkUID(0x102))
	}
}

// TestWireSnapshotIsReplay: WireSnapshot, which internal/agree holds to
// smcdump's views, is what a replay through the dashboard shows.
func TestWireSnapshotIsReplay(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../samples/multilink.pcap")
	for name, path := range map[string]string{
		"whole": "../samples/multilink.pcap",
		"mid":   testutil.WriteFrames(t, "mid.pcap", lt, frames[39:]),
	} {
		s := replay(t, path)
		w, err := OpenWire(path, "", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		snap := w.Snapshot()
		ws := WireSnapshot(&snap)
		for what, pair := range map[string][2]any{"conns": {s.Conns, ws.Conns}, "link groups": {s.LinkGroups, ws.LinkGroups}, "fallbacks": {s.Fallbacks, ws.Fallbacks}} {
			a, _ := json.Marshal(pair[0])
			b, _ := json.Marshal(pair[1])
			if string(a) != string(b) {
				t.Errorf("%s: %s differ:\nreplay %s\nWireSnapshot %s", name, what, a, b)
			}
		}
	}
}

// TestWireRolesUnknown: frames 1500-3000 of multilink.pcap hold neither a
// CLC message nor an LLC one, only the RoCE traffic of a group set up
// before: which host is the client is not on the wire, so the group and
// its connections have no role (shown "-"), not the client's.
func TestWireRolesUnknown(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../samples/multilink.pcap")
	s := replay(t, testutil.WriteFrames(t, "window.pcap", lt, frames[1499:3000]))
	if len(s.LinkGroups) != 1 || len(s.Conns) == 0 {
		t.Fatalf("%d link groups, %d connections", len(s.LinkGroups), len(s.Conns))
	}
	if g := s.LinkGroups[0]; g.Role != "" {
		t.Errorf("group role %q, want none: the window shows no handshake", g.Role)
	}
	for _, c := range s.Conns {
		if c.Link().Role != "" {
			t.Errorf("connection %s role %q, want none", c.Key, c.Link().Role)
		}
	}
	for _, e := range s.Events {
		if strings.Contains(e.Text, "(v0)") {
			t.Errorf("event %q: a version the window does not show is written as 0", e.Text)
		}
	}
}

// TestWireRedundancyUnknown: pingpong's group, set up before frame 1500
// and ended after frame 3000, shows one link in that window; whether it
// has a second (one with no connection shows only a TEST_LINK now and
// then) is not on the wire: not known, not counted as a group without
// redundancy. The whole capture shows the second link's ADD_LINK
// rejected: known. The group's first event in the window is that it was
// first seen, not created, and its connection is not one that became SMC
// in the capture.
func TestWireRedundancyUnknown(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../samples/pingpong.pcap")
	s := replay(t, testutil.WriteFrames(t, "window.pcap", lt, frames[1499:3000]))
	if len(s.LinkGroups) != 1 {
		t.Fatalf("%d link groups", len(s.LinkGroups))
	}
	if g := s.LinkGroups[0]; g.Redundant || !g.RedundancyUnknown {
		t.Errorf("window: redundant %v, unknown %v: want not known", g.Redundant, g.RedundancyUnknown)
	}
	if o := s.Overview; o.NoRedundancy != 0 || o.RedundancyUnknown != 1 {
		t.Errorf("window: overview without redundancy %d, not known %d: want 0, 1", o.NoRedundancy, o.RedundancyUnknown)
	}
	// Nor did its connection become SMC there.
	if o := s.Overview; o.SuccessTotal != 0 || o.JoinedSMC != 1 {
		t.Errorf("window: %d became SMC, %d joined: want 0, 1", o.SuccessTotal, o.JoinedSMC)
	}
	// Nor was it created where the capture joined it.
	for _, e := range s.Events {
		if e.Kind == EventLGRCreated {
			t.Errorf("window: event %q: the group was set up before the capture", e.Text)
		}
	}
	whole := replay(t, "../samples/pingpong.pcap")
	if g := whole.LinkGroups[0]; g.Redundant || g.RedundancyUnknown {
		t.Errorf("whole: redundant %v, unknown %v: want known, not redundant", g.Redundant, g.RedundancyUnknown)
	}
	// The TCP frames alone (the TCP port mirrored, an RNIC that offloads
	// RoCE): the handshake shows the group's first link, nothing shows
	// whether a second was added on it.
	var tcp []mutate.Frame
	for _, f := range frames {
		if len(f.Data) > 23 && f.Data[12] == 0x08 && f.Data[13] == 0x00 && f.Data[23] == 6 {
			tcp = append(tcp, f)
		}
	}
	s = replay(t, testutil.WriteFrames(t, "tcp.pcap", lt, tcp))
	if len(s.LinkGroups) != 1 {
		t.Fatalf("TCP alone: %d link groups", len(s.LinkGroups))
	}
	if g := s.LinkGroups[0]; g.Redundant || !g.RedundancyUnknown {
		t.Errorf("TCP alone: redundant %v, unknown %v: want not known", g.Redundant, g.RedundancyUnknown)
	}
}

// TestWireReasonNotCaptured: silent-link.pcap without frame 219, the
// DELETE_LINK request of link 2 (reason lost path): its response, frame
// 220, carries 0 where the request had the reason (the client writes
// over it). Link 2 is deleted, its reason absent: no "0x00000000" on the
// link's row, in its JSON or in the event of its deletion. With the
// response before the request (a mirror that reorders), the request's
// reason shows, one deletion.
func TestWireReasonNotCaptured(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../samples/silent-link.pcap")
	dropped := append(append([]testutil.Packet{}, frames[:218]...), frames[219:]...)
	// The response, frame 221, before the request and the ACK after it.
	swapped := append(append(append([]testutil.Packet{}, frames[:218]...), frames[220], frames[218], frames[219]), frames[221:]...)
	for _, c := range []struct {
		name   string
		frames []testutil.Packet
		reason uint32
	}{{"dropped", dropped, 0}, {"swapped", swapped, 0x00010000}} {
		s := replay(t, testutil.WriteFrames(t, c.name+".pcap", lt, c.frames))
		if len(s.LinkGroups) != 1 {
			t.Fatalf("%s: %d link groups", c.name, len(s.LinkGroups))
		}
		var link2 *LinkRow
		for i := range s.LinkGroups[0].Links {
			if l := &s.LinkGroups[0].Links[i]; l.ID == 2 {
				link2 = l
			}
		}
		if link2 == nil || link2.State != LinkDeleted {
			t.Fatalf("%s: link 2 %+v, want deleted", c.name, link2)
		}
		if link2.DeleteReason.Code != c.reason || (c.reason == 0) != link2.DeleteReason.IsZero() || (c.reason == 0) != (link2.DeleteReason.Name == "") {
			t.Errorf("%s: link 2's reason %+v, want code %#x", c.name, link2.DeleteReason, c.reason)
		}
		b, err := json.Marshal(link2)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"delete_reason":`) == (c.reason == 0) || strings.Contains(string(b), `"delete_reason_not_captured":true`) != (c.reason == 0) ||
			link2.DeleteReasonNotCaptured != (c.reason == 0) {
			t.Errorf("%s: link 2's JSON %s", c.name, b)
		}
		deleted := 0
		for _, e := range s.Events {
			if e.Link != 2 || e.Kind != EventLinkDown {
				continue
			}
			deleted++
			if want := map[bool]string{true: "reason not captured", false: "lost path"}[c.reason == 0]; !strings.Contains(e.Text, want) {
				t.Errorf("%s: event %q, want %q", c.name, e.Text, want)
			}
		}
		if deleted != 1 {
			t.Errorf("%s: %d events of link 2's deletion, want 1", c.name, deleted)
		}
	}
}
