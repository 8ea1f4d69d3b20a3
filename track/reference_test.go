package track

import (
	"math/bits"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/decode"
)

// checkAccounting: every frame lands in exactly one bucket.
func checkAccounting(t *testing.T, st Stats) {
	t.Helper()
	sum := st.ConnAttached + st.LinkOnly + st.Unattached + st.TCPUntracked + st.Other + st.CaptureDups
	if sum != st.Frames {
		t.Errorf("frame accounting: attached %d + link-only %d + unattached %d + tcp-untracked %d + other %d = %d, want %d frames",
			st.ConnAttached, st.LinkOnly, st.Unattached, st.TCPUntracked, st.Other, sum, st.Frames)
	}
}

func cursorOf(t *testing.T, s string) Cursor {
	t.Helper()
	w, c, ok := strings.Cut(s, "/")
	if !ok {
		t.Fatalf("cursor %q", s)
	}
	return Cursor{uint16(num(t, w)), uint32(num(t, c))}
}

// TestPingpong checks the tracker against the kernels' own view of the
// connection (smc_diag, SMC netlink) printed in the guest logs, and against
// a plain count of the decoded frames.
func TestPingpong(t *testing.T) {
	const name = refDir + "pingpong.pcap"
	cl, sv := readLog(t, refDir+"pingpong.client.log"), readLog(t, refDir+"pingpong.server.log")
	wire := countWire(t, name, 0)
	tr := feedFile(t, name, Options{Timeline: "1"}, 0)
	s := tr.Snapshot()
	checkAccounting(t, s.Stats)
	if s.Stats.Unattached != 0 || s.Stats.TCPUntracked != 0 {
		t.Errorf("stats %+v: want nothing unattached in a complete capture", s.Stats)
	}
	if len(s.Conns) != 1 {
		t.Fatalf("%d connections, want 1", len(s.Conns))
	}
	c := s.Conns[0]
	if c.Outcome != OutcomeSMCR || cl.diag["mode"] != "SMCR" || !c.FirstContact || c.Version != 2 {
		t.Errorf("outcome %v first contact %v v%d, want SMC-R (diag mode %s) first contact v2", c.Outcome, c.FirstContact, c.Version, cl.diag["mode"])
	}
	if c.Client.String() != cl.local || c.Server.String() != cl.peer {
		t.Errorf("tuple %v -> %v, want %s -> %s", c.Client, c.Server, cl.local, cl.peer)
	}
	if c.Offered != "SMC-Rv2" || strings.TrimRight(c.EID, " ") != "SMC-LAB-UEID" {
		t.Errorf("Proposal offered %q EID %q, want SMC-Rv2 and the lab's UEID", c.Offered, c.EID)
	}
	if !c.OptionSYN || !c.OptionSYNACK {
		t.Errorf("SMC option SYN %v SYN-ACK %v, want both", c.OptionSYN, c.OptionSYNACK)
	}
	// Bytes from cursors = the kernels' byte counters.
	c2s, s2c := &c.Flow[DirC2S], &c.Flow[DirS2C]
	if want := num(t, cl.stats["stats.smcr.tx_bytes"]); c2s.Bytes != want || c2s.WriteBytes != want || num(t, sv.stats["stats.smcr.rx_bytes"]) != want {
		t.Errorf("C->S bytes %d (WRITE %d), want client tx_bytes %d", c2s.Bytes, c2s.WriteBytes, want)
	}
	if want := num(t, sv.stats["stats.smcr.tx_bytes"]); s2c.Bytes != want || s2c.WriteBytes != want {
		t.Errorf("S->C bytes %d (WRITE %d), want server tx_bytes %d", s2c.Bytes, s2c.WriteBytes, want)
	}
	if want := cursorOf(t, cl.end["tx_prod"]); c2s.Prod != want {
		t.Errorf("C->S producer cursor %v, want client's final tx_prod %v", c2s.Prod, want)
	}
	if want := cursorOf(t, cl.end["rx_prod"]); s2c.Prod != want {
		t.Errorf("S->C producer cursor %v, want client's final rx_prod %v", s2c.Prod, want)
	}
	// CDC counts = what the decoder saw; the server received every C->S CDC.
	if c2s.CDCs != wire.cdcs["10.10.0.2"] || s2c.CDCs != wire.cdcs["10.10.0.1"] {
		t.Errorf("CDCs C->S %d S->C %d, want %d / %d", c2s.CDCs, s2c.CDCs, wire.cdcs["10.10.0.2"], wire.cdcs["10.10.0.1"])
	}
	if want := int(num(t, sv.stats["stats.smcr.rx_cnt"])); c2s.CDCs != want {
		t.Errorf("C->S CDCs %d, want server rx_cnt %d", c2s.CDCs, want)
	}
	if c2s.SeqGaps+s2c.SeqGaps+c2s.SeqDup+s2c.SeqDup+c2s.CursorErrors+s2c.CursorErrors != 0 {
		t.Errorf("sequence/cursor anomalies in a clean capture: %+v %+v", c2s, s2c)
	}
	if c2s.LastSeq != wire.lastSeq["10.10.0.2"] || int(c2s.LastSeq) != c2s.CDCs {
		t.Errorf("C->S last seq %d, want %d = CDC count", c2s.LastSeq, wire.lastSeq["10.10.0.2"])
	}
	if c2s.Writes != wire.writes["10.10.0.2"] || s2c.Writes != wire.writes["10.10.0.1"] {
		t.Errorf("WRITEs %d/%d, want %d/%d", c2s.Writes, s2c.Writes, wire.writes["10.10.0.2"], wire.writes["10.10.0.1"])
	}
	if c2s.WritesOutside+s2c.WritesOutside != 0 {
		t.Errorf("WRITEs outside the RMBE: %d/%d", c2s.WritesOutside, s2c.WritesOutside)
	}
	if want := uint32(num(t, sv.diag["token"])); c.ServerEP.Token != want {
		t.Errorf("server token %d, want %d", c.ServerEP.Token, want)
	}
	if want := uint32(num(t, cl.diag["token"])); c.ClientEP.Token != want {
		t.Errorf("client token %d, want %d", c.ClientEP.Token, want)
	}
	if want := uint32(num(t, sv.diag["rmbe"])); c.ServerEP.RMBESize != want || c.ClientEP.RMBESize != uint32(num(t, cl.diag["rmbe"])) {
		t.Errorf("RMBE sizes %d/%d, want %d", c.ServerEP.RMBESize, c.ClientEP.RMBESize, want)
	}
	if !c.Closed() || !c2s.Closed || !s2c.Closed || !c2s.FIN || !s2c.FIN {
		t.Errorf("close: %s, want both sides closed and FIN", CloseInfo(&c))
	}
	steps := []struct {
		name string
		at   int64
	}{{"SYN", c.TSYN.UnixNano()}, {"Proposal", c.TProposal.UnixNano()}, {"Accept", c.TAccept.UnixNano()},
		{"Confirm", c.TConfirm.UnixNano()}, {"first CDC", c.TFirstCDC.UnixNano()}, {"close", c.TClose.UnixNano()}}
	for i := 1; i < len(steps); i++ {
		if steps[i].at <= steps[i-1].at {
			t.Errorf("handshake step %s (%d) not after %s (%d)", steps[i].name, steps[i].at, steps[i-1].name, steps[i-1].at)
		}
	}

	// One link group, seen from both ends.
	if len(s.LinkGroups) != 1 {
		t.Fatalf("%d link groups, want 1", len(s.LinkGroups))
	}
	g := s.LinkGroups[0]
	if want := uint32(num(t, sv.lgr["lgr_smcr.id"])); g.ServerLGRID != want || g.ClientLGRID != uint32(num(t, cl.lgr["lgr_smcr.id"])) {
		t.Errorf("lgr IDs server %#x client %#x, want %#x (netlink)", g.ServerLGRID, g.ClientLGRID, want)
	}
	if g.MaxLinks != uint8(num(t, sv.lgr["lgr_smcr.v2.max_links"])) || g.MaxConns != uint8(num(t, sv.lgr["lgr_smcr.v2.max_conns"])) {
		t.Errorf("max links/conns %d/%d, want netlink %s/%s", g.MaxLinks, g.MaxConns, sv.lgr["lgr_smcr.v2.max_links"], sv.lgr["lgr_smcr.v2.max_conns"])
	}
	if !g.Deleted || g.DeleteCode != uint32(decode.DelLinkOpInitTerm) || c.LGR != g.ID {
		t.Errorf("lgr deleted %v reason %#x conn lgr %d, want deleted by the client's shutdown (operator) and conn on it", g.Deleted, g.DeleteCode, c.LGR)
	}
	// Link 1 confirmed (then deleted with the group), link 2 rejected.
	if len(s.Links) != 2 {
		t.Fatalf("%d links, want 2 (link 1, rejected link 2)", len(s.Links))
	}
	l1, l2 := s.Links[0], s.Links[1]
	if want := uint8(num(t, sv.link["link_smcr.link_id"])); l1.LinkID != want || c.Link != l1.ID {
		t.Errorf("link number %d, conn link %d, want %d", l1.LinkID, c.Link, want)
	}
	// netlink prints the link UID as the raw bytes read as a host u32.
	if want := bits.ReverseBytes32(uint32(num(t, sv.link["link_smcr.link_uid"]))); l1.Server.UID != want || l1.Client.UID != want {
		t.Errorf("link UIDs %#x/%#x, want %#x", l1.Server.UID, l1.Client.UID, want)
	}
	if l1.State != LinkDeleted || !hasHistory(l1.History, "CONFIRM_LINK_V2 resp") {
		t.Errorf("link 1 state %v history %v, want confirmed then deleted", l1.State, l1.History)
	}
	if l2.LinkID != 2 || l2.State != LinkRejected || l2.LGR != g.ID {
		t.Errorf("link 2: number %d state %v lgr %d, want the rejected ADD_LINK", l2.LinkID, l2.State, l2.LGR)
	}
	if l1.Server.Addr.String()+":"+"5000" != cl.peer || l1.Client.QPN != c.ClientEP.QPN || l1.Server.PSN != c.ServerEP.PSN {
		t.Errorf("link 1 ends %+v / %+v do not match the CLC endpoints", l1.Server, l1.Client)
	}
	retrans := l1.RC[DirC2S].Retrans + l1.RC[DirS2C].Retrans
	if retrans != wire.retransOf["10.10.0.1"]+wire.retransOf["10.10.0.2"] || retrans == 0 || s.Stats.Retrans != retrans {
		t.Errorf("retransmissions %d (stats %d), want %d (the unanswered DELETE_LINK)", retrans, s.Stats.Retrans, wire.retransOf["10.10.0.1"])
	}
	for d := range 2 {
		rc := l1.RC[d]
		if rc.PSNGaps != 0 || rc.NAKs != 0 || rc.RNRs != 0 {
			t.Errorf("link 1 %v: gaps %d NAKs %d RNRs %d in a clean capture", Dir(d), rc.PSNGaps, rc.NAKs, rc.RNRs)
		}
	}
	if l1.RC[0].Acks+l1.RC[1].Acks == 0 || l1.RC[0].CDCs != c2s.CDCs {
		t.Errorf("link 1 RC counters %+v", l1.RC)
	}

	// The timeline tells the story in order.
	want := []struct {
		frame int
		what  string
	}{{5, "TCP"}, {8, "CLC Proposal"}, {10, "CLC Accept"}, {12, "CLC Confirm"}, {14, "LLC CONFIRM_LINK_V2"},
		{16, "LLC CONFIRM_LINK_V2"}, {22, "RDMA WRITE"}, {23, "CDC"}, {4106, "CDC"}, {4114, "LLC DELETE_RKEY_V2"}}
	i := 0
	for _, e := range c.Timeline {
		if i < len(want) && e.Frame == want[i].frame {
			if e.What != want[i].what {
				t.Errorf("timeline frame %d: %q, want %q", e.Frame, e.What, want[i].what)
			}
			i++
		}
	}
	if i != len(want) {
		t.Errorf("timeline: found %d of %d expected events in order", i, len(want))
	}
}

func hasHistory(h []LinkEvent, sub string) bool {
	for _, e := range h {
		if strings.Contains(e.What, sub) {
			return true
		}
	}
	return false
}

// TestFallbacks derives the expected outcome from the kernels' smc_diag
// fallback reason and peer diagnosis on both sides.
func TestFallbacks(t *testing.T) {
	for _, name := range []string{"decline-nordma", "fallback-nosmc", "no-ueid"} {
		t.Run(name, func(t *testing.T) {
			cl, sv := readLog(t, refDir+name+".client.log"), readLog(t, refDir+name+".server.log")
			tr := feedFile(t, refDir+name+".pcap", Options{}, 0)
			s := tr.Snapshot()
			checkAccounting(t, s.Stats)
			if len(s.Conns) != 1 || len(s.Links) != 0 || len(s.LinkGroups) != 0 {
				t.Fatalf("%d conns %d links %d lgrs, want 1/0/0", len(s.Conns), len(s.Links), len(s.LinkGroups))
			}
			c := s.Conns[0]
			if c.Outcome != OutcomeFallback || cl.diag["mode"] != "TCP-FALLBACK" {
				t.Fatalf("outcome %v, want fallback (client diag mode %s)", c.Outcome, cl.diag["mode"])
			}
			if c.Client.String() != cl.local || c.Server.String() != cl.peer {
				t.Errorf("tuple %v -> %v, want %s -> %s", c.Client, c.Server, cl.local, cl.peer)
			}
			fb := c.Fallback
			clientReason := decode.DeclineCode(num(t, cl.diag["fallback"]))
			switch {
			case clientReason == decode.DeclinePeerNoSMC:
				// No option in the SYN-ACK: no CLC at all.
				if fb.Cause != CauseNoOptionSYNACK || !c.OptionSYN || c.OptionSYNACK || len(c.CLCTypes) != 0 {
					t.Errorf("fallback %+v options %v/%v CLC %v, want missing option on the SYN-ACK", fb, c.OptionSYN, c.OptionSYNACK, c.CLCTypes)
				}
			case clientReason == decode.DeclinePeerDecl:
				// The server declined with the code the client stored as peer diagnosis.
				want := uint32(num(t, cl.diag["peer_diag"]))
				if fb.Cause != CauseDecline || fb.By != DirS2C || fb.Code != want || want != uint32(num(t, sv.diag["fallback"])) {
					t.Errorf("fallback %+v, want server Decline %#x", fb, want)
				}
				if fb.Stage != StageAccept {
					t.Errorf("stage %v, want after Proposal", fb.Stage)
				}
			default:
				// The client declined; the server stored it as peer diagnosis.
				if fb.Cause != CauseDecline || fb.By != DirC2S || fb.Code != uint32(clientReason) || fb.Code != uint32(num(t, sv.diag["peer_diag"])) {
					t.Errorf("fallback %+v, want client Decline %#x", fb, uint32(clientReason))
				}
				if fb.Stage != StageProposal || c.TProposal.IsZero() == false {
					t.Errorf("stage %v, want a Decline instead of the Proposal", fb.Stage)
				}
			}
			// The application data then flows over TCP.
			if c.Flow[DirC2S].TCPBytes == 0 || c.Flow[DirS2C].TCPBytes == 0 || !c.Closed() {
				t.Errorf("TCP bytes %d/%d closed %v, want data both ways and a close", c.Flow[0].TCPBytes, c.Flow[1].TCPBytes, c.Closed())
			}
		})
	}
}
