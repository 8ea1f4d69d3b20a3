package track

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
)

// Tests of captures as people take them: frames the capture point missed,
// frames damaged on the way, captures cut short. What the capture lacks is
// a fact of the capture, never inferred into something the network did.
// Every variant here is made from testdata/reference/pingpong.pcap, Linux
// 6.12 on both sides (SMC-Rv2 over Soft-RoCE); internal/mutate's
// differential test makes thousands more from every capture of the
// repository (Linux 6.12 and 7.3).

// feedRaw runs frames through a tracker (the fast path included) and
// returns its snapshot and the findings' names.
func feedRaw(t *testing.T, frames []rawFrame) (Snapshot, []string) {
	t.Helper()
	tr := New(Options{Unshared: true})
	_, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
	eachRaw(t, "mod", lt, frames, func(f *capture.Frame) { tr.Feed(f) })
	tr.EndCapture(time.Time{})
	s := tr.Snapshot()
	var found []string
	for _, f := range s.Findings() {
		found = append(found, f.ID.String())
	}
	return s, found
}

// applied is frames with ms applied in turn.
func applied(frames []rawFrame, ms ...mutate.Mutation) []rawFrame {
	for _, m := range ms {
		frames = m.Apply(frames)
	}
	return frames
}

// clientCDCs lists the frame indexes of the client's CDCs in frames.
func clientCDCs(t *testing.T, frames []rawFrame) []int {
	t.Helper()
	_, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
	var out []int
	eachRaw(t, "cdcs", lt, frames, func(f *capture.Frame) {
		if f.CDC != nil && f.IPv4 != nil && f.IPv4.SrcIP.String() == "10.10.0.2" {
			out = append(out, f.Number-1)
		}
	})
	return out
}

// TestBadICRCNotFollowed: a CDC whose producer cursor was damaged on the
// way (its ICRC no longer matches) is dropped by the receiving RNIC, and
// sent again: it is flagged, and neither its cursor nor its sequence
// number reaches the connection (no cursor_past_rmbe on it, no
// cursor_backwards on the next intact CDC).
func TestBadICRCNotFollowed(t *testing.T) {
	frames := readRawFrames(t, crafted.Pingpong(t))
	base, _ := feedRaw(t, frames)
	i := clientCDCs(t, frames)[5]
	frames = crafted.Resent(frames, i+1, func(d []byte) {
		d[crafted.RoCESMCOff+12] ^= 0x40 // the producer cursor's count, high byte (struct smc_cdc_msg)
	})
	s, found := feedRaw(t, frames)
	if !slices.Contains(found, expert.BadICRC.String()) {
		t.Errorf("findings %v: want roce.icrc.bad", found)
	}
	for _, bad := range []expert.ID{expert.CursorPastRMBE, expert.CursorBackwards, expert.SeqGap, expert.SeqDup} {
		if slices.Contains(found, bad.String()) {
			t.Errorf("findings %v: %s from a frame the RNIC drops", found, bad)
		}
	}
	if got, want := s.Conns[0].Flow[DirC2S].Bytes, base.Conns[0].Flow[DirC2S].Bytes; got != want {
		t.Errorf("C->S bytes %d, want %d (the damaged cursor changed them)", got, want)
	}
	if n := s.Links[0].RC[DirC2S].ICRCBad; n != 1 {
		t.Errorf("C->S ICRC bad %d, want 1", n)
	}
}

// ackOf is the index of the first ACK after frames[i] of its PSN.
func ackOf(t *testing.T, frames []rawFrame, i int) int {
	t.Helper()
	const bth = crafted.RoCESMCOff - 12 // opcode at 0, PSN at 9..11
	for j := i + 1; j < len(frames); j++ {
		if d := frames[j].Data; len(d) > crafted.RoCESMCOff && d[bth] == 0x11 && bytes.Equal(d[bth+9:bth+12], frames[i].Data[bth+9:bth+12]) {
			return j
		}
	}
	t.Fatal("no ACK of the request's PSN")
	return -1
}

// TestDamagedCopy: a request whose copy in the capture is damaged, which
// the responder took all the same (its ACK covers the PSN, nothing is
// sent again), is the capture's damage, not the network's:
// roce.capture.damaged in place of the checksum's error, nothing counted
// dropped or missed. Where one byte explains the ICRC failing (the ICRC
// itself, a CDC's byte, the DestQP, an address, the PSN), that byte is
// mended: the request is placed and its content followed as sent; so is
// one whose IP or UDP length alone was damaged (with the lengths the
// frame's size gives, the ICRC verifies). Where
// more is damaged, its DestQP or an address among it, the link is the one
// with two of the three that expects its PSN; its PSN, it is the PSN the
// responder then takes unseen; and its content is unknown, as a missed
// request's is (no sequence gap after it). Where the ICRC vouches for it
// (a TTL damaged) the content is followed. The same where the capture
// shows it after the ACK; where the responder NAKs its PSN, the
// network's packet was damaged; where it RNR NAKs it or NAKs it for
// another reason, the packet reached it whole.
func TestDamagedCopy(t *testing.T) {
	clean := readRawFrames(t, crafted.Pingpong(t))
	base, _ := feedRaw(t, clean)
	i := clientCDCs(t, clean)[5]
	const bth = crafted.RoCESMCOff - 12 // opcode at 0, PSN at 9..11
	ack := ackOf(t, clean, i)
	ttl := func(d []byte) { d[14+8] ^= 0x01 }
	icrc := func(d []byte) { d[len(d)-1] ^= 0xff }
	qpn := func(d []byte) { d[bth+7] ^= 0x01 } // the DestQP's low bit: no link's queue pair
	src := func(d []byte) { d[14+15] ^= 0x04 } // the IPv4 source's: no link's address
	psn := func(d []byte) { d[bth+9] ^= 0x40 } // the PSN's high bits: no PSN the responder takes
	// One byte of a CDC (its producer cursor): the ICRC says which, and
	// what it was sent as. Two bytes changed it cannot say.
	cdcByte := func(d []byte) { d[crafted.RoCESMCOff+10] ^= 0x5a }
	two := func(d []byte) { d[crafted.RoCESMCOff+10] ^= 0x5a; d[crafted.RoCESMCOff+20] ^= 0x01 }
	psnAndCDC := func(d []byte) { psn(d); d[crafted.RoCESMCOff+20] ^= 0x01 }
	// More bytes of the key or PSN than one: the ICRC verifies with those
	// the link direction expected (with one byte more, mended).
	psnAhead := func(d []byte) { // a PSN shortly ahead, two bytes changed
		p := uint32(d[bth+9])<<16 | uint32(d[bth+10])<<8 | uint32(d[bth+11])
		k := uint32(1)
		for ; byte((p+k)>>8) == d[bth+10] || byte(p+k) == d[bth+11]; k++ {
		}
		d[bth+10], d[bth+11] = byte((p+k)>>8), byte(p+k)
	}
	psnAheadAndCDC := func(d []byte) { psnAhead(d); d[crafted.RoCESMCOff+20] ^= 0x01 }
	psnAheadAndTwo := func(d []byte) { psnAhead(d); two(d) }
	qpnTwoAndPSN := func(d []byte) { d[bth+5] ^= 0x55; d[bth+6] ^= 0x66; psn(d) }
	// The CDC's type or length byte: the SEND did not decode (malformed);
	// as sent it does.
	cdcType := func(d []byte) { d[crafted.RoCESMCOff] ^= 0x01 }
	cdcLen := func(d []byte) { d[crafted.RoCESMCOff+1] ^= 0x08 }
	// The UDP destination port's high byte: no RoCEv2 port, yet the ICRC
	// verifies with 4791.
	udpPort := func(d []byte) { d[14+20+2] ^= 0x96 }
	qpnAndCDC := func(d []byte) { qpn(d); d[crafted.RoCESMCOff+20] ^= 0x01 }
	srcAndCDC := func(d []byte) { src(d); d[crafted.RoCESMCOff+20] ^= 0x01 }
	// A length that claims more than the frame holds: the ICRC verifies
	// with the lengths the frame's size gives.
	ipLen := func(d []byte) { d[14+2] ^= 0x01 }
	udpLen := func(d []byte) { d[14+20+5] ^= 0x01 }
	udpLenAndCDC := func(d []byte) { udpLen(d); d[crafted.RoCESMCOff+20] ^= 0x01 }
	late := func(fs []rawFrame) {
		// The CDC shown after the ACK of it, at the ACK's time.
		cdc := fs[i]
		cdc.CI.Timestamp = fs[ack].CI.Timestamp
		copy(fs[i:ack], fs[i+1:ack+1])
		fs[ack] = cdc
	}
	nak := func(fs []rawFrame) {
		// The ACK turned into a PSN sequence error NAK of the CDC's PSN.
		fs[ack].Data = append([]byte(nil), fs[ack].Data...)
		fs[ack].Data[crafted.RoCESMCOff] = 0x60
		crafted.FixICRC(t, fs[ack].Data)
	}
	rnr := func(fs []rawFrame) {
		// The ACK turned into an RNR NAK of the CDC's PSN: the responder
		// had it whole (no receive WQE for it yet).
		fs[ack].Data = append([]byte(nil), fs[ack].Data...)
		fs[ack].Data[crafted.RoCESMCOff] = 0x21
		crafted.FixICRC(t, fs[ack].Data)
	}
	accessNAK := func(fs []rawFrame) {
		// The ACK turned into a remote access error NAK of the CDC's
		// PSN: raised for a packet whose ICRC held.
		fs[ack].Data = append([]byte(nil), fs[ack].Data...)
		fs[ack].Data[crafted.RoCESMCOff] = 0x62
		crafted.FixICRC(t, fs[ack].Data)
	}
	for _, tc := range []struct {
		name     string
		damage   func([]byte)
		move     func([]rawFrame)
		followed bool // the CDC's content
		want     expert.ID
		write    bool // the WRITE before the CDC damaged too (its ICRC)
	}{
		{"ttl", ttl, nil, true, expert.CaptureCopyDamaged, false},
		{"icrc", icrc, nil, true, expert.CaptureCopyDamaged, false},
		{"cdc byte", cdcByte, nil, true, expert.CaptureCopyDamaged, false},
		{"two bytes", two, nil, false, expert.CaptureCopyDamaged, false},
		{"ttl-after-ack", ttl, late, true, expert.CaptureCopyDamaged, false},
		{"icrc-after-ack", icrc, late, true, expert.CaptureCopyDamaged, false},
		{"two-bytes-after-ack", two, late, false, expert.CaptureCopyDamaged, false},
		{"icrc-naked", icrc, nak, false, expert.BadICRC, false},
		{"ttl-naked", ttl, nak, false, expert.BadIPSum, false},
		{"write-and-ttl", ttl, nil, true, expert.CaptureCopyDamaged, true},
		{"qpn", qpn, nil, true, expert.CaptureCopyDamaged, false},
		{"source address", src, nil, true, expert.CaptureCopyDamaged, false},
		{"psn", psn, nil, true, expert.CaptureCopyDamaged, false},
		{"qpn and cdc", qpnAndCDC, nil, true, expert.CaptureCopyDamaged, false},
		{"source address and cdc", srcAndCDC, nil, true, expert.CaptureCopyDamaged, false},
		{"psn and cdc", psnAndCDC, nil, true, expert.CaptureCopyDamaged, false},
		{"psn ahead", psnAhead, nil, true, expert.CaptureCopyDamaged, false},
		{"psn ahead and cdc", psnAheadAndCDC, nil, true, expert.CaptureCopyDamaged, false},
		{"psn ahead and two bytes", psnAheadAndTwo, nil, false, expert.CaptureCopyDamaged, false},
		{"qpn two bytes and psn", qpnTwoAndPSN, nil, true, expert.CaptureCopyDamaged, false},
		{"cdc type", cdcType, nil, true, expert.CaptureCopyDamaged, false},
		{"cdc length", cdcLen, nil, true, expert.CaptureCopyDamaged, false},
		{"udp port", udpPort, nil, true, expert.CaptureCopyDamaged, false},
		{"ip length", ipLen, nil, true, expert.CaptureCopyDamaged, false},
		{"udp length", udpLen, nil, true, expert.CaptureCopyDamaged, false},
		{"udp length and cdc", udpLenAndCDC, nil, false, expert.CaptureCopyDamaged, false},
		{"udp-length-after-ack", udpLen, late, true, expert.CaptureCopyDamaged, false},
		{"udp-length-naked", udpLen, nak, false, expert.BadLength, false},
		{"icrc-rnr-naked", icrc, rnr, true, expert.CaptureCopyDamaged, false},
		{"cdc-byte-rnr-naked", cdcByte, rnr, true, expert.CaptureCopyDamaged, false},
		{"icrc-access-naked", icrc, accessNAK, true, expert.CaptureCopyDamaged, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := slices.Clone(clean)
			fs[i].Data = append([]byte(nil), fs[i].Data...)
			tc.damage(fs[i].Data)
			damaged := 1
			if tc.write {
				if fs[i-1].Data[bth] != 0x0a { // RDMA WRITE Only
					t.Fatalf("frame %d is no WRITE", i)
				}
				fs[i-1].Data = append([]byte(nil), fs[i-1].Data...)
				icrc(fs[i-1].Data)
				damaged++
			}
			if tc.move != nil {
				tc.move(fs)
			}
			s, found := feedRaw(t, fs)
			if !slices.Contains(found, tc.want.String()) {
				t.Errorf("findings %v, want %s", found, tc.want)
			}
			bad := []expert.ID{expert.BadICRC, expert.BadIPSum, expert.BadLength, expert.CaptureCopyDamaged, expert.SeqGap}
			if tc.move == nil {
				// (The ACK before the CDC says the capture missed it
				// until it comes; the NAK that a resend should follow.)
				bad = append(bad, expert.NotCaptured, expert.PSNGap)
			}
			for _, id := range bad {
				if id != tc.want && slices.Contains(found, id.String()) {
					t.Errorf("findings %v: %s", found, id)
				}
			}
			rc, brc := s.Links[0].RC[DirC2S], base.Links[0].RC[DirC2S]
			if tc.want == expert.CaptureCopyDamaged {
				if rc.Damaged != damaged || rc.ICRCBad != 0 || rc.NotCaptured != 0 {
					t.Errorf("C->S damaged %d, ICRC bad %d, not captured %d; want %d, 0, 0", rc.Damaged, rc.ICRCBad, rc.NotCaptured, damaged)
				}
			}
			got, want := s.Conns[0].Flow[DirC2S], base.Conns[0].Flow[DirC2S]
			if got.Bytes != want.Bytes {
				t.Errorf("C->S bytes %d, want %d", got.Bytes, want.Bytes)
			}
			if wantCDCs := want.CDCs - map[bool]int{true: 0, false: 1}[tc.followed]; tc.move == nil && got.CDCs != wantCDCs && tc.want == expert.CaptureCopyDamaged {
				t.Errorf("C->S CDCs %d, want %d", got.CDCs, wantCDCs)
			}
			if (tc.followed || tc.want == expert.CaptureCopyDamaged && tc.move == nil) && !tc.write && rc.Packets != brc.Packets {
				t.Errorf("C->S packets %d, want %d", rc.Packets, brc.Packets)
			}
		})
	}
}

// TestDamagedLLCMended: each LLC message of pingpong.pcap (but the
// teardown's) whose copy in
// the capture has one byte changed (its ICRC fails; its ACK says the
// responder took it) is decoded again as sent: the findings are the clean
// capture's and roce.capture.damaged, the link's history the same.
func TestDamagedLLCMended(t *testing.T) {
	clean := readRawFrames(t, crafted.Pingpong(t))
	_, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
	base, baseFound := feedRaw(t, clean)
	var llcs []int
	eachRaw(t, "llc", lt, clean, func(f *capture.Frame) {
		// The teardown's DELETE_LINKs are left out: the peer destroyed
		// its QP, no ACK says it took them.
		if f.LLC != nil && f.Number > 10 && f.LLC.Type.Base() != decode.LLCDeleteLink {
			llcs = append(llcs, f.Number-1)
		}
	})
	if len(llcs) < 4 {
		t.Fatalf("%d LLC messages", len(llcs))
	}
	for _, i := range llcs {
		fs := slices.Clone(clean)
		fs[i].Data = bytes.Clone(fs[i].Data)
		fs[i].Data[crafted.RoCESMCOff+5] ^= 0x10
		s, found := feedRaw(t, fs)
		want := append(slices.Clone(baseFound), expert.CaptureCopyDamaged.String())
		slices.Sort(want)
		slices.Sort(found)
		if !slices.Equal(slices.Compact(found), slices.Compact(want)) {
			t.Errorf("frame %d damaged: findings %v, want %v", i+1, found, want)
		}
		if got, want := linkSum(s), linkSum(base); !slices.Equal(got, want) {
			t.Errorf("frame %d damaged: links %v, want %v", i+1, got, want)
		}
	}
}

// TestDamagedACKPlaced: an ACK whose source address the capture damaged
// (its ICRC fails, no link has its key) is its link's finding, as a
// request damaged alike is, not one of the capture at large: its DestQP
// and destination are the link's, and it names a PSN its requester sent
// just before. With two of the three hit, it stays the capture's.
func TestDamagedACKPlaced(t *testing.T) {
	clean := readRawFrames(t, crafted.Pingpong(t))
	i := clientCDCs(t, clean)[5]
	const bth = crafted.RoCESMCOff - 12
	ack := ackOf(t, clean, i)
	for _, tc := range []struct {
		name   string
		damage func([]byte)
		object expert.Object
	}{
		{"source address", func(d []byte) { d[14+15] ^= 0x04 }, expert.ObjectLink},
		{"DestQP", func(d []byte) { d[bth+7] ^= 0x01 }, expert.ObjectLink},
		{"source and DestQP", func(d []byte) { d[14+15] ^= 0x04; d[bth+7] ^= 0x01 }, expert.ObjectCapture},
	} {
		fs := slices.Clone(clean)
		fs[ack].Data = bytes.Clone(fs[ack].Data)
		tc.damage(fs[ack].Data)
		s, _ := feedRaw(t, fs)
		var on []expert.Object
		for _, f := range s.Findings() {
			if f.ID == expert.BadICRC {
				on = append(on, f.Object)
			}
		}
		if len(on) != 1 || on[0] != tc.object {
			t.Errorf("%s: roce.icrc.bad on %v, want on the %v", tc.name, on, tc.object)
		}
	}
}

// TestDamagedPSNResent: a request whose PSN was damaged on the way, sent
// again whole: the receiver dropped the damaged one (roce.icrc.bad
// stands), and no PSN is missing for it to have been.
func TestDamagedPSNResent(t *testing.T) {
	clean := readRawFrames(t, crafted.Pingpong(t))
	i := clientCDCs(t, clean)[5]
	const bth = crafted.RoCESMCOff - 12
	fs := crafted.Resent(slices.Clone(clean), i+1, func(d []byte) { d[bth+9] ^= 0x40 })
	s, found := feedRaw(t, fs)
	if !slices.Contains(found, expert.BadICRC.String()) || slices.Contains(found, expert.CaptureCopyDamaged.String()) {
		t.Errorf("findings %v, want roce.icrc.bad and no roce.capture.damaged", found)
	}
	if rc := s.Links[0].RC[DirC2S]; rc.Damaged != 0 || rc.ICRCBad != 1 {
		t.Errorf("C->S damaged %d, ICRC bad %d; want 0, 1", rc.Damaged, rc.ICRCBad)
	}
}

// TestFirstCDCFollowedLate: the client's first CDCs come after a request
// the capture missed, so they are held (a run out of sequence) until the
// server's ACK says it took them, and followed then, after the server's
// first CDC: the connection's first CDC is still the client's, and its
// timeline lists them in their frames' order.
func TestFirstCDCFollowedLate(t *testing.T) {
	const clientFirstCDC = 23 // after its WRITE at 22, which the capture misses
	clean := readRawFrames(t, crafted.Pingpong(t))
	var fs []rawFrame
	for i, f := range clean {
		switch i + 1 {
		case 22, 24, 25, 28, 29: // the WRITE, and the server's ACKs before its first CDC (31)
			continue
		}
		fs = append(fs, f)
	}
	tr := New(Options{Unshared: true, Timeline: "all"})
	_, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
	eachRaw(t, "late", lt, fs, func(f *capture.Frame) { tr.Feed(f) })
	tr.EndCapture(time.Time{})
	s := tr.Snapshot()
	if len(s.Conns) != 1 {
		t.Fatalf("%d connections", len(s.Conns))
	}
	c := s.Conns[0]
	if want := clean[clientFirstCDC-1].CI.Timestamp; !c.TFirstCDC.Equal(want) {
		t.Errorf("first CDC at %v, want frame %d's %v", c.TFirstCDC, clientFirstCDC, want)
	}
	if !slices.IsSortedFunc(c.Timeline, func(a, b Event) int { return a.Frame - b.Frame }) {
		t.Errorf("timeline out of frame order: %v", c.Timeline)
	}
}

// TestDamagedResentAfterACK: a CDC damaged on the way and sent again,
// whose ACK the capture shows before the copy sent again (two hosts'
// captures merged with their clocks apart): the ACK makes the damaged copy
// look taken until the copy comes; then the damage was the network's
// (roce.icrc.bad stands), the copy is followed once, and nothing is a
// retransmission.
func TestDamagedResentAfterACK(t *testing.T) {
	clean := readRawFrames(t, crafted.Pingpong(t))
	base, _ := feedRaw(t, clean)
	i := clientCDCs(t, clean)[5]
	for _, whole := range []bool{false, true} {
		fs := crafted.Resent(slices.Clone(clean), i+1, func(d []byte) {
			if whole {
				d[14+8] ^= 0x01 // the TTL
			} else {
				d[len(d)-1] ^= 0xff // the ICRC
			}
		})
		// The copy sent again at i+1; the server's next frames (its ACKs
		// of the WRITE and of the CDC) put before it, at its time.
		again := fs[i+1]
		fs[i+1], fs[i+2], fs[i+3] = fs[i+2], fs[i+3], again
		fs[i+1].CI.Timestamp, fs[i+2].CI.Timestamp = again.CI.Timestamp, again.CI.Timestamp
		s, found := feedRaw(t, fs)
		want := expert.BadICRC
		if whole {
			want = expert.BadIPSum
		}
		if !slices.Contains(found, want.String()) || slices.Contains(found, expert.CaptureCopyDamaged.String()) || !slices.Contains(found, expert.CaptureReordered.String()) {
			t.Errorf("whole %v: findings %v, want %s, roce.capture.reordered and no roce.capture.damaged", whole, found, want)
		}
		rc := s.Links[0].RC[DirC2S]
		if want := base.Links[0].RC[DirC2S].Packets; rc.Damaged != 0 || rc.Retrans != 0 || rc.Packets != want {
			t.Errorf("whole %v: damaged %d, retransmissions %d, packets %d; want 0, 0, %d", whole, rc.Damaged, rc.Retrans, rc.Packets, want)
		}
		if got, want := flowTotalsOf(s), flowTotalsOf(base); got != want {
			t.Errorf("whole %v: CDCs and bytes %v, whole capture %v", whole, got, want)
		}
	}
}

// TestTCPSumVerdict: a CLC segment whose IPv4 header checksum fails is
// settled by the wire: the peer's ACK of it with none sent again says the
// capture's copy is damaged; a copy sent again, that the receiving host
// dropped it. The finding's detail says which.
func TestTCPSumVerdict(t *testing.T) {
	const accept = 10 // pingpong.pcap's CLC Accept, server -> client
	ttl := func(d []byte) { d[14+8] ^= 0x01 }
	for _, resend := range []bool{false, true} {
		fs := readRawFrames(t, crafted.Pingpong(t))
		if resend {
			fs = crafted.Resent(fs, accept, ttl)
		} else {
			fs[accept-1].Data = append([]byte(nil), fs[accept-1].Data...)
			ttl(fs[accept-1].Data)
		}
		s, found := feedRaw(t, fs)
		if !slices.Contains(found, expert.BadTCPIPSum.String()) {
			t.Fatalf("resend %v: findings %v", resend, found)
		}
		f := s.Conns[0].Flow[DirS2C]
		want, text := [2]int{0, 1}, "the peer acknowledged with none sent again (the capture's copy damaged)"
		if resend {
			want, text = [2]int{1, 0}, "1 segment sent again (dropped on the way)"
		}
		if got := [2]int{f.SumResent, f.SumCopyDamaged}; got != want {
			t.Errorf("resend %v: S>C sent again, acknowledged %v, want %v", resend, got, want)
		}
		for _, x := range s.Findings() {
			if x.ID == expert.BadTCPIPSum && !strings.Contains(x.Detail, text) {
				t.Errorf("resend %v: detail %q, want %q in it", resend, x.Detail, text)
			}
		}
		if s.Conns[0].Outcome != OutcomeSMCR {
			t.Errorf("resend %v: outcome %v", resend, s.Conns[0].Outcome)
		}
	}
}

// flowTotalsOf sums the CDCs and bytes of s's connections.
func flowTotalsOf(s Snapshot) [2]int {
	var n [2]int
	for _, c := range s.Conns {
		for _, f := range c.Flow {
			n[0] += f.CDCs
			n[1] += int(f.Bytes)
		}
	}
	return n
}

// TestIPSumOfACaptureCopy: where every RoCE packet of a direction carries
// an IPv4 header checksum that fails (a capture point whose copies leave
// the checksum to the RNIC), the packets are followed on their ICRC's word,
// as the clean capture is, with no finding; a direction whose other
// packets verify keeps the one that fails for damage (the bad-ip-checksum
// vector, TestExpertVectors).
func TestIPSumOfACaptureCopy(t *testing.T) {
	frames := readRawFrames(t, crafted.Pingpong(t))
	base, _ := feedRaw(t, frames)
	n := 0
	for i, f := range frames {
		d := f.Data
		if !serverRoCEv4(d) {
			continue
		}
		frames[i].Data = append([]byte(nil), d...)
		frames[i].Data[14+10] ^= 0x5a // the checksum, which the ICRC leaves out
		n++
	}
	if n < 10 {
		t.Fatalf("%d RoCE packets of the server changed", n)
	}
	s, found := feedRaw(t, frames)
	if slices.Contains(found, expert.BadIPSum.String()) {
		t.Errorf("findings %v: the capture point's checksums taken for damage", found)
	}
	sameLinksAndBytes(t, s, base)
	// The direction's habit, once clear, is no longer held packet by
	// packet (unsureSum): the fast path takes the direction again.
	for i := range s.Links {
		for d, rc := range s.Links[i].RC {
			if len(rc.sumUnsure) != 0 || rc.damaged {
				t.Errorf("link %d direction %d: %d requests held unsure, damaged %v", s.Links[i].ID, d, len(rc.sumUnsure), rc.damaged)
			}
		}
	}
}

// flagCDCs sets the write-blocked flag on the client's CDCs from index
// from to index to of cdcs (frame indexes), with their ICRCs fixed.
func flagCDCs(t *testing.T, frames []rawFrame, cdcs []int) {
	for _, i := range cdcs {
		frames[i].Data = append([]byte(nil), frames[i].Data...)
		frames[i].Data[crafted.RoCESMCOff+24] |= byte(decode.CDCWriteBlocked)
		crafted.FixICRC(t, frames[i].Data)
	}
}

// TestEpisodeEndsAtClose: a write-blocked episode that lasts until the
// connection closes ends there, not at the end of the capture (pingpong's
// capture goes on for seconds after the close: DELETE_LINK, retransmitted).
func TestEpisodeEndsAtClose(t *testing.T) {
	frames := readRawFrames(t, crafted.Pingpong(t))
	cdcs := clientCDCs(t, frames)
	flagCDCs(t, frames, cdcs[len(cdcs)-20:])
	s, _ := feedRaw(t, frames)
	c := &s.Conns[0]
	f := &c.Flow[DirC2S]
	start := frames[cdcs[len(cdcs)-20]].CI.Timestamp
	end := frames[cdcs[len(cdcs)-1]].CI.Timestamp
	if f.wbSince != 0 || f.WBLongest != end.Sub(start) {
		t.Errorf("episode open %v, longest %v; want closed, %v (from its first CDC to the close)", f.wbSince != 0, f.WBLongest, end.Sub(start))
	}
	for _, fd := range s.Findings() {
		if fd.ID == expert.WriteBlocked && strings.Contains(fd.Detail, "open") {
			t.Errorf("detail %q: the episode ended at the close", fd.Detail)
		}
	}
}

// TestEpisodeOpenAtEnd: an episode still open when the capture ends says
// so, and is measured to the connection's last frame, not past it.
func TestEpisodeOpenAtEnd(t *testing.T) {
	frames := readRawFrames(t, crafted.Pingpong(t))
	cdcs := clientCDCs(t, frames)
	mid := cdcs[len(cdcs)/2]
	flagCDCs(t, frames, cdcs[len(cdcs)/2-10:len(cdcs)/2+1])
	// The capture ends at the flagged CDC, and an unrelated frame (the
	// server's ACK of an earlier PSN, a second later) follows.
	last := frames[mid]
	tail := rawFrame{CI: frames[mid+1].CI, Data: frames[mid+1].Data}
	tail.CI.Timestamp = last.CI.Timestamp.Add(10e9)
	binary.BigEndian.PutUint32(tail.Data[crafted.RoCEIPOff+12:], 0x0a0a00fe) // another host: no link's
	crafted.FixICRC(t, tail.Data)
	frames = append(frames[:mid+1:mid+1], tail)
	s, _ := feedRaw(t, frames)
	c := &s.Conns[0]
	f := &c.Flow[DirC2S]
	start := frames[cdcs[len(cdcs)/2-10]].CI.Timestamp
	if want := last.CI.Timestamp.Sub(start); f.wbSince == 0 {
		t.Fatalf("episode closed, want open at the end of the capture")
	} else {
		for _, fd := range s.Findings() {
			if fd.ID != expert.WriteBlocked {
				continue
			}
			if !strings.Contains(fd.Detail, "still open at the end of the capture") || !strings.Contains(fd.Detail, msText(want.Nanoseconds())) {
				t.Errorf("detail %q: want the episode open, %s long (to the connection's last frame)", fd.Detail, msText(want.Nanoseconds()))
			}
		}
	}
}

// TestMissedLLCResponse: the client's ADD_LINK reject missing from the
// capture, its ACK there: the server's request was answered out of the
// capture's sight, not left unanswered, and the link it would have added
// is not one accepted and never confirmed (the answer may have been a
// reject, as it was).
func TestMissedLLCResponse(t *testing.T) {
	frames := readRawFrames(t, crafted.Pingpong(t))
	const reject = 20 // pingpong.pcap frame 20: ADD_LINK_V2 resp REJECT; 21 its ACK
	frames = append(frames[:reject-1:reject-1], frames[reject:]...)
	// The ADD_LINK request must be unanswered for more than 2 s for the
	// finding: the rest of the capture comes 3 s later.
	for i := reject - 1; i < len(frames); i++ {
		frames[i].CI.Timestamp = frames[i].CI.Timestamp.Add(3e9)
	}
	_, found := feedRaw(t, frames)
	if slices.Contains(found, expert.LLCUnanswered.String()) || slices.Contains(found, expert.AddedUnconfirmed.String()) ||
		!slices.Contains(found, expert.NotCaptured.String()) {
		t.Errorf("findings %v: want roce.rc.not_captured, no smc.llc.unanswered and no smc.link.added_unconfirmed", found)
	}
}

// TestUnreadableLLCResponse: rwwi.pcap's DELETE_RKEY exchanges at its end
// with the capture's copies damaged as editcap -E damaged them: the
// server's WRITE at frame 2059 and its ACK fail their ICRC, so the
// server's requests after it wait for the client's word; the client's
// request (2069) and the ACKs around fail theirs too, and the client's
// response to the server's DELETE_RKEY (2075) is damaged past reading,
// its PSN taken (the ACK at 2076). The server's request (2070), followed
// only once its sequence was settled, after that ACK, may have had its
// response among what the capture lacks: not smc.llc.unanswered.
func TestUnreadableLLCResponse(t *testing.T) {
	frames, _ := testutil.ReadFrames(t, "../testdata/anck/rwwi.pcap")
	flip := func(n, off int, mask byte) mutate.Mutation {
		return mutate.Mutation{Kind: mutate.Flip, At: n - 1, N: off, Mask: mask}
	}
	ms := []mutate.Mutation{flip(2059, 55, 0x5e), flip(2059, 131, 0xcc), flip(2060, 42, 0x34),
		flip(2068, 58, 0x19), flip(2069, 56, 0x2d), flip(2073, 29, 0x63),
		flip(2074, 43, 0x25), flip(2074, 44, 0xff), flip(2076, 6, 0x77), flip(2076, 7, 0x54)}
	for off := 33; off <= 101; off++ { // the response's IPv4 destination, UDP header, BTH and message
		ms = append(ms, flip(2075, off, 0xaa))
	}
	_, found := feedRaw(t, applied(frames, ms...))
	if slices.Contains(found, expert.LLCUnanswered.String()) || !slices.Contains(found, expert.CaptureUnreadable.String()) {
		t.Errorf("findings %v: want smc.capture.unreadable, no smc.llc.unanswered", found)
	}
}

// TestHeldLLCResponse: mirror-lost.pcap's DELETE_RKEY exchange at its end
// as an editcap -E copy damaged it: the client's response (frame 4119)
// damaged in one byte (its content the sender's, held for the server's
// word), the server's ACK of it damaged past reading (4120), the client's
// next request damaged past its ICRC (4121) and the ACK of that one cut
// short by its damage (4122): the word comes after the request's 2 s, and
// the request is answered all the same: the capture holds the response.
// No smc.llc.unanswered.
func TestHeldLLCResponse(t *testing.T) {
	frames, _ := testutil.ReadFrames(t, "../testdata/expert/mirror-lost.pcap")
	flip := func(n, off int, mask byte) mutate.Mutation {
		return mutate.Mutation{Kind: mutate.Flip, At: n - 1, N: off, Mask: mask}
	}
	ms := []mutate.Mutation{flip(4119, 129, 0x80), flip(4121, 81, 0x2f), flip(4122, 50, 0x38), flip(4122, 92, 0x02)}
	for off := 80; off <= 111; off++ { // the ACK's IPv4 addresses, UDP header and BTH
		ms = append(ms, flip(4120, off, 0xaa))
	}
	for off := 145; off <= 151; off++ { // the next request's ICRC
		ms = append(ms, flip(4121, off, 0xaa))
	}
	_, found := feedRaw(t, applied(frames, ms...))
	if slices.Contains(found, expert.LLCUnanswered.String()) {
		t.Errorf("findings %v: smc.llc.unanswered", found)
	}
}

// TestStartAtSYNACK: option-echoed.pcap begun at the server's SYN-ACK
// (a capture started late), or with the client's SYN damaged past
// reading: the SYN-ACK's SMC option says the SYN carried it (a server
// echoes it only then), so the client's first bytes that are not CLC are
// the fallback they are in the whole capture, smc.option.echoed_no_clc;
// ended before them, the Proposal is what was pending (Conn.offeredSMC).
func TestStartAtSYNACK(t *testing.T) {
	frames, _ := testutil.ReadFrames(t, "../testdata/expert/option-echoed.pcap")
	unreadable := slices.Clone(frames)
	syn := slices.Clone(unreadable[4].Data)
	for i := 14 + 9; i < len(syn); i++ { // from the IPv4 protocol on
		syn[i] = 0xaa
	}
	unreadable[4].Data = syn
	for name, fs := range map[string][]rawFrame{
		"begun at the SYN-ACK": mutate.Mutation{Kind: mutate.Start, At: 5}.Apply(frames),
		"SYN unreadable":       unreadable,
	} {
		s, found := feedRaw(t, fs)
		if len(s.Conns) != 1 || s.Conns[0].Outcome != OutcomeFallback || s.Conns[0].Fallback.Cause != CauseNoCLC ||
			!slices.Contains(found, expert.OptionEchoed.String()) {
			t.Errorf("%s: connections %+v, findings %v; want one fallback (no CLC after SMC options), %s", name, s.Conns, found, expert.OptionEchoed)
		}
	}
	// Begun at the SYN-ACK and ended before the client's first bytes: the
	// client's Proposal is what was pending.
	_, found := feedRaw(t, mutate.Mutation{Kind: mutate.Cut, At: 1}.Apply(mutate.Mutation{Kind: mutate.Start, At: 5}.Apply(frames)))
	if !slices.Contains(found, expert.EndedPending.String()) {
		t.Errorf("begun at the SYN-ACK, ended after its ACK: findings %v, want %s", found, expert.EndedPending)
	}
}

// TestDamagedPSNNotResend: multiconn.pcap's WRITE at frame 1338 damaged in
// two payload bytes, so the requests after it wait for the responder's
// word, and the WRITE First at 1340 damaged in its PSN to the CDC's before
// it (1339) and in its ICRC: the damaged copy is no resend of that CDC,
// whose opcode and length it does not have, so no roce.rc.retransmission
// (its ICRC fails, its PSN the damage's). So for a CDC (5377) damaged into
// the PSN of the CDC before it (5375), the WRITE at 5374 damaged: the same
// opcode and length, another sequence number and token (sameRequest).
func TestDamagedPSNNotResend(t *testing.T) {
	frames, _ := testutil.ReadFrames(t, "../samples/multiconn.pcap")
	const psn = 14 + 20 + 8 + 11 // the low byte of the BTH's PSN
	for _, c := range []struct {
		write, copy int  // frame indexes: the WRITE damaged, the copy whose PSN is
		mask        byte // what turns the copy's PSN into the one before
	}{
		{1337, 1339, 0x01}, // a WRITE First read as a resend of a CDC
		{5372, 5375, 0x02}, // a CDC (seq 206, token 3) read as a resend of another (seq 165, token 4)
	} {
		icrc := len(frames[c.copy].Data) - 1 // and its ICRC: no one byte explains the damage
		s, found := feedRaw(t, applied(frames,
			mutate.Mutation{Kind: mutate.Flip, At: c.write, N: 70, Mask: 0x01},
			mutate.Mutation{Kind: mutate.Flip, At: c.write, N: 71, Mask: 0x01},
			mutate.Mutation{Kind: mutate.Flip, At: c.copy, N: psn, Mask: c.mask},
			mutate.Mutation{Kind: mutate.Flip, At: c.copy, N: icrc, Mask: 0x55}))
		if slices.Contains(found, expert.RCRetransmission.String()) || s.Stats.Retrans != 0 {
			t.Errorf("frame %d: findings %v, %d retransmissions; want none", c.copy+1, found, s.Stats.Retrans)
		}
	}
}

// clcFrames lists the indexes of the frames that carry a CLC message of
// type typ.
func clcFrames(t *testing.T, lt layers.LinkType, frames []rawFrame, typ decode.CLCType) []int {
	t.Helper()
	var out []int
	eachRaw(t, "clc", lt, frames, func(f *capture.Frame) {
		for _, m := range f.CLC {
			if m.Type == typ {
				out = append(out, f.Number-1)
			}
		}
	})
	return out
}

// TestMissedAccept: lossy.pcap without its second connection's CLC
// Accept, which told the server's RMBE size. The client's 512 KiB wrap
// that RMBE many times: a cursor that passed its end moved by a size
// the capture does not hold, not backwards (smc.cdc.cursor_backwards).
func TestMissedAccept(t *testing.T) {
	frames := readRawFrames(t, "../samples/lossy.pcap")
	_, lt := testutil.ReadFrames(t, "../samples/lossy.pcap")
	accepts := clcFrames(t, lt, frames, decode.CLCTypeAccept)
	if len(accepts) != 2 {
		t.Fatalf("%d Accepts in lossy.pcap, want 2", len(accepts))
	}
	at := accepts[1]
	frames = append(frames[:at:at], frames[at+1:]...)
	tr := New(Options{Unshared: true})
	eachRaw(t, "no accept", lt, frames, func(f *capture.Frame) { tr.Feed(f) })
	tr.EndCapture(time.Time{})
	s := tr.Snapshot()
	for _, f := range s.Findings() {
		if f.ID == expert.CursorBackwards {
			t.Errorf("%s: %s", f.ID, f.Detail)
		}
	}
	if len(s.Conns) != 2 || s.Conns[1].Outcome != OutcomeSMCR {
		t.Errorf("%d connections, want 2, the second SMC-R by its Confirm", len(s.Conns))
	}
}

// TestMissedCloseCDC: the server's closing CDC (peer_conn_closed) missing
// from the capture, its ACK there: its TCP FIN is no close without close.
func TestMissedCloseCDC(t *testing.T) {
	frames := readRawFrames(t, crafted.Pingpong(t))
	_, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
	close := -1
	eachRaw(t, "close", lt, frames, func(f *capture.Frame) {
		if f.CDC != nil && f.IPv4 != nil && f.IPv4.SrcIP.String() == "10.10.0.1" && f.CDC.ConnFlags&decode.CDCPeerConnClosed != 0 && close < 0 {
			close = f.Number - 1
		}
	})
	if close < 0 {
		t.Fatal("no closing CDC from the server in pingpong.pcap")
	}
	frames = append(frames[:close:close], frames[close+1:]...)
	_, found := feedRaw(t, frames)
	if slices.Contains(found, expert.ClosedWithoutClose.String()) || !slices.Contains(found, expert.NotCaptured.String()) {
		t.Errorf("findings %v: want roce.rc.not_captured and no smc.conn.closed_without_close", found)
	}
}

// TestMissedCLC: a CLC message missing from the capture, the peer's TCP
// ACK of its bytes there (Wireshark: "ACKed segment that wasn't
// captured"). The capture's gap is told (roce.rc.not_captured on the
// connection), the handshake is not called failed, and the connection's
// traffic still makes it one SMC-R connection, not a second one joined
// mid-stream.
func TestMissedCLC(t *testing.T) {
	for _, c := range []struct {
		name  string
		frame int // pingpong.pcap
	}{{"proposal", 8}, {"accept", 10}, {"confirm", 12}} {
		t.Run(c.name, func(t *testing.T) {
			frames := readRawFrames(t, crafted.Pingpong(t))
			frames = append(frames[:c.frame-1:c.frame-1], frames[c.frame:]...)
			s, found := feedRaw(t, frames)
			if len(s.Conns) != 1 || s.Conns[0].Outcome != OutcomeSMCR || s.Conns[0].Flow[DirC2S].CDCs < 500 {
				for _, x := range s.Conns {
					t.Logf("connection %d: %v %q, %d CDCs C->S", x.ID, x.Outcome, ConnDetail(&x), x.Flow[DirC2S].CDCs)
				}
				t.Errorf("%d connections: want one, SMC-R, with its CDCs", len(s.Conns))
			}
			if !slices.Contains(found, expert.NotCaptured.String()) || slices.Contains(found, expert.HandshakeFailed.String()) {
				t.Errorf("findings %v: want roce.rc.not_captured and no smc.handshake.failed", found)
			}
		})
	}
}

// TestThinnedCounts: multiconn.pcap without every other frame (a mirror
// port that drops): WRITEs whose run out of sequence is followed later,
// and claimed by a connection later still, move from the count they were
// in as they went by (link only), so every frame stays counted once and no
// count goes below zero. (Without every 3rd frame, the connections whose
// CDCs came before their handshake was known are placed by them at once,
// in a link group the capture shows made: nothing is merged there.)
func TestThinnedCounts(t *testing.T) {
	all, lt := testutil.ReadFrames(t, "../samples/multiconn.pcap")
	var frames []rawFrame
	for i := range all {
		if i%2 != 0 {
			frames = append(frames, all[i])
		}
	}
	tr := New(Options{Unshared: true})
	eachRaw(t, "thin", lt, frames, func(f *capture.Frame) { tr.Feed(f) })
	tr.EndCapture(time.Time{})
	s := tr.Snapshot()
	// The halves joined from CDCs before their handshake was known were
	// merged into it: each ID frames carried is listed, or named by the
	// connection it was merged into.
	ids := map[int]int{}
	for _, c := range s.Conns {
		ids[c.ID]++
		for _, m := range c.Merged {
			ids[m]++
		}
	}
	if len(ids) == len(s.Conns) {
		t.Errorf("no connection was merged: the test shows nothing")
	}
	for id := 1; id <= len(ids); id++ {
		if ids[id] != 1 {
			t.Errorf("connection %d is listed or merged %d times, want once", id, ids[id])
		}
	}
	st := s.Stats
	if st.Unattached < 0 || st.LinkOnly < 0 || st.LateAttached == 0 {
		t.Errorf("counts %+v: none below zero, some claimed late", st)
	}
	if sum := st.ConnAttached + st.LinkOnly + st.Unattached + st.TCPUntracked + st.Other + st.CaptureDups; sum != st.Frames {
		t.Errorf("counts add up to %d of %d frames: %+v", sum, st.Frames, st)
	}
}

// TestMissedBeforeGoBack: lossy.pcap (Soft-RoCE with loss) without the
// ten WRITE packets (PSNs 0x02a754 to 0x02a75d) that the requester sent
// before the responder's NAK of 0x02a751 sent it back. The NAK of
// 0x02a760 after them says the responder took them; they come again in
// the go-back that followed the first NAK, and the go-back goes on past
// them with no second copy: those copies are its retransmissions, as in
// the whole capture, not originals the capture put late. Ten requests
// not captured, no roce.capture.reordered, the retransmissions and PSN
// gaps of the whole capture.
func TestMissedBeforeGoBack(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../samples/lossy.pcap")
	whole, _ := feedRaw(t, all)
	const from = 1030 // frame 1031, the first of the ten
	frames := append(slices.Clone(all[:from]), all[from+10:]...)
	s, found := feedRaw(t, frames)
	if slices.Contains(found, expert.CaptureReordered.String()) {
		t.Errorf("findings %v: a resend taken for a late original", found)
	}
	var missed, gaps, wgaps int
	for i := range s.Links {
		missed += s.Links[i].RC[DirC2S].NotCaptured
		gaps += s.Links[i].RC[DirC2S].PSNGaps
	}
	for i := range whole.Links {
		wgaps += whole.Links[i].RC[DirC2S].PSNGaps
	}
	if s.Stats.Retrans != whole.Stats.Retrans || missed != 10 || gaps != wgaps {
		t.Errorf("%d retransmissions, %d not captured, %d PSN gaps; want %d, 10, %d",
			s.Stats.Retrans, missed, gaps, whole.Stats.Retrans, wgaps)
	}
}

// TestDamagedCopiesOfPasses: lossy.pcap with the capture's copies of
// requests the responder took damaged (a byte of their WRITE data, as a
// faulty capture NIC or storage does), where a later go-back pass sends
// their PSNs again: as a step of a pass under way (frames 783, 786, 788
// and 793, sent again from frame 810), as the first step of a pass (778,
// again at 810 after the ACK of 809), alone before a pass that steps over
// it (622, again at 647), after a NAK of an earlier PSN that the
// capture shows behind the requests it answers (1029, behind the NAK of
// 1056), and sent again by a pass before any word of the responder's
// (462 and 463, again at 519 and 520 in a pass from 503: the copies there
// are taken in their place until the ACK of 522 answers a duplicate,
// which makes the PSN a run waited for a resend), and sent again after
// an earlier copy held out of sequence (274: the requester sent it again
// because the responder dropped that copy, so the damaged one is the copy
// the ACK of 280 covers). The responder's ACKs cover them before the copies come again:
// every one is the capture's damage, each copy sent again a
// retransmission as in the whole capture, none a request the capture put
// late, nothing not captured.
func TestDamagedCopiesOfPasses(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../samples/lossy.pcap")
	whole, _ := feedRaw(t, all)
	damaged := []int{274, 462, 463, 622, 778, 783, 786, 788, 793, 1029}
	for _, bytes := range []int{1, 2} {
		// One byte the ICRC explains (the copy mended, its content
		// followed), or two (its content unknown till a copy comes).
		frames := slices.Clone(all)
		for _, n := range damaged {
			d := slices.Clone(frames[n-1].Data)
			for b := range bytes {
				d[len(d)-100-300*b] ^= 0x10 // WRITE data
			}
			frames[n-1].Data = d
		}
		damagedCopiesOfPasses(t, bytes, whole, frames, len(damaged))
	}
}

func damagedCopiesOfPasses(t *testing.T, bytes int, whole Snapshot, frames []rawFrame, damaged int) {
	t.Helper()
	s, found := feedRaw(t, frames)
	if slices.Contains(found, expert.CaptureReordered.String()) || slices.Contains(found, expert.NotCaptured.String()) {
		t.Errorf("%d bytes: findings %v: a resend taken for a late original, or a request not captured", bytes, found)
	}
	var got, want RC
	for i := range s.Links {
		rc := &s.Links[i].RC[DirC2S]
		got.Damaged += rc.Damaged
		got.ICRCBad += rc.ICRCBad
		got.Retrans += rc.Retrans
		got.Packets += rc.Packets
	}
	for i := range whole.Links {
		rc := &whole.Links[i].RC[DirC2S]
		want.ICRCBad += rc.ICRCBad
		want.Retrans += rc.Retrans
		want.Packets += rc.Packets
	}
	want.Damaged = damaged
	if got.Damaged != want.Damaged || got.ICRCBad != want.ICRCBad || got.Retrans != want.Retrans || got.Packets != want.Packets {
		t.Errorf("%d bytes: C->S damaged %d, ICRC bad %d, retransmissions %d, packets %d; want %d, %d, %d, %d",
			bytes, got.Damaged, got.ICRCBad, got.Retrans, got.Packets, want.Damaged, want.ICRCBad, want.Retrans, want.Packets)
	}
	if got, want := flowTotalsOf(s), flowTotalsOf(whole); got != want {
		t.Errorf("%d bytes: CDCs and bytes %v, whole capture %v", bytes, got, want)
	}
}

// TestDamagedResendOfHeld: lossy.pcap with the capture's copy of frame
// 440 damaged, connection 2's first CDC sent again after the responder
// dropped the copy at 427 (held out of sequence, then NAKed): the ACK of
// 441 says the responder took the damaged copy, whose content is the
// held one's, followed as of the copy taken: the connection's first CDC
// is at 440, as in the whole capture, not at the dropped 427.
func TestDamagedResendOfHeld(t *testing.T) {
	const resent = 440
	all, _ := testutil.ReadFrames(t, "../samples/lossy.pcap")
	whole, _ := feedRaw(t, all)
	frames := slices.Clone(all)
	d := slices.Clone(frames[resent-1].Data)
	d[len(d)-1] ^= 0xff // the ICRC
	frames[resent-1].Data = d
	s, _ := feedRaw(t, frames)
	if len(s.Conns) != len(whole.Conns) {
		t.Fatalf("%d connections, whole capture %d", len(s.Conns), len(whole.Conns))
	}
	for i, c := range s.Conns {
		if w := whole.Conns[i]; !c.TFirstCDC.Equal(w.TFirstCDC) {
			t.Errorf("connection %d: first CDC at %v, whole capture %v", c.ID, c.TFirstCDC, w.TFirstCDC)
		}
	}
	if got, want := flowTotalsOf(s), flowTotalsOf(whole); got != want {
		t.Errorf("CDCs and bytes %v, whole capture %v", got, want)
	}
}

// TestThinnedGoBackPasses: lossy.pcap with every k-th frame left out (a
// mirror that drops evenly). What the thinning took from a go-back's
// passes comes again in a later pass, as a step of it or alone before
// it, and no NAK need start that pass (Soft-RoCE goes back on a timeout
// or a duplicate ACK too): a PSN a run waited for that came as a step of
// a pass (pendingLoss.onResend), a request shown after its ACK that was
// a step of a pass sending again, or one sent alone that a pass stepped
// over, is a resend whose original the capture never showed (goBack), as
// the whole capture has it: no request is counted as put out of order by
// the capture. (TestDifferentialSkew holds the same shapes where the
// clocks are apart: there they stay.)
func TestThinnedGoBackPasses(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../samples/lossy.pcap")
	thin := func(k, at int) (reordered, missed int, found []string) {
		var frames []rawFrame
		for i := range all {
			if i%k != at {
				frames = append(frames, all[i])
			}
		}
		s, found := feedRaw(t, frames)
		for i := range s.Links {
			for d := range s.Links[i].RC {
				reordered += s.Links[i].RC[d].Reordered
				missed += s.Links[i].RC[d].NotCaptured
			}
		}
		return reordered, missed, found
	}
	for _, k := range []int{5, 7, 11, 13, 17, 23, 31} {
		reordered, missed, found := thin(k, k/2)
		if reordered != 0 || slices.Contains(found, expert.CaptureReordered.String()) {
			t.Errorf("every %dth frame from %d left out: %d requests reordered, findings %v; want none", k, k/2, reordered, found)
		}
		if missed == 0 {
			t.Errorf("every %dth frame from %d left out: no request not captured", k, k/2)
		}
	}
	// docs/smcdump.md's count: 11 values of k, five offsets each.
	for _, k := range []int{5, 7, 9, 11, 13, 17, 19, 23, 29, 31, 37} {
		for at := range 5 {
			if reordered, _, _ := thin(k, at); reordered > 0 {
				t.Errorf("every %dth frame from %d left out: %d requests reordered, want none", k, at, reordered)
			}
		}
	}
}

// TestSwappedInGoBack: two neighbouring requests of one burst in
// lossy.pcap shown the other way round (mutate.Reordered's "late N+1"),
// inside Soft-RoCE's go-back passes, where the pass that follows leaves
// out PSNs it sent alone just before. The one shown second was sent with
// the burst, not alone: the pass leaving it out makes it no resend whose
// original the capture missed; and a second copy of it shown before the
// responder's ACK said the first was the original. Only the capture's
// order differs from the whole capture: one request reordered, the same
// retransmissions, no request not captured, the same requests dropped
// out of sequence.
func TestSwappedInGoBack(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../samples/lossy.pcap")
	count := func(s Snapshot) (reordered, missed, retrans, outOfSeq int) {
		for i := range s.Links {
			for d := range s.Links[i].RC {
				rc := &s.Links[i].RC[d]
				reordered += rc.Reordered
				missed += rc.NotCaptured
				retrans += rc.Retrans
				outOfSeq += rc.OutOfSeq
			}
		}
		return
	}
	whole, _ := feedRaw(t, all)
	_, wMissed, wRetrans, wOutOfSeq := count(whole)
	// Frame 617 resent alone at 645, the pass from 648 leaving it out;
	// frame 784 sent again at 800, before the ACK at 809.
	for _, name := range []string{"late 617+1", "late 784+1"} {
		m, err := mutate.Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := feedRaw(t, m.Apply(all))
		reordered, missed, retrans, outOfSeq := count(s)
		if reordered != 1 || missed != wMissed || retrans != wRetrans || outOfSeq != wOutOfSeq {
			t.Errorf("%s: %d reordered, %d not captured, %d retransmitted, %d out of sequence; want 1, %d, %d, %d",
				name, reordered, missed, retrans, outOfSeq, wMissed, wRetrans, wOutOfSeq)
		}
	}
}

// TestAheadWriteAttributed: the MIDDLE and LAST packets of an RDMA WRITE
// whose FIRST is a connection's frame, and the ACKs and NAKs of its
// packets, are that connection's too, also in a run ahead of the PSN its
// responder expects, sent again, or acknowledged long after: lossy.pcap's runs the
// responder dropped after a loss (its WRITEs of 524 KB), and multiconn's
// requests a capture showed out of order (each request of frames 780-799
// and 1210-1225 put after the next: a multi-queue capture's order).
func TestAheadWriteAttributed(t *testing.T) {
	lossy, lt := testutil.ReadFrames(t, "../samples/lossy.pcap")
	multi, _ := testutil.ReadFrames(t, "../samples/multiconn.pcap")
	var swapped []mutate.Mutation
	for _, at := range []int{782, 1214, 1217, 1219} { // indexes: frames 783, 1215, 1218, 1220
		swapped = append(swapped, mutate.Mutation{Kind: mutate.Late, At: at, N: 1})
	}
	for _, c := range []struct {
		name   string
		frames []rawFrame
		ahead  int // WRITE packets that must come in a run, at least
	}{
		{"lossy", lossy, 100},
		{"multiconn reordered", applied(multi, swapped...), 3},
	} {
		tr := New(Options{Unshared: true})
		var rec decode.Record
		type write struct {
			conn       string
			from, pkts uint32
		}
		writes := map[string]write{} // by the requester's and responder's addresses
		checked, wrong := 0, 0
		check := func(f *capture.Frame, w write, psn uint32, conn string) {
			if n := (psn - w.from) & 0xFFFFFF; w.conn == "" || n >= w.pkts || n == 0 && f.BTH.Opcode != decode.OpAcknowledge {
				return
			}
			checked++
			if conn != w.conn {
				wrong++
				if wrong <= 5 {
					t.Errorf("%s: frame %d, PSN %#x of the WRITE of connection %s from PSN %#x: connection %q", c.name, f.Number, psn, w.conn, w.from, conn)
				}
			}
		}
		eachRaw(t, c.name, lt, c.frames, func(f *capture.Frame) {
			tr.Feed(f)
			rec.Reset()
			tr.AppendFields(f, &rec)
			b := f.BTH
			if b == nil {
				return
			}
			conn := ""
			if v, ok := rec.First(fConnID); ok {
				conn = v.Format(decode.KindUint)
			}
			src, dst := f.IPv4.SrcIP.String(), f.IPv4.DstIP.String()
			switch b.Opcode {
			case decode.OpWriteFirst:
				w := write{from: b.PSN}
				if f.RETH != nil && b.DataWireLen() > 0 {
					w.conn, w.pkts = conn, (f.RETH.DMALen+uint32(b.DataWireLen())-1)/uint32(b.DataWireLen())
				}
				writes[src+">"+dst] = w
			case decode.OpWriteMiddle, decode.OpWriteLast:
				check(f, writes[src+">"+dst], b.PSN, conn)
			case decode.OpAcknowledge: // an ACK or NAK of one of its packets
				check(f, writes[dst+">"+src], b.PSN, conn)
			}
		})
		if wrong > 0 || checked < c.ahead {
			t.Errorf("%s: %d of %d later WRITE packets not their FIRST's connection's (want 0 of at least %d)", c.name, wrong, checked, c.ahead)
		}
	}
}

// TestDamagedBytes: lossy.pcap with random bytes damaged, one in 30,000
// (as editcap -E 0.00003 does; three seeds). Damaged copies the
// responder's word decides are the capture's damage (roce.capture.damaged)
// and none of their PSNs' other copies is taken for a request the capture
// put late; those it dropped for their sequence anyway stay as they were.
func TestDamagedBytes(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../samples/lossy.pcap")
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 30000))
		frames := slices.Clone(all)
		hit := 0
		for i := range frames {
			var d []byte
			for j := range frames[i].Data {
				if rng.IntN(30000) == 0 {
					if d == nil {
						d = slices.Clone(frames[i].Data)
					}
					d[j] ^= byte(1 + rng.IntN(255))
					hit++
				}
			}
			if d != nil {
				frames[i].Data = d
			}
		}
		s, found := feedRaw(t, frames)
		var reordered, damaged int
		for i := range s.Links {
			for d := range s.Links[i].RC {
				reordered += s.Links[i].RC[d].Reordered
				damaged += s.Links[i].RC[d].Damaged
			}
		}
		if reordered != 0 || damaged == 0 {
			t.Errorf("seed %d, %d bytes damaged: %d requests reordered, %d copies the capture's damage (findings %v); want none, some", seed, hit, reordered, damaged, found)
		}
	}
}

// TestBurstsLeftOut: lossy.pcap without bursts of frames (a capture
// ring that overflowed) in its go-back passes. What comes after a burst
// is taken as the whole capture has it: a pass that goes on over PSNs
// whose first copies the burst took (the responder expected them), over
// PSNs it dropped out of sequence before, or onto the PSN its NAK named,
// is a pass sending again, and a late request that was its step, or one
// sent alone that it passed over, was a resend whose original the capture
// never showed; so is one the responder answered with a duplicate's ACK
// (frames 1019-1058: every copy before the second pass left out, its
// NAKs too; the ACK of 0x02a75f comes again with the same MSN fourteen
// times, for the fourteen requests up to it the capture shows after the
// first; frames 1045-1064 and 1032-1071: the PSN the run waited for
// came first in a pass, and the burst took the start of the next pass,
// whose duplicates the repeated ACKs answer one more of than the capture
// shows; frames 642-681: the PSN a run waited for came right after a
// copy of the PSN before it sent again, one held out of sequence, as a
// step of the same resend); none is a
// request the capture put out of order.
func TestBurstsLeftOut(t *testing.T) {
	all, _ := testutil.ReadFrames(t, "../samples/lossy.pcap")
	for _, b := range [][2]int{{460, 20}, {616, 10}, {616, 20}, {1357, 10}, {1357, 20}, {1357, 40}, {1019, 40}, {1045, 20}, {1032, 40}, {642, 40}} {
		from, n := b[0]-1, b[1] // frames from b[0], 1-based
		frames := append(slices.Clone(all[:from]), all[from+n:]...)
		s, found := feedRaw(t, frames)
		var reordered, missed int
		for i := range s.Links {
			reordered += s.Links[i].RC[DirC2S].Reordered
			missed += s.Links[i].RC[DirC2S].NotCaptured
		}
		if reordered != 0 || slices.Contains(found, expert.CaptureReordered.String()) {
			t.Errorf("frames %d-%d left out: %d requests reordered, findings %v; want none", b[0], b[0]+n-1, reordered, found)
		}
		if missed == 0 {
			t.Errorf("frames %d-%d left out: no request not captured", b[0], b[0]+n-1)
		}
	}
	// docs/smcdump.md's count: bursts of 2 to 40 frames from frame 200
	// on, every 13th frame (710). One keeps one request (frames
	// 850-889, PSN 0x02a72c at frame 987 of the whole capture).
	kept := 0
	for _, n := range []int{2, 6, 10, 20, 40} {
		for from := 199; from < 2040; from += 13 {
			frames := append(slices.Clone(all[:from]), all[min(from+n, len(all)):]...)
			s, _ := feedRaw(t, frames)
			reordered := 0
			for i := range s.Links {
				for d := range s.Links[i].RC {
					reordered += s.Links[i].RC[d].Reordered
				}
			}
			if reordered > 1 {
				t.Errorf("frames %d-%d left out: %d requests reordered, want at most 1", from+1, from+n, reordered)
			}
			if reordered > 0 {
				kept++
			}
		}
	}
	if kept > 1 {
		t.Errorf("%d of 710 bursts keep a reordered request; docs/smcdump.md says 1", kept)
	}
}

// TestSnaplenCut: pingpong.pcap captured with a snap length of 128 bytes
// (tcpdump -s 128, common to keep headers only). What the snap length
// left out is not the sender's fault: no LLC message cut short is
// malformed, no frame carries a decode error for it, and no cut frame
// shows an ICRC (its last bytes are payload). The TCP bytes of the cut
// CLC messages were captured, only not kept: not "never showed" (not
// captured). The Accept's first 60 bytes (decode.CLC.DecodeCut) hold the
// server's endpoint up to its RMB's address: the handshake is followed
// as far as that, one SMC-R connection, its initial PSN not invented.
func TestSnaplenCut(t *testing.T) {
	all := readRawFrames(t, crafted.Pingpong(t))
	frames := withSnapLen(all, 128)
	_, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
	icrc, _ := decode.LookupField("roce.icrc")
	cutSends := 0
	eachRaw(t, "s128", lt, frames, func(f *capture.Frame) {
		if f.SMCMalformed || f.Err != nil {
			t.Errorf("frame %d: malformed %v, error %v: the snap length cut it", f.Number, f.SMCMalformed, f.Err)
		}
		if f.BTH != nil && f.Cut {
			cutSends++
			var r decode.Record
			f.BTH.AppendFields(&r)
			for _, id := range r.IDs {
				if id == icrc.ID {
					t.Errorf("frame %d: roce.icrc on a frame whose trailer was not captured", f.Number)
				}
			}
		}
	})
	if cutSends == 0 {
		t.Fatal("no RoCE frame was cut: the test cuts nothing")
	}
	s, found := feedRaw(t, frames)
	if slices.Contains(found, "smc.malformed") || slices.Contains(found, "roce.rc.not_captured") || s.Stats.Malformed != 0 {
		t.Errorf("findings %v, malformed %d: none is the sender's or the network's", found, s.Stats.Malformed)
	}
	whole, _ := feedRaw(t, all)
	if len(s.Conns) != 1 || len(whole.Conns) != 1 {
		t.Fatalf("%d connections, the whole capture %d: want one each", len(s.Conns), len(whole.Conns))
	}
	c, w := &s.Conns[0], &whole.Conns[0]
	for _, p := range []struct {
		name    string
		ep, wep Endpoint
	}{{"server", c.ServerEP, w.ServerEP}, {"client", c.ClientEP, w.ClientEP}} {
		wep := p.wep
		wep.PSN, wep.HasFCE, wep.Direct, wep.OS, wep.Release, wep.Host = 0, false, false, 0, 0, "" // after the cut
		if p.ep != wep {
			t.Errorf("the %s's endpoint %+v, want the whole capture's %+v but what follows its RMB's address", p.name, p.ep, wep)
		}
	}
	if c.Inferred || c.Outcome != OutcomeSMCR || c.Failure != "" || !slices.Equal(c.CLCTypes, w.CLCTypes) {
		t.Errorf("the connection: inferred %v, outcome %v, failure %q, CLC %v; want SMC-R, no failure, CLC %v",
			c.Inferred, c.Outcome, c.Failure, c.CLCTypes, w.CLCTypes)
	}
	for d := range c.Flow {
		if c.Flow[d].Bytes != w.Flow[d].Bytes || c.Flow[d].CDCs != w.Flow[d].CDCs {
			t.Errorf("%v: %d bytes in %d CDCs, the whole capture %d in %d", Dir(d), c.Flow[d].Bytes, c.Flow[d].CDCs, w.Flow[d].Bytes, w.Flow[d].CDCs)
		}
	}
}

// TestSnaplenCutSamples: the kernel's captures cut to 128 bytes a frame
// (tcpdump -s 128) list the connections the whole captures list, each
// with the same outcome, version, link group and link, CLC messages, and
// CDCs and bytes each way: the cut CLC messages hold what the handshake
// needs (TestSnaplenCut), and the stream goes on past the bytes a cut
// segment did not keep.
func TestSnaplenCutSamples(t *testing.T) {
	for _, name := range []string{"pingpong", "long", "multiconn", "multilink", "lossy", "teardown"} {
		t.Run(name, func(t *testing.T) {
			w, s, _ := wholeAndCut(t, "../samples/"+name+".pcap", 128)
			sum := func(s Snapshot) []string {
				var out []string
				for i := range s.Conns {
					c := &s.Conns[i]
					out = append(out, fmt.Sprintf("%d %v v%d lgr %d link %d clc %v confirmed %v inferred %v %d/%d CDCs %d/%d bytes",
						c.ID, c.Outcome, c.Version, c.LGR, c.Link, c.CLCTypes, !c.TConfirm.IsZero(), c.Inferred,
						c.Flow[DirC2S].CDCs, c.Flow[DirS2C].CDCs, c.Flow[DirC2S].Bytes, c.Flow[DirS2C].Bytes))
				}
				return out
			}
			if got, want := sum(s), sum(w); !slices.Equal(got, want) {
				t.Errorf("cut to 128 bytes:\n%s\nthe whole capture:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// The links, their ends and histories: the LLC messages cut
			// (ADD_LINK_V2 with its rkeys) are read as far as captured.
			if got, want := linkSum(s), linkSum(w); !slices.Equal(got, want) {
				t.Errorf("links cut to 128 bytes:\n%s\nthe whole capture:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// An initial PSN is the whole capture's, or absent where the
			// cut Accept held none (0: rows show none).
			for i := range min(len(s.Links), len(w.Links)) {
				for _, e := range [][2]LinkEnd{{s.Links[i].Client, w.Links[i].Client}, {s.Links[i].Server, w.Links[i].Server}} {
					if e[0].PSN != 0 && e[0].PSN != e[1].PSN {
						t.Errorf("link %d: initial PSN %#x, the whole capture %#x", s.Links[i].ID, e[0].PSN, e[1].PSN)
					}
				}
			}
		})
	}
}

// TestSnaplenShortSamples: the kernel's captures cut to 80, 96 and 110
// bytes a frame (tcpdump -s 96 was a default) keep no CLC message whole,
// and at 80 not the SYN-ACK's SMC option either: each connection is
// still one row, SMC-R with the whole capture's CDCs and bytes, placed
// by its first CDC (claimFirst, Conn.blind), and the snap length named.
// (multilink.pcap at 80 bytes is left out: its second connection's
// first CDCs come on a link whose ADD_LINK the cut made unknown.)
func TestSnaplenShortSamples(t *testing.T) {
	for _, snap := range []int{80, 96, 110} {
		for _, name := range []string{"pingpong", "long", "multiconn", "multilink", "lossy", "teardown", "slow-reader", "silent-link"} {
			if snap == 80 && name == "multilink" {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", name, snap), func(t *testing.T) {
				w, s, _ := wholeAndCut(t, "../samples/"+name+".pcap", snap)
				sum := func(s Snapshot) []string {
					var out []string
					for i := range s.Conns {
						c := &s.Conns[i]
						out = append(out, fmt.Sprintf("%d %v inferred %v %d/%d CDCs %d/%d bytes", c.ID, c.Outcome, c.Inferred,
							c.Flow[DirC2S].CDCs, c.Flow[DirS2C].CDCs, c.Flow[DirC2S].Bytes, c.Flow[DirS2C].Bytes))
					}
					return out
				}
				if got, want := sum(s), sum(w); !slices.Equal(got, want) {
					t.Errorf("cut to %d bytes:\n%s\nthe whole capture:\n%s", snap, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				for i := range s.Conns {
					if d := ConnDetail(&s.Conns[i]); !strings.Contains(d, "snap length") {
						t.Errorf("connection %d: %q, want the snap length named", s.Conns[i].ID, d)
					}
				}
			})
		}
	}
}

// TestSnaplenCutFirstCDCDamaged: expert/malformed.pcap (a client CDC
// with a bad length field where its first should be) cut to 96 bytes:
// the client's first CDC the capture reads is its second, so the
// connection is joined from it; the server's first CDC pairs with that
// joined connection by its cursor, and being the first, says the
// connection came up in the capture: the one blind handshake waiting is
// it, one row (inferConn).
func TestSnaplenCutFirstCDCDamaged(t *testing.T) {
	w, s, _ := wholeAndCut(t, "../testdata/expert/malformed.pcap", 96)
	if len(w.Conns) != 1 || len(s.Conns) != 1 || s.Conns[0].Inferred || s.Conns[0].Outcome != OutcomeSMCR {
		for _, c := range s.Conns {
			t.Logf("connection %d: %v %q", c.ID, c.Outcome, ConnDetail(&c))
		}
		t.Fatalf("%d connections whole, %d cut: want one SMC-R connection from its handshake", len(w.Conns), len(s.Conns))
	}
	for d := range s.Conns[0].Flow {
		if f, wf := &s.Conns[0].Flow[d], &w.Conns[0].Flow[d]; f.CDCs != wf.CDCs || f.Bytes != wf.Bytes {
			t.Errorf("%v: %d CDCs %d bytes, the whole capture %d and %d", Dir(d), f.CDCs, f.Bytes, wf.CDCs, wf.Bytes)
		}
	}
}

// TestBytesUnsizedRMBE: slow-reader.pcap cut to 80 bytes a frame keeps
// neither the Accept's RMBE size nor the link's setup, so the WRITEs that
// filled the RMBE before the first CDC (its cursor wrapped once) are not
// tied to the connection, and the size is not known there. The bytes
// that wrap moved are counted once a later wrap, with the WRITEs before
// it, shows the size; a capture that ends before that says the count is
// not whole (rows show "-").
func TestBytesUnsizedRMBE(t *testing.T) {
	w, s, cut := wholeAndCut(t, "../samples/slow-reader.pcap", 80)
	if len(s.Conns) != 1 || len(w.Conns) != 1 {
		t.Fatalf("%d connections cut, %d whole: want 1", len(s.Conns), len(w.Conns))
	}
	if f, wf := &s.Conns[0].Flow[DirC2S], &w.Conns[0].Flow[DirC2S]; f.Bytes != wf.Bytes || !f.BytesWhole() {
		t.Errorf("C->S %d bytes (whole %v), the whole capture %d", f.Bytes, f.BytesWhole(), wf.Bytes)
	}
	// The first 105 frames: the client's first two CDCs (frames 82 and
	// 103), one wrap of a size not shown yet.
	p, _ := feedRaw(t, cut[:105])
	if f := &p.Conns[0].Flow[DirC2S]; f.BytesWhole() {
		t.Errorf("C->S %d bytes whole, want the count not whole: the RMBE's size is not shown yet", f.Bytes)
	}
}

// linkSum is what a snapshot says of each link: ends (but for their
// initial PSNs), state and history.
func linkSum(s Snapshot) []string {
	var out []string
	for i := range s.Links {
		l := &s.Links[i]
		out = append(out, fmt.Sprintf("link %d lgr %d id %d %v inferred %v client %v %x qpn %#x server %v %x qpn %#x",
			l.ID, l.LGR, l.LinkID, l.State, l.Inferred, l.Client.GID, l.Client.MAC, l.Client.QPN,
			l.Server.GID, l.Server.MAC, l.Server.QPN))
		for _, h := range l.History {
			out = append(out, fmt.Sprintf("  %d %s", h.Frame, h.What))
		}
	}
	return out
}

// TestSnaplenCut96 cuts pingpong.pcap to 96 bytes a frame (an old
// tcpdump's default): the CLC Accept keeps 30 bytes, too few to tie the
// handshake to its link, but every CDC keeps its fields (42 of 44
// bytes), so the data is followed from them, byte for byte as in the
// whole capture, on the handshake's row (its first CDC names the one
// handshake waiting: claimFirst), and the ADD_LINK whose rkey count was
// cut says so rather than counting none. The link's history does not say
// its roles turned at its first frame.
func TestSnaplenCut96(t *testing.T) {
	w, s, _ := wholeAndCut(t, "../samples/pingpong.pcap", 96)
	if len(w.Conns) != 1 || len(s.Conns) != 1 {
		t.Fatalf("%d connections whole, %d cut, want 1 and 1", len(w.Conns), len(s.Conns))
	}
	data := &s.Conns[0]
	if data.Inferred || data.Outcome != OutcomeSMCR || !strings.Contains(ConnDetail(data), "snap length") {
		t.Errorf("connection %v %q, want SMC-R from its handshake, the snap length named", data.Outcome, ConnDetail(data))
	}
	wc := &w.Conns[0]
	for _, d := range []Dir{DirC2S, DirS2C} {
		if data.Flow[d].CDCs != wc.Flow[d].CDCs || data.Flow[d].Bytes != wc.Flow[d].Bytes {
			t.Errorf("%v: %d CDCs %d bytes, the whole capture %d CDCs %d bytes", d,
				data.Flow[d].CDCs, data.Flow[d].Bytes, wc.Flow[d].CDCs, wc.Flow[d].Bytes)
		}
	}
	found := false
	for _, h := range s.Links[0].History {
		if strings.Contains(h.What, "ADD_LINK") && strings.Contains(h.What, "req for link 2") {
			found = strings.Contains(h.What, "(rkeys not captured)")
		}
	}
	if !found {
		t.Errorf("link 1's ADD_LINK does not say its rkeys were not captured: %+v", s.Links[0].History)
	}
	// Its first frame, the server's CONFIRM_LINK request, told the
	// roles: nothing of it was shown the other way round before.
	for _, h := range s.Links[0].History {
		if strings.Contains(h.What, "other way round") {
			t.Errorf("frame %d: %q, at the link's first frame", h.Frame, h.What)
		}
	}
}

// TestSnaplenCutConfirmLinkUID: pingpong.pcap cut to 84 bytes a frame
// keeps 30 of each CONFIRM_LINK's 44 bytes: the sender's QP and the link
// number, not the link UID and the limits after it. The link is set up
// from them as in the whole capture (not joined mid-stream, every WRITE
// counted); what was cut is absent, not 0: the UIDs and the group's IDs
// unknown, the history saying the UID was not captured. Cut to 88 bytes
// the UIDs are kept and max links (byte 34) is not.
func TestSnaplenCutConfirmLinkUID(t *testing.T) {
	for _, snap := range []int{84, 88} {
		t.Run(fmt.Sprint(snap), func(t *testing.T) {
			w, s, _ := wholeAndCut(t, "../samples/pingpong.pcap", snap)
			if len(s.Conns) != 1 || len(s.LinkGroups) != 1 || len(s.Links) == 0 {
				t.Fatalf("%d connections, %d groups, %d links; want 1, 1 and its links", len(s.Conns), len(s.LinkGroups), len(s.Links))
			}
			g, wg, l := &s.LinkGroups[0], &w.LinkGroups[0], &s.Links[0]
			if g.Inferred || l.Inferred || l.LinkID != 1 || l.State != w.Links[0].State {
				t.Errorf("group inferred %v, link %d inferred %v %v; want the whole capture's link 1 %v", g.Inferred, l.LinkID, l.Inferred, l.State, w.Links[0].State)
			}
			for d := range s.Conns[0].Flow {
				if f, wf := &s.Conns[0].Flow[d], &w.Conns[0].Flow[d]; f.Writes != wf.Writes || f.WriteBytes != wf.WriteBytes {
					t.Errorf("%v: %d WRITEs %d bytes, the whole capture %d and %d", Dir(d), f.Writes, f.WriteBytes, wf.Writes, wf.WriteBytes)
				}
				if n := l.RC[d].Untied; n != 0 {
					t.Errorf("%v: %d WRITE packets before the link was known", Dir(d), n)
				}
			}
			if g.MaxLinks != 0 {
				t.Errorf("max links %d, want it absent (0): byte 34 was cut", g.MaxLinks)
			}
			confirms := 0
			for _, h := range l.History {
				if h.Kind == LinkEventConfirmLink {
					confirms++
					if cut := strings.HasSuffix(h.What, "UID not captured"); cut != (snap == 84) {
						t.Errorf("frame %d: %q", h.Frame, h.What)
					}
				}
			}
			if confirms != 2 {
				t.Errorf("%d CONFIRM_LINK events, want 2: %+v", confirms, l.History)
			}
			uids := [4]uint32{l.Client.UID, l.Server.UID, g.ClientLGRID, g.ServerLGRID}
			want := [4]uint32{w.Links[0].Client.UID, w.Links[0].Server.UID, wg.ClientLGRID, wg.ServerLGRID}
			if snap == 84 {
				want = [4]uint32{}
			}
			if uids != want {
				t.Errorf("UIDs and group IDs %x, want %x", uids, want)
			}
		})
	}
}

// TestSnaplenCutLinkSteps: the kernel's captures cut to 88 bytes a
// frame keep 34 bytes of each LLC message: a CONFIRM_LINK's and an
// ADD_LINK's sender QP and link number, not the initial PSN of an
// ADD_LINK or the limits of a CONFIRM_LINK. Every link is then the whole
// capture's (number, state, ends, packets) and every connection's CDCs,
// bytes and WRITEs are too; the initial PSNs come from the links'
// packets.
func TestSnaplenCutLinkSteps(t *testing.T) {
	for _, name := range []string{"pingpong", "long", "multiconn", "multilink", "lossy", "teardown", "slow-reader", "silent-link"} {
		t.Run(name, func(t *testing.T) {
			w, s, _ := wholeAndCut(t, "../samples/"+name+".pcap", 88)
			sum := func(s Snapshot) []string {
				var out []string
				for i := range s.Links {
					l := &s.Links[i]
					out = append(out, fmt.Sprintf("link %d lgr %d id %d %v inferred %v client %v qpn %#x server %v qpn %#x packets %d/%d",
						l.ID, l.LGR, l.LinkID, l.State, l.Inferred, l.Client.GID, l.Client.QPN, l.Server.GID, l.Server.QPN, l.RC[0].Packets, l.RC[1].Packets))
				}
				for i := range s.Conns {
					c := &s.Conns[i]
					out = append(out, fmt.Sprintf("conn %d %v link %d %d/%d CDCs %d/%d bytes %d/%d WRITE bytes", c.ID, c.Outcome, c.Link,
						c.Flow[DirC2S].CDCs, c.Flow[DirS2C].CDCs, c.Flow[DirC2S].Bytes, c.Flow[DirS2C].Bytes,
						c.Flow[DirC2S].WriteBytes, c.Flow[DirS2C].WriteBytes))
				}
				return out
			}
			if got, want := sum(s), sum(w); !slices.Equal(got, want) {
				t.Errorf("cut to 88 bytes:\n%s\nthe whole capture:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// wholeAndCut is the tracker's snapshot of capture path whole and cut
// to snap bytes a frame, and the cut frames.
func wholeAndCut(t *testing.T, path string, snap int) (whole, cut Snapshot, frames []rawFrame) {
	t.Helper()
	all, _ := testutil.ReadFrames(t, path)
	frames, _ = snapFrames(t, path, snap)
	whole, _ = feedRaw(t, all)
	cut, _ = feedRaw(t, frames)
	return whole, cut, frames
}

// snapFrames is the frames of capture name as a snap length of snap bytes
// keeps them (tcpdump -s), and its link type.
func snapFrames(t *testing.T, name string, snap int) ([]rawFrame, layers.LinkType) {
	t.Helper()
	all, lt := testutil.ReadFrames(t, name)
	return withSnapLen(all, snap), lt
}

// TestSnaplenCutAccept: multiconn.pcap cut to 110 bytes a frame keeps 44
// bytes of each Accept: its token, rkey and buffer are not in the capture.
// Such a message is no step of the handshake (nothing is read from bytes
// the capture did not keep): each handshake says the snap length cut it,
// whether its CDCs then placed it (SMC-R) or not.
func TestSnaplenCutAccept(t *testing.T) {
	frames, _ := snapFrames(t, "../samples/multiconn.pcap", 110)
	s, _ := feedRaw(t, frames)
	n := 0
	for i := range s.Conns {
		if c := &s.Conns[i]; !c.Inferred {
			n++
			if c.ServerEP.Valid || !strings.Contains(c.Failure+ConnDetail(c), "snap length") {
				t.Errorf("connection %d: server endpoint %+v, %v %q; want none, cut by the snap length", c.ID, c.ServerEP, c.Outcome, ConnDetail(c))
			}
		}
	}
	if n != 4 {
		t.Errorf("%d TCP connections, want 4", n)
	}
}

// TestSnaplenResends: lossy.pcap cut to 128 bytes a frame. The cut
// trailers hold the ICRCs that tell the capture's copy of a packet from
// a resend of it: without them every repeated PSN is a retransmission,
// as many as the whole capture has, and none is a copy.
func TestSnaplenResends(t *testing.T) {
	ws, cs, _ := wholeAndCut(t, "../samples/lossy.pcap", 128)
	if cs.Stats.CaptureDups != 0 || cs.Stats.Retrans != ws.Stats.Retrans {
		t.Errorf("cut: %d copies, %d retransmissions; the whole capture: %d retransmissions", cs.Stats.CaptureDups, cs.Stats.Retrans, ws.Stats.Retrans)
	}
}

// TestSnaplenReusedRMB: long.pcap cut to 128 bytes a frame. Its second
// connection writes into the RMB the first one gave back: the rkey the
// tracker learned for the first. Each connection counts what it sent (as
// the whole capture says), with no cursor it cannot follow.
func TestSnaplenReusedRMB(t *testing.T) {
	frames, lt := snapFrames(t, "../samples/long.pcap", 128)
	tr := New(Options{Unshared: true})
	eachRaw(t, "s128", lt, frames, func(f *capture.Frame) { tr.Feed(f) })
	tr.EndCapture(time.Time{})
	s := tr.Snapshot()
	var got []string
	for i := range s.Conns {
		c := &s.Conns[i]
		got = append(got, fmt.Sprintf("%d/%d", c.Flow[DirC2S].WriteBytes, c.Flow[DirS2C].WriteBytes))
	}
	if strings.Join(got, " ") != "192000/192000 1048580/4" {
		t.Errorf("the connections wrote %v, want 192000/192000 and 1048580/4 (the whole capture's)", got)
	}
	for _, f := range s.Findings() {
		if f.ID == expert.CursorBackwards {
			t.Errorf("finding %s: %s", f.ID, f.Detail)
		}
	}
}

// TestMergedCaptures: a capture merged with itself 30 us later, as two
// hosts' captures of one link merged by time (mergecap) with their
// clocks' skew: every packet is there twice, hundreds of frames
// apart. On multiconn.pcap (no loss) each copy is the capture's, not a
// retransmission, and what the tracker follows is the single capture's.
// On lossy.pcap a copy that comes after a NAK is taken for a
// retransmission, the safe side: never fewer than the capture alone has.
func TestMergedCaptures(t *testing.T) {
	merge := func(name string) (one, merged []rawFrame, lt layers.LinkType) {
		one, lt = testutil.ReadFrames(t, name)
		merged = make([]rawFrame, 0, 2*len(one))
		for _, f := range one {
			g := f
			g.CI.Timestamp = g.CI.Timestamp.Add(30 * time.Microsecond)
			merged = append(merged, f, g)
		}
		slices.SortStableFunc(merged, func(a, b rawFrame) int { return a.CI.Timestamp.Compare(b.CI.Timestamp) })
		return one, merged, lt
	}
	feed := func(lt layers.LinkType, frames []rawFrame) Snapshot {
		tr := New(Options{Unshared: true})
		eachRaw(t, "merged", lt, frames, func(f *capture.Frame) { tr.Feed(f) })
		tr.EndCapture(time.Time{})
		return tr.Snapshot()
	}
	one, merged, lt := merge("../samples/multiconn.pcap")
	base, s := feed(lt, one), feed(lt, merged)
	if tcpAndRoCE := base.Stats.Frames - base.Stats.Other; s.Stats.CaptureDups != tcpAndRoCE || s.Stats.Retrans != base.Stats.Retrans {
		t.Errorf("%d copies of %d TCP and RoCE packets, %d retransmissions (the capture alone: %d)", s.Stats.CaptureDups, tcpAndRoCE, s.Stats.Retrans, base.Stats.Retrans)
	}
	bytes := func(s Snapshot) (out []string) {
		for _, c := range s.Conns {
			out = append(out, fmt.Sprintf("%d:%d/%d", c.ID, c.Flow[DirC2S].Bytes, c.Flow[DirS2C].Bytes))
		}
		return out
	}
	if got, want := bytes(s), bytes(base); !slices.Equal(got, want) {
		t.Errorf("connections %v, the capture alone %v", got, want)
	}
	one, merged, lt = merge("../samples/lossy.pcap")
	base, s = feed(lt, one), feed(lt, merged)
	if s.Stats.CaptureDups == 0 || s.Stats.CaptureDups >= base.Stats.RoCE || s.Stats.Retrans < base.Stats.Retrans {
		t.Errorf("lossy: %d copies of %d RoCE packets, %d retransmissions (the capture alone: %d): want copies, those after a NAK retransmissions",
			s.Stats.CaptureDups, base.Stats.RoCE, s.Stats.Retrans, base.Stats.Retrans)
	}
}

// TestReusedQueuePairs: pingpong.pcap twice, the second a second after
// the first's DELETE_LINK, as a host makes a new link group whose queue
// pairs got the numbers of the deleted ones (the same 4-tuple, QPNs and
// addresses, its PSNs behind the old link's). The CLC Confirm that
// announces the new link's client end is missed by the capture, or
// damaged in it: the old link's wire keys then still led, and every
// request of the new link was a retransmission of the deleted one. The
// new link's CONFIRM_LINK is its own: two link groups, the second
// connection's bytes whole, no retransmission but the teardown's.
func TestReusedQueuePairs(t *testing.T) {
	one, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
	shift := one[len(one)-1].CI.Timestamp.Sub(one[0].CI.Timestamp) + time.Second
	twice := slices.Clone(one)
	for _, f := range one {
		f.CI.Timestamp = f.CI.Timestamp.Add(shift)
		twice = append(twice, f)
	}
	confirm := len(one) + firstCLC(t, lt, one, decode.CLCTypeConfirm)
	feed := func(frames []rawFrame) Snapshot {
		tr := New(Options{Unshared: true})
		eachRaw(t, "reused", lt, frames, func(f *capture.Frame) { tr.Feed(f) })
		tr.EndCapture(time.Time{})
		return tr.Snapshot()
	}
	base, single := feed(twice), feed(one)
	if len(base.LinkGroups) != 2 || len(base.Conns) != 2 || base.Stats.Retrans != 2*single.Stats.Retrans {
		t.Fatalf("whole: %d link groups, %d connections, %d retransmissions: want 2, 2, %d (the teardown's, twice)",
			len(base.LinkGroups), len(base.Conns), base.Stats.Retrans, 2*single.Stats.Retrans)
	}
	damaged := slices.Clone(twice)
	d := bytes.Clone(damaged[confirm].Data)
	for i := len(d) - 8; i < len(d); i++ {
		d[i] = 0xAA
	}
	damaged[confirm].Data = d
	for name, frames := range map[string][]rawFrame{
		"missed":  slices.Delete(slices.Clone(twice), confirm, confirm+1),
		"damaged": damaged,
	} {
		s := feed(frames)
		if len(s.LinkGroups) != 2 || s.Stats.Retrans != base.Stats.Retrans {
			t.Errorf("%s Confirm: %d link groups, %d retransmissions: want 2, %d", name, len(s.LinkGroups), s.Stats.Retrans, base.Stats.Retrans)
		}
		if len(s.Conns) != 2 {
			t.Fatalf("%s Confirm: %d connections, want 2", name, len(s.Conns))
		}
		for dir := range 2 {
			if got, want := s.Conns[1].Flow[dir].Bytes, base.Conns[1].Flow[dir].Bytes; got != want {
				t.Errorf("%s Confirm: the second connection's %v bytes %d, want %d", name, Dir(dir), got, want)
			}
		}
	}
}

// TestSnaplenCutDamaged: pingpong.pcap cut to 96 bytes a frame (no ICRC
// kept) with a byte of cut RoCE requests damaged where the ICRC alone
// would show it. An IPv4 address (its header checksum failing): judged
// as a packet whose ICRC matches and whose IPv4 header checksum fails,
// but for its addresses, which no ICRC vouches for: its link's own one
// field away (damagedQP), held as dropped till the responder's ACK says
// it took it (roce.capture.damaged). A DestQP: the link direction whose
// addresses and next PSN it carries (damagedQP). A CDC's token: the
// connection whose next sequence number it carries (cutTokenConn). None
// makes a link, link group or connection of its own; the CDCs and bytes
// are the cut capture's but for those the held copies took.
func TestSnaplenCutDamaged(t *testing.T) {
	_, base, frames := wholeAndCut(t, "../samples/pingpong.pcap", 96)
	for _, v := range []struct {
		what     string
		off      func(n int) int
		cdcsOnly bool
		exact    bool
	}{
		{"address", func(n int) int { return 14 + 12 + n%8 }, false, true},
		{"DestQP", func(n int) int { return 14 + 20 + 8 + 5 + n%3 }, true, true},
		{"token", func(n int) int { return 14 + 20 + 8 + 12 + 4 + n%4 }, true, true},
	} {
		fs := slices.Clone(frames)
		n := 0
		for i := 100; i < len(fs) && n < 40; i += 7 {
			d := fs[i].Data
			if len(d) != 96 || d[23] != 17 || binary.BigEndian.Uint16(d[14+20+2:]) != 4791 || v.cdcsOnly && (d[14+20+8] != 4 || d[54] != 0xfe) {
				continue
			}
			fs[i].Data = bytes.Clone(d)
			fs[i].Data[v.off(n)] ^= 0x24
			n++
		}
		if n < 10 {
			t.Fatalf("%s: %d frames damaged", v.what, n)
		}
		s, found := feedRaw(t, fs)
		if len(s.Conns) != len(base.Conns) || len(s.Links) != len(base.Links) || len(s.LinkGroups) != len(base.LinkGroups) {
			t.Errorf("%s damaged in %d frames: %d connections, %d links, %d link groups; the cut capture %d, %d, %d", v.what, n,
				len(s.Conns), len(s.Links), len(s.LinkGroups), len(base.Conns), len(base.Links), len(base.LinkGroups))
		}
		if !slices.Contains(found, expert.CaptureCopyDamaged.String()) {
			t.Errorf("%s: findings %v, want %v", v.what, found, expert.CaptureCopyDamaged)
		}
		if a, b := flowTotalsOf(s), flowTotalsOf(base); v.exact && a != b {
			t.Errorf("%s: CDCs and bytes %v, the cut capture's %v", v.what, a, b)
		}
	}
}

// TestSnaplenCutHeaders: captures cut where a CLC message keeps its
// header (8 bytes) but not the fields a whole step takes (decode.CLC.
// StepCaptured): the header still says what the connection did (cutStep).
// The SMC-D loopback capture (cut to 80 and 96 bytes, ending before its
// connections close) is SMC-D, first contact or reused as the whole
// capture says, by the headers of its Accept and Confirm; the SMC-R
// captures say first contact or reused as whole; a Decline whose code
// was cut is a fallback by that side at that stage, its code absent (no
// smc.conn.fallback.reason field, "-" in smc,decline). A link group a cut
// first contact made reads as the whole capture's (adoptCut): not joined
// mid-stream, its version and peers from the cut headers.
func TestSnaplenCutHeaders(t *testing.T) {
	for _, tc := range []struct {
		path string
		snap int
	}{
		{"../samples/smcd-loopback.pcapng", 80}, {"../samples/smcd-loopback.pcapng", 96},
		{"../samples/pingpong.pcap", 96}, {"../samples/multiconn.pcap", 96}, {"../samples/multiconn.pcap", 110},
		{"../samples/long.pcap", 110}, {"../samples/decline-nordma.pcap", 80}, {"../samples/decline-ueid.pcap", 80},
		{"../samples/ipv6.pcap", 96},
	} {
		t.Run(fmt.Sprintf("%s/%d", path.Base(tc.path), tc.snap), func(t *testing.T) {
			w, s, frames := wholeAndCut(t, tc.path, tc.snap)
			if len(s.Conns) != len(w.Conns) {
				t.Fatalf("%d connections, the whole capture %d", len(s.Conns), len(w.Conns))
			}
			for i := range s.Conns {
				c, wc := &s.Conns[i], &w.Conns[i]
				d := ConnDetail(c)
				if c.Outcome != wc.Outcome || c.FirstContact != wc.FirstContact || !strings.Contains(d, "snap length") {
					t.Errorf("connection %d: %v first contact %v %q; the whole capture: %v first contact %v %q",
						c.ID, c.Outcome, c.FirstContact, d, wc.Outcome, wc.FirstContact, ConnDetail(wc))
				}
				if c.ServerEP.Valid || c.ClientEP.Valid {
					t.Errorf("connection %d: an endpoint from a cut message: %+v %+v", c.ID, c.ServerEP, c.ClientEP)
				}
				if c.Outcome != OutcomeFallback {
					continue
				}
				if fb, wfb := c.Fallback, wc.Fallback; fb.Cause != CauseDeclineCut || fb.Code != 0 || fb.By != wfb.By || fb.Stage != wfb.Stage {
					t.Errorf("connection %d: fallback %+v; the whole capture's %+v", c.ID, fb, wfb)
				}
			}
			// A group the cut first contact made is the whole capture's:
			// not joined mid-stream, its version and peers (adoptCut).
			if len(s.LinkGroups) != len(w.LinkGroups) {
				t.Errorf("%d link groups, the whole capture %d", len(s.LinkGroups), len(w.LinkGroups))
			} else {
				for i := range s.LinkGroups {
					g, wg := &s.LinkGroups[i], &w.LinkGroups[i]
					if g.Inferred != wg.Inferred || g.Version != wg.Version || g.ServerPeerID != wg.ServerPeerID || g.ClientPeerID != wg.ClientPeerID {
						t.Errorf("link group %d: inferred %v v%d peers %x %x; the whole capture's: %v v%d %x %x", g.ID,
							g.Inferred, g.Version, g.ServerPeerID, g.ClientPeerID, wg.Inferred, wg.Version, wg.ServerPeerID, wg.ClientPeerID)
					}
				}
			}
			tr := New(Options{Unshared: true})
			_, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
			eachRaw(t, "fields", lt, frames, func(f *capture.Frame) {
				tr.Feed(f)
				r := f.Fields()
				tr.AppendFields(f, r)
				for i, id := range r.IDs {
					if id == fConnFallback && w.Conns[0].Outcome == OutcomeFallback {
						t.Errorf("frame %d: %s %s, want it absent", f.Number, decode.Def(id).Name, r.Vals[i].Format(decode.Def(id).Kind))
					}
				}
			})
		})
	}
}

// TestCaptureReorderedTCP: the client's Confirm, which acknowledges the
// server's Accept, shown 50 us before that Accept (a capture point that
// takes the two directions apart): the Accept's bytes are the capture's
// late copy, not bytes it never showed, and the handshake is followed.
func TestCaptureReorderedTCP(t *testing.T) {
	frames, _ := testutil.ReadFrames(t, "../samples/pingpong.pcap")
	accept, confirm := frames[6], frames[7] // frames 7 and 8
	confirm.CI.Timestamp = accept.CI.Timestamp
	accept.CI.Timestamp = accept.CI.Timestamp.Add(50 * time.Microsecond)
	frames[6], frames[7] = confirm, accept
	s, _ := feedRaw(t, frames)
	if len(s.Conns) != 1 {
		t.Fatalf("%d connections, want 1", len(s.Conns))
	}
	c := &s.Conns[0]
	if c.Outcome != OutcomeSMCR || c.Flow[DirS2C].TCPNotCaptured != 0 || c.Flow[DirS2C].TCPReordered != 160 {
		t.Errorf("outcome %v, S->C not captured %d, reordered %d; want SMC-R, 0, 160",
			c.Outcome, c.Flow[DirS2C].TCPNotCaptured, c.Flow[DirS2C].TCPReordered)
	}
	// Placed on its link by the late Accept, as by the Confirm: no half
	// built from the CDCs and merged later.
	all, _ := testutil.ReadFrames(t, "../samples/pingpong.pcap")
	w, _ := feedRaw(t, all)
	wc := &w.Conns[0]
	if c.Link != wc.Link || c.LGR != wc.LGR || len(c.Merged) != 0 || c.Frames != wc.Frames ||
		c.Flow[DirC2S].Bytes != wc.Flow[DirC2S].Bytes || c.Flow[DirS2C].Bytes != wc.Flow[DirS2C].Bytes {
		t.Errorf("link %d lgr %d merged %v frames %d bytes %d/%d; the whole capture: link %d lgr %d frames %d bytes %d/%d",
			c.Link, c.LGR, c.Merged, c.Frames, c.Flow[DirC2S].Bytes, c.Flow[DirS2C].Bytes,
			wc.Link, wc.LGR, wc.Frames, wc.Flow[DirC2S].Bytes, wc.Flow[DirS2C].Bytes)
	}
}

// TestTCPCopiesLater: every TCP segment of pingpong shown again 20 ms
// later (two hosts' captures merged, their clocks apart; a TCP
// retransmission looks the same): a SYN shown again after the bytes that
// followed it moves nothing back (no bytes "not captured"), and a CLC
// message shown again (the CLC reassembly had finished the handshake's
// stream) takes no step: the handshake's times are the first copies'.
func TestTCPCopiesLater(t *testing.T) {
	frames, _ := testutil.ReadFrames(t, "../samples/pingpong.pcap")
	var all []testutil.Packet
	for _, f := range frames {
		all = append(all, f)
		if len(f.Data) > 23 && f.Data[23] == 6 { // IPv4 protocol: TCP
			c := f
			c.CI.Timestamp = c.CI.Timestamp.Add(20 * time.Millisecond)
			all = append(all, c)
		}
	}
	slices.SortStableFunc(all, func(a, b testutil.Packet) int { return a.CI.Timestamp.Compare(b.CI.Timestamp) })
	s, _ := feedRaw(t, all)
	w, _ := feedRaw(t, frames)
	if len(s.Conns) != 1 || len(w.Conns) != 1 {
		t.Fatalf("%d connections, want 1", len(s.Conns))
	}
	c, wc := &s.Conns[0], &w.Conns[0]
	for d := range c.Flow {
		if n := c.Flow[d].TCPNotCaptured; n != 0 {
			t.Errorf("%v: %d bytes not captured", Dir(d), n)
		}
	}
	if c.Outcome != wc.Outcome || !slices.Equal(c.CLCTypes, wc.CLCTypes) || c.TProposal != wc.TProposal ||
		c.TAccept != wc.TAccept || c.TConfirm != wc.TConfirm || c.Flow[DirC2S].Bytes != wc.Flow[DirC2S].Bytes {
		t.Errorf("outcome %v CLC %v times %v %v %v bytes %d; the capture without copies: %v %v %v %v %v %d",
			c.Outcome, c.CLCTypes, c.TProposal, c.TAccept, c.TConfirm, c.Flow[DirC2S].Bytes,
			wc.Outcome, wc.CLCTypes, wc.TProposal, wc.TAccept, wc.TConfirm, wc.Flow[DirC2S].Bytes)
	}
}

// TestTunnels: a capture taken at a collector that a switch's ERSPAN
// session or a cloud's VXLAN/Geneve traffic mirror feeds is the capture
// it carries: the same connections, link groups and links as the capture
// taken on the hosts; a mirror that truncated the frames (ERSPAN's T bit)
// is a capture cut by that snap length.
func TestTunnels(t *testing.T) {
	sum := func(s Snapshot) []string {
		out := linkSum(s)
		for i := range s.Conns {
			c := &s.Conns[i]
			out = append(out, fmt.Sprintf("%d %v v%d lgr %d link %d clc %v inferred %v %d/%d CDCs %d/%d bytes",
				c.ID, c.Outcome, c.Version, c.LGR, c.Link, c.CLCTypes, c.Inferred,
				c.Flow[DirC2S].CDCs, c.Flow[DirS2C].CDCs, c.Flow[DirC2S].Bytes, c.Flow[DirS2C].Bytes))
		}
		return out
	}
	for _, name := range []string{"pingpong", "multiconn"} {
		path := "../samples/" + name + ".pcap"
		all, _ := testutil.ReadFrames(t, path)
		w, _ := feedRaw(t, all)
		cut, _ := snapFrames(t, path, 128)
		wc, _ := feedRaw(t, cut)
		for _, kind := range []string{"vxlan", "geneve", "erspan1", "erspan2", "erspan3", "gre"} {
			for _, truncated := range []bool{false, true} {
				if truncated && kind != "erspan2" && kind != "erspan3" {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/truncated=%v", name, kind, truncated), func(t *testing.T) {
					frames := slices.Clone(all)
					for i := range frames {
						d, cut := frames[i].Data, false
						if truncated && len(d) > 128 {
							d, cut = d[:128], true
						}
						frames[i].Data = mutate.Carry(kind, d, uint32(i), cut)
						frames[i].CI.CaptureLength = len(frames[i].Data)
						frames[i].CI.Length = len(frames[i].Data)
					}
					s, found := feedRaw(t, frames)
					want := w
					if truncated {
						want = wc
					}
					if got, want := sum(s), sum(want); !slices.Equal(got, want) {
						t.Errorf("carried:\n%s\ncaptured on the hosts:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
					}
					if slices.Contains(found, expert.Malformed.String()) || slices.Contains(found, expert.MirrorLost.String()) {
						t.Errorf("findings %v", found)
					}
					// What the mirror cut is said as such: the file
					// holds every frame whole.
					cutBy := findingDetail(&s, expert.SnapCut)
					if truncated != strings.Contains(cutBy, "ERSPAN T bit") {
						t.Errorf("truncated %v, smc.capture.snap_cut %q", truncated, cutBy)
					}
				})
			}
		}
	}
}

// TestOneDirection: multiconn.pcap with one host's frames only (a mirror
// of one direction of a port, tcpdump -Q out): no finding says the other
// side failed to answer or to close, and the other side's counts are
// unknown, not zero.
func TestOneDirection(t *testing.T) {
	for _, host := range []byte{1, 2} {
		t.Run(fmt.Sprintf("10.10.0.%d", host), func(t *testing.T) {
			frames := sentBy(t, "../samples/multiconn.pcap", host)
			s, found := feedRaw(t, frames)
			for _, id := range []expert.ID{expert.LLCUnanswered, expert.ClosedWithoutClose, expert.EndedPending, expert.AddedUnconfirmed,
				expert.HandshakeFailed, expert.FirstLinkUnconfirmed} {
				if slices.Contains(found, id.String()) {
					t.Errorf("finding %v (all: %v)", id, found)
				}
			}
			shown := 0
			for i := range s.Conns {
				c := &s.Conns[i]
				for d := range c.Flow {
					f := &c.Flow[d]
					if f.CDCs > 0 {
						shown++
					}
					if f.NotShown && f.CDCs > 0 {
						t.Errorf("connection %d %v: not shown, yet %d CDCs", c.ID, Dir(d), f.CDCs)
					}
				}
				if c.Flow[0].CDCs+c.Flow[1].CDCs == 0 && !c.LinkNotCaptured && !c.Flow[0].NotShown && !c.Flow[1].NotShown {
					t.Errorf("connection %d: no CDC, yet its counts are shown as zeros", c.ID)
				}
			}
			if shown == 0 {
				t.Error("no CDC followed: the test proves nothing")
			}
		})
	}
}

// TestOneDirectionJoined: in a capture of one host's frames, each
// connection's CDCs carry a token only the other side's CLC message
// announced, yet each connection's first CDC (sequence 1) comes after its
// handshake and before the next connection's: they are the handshake's
// connection's, one row each, with that side's counts of the whole
// capture (cursors counted from 0, the RMBE size learned at the first
// CDC when the cursor wrapped before it), and no consumer stall is judged
// against a consumer cursor the capture cannot show.
func TestOneDirectionJoined(t *testing.T) {
	for _, name := range []string{"multiconn", "long", "pingpong"} {
		whole, _ := feedRaw(t, readRawFrames(t, "../samples/"+name+".pcap"))
		for _, host := range []byte{1, 2} {
			t.Run(fmt.Sprintf("%s/10.10.0.%d", name, host), func(t *testing.T) {
				s, found := feedRaw(t, sentBy(t, "../samples/"+name+".pcap", host))
				if slices.Contains(found, expert.ConsumerStall.String()) {
					t.Errorf("a consumer stall, with no consumer cursor in the capture: %v", found)
				}
				d := DirC2S
				if host == 1 {
					d = DirS2C
				}
				if len(s.Conns) != len(whole.Conns) {
					t.Errorf("%d connections, the whole capture %d", len(s.Conns), len(whole.Conns))
				}
				for i := range s.Conns {
					c := &s.Conns[i]
					if c.Inferred {
						t.Errorf("connection %d joined from its CDCs alone", c.ID)
						continue
					}
					var w *Conn
					for j := range whole.Conns {
						if whole.Conns[j].Client == c.Client {
							w = &whole.Conns[j]
						}
					}
					if w == nil {
						t.Fatalf("connection %d (%v) not in the whole capture", c.ID, c.Client)
					}
					got, want := &c.Flow[d], &w.Flow[d]
					if got.CDCs != want.CDCs || got.Bytes != want.Bytes || got.WriteBytes != want.WriteBytes {
						t.Errorf("connection %d %v: %d CDCs, %d bytes, %d WRITE bytes; the whole capture %d, %d, %d",
							c.ID, d, got.CDCs, got.Bytes, got.WriteBytes, want.CDCs, want.Bytes, want.WriteBytes)
					}
				}
			})
		}
	}
}

// TestOneDirectionTogether: two connections whose handshakes both end
// before either sends its first CDC (the second one's client frames moved
// before the first one's first CDC): nothing in a capture of the client's
// side tells whose that CDC is, so neither connection is given CDCs that
// may be the other's. Once two first CDCs went to joined connections, both
// have had theirs: the later connections, one at a time, are told apart
// again (their TCP FINs, which would also rule the first two out, come at
// the capture's end).
func TestOneDirectionTogether(t *testing.T) {
	frames := sentBy(t, "../samples/multiconn.pcap", 2)
	port := func(f rawFrame) uint16 {
		if f.Data[23] != 6 {
			return 0
		}
		return binary.BigEndian.Uint16(f.Data[34:])
	}
	var ports []uint16
	for _, f := range frames {
		if p := port(f); p != 0 && !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	if len(ports) < 3 {
		t.Fatalf("%d connections: the test proves nothing", len(ports))
	}
	first := clientCDCs(t, frames)[0]
	// The second connection's frames up to its Confirm (its second
	// segment with payload).
	var moved, rest []rawFrame
	payloads := 0
	for i, f := range frames {
		if i > first && port(f) == ports[1] && payloads < 2 {
			if binary.BigEndian.Uint16(f.Data[16:]) > uint16(20+(f.Data[46]>>4)*4) {
				payloads++
			}
			g := f
			g.CI.Timestamp = frames[first-1].CI.Timestamp
			moved = append(moved, g)
			continue
		}
		rest = append(rest, f)
	}
	if payloads != 2 {
		t.Fatalf("the second connection's Confirm not found (%d segments with payload)", payloads)
	}
	together := slices.Concat(rest[:first], moved, rest[first:])
	s, _ := feedRaw(t, together)
	inferred := 0
	for i := range s.Conns {
		c := &s.Conns[i]
		if c.Inferred {
			inferred++
			continue
		}
		p := c.Client.Port()
		if cdcs := c.Flow[DirC2S].CDCs; (p == ports[0] || p == ports[1]) != (cdcs == 0) {
			t.Errorf("connection %d (port %d): %d CDCs", c.ID, p, cdcs)
		}
	}
	if inferred != 2 {
		t.Errorf("%d connections joined from their CDCs alone, want 2", inferred)
	}
}

// TestOneDirectionDropped: a capture of one direction that also dropped a
// CDC's frame shows no loss the network made: the responder's ACKs are not
// in it, and the requester never sends the missing PSN again, so the run
// out of sequence that follows is the capture's miss (when it outgrows its
// window, or when the capture ends first). Every other CDC is followed: no
// sequence gap, one CDC fewer than the same cut without the drop.
func TestOneDirectionDropped(t *testing.T) {
	frames := sentBy(t, "../samples/multiconn.pcap", 2)
	cdcs := clientCDCs(t, frames)
	if len(cdcs) < 100 {
		t.Fatalf("%d client CDCs: the test proves nothing", len(cdcs))
	}
	total := func(s Snapshot) (n int) {
		for i := range s.Conns {
			n += s.Conns[i].Flow[DirC2S].CDCs
		}
		return n
	}
	for i := 1; i < 10; i++ {
		drop := cdcs[len(cdcs)*i/10]
		for _, cut := range []int{drop + 3, drop + 40, len(frames)} {
			t.Run(fmt.Sprintf("drop %d cut %d", drop+1, cut), func(t *testing.T) {
				want, _ := feedRaw(t, frames[:cut])
				var damaged []rawFrame
				damaged = append(damaged, frames[:drop]...)
				damaged = append(damaged, frames[drop+1:cut]...)
				s, found := feedRaw(t, damaged)
				if slices.Contains(found, expert.SeqGap.String()) || slices.Contains(found, expert.PSNGap.String()) {
					t.Errorf("a loss the network made: %v", found)
				}
				// Three frames on, the client may have sent no request yet
				// that shows its PSN jump.
				if cut > drop+3 && !slices.Contains(found, expert.NotCaptured.String()) {
					t.Errorf("no %v: %v", expert.NotCaptured, found)
				}
				if got, w := total(s), total(want)-1; got != w {
					t.Errorf("%d client CDCs followed, want %d", got, w)
				}
			})
		}
	}
}

// TestOneDirectionRounds: a capture of the client's side of one link group
// after another on the same queue pair numbers (its QPs destroyed and made
// again, each group's PSNs the same, as bench/mkbig -distinct repeats the
// pingpong capture). The client's DELETE_LINK of each group is in it, the
// server's end is not; each first contact's Confirm names the client's QP
// again, so the old link is gone: each round is a group of its own, not
// the first group's link with every later round's packets "retransmitted".
func TestOneDirectionRounds(t *testing.T) {
	one := sentBy(t, "../samples/pingpong.pcap", 2)
	const rounds = 3
	var frames []rawFrame
	span := one[len(one)-1].CI.Timestamp.Sub(one[0].CI.Timestamp) + time.Second
	for r := range rounds {
		for _, f := range one {
			g := f
			g.Data = bytes.Clone(f.Data)
			g.CI.Timestamp = f.CI.Timestamp.Add(time.Duration(r) * span)
			if g.Data[23] == 6 { // TCP: a client port of the round's own
				p := binary.BigEndian.Uint16(g.Data[34:])
				binary.BigEndian.PutUint16(g.Data[34:], p+uint16(r))
			}
			frames = append(frames, g)
		}
	}
	s, found := feedRaw(t, frames)
	if slices.Contains(found, expert.RCRetransmission.String()) || slices.Contains(found, expert.LLCRetransmitted.String()) {
		t.Errorf("rounds taken for retransmissions: %v", found)
	}
	if len(s.LinkGroups) < rounds {
		t.Errorf("%d link groups, want one a round (%d)", len(s.LinkGroups), rounds)
	}
}

// sentBy is the frames of the lab capture path that 10.10.0.host sent
// (IPv4 over Ethernet): a capture of that host's egress.
func sentBy(t *testing.T, path string, host byte) []rawFrame {
	t.Helper()
	all, _ := testutil.ReadFrames(t, path)
	var out []rawFrame
	for _, f := range all {
		if len(f.Data) >= 38 && binary.BigEndian.Uint16(f.Data[12:]) == 0x0800 && f.Data[29] == host {
			out = append(out, f)
		}
	}
	return out
}

// TestSnapCutSYN: a capture of the handshake alone (a host's, its RoCE
// offloaded) taken with a snap length that cuts the SYNs' options shows
// no SMC connection, and says why: smc.capture.snap_cut names the SYN
// whose options, the SMC option perhaps among them, it cut. The whole
// capture has no such finding.
func TestSnapCutSYN(t *testing.T) {
	const name = "../testdata/reference/decline-nordma.pcap"
	whole, _ := testutil.ReadFrames(t, name)
	if _, found := feedRaw(t, whole); slices.Contains(found, expert.SnapCut.String()) {
		t.Errorf("the whole capture: %v", found)
	}
	cut, _ := snapFrames(t, name, 64)
	s, _ := feedRaw(t, cut)
	detail := findingDetail(&s, expert.SnapCut)
	if !strings.Contains(detail, "a SYN's TCP options") {
		t.Errorf("cut to 64 bytes: smc.capture.snap_cut %q, want the SYN's options named", detail)
	}
}

// findingDetail is the detail of finding id in s ("" when s has none).
func findingDetail(s *Snapshot, id expert.ID) string {
	for _, f := range s.Findings() {
		if f.ID == id {
			return f.Detail
		}
	}
	return ""
}

// TestSnapCut128: 128 bytes keep every LLC step and CDC of IPv4 RoCEv2
// (docs/smcdump.md says so): of pingpong.pcap cut so, only the CLC
// messages (frames 8 to 12, before the first RoCE frame, 14) are frames
// smc.capture.snap_cut counts.
func TestSnapCut128(t *testing.T) {
	cut, _ := snapFrames(t, "../testdata/reference/pingpong.pcap", 128)
	s, _ := feedRaw(t, cut)
	for _, f := range s.Findings() {
		if f.ID == expert.SnapCut && (f.First < 8 || f.Last > 12) {
			t.Errorf("smc.capture.snap_cut on frames %d..%d (%d), want only CLC frames 8..12: %s", f.First, f.Last, f.Count, f.Detail)
		}
	}
	if !strings.Contains(findingDetail(&s, expert.SnapCut), "CLC bytes") {
		t.Errorf("no CLC message named as cut: %q", findingDetail(&s, expert.SnapCut))
	}
}

// TestSYNACKOptionDamaged: pingpong.pcap whose SYN-ACK's SMC option magic
// has a byte damaged in the capture. The client sent its Proposal after
// it, which a client whose SYN-ACK had no option never does: the capture's
// SYN-ACK is not the one the client got, and the connection is the whole
// capture's SMC-R one, no fallback.
func TestSYNACKOptionDamaged(t *testing.T) {
	frames := readRawFrames(t, crafted.Pingpong(t))
	_, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
	synack := -1
	eachRaw(t, "synack", lt, frames, func(f *capture.Frame) {
		if f.TCP != nil && f.TCP.SYN && f.TCP.ACK && synack < 0 {
			synack = f.Number - 1
		}
	})
	if synack < 0 {
		t.Fatal("no SYN-ACK in pingpong.pcap")
	}
	d := bytes.Clone(frames[synack].Data)
	i := bytes.Index(d, []byte{0xE2, 0xD4, 0xC3, 0xD9})
	if i < 0 {
		t.Fatal("no SMC option in pingpong.pcap's SYN-ACK")
	}
	d[i+1] ^= 0x10
	frames[synack].Data = d
	s, found := feedRaw(t, frames)
	if len(s.Conns) != 1 {
		t.Fatalf("%d connections, want 1", len(s.Conns))
	}
	if s.Conns[0].Outcome != OutcomeSMCR || slices.Contains(found, expert.Fallback.String()) {
		t.Errorf("outcome %v, findings %v: want SMC-R, no fallback", s.Conns[0].Outcome, found)
	}
}

// TestSYNACKNotCaptured: fallback-nosmc.pcap (the client's SYN with the
// SMC option, the server's SYN-ACK without, then the application's bytes)
// whose SYN-ACK is missing, overwritten whole, or whose server direction
// is missing altogether. The client's first bytes are no Proposal, so the
// connection fell back; why, the SYN-ACK held: a fallback whose cause is
// not in the capture, told by the server's next segment or the capture's
// end, not a handshake pending to the end.
func TestSYNACKNotCaptured(t *testing.T) {
	all := readRawFrames(t, "../samples/fallback-nosmc.pcap")
	_, lt := testutil.ReadFrames(t, "../samples/fallback-nosmc.pcap")
	synack, server := -1, map[int]bool{}
	eachRaw(t, "synack", lt, all, func(f *capture.Frame) {
		if f.TCP == nil {
			return
		}
		if f.TCP.SYN && f.TCP.ACK && synack < 0 {
			synack = f.Number - 1
		}
		server[f.Number-1] = f.TCP.SrcPort == 5000
	})
	if synack < 0 {
		t.Fatal("no SYN-ACK in fallback-nosmc.pcap")
	}
	whole, _ := feedRaw(t, all)
	if c := whole.Conns[0]; c.Outcome != OutcomeFallback || c.Fallback.Cause != CauseNoOptionSYNACK {
		t.Fatalf("whole capture: %v, %v; want fallback for the SYN-ACK's missing option", c.Outcome, c.Fallback.Cause)
	}
	smashed := slices.Clone(all)
	d := bytes.Clone(all[synack].Data)
	for i := 14; i < len(d); i++ {
		d[i] = 0xAA
	}
	smashed[synack].Data = d
	var clientOnly []rawFrame
	for i, f := range all {
		if !server[i] {
			clientOnly = append(clientOnly, f)
		}
	}
	firstData := slices.Delete(slices.Clone(all), synack, synack+1)
	// The client's first bytes, now at synack, with their IPv4 header's
	// checksum damaged: bytes that say nothing, the next ones do.
	firstData[synack].Data = bytes.Clone(firstData[synack].Data)
	firstData[synack].Data[14+10] ^= 0x55
	for _, tc := range []struct {
		name   string
		frames []rawFrame
	}{
		{"missing", slices.Delete(slices.Clone(all), synack, synack+1)},
		{"missing, the first bytes damaged", firstData},
		{"overwritten", smashed},
		{"client's direction only", clientOnly},
	} {
		s, found := feedRaw(t, tc.frames)
		if len(s.Conns) != 1 {
			t.Errorf("%s: %d connections, want 1", tc.name, len(s.Conns))
			continue
		}
		c := s.Conns[0]
		if c.Outcome != OutcomeFallback || c.Fallback.Cause != CauseUncaptured || !slices.Contains(found, expert.Fallback.String()) {
			t.Errorf("%s: %v, %v, findings %v; want a fallback whose cause is not in the capture", tc.name, c.Outcome, c.Fallback.Cause, found)
		}
		if got, want := c.Flow[DirC2S].TCPBytes, whole.Conns[0].Flow[DirC2S].TCPBytes; got != want {
			t.Errorf("%s: client TCP bytes %d, want %d", tc.name, got, want)
		}
	}
}

// TestClientSYNACKDamaged: pingpong.pcap whose client Confirm segment has
// the SYN flag set (its flags damaged in the capture): a SYN-ACK from the
// client whose SYN the capture showed is no SYN-ACK (no TCP stack sends
// one), and its missing SMC option no fallback.
func TestClientSYNACKDamaged(t *testing.T) {
	frames := readRawFrames(t, crafted.Pingpong(t))
	_, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
	confirm := firstCLC(t, lt, frames, decode.CLCTypeConfirm)
	d := bytes.Clone(frames[confirm].Data)
	if d[12] != 0x08 || d[13] != 0 || d[14] != 0x45 {
		t.Fatal("the Confirm is not in a plain IPv4 frame")
	}
	d[14+20+13] |= 0x02 // SYN
	frames[confirm].Data = d
	s, found := feedRaw(t, frames)
	if slices.Contains(found, expert.Fallback.String()) {
		t.Errorf("findings %v: a fallback made of a damaged segment", found)
	}
	for _, c := range s.Conns {
		if c.Outcome == OutcomeFallback {
			t.Errorf("connection %d: %v (%v)", c.ID, c.Outcome, c.Fallback.Cause)
		}
	}
}

// TestProposalDamaged: a Proposal with its eyecatcher damaged in the
// capture: the stream's first bytes are not CLC, as after a middlebox's
// echo of the option, but the server answers with CLC, which it does only
// to a Proposal it read. pingpong.pcap: its Accept and the client's
// Confirm follow, and the connection is the whole capture's SMC-R one;
// decline-nordma.pcap: the server's Decline follows, and the connection
// falls back for that Decline. Neither is smc.option.echoed_no_clc.
func TestProposalDamaged(t *testing.T) {
	for _, c := range []struct {
		path    string
		outcome Outcome
		cause   FallbackCause
	}{
		{crafted.Pingpong(t), OutcomeSMCR, CauseNone},
		{refDir + "decline-nordma.pcap", OutcomeFallback, CauseDecline},
	} {
		frames := readRawFrames(t, c.path)
		_, lt := testutil.ReadFrames(t, c.path)
		proposal := firstCLC(t, lt, frames, decode.CLCTypeProposal)
		d := bytes.Clone(frames[proposal].Data)
		i := bytes.Index(d, []byte{0xE2, 0xD4, 0xC3, 0xD9}) // "SMCR" in EBCDIC
		if i < 0 {
			t.Fatalf("no eyecatcher in the Proposal of %s", c.path)
		}
		d[i+1] ^= 0x20
		frames[proposal].Data = d
		tr := New(Options{Unshared: true})
		eachRaw(t, "damaged", lt, frames, func(f *capture.Frame) { tr.Feed(f) })
		tr.EndCapture(time.Time{})
		s := tr.Snapshot()
		if len(s.Conns) != 1 {
			t.Fatalf("%s: %d connections, want 1", c.path, len(s.Conns))
		}
		if got := s.Conns[0]; got.Outcome != c.outcome || got.Fallback.Cause != c.cause {
			t.Errorf("%s: outcome %v (%v), want %v (%v)", c.path, got.Outcome, got.Fallback.Cause, c.outcome, c.cause)
		}
		for _, f := range s.Findings() {
			if f.ID == expert.OptionEchoed {
				t.Errorf("%s: %s on a Proposal damaged in the capture", c.path, f.ID)
			}
		}
	}
}

// firstCLC is the index in frames of the first frame that carries a CLC
// message of type typ (the test fails when none does).
func firstCLC(t *testing.T, lt layers.LinkType, frames []rawFrame, typ decode.CLCType) int {
	t.Helper()
	at := -1
	eachRaw(t, "clc", lt, frames, func(f *capture.Frame) {
		for _, m := range f.CLC {
			if m.Type == typ && at < 0 {
				at = f.Number - 1
			}
		}
	})
	if at < 0 {
		t.Fatalf("no CLC %v in the capture", typ)
	}
	return at
}

// TestConfirmDamaged: pingpong.pcap whose client Confirm has its last
// bytes overwritten in the capture (editcap -E fills a frame's rest with
// 0xAA): the Confirm is malformed (smc.malformed, a fact of the bytes the
// capture holds), but the client's CDCs to the Accept's queue pair with
// its token show that the server got it whole: the connection is SMC-R,
// not a handshake that failed.
func TestConfirmDamaged(t *testing.T) {
	frames := readRawFrames(t, crafted.Pingpong(t))
	_, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
	confirm := firstCLC(t, lt, frames, decode.CLCTypeConfirm)
	d := bytes.Clone(frames[confirm].Data)
	for i := len(d) - 8; i < len(d); i++ {
		d[i] = 0xAA
	}
	frames[confirm].Data = d
	s, found := feedRaw(t, frames)
	if len(s.Conns) != 1 {
		t.Fatalf("%d connections, want 1", len(s.Conns))
	}
	if c := s.Conns[0]; c.Outcome != OutcomeSMCR || slices.Contains(found, expert.HandshakeFailed.String()) || !slices.Contains(found, expert.Malformed.String()) {
		t.Errorf("outcome %v (%s), findings %v: want SMC-R, smc.malformed, no smc.handshake.failed", c.Outcome, c.Failure, found)
	}
	// Its TCP checksum fails (the bytes were changed after it was made):
	// the message is a damaged copy, not the client's error.
	if !slices.Contains(found, expert.BadTCPSum.String()) {
		t.Errorf("findings %v: want tcp.checksum.bad", found)
	}
	for _, f := range s.Findings() {
		if f.ID == expert.Malformed && !strings.Contains(f.Detail, "damaged copy") {
			t.Errorf("smc.malformed %q: want it named a damaged copy", f.Detail)
		}
	}
}

// TestSnaplenCutRETH cuts the kernel's captures to 64 bytes a frame, 10
// bytes into a WRITE's RETH: each such frame keeps its BTH (decode.BTH
// ExtCut) and is a RoCE frame of its queue pair, not an "other" one; the
// requests are followed by their PSNs where their links are known, so
// none of those the capture holds is "not captured" (it said so of 18 to
// 864 of them), and the snap length's finding counts them.
func TestSnaplenCutRETH(t *testing.T) {
	for _, name := range []string{"pingpong", "long", "multiconn", "multilink"} {
		t.Run(name, func(t *testing.T) {
			path := "../samples/" + name + ".pcap"
			all, lt := testutil.ReadFrames(t, path)
			cut, _ := snapFrames(t, path, 64)
			// Every RoCE frame of the whole capture keeps its BTH.
			var roce []bool
			eachRaw(t, "whole", lt, all, func(f *capture.Frame) { roce = append(roce, f.BTH != nil) })
			cutRETH := 0
			eachRaw(t, "cut", lt, cut, func(f *capture.Frame) {
				switch {
				case roce[f.Number-1] && f.BTH == nil:
					t.Errorf("frame %d: no BTH, cut to %d bytes", f.Number, len(f.Data))
				case f.BTH != nil && f.BTH.ExtCut:
					cutRETH++
				}
			})
			if cutRETH == 0 {
				t.Fatal("no frame's extension headers were cut: the test cuts none")
			}
			_, wfound := feedRaw(t, all)
			_, found := feedRaw(t, cut)
			if slices.Contains(found, "roce.rc.not_captured") && !slices.Contains(wfound, "roce.rc.not_captured") {
				t.Errorf("findings %v: the capture holds every request", found)
			}
			if !slices.Contains(found, "smc.capture.snap_cut") {
				t.Errorf("findings %v: no smc.capture.snap_cut", found)
			}
		})
	}
}

// TestThinnedHandshakes: captures that miss every n-th frame (a mirror
// port that drops), where a connection's CLC messages and its link's
// setup are among the frames missed, still list each connection once,
// on its handshake's row, and each link group once:
//   - multilink.pcap without every 5th frame from frame 4 misses the
//     first contact's Confirm and the ADD_LINK request of link 2: the
//     server's CONFIRM_LINK request from the Accept's queue pair proves
//     the Confirm (halfAnnounced), and link 2's CONFIRM_LINK request,
//     sent to the client's end its ADD_LINK response named, makes link 2
//     the group's (addedOn), so the connection that fails over from it
//     stays one;
//   - multiconn.pcap without every 5th frame from frame 1 misses a
//     connection's Proposal and Accept: the server's ACK of the Proposal
//     says no copy will come, so the Confirm after them is read at once
//     (capture's CLC reassembly) and its CDCs find it;
//   - multiconn.pcap without its second connection's Confirm (frame 355)
//     and the server's ACK of it (frame 376, after the first CDCs): the
//     first C->S CDC to the Accept's queue pair with its token proves the
//     Confirm (awaitServerHalf, claimHalf);
//   - multilink.pcap without every 3rd frame from frame 11 misses both
//     ADD_LINK messages of link 2 (a group of its own, joined mid-stream)
//     and the last CDC before the failover: the failover-validation CDC,
//     one behind the last the capture saw, still names the connection
//     (failoverConn), and the groups are one;
//   - multilink.pcap without link 2's ADD_LINK and CONFIRM_LINK messages
//     (frames 13, 16, 20, 22) and both failover-validation CDCs (frames
//     985, 989): the connection's next CDC on link 1 names its token and
//     goes on its sequence (failoverConn), and the groups are one;
//   - multilink.pcap without every 2nd frame from frame 2 to 1024 (editcap
//     drops at most 512 frames a run) misses 18 CDCs of the server's
//     before the failover, more than failoverMissed, each in a request of
//     its link the capture missed: its validation still names the
//     connection, and it stays one row;
//   - multiconn.pcap without every 5th frame from frame 4, multilink.pcap
//     without every 7th: a connection's Accept and Confirm are both
//     missed (its Proposal, or nothing of its CLC, is there), and its
//     first CDC, the one connection that waits between those hosts,
//     places it (claimFirst, Conn.blind).
func TestThinnedHandshakes(t *testing.T) {
	drop := func(frame int) mutate.Mutation { return mutate.Mutation{Kind: mutate.Drop, At: frame - 1} }
	var everyOther []mutate.Mutation // frames 2, 4, ... 1024, the last first
	for f := 1024; f >= 2; f -= 2 {
		everyOther = append(everyOther, drop(f))
	}
	for _, c := range []struct {
		capture string
		damage  []mutate.Mutation // applied in turn
	}{
		{"../samples/multilink.pcap", []mutate.Mutation{{Kind: mutate.Thin, At: 3, N: 5}}},
		{"../samples/multiconn.pcap", []mutate.Mutation{{Kind: mutate.Thin, At: 0, N: 5}}},
		{"../samples/multiconn.pcap", []mutate.Mutation{drop(376), drop(355)}},
		{"../samples/multilink.pcap", []mutate.Mutation{{Kind: mutate.Thin, At: 10, N: 3}}},
		{"../samples/multilink.pcap", []mutate.Mutation{drop(989), drop(985), drop(22), drop(20), drop(16), drop(13)}},
		{"../samples/multilink.pcap", everyOther},
		{"../samples/multiconn.pcap", []mutate.Mutation{{Kind: mutate.Thin, At: 3, N: 5}}},
		{"../samples/multilink.pcap", []mutate.Mutation{{Kind: mutate.Thin, At: 0, N: 7}}},
		// A connection whose CLC messages and first CDCs were all missed,
		// in a link group the capture shows made: placed by the first
		// CDC it shows.
		{"../samples/multiconn.pcap", []mutate.Mutation{{Kind: mutate.Thin, At: 0, N: 2}}},
		{"../samples/multiconn.pcap", []mutate.Mutation{{Kind: mutate.Thin, At: 10, N: 2}}},
		{"../samples/long.pcap", []mutate.Mutation{{Kind: mutate.Thin, At: 0, N: 3}}},
	} {
		t.Run(fmt.Sprintf("%s %v", filepath.Base(c.capture), c.damage), func(t *testing.T) {
			whole := feedFile(t, c.capture, Options{Unshared: true}, 0).Snapshot()
			frames := readRawFrames(t, c.capture)
			frames = applied(frames, c.damage...)
			s, _ := feedRaw(t, frames)
			if len(s.Conns) != len(whole.Conns) || len(s.LinkGroups) != len(whole.LinkGroups) {
				for _, x := range s.Conns {
					t.Logf("connection %d: %v %q, link %d, %d/%d CDCs", x.ID, x.Outcome, ConnDetail(&x), x.Link, x.Flow[DirC2S].CDCs, x.Flow[DirS2C].CDCs)
				}
				t.Errorf("%d connections in %d link groups, want %d in %d as in the whole capture", len(s.Conns), len(s.LinkGroups), len(whole.Conns), len(whole.LinkGroups))
			}
			for _, x := range s.Conns {
				if x.Inferred || x.Outcome != OutcomeSMCR {
					t.Errorf("connection %d: %v %q, want SMC-R from its handshake", x.ID, x.Outcome, ConnDetail(&x))
				}
			}
			for _, g := range s.LinkGroups {
				if g.Inferred || g.ServerPeerID == [8]byte{} && g.ClientPeerID == [8]byte{} {
					t.Errorf("link group %d: inferred %v, peers %x/%x: want the one its Accept or Confirm announced", g.ID, g.Inferred, g.ServerPeerID, g.ClientPeerID)
				}
			}
			ids := map[uint8]int{}
			for _, l := range s.Links {
				ids[l.LinkID]++
			}
			for id, n := range ids {
				if n > 1 {
					t.Errorf("link %d listed %d times", id, n)
				}
			}
		})
	}
}

// TestHandshakeBurstDropped: a burst the capture missed took a handshake's
// CLC messages and their ACKs (and the first CONFIRM_LINKs, and a first
// CDC), so that the first sign of the missed bytes is the FIN, after the
// connection's CDCs: the handshake is still the connection those CDCs
// show, one row with the whole capture's bytes, not a pending handshake
// beside a connection joined mid-stream. (samples/pingpong.pcap's group,
// built from traffic, had its roles the wrong way round: the handshake
// turns them.)
func TestHandshakeBurstDropped(t *testing.T) {
	for _, c := range []struct {
		capture     string
		first, last int    // the frames dropped, 1-based
		detail      string // of the connection whose handshake the burst took ("": not checked)
	}{
		{"../testdata/reference/pingpong.pcap", 7, 21, "CLC messages not in the capture: SMC-R by its CDCs"},
		{"../testdata/reference/pingpong.pcap", 6, 20, ""},
		{"../samples/pingpong.pcap", 6, 20, "Accept and Confirm not in the capture: SMC-R by its CDCs"},
		{"../samples/multiconn.pcap", 4, 18, ""},
		{"../samples/long.pcap", 4, 18, ""},
	} {
		t.Run(fmt.Sprintf("%s drop %d-%d", filepath.Base(c.capture), c.first, c.last), func(t *testing.T) {
			whole := feedFile(t, c.capture, Options{Unshared: true}, 0).Snapshot()
			frames := mutate.Mutation{Kind: mutate.DropRange, At: c.first - 1, N: c.last - c.first + 1}.Apply(readRawFrames(t, c.capture))
			s, _ := feedRaw(t, frames)
			if len(s.Conns) != len(whole.Conns) {
				for _, x := range s.Conns {
					t.Logf("connection %d: %v %q", x.ID, x.Outcome, ConnDetail(&x))
				}
				t.Fatalf("%d connections, want %d as in the whole capture", len(s.Conns), len(whole.Conns))
			}
			for _, w := range whole.Conns {
				i := slices.IndexFunc(s.Conns, func(x Conn) bool { return x.Client == w.Client && x.Server == w.Server })
				if i < 0 {
					t.Errorf("connection %v -> %v missing", w.Client, w.Server)
					continue
				}
				x := &s.Conns[i]
				if x.Inferred || x.Outcome != OutcomeSMCR {
					t.Errorf("connection %v: %v %q, want SMC-R", w.Client, x.Outcome, ConnDetail(x))
				}
				if c.detail != "" && ConnDetail(x) != c.detail {
					t.Errorf("connection %v: %q, want %q", w.Client, ConnDetail(x), c.detail)
				}
				for d := range x.Flow {
					if got, want := x.Flow[d].Bytes, w.Flow[d].Bytes; got != want {
						t.Errorf("connection %v %v: %d bytes, want %d as in the whole capture", w.Client, Dir(d), got, want)
					}
				}
			}
		})
	}
}

// TestReorderedAfterClockStep: time-backwards.pcap's ACK stamped 5 s
// before the frames around it (a capture clock stepped back), with the
// CDC it acknowledges moved after it: the request came within
// milliseconds of the ACK by the capture's own order, so it is the
// original put late, not a resend after a timeout (one CDC short and a
// retransmission more than the whole capture).
func TestReorderedAfterClockStep(t *testing.T) {
	const name = "../testdata/expert/time-backwards.pcap"
	whole := feedFile(t, name, Options{Unshared: true}, 0).Snapshot()
	frames := mutate.Mutation{Kind: mutate.Late, At: 22, N: 2}.Apply(readRawFrames(t, name))
	s, _ := feedRaw(t, frames)
	total := func(s *Snapshot) (cdcs int, bytes uint64) {
		for _, c := range s.Conns {
			for d := range c.Flow {
				cdcs += c.Flow[d].CDCs
				bytes += c.Flow[d].Bytes
			}
		}
		return cdcs, bytes
	}
	gc, gb := total(&s)
	wc, wb := total(&whole)
	if gc != wc || gb != wb || s.Stats.Retrans != whole.Stats.Retrans {
		t.Errorf("%d CDCs, %d bytes, %d retransmissions; want %d, %d, %d as in the whole capture", gc, gb, s.Stats.Retrans, wc, wb, whole.Stats.Retrans)
	}
}

// TestCountFromZero: a flow joined at a CDC whose producer cursor had
// already wrapped an RMBE counts the wraps by the RMBE's size, and where
// no message told the size, its bytes are not known ("-"), rather than a
// count short by the wraps.
func TestCountFromZero(t *testing.T) {
	for _, c := range []struct {
		prod     Cursor
		claimed  uint64
		size     uint32
		bytes    uint64
		whole    bool
		cons     Cursor
		peer     uint32
		consumed uint64
	}{
		{Cursor{0, 200}, 64, 0, 136, true, Cursor{0, 100}, 0, 100},
		{Cursor{2, 100}, 0, 1000, 2100, true, Cursor{1, 10}, 500, 510},
		{Cursor{2, 100}, 0, 0, 0, false, Cursor{1, 10}, 0, 0},
	} {
		f := Flow{joinProd: c.prod, joinCons: c.cons, joinClaimed: c.claimed}
		f.countFromZero(c.size, c.peer)
		if f.Bytes != c.bytes || f.BytesWhole() != c.whole || f.Consumed != c.consumed {
			t.Errorf("%+v: bytes %d whole %v consumed %d, want %d %v %d", c, f.Bytes, f.BytesWhole(), f.Consumed, c.bytes, c.whole, c.consumed)
		}
	}
}

// TestMeasuresAcrossStep: the capture's clock stepped back 5 s inside
// what a finding measures (handshake-slow.pcap at its Confirm, frame 12;
// the RMBE full of consumer-stall.pcap and the write-blocked episode of
// write-blocked.pcap, both at frame 30; ANCK's credits-starved.pcap at
// frame 515, while the server held no credit): the length is a lower bound,
// said so, not a measure; the whole capture's is a measure.
func TestMeasuresAcrossStep(t *testing.T) {
	for _, c := range []struct {
		name string
		id   expert.ID
		step int // frame index
		want string
	}{
		{"expert/handshake-slow", expert.HandshakeSlow, 11, "Confirm at least"},
		{"expert/consumer-stall", expert.ConsumerStall, 29, "up to at least"},
		{"expert/write-blocked", expert.WriteBlocked, 29, "longest at least"},
		{"anck/credits-starved", expert.CreditsStarved, 514, "longest at least"},
	} {
		name := "../testdata/" + c.name + ".pcap"
		detail := func(s Snapshot) string {
			for _, f := range s.Findings() {
				if f.ID == c.id {
					return f.Detail
				}
			}
			return ""
		}
		if d := detail(feedFile(t, name, Options{Unshared: true}, 0).Snapshot()); d == "" || strings.Contains(d, "at least") {
			t.Errorf("%s: whole capture: %q, want a measure", c.name, d)
		}
		s, _ := feedRaw(t, mutate.Mutation{Kind: mutate.Step, At: c.step, N: 5000}.Apply(readRawFrames(t, name)))
		if d := detail(s); !strings.Contains(d, c.want) || !strings.Contains(d, "stepped back") {
			t.Errorf("%s: stepped: %q, want a lower bound (%q)", c.name, d, c.want)
		}
	}
}

// TestDamagedCLCQPN: a CLC Accept or Confirm whose copy names a wrong
// queue pair (a byte of its QPN damaged, its TCP checksum failing; the
// hosts went on) keys the link by the QP its CONFIRM_LINK names: the
// link is one, with every packet of the clean capture, and nothing is
// missed. So when the CONFIRM_LINK request's IPv4 header checksum fails
// too (its ICRC, which covers the key, verifies).
func TestDamagedCLCQPN(t *testing.T) {
	clean := readRawFrames(t, crafted.Pingpong(t))
	base, _ := feedRaw(t, clean)
	for _, c := range []struct {
		name  string
		frame int // pingpong.pcap
		qpn   uint32
		gid   bool // a byte of the GID damaged, not of the QPN
		ipSum bool // the IPv4 header checksum of the first RoCE packet after it damaged too
	}{{"accept", 10, base.Links[0].Server.QPN, false, false}, {"confirm", 12, base.Links[0].Client.QPN, false, false},
		{"accept gid", 10, base.Links[0].Server.QPN, true, false}, {"confirm gid", 12, base.Links[0].Client.QPN, true, false},
		{"confirm gid, request's IPv4 checksum", 12, base.Links[0].Client.QPN, true, true},
		{"confirm, request's IPv4 checksum", 12, base.Links[0].Client.QPN, false, true}} {
		t.Run(c.name, func(t *testing.T) {
			fs := slices.Clone(clean)
			d := append([]byte(nil), fs[c.frame-1].Data...)
			// struct smc_clc_msg_accept_confirm: the header (8 bytes),
			// the peer ID (8), GID (16) and MAC (6), the QPN (3).
			clc := 14 + 20 + int(d[14+20+12]>>4)*4
			q := clc + 8 + 30
			if got := uint32(d[q])<<16 | uint32(d[q+1])<<8 | uint32(d[q+2]); got != c.qpn {
				t.Fatalf("frame %d: QPN %#x at %d, want %#x", c.frame, got, q, c.qpn)
			}
			if c.gid {
				d[clc+8+8+14] ^= 0x04 // the IPv4 address's third byte
			} else {
				d[q+1] ^= 0xf6
			}
			fs[c.frame-1].Data = d
			if c.ipSum {
				i := slices.IndexFunc(fs[c.frame:], func(f rawFrame) bool {
					return len(f.Data) > 38 && f.Data[12] == 0x08 && f.Data[13] == 0 && f.Data[23] == 17 && f.Data[36] == 0x12 && f.Data[37] == 0xb7
				})
				if i < 0 {
					t.Fatalf("no RoCEv2 packet after frame %d", c.frame)
				}
				r := append([]byte(nil), fs[c.frame+i].Data...)
				r[14+11] ^= 0x02 // the header checksum's low byte: outside the ICRC
				fs[c.frame+i].Data = r
			}
			s, found := feedRaw(t, fs)
			if len(s.Links) != len(base.Links) || len(s.LinkGroups) != len(base.LinkGroups) {
				t.Fatalf("%d links in %d groups, want %d in %d", len(s.Links), len(s.LinkGroups), len(base.Links), len(base.LinkGroups))
			}
			for dir := range 2 {
				if got, want := s.Links[0].RC[dir].Packets, base.Links[0].RC[dir].Packets; got != want {
					t.Errorf("%v packets %d, want %d", Dir(dir), got, want)
				}
			}
			if !slices.Contains(found, expert.BadTCPSum.String()) || slices.Contains(found, expert.NotCaptured.String()) {
				t.Errorf("findings %v: want tcp.checksum.bad and no roce.rc.not_captured", found)
			}
			if got, want := s.Conns[0].Flow[DirC2S].CDCs, base.Conns[0].Flow[DirC2S].CDCs; got != want {
				t.Errorf("C->S CDCs %d, want %d", got, want)
			}
			if l, b := s.Links[0], base.Links[0]; l.Client.Addr != b.Client.Addr || l.Server.Addr != b.Server.Addr {
				t.Errorf("link %v -> %v, want %v -> %v", l.Client.Addr, l.Server.Addr, b.Client.Addr, b.Server.Addr)
			}
		})
	}
}

// TestDamagedReusedCLC: the CLC Accept of a connection on a link group
// that exists (multiconn.pcap's second) whose copy is damaged (its TCP
// checksum fails; the hosts went on): a GID byte, and the connection is
// still on its link group's link; a byte of the RMB's address, and its
// WRITEs still land in the RMBE its CONFIRM_RKEY gave; a GID byte with a
// byte of the Confirm's QPN damaged too (each message off in a key of its
// own end), and it is still on its link.
func TestDamagedReusedCLC(t *testing.T) {
	all, _, a, cf := secondHandshake(t, "../samples/multiconn.pcap")
	base, _ := feedRaw(t, all)
	// struct smcr_clc_msg_accept_confirm: the header (8 bytes), the peer
	// ID (8), the GID (16), the MAC (6), the QPN (3) ..., the RMB's
	// address at 52.
	clcOf := func(i int) int { return 14 + 20 + int(all[i].Data[14+20+12]>>4)*4 }
	type damage struct{ frame, off int }
	for _, c := range []struct {
		name    string
		damages []damage
	}{
		{"gid", []damage{{a, clcOf(a) + 8 + 8 + 2}}},
		{"va", []damage{{a, clcOf(a) + 52 + 5}}},
		{"gid and the confirm's qpn", []damage{{a, clcOf(a) + 8 + 8 + 2}, {cf, clcOf(cf) + 8 + 30 + 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := slices.Clone(all)
			for _, d := range c.damages {
				fs[d.frame].Data = append([]byte(nil), fs[d.frame].Data...)
				fs[d.frame].Data[d.off] ^= 0x82
			}
			s, found := feedRaw(t, fs)
			if !slices.Contains(found, expert.BadTCPSum.String()) {
				t.Errorf("findings %v: want tcp.checksum.bad", found)
			}
			if len(s.LinkGroups) != len(base.LinkGroups) || len(s.Conns) != len(base.Conns) {
				t.Fatalf("%d link groups, %d connections; want %d, %d", len(s.LinkGroups), len(s.Conns), len(base.LinkGroups), len(base.Conns))
			}
			for _, x := range base.Conns {
				got, want := s.Conns[x.ID-1], x
				if got.LGR != want.LGR || got.Link != want.Link {
					t.Errorf("connection %d on link %d of group %d, want %d of %d", x.ID, got.Link, got.LGR, want.Link, want.LGR)
				}
				for d := range 2 {
					g, w := got.Flow[d], want.Flow[d]
					if g.CDCs != w.CDCs || g.Bytes != w.Bytes || g.WriteBytes != w.WriteBytes || g.WritesOutside != w.WritesOutside {
						t.Errorf("connection %d %v: CDCs %d bytes %d WRITE bytes %d outside %d; want %d %d %d %d", x.ID, Dir(d),
							g.CDCs, g.Bytes, g.WriteBytes, g.WritesOutside, w.CDCs, w.Bytes, w.WriteBytes, w.WritesOutside)
					}
				}
			}
		})
	}
}

// TestDamagedKeyMalformed: a CDC the sender sent malformed (its length
// byte wrong, its ICRC made over it) whose copy in the capture has a byte
// of its destination address damaged: capture's classifier, which looks
// its queue pair up by that address, left it unclassified; placed by the
// mend, it is the malformed message it was (smc.malformed, the next CDC's
// sequence explained), as in the whole capture.
func TestDamagedKeyMalformed(t *testing.T) {
	clean := readRawFrames(t, crafted.Pingpong(t))
	i := clientCDCs(t, clean)[5]
	fs := slices.Clone(clean)
	fs[i].Data = append([]byte(nil), fs[i].Data...)
	fs[i].Data[crafted.RoCESMCOff+1] = 0xFF
	crafted.FixICRC(t, fs[i].Data)
	whole, wholeFound := feedRaw(t, fs)
	fs[i].Data = append([]byte(nil), fs[i].Data...)
	fs[i].Data[14+16+2] ^= 0x01 // the IPv4 destination's third byte
	s, found := feedRaw(t, fs)
	for _, id := range []expert.ID{expert.Malformed, expert.CaptureCopyDamaged} {
		if !slices.Contains(found, id.String()) {
			t.Errorf("findings %v: want %s", found, id)
		}
	}
	if slices.Contains(found, expert.SeqGap.String()) || slices.Contains(wholeFound, expert.SeqGap.String()) {
		t.Errorf("findings %v (whole capture %v): a CDC sequence gap", found, wholeFound)
	}
	if got, want := s.Conns[0].Flow[DirC2S], whole.Conns[0].Flow[DirC2S]; got.CDCs != want.CDCs || got.Bytes != want.Bytes {
		t.Errorf("C->S CDCs %d bytes %d, want %d %d", got.CDCs, got.Bytes, want.CDCs, want.Bytes)
	}
}

// TestIPSumOfADirectionsFirst: the first RoCE request of a direction whose
// IPv4 header checksum alone fails is followed on its ICRC's word (no
// packet of the direction has verified yet: it may be a capture point's
// unfilled checksum); once later packets of the direction verify and the
// responder took it, it is the capture's damage, not the network's.
func TestIPSumOfADirectionsFirst(t *testing.T) {
	frames := readRawFrames(t, crafted.Pingpong(t))
	base, _ := feedRaw(t, frames)
	for i, f := range frames {
		d := f.Data
		if !serverRoCEv4(d) {
			continue // not the server's first RoCEv2 packet yet
		}
		frames[i].Data = append([]byte(nil), d...)
		frames[i].Data[14+8] ^= 0x04 // the TTL, which the ICRC leaves out
		break
	}
	s, found := feedRaw(t, frames)
	if slices.Contains(found, expert.BadIPSum.String()) || !slices.Contains(found, expert.CaptureCopyDamaged.String()) {
		t.Errorf("findings %v, want the capture's damage, not the network's", found)
	}
	sameLinksAndBytes(t, s, base)
}

// serverRoCEv4 reports a RoCEv2 packet over IPv4 from pingpong's server
// (10.10.0.1): UDP to 4791.
func serverRoCEv4(d []byte) bool {
	return len(d) >= 14+20+8 && d[12] == 0x08 && d[13] == 0 && d[14+9] == 17 && d[14+20+2] == 0x12 && d[14+20+3] == 0xb7 && d[14+15] == 1
}

// sameLinksAndBytes holds the links of s and the bytes of its first
// connection's directions to those of base, the clean capture's.
func sameLinksAndBytes(t *testing.T, s, base Snapshot) {
	t.Helper()
	if got, want := linkSum(s), linkSum(base); !slices.Equal(got, want) {
		t.Errorf("links %v, want the clean capture's %v", got, want)
	}
	for d := range s.Conns[0].Flow {
		if got, want := s.Conns[0].Flow[d].Bytes, base.Conns[0].Flow[d].Bytes; got != want {
			t.Errorf("direction %d: %d bytes, want %d", d, got, want)
		}
	}
}

// TestSnapCutCopiesFirst: captures with every frame's copy cut (to 60,
// 80 or 128 bytes) 20 us before it, as two interfaces captured with two
// snap lengths show them: the capture holds every frame whole, so nothing
// is cut from it (no smc.capture.snap_cut), the findings are the whole
// capture's (an LLC message sent again among them, which only its whole
// copy names), and every connection counts the frames the whole capture
// gives it.
func TestSnapCutCopiesFirst(t *testing.T) {
	root := testutil.Root(t) + "/testdata/"
	for _, name := range []string{"reference/pingpong", "reference/decline-nordma", "anck/handshake-credits"} {
		all, _ := testutil.ReadFrames(t, root+name+".pcap")
		whole, wantFound := feedRaw(t, all)
		wantFound = slices.DeleteFunc(wantFound, func(id string) bool { return id == expert.CaptureDuplicate.String() })
		slices.Sort(wantFound)
		for _, cut := range []int{60, 80, 128} {
			frames := mutate.CutCopiesFirst(all, cut)
			s, found := feedRaw(t, frames)
			// A copy whose TCP header was cut is not known for one.
			found = slices.DeleteFunc(found, func(id string) bool { return id == expert.CaptureDuplicate.String() })
			slices.Sort(found)
			if !slices.Equal(found, wantFound) {
				t.Errorf("%s, copies cut to %d first: findings %v, want %v (%s)", name, cut, found, wantFound, findingDetail(&s, expert.SnapCut))
			}
			if len(s.Conns) != len(whole.Conns) {
				t.Errorf("%s, copies cut to %d first: %d connections, want %d", name, cut, len(s.Conns), len(whole.Conns))
				continue
			}
			for i := range s.Conns {
				if got, want := s.Conns[i].Frames, whole.Conns[i].Frames; got != want {
					t.Errorf("%s, copies cut to %d first: connection %d has %d frames, want %d", name, cut, i+1, got, want)
				}
			}
		}
	}
}

// TestDamagedTuple: a handshake's segment (SYN, SYN-ACK, CLC message) or
// a FIN whose address or port the capture damaged, one bit, names a
// 4-tuple of no connection. Its checksum fails and its sequence numbers
// are its connection's: it is that connection's damaged copy, with the
// finding, not a connection of its own (a phantom pending one) that
// leaves its own without its SYN, CLC message or FIN.
func TestDamagedTuple(t *testing.T) {
	type fact struct {
		client, server string
		outcome        Outcome
		clc            string
		fin            [2]bool
	}
	facts := func(s Snapshot) []fact {
		var fs []fact
		for _, c := range s.Conns {
			fs = append(fs, fact{c.Client.String(), c.Server.String(), c.Outcome, fmt.Sprint(c.CLCTypes), [2]bool{c.Flow[0].FIN, c.Flow[1].FIN}})
		}
		return fs
	}
	for _, name := range []string{"../samples/pingpong.pcap", "../samples/ipv6.pcap"} {
		all := readRawFrames(t, name)
		base, _ := feedRaw(t, all)
		want := facts(base)
		tried := 0
		for i, f := range all {
			var addrs, ports int // offsets of the addresses and the ports
			switch d := f.Data; {
			case len(d) >= 54 && binary.BigEndian.Uint16(d[12:]) == 0x0800 && d[23] == 6:
				addrs, ports = 26, 34
			case len(d) >= 74 && binary.BigEndian.Uint16(d[12:]) == 0x86dd && d[20] == 6:
				addrs, ports = 22, 54
			default:
				continue
			}
			tcpLen := int(binary.BigEndian.Uint16(f.Data[18:])) // IPv6's payload length
			if addrs == 26 {
				tcpLen = int(binary.BigEndian.Uint16(f.Data[16:])) - int(f.Data[14]&0x0f)*4
			}
			if f.Data[ports+13]&0x07 == 0 && tcpLen <= int(f.Data[ports+12]>>4)*4 {
				continue // no SYN, FIN or RST, no payload: a bare ACK
			}
			for off := addrs; off < ports+4; off++ {
				frames := slices.Clone(all)
				frames[i].Data = slices.Clone(f.Data)
				frames[i].Data[off] ^= 0x10
				s, found := feedRaw(t, frames)
				tried++
				if got := facts(s); !slices.Equal(got, want) {
					t.Errorf("%s: frame %d byte %d damaged: connections %+v, want %+v", filepath.Base(name), i+1, off, got, want)
					continue
				}
				if !slices.Contains(found, expert.BadTCPSum.String()) && !slices.Contains(found, expert.BadTCPIPSum.String()) {
					t.Errorf("%s: frame %d byte %d damaged: findings %v, want a checksum's", filepath.Base(name), i+1, off, found)
				}
			}
		}
		if tried == 0 {
			t.Fatalf("%s: no segment damaged", name)
		}
	}
	// The Proposal's source port and its flags damaged (FIN and RST for
	// ACK and PSH): its bytes are the next of its connection's stream, to
	// the number, whatever its flags say.
	{
		base, _ := feedRaw(t, readRawFrames(t, "../samples/pingpong.pcap"))
		const proposal = 7 // frame 8
		s, found := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
			fs[proposal].Data[34+1] ^= 0x10
			fs[proposal].Data[34+13] = 0x05
			return fs
		})
		if !slices.Equal(facts(s), facts(base)) {
			t.Errorf("Proposal's port and flags damaged: connections %+v, want %+v (findings %v)", facts(s), facts(base), found)
		}
	}
	// The SYN's address damaged and its SYN-ACK damaged elsewhere (its
	// window): both fail their checksums; the SYN-ACK's verifies with
	// its own 4-tuple's fields in place, so the SYN's copy is the damaged one.
	all := readRawFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, all)
	frames := slices.Clone(all)
	for i, off := range map[int]int{2: 33, 3: 34 + 14} { // frames 3 (SYN) and 4 (SYN-ACK)
		frames[i].Data = slices.Clone(frames[i].Data)
		frames[i].Data[off] ^= 0x04
	}
	if s, _ := feedRaw(t, frames); !slices.Equal(facts(s), facts(base)) {
		t.Errorf("SYN's address and SYN-ACK's window damaged: connections %+v, want %+v", facts(s), facts(base))
	}
	// The other way round: the SYN damaged in its window, its SYN-ACK in
	// its source address and its window. Neither TCP checksum verifies
	// with the other's 4-tuple; the SYN-ACK's IPv4 header checksum does
	// with the SYN's addresses: the SYN-ACK's address is the damage (not
	// the SYN's connection moved to it, a phantom server), and the SYN's
	// copy is damaged too.
	frames = slices.Clone(all)
	for i, offs := range map[int][]int{2: {34 + 14}, 3: {28, 34 + 14}} {
		frames[i].Data = slices.Clone(frames[i].Data)
		for _, off := range offs {
			frames[i].Data[off] ^= 0x04
		}
	}
	s, _ := feedRaw(t, frames)
	if !slices.Equal(facts(s), facts(base)) {
		t.Errorf("SYN's window and SYN-ACK's address and window damaged: connections %+v, want %+v", facts(s), facts(base))
	}
	// One field damaged in each: the SYN's client port, and the
	// SYN-ACK's acknowledgement number (the SYN's checksum verifies with
	// the SYN-ACK's 4-tuple and its own number) or its server port (the
	// 4-tuple sent takes the client's port from the SYN-ACK and the
	// server's from the SYN, as each one's checksum says).
	// Two fields of one: the SYN's client port and server address (its
	// SYN-ACK whole), or the SYN-ACK's two ports (its SYN whole).
	for name, offs := range map[string][][2]int{ // frame index, byte
		"SYN's client port and SYN-ACK's acknowledgement number": {{2, 35}, {3, 34 + 11}},
		"SYN's client port and SYN-ACK's server port":            {{2, 35}, {3, 35}},
		"SYN's client port and server address":                   {{2, 35}, {2, 14 + 18}},
		"SYN-ACK's two ports":                                    {{3, 35}, {3, 37}},
		// Neither checksum verifies with any 4-tuple the two make: the
		// segment after them, whole or damaged, names the field the
		// SYN-ACK held whole (two of three name it).
		"SYN's client port and window, SYN-ACK's server port and window":         {{2, 35}, {2, 48}, {3, 35}, {3, 48}},
		"SYN's client port and window, SYN-ACK's server port and window, next's": {{2, 35}, {2, 48}, {3, 35}, {3, 48}, {4, 48}},
	} {
		frames := slices.Clone(all)
		for _, o := range offs {
			frames[o[0]].Data = slices.Clone(frames[o[0]].Data)
			frames[o[0]].Data[o[1]] ^= 0x04
		}
		if s, _ := feedRaw(t, frames); !slices.Equal(facts(s), facts(base)) {
			t.Errorf("%s damaged: connections %+v, want %+v", name, facts(s), facts(base))
		}
	}
	var synFlagged bool
	for _, f := range s.Findings() {
		if f.ID == expert.BadTCPSum && f.First == 3 {
			synFlagged = true
		}
	}
	if !synFlagged {
		t.Errorf("SYN's window and SYN-ACK's address and window damaged: no %s on the SYN (frame 3)", expert.BadTCPSum)
	}
}

// TestDamagedCLCCopies: pingpong.pcap whose CLC Accept, or Accept and
// Confirm, the capture holds with their ends overwritten (editcap -E fills
// a frame's rest with 0xAA): their segments' checksums fail, so their
// receivers never read the malformed bytes (their TCP dropped the segment,
// or took the copy the capture's is not). The handshake is not failed on
// them: the link's traffic that follows says SMC-R, as where the capture
// missed them. An Accept sent again whole after its damaged copy is
// followed from that copy, as the clean capture is.
func TestDamagedCLCCopies(t *testing.T) {
	clean := readRawFrames(t, crafted.Pingpong(t))
	_, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
	accept := firstCLC(t, lt, clean, decode.CLCTypeAccept)
	confirm := firstCLC(t, lt, clean, decode.CLCTypeConfirm)
	smash := func(d []byte) {
		for i := len(d) - 20; i < len(d); i++ {
			d[i] = 0xAA
		}
	}
	base, _ := feedRaw(t, clean)
	for _, v := range []struct {
		name   string
		frames func() []rawFrame
		detail string
	}{
		{"accept", func() []rawFrame {
			fs := slices.Clone(clean)
			fs[accept].Data = bytes.Clone(fs[accept].Data)
			smash(fs[accept].Data)
			return fs
		}, ""},
		{"accept and confirm", func() []rawFrame {
			fs := slices.Clone(clean)
			for _, i := range []int{accept, confirm} {
				fs[i].Data = bytes.Clone(fs[i].Data)
				smash(fs[i].Data)
			}
			return fs
		}, "Accept or Confirm damaged in the capture: SMC-R by its CDCs"},
		{"accept sent again", func() []rawFrame {
			return crafted.Resent(slices.Clone(clean), accept+1, smash)
		}, ConnDetail(&base.Conns[0])},
		{"proposal's eyecatcher, sent again", func() []rawFrame {
			return crafted.Resent(slices.Clone(clean), firstCLC(t, lt, clean, decode.CLCTypeProposal)+1, func(d []byte) { d[len(d)-156] ^= 0x20 })
		}, ConnDetail(&base.Conns[0])},
	} {
		s, found := feedRaw(t, v.frames())
		if len(s.Conns) != 1 {
			t.Errorf("%s: %d connections, want 1", v.name, len(s.Conns))
			continue
		}
		c := &s.Conns[0]
		malformed := !strings.HasPrefix(v.name, "proposal's eyecatcher") // bytes that frame no message are not one
		if c.Outcome != OutcomeSMCR || slices.Contains(found, expert.HandshakeFailed.String()) || slices.Contains(found, expert.Malformed.String()) != malformed {
			t.Errorf("%s: outcome %v (%s), findings %v: want SMC-R, smc.malformed, no smc.handshake.failed", v.name, c.Outcome, ConnDetail(c), found)
		}
		if v.detail == ConnDetail(&base.Conns[0]) && !slices.Equal(c.CLCTypes, base.Conns[0].CLCTypes) {
			t.Errorf("%s: CLC messages %v, want %v", v.name, c.CLCTypes, base.Conns[0].CLCTypes)
		}
		if v.detail != "" && ConnDetail(c) != v.detail {
			t.Errorf("%s: detail %q, want %q", v.name, ConnDetail(c), v.detail)
		}
		if f, bf := flowTotalsOf(s), flowTotalsOf(base); f != bf {
			t.Errorf("%s: CDCs and bytes %v, want %v", v.name, f, bf)
		}
	}
}

// TestDamagedHandshakeCopies: pingpong.pcap's handshake with copies the
// capture damaged: its SYN-ACK's SMC option and the Proposal after it (a
// server that answers with an Accept offered SMC); a second copy of the
// SYN-ACK, the option damaged (a mirror's copy of what the capture showed
// whole); a copy of the SYN before it whose flags read SYN, ACK and FIN;
// the Proposal's length field, which then claims the Confirm's bytes (its
// receiver never read that length); the Accept unreadable (its Ethernet
// type) and the Confirm's first bytes not CLC (no application data: the
// segment's checksum fails); the Confirm's token (the server's CDCs name
// the one the client sent); the Proposal's sequence number (its bytes are
// the ones the server acknowledged, not missed ones). Each is one SMC-R connection with the clean
// capture's CDCs and bytes.
func TestDamagedHandshakeCopies(t *testing.T) {
	clean := readRawFrames(t, "../samples/pingpong.pcap")
	base, baseFound := feedRaw(t, clean)
	const syn, synack, proposal, accept, confirm = 2, 3, 4, 6, 7 // indexes of frames 3, 4, 5, 7, 8
	option := bytes.Index(clean[synack].Data, []byte{0xe2, 0xd4, 0xc3, 0xd9})
	if option < 0 {
		t.Fatal("no SMC option in the SYN-ACK")
	}
	damaged := func(i int, damage func(d []byte)) rawFrame {
		f := clean[i]
		f.Data = bytes.Clone(f.Data)
		damage(f.Data)
		return f
	}
	// with is the capture with frame i damaged.
	with := func(i int, damage func(d []byte)) []rawFrame {
		fs := slices.Clone(clean)
		fs[i] = damaged(i, damage)
		return fs
	}
	for _, v := range []struct {
		name   string
		frames []rawFrame
	}{
		{"SYN-ACK's option and Proposal", func() []rawFrame {
			fs := slices.Clone(clean)
			fs[synack] = damaged(synack, func(d []byte) { d[option+3] ^= 0x20 })
			fs[proposal] = damaged(proposal, func(d []byte) { d[66] ^= 0x20 })
			return fs
		}()},
		{"SYN-ACK's copy", slices.Insert(slices.Clone(clean), synack+1, damaged(synack, func(d []byte) { d[option+3] ^= 0x20 }))},
		{"SYN's copy first", slices.Insert(slices.Clone(clean), syn, damaged(syn, func(d []byte) { d[47] = 0x13 }))},
		// Its length field claims the Confirm's bytes after it.
		{"Proposal's length", with(proposal, func(d []byte) { d[66+6] += 23 })},
		// The server's CDCs carry the token the client sent.
		{"Confirm's token", with(confirm, func(d []byte) { d[115] ^= 0x96 })},
		{"Accept's token, Confirm unreadable", func() []rawFrame {
			// The client's first CDC carries the token the server sent.
			fs := slices.Clone(clean)
			fs[accept] = damaged(accept, func(d []byte) { d[115] ^= 0x96 })
			fs[confirm] = damaged(confirm, func(d []byte) { d[66] ^= 0x20 })
			return fs
		}()},
		// Two fields: the SYN's checksum verifies with the SYN-ACK's
		// 4-tuple and the number it acknowledges.
		{"SYN's port and sequence number", with(syn, func(d []byte) { d[37] ^= 0x41; d[40] ^= 0x40 })},
		// Away from its stream's place (TestDamagedCLCSequence holds
		// the rule where the outcome rests on it).
		{"Confirm's sequence number", with(confirm, func(d []byte) { d[39] ^= 0x08 })},
		// Two fields: its sequence number is its stream's next.
		{"Confirm's destination address and acknowledgement number", with(confirm, func(d []byte) { d[33] ^= 0x01; d[43] ^= 0x2e })},
		// 28 bytes, not 32: the timestamp option's last 4 bytes
		// read as the server's first bytes, where its Accept goes.
		{"server ACK's header length", with(proposal+1, func(d []byte) { d[46] = 0x70 })},
		// SYN, ACK, URG and CWR: a "SYN-ACK" from the client, shown
		// first; the server's SYN-ACK acknowledges its sequence number.
		{"SYN's flags", with(syn, func(d []byte) { d[47] = 0xb2 })},
		// SYN and PSH: no ACK, as a server's own SYN.
		{"SYN-ACK's flags", with(synack, func(d []byte) { d[47] = 0x0a })},
		{"Confirm's copy smashed from its flags", slices.Insert(slices.Clone(clean), confirm+1, damaged(confirm, func(d []byte) {
			for i := 47; i < len(d); i++ {
				d[i] = 0xaa
			}
		}))},
		{"Proposal's sequence number", with(proposal, func(d []byte) { d[41] += 49 })},
		{"Accept unreadable, Confirm damaged", func() []rawFrame {
			fs := slices.Clone(clean)
			fs[accept] = damaged(accept, func(d []byte) { d[12] ^= 0xff })
			fs[confirm] = damaged(confirm, func(d []byte) { d[66] ^= 0x20 })
			return fs
		}()},
		// No segment verified before (no checksum judged): the
		// Confirm's trailer and its flags to RST and ACK with its bytes;
		// its CDCs say it was sent whole.
		{"Confirm's trailer and flags, no checksum judged", func() []rawFrame {
			fs := slices.Clone(clean)
			for i := syn; i < confirm; i++ {
				fs[i] = damaged(i, func(d []byte) { d[48] ^= 0x04 }) // the window
			}
			fs[confirm] = damaged(confirm, func(d []byte) { d[47] |= 0x04; d[len(d)-2] ^= 0x40 })
			return fs
		}()},
		// No segment verified before: the server's ACK of the Proposal
		// with its flags to RST and ACK, bare; its Accept after it says
		// the server went on (resetUndone).
		{"server ACK's flags to RST, no checksum judged", func() []rawFrame {
			fs := slices.Clone(clean)
			for i := syn; i <= proposal+1; i++ {
				fs[i] = damaged(i, func(d []byte) { d[48] ^= 0x04 }) // the window
			}
			fs[proposal+1].Data[47] = 0x14
			return fs
		}()},
		// Three fields between them, neither checksum verifying with any
		// 4-tuple: the Proposal after them names each field's.
		{"SYN's addresses and acknowledgement number, SYN-ACK's client port and timestamp", func() []rawFrame {
			fs := slices.Clone(clean)
			fs[syn] = damaged(syn, func(d []byte) { d[28] ^= 0xa0; d[30] ^= 0xd6; d[42] ^= 0x4d })
			fs[synack] = damaged(synack, func(d []byte) { d[36] ^= 0x27; d[65] ^= 0x05 })
			return fs
		}()},
	} {
		s, found := feedRaw(t, v.frames)
		if !strings.Contains(v.name, "unreadable") && slices.Contains(found, expert.NotCaptured.String()) && !slices.Contains(baseFound, expert.NotCaptured.String()) {
			t.Errorf("%s: findings %v: the capture holds every segment (one damaged)", v.name, found)
		}
		if got, want := flowTotalsOf(s), flowTotalsOf(base); got != want {
			t.Errorf("%s: CDCs and bytes %v, want %v", v.name, got, want)
		}
		if len(s.Conns) != 1 || s.Conns[0].Outcome != OutcomeSMCR || !s.Conns[0].OptionSYNACK {
			got := connOutcomes(&s)
			t.Errorf("%s: connections %q, findings %v; want one SMC-R", v.name, got, found)
		} else if c := &s.Conns[0]; c.Client != base.Conns[0].Client || c.TSYN != base.Conns[0].TSYN {
			t.Errorf("%s: client %v, SYN at %v; want %v, %v", v.name, c.Client, c.TSYN, base.Conns[0].Client, base.Conns[0].TSYN)
		} else if b := &base.Conns[0]; c.Flow[0].RST != b.Flow[0].RST || c.Flow[1].RST != b.Flow[1].RST {
			t.Errorf("%s: RST %v %v, want %v %v", v.name, c.Flow[0].RST, c.Flow[1].RST, b.Flow[0].RST, b.Flow[1].RST)
		}
		if d := findingDetail(&s, expert.Malformed); d != "" && !strings.Contains(d, "a damaged copy") {
			t.Errorf("%s: smc.malformed %q, want it said a damaged copy", v.name, d)
		}
	}
}

// TestDamagedFlagsDecline: decline-nordma.pcap with the flags of one
// segment damaged in the capture (its checksum failing): the server's ACK
// of the Proposal to RST and ACK (the Decline after it is read, no reset
// before it), and the SYN's to a SYN-ACK's, shown first (turned back into
// the client's SYN by the server's SYN-ACK, the server's direction begins
// there, not at the damaged segment's acknowledgement number, so its
// Decline is read). Each is the whole capture's fallback by that Decline.
func TestDamagedFlagsDecline(t *testing.T) {
	clean := readRawFrames(t, "../samples/decline-nordma.pcap")
	base, _ := feedRaw(t, clean)
	for _, v := range []struct {
		name  string
		i     int
		flags byte
	}{{"server ACK's flags to RST", 5, 0x14}, {"SYN's flags to a SYN-ACK's", 2, 0xb2}} { // frames 6 and 3
		fs := slices.Clone(clean)
		fs[v.i].Data = bytes.Clone(fs[v.i].Data)
		fs[v.i].Data[47] = v.flags
		s, found := feedRaw(t, fs)
		if len(s.Conns) != 1 || ConnDetail(&s.Conns[0]) != ConnDetail(&base.Conns[0]) || s.Conns[0].Client != base.Conns[0].Client {
			var got []string
			for i := range s.Conns {
				got = append(got, fmt.Sprintf("%v %s", s.Conns[i].Client, ConnDetail(&s.Conns[i])))
			}
			t.Errorf("%s: connections %q, findings %v; want %v %q", v.name, got, found, base.Conns[0].Client, ConnDetail(&base.Conns[0]))
		}
	}
}

// TestDamagedSYNSequence: a SYN whose sequence number the capture
// damaged (its checksum fails; its SYN-ACK acknowledges another) and the
// client's first CLC message damaged too: the client's bytes count from
// the sequence number the SYN-ACK acknowledges, the CLC stream begins
// again at the SYN-ACK, and the damaged message is judged by its checksum
// (a damaged copy, not the client's malformed message; its length, which
// claims bytes past its segment that ends in the whole message, is the
// damage: the message is read as sent). no-ueid.pcap's client Decline
// damaged: the whole capture's fallback by that Decline; pingpong.pcap's
// Proposal damaged: SMC-R.
func TestDamagedSYNSequence(t *testing.T) {
	for _, v := range []struct {
		name    string
		outcome Outcome
	}{{"no-ueid", OutcomeFallback}, {"pingpong", OutcomeSMCR}} {
		fs := readRawFrames(t, "../samples/"+v.name+".pcap")
		// The SYN's sequence number 16384 on; the CLC message's length 9
		// bytes past its segment's end (its stream waits for more).
		for i, off := range map[int]int{2: 40, 4: 72} { // frames 3 (SYN) and 5 (the client's CLC)
			fs[i].Data = bytes.Clone(fs[i].Data)
			fs[i].Data[off] += map[int]byte{2: 0x40, 4: 9}[i]
		}
		s, found := feedRaw(t, fs)
		if len(s.Conns) == 1 && v.outcome == OutcomeFallback && s.Conns[0].Fallback.Cause != CauseDecline {
			t.Errorf("%s: fallback %q, want the client's Decline (read at its own length)", v.name, ConnDetail(&s.Conns[0]))
		}
		if len(s.Conns) != 1 || s.Conns[0].Outcome != v.outcome || slices.Contains(found, expert.HandshakeFailed.String()) {
			got := connOutcomes(&s)
			t.Errorf("%s: connections %q, findings %v; want one, %v", v.name, got, found, v.outcome)
		}
	}
}

// TestDamagedSYNACKSequence: a SYN-ACK whose sequence number the capture
// damaged (its checksum fails; the client's first segment whose checksum
// verifies acknowledges another), alone or with its acknowledgement
// number: the server's bytes count from the one the client acknowledges,
// and its CLC stream begins again there (clcFlow.synAckDamaged), so the
// server's first message is read where it is, not taken for a copy of
// old bytes: each capture's outcome is the whole capture's.
func TestDamagedSYNACKSequence(t *testing.T) {
	for _, name := range []string{"decline-ueid", "pingpong", "multiconn"} {
		clean := readRawFrames(t, "../samples/"+name+".pcap")
		base, _ := feedRaw(t, clean)
		synAck := -1
		for i, f := range clean {
			if len(f.Data) > 14+20+14 && f.Data[23] == 6 && f.Data[14+20+13]&0x12 == 0x12 {
				synAck = i
				break
			}
		}
		for _, v := range []struct {
			what string
			at   []int
		}{{"sequence number", []int{38}}, {"sequence and acknowledgement numbers", []int{38, 45}}} {
			fs := slices.Clone(clean)
			fs[synAck].Data = bytes.Clone(fs[synAck].Data)
			for _, off := range v.at {
				fs[synAck].Data[off] += 0x29
			}
			s, _ := feedRaw(t, fs)
			if len(s.Conns) != len(base.Conns) {
				t.Errorf("%s, the SYN-ACK's %s damaged: %d connections, want %d", name, v.what, len(s.Conns), len(base.Conns))
				continue
			}
			for i := range s.Conns {
				if g, w := &s.Conns[i], &base.Conns[i]; g.Outcome != w.Outcome || ConnDetail(g) != ConnDetail(w) {
					t.Errorf("%s, the SYN-ACK's %s damaged: connection %d %v %q, want %v %q", name, v.what, g.ID, g.Outcome, ConnDetail(g), w.Outcome, ConnDetail(w))
				}
			}
		}
	}
}

// TestSwappedInPass: lossy.pcap with two adjacent requests of a go-back
// pass swapped by the capture (PSNs 0x2a670 and 0x2a671, frames 451 and
// 452), while a run out of sequence is open. The responder's ACK, with no
// NAK of the first, settles it as the capture's order; the pass's later
// copies were duplicates, which the ACK's repeats answer: no request is
// taken for a resend, none counted missed, as in the whole capture.
func TestSwappedInPass(t *testing.T) {
	clean := readRawFrames(t, "../samples/lossy.pcap")
	base, _ := feedRaw(t, clean)
	fs := slices.Clone(clean)
	fs[450], fs[451] = fs[451], fs[450]
	fs[450].CI.Timestamp, fs[451].CI.Timestamp = clean[450].CI.Timestamp, clean[451].CI.Timestamp
	s, _ := feedRaw(t, fs)
	got, want := s.Links[0].RC[DirC2S], base.Links[0].RC[DirC2S]
	if got.Retrans != want.Retrans || got.NotCaptured != want.NotCaptured || got.Reordered != want.Reordered+1 {
		t.Errorf("C->S retransmitted %d, not captured %d, reordered %d; want %d, %d, %d",
			got.Retrans, got.NotCaptured, got.Reordered, want.Retrans, want.NotCaptured, want.Reordered+1)
	}
	if got.OutOfSeq > want.OutOfSeq+1 {
		t.Errorf("C->S %d dropped out of sequence, want at most %d", got.OutOfSeq, want.OutOfSeq+1)
	}
	if a, b := flowTotalsOf(s), flowTotalsOf(base); a != b {
		t.Errorf("CDCs and bytes %v, want %v", a, b)
	}
}

// TestOffloadedPortDamaged: smcd-loopback.pcapng, whose TCP checksums
// were left to the NIC (loopback: the field holds the pseudo-header's
// sum, which covers the addresses, not the ports), with a port of one
// handshake segment damaged: the sequence numbers of the connection one
// port away make it that connection's copy, not a connection of its own.
func TestOffloadedPortDamaged(t *testing.T) {
	clean := readRawFrames(t, "../samples/smcd-loopback.pcapng")
	base, _ := feedRaw(t, clean)
	for _, v := range []struct {
		name      string
		i, offset int
	}{
		{"SYN-ACK's source port", 1, 35},
		{"Proposal's destination port", 2, 37},
		{"Accept's destination port", 3, 36},
		{"second connection's Confirm source port", 9, 34},
	} {
		fs := slices.Clone(clean)
		fs[v.i].Data = bytes.Clone(fs[v.i].Data)
		fs[v.i].Data[v.offset] ^= 0x41
		s, _ := feedRaw(t, fs)
		if len(s.Conns) != len(base.Conns) {
			t.Errorf("%s: %d connections, want %d", v.name, len(s.Conns), len(base.Conns))
			continue
		}
		for i := range s.Conns {
			if g, w := &s.Conns[i], &base.Conns[i]; g.Client != w.Client || g.Server != w.Server || g.Outcome != w.Outcome {
				t.Errorf("%s: connection %d %v -> %v %v, want %v -> %v %v", v.name, i+1, g.Client, g.Server, g.Outcome, w.Client, w.Server, w.Outcome)
			}
		}
	}
}

// TestDamagedSYNThenClient: ipv6.pcap whose SYN's source address the
// capture damaged (its checksum fails) and whose SYN-ACK it overwrote
// whole: the client's next segment, on the 4-tuple one field away and
// going on from the SYN's sequence number, moves the SYN's connection to
// its 4-tuple (no pending connection beside it, the whole capture's
// outcome).
func TestDamagedSYNThenClient(t *testing.T) {
	clean := readRawFrames(t, "../samples/ipv6.pcap")
	base, _ := feedRaw(t, clean)
	const syn, synack = 12, 13 // frames 13 and 14
	fs := slices.Clone(clean)
	fs[syn].Data = bytes.Clone(fs[syn].Data)
	fs[syn].Data[14+8+12] ^= 0x04
	fs[synack].Data = bytes.Clone(fs[synack].Data)
	for i := 14; i < len(fs[synack].Data); i++ {
		fs[synack].Data[i] = 0xaa
	}
	s, found := feedRaw(t, fs)
	if len(s.Conns) != 1 || s.Conns[0].Client != base.Conns[0].Client || s.Conns[0].Outcome != base.Conns[0].Outcome {
		var got []string
		for i := range s.Conns {
			got = append(got, fmt.Sprintf("%v %v %s", s.Conns[i].Client, s.Conns[i].Outcome, ConnDetail(&s.Conns[i])))
		}
		t.Errorf("connections %q, findings %v; want %v %v", got, found, base.Conns[0].Client, base.Conns[0].Outcome)
	}
}

// TestDamagedAcceptLength: multiconn.pcap's second connection (a reused
// link group) whose Accept's length field the capture damaged (8300 for
// 108, its checksum failing) and whose Confirm's GID it damaged too: the
// Accept, ending whole in its segment, is read at its own length (its
// token ties the server's CDCs to the connection), so the connection is
// one, its CDCs its own, not a second one joined from CDCs.
func TestDamagedAcceptLength(t *testing.T) {
	clean := readRawFrames(t, "../samples/multiconn.pcap")
	base, _ := feedRaw(t, clean)
	fs := slices.Clone(clean)
	// Frames 336 (the Accept's length, 108 to 8300) and 355 (a byte of
	// the Confirm's GID).
	for _, d := range []struct {
		i, off int
		x      byte
	}{{335, 66 + 5, 0x20}, {354, 66 + 25, 0x57}} {
		fs[d.i].Data = bytes.Clone(fs[d.i].Data)
		fs[d.i].Data[d.off] ^= d.x
	}
	s, found := feedRaw(t, fs)
	if len(s.Conns) != len(base.Conns) {
		t.Fatalf("%d connections, want %d (findings %v)", len(s.Conns), len(base.Conns), found)
	}
	for i := range s.Conns {
		g, w := &s.Conns[i], &base.Conns[i]
		if g.Client != w.Client || g.Outcome != w.Outcome || g.Flow[DirS2C].CDCs != w.Flow[DirS2C].CDCs {
			t.Errorf("connection %d: %v %v %d server CDCs, want %v %v %d", i+1, g.Client, g.Outcome, g.Flow[DirS2C].CDCs, w.Client, w.Outcome, w.Flow[DirS2C].CDCs)
		}
	}
}

// TestDamagedCLCSequence: a CLC message whose segment's sequence number
// the capture damaged (its checksum failing), away from its stream's
// place: where it holds one whole message that is the handshake's next
// step from its side, its sequence number is the damage and the message
// is read there. no-ueid.pcap's client Decline so damaged: its fallback
// (left out, the cause was not in the capture). multiconn.pcap's last
// connection (a reused link group) with its Confirm so damaged, and the
// Proposal's and Accept's GIDs: the whole capture's connections (there its
// CDCs would tie it to its link as well).
func TestDamagedCLCSequence(t *testing.T) {
	for _, v := range []struct {
		name   string
		damage map[int]int // frame index: byte offset XORed with 0x08
	}{
		{"multiconn", map[int]int{1257: 39, 1197: 66 + 25, 1155: 66 + 25}}, // frames 1258 (Confirm), 1198 and 1156 (the Accept's and Proposal's GIDs)
		{"no-ueid", map[int]int{4: 39}},                                    // frame 5 (Decline)
	} {
		clean := readRawFrames(t, "../samples/"+v.name+".pcap")
		base, _ := feedRaw(t, clean)
		fs := slices.Clone(clean)
		for i, off := range v.damage {
			fs[i].Data = bytes.Clone(fs[i].Data)
			fs[i].Data[off] ^= 0x08
		}
		s, found := feedRaw(t, fs)
		if len(s.Conns) != len(base.Conns) {
			t.Errorf("%s: %d connections, want %d (findings %v)", v.name, len(s.Conns), len(base.Conns), found)
			continue
		}
		for i := range s.Conns {
			if g, w := &s.Conns[i], &base.Conns[i]; g.Client != w.Client || ConnDetail(g) != ConnDetail(w) {
				t.Errorf("%s: connection %d %v %q, want %v %q", v.name, i+1, g.Client, ConnDetail(g), w.Client, ConnDetail(w))
			}
		}
	}
}

// TestDamagedSMCOption: a SYN or SYN-ACK whose SMC option the capture
// damaged in one byte or two (its checksum failing; the other bytes of
// kind, length and magic as sent; editcap -E overwrites kind and length
// with a two-byte run), or whole behind a NOP damaged into an option whose
// length runs past the header, still offered SMC (and its stream is
// followed: the client's first bytes, no CLC, say it fell back where the
// capture holds no SYN-ACK): fallback-nosmc.pcap's
// connection is the whole capture's fallback (its SYN-ACK without the
// option), not a plain TCP connection left out; pingpong.pcap's is timed
// from its SYN; option-echoed.pcap's client, whose first bytes are no CLC
// after a SYN-ACK with the option, is no fallback for want of the option,
// whether or not the capture holds the SYN.
func TestDamagedSMCOption(t *testing.T) {
	for _, v := range []struct {
		capture string
		at      int    // index of the segment damaged
		drop    []int  // indexes of frames left out of both captures
		damage  string // "bit" of the magic, "run" over kind and length, the NOP "before" it
	}{
		{"samples/fallback-nosmc", 2, nil, "bit"}, // frame 3: the SYN
		{"samples/fallback-nosmc", 2, nil, "run"},
		{"samples/fallback-nosmc", 2, nil, "before"},
		{"samples/fallback-nosmc", 2, []int{3}, "before"}, // its SYN-ACK not in the capture
		{"samples/pingpong", 2, nil, "bit"},
		{"testdata/expert/option-echoed", 5, nil, "bit"}, // frame 6: the SYN-ACK
		{"testdata/expert/option-echoed", 5, []int{4}, "bit"},
		{"testdata/expert/option-echoed", 5, []int{4}, "run"},
		{"testdata/expert/option-echoed", 5, nil, "before"},
	} {
		name := fmt.Sprintf("%s frame %d, frames %v left out, %s", v.capture, v.at+1, v.drop, v.damage)
		clean := readRawFrames(t, "../"+v.capture+".pcap")
		fs := slices.Clone(clean)
		fs[v.at].Data = bytes.Clone(fs[v.at].Data)
		i := bytes.Index(fs[v.at].Data, []byte{0xfe, 0x06, 0xe2, 0xd4, 0xc3, 0xd9})
		if i < 0 {
			t.Fatalf("%s: no SMC option", name)
		}
		switch d := fs[v.at].Data; v.damage {
		case "run":
			d[i], d[i+1] = 0x25, 0x00
		case "before":
			if d[i-1] != 0x01 {
				t.Fatalf("%s: % x before the SMC option, want a NOP", name, d[i-1])
			}
			d[i-1] = 0x74
		default:
			d[i+3] ^= 0x08
		}
		for j := len(v.drop) - 1; j >= 0; j-- {
			clean, fs = slices.Delete(clean, v.drop[j], v.drop[j]+1), slices.Delete(fs, v.drop[j], v.drop[j]+1)
		}
		base, _ := feedRaw(t, clean)
		s, found := feedRaw(t, fs)
		if len(base.Conns) != 1 || len(s.Conns) != 1 || s.Conns[0].Client != base.Conns[0].Client || ConnDetail(&s.Conns[0]) != ConnDetail(&base.Conns[0]) ||
			s.Conns[0].TSYN != base.Conns[0].TSYN {
			var got []string
			for i := range s.Conns {
				got = append(got, fmt.Sprintf("%v %s %v", s.Conns[i].Client, ConnDetail(&s.Conns[i]), s.Conns[i].TSYN))
			}
			t.Errorf("%s: connections %q, findings %v; want %v %q %v", name, got, found, base.Conns[0].Client, ConnDetail(&base.Conns[0]), base.Conns[0].TSYN)
		}
	}
}

// TestDamagedProposalLengthANCK: an ANCK handshake (handshake-credits.pcap)
// whose Proposal's length field the capture damaged: the Proposal, read at
// its own length, offers ANCK as sent, so the Accept and Confirm after it
// are read as ANCK's (their credits and vendor options), as in the whole
// capture.
func TestDamagedProposalLengthANCK(t *testing.T) {
	clean := readRawFrames(t, "../testdata/anck/handshake-credits.pcap")
	base, _ := feedRaw(t, clean)
	fs := slices.Clone(clean)
	const proposal = 7 // frame 8
	fs[proposal].Data = bytes.Clone(fs[proposal].Data)
	fs[proposal].Data[66+5] ^= 0x20
	s, found := feedRaw(t, fs)
	if len(s.Conns) != 1 || len(base.Conns) != 1 {
		t.Fatalf("%d connections, want 1 (findings %v)", len(s.Conns), found)
	}
	for _, ep := range [][2]*Endpoint{{&s.Conns[0].ServerEP, &base.Conns[0].ServerEP}, {&s.Conns[0].ClientEP, &base.Conns[0].ClientEP}} {
		if g, w := ep[0], ep[1]; !w.ANCK || g.ANCK != w.ANCK || g.InitCredits != w.InitCredits || g.Vendor != w.Vendor {
			t.Errorf("endpoint ANCK %v credits %d vendor %+v, want %v %d %+v", g.ANCK, g.InitCredits, g.Vendor, w.ANCK, w.InitCredits, w.Vendor)
		}
	}
}

// TestDamagedUnconfirmedLink: a first contact whose CONFIRM_LINK request
// is never answered (handshake-failed.pcap: TCP closes; ended-pending.pcap:
// the capture ends after the Confirm), with one segment or packet of it
// damaged or missed, ends as the clean capture does, not as SMC-R:
//   - the CONFIRM_LINK request's destination address damaged (its ICRC
//     fails): the capture shows the link's one packet all the same, so
//     the link is not one the capture cannot see (Link.Shown);
//   - the Accept's eyecatcher damaged (its checksum fails): the Confirm
//     after it says the client read an Accept (confirming), and the
//     connection, placed by the CONFIRM_LINK alone (placeHalfLink), waits
//     for its link;
//   - the Confirm's GID list smashed (malformed, its checksum failing):
//     the server's CONFIRM_LINK says it read the Confirm (handshakeRead);
//   - the Proposal or the Accept missed (the peer's ACK covers its
//     bytes): the Accept or the Confirm after it says it was read
//     (answered, handshakeRead);
//   - the client's FIN missed: the server's ACK of one sequence number
//     past the client's last says it (Flow.FINNotCaptured); or its TCP
//     header smashed, the frame unreadable: the same ACK says that frame
//     was the FIN, held damaged (smc.capture.unreadable).
func TestDamagedUnconfirmedLink(t *testing.T) {
	const proposal, accept, confirm, confirmLink, clientFIN = 7, 9, 11, 13, 14 // indexes of frames 8, 10, 12, 14, 15
	for _, v := range []struct {
		name, capture string
		damage        func(fs []rawFrame) []rawFrame
		finMissed     bool
		missed        uint64 // C->S bytes the capture missed
		unread        bool   // the FIN held in a frame damaged past reading
	}{
		{"CONFIRM_LINK's destination address", "handshake-failed", func(fs []rawFrame) []rawFrame {
			fs[confirmLink].Data[33] ^= 0x40
			return fs
		}, false, 0, false},
		{"Accept's eyecatcher", "handshake-failed", func(fs []rawFrame) []rawFrame {
			fs[accept].Data[len(fs[accept].Data)-2] ^= 0x82
			return fs
		}, false, 0, false},
		{"Accept's eyecatcher", "ended-pending", func(fs []rawFrame) []rawFrame {
			fs[accept].Data[len(fs[accept].Data)-2] ^= 0x82
			return fs
		}, false, 0, false},
		{"Confirm's GID list", "handshake-failed", func(fs []rawFrame) []rawFrame {
			for i := 217; i < 225; i++ {
				fs[confirm].Data[i] = 0xaa
			}
			return fs
		}, false, 0, false},
		{"client's FIN missed", "handshake-failed", func(fs []rawFrame) []rawFrame {
			return slices.Delete(fs, clientFIN, clientFIN+1)
		}, true, 0, false},
		{"Proposal and client's FIN missed", "handshake-failed", func(fs []rawFrame) []rawFrame {
			return slices.Delete(slices.Delete(fs, clientFIN, clientFIN+1), proposal, proposal+1)
		}, true, 156, false},
		{"Accept missed", "handshake-failed", func(fs []rawFrame) []rawFrame {
			return slices.Delete(fs, accept, accept+1)
		}, false, 0, false},
		{"client's FIN smashed from its header length", "handshake-failed", func(fs []rawFrame) []rawFrame {
			for i := 46; i < len(fs[clientFIN].Data); i++ {
				fs[clientFIN].Data[i] = 0xaa
			}
			return fs
		}, false, 0, true},
	} {
		t.Run(v.capture+" "+v.name, func(t *testing.T) {
			clean := readRawFrames(t, "../testdata/expert/"+v.capture+".pcap")
			base, _ := feedRaw(t, clean)
			fs := slices.Clone(clean)
			for i := range fs {
				fs[i].Data = bytes.Clone(fs[i].Data)
			}
			s, found := feedRaw(t, v.damage(fs))
			if len(s.Conns) != 1 || len(base.Conns) != 1 {
				t.Fatalf("%d connections, want 1", len(s.Conns))
			}
			c, w := &s.Conns[0], &base.Conns[0]
			if c.Outcome != w.Outcome || ConnDetail(c) != ConnDetail(w) || CloseInfo(c) != CloseInfo(w) {
				t.Errorf("%v %q, closed %q; want %v %q, closed %q (findings %v)",
					c.Outcome, ConnDetail(c), CloseInfo(c), w.Outcome, ConnDetail(w), CloseInfo(w), found)
			}
			if c.Flow[DirC2S].FINNotCaptured != v.finMissed || c.Flow[DirC2S].TCPNotCaptured != v.missed {
				t.Errorf("C->S FIN not captured %v, %d bytes not captured; want %v, %d",
					c.Flow[DirC2S].FINNotCaptured, c.Flow[DirC2S].TCPNotCaptured, v.finMissed, v.missed)
			}
			// roce.rc.not_captured names the FIN the capture missed.
			said := false
			for _, f := range s.Findings() {
				if f.ID == expert.NotCaptured && f.ObjectID == c.ID && strings.Contains(f.Detail, "the FIN the peer acknowledged") {
					said = true
				}
			}
			if said != v.finMissed {
				t.Errorf("roce.rc.not_captured names the FIN: %v, want %v (findings %v)", said, v.finMissed, found)
			}
			unread := false
			for _, f := range s.Findings() {
				if f.ID == expert.CaptureUnreadable && f.ObjectID == c.ID && f.First == clientFIN+1 {
					unread = true
				}
			}
			if unread != v.unread || v.unread && !c.Flow[DirC2S].FIN {
				t.Errorf("smc.capture.unreadable on frame %d: %v, want %v; C->S FIN %v (findings %v)", clientFIN+1, unread, v.unread, c.Flow[DirC2S].FIN, found)
			}
		})
	}
}

// TestMergedCapturesApart: each host's capture of both directions,
// merged with the clocks 0.3 s apart, holds every packet twice; the
// second of each is a copy (found by the time the two are apart, told by
// the SYN's copy while its connection runs), NAKs and resends between or
// not: one connection, no retransmission but the capture's own. The same
// capture played again after it ended (tcpreplay, bench/mkbig's rounds)
// holds its connection twice, a SYN byte for byte the first one's: two
// connections, nothing taken for a copy, the second noted replayed. And
// merged with its own copy cut to 96 bytes (the other host's snap
// length) 5 ms ahead: the cut copies are followed, the whole packets
// their copies.
func TestMergedCapturesApart(t *testing.T) {
	for _, name := range []string{"pingpong", "long", "multilink"} {
		clean := readRawFrames(t, "../samples/"+name+".pcap")
		base, _ := feedRaw(t, clean)
		merged, _ := feedRaw(t, mutate.Mutation{Kind: mutate.Twice, N: 300000}.Apply(clean))
		if got, want := len(merged.Conns), len(base.Conns); got != want {
			t.Errorf("%s merged 0.3 s apart: %d connections, want %d", name, got, want)
		}
		// Every TCP and RoCE frame: not ARP's and the like (Stats.Other).
		st, want := &merged.Stats, len(clean)-base.Stats.Other
		if st.CaptureDups != want || st.CaptureDupsApart != want || st.Retrans != base.Stats.Retrans {
			t.Errorf("%s merged 0.3 s apart: %d copies, %d of them apart, %d retransmissions; want %d, %d, %d",
				name, st.CaptureDups, st.CaptureDupsApart, st.Retrans, want, want, base.Stats.Retrans)
		}
		if st.CaptureApartNS < 299e6 || st.CaptureApartNS > 301e6 {
			t.Errorf("%s merged 0.3 s apart: copies %v after their originals", name, time.Duration(st.CaptureApartNS))
		}

		again := slices.Clone(clean)
		shift := clean[len(clean)-1].CI.Timestamp.Sub(clean[0].CI.Timestamp) + time.Second
		for _, f := range clean {
			f.CI.Timestamp = f.CI.Timestamp.Add(shift)
			again = append(again, f)
		}
		played, _ := feedRaw(t, again)
		if got, want := len(played.Conns), 2*len(base.Conns); got != want {
			t.Errorf("%s played twice: %d connections, want %d", name, got, want)
		}
		if played.Stats.CaptureDups != 0 {
			t.Errorf("%s played twice: %d frames taken for copies, want none", name, played.Stats.CaptureDups)
		}
		replayed := 0
		for _, f := range played.Findings() {
			if f.ID == expert.CaptureReplayed {
				replayed += f.Count
			}
		}
		if replayed != len(base.Conns) {
			t.Errorf("%s played twice: %d connections noted replayed (smc.capture.replayed), want %d", name, replayed, len(base.Conns))
		}
		for _, f := range merged.Findings() {
			if f.ID == expert.CaptureReplayed {
				t.Errorf("%s merged 0.3 s apart: %s", name, f.ID)
			}
		}

		// The other host's capture cut to 96 bytes, its clock 5 ms
		// ahead: its cut copies come first and are followed as they
		// came, the packets whole their copies; nothing is reordered,
		// missed or sent again.
		cut := mutate.Mutation{Kind: mutate.Snap, N: 96}.Apply(clean)
		for i := range cut {
			cut[i].CI.Timestamp = cut[i].CI.Timestamp.Add(-5 * time.Millisecond)
		}
		mixed := append(slices.Clone(cut), clean...)
		slices.SortStableFunc(mixed, func(a, b rawFrame) int { return a.CI.Timestamp.Compare(b.CI.Timestamp) })
		ms, _ := feedRaw(t, mixed)
		had := map[expert.ID]int{}
		for _, f := range base.Findings() {
			had[f.ID] += f.Count
		}
		for _, f := range ms.Findings() {
			switch f.ID {
			case expert.CaptureReordered, expert.NotCaptured, expert.RCRetransmission, expert.LLCRetransmitted, expert.SeqGap, expert.SeqDup:
				if f.Count > had[f.ID] {
					t.Errorf("%s and its 96-byte cut 5 ms ahead, merged: %s %d (whole capture: %d)", name, f.ID, f.Count, had[f.ID])
				}
			}
		}
		if got, want := len(ms.Conns), len(base.Conns); got != want {
			t.Errorf("%s and its 96-byte cut 5 ms ahead, merged: %d connections, want %d", name, got, want)
		}
	}
}

// TestDamagedHandshakeAndLink: a first contact (samples/pingpong.pcap) whose
// handshake and link setup the capture holds damaged as editcap -E
// damages them, each a byte or a few: the client's SYN with a NOP turned
// into the end of its options and its timestamp echo damaged (the SMC
// option after them unread: its SYN-ACK's echo says it was there), its
// Proposal and its Confirm (a
// byte of the Confirm's GID) failing their checksums with no segment of
// the client's verifying before, and the server's CONFIRM_LINK request
// failing its ICRC. The connection is still the one SMC-R first contact
// of the whole capture with every CDC on its link: the Confirm's GID is
// the one the Proposal and the Confirm's own GID list name, not a
// second link group's, and no handshake failed.
func TestDamagedHandshakeAndLink(t *testing.T) {
	clean, lt := testutil.ReadFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, clean)
	fs := slices.Clone(clean)
	damage := func(i int, f func(d []byte)) { damageAt(fs, i, f) }
	tcpAt := func(d []byte) int { return 14 + int(d[14]&0x0f)*4 }
	syn := slices.IndexFunc(fs, func(p rawFrame) bool {
		return len(p.Data) > 54 && p.Data[23] == 6 && p.Data[tcpAt(p.Data)+13] == 0x02
	})
	if syn < 0 {
		t.Fatal("no SYN")
	}
	damage(syn, func(d []byte) {
		o := tcpAt(d) + 20
		i := bytes.Index(d[o:], []byte{1, 3, 3}) // NOP, window scale
		if i < 0 {
			t.Fatal("SYN without NOP and window scale")
		}
		d[o+i] = 0      // end of option list
		d[o+i-1] = 0x25 // the timestamp echo's last byte, before it
	})
	proposal := firstCLC(t, lt, fs, decode.CLCTypeProposal)
	damage(proposal, func(d []byte) { d[tcpAt(d)+int(d[tcpAt(d)+12]>>4)*4+9] ^= 0x10 }) // a byte of its peer ID
	confirm := firstCLC(t, lt, fs, decode.CLCTypeConfirm)
	damage(confirm, func(d []byte) { d[tcpAt(d)+int(d[tcpAt(d)+12]>>4)*4+8+8+14] ^= 0x40 }) // the GID's IPv4 address, third byte
	llc := slices.IndexFunc(fs[confirm:], func(p rawFrame) bool {
		return len(p.Data) > 58 && p.Data[23] == 17 && p.Data[42] == 0x04 // RC SEND Only
	})
	if llc < 0 {
		t.Fatal("no SEND after the Confirm")
	}
	damage(confirm+llc, func(d []byte) {
		for i := 14 + 20 + 8 + 12; i < len(d)-4; i++ {
			d[i] = 0xAA
		}
	})
	s, found := feedRaw(t, fs)
	if len(s.Conns) != 1 || len(s.LinkGroups) != 1 {
		t.Fatalf("%d connections in %d link groups, findings %v: want 1 in 1", len(s.Conns), len(s.LinkGroups), found)
	}
	c, b := s.Conns[0], base.Conns[0]
	if c.Outcome != OutcomeSMCR || !c.FirstContact || slices.Contains(found, expert.HandshakeFailed.String()) {
		t.Errorf("outcome %v (%s), first contact %v, findings %v: want SMC-R first contact, no smc.handshake.failed", c.Outcome, c.Failure, c.FirstContact, found)
	}
	for d := range 2 {
		if got, want := c.Flow[d].CDCs, b.Flow[d].CDCs; got != want {
			t.Errorf("%v CDCs %d, want %d", Dir(d), got, want)
		}
	}
	if got := c.ClientEP.GID; got != b.ClientEP.GID {
		t.Errorf("client GID %v, want %v", got, b.ClientEP.GID)
	}
}

// TestDamagedConfirmGIDNoAccept: a connection on a link group that exists
// (multiconn.pcap's second) whose Accept the capture missed and whose
// Confirm it holds damaged in a byte of the GID: the CDCs to the queue
// pair and with the token the Confirm names are its own (56 bits agree;
// the GID is the damage), not a connection joined mid-stream, whether or
// not the Confirm's checksum could say it was damaged (unjudgedSums).
func TestDamagedConfirmGIDNoAccept(t *testing.T) {
	all, _, base, accepts, confirms := multiconnHandshakes(t)
	for _, unjudged := range []bool{false, true} {
		fs := slices.Clone(all)
		if unjudged {
			fs = unjudgedSums(fs)
		}
		d := bytes.Clone(fs[confirms[1]].Data)
		tcp := 14 + int(d[14]&0x0f)*4
		d[tcp+int(d[tcp+12]>>4)*4+8+8+14] ^= 0x40 // the GID's IPv4 address, third byte
		fs[confirms[1]].Data = d
		fs = slices.Delete(fs, accepts[1], accepts[1]+1)
		s, found := feedRaw(t, fs)
		if len(s.Conns) != len(base.Conns) {
			t.Fatalf("checksums unjudged %v: %d connections, findings %v: want %d", unjudged, len(s.Conns), found, len(base.Conns))
		}
		sameCDCs(t, fmt.Sprintf("checksums unjudged %v: ", unjudged), s, base)
	}
}

// TestDamagedBothGIDsReused: a reusing connection of
// samples/multiconn.pcap whose Accept and Confirm the capture holds each
// with a byte of its sender's GID damaged (both checksums fail), its
// Proposal's TTL damaged too (the GID it offered not vouched for), goes on
// the link whose queue pairs they name, each GID a byte off its own: the
// whole capture's connections, CDCs and link groups. The same GIDs in
// copies whose checksums verify are what the hosts sent: no link of the
// group's, a link group of its own.
func TestDamagedBothGIDsReused(t *testing.T) {
	all, lt, base, accepts, confirms := multiconnHandshakes(t)
	lgrs := func(s Snapshot) map[int]bool {
		m := map[int]bool{}
		for _, c := range s.Conns {
			m[c.LGR] = true
		}
		return m
	}
	for _, sent := range []bool{false, true} {
		fs := slices.Clone(all)
		proposals := clcFrames(t, lt, all, decode.CLCTypeProposal)
		damageAt(fs, proposals[1], func(d []byte) {
			d[14+8] ^= 0x01
			if sent {
				crafted.FixIPv4TCP(d)
			}
		})
		for _, i := range []int{accepts[1], confirms[1]} {
			damageAt(fs, i, func(d []byte) {
				tcpPayload(d)[8+8+2] ^= 0xdc // the GID's third byte
				if sent {
					crafted.FixIPv4TCP(d)
				}
			})
		}
		s, found := feedRaw(t, fs)
		if sent {
			if len(lgrs(s)) != 2 {
				t.Errorf("GIDs as sent: link groups %v, want the connection's own beside the first's", lgrs(s))
			}
			continue
		}
		if len(s.Conns) != len(base.Conns) || len(lgrs(s)) != len(lgrs(base)) {
			t.Fatalf("%d connections on link groups %v, findings %v: want %d on %v", len(s.Conns), lgrs(s), found, len(base.Conns), lgrs(base))
		}
		sameCDCs(t, "", s, base)
	}
}

// multiconnHandshakes is samples/multiconn.pcap, its link type, its
// snapshot, and the indexes of its frames holding an Accept and a Confirm
// (the second of each a reusing connection's).
func multiconnHandshakes(t *testing.T) (all []rawFrame, lt layers.LinkType, base Snapshot, accepts, confirms []int) {
	t.Helper()
	all, lt = testutil.ReadFrames(t, "../samples/multiconn.pcap")
	base, _ = feedRaw(t, all)
	accepts = clcFrames(t, lt, all, decode.CLCTypeAccept)
	confirms = clcFrames(t, lt, all, decode.CLCTypeConfirm)
	if len(accepts) < 2 || len(confirms) < 2 {
		t.Fatalf("%d Accepts, %d Confirms", len(accepts), len(confirms))
	}
	return all, lt, base, accepts, confirms
}

// sameCDCs wants each connection of s to count the CDCs of base's.
func sameCDCs(t *testing.T, label string, s, base Snapshot) {
	t.Helper()
	for i, c := range s.Conns {
		for dir := range 2 {
			if got, want := c.Flow[dir].CDCs, base.Conns[i].Flow[dir].CDCs; got != want {
				t.Errorf("%sconnection %d %v: CDCs %d, want %d", label, c.ID, Dir(dir), got, want)
			}
		}
	}
}

// TestDamagedAcceptGIDFirstRequests: a first contact (samples/pingpong.pcap)
// whose Accept the capture holds with a byte of the server's GID damaged
// and whose link's first requests of each direction (the CONFIRM_LINK
// exchange) it holds damaged too (their ICRCs fail): the first request of
// a direction whose ICRC verifies, a few PSNs past the first one the
// Accept and Confirm announced, keys the link again (two of its key's
// three parts are the link's, the PSN the one expected shortly), both
// directions with it. The connection is the whole capture's SMC-R first
// contact on one link group, not a handshake that failed beside a link
// group joined mid-stream.
func TestDamagedAcceptGIDFirstRequests(t *testing.T) {
	all, lt := testutil.ReadFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, all)
	fs := slices.Clone(all)
	damage := func(i int, f func(d []byte)) { damageAt(fs, i, f) }
	accept := firstCLC(t, lt, fs, decode.CLCTypeAccept)
	damage(accept, func(d []byte) {
		tcp := 14 + int(d[14]&0x0f)*4
		d[tcp+int(d[tcp+12]>>4)*4+8+8+14] ^= 0x40 // the GID's IPv4 address, third byte
	})
	confirm := firstCLC(t, lt, fs, decode.CLCTypeConfirm)
	sends := 0
	for i := confirm + 1; i < len(fs) && sends < 2; i++ {
		if d := fs[i].Data; len(d) > 58 && d[23] == 17 && d[42] == 0x04 { // RC SEND Only
			damage(i, func(d []byte) { d[len(d)-10] ^= 0x01 })
			sends++
		}
	}
	s := oneSMCR(t, fs)
	if l, b := s.Links[0], base.Links[0]; l.Client.Addr != b.Client.Addr || l.Server.Addr != b.Server.Addr {
		t.Errorf("link %v -> %v, want %v -> %v", l.Client.Addr, l.Server.Addr, b.Client.Addr, b.Server.Addr)
	}
}

// TestBlindHandshakeFirstCDCsDamaged: a first contact (samples/pingpong.pcap)
// whose Accept and Confirm the capture missed and whose first CDC of each
// direction it holds damaged (their ICRCs fail): its link group is made at
// the server's CONFIRM_LINK request, which the capture holds, so the
// group came up while the capture ran and every connection on it too; the
// first CDCs followed (sequence 2) belong to the one handshake the
// capture showed between those hosts, not to a connection joined
// mid-stream.
func TestBlindHandshakeFirstCDCsDamaged(t *testing.T) {
	all, lt := testutil.ReadFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, all)
	accept := firstCLC(t, lt, all, decode.CLCTypeAccept)
	confirm := firstCLC(t, lt, all, decode.CLCTypeConfirm)
	var fs []rawFrame
	firsts := 0
	eachRaw(t, "cdc", lt, all, func(f *capture.Frame) {
		i := f.Number - 1
		if i == accept || i == confirm {
			return
		}
		p := all[i]
		if f.CDC != nil && f.CDC.Seq == 1 {
			p.Data = bytes.Clone(p.Data)
			p.Data[len(p.Data)-35] ^= 0x01 // two bytes of its cursors: no one byte's mend explains it, nor its reserved bytes zeroed
			p.Data[len(p.Data)-27] ^= 0x01
			firsts++
		}
		fs = append(fs, p)
	})
	if firsts != 2 {
		t.Fatalf("%d first CDCs", firsts)
	}
	s, found := feedRaw(t, fs)
	if len(s.Conns) != 1 {
		t.Fatalf("%d connections, findings %v: want 1", len(s.Conns), found)
	}
	c := s.Conns[0]
	if c.Outcome != OutcomeSMCR || c.Inferred {
		t.Errorf("outcome %v, inferred %v: want SMC-R from its handshake", c.Outcome, c.Inferred)
	}
	for d := range 2 {
		if got, want := c.Flow[d].CDCs, base.Conns[0].Flow[d].CDCs-1; got != want {
			t.Errorf("%v CDCs %d, want %d (the first damaged)", Dir(d), got, want)
		}
	}
}

// TestConfirmQPNOffNoAccept: a first contact (samples/pingpong.pcap) whose
// Accept the capture missed and whose Confirm names another queue pair
// than the one the link's CDCs go to, its checksum verifying (a damaged
// copy whose damage no checksum shows: every segment of the direction
// damaged, or a capture edited without them): the first S->C CDC followed,
// to the link's queue pair with the Confirm's token and GID, is the
// connection's (a host's alert tokens are one per connection), not a
// connection joined mid-stream, whether it is the connection's first or,
// that one held damaged, its second.
func TestConfirmQPNOffNoAccept(t *testing.T) {
	all, lt := testutil.ReadFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, all)
	accept := firstCLC(t, lt, all, decode.CLCTypeAccept)
	confirm := firstCLC(t, lt, all, decode.CLCTypeConfirm)
	d := bytes.Clone(all[confirm].Data)
	tcp := 14 + int(d[14]&0x0f)*4
	d[tcp+int(d[tcp+12]>>4)*4+8+8+16+6] ^= 0xc5 // the QPN's first byte
	fixed := resegment(t, rawFrame{CI: all[confirm].CI, Data: d}, len(d))
	if len(fixed) != 1 {
		t.Fatalf("Confirm made %d segments", len(fixed))
	}
	// The first S->C CDC: to the client's queue pair.
	firstS2C := -1
	eachRaw(t, "cdc", lt, all, func(f *capture.Frame) {
		if f.CDC != nil && f.CDC.Seq == 1 && f.BTH != nil && f.BTH.DestQP == base.Links[0].Client.QPN && firstS2C < 0 {
			firstS2C = f.Number - 1
		}
	})
	if firstS2C < 0 {
		t.Fatal("no first S->C CDC")
	}
	for _, firstDamaged := range []bool{false, true} {
		fs := slices.Clone(all)
		fs[confirm] = fixed[0]
		lost := 0
		if firstDamaged {
			// Two bytes: no one byte's mend explains it, and the next
			// CDC, sequence 2, is the first one followed.
			p := bytes.Clone(fs[firstS2C].Data)
			p[len(p)-35] ^= 0x01
			p[len(p)-27] ^= 0x01
			fs[firstS2C].Data = p
			lost = 1
		}
		fs = slices.Delete(fs, accept, accept+1)
		s, found := feedRaw(t, fs)
		if len(s.Conns) != 1 {
			t.Fatalf("first CDC damaged %v: %d connections, findings %v: want 1", firstDamaged, len(s.Conns), found)
		}
		if got, want := s.Conns[0].Flow[DirS2C].CDCs, base.Conns[0].Flow[DirS2C].CDCs-lost; got != want {
			t.Errorf("first CDC damaged %v: S->C CDCs %d, want %d", firstDamaged, got, want)
		}
		if got, want := s.Conns[0].Flow[DirC2S].CDCs, base.Conns[0].Flow[DirC2S].CDCs; got != want {
			t.Errorf("first CDC damaged %v: C->S CDCs %d, want %d", firstDamaged, got, want)
		}
	}
}

// unjudgedSums returns frames with every TCP segment's checksum made
// wrong, as a capture edited without them (or damaged in every segment)
// holds them: none verifies, so none that fails is judged damage.
func unjudgedSums(frames []rawFrame) []rawFrame {
	out := slices.Clone(frames)
	for i, p := range out {
		if d := p.Data; len(d) > 54 && d[12] == 0x08 && d[13] == 0 && d[23] == 6 {
			d = bytes.Clone(d)
			tcp := 14 + int(d[14]&0x0f)*4
			d[tcp+16] ^= 0x55
			out[i].Data = d
		}
	}
	return out
}

// TestMalformedAcceptUnjudged: a first contact (samples/pingpong.pcap) in
// a capture where no TCP checksum verifies (unjudgedSums), its Accept
// malformed (its trailer damaged): a malformed message is then the
// sender's as far as the TCP side can tell, but the client's Confirm
// after it places the connection, and where the capture lacks that
// Confirm, the link group that came up between the hosts right after,
// its first CDCs (and CONFIRM_LINK request) damaged, carries a connection
// joined from CDCs whose first followed are among its first: the
// handshake's (adoptJoined), which did not fail.
func TestMalformedAcceptUnjudged(t *testing.T) {
	all, lt := testutil.ReadFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, all)
	accept := firstCLC(t, lt, all, decode.CLCTypeAccept)
	confirm := firstCLC(t, lt, all, decode.CLCTypeConfirm)
	for _, withConfirm := range []bool{true, false} {
		fs := unjudgedSums(all)
		d := bytes.Clone(fs[accept].Data)
		d[len(d)-2] ^= 0x40 // the trailer's eyecatcher
		fs[accept].Data = d
		lost := 0
		if !withConfirm {
			// The first CDC of each direction and the server's
			// CONFIRM_LINK request damaged past mending (two bytes).
			eachRaw(t, "first", lt, all, func(f *capture.Frame) {
				first := f.CDC != nil && f.CDC.Seq == 1 || f.LLC != nil && f.LLC.Type.Base() == decode.LLCConfirmLink && f.Number-1 < confirm+3
				if i := f.Number - 1; first {
					p := bytes.Clone(fs[i].Data)
					p[len(p)-35] ^= 0x01
					p[len(p)-27] ^= 0x01
					fs[i].Data = p
					if f.CDC != nil {
						lost++
					}
				}
			})
			fs = slices.Delete(fs, confirm, confirm+1)
		}
		s, found := feedRaw(t, fs)
		if slices.Contains(found, expert.HandshakeFailed.String()) {
			t.Errorf("Confirm %v: findings %v: want no smc.handshake.failed", withConfirm, found)
		}
		cdcs := 0
		for _, c := range s.Conns {
			if c.Outcome == OutcomeFailed {
				t.Errorf("Confirm %v: connection %d failed: %s", withConfirm, c.ID, c.Failure)
			}
			if c.Client == base.Conns[0].Client {
				cdcs = c.Flow[DirC2S].CDCs + c.Flow[DirS2C].CDCs
			}
		}
		if want := base.Conns[0].Flow[DirC2S].CDCs + base.Conns[0].Flow[DirS2C].CDCs - lost; cdcs != want {
			t.Errorf("Confirm %v: the handshake's connection has %d CDCs, want %d", withConfirm, cdcs, want)
		}
	}
}

// TestConfirmLinkKeysTwoParts: a first contact (samples/pingpong.pcap)
// whose Accept the capture holds with its QPN damaged and whose Confirm
// with two bytes of its GID damaged, so that the client's requests carry
// only one part of the key those messages gave (the server's address),
// and whose server's CONFIRM_LINK request is damaged too: the client's
// CONFIRM_LINK response, at the first PSN its Confirm announced and
// naming the Confirm's queue pair, keys the link (both directions), and
// the connection is the whole capture's SMC-R first contact on one link
// group.
func TestConfirmLinkKeysTwoParts(t *testing.T) {
	all, lt := testutil.ReadFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, all)
	fs := slices.Clone(all)
	damage := func(i int, f func(d []byte, clc int)) {
		d := bytes.Clone(fs[i].Data)
		tcp := 14 + int(d[14]&0x0f)*4
		f(d, tcp+int(d[tcp+12]>>4)*4)
		fs[i].Data = d
	}
	accept := firstCLC(t, lt, fs, decode.CLCTypeAccept)
	damage(accept, func(d []byte, clc int) { d[clc+8+8+16+6+2] ^= 0x0c }) // the QPN's last byte
	confirm := firstCLC(t, lt, fs, decode.CLCTypeConfirm)
	damage(confirm, func(d []byte, clc int) {
		d[clc+8+8+13] ^= 0x10 // the GID's IPv4 address, second and third bytes
		d[clc+8+8+14] ^= 0x40
	})
	req := -1
	eachRaw(t, "llc", lt, fs, func(f *capture.Frame) {
		if f.LLC != nil && f.LLC.Type.Base() == decode.LLCConfirmLink && req < 0 {
			req = f.Number - 1
		}
	})
	if req < 0 {
		t.Fatal("no CONFIRM_LINK")
	}
	p := bytes.Clone(fs[req].Data)
	p[len(p)-10] ^= 0x01
	p[len(p)-20] ^= 0x01
	fs[req].Data = p
	s := oneSMCR(t, fs)
	if l, b := s.Links[0], base.Links[0]; l.Client.Addr != b.Client.Addr || l.Server.QPN != b.Server.QPN {
		t.Errorf("link client %v server QPN %#x, want %v %#x", l.Client.Addr, l.Server.QPN, b.Client.Addr, b.Server.QPN)
	}
}

// oneSMCR feeds frames and checks that they hold one SMC-R connection, in
// one link group, no handshake failed; it returns the snapshot.
func oneSMCR(t *testing.T, frames []rawFrame) Snapshot {
	t.Helper()
	s, found := feedRaw(t, frames)
	if len(s.Conns) != 1 || len(s.LinkGroups) != 1 {
		t.Fatalf("%d connections in %d link groups, findings %v: want 1 in 1", len(s.Conns), len(s.LinkGroups), found)
	}
	if c := s.Conns[0]; c.Outcome != OutcomeSMCR || slices.Contains(found, expert.HandshakeFailed.String()) {
		t.Errorf("outcome %v (%s), findings %v: want SMC-R, no smc.handshake.failed", c.Outcome, c.Failure, found)
	}
	return s
}

// damageAt changes the bytes of frames[i] by f, on a copy of them.
func damageAt(frames []rawFrame, i int, f func(d []byte)) {
	d := bytes.Clone(frames[i].Data)
	f(d)
	frames[i].Data = d
}

// TestServerDeclineStage: a server's Decline answers a Proposal, also
// where the capture does not hold it (missed, or damaged past reading):
// "after Proposal", never "instead of Proposal", which only a client's
// Decline can be.
func TestServerDeclineStage(t *testing.T) {
	const proposal = 4 // index of decline-nordma.pcap's frame 5
	for _, v := range []struct {
		name   string
		damage func(fs []rawFrame) []rawFrame
	}{
		{"Proposal missed", func(fs []rawFrame) []rawFrame { return slices.Delete(fs, proposal, proposal+1) }},
		{"Proposal filled from its EtherType", func(fs []rawFrame) []rawFrame {
			fillAA(fs[proposal].Data, 12)
			return fs
		}},
	} {
		t.Run(v.name, func(t *testing.T) {
			s, found := feedDamaged(t, "../samples/decline-nordma.pcap", v.damage)
			if len(s.Conns) != 1 {
				t.Fatalf("%d connections, want 1", len(s.Conns))
			}
			c := &s.Conns[0]
			if c.Outcome != OutcomeFallback || c.Fallback.By != DirS2C || c.Fallback.Stage != StageAccept {
				t.Errorf("%v by %v, stage %q; want a fallback by the server's Decline after Proposal (findings %v)", c.Outcome, c.Fallback.By, c.Fallback.Stage, found)
			}
		})
	}
}

// TestReusedByCDCs: a connection placed by its CDCs, its Accept and
// Confirm missed or damaged past reading, on a link group the capture
// showed before its first frame is a reused group's (a first contact's
// group shows only after its Confirm): "reused link group; ..." as the
// whole capture says "reused link group". The first contact, its
// messages missed as well, is not said to reuse anything.
func TestReusedByCDCs(t *testing.T) {
	const accept, confirm = 335, 354       // indexes of multiconn.pcap's frames 336 and 355: connection 2's
	const firstAccept, firstConfirm = 6, 7 // frames 7 and 8: connection 1's, the first contact's
	for _, v := range []struct {
		name   string
		port   uint16 // the connection's client port
		reused bool
		damage func(fs []rawFrame) []rawFrame
	}{
		{"missed", 36946, true, func(fs []rawFrame) []rawFrame {
			return slices.Delete(slices.Delete(fs, confirm, confirm+1), accept, accept+1)
		}},
		{"filled from their EtherType", 36946, true, func(fs []rawFrame) []rawFrame {
			fillAA(fs[accept].Data, 12)
			fillAA(fs[confirm].Data, 12)
			return fs
		}},
		{"the first contact's filled", 36936, false, func(fs []rawFrame) []rawFrame {
			fillAA(fs[firstAccept].Data, 12)
			fillAA(fs[firstConfirm].Data, 12)
			return fs
		}},
	} {
		t.Run(v.name, func(t *testing.T) {
			s, found := feedDamaged(t, "../samples/multiconn.pcap", v.damage)
			var c *Conn
			for i := range s.Conns {
				if s.Conns[i].Client.Port() == v.port {
					c = &s.Conns[i]
				}
			}
			if c == nil {
				t.Fatalf("no connection from port %d (findings %v)", v.port, found)
			}
			d := ConnDetail(c)
			if c.Outcome != OutcomeSMCR || strings.HasPrefix(d, "reused link group") != v.reused {
				t.Errorf("%v %q, want SMC-R, reused link group %v", c.Outcome, d, v.reused)
			}
		})
	}
}

// TestMalformedSumsFilled: a Proposal whose trailer is damaged, its
// segment's checksum failing, where the SYN and SYN-ACK before it were
// damaged too: nothing told a damaged copy from a capture whose
// checksums were never filled in, and the handshake failed on it
// (malformed). The server's ACK after it verifies: the checksums are
// filled in, the Proposal was a damaged copy its receiver never read.
// With nothing after it but the TCP close (the Accept and Confirm, and
// the RoCE traffic, left out), the handshake is not followed to its
// end, not failed.
func TestMalformedSumsFilled(t *testing.T) {
	const syn, synAck, proposal, ack = 2, 3, 4, 5 // frames 3, 4, 5, 6 of pingpong.pcap
	all := readRawFrames(t, "../samples/pingpong.pcap")
	frames := append(slices.Clone(all[:ack+1]), all[4019], all[4021], all[4022], all[4023]) // the FINs and last ACKs
	for _, i := range []int{syn, synAck, proposal} {
		frames[i].Data = slices.Clone(frames[i].Data)
	}
	frames[syn].Data[34+14] ^= 0x04    // the window
	frames[synAck].Data[34+14] ^= 0x04 // the window
	p := frames[proposal].Data
	p[len(p)-1] ^= 0x01 // the trailer's eyecatcher
	s, found := feedRaw(t, frames)
	if len(s.Conns) != 1 {
		t.Fatalf("%d connections, want 1 (findings %v)", len(s.Conns), found)
	}
	c := &s.Conns[0]
	if c.Outcome != OutcomePending || !strings.Contains(ConnDetail(c), "damaged") {
		t.Errorf("%v %q, want pending, its CLC message damaged (findings %v)", c.Outcome, ConnDetail(c), found)
	}
	if slices.Contains(found, expert.HandshakeFailed.String()) {
		t.Errorf("smc.handshake.failed (findings %v)", found)
	}
	if d := findingDetail(&s, expert.Malformed); !strings.HasSuffix(d, "(in a segment whose TCP checksum fails: a damaged copy)") {
		t.Errorf("smc.malformed %q, want it said a damaged copy", d)
	}
}

// TestWritesAfterFIN: lossy.pcap without its first connection's closing
// CDCs (frames 180 and 183: the capture missed them) and without the
// second connection's SYN, SYN-ACK and CLC messages (frames 196 to 209):
// the second reuses the first one's RMBs (smc_buf_get_slot), so its WRITEs
// carry the rkeys the first one's did. The first one's TCP sent its FIN
// both ways before them (a side's FIN comes after its close CDC,
// smc_close_active), so those WRITEs are not the first connection's: its
// WRITE bytes stay at most the whole capture's, the second's CDCs claim
// them; its close column says each side's close CDC is not in the
// capture.
func TestWritesAfterFIN(t *testing.T) {
	whole := feedFile(t, "../samples/lossy.pcap", Options{Unshared: true}, 0).Snapshot()
	frames := readRawFrames(t, "../samples/lossy.pcap")
	for _, n := range []int{209, 204, 198, 197, 196, 183, 180} {
		frames = mutate.Mutation{Kind: mutate.Drop, At: n - 1}.Apply(frames)
	}
	s, _ := feedRaw(t, frames)
	var first, later *Conn
	for i := range s.Conns {
		switch c := &s.Conns[i]; {
		case c.Client.Port() == whole.Conns[0].Client.Port():
			first = c
		case c.Inferred:
			later = c
		}
	}
	if first == nil || later == nil {
		t.Fatalf("connections %q: want the first one and one joined from CDCs", connOutcomes(&s))
	}
	for d := range first.Flow {
		if got, want := first.Flow[d].WriteBytes, whole.Conns[0].Flow[d].WriteBytes; got > want {
			t.Errorf("%v: the first connection has %d WRITE bytes, the whole capture %d: a later connection's are counted as its", Dir(d), got, want)
		}
	}
	if got, want := later.Flow[DirC2S].WriteBytes, whole.Conns[1].Flow[DirC2S].WriteBytes; got != want {
		t.Errorf("the later connection has %d C>S WRITE bytes, want the whole capture's %d", got, want)
	}
	// Each side's close CDC is among the requests the responder took that
	// the capture missed, before its FIN.
	if got, want := CloseInfo(first), "client close CDC not in the capture, client FIN, server close CDC not in the capture, server FIN"; got != want {
		t.Errorf("the first connection's close %q, want %q", got, want)
	}
}

// TestMoveNeedsDeletion: multilink.pcap without link 2's setup (frames 13,
// 16, 20, 22), both failover validations (985, 989) and the DELETE_LINK
// exchange of link 2 (987, 990, 993): the connection's next CDC on link 1
// goes on its token and sequence number, but nothing says link 2 was
// this group's (no DELETE_LINK names a link it lacks), so the groups stay
// apart: a token and sequence number two hosts' counters may both give
// move nothing on their own (TestThinnedHandshakes holds the copy with the
// DELETE_LINK, whose groups are one).
func TestMoveNeedsDeletion(t *testing.T) {
	frames := readRawFrames(t, "../samples/multilink.pcap")
	for _, n := range []int{993, 990, 989, 987, 985, 22, 20, 16, 13} {
		frames = mutate.Mutation{Kind: mutate.Drop, At: n - 1}.Apply(frames)
	}
	s, _ := feedRaw(t, frames)
	if len(s.LinkGroups) != 2 {
		t.Errorf("%d link groups, want 2: nothing ties link 2 to the first", len(s.LinkGroups))
	}
	for _, l := range s.Links {
		for _, e := range l.History {
			if strings.Contains(e.What, "merged into") {
				t.Errorf("link %d, frame %d: %s", l.ID, e.Frame, e.What)
			}
		}
	}
}

// TestDamagedFINProven: lossy.pcap without the client's close CDC (frame
// 180), its FIN (184) a copy whose TCP checksum fails. Linux sends the
// close CDC before the FIN, so the Close column says the capture lacks it
// where the stream proves the damaged copy's FIN the client's: the
// server's ACK of exactly the sequence number after it, or the client's
// next segment, an ACK alone, standing there. A FIN flag that was the
// damage (the client's ACK of frame 9) is proven by neither: the next
// segment stands a number short, the server's ACKs go past it.
func TestDamagedFINProven(t *testing.T) {
	const client = "client close CDC not in the capture, client FIN"
	flip := func(n, off int, mask byte) mutate.Mutation {
		return mutate.Mutation{Kind: mutate.Flip, At: n - 1, N: off, Mask: mask}
	}
	const sum = 14 + 20 + 17 // the TCP checksum's low byte (IPv4, no options)
	for _, tc := range []struct {
		name    string
		flips   []mutate.Mutation
		want    string
		finSent int // the client's finSentFrame, frame 180 left out
	}{
		{"the server's ACK", []mutate.Mutation{flip(184, sum, 0x01)}, client, 183},
		{"the client's next segment", []mutate.Mutation{flip(184, sum, 0x01), flip(185, sum, 0x01)}, client, 183},
		{"a FIN flag the damage", []mutate.Mutation{flip(9, 14+20+13, 0x01)}, client, 183},
		{"no proof", []mutate.Mutation{flip(184, sum, 0x01), flip(185, sum, 0x01), flip(186, sum, 0x01)}, "client FIN", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames := readRawFrames(t, "../samples/lossy.pcap")
			frames = applied(frames, tc.flips...)
			frames = mutate.Mutation{Kind: mutate.Drop, At: 179}.Apply(frames)
			s, _ := feedRaw(t, frames)
			var first *Conn
			for i := range s.Conns {
				if c := &s.Conns[i]; c.Client.Port() == 42572 {
					first = c
				}
			}
			if first == nil {
				t.Fatalf("connections %q: want the first (port 42572)", connOutcomes(&s))
			}
			if got := first.Flow[DirC2S].finSentFrame; got != tc.finSent {
				t.Errorf("the client's FIN taken as sent in frame %d, want %d", got, tc.finSent)
			}
			if got := CloseInfo(first); !strings.HasPrefix(got, tc.want+",") {
				t.Errorf("close %q, want it to begin %q", got, tc.want)
			}
		})
	}
}

// TestDamagedAcceptGID: pingpong.pcap with a byte of the server's GID and
// one of its initial PSN in its CLC Accept damaged (the segment's checksum
// fails), with and without the link's CONFIRM_LINK exchange: the link's
// first whole packets come to the server's QP from an address the Accept
// does not name, at PSNs it does not lead to. An RC QP takes packets from
// its one peer, so the link is the Accept's, keyed by its traffic: one
// connection, SMC-R, in one link group, every CDC its own.
func TestDamagedAcceptGID(t *testing.T) {
	whole := feedFile(t, "../samples/pingpong.pcap", Options{Unshared: true}, 0).Snapshot()
	const accept = 14 + 20 + 32 // the CLC Accept in frame 7
	for _, tc := range []struct {
		name string
		drop []int
	}{
		{"GID and PSN", nil},
		{"without CONFIRM_LINK", []int{12, 11, 10, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames := readRawFrames(t, "../samples/pingpong.pcap")
			frames = mutate.Mutation{Kind: mutate.Flip, At: 6, N: accept + 16 + 3, Mask: 0x80}.Apply(frames) // GID
			frames = mutate.Mutation{Kind: mutate.Flip, At: 6, N: accept + 63, Mask: 0x66}.Apply(frames)     // PSN
			for _, n := range tc.drop {
				frames = mutate.Mutation{Kind: mutate.Drop, At: n - 1}.Apply(frames)
			}
			s, _ := feedRaw(t, frames)
			if len(s.Conns) != 1 || len(s.LinkGroups) != 1 {
				t.Fatalf("connections %q in %d link groups, want one in one", connOutcomes(&s), len(s.LinkGroups))
			}
			c := &s.Conns[0]
			if c.Outcome != OutcomeSMCR {
				t.Errorf("outcome %v (%s), want SMC-R", c.Outcome, c.Failure)
			}
			// (The server's initial PSN came in the damaged copy: S>C
			// requests before it read as sent again, left out.)
			if got, want := c.Flow[DirC2S].CDCs, whole.Conns[0].Flow[DirC2S].CDCs; got != want {
				t.Errorf("C>S: %d CDCs, want the whole capture's %d", got, want)
			}
			if c.Flow[DirS2C].CDCs == 0 {
				t.Errorf("S>C: no CDC, want the link's")
			}
		})
	}
}

// TestDamagedConfirmQPAndGID: multiconn.pcap's second connection (it
// reuses the group) without its Proposal and Accept (frames 314, 336), its Confirm's copy
// (355) with a byte of its GID and of its queue pair damaged: only the
// token is the Confirm's. The connection's first CDC to the client, on a
// link between the connection's hosts, carries that token (a host gives
// each live connection its own): the connection is SMC-R with its CDCs,
// not one joined mid-stream beside a handshake that never ends.
func TestDamagedConfirmQPAndGID(t *testing.T) {
	const clc = 14 + 20 + 32
	frames := readRawFrames(t, "../samples/multiconn.pcap")
	frames = applied(frames, []mutate.Mutation{
		{Kind: mutate.Flip, At: 354, N: clc + 40, Mask: 0x40},     // the Confirm's QPN
		{Kind: mutate.Flip, At: 354, N: clc + 16 + 1, Mask: 0xae}, // its GID
		{Kind: mutate.Drop, At: 335},                              // the Accept
		{Kind: mutate.Drop, At: 313},                              // the Proposal (its GID would mend the Confirm's)
	}...)
	s, _ := feedRaw(t, frames)
	var second *Conn
	for i := range s.Conns {
		c := &s.Conns[i]
		if c.Inferred {
			t.Errorf("connection %d joined mid-stream (from CDCs), want its CDCs the second connection's", c.ID)
		}
		if c.Client.Port() == 36946 {
			second = c
		}
	}
	if second == nil {
		t.Fatalf("connections %q: want the second (port 36946)", connOutcomes(&s))
	}
	if second.Outcome != OutcomeSMCR || second.Flow[DirS2C].CDCs == 0 || second.Flow[DirC2S].CDCs == 0 {
		t.Errorf("second connection %v (%s) with %d and %d CDCs, want SMC-R with its CDCs", second.Outcome, pendingDetail(second),
			second.Flow[DirC2S].CDCs, second.Flow[DirS2C].CDCs)
	}
}

// TestDamagedCDCReservedBytes: pingpong.pcap with two reserved bytes of
// the client's first CDC (frame 20) damaged, so that no one byte explains
// its ICRC failing: with them zeroed, as Linux sends them, it verifies,
// so the rest is the sender's and the CDC is followed (the responder took
// it): every CDC of the whole capture counted. Its third (frame 36) with
// a cursor byte damaged too is read with that byte as sent.
func TestDamagedCDCReservedBytes(t *testing.T) {
	whole := feedFile(t, "../samples/pingpong.pcap", Options{Unshared: true}, 0).Snapshot()
	const cdc = 14 + 20 + 8 + 12
	frames := readRawFrames(t, "../samples/pingpong.pcap")
	frames = applied(frames, []mutate.Mutation{
		{Kind: mutate.Flip, At: 19, N: cdc + 30, Mask: 0x6A},
		{Kind: mutate.Flip, At: 19, N: cdc + 40, Mask: 0x56},
	}...)
	// A CDC with two reserved bytes and its producer count damaged (the
	// cursor back behind the one before): mended with those zeroed and
	// that byte as sent, no cursor error.
	frames = applied(frames, []mutate.Mutation{
		{Kind: mutate.Flip, At: 35, N: cdc + 8, Mask: 0x11},
		{Kind: mutate.Flip, At: 35, N: cdc + 33, Mask: 0x20},
		{Kind: mutate.Flip, At: 35, N: cdc + 15, Mask: 0x80},
	}...)
	s, _ := feedRaw(t, frames)
	if len(s.Conns) != 1 {
		t.Fatalf("connections %q, want one", connOutcomes(&s))
	}
	for d := range s.Conns[0].Flow {
		f, wf := &s.Conns[0].Flow[d], &whole.Conns[0].Flow[d]
		if f.CDCs != wf.CDCs || f.Bytes != wf.Bytes || f.CursorErrors != 0 {
			t.Errorf("%v: %d CDCs %d bytes %d cursor errors, want the whole capture's %d and %d, none", Dir(d), f.CDCs, f.Bytes, f.CursorErrors, wf.CDCs, wf.Bytes)
		}
	}
	// The damaged frames are the connection's, as their whole copies are.
	if got, want := s.Conns[0].Frames, whole.Conns[0].Frames; got != want {
		t.Errorf("the connection's frames %d, want the whole capture's %d", got, want)
	}
}

// TestDamagedLLCReservedBytes: pingpong.pcap with two reserved bytes of
// the server's CONFIRM_LINK (frame 9) damaged, so that no one byte
// explains its ICRC failing: with them zeroed, as Linux sends them, it
// verifies, so the rest is the sender's and the message is followed (the
// responder took it): the server's link UID and group ID are the whole
// capture's, and the finding says why its content is known.
func TestDamagedLLCReservedBytes(t *testing.T) {
	whole := feedFile(t, "../samples/pingpong.pcap", Options{Unshared: true}, 0).Snapshot()
	const llc = 14 + 20 + 8 + 12
	frames := readRawFrames(t, "../samples/pingpong.pcap")
	frames = applied(frames, []mutate.Mutation{
		{Kind: mutate.Flip, At: 8, N: llc + 38, Mask: 0x11},
		{Kind: mutate.Flip, At: 8, N: llc + 41, Mask: 0x22},
	}...)
	s, _ := feedRaw(t, frames)
	if len(s.LinkGroups) != 1 || len(whole.LinkGroups) != 1 {
		t.Fatalf("%d link groups, the whole capture %d: want one", len(s.LinkGroups), len(whole.LinkGroups))
	}
	if g, w := &s.LinkGroups[0], &whole.LinkGroups[0]; g.ServerLGRID != w.ServerLGRID || g.ClientLGRID != w.ClientLGRID {
		t.Errorf("group IDs %#x/%#x, want the whole capture's %#x/%#x", g.ServerLGRID, g.ClientLGRID, w.ServerLGRID, w.ClientLGRID)
	}
	found := false
	for _, f := range s.Findings() {
		if f.ID == expert.CaptureCopyDamaged {
			found = true
			if !strings.Contains(f.Detail, "it verifies with the LLC message's reserved bytes zero, as sent (its content followed)") {
				t.Errorf("finding: %s", f.Detail)
			}
		}
	}
	if !found {
		t.Errorf("no %v finding", expert.CaptureCopyDamaged)
	}
	// The CONFIRM_LINK is the first connection's, as its whole copy is.
	if len(s.Conns) != 1 {
		t.Fatalf("connections %q, want one", connOutcomes(&s))
	}
	if got, want := s.Conns[0].Frames, whole.Conns[0].Frames; got != want {
		t.Errorf("the connection's frames %d, want the whole capture's %d", got, want)
	}
}

// TestReusedAcceptQPAndGID: lossy.pcap's second connection (it reuses the
// group) with its Accept's queue pair and a byte of its GID damaged (the
// segment's checksum fails), its Confirm whole: the link the Confirm's end
// names (the client's QP at its address) is the connection's, the
// server's end off as one damaged message makes it. It stays on its
// group's link with every CDC, not in a group of its own beside one joined
// from its CDCs. (A link between the hosts' other devices, both addresses
// a byte off, is not taken so: TestEditcapCopies' multilink copies.)
func TestReusedAcceptQPAndGID(t *testing.T) {
	whole := feedFile(t, "../samples/lossy.pcap", Options{Unshared: true}, 0).Snapshot()
	const clc = 14 + 20 + 32
	frames := readRawFrames(t, "../samples/lossy.pcap")
	frames = applied(frames, []mutate.Mutation{
		{Kind: mutate.Flip, At: 203, N: clc + 40, Mask: 0x40},     // the Accept's QPN
		{Kind: mutate.Flip, At: 203, N: clc + 16 + 3, Mask: 0x80}, // its GID
	}...)
	s, _ := feedRaw(t, frames)
	if len(s.Conns) != len(whole.Conns) || len(s.LinkGroups) != 1 {
		t.Fatalf("connections %q in %d link groups, want the whole capture's %d in one", connOutcomes(&s), len(s.LinkGroups), len(whole.Conns))
	}
	for i := range s.Conns {
		for d := range s.Conns[i].Flow {
			if got, want := s.Conns[i].Flow[d].CDCs, whole.Conns[i].Flow[d].CDCs; got != want {
				t.Errorf("connection %d %v: %d CDCs, want the whole capture's %d", s.Conns[i].ID, Dir(d), got, want)
			}
		}
	}
}

// TestBlindHandshakesTwo: multiconn.pcap without the Accept, Confirm and
// server's ACK of its first connection (frames 7, 8, 17) and of its last
// (1198, 1258, 1315): neither handshake is known to have missed bytes
// before the final ACKs and FINs, long after their connections' CDCs
// came up as connections joined mid-stream. Each handshake is then one
// of two blind ones between the hosts, each joined connection one either
// could be by time, but the first came up before the last handshake
// began: it is the first's alone, which leaves the later one the last's
// (adoptJoined). Four rows, each the whole capture's CDCs and bytes.
func TestBlindHandshakesTwo(t *testing.T) {
	whole := feedFile(t, "../samples/multiconn.pcap", Options{Unshared: true}, 0).Snapshot()
	frames := readRawFrames(t, "../samples/multiconn.pcap")
	for _, n := range []int{1315, 1258, 1198, 17, 8, 7} {
		frames = mutate.Mutation{Kind: mutate.Drop, At: n - 1}.Apply(frames)
	}
	s, _ := feedRaw(t, frames)
	if len(s.Conns) != len(whole.Conns) {
		t.Fatalf("connections %q, want the whole capture's %d", connOutcomes(&s), len(whole.Conns))
	}
	for i := range s.Conns {
		c, w := &s.Conns[i], &whole.Conns[i]
		if c.Outcome != OutcomeSMCR || c.Inferred || c.Client != w.Client {
			t.Errorf("connection %d %v: %v inferred %v, want SMC-R from its handshake (%v)", c.ID, c.Client, c.Outcome, c.Inferred, w.Client)
		}
		for d := range c.Flow {
			if f, wf := &c.Flow[d], &w.Flow[d]; f.CDCs != wf.CDCs || f.Bytes != wf.Bytes {
				t.Errorf("connection %d %v: %d CDCs %d bytes, the whole capture %d and %d", c.ID, Dir(d), f.CDCs, f.Bytes, wf.CDCs, wf.Bytes)
			}
		}
	}
}

// TestDamagedSYNACKOption: pingpong.pcap with the SYN-ACK's timestamps
// option length damaged (which ends the option list before the SMC
// option), the Proposal's checksum failing and the Accept missed: the
// client's first segment whose checksum verifies (its Confirm)
// acknowledges the Accept's bytes. The SYN-ACK's checksum verifies with
// that one length mended (capture.Frame.SMCOptionMended), so its
// sequence number is the server's: the 160 bytes are the capture's miss,
// not the SYN-ACK's damage.
func TestDamagedSYNACKOption(t *testing.T) {
	frames := readRawFrames(t, "../samples/pingpong.pcap")
	frames = applied(frames, []mutate.Mutation{
		{Kind: mutate.Flip, At: 3, N: 14 + 20 + 27, Mask: 0x40}, // frame 4: the timestamps option's length
		{Kind: mutate.Flip, At: 4, N: 14 + 20 + 32 + 120, Mask: 0x01},
		{Kind: mutate.Drop, At: 6}, // the Accept
	}...)
	s, found := feedRaw(t, frames)
	if len(s.Conns) != 1 {
		t.Fatalf("connections %q, want one", connOutcomes(&s))
	}
	if got := s.Conns[0].Flow[DirS2C].TCPNotCaptured; got != 160 {
		t.Errorf("S>C: %d TCP bytes not captured, want the Accept's 160", got)
	}
	if !slices.Contains(found, expert.NotCaptured.String()) {
		t.Errorf("findings %v, want %v", found, expert.NotCaptured)
	}
}

// TestUnreadableOpcodeBeforeNAK: nak.pcap's NAK (PSN sequence error)
// names a request the capture holds; in a copy whose byte of that
// request's opcode is damaged to one no sender uses, the frame is past
// reading but its BTH still names the queue pair and PSN: the capture
// saw the packet, so the loss the NAK shows was past the capture point,
// as in the whole capture (no roce.rc.psn_gap; smc.capture.unreadable).
// So where its copy fails its ICRC. The same request missing from the
// capture is a PSN gap the NAK shows lost.
func TestUnreadableOpcodeBeforeNAK(t *testing.T) {
	frames := readRawFrames(t, testutil.Root(t)+"/testdata/expert/nak.pcap")
	const bth = 14 + 20 + 8
	roce := func(d []byte) bool {
		return len(d) > bth+16 && d[12] == 0x08 && d[13] == 0 && d[23] == 17 && d[36] == 0x12 && d[37] == 0xb7
	}
	psnOf := func(d []byte) uint32 { return uint32(d[bth+9])<<16 | uint32(d[bth+10])<<8 | uint32(d[bth+11]) }
	nak, req := -1, -1
	for i, f := range frames {
		if d := f.Data; roce(d) && d[bth] == byte(decode.OpAcknowledge) && d[bth+12]&0x60 == 0x60 {
			nak = i
			break
		}
	}
	if nak < 0 {
		t.Fatal("no NAK in nak.pcap")
	}
	for i := nak - 1; i >= 0; i-- {
		if d := frames[i].Data; roce(d) && d[bth] != byte(decode.OpAcknowledge) && psnOf(d) == psnOf(frames[nak].Data) {
			req = i
			break
		}
	}
	if req < 0 {
		t.Fatalf("no request of the NAK's PSN %#x before it", psnOf(frames[nak].Data))
	}
	gaps := func(s Snapshot) int {
		n := 0
		for _, l := range s.Links {
			n += l.RC[DirC2S].PSNGaps + l.RC[DirS2C].PSNGaps
		}
		return n
	}
	whole, wholeFound := feedRaw(t, frames)
	if gaps(whole) != 0 || slices.Contains(wholeFound, expert.PSNGap.String()) || !slices.Contains(wholeFound, expert.NAK.String()) {
		t.Fatalf("whole capture: %d PSN gaps, findings %v", gaps(whole), wholeFound)
	}

	damaged := slices.Clone(frames)
	damaged[req].Data = slices.Clone(frames[req].Data)
	damaged[req].Data[bth] = 0x1a // reserved (IBA Vol. 1 9.2)
	s, found := feedRaw(t, damaged)
	if gaps(s) != 0 || slices.Contains(found, expert.PSNGap.String()) {
		t.Errorf("opcode damaged: %d PSN gaps, findings %v; want none, as the whole capture", gaps(s), found)
	}
	for _, id := range []expert.ID{expert.NAK, expert.CaptureUnreadable} {
		if !slices.Contains(found, id.String()) {
			t.Errorf("opcode damaged: findings %v, want %s", found, id)
		}
	}

	// The request's copy failing its ICRC (the wire's damage, which its
	// RNIC dropped, or the capture's): held, so no PSN jumped where the
	// capture stood; the ICRC and the NAK say what happened.
	bad := slices.Clone(frames)
	bad[req].Data = slices.Clone(frames[req].Data)
	bad[req].Data[len(bad[req].Data)-1] ^= 0x5a
	s, found = feedRaw(t, bad)
	if gaps(s) != 0 || slices.Contains(found, expert.PSNGap.String()) {
		t.Errorf("ICRC damaged: %d PSN gaps, findings %v; want none", gaps(s), found)
	}
	if !slices.Contains(found, expert.NAK.String()) {
		t.Errorf("ICRC damaged: findings %v, want %s", found, expert.NAK)
	}

	missed := slices.Delete(slices.Clone(frames), req, req+1)
	s, found = feedRaw(t, missed)
	if gaps(s) != 1 || !slices.Contains(found, expert.PSNGap.String()) {
		t.Errorf("request missed: %d PSN gaps, findings %v; want the gap the NAK shows lost", gaps(s), found)
	}
}

// TestDamagedReusedCLCOtherDevices: multilink.pcap's second connection is
// announced on the link between the hosts' second devices (10.10.0.12 and
// .11, each address a byte off the first link's, queue pair 0x11 on both
// ends). With that link's frames before its Confirm and the ADD_LINK
// exchange that announced it not in the capture, and its Accept's and
// Confirm's copies damaged in a byte each elsewhere (their MACs), the
// connection is on a link of those addresses, as with the copies whole:
// not on the first link, whose addresses are each a byte off and whose
// server queue pair differs.
func TestDamagedReusedCLCOtherDevices(t *testing.T) {
	all, lt, a, cf := secondHandshake(t, "../samples/multilink.pcap")
	second := func(d []byte) bool {
		return len(d) > 34 && d[12] == 0x08 && d[13] == 0 && (d[29] == 11 || d[29] == 12 || d[33] == 11 || d[33] == 12)
	}
	addLink := map[int]bool{} // the ADD_LINK exchange on the first link, which names the second's keys
	eachRaw(t, "llc", lt, all, func(f *capture.Frame) {
		if f.LLC != nil && f.LLC.Type.Base() == decode.LLCAddLink {
			addLink[f.Number-1] = true
		}
	})
	if len(addLink) == 0 {
		t.Fatal("no ADD_LINK in multilink.pcap")
	}
	var kept []rawFrame
	na, ncf := -1, -1
	for i, f := range all {
		if i < cf && (second(f.Data) || addLink[i]) {
			continue
		}
		switch i {
		case a:
			na = len(kept)
		case cf:
			ncf = len(kept)
		}
		kept = append(kept, f)
	}
	whole, _ := feedRaw(t, kept)
	// struct smcr_clc_msg_accept_confirm: the header (8 bytes), the peer
	// ID (8), the GID (16), the MAC (6).
	damaged := slices.Clone(kept)
	for _, i := range []int{na, ncf} {
		d := slices.Clone(damaged[i].Data)
		clc := 14 + 20 + int(d[14+20+12]>>4)*4
		d[clc+8+8+16+1] ^= 0x40
		damaged[i].Data = d
	}
	s, found := feedRaw(t, damaged)
	if !slices.Contains(found, expert.BadTCPSum.String()) {
		t.Errorf("findings %v: want tcp.checksum.bad", found)
	}
	links := func(s Snapshot) string {
		var b strings.Builder
		for _, l := range s.Links {
			fmt.Fprintf(&b, "[group %d: %v %#x -> %v %#x, %d connections] ", l.LGR, l.Client.Addr, l.Client.QPN, l.Server.Addr, l.Server.QPN, len(l.Conns))
		}
		return b.String()
	}
	if len(s.Conns) != len(whole.Conns) || len(s.LinkGroups) != len(whole.LinkGroups) {
		t.Fatalf("%d connections in %d link groups, want %d in %d\n%s\nwant %s", len(s.Conns), len(s.LinkGroups), len(whole.Conns), len(whole.LinkGroups), links(s), links(whole))
	}
	if got, want := links(s), links(whole); got != want || !strings.Contains(want, "10.10.0.12 0x11 -> 10.10.0.11 0x11") {
		t.Errorf("links %s\nwant %s (the second devices' as the CLC messages name it)", got, want)
	}
}

// TestDamagedCLCPSNCopy: erspan.pcap holds every handshake segment twice
// (the host's capture and a mirror session's copy). Where the first copy
// of the Confirm, or of the Accept, has two bytes of its sender's first
// PSN damaged (its TCP checksum failing), the second copy verifies and is
// what the peer read: the link's direction starts at that PSN, so its
// first requests are not retransmissions of PSNs never sent and the
// CONFIRM_LINK exchange is answered, as in the whole capture.
func TestDamagedCLCPSNCopy(t *testing.T) {
	all, lt := testutil.ReadFrames(t, "../testdata/reference/erspan.pcap")
	whole, wholeFound := feedRaw(t, all)
	for _, typ := range []decode.CLCType{decode.CLCTypeConfirm, decode.CLCTypeAccept} {
		t.Run(typ.String(), func(t *testing.T) {
			msgs := clcFrames(t, lt, all, typ)
			if len(msgs) == 0 {
				t.Fatalf("no %v", typ)
			}
			i := msgs[0]
			fs := slices.Clone(all)
			d := slices.Clone(fs[i].Data)
			// struct smcr_clc_msg_accept_confirm: the header (8 bytes,
			// the eyecatcher and type first), the peer ID (8), GID (16),
			// MAC (6), QPN (3), rkey (4), rmbe_idx and rmbe_alert_token
			// (5), rmbe_size and MTU (1), reserved (1), the RMB's
			// address (8), reserved (1), the PSN.
			clc := bytes.Index(d, []byte{0xe2, 0xd4, 0xc3, 0xd9, byte(typ)})
			if clc < 0 {
				t.Fatalf("frame %d: no %v", i+1, typ)
			}
			psn := clc + 8 + 8 + 16 + 6 + 3 + 4 + 5 + 1 + 1 + 8 + 1
			d[psn] ^= 0xed
			d[psn+1] ^= 0x4b
			fs[i].Data = d
			s, found := feedRaw(t, fs)
			if !slices.Contains(found, expert.BadTCPSum.String()) {
				t.Errorf("findings %v: want tcp.checksum.bad", found)
			}
			if len(s.Links) == 0 || s.Links[0].Client.PSN != whole.Links[0].Client.PSN || s.Links[0].Server.PSN != whole.Links[0].Server.PSN {
				t.Errorf("link's first PSNs %v, want the whole capture's (client %#x, server %#x)", firstPSNs(s), whole.Links[0].Client.PSN, whole.Links[0].Server.PSN)
			}
			if got, want := retransOf(s), retransOf(whole); got != want {
				t.Errorf("%d retransmissions, the whole capture's %d", got, want)
			}
			for _, id := range []expert.ID{expert.LLCUnanswered, expert.LLCRetransmitted} {
				if slices.Contains(found, id.String()) != slices.Contains(wholeFound, id.String()) {
					t.Errorf("findings %v, the whole capture's %v: %s differs", found, wholeFound, id)
				}
			}
		})
	}
}

// TestDamagedProposalPortAndSeq: a copy of pingpong.pcap's CLC Proposal
// whose destination port and a byte of its sequence number the capture
// damaged (its TCP checksum fails; its 4-tuple one field off the
// connection's, its bytes nowhere in that connection's stream) is that
// connection's copy damaged past reading: no connection of its own
// waiting for the rest of a handshake (lossy.pcap editcap -E 0.001 seed
// 502).
func TestDamagedProposalPortAndSeq(t *testing.T) {
	base, s, found := pingpongCLCDamaged(t, decode.CLCTypeProposal, func(d []byte, _ int) {
		d[14+20+3] ^= 0xad // the destination port's low byte
		d[14+20+4] ^= 0x11 // the sequence number's high byte
	})
	if len(s.Conns) != len(base.Conns) {
		t.Errorf("%d connections, want %d: the damaged copy began one of its own", len(s.Conns), len(base.Conns))
	}
	for i := range min(len(s.Conns), len(base.Conns)) {
		if g, w := s.Conns[i].Outcome, base.Conns[i].Outcome; g != w {
			t.Errorf("connection %d: %v, want %v", i+1, g, w)
		}
	}
	if s.Stats.TCPDamaged == 0 {
		t.Errorf("findings %v, stats %+v: the copy not counted damaged", found, s.Stats)
	}
}

// TestMendExpectedInsideWrite: a CDC whose copy's ICRC fails, crafted so
// that it would verify with the PSN of a WRITE MIDDLE the capture missed
// and one byte more (a byte of its consumer cursor): such a match comes
// by chance in a few of a million damaged packets, and a SEND cannot sit
// between a WRITE's FIRST and LAST on its queue pair (IBA Vol. 1 9.5).
// The CDC is not taken for that PSN with that byte: no cursor past the
// RMBE, none going back (multiconn editcap -E 0.001 seed 605).
func TestMendExpectedInsideWrite(t *testing.T) {
	frames := readRawFrames(t, "../samples/multiconn.pcap")
	const bth = 14 + 20 + 8
	roce := func(d []byte) bool {
		return len(d) > bth+16 && d[12] == 0x08 && d[13] == 0 && d[23] == 17 && d[36] == 0x12 && d[37] == 0xb7
	}
	qp := func(d []byte) uint32 { return uint32(d[bth+5])<<16 | uint32(d[bth+6])<<8 | uint32(d[bth+7]) }
	psnOf := func(d []byte) uint32 { return uint32(d[bth+9])<<16 | uint32(d[bth+10])<<8 | uint32(d[bth+11]) }
	first, mid, cdc := -1, -1, -1
	for i := 0; i < len(frames) && cdc < 0; i++ {
		d := frames[i].Data
		if !roce(d) || d[bth] != byte(decode.OpWriteFirst) {
			continue
		}
		first, mid = i, -1
		for j := i + 1; j < len(frames); j++ {
			e := frames[j].Data
			if !roce(e) || qp(e) != qp(d) || e[bth] == byte(decode.OpAcknowledge) {
				continue
			}
			switch {
			case e[bth] == byte(decode.OpWriteMiddle) && psnOf(e) == psnOf(d)+1:
				mid = j
				continue
			case e[bth] == byte(decode.OpWriteMiddle) || e[bth] == byte(decode.OpWriteLast):
				continue
			case mid >= 0 && e[bth] == byte(decode.OpSendOnly) && e[bth+12] == decode.CDCType:
				cdc = j
			}
			break
		}
	}
	if cdc < 0 {
		t.Fatal("no WRITE of several packets followed by a CDC")
	}
	whole, _ := feedRaw(t, frames)
	fs := slices.Clone(frames)
	h := slices.Clone(fs[cdc].Data)
	// The copy the ICRC is made to verify: the MIDDLE's PSN, and the
	// consumer cursor's count (CDC bytes 20-23) a byte off.
	as := slices.Clone(h)
	p := psnOf(frames[first].Data) + 1
	as[bth+9], as[bth+10], as[bth+11] = byte(p>>16), byte(p>>8), byte(p)
	as[bth+12+21] = 0x25
	crc, _ := decode.ICRCRoCEv2(as[14:])
	binary.LittleEndian.PutUint32(h[len(h)-4:], crc)
	fs[cdc].Data = h
	// The CDC shown before the responder's ACK of the WRITE (as the
	// capture had it), which would settle the MIDDLE missed first.
	last := cdc - 1
	for fs[last].Data[bth] != byte(decode.OpWriteLast) {
		last--
	}
	moved := fs[cdc]
	moved.CI.Timestamp = fs[last].CI.Timestamp.Add(time.Microsecond)
	fs = slices.Insert(slices.Delete(fs, cdc, cdc+1), last+1, moved)
	fs = slices.Delete(fs, mid, mid+1)
	s, found := feedRaw(t, fs)
	for _, id := range []expert.ID{expert.CursorPastRMBE, expert.CursorBackwards} {
		if slices.Contains(found, id.String()) {
			t.Errorf("findings %v: %s (the CDC taken for the missed MIDDLE, a byte of its cursor changed)", found, id)
		}
	}
	for i := range min(len(s.Conns), len(whole.Conns)) {
		for d := range 2 {
			if g, w := s.Conns[i].Flow[d].Bytes, whole.Conns[i].Flow[d].Bytes; g != w {
				t.Errorf("connection %d %v: %d bytes, want %d", i+1, Dir(d), g, w)
			}
		}
	}
}

// TestDamagedPSNAmongHeld: in a WRITE whose FIRST's copy is damaged (so
// the MIDDLEs after it are held ahead of the PSN the responder expects),
// a MIDDLE's copy whose PSN and ICRC the capture damaged, naming the PSN
// of a MIDDLE shown before it, is the copy of the PSN it sits in the
// place of, which the capture shows nowhere else: no retransmission (the
// RC transport resends every packet from a PSN on, never one alone; long
// editcap -E 0.001 seed 604).
func TestDamagedPSNAmongHeld(t *testing.T) {
	frames := readRawFrames(t, "../samples/long.pcap")
	const bth = 14 + 20 + 8
	roce := func(d []byte) bool {
		return len(d) > bth+16 && d[12] == 0x08 && d[13] == 0 && d[23] == 17 && d[36] == 0x12 && d[37] == 0xb7
	}
	first := -1
	var mids []int
	for i := 0; i < len(frames) && len(mids) < 6; i++ {
		d := frames[i].Data
		switch {
		case !roce(d):
		case d[bth] == byte(decode.OpWriteFirst):
			first, mids = i, mids[:0]
		case first >= 0 && d[bth] == byte(decode.OpWriteMiddle) && d[bth+7] == frames[first].Data[bth+7]:
			mids = append(mids, i)
		}
	}
	if len(mids) < 6 {
		t.Fatal("no WRITE of seven packets or more")
	}
	whole, _ := feedRaw(t, frames)
	fs := slices.Clone(frames)
	damage := func(i int, f func(d []byte)) {
		d := slices.Clone(fs[i].Data)
		f(d)
		fs[i].Data = d
	}
	damage(first, func(d []byte) { d[len(d)-4] ^= 0x5a }) // its ICRC
	damage(mids[4], func(d []byte) {
		copy(d[bth+9:bth+12], frames[mids[0]].Data[bth+9:bth+12]) // the first MIDDLE's PSN
		copy(d[len(d)-4:], []byte{0xaa, 0xaa, 0xaa, 0xaa})
	})
	s, found := feedRaw(t, fs)
	if got, want := retransOf(s), retransOf(whole); got != want {
		t.Errorf("%d retransmissions, the whole capture's %d; findings %v", got, want, found)
	}
	if slices.Contains(found, expert.NotCaptured.String()) {
		t.Errorf("findings %v: roce.rc.not_captured, where the capture holds every PSN, two damaged", found)
	}
}

// TestDamagedRMBESize: pingpong.pcap's Confirm whose copy says a 16 KiB
// RMBE where the client's is 64 KiB (its rmbe_size nibble damaged, its TCP
// checksum failing): the server's cursors into that RMBE go past 16 KiB,
// which says the size was the damage, not a cursor past the RMBE; the
// bytes are the whole capture's (editcap -E 0.002 seed 1202 on every
// sample). A cursor at the size it announced is a sender's off-by-one
// and stands.
func TestDamagedRMBESize(t *testing.T) {
	whole, s, found := pingpongCLCDamaged(t, decode.CLCTypeConfirm, func(d []byte, clc int) {
		// struct smcr_clc_msg_accept_confirm: the header (8), peer ID
		// (8), GID (16), MAC (6), QPN (3), rkey (4), rmbe_idx (1), alert
		// token (4), then rmbe_size (high nibble, 16 KiB << n) and MTU.
		at := clc + 8 + 8 + 16 + 6 + 3 + 4 + 1 + 4
		if d[at]>>4 != 2 {
			t.Fatalf("Confirm's rmbe_size %d, want 2 (64 KiB)", d[at]>>4)
		}
		d[at] &= 0x0f
	})
	if !slices.Contains(found, expert.BadTCPSum.String()) {
		t.Errorf("findings %v: want tcp.checksum.bad", found)
	}
	for _, id := range []expert.ID{expert.CursorPastRMBE, expert.CursorBackwards} {
		if slices.Contains(found, id.String()) {
			t.Errorf("findings %v: %s", found, id)
		}
	}
	for dir := range 2 {
		g, w := s.Conns[0].Flow[dir], whole.Conns[0].Flow[dir]
		if g.Bytes != w.Bytes || g.Consumed != w.Consumed || g.PastRMBE != 0 {
			t.Errorf("%v: bytes %d consumed %d past the RMBE %d, want %d %d 0", Dir(dir), g.Bytes, g.Consumed, g.PastRMBE, w.Bytes, w.Consumed)
		}
	}
}

// TestDamagedSYNCopyBesideWhole: erspan.pcap holds the SYN twice (a
// mirror session's copy, then the host's); with the copy's source address
// damaged (its checksums failing), the host's SYN after it is the same
// SYN whole: one connection, timed from the first copy as in the whole
// capture, not a second one waiting on a SYN alone (editcap -E 0.002 seed
// 1202).
func TestDamagedSYNCopyBesideWhole(t *testing.T) {
	frames := readRawFrames(t, "../testdata/reference/erspan.pcap")
	whole, _ := feedRaw(t, frames)
	fs := slices.Clone(frames)
	// The mirror's copy of the SYN (its IPv4 header carried, past the
	// outer headers), shown before the host's: its source address at
	// that header + 12.
	syn := -1
	for i := 0; i < len(fs) && syn < 0; i++ {
		d := fs[i].Data
		for j := 15; j+34 < len(d); j++ {
			if d[j] == 0x45 && d[j+9] == 6 && d[j+33]&0x12 == 0x02 {
				syn = i
				d = slices.Clone(d)
				d[j+12] ^= 0x2f
				fs[i].Data = d
				break
			}
		}
	}
	if syn < 0 {
		t.Fatal("no SYN carried by the mirror")
	}
	s, found := feedRaw(t, fs)
	if len(s.Conns) != len(whole.Conns) {
		t.Fatalf("%d connections, want %d; findings %v", len(s.Conns), len(whole.Conns), found)
	}
	if g, w := s.Conns[0].TSYN, whole.Conns[0].TSYN; !g.Equal(w) {
		t.Errorf("SYN at %v, want %v", g, w)
	}
}

// pingpongCLCDamaged feeds pingpong.pcap whole and with its first CLC
// message of type typ damaged by damage (given the frame's bytes and the
// message's offset in them), and returns both snapshots and the damaged
// copy's findings.
func pingpongCLCDamaged(t *testing.T, typ decode.CLCType, damage func(d []byte, clc int)) (whole, s Snapshot, found []string) {
	t.Helper()
	frames := readRawFrames(t, crafted.Pingpong(t))
	_, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
	msgs := clcFrames(t, lt, frames, typ)
	if len(msgs) == 0 {
		t.Fatalf("no CLC %v", typ)
	}
	whole, _ = feedRaw(t, frames)
	fs := slices.Clone(frames)
	d := slices.Clone(fs[msgs[0]].Data)
	damage(d, bytes.Index(d, []byte{0xe2, 0xd4, 0xc3, 0xd9, byte(typ)}))
	fs[msgs[0]].Data = d
	s, found = feedRaw(t, fs)
	return whole, s, found
}

// retransOf counts the retransmissions of every link of s.
func retransOf(s Snapshot) int {
	n := 0
	for _, l := range s.Links {
		n += l.RC[DirC2S].Retrans + l.RC[DirS2C].Retrans
	}
	return n
}

// secondHandshake reads capture name and finds its second connection's
// CLC Accept and Confirm frames.
func secondHandshake(t *testing.T, name string) (all []rawFrame, lt layers.LinkType, accept, confirm int) {
	t.Helper()
	all, lt = testutil.ReadFrames(t, name)
	accepts := clcFrames(t, lt, all, decode.CLCTypeAccept)
	confirms := clcFrames(t, lt, all, decode.CLCTypeConfirm)
	if len(accepts) < 2 || len(confirms) < 2 {
		t.Fatalf("%d CLC Accepts, %d Confirms", len(accepts), len(confirms))
	}
	return all, lt, accepts[1], confirms[1]
}

// firstPSNs lists the first PSN each link's client and server announced.
func firstPSNs(s Snapshot) []string {
	var out []string
	for _, l := range s.Links {
		out = append(out, fmt.Sprintf("link %d: client %#x, server %#x", l.ID, l.Client.PSN, l.Server.PSN))
	}
	return out
}
