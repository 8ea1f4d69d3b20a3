package track

import (
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// withoutRoCE keeps the frames of a real capture that are not RoCE (UDP
// to 4791), except those keep says to keep anyway: the capture a kernel
// makes whose listen worker hangs after the CLC Confirm.
func withoutRoCE(frames []rawFrame, keep func(n int) bool) []rawFrame {
	var out []rawFrame
	for i, fr := range frames {
		p := gopacket.NewPacket(fr.Data, layers.LayerTypeEthernet, gopacket.NoCopy)
		if u, ok := p.Layer(layers.LayerTypeUDP).(*layers.UDP); ok && u.DstPort == 4791 && !keep(i+1) {
			continue
		}
		out = append(out, fr)
	}
	return out
}

// TestFirstContactAwaitsConfirmLink: pingpong.pcap (Linux 6.12) with its
// RoCE frames removed, so that the CLC handshake completes and no link is
// ever confirmed. The first-contact connection is pending, not SMC-R, while
// the link group says confirming. When TCP closes with no Decline, the
// capture does not show the link (a host's tcpdump where the RNIC
// offloads RoCE: Linux would have declined with TIMEOUT_CL had the link
// failed): SMC-R, from the TCP stream. Keeping the CONFIRM_LINK request
// (frame 14) but not its response shows the link: it failed unanswered;
// keeping both gives SMC-R.
func TestFirstContactAwaitsConfirmLink(t *testing.T) {
	raw := readRawFrames(t, refDir+"pingpong.pcap")
	const fin = 4107 // the client's FIN
	for _, tt := range []struct {
		name    string
		keep    func(n int) bool
		cut     bool // stop before the TCP close
		outcome Outcome
		detail  string
		link    LinkState
	}{
		{"no RoCE, capture ends first", func(int) bool { return false }, true,
			OutcomePending, "SMC-R pending: awaiting CONFIRM_LINK (first contact)", LinkConfirming},
		{"no RoCE, TCP closes", func(int) bool { return false }, false,
			OutcomeSMCR, "first contact (new link group); its RoCE traffic is not in the capture", LinkUnknown},
		{"request unanswered", func(n int) bool { return n == 14 }, false,
			OutcomeFailed, "SMC-R failed: CONFIRM_LINK not answered before TCP closed", LinkConfirming},
		{"exchange complete", func(n int) bool { return n == 14 || n == 16 }, false,
			OutcomeSMCR, "first contact (new link group)", LinkUp},
	} {
		t.Run(tt.name, func(t *testing.T) {
			frames := raw
			if tt.cut {
				frames = frames[:fin-1]
			}
			s := trackRaw(t, withoutRoCE(frames, tt.keep)).Snapshot()
			if len(s.Conns) != 1 || len(s.Links) != 1 {
				t.Fatalf("%d connections, %d links", len(s.Conns), len(s.Links))
			}
			c, l := &s.Conns[0], &s.Links[0]
			// Unknown: up, in a state the capture does not show.
			if up := tt.link == LinkUp || tt.link == LinkUnknown; len(s.LinkGroups) != 1 || linkConfirmed(l) != up {
				t.Errorf("%d link groups, link %v: want one, confirmed %v", len(s.LinkGroups), l.State, up)
			}
			if c.Outcome != tt.outcome || ConnDetail(c) != tt.detail || l.State != tt.link || c.LGR != l.LGR {
				t.Errorf("outcome %v %q, link %v in group %d (connection's %d); want %v %q, link %v",
					c.Outcome, ConnDetail(c), l.State, l.LGR, c.LGR, tt.outcome, tt.detail, tt.link)
			}
		})
	}
}

// TestReusingConnsWaitForLink: in multiconn.pcap the later connections
// reuse the first one's link group (Linux 6.12, non-first contact). They
// are SMC-R once the group's link is up, as the first one is; with the
// RoCE frames removed (a host capture that does not see RoCE) all are
// SMC-R from their TCP streams, on a link the capture does not show.
func TestReusingConnsWaitForLink(t *testing.T) {
	raw := readRawFrames(t, "../samples/multiconn.pcap")
	s := trackRaw(t, raw).Snapshot()
	reused := 0
	for _, c := range s.Conns {
		if c.Outcome != OutcomeSMCR || c.AwaitingLink {
			t.Errorf("conn %d: %v %q", c.ID, c.Outcome, ConnDetail(&c))
		}
		if !c.FirstContact {
			reused++
		}
	}
	if reused == 0 {
		t.Fatal("no connection reuses a link group: the test proves nothing")
	}
	s = trackRaw(t, withoutRoCE(raw, func(int) bool { return false })).Snapshot()
	for _, c := range s.Conns {
		if c.Outcome != OutcomeSMCR || !c.LinkNotCaptured || !strings.Contains(ConnDetail(&c), "not in the capture") {
			t.Errorf("without RoCE, conn %d: %v %q", c.ID, c.Outcome, ConnDetail(&c))
		}
	}
	if f := s.Findings(); len(f) != 0 {
		t.Errorf("without RoCE: findings %v", f)
	}
}
