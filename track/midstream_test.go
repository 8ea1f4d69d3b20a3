package track

import (
	"testing"

	"github.com/smcscope/smcscope/capture"
)

// TestMidStream drops the first frames of pingpong.pcap, as if the capture
// had started during the connection: no SYN, no CLC, maybe no LLC. The
// tracker must still find the link by its QPs, rebuild the connection from
// its CDCs, and count what it could not attach.
func TestMidStream(t *testing.T) {
	const name = refDir + "pingpong.pcap"
	full := feedFile(t, name, Options{}, 0).Snapshot()
	fc := full.Conns[0]
	// Producer counts of every CDC per direction (by source address) in
	// the whole capture: a joined connection starts counting at one of them.
	prods := map[string]map[uint64]bool{"10.10.0.2": {0: true}, "10.10.0.1": {0: true}}
	eachFrame(t, name, func(f *capture.Frame) {
		if f.CDC != nil && f.IPv4 != nil {
			prods[f.IPv4.SrcIP.String()][uint64(f.CDC.Prod.Count)] = true
		}
	})
	for _, skip := range []int{21, 25, 1000, 2001, 4000} {
		tr := feedFile(t, name, Options{Timeline: "all"}, skip)
		s := tr.Snapshot()
		checkAccounting(t, s.Stats)
		if s.Stats.Frames != 4140-skip {
			t.Fatalf("skip %d: %d frames fed", skip, s.Stats.Frames)
		}
		if len(s.Conns) != 1 || len(s.Links) != 1 || len(s.LinkGroups) != 1 {
			t.Fatalf("skip %d: %d conns %d links %d lgrs, want 1 each", skip, len(s.Conns), len(s.Links), len(s.LinkGroups))
		}
		c, l, g := s.Conns[0], s.Links[0], s.LinkGroups[0]
		if !c.Inferred || c.Outcome != OutcomeUnknown || !l.Inferred || !g.Inferred || s.Stats.InferredLinks != 1 || s.Stats.InferredConns != 1 {
			t.Errorf("skip %d: inferred conn %v link %v lgr %v outcome %v, want all inferred", skip, c.Inferred, l.Inferred, g.Inferred, c.Outcome)
		}
		// Both link directions found by their QPs, and both CDC streams
		// joined into one connection on that link.
		if !l.keyed[DirC2S] || !l.keyed[DirS2C] || c.Link != l.ID || c.LGR != g.ID {
			t.Errorf("skip %d: link keyed %v, conn on link %d lgr %d", skip, l.keyed, c.Link, c.LGR)
		}
		// A is whoever sent first after the cut; find which address is A.
		a := "10.10.0.2"
		dA, dB := DirC2S, DirS2C
		if l.Client.Addr.String() != a {
			dA, dB = DirS2C, DirC2S
		}
		for _, x := range []struct {
			d    Dir
			src  string
			full *Flow
		}{{dA, "10.10.0.2", &fc.Flow[DirC2S]}, {dB, "10.10.0.1", &fc.Flow[DirS2C]}} {
			f := c.Flow[x.d]
			if f.CDCs == 0 || f.Bytes != f.WriteBytes {
				t.Errorf("skip %d from %s: %d CDCs, %d B by cursor vs %d B by WRITE", skip, x.src, f.CDCs, f.Bytes, f.WriteBytes)
			}
			if base := x.full.Bytes - f.Bytes; !prods[x.src][base] {
				t.Errorf("skip %d from %s: counting started at %d B, which is no CDC's producer count", skip, x.src, base)
			}
			if f.Prod != x.full.Prod || f.CursorErrors != 0 || f.SeqGaps != 0 {
				t.Errorf("skip %d from %s: final cursor %v (full %v), cursor errors %d, seq gaps %d", skip, x.src, f.Prod, x.full.Prod, f.CursorErrors, f.SeqGaps)
			}
			if !f.Closed {
				t.Errorf("skip %d from %s: close flag not seen", skip, x.src)
			}
		}
		// Some frames came before the QPs could be identified; they are
		// counted, and they are few.
		if s.Stats.Unattached == 0 || s.Stats.Unattached > 8 {
			t.Errorf("skip %d: %d unattached frames, want a few", skip, s.Stats.Unattached)
		}
		if s.Stats.TCPUntracked == 0 {
			t.Errorf("skip %d: the closing TCP segments of an unseen handshake should count as untracked", skip)
		}
		if !g.Deleted {
			t.Errorf("skip %d: DELETE_LINK ALL not applied to the joined link group", skip)
		}
		if len(c.Timeline) == 0 || c.Timeline[0].What != "CDC" {
			t.Errorf("skip %d: timeline should start with a CDC: %v", skip, c.Timeline[:min(3, len(c.Timeline))])
		}
	}
}

// TestMidStreamRoles starts pingpong.pcap right after the CLC handshake:
// the first RoCE frame is the server's CONFIRM_LINK request, which tells
// who owns the link group although it travels "first" (A->B).
func TestMidStreamRoles(t *testing.T) {
	const name = refDir + "pingpong.pcap"
	full := feedFile(t, name, Options{}, 0).Snapshot()
	s := feedFile(t, name, Options{}, 13).Snapshot()
	if len(s.Links) != 2 || len(s.Conns) != 1 {
		t.Fatalf("%d links %d conns, want link 1 + rejected link 2, 1 conn", len(s.Links), len(s.Conns))
	}
	l, c := s.Links[0], s.Conns[0]
	if l.Inferred || c.RolesUnknown || l.Client.Addr.String() != "10.10.0.2" || l.Server.Addr.String() != "10.10.0.1" {
		t.Errorf("link roles: inferred %v, client %v server %v; want settled by CONFIRM_LINK, client 10.10.0.2", l.Inferred, l.Client.Addr, l.Server.Addr)
	}
	if l.LinkID != 1 || l.Server.UID != full.Links[0].Server.UID || s.LinkGroups[0].ServerLGRID != full.LinkGroups[0].ServerLGRID {
		t.Errorf("link %d UID %#x lgr %#x, want the values of the whole capture", l.LinkID, l.Server.UID, s.LinkGroups[0].ServerLGRID)
	}
	for d := range 2 {
		if c.Flow[d].Bytes != full.Conns[0].Flow[d].Bytes || c.Flow[d].CDCs != full.Conns[0].Flow[d].CDCs {
			t.Errorf("%v: %d B / %d CDCs, whole capture %d / %d", Dir(d), c.Flow[d].Bytes, c.Flow[d].CDCs,
				full.Conns[0].Flow[d].Bytes, full.Conns[0].Flow[d].CDCs)
		}
	}
	if s.Links[1].State != LinkRejected {
		t.Errorf("link 2 state %v, want rejected", s.Links[1].State)
	}
}
