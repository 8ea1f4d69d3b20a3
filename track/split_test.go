package track

import (
	"slices"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
)

// rawFrame is one frame of a real capture (the shared test helper's type).
type rawFrame = testutil.Packet

func readRawFrames(t testing.TB, name string) []rawFrame {
	t.Helper()
	fs, _ := testutil.ReadFrames(t, name)
	return fs
}

// trackRaw runs frames through a capture.Reader (CLC reassembly included)
// and a tracker.
func trackRaw(t testing.TB, frames []rawFrame) *Tracker {
	t.Helper()
	tr := New(Options{})
	eachRaw(t, "built", layers.LinkTypeEthernet, frames, tr.Feed)
	return tr
}

// resegment cuts the TCP payload of a real Ethernet/IPv4 frame into
// segments of the given sizes (the last takes the rest), each a valid
// frame with its own sequence number and checksums, as a sender with a
// small MSS or a middlebox would have sent it.
func resegment(t testing.TB, fr rawFrame, sizes ...int) []rawFrame {
	t.Helper()
	p := gopacket.NewPacket(fr.Data, layers.LayerTypeEthernet, gopacket.Default)
	eth := *p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip := *p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp := *p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	payload := tcp.Payload
	var out []rawFrame
	off := 0
	for i := 0; off < len(payload); i++ {
		n := len(payload) - off
		if i < len(sizes) && sizes[i] < n {
			n = sizes[i]
		}
		seg := tcp
		seg.Seq = tcp.Seq + uint32(off)
		if err := seg.SetNetworkLayerForChecksum(&ip); err != nil {
			t.Fatal(err)
		}
		buf := gopacket.NewSerializeBuffer()
		opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
		if err := gopacket.SerializeLayers(buf, opts, &eth, &ip, &seg, gopacket.Payload(payload[off:off+n])); err != nil {
			t.Fatal(err)
		}
		d := slices.Clone(buf.Bytes())
		out = append(out, rawFrame{CI: gopacket.CaptureInfo{Timestamp: fr.CI.Timestamp, CaptureLength: len(d), Length: len(d)}, Data: d})
		off += n
	}
	return out
}

// TestSplitCLC: the Proposal of pingpong.pcap (Linux 6.12, frame 8)
// re-sent in small segments, and as two halves in the wrong order, must
// give the tracker the same handshake and outcome as the capture itself:
// the stream decides, not the segment.
func TestSplitCLC(t *testing.T) {
	raw := readRawFrames(t, refDir+"pingpong.pcap")
	const proposal = 8 - 1 // index of frame 8
	want := trackRaw(t, raw).Snapshot().Conns[0]
	if want.Outcome != OutcomeSMCR || !slices.Equal(want.CLCTypes, []uint8{1, 2, 3}) {
		t.Fatalf("unsplit capture: outcome %v CLC %v", want.Outcome, want.CLCTypes)
	}
	halves := resegment(t, raw[proposal], 78)
	for name, segs := range map[string][]rawFrame{
		"3+17+rest":            resegment(t, raw[proposal], 3, 17),
		"30+10+rest":           resegment(t, raw[proposal], 30, 10),
		"1 byte then rest":     resegment(t, raw[proposal], 1),
		"halves out of order":  {halves[1], halves[0]},
		"second half repeated": {halves[1], halves[0], halves[1]},
	} {
		t.Run(name, func(t *testing.T) {
			frames := slices.Concat(raw[:proposal], segs, raw[proposal+1:])
			tr := trackRaw(t, frames)
			s := tr.Snapshot()
			if len(s.Conns) != 1 {
				t.Fatalf("%d connections", len(s.Conns))
			}
			c := s.Conns[0]
			if c.Outcome != want.Outcome || c.Fallback != want.Fallback || !slices.Equal(c.CLCTypes, want.CLCTypes) ||
				c.LGR != want.LGR || c.Flow[0].CDCs != want.Flow[0].CDCs || c.Flow[1].Bytes != want.Flow[1].Bytes {
				t.Errorf("outcome %v fallback %+v CLC %v lgr %d CDCs %d bytes %d; want as unsplit: %v %+v %v %d %d %d",
					c.Outcome, c.Fallback, c.CLCTypes, c.LGR, c.Flow[0].CDCs, c.Flow[1].Bytes,
					want.Outcome, want.Fallback, want.CLCTypes, want.LGR, want.Flow[0].CDCs, want.Flow[1].Bytes)
			}
			if rows := declineRows(t, tr); rows != 0 {
				t.Errorf("smc,decline lists %d fallbacks, want none", rows)
			}
		})
	}
}

// declineRows counts the fallbacks the smc,decline view lists.
func declineRows(t *testing.T, tr *Tracker) int {
	t.Helper()
	s := tr.Snapshot()
	n := 0
	for _, c := range s.Conns {
		if c.Outcome == OutcomeFallback {
			n++
		}
	}
	return n
}

// TestNoCLCAfterOptions: both SYNs carry the SMC option, then the capture
// misses the handshake's CLC frames (decline-nordma.pcap without its
// Proposal and Decline): the data after them is not "no CLC after SMC
// options", a middlebox's echo. The peers' ACKs show the capture missed
// the bytes of both directions where the messages were: the handshake is
// not followed, and no fallback cause is made up.
func TestNoCLCAfterOptions(t *testing.T) {
	var frames []rawFrame
	clcFrames := map[int]bool{}
	eachFrame(t, refDir+"decline-nordma.pcap", func(f *capture.Frame) {
		if len(f.CLC) > 0 {
			clcFrames[f.Number] = true
		}
	})
	if len(clcFrames) != 2 {
		t.Fatalf("%d CLC frames in decline-nordma.pcap, want 2", len(clcFrames))
	}
	for i, fr := range readRawFrames(t, refDir+"decline-nordma.pcap") {
		if !clcFrames[i+1] {
			frames = append(frames, fr)
		}
	}
	tr := trackRaw(t, frames)
	c := tr.conns[0]
	if c.Outcome != OutcomePending || !c.clcUncaptured || !c.OptionSYN || !c.OptionSYNACK {
		t.Errorf("outcome %v fallback %+v options %v/%v, want pending: the capture missed the CLC bytes", c.Outcome, c.Fallback, c.OptionSYN, c.OptionSYNACK)
	}
	s := tr.Snapshot()
	for _, f := range s.Findings() {
		if f.ID == expert.OptionEchoed {
			t.Errorf("%s on a handshake whose CLC frames the capture missed", f.ID)
		}
	}
}

// TestFallbackCauseNotCaptured: ipv6.pcap without the client's Decline:
// the server's ACK covers its bytes, and the server's stream, whole,
// starts with application data. The connection fell back, for a reason
// in the bytes the capture missed: not a middlebox's echo of the option.
func TestFallbackCauseNotCaptured(t *testing.T) {
	decline := 0
	eachFrame(t, "../samples/ipv6.pcap", func(f *capture.Frame) {
		for _, m := range f.CLC {
			if m.Type == decode.CLCTypeDecline {
				decline = f.Number
			}
		}
	})
	if decline == 0 {
		t.Fatal("no Decline in ipv6.pcap")
	}
	var frames []rawFrame
	for i, fr := range readRawFrames(t, "../samples/ipv6.pcap") {
		if i+1 != decline {
			frames = append(frames, fr)
		}
	}
	tr := trackRaw(t, frames)
	c := tr.conns[0]
	if c.Outcome != OutcomeFallback || c.Fallback.Cause != CauseUncaptured {
		t.Errorf("outcome %v fallback %+v, want a fallback whose cause the capture missed", c.Outcome, c.Fallback)
	}
	s := tr.Snapshot()
	for _, f := range s.Findings() {
		if f.ID == expert.OptionEchoed {
			t.Errorf("%s on a handshake whose Decline the capture missed", f.ID)
		}
	}
}
