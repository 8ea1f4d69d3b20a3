package track

import (
	"slices"
	"strings"
	"testing"
	"time"

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

// TestNoRoCELongOpen: pingpong.pcap without its RoCE frames, cut before
// the TCP close, and one unrelated frame 6 s after the Confirm: the
// capture held frames longer than Linux waits for the first link's
// CONFIRM_LINK before it declines, and no Decline came: the connection is
// SMC-R on a link the capture does not show (the link "unknown"), not
// pending; without that frame it is pending, what came next not in the
// capture.
func TestNoRoCELongOpen(t *testing.T) {
	raw := readRawFrames(t, refDir+"pingpong.pcap")
	const fin = 4107 // the client's FIN
	frames := withoutRoCE(raw[:fin-1], func(int) bool { return false })
	for _, later := range []bool{false, true} {
		fs := frames
		if later {
			arp := raw[0] // frame 1 is ARP
			arp.CI.Timestamp = frames[len(frames)-1].CI.Timestamp.Add(6 * time.Second)
			fs = append(slices.Clone(frames), arp)
		}
		s := trackRaw(t, fs).Snapshot()
		if len(s.Conns) != 1 || len(s.Links) != 1 {
			t.Fatalf("%d connections, %d links", len(s.Conns), len(s.Links))
		}
		c, l := &s.Conns[0], &s.Links[0]
		want, state := OutcomePending, LinkConfirming
		if later {
			want, state = OutcomeSMCR, LinkUnknown
		}
		if c.Outcome != want || c.LinkNotCaptured != later || l.State != state {
			t.Errorf("a frame 6 s later %v: outcome %v (%q), link %v; want %v, link %v",
				later, c.Outcome, ConnDetail(c), l.State, want, state)
		}
		if f := s.Findings(); later && len(f) != 0 {
			t.Errorf("a frame 6 s later: findings %v", f)
		}
	}
}
